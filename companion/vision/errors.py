"""Typed errors of the dice reader: callers catch VisionError and never get a wrong count."""
from __future__ import annotations

from companion.errors import CompanionError


class VisionError(CompanionError):
    """Base of every error raised by companion.vision."""


class ImageUnreadable(VisionError):
    """A file is missing, empty or not an image OpenCV can decode."""


class CameraUnavailable(VisionError):
    """The camera cannot be opened or stopped giving frames."""


class NoFrame(CameraUnavailable):
    """A frame source has no frame to give."""


class RevealNotInView(NoFrame):
    """Nothing the camera can give shows this reveal's dice: the players count instead."""


class PhotosUsedUp(RevealNotInView):
    """A reveal after the last of the photos given for reveals."""


class DiceRolledSince(RevealNotInView):
    """A reveal done again, after "take it back", of a round whose dice have been rolled
    again since: the camera would see the later round's."""


class ProfileError(VisionError):
    """A calibration profile is missing, corrupt or inconsistent."""


class CalibrationFailed(VisionError):
    """Calibration photos were missing or the check read the shown dice wrongly."""


class CalibrationCannotStart(CalibrationFailed):
    """Calibration has nothing to start from: no folder of photos where one was named."""


class ModelError(VisionError):
    """The shipped face model is missing or corrupt."""
