"""Reading real dice at the reveal: two small shipped networks (a dice detector and a face model) run by OpenCV."""
import os

# OpenCV logs every camera it fails to open in several noisy lines; our typed errors already
# say it plainly. Set OPENCV_LOG_LEVEL yourself to see them.
os.environ.setdefault("OPENCV_LOG_LEVEL", "FATAL")

from companion.vision.errors import (
    CalibrationFailed,
    CameraUnavailable,
    ImageUnreadable,
    ModelError,
    NoFrame,
    ProfileError,
    VisionError,
)
from companion.vision.settings import CameraSettings
from companion.vision.types import DiceReading, Die, Refused, RevealOutcome

__all__ = [
    "CalibrationFailed",
    "CameraSettings",
    "CameraUnavailable",
    "DiceReading",
    "Die",
    "ImageUnreadable",
    "ModelError",
    "NoFrame",
    "ProfileError",
    "Refused",
    "RevealOutcome",
    "VisionError",
]
