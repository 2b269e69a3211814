"""Reading real dice at the reveal (issue 4): OpenCV detection plus a small shipped face model."""
from companion.vision.errors import (
    CalibrationFailed,
    CameraUnavailable,
    ImageUnreadable,
    ModelError,
    NoFrame,
    ProfileError,
    VisionError,
)
from companion.vision.types import DiceReading, Die

__all__ = [
    "CalibrationFailed",
    "CameraUnavailable",
    "DiceReading",
    "Die",
    "ImageUnreadable",
    "ModelError",
    "NoFrame",
    "ProfileError",
    "VisionError",
]
