"""Typed errors of the listening side: each message says what was found and what is needed."""

from __future__ import annotations

from companion.errors import CompanionError


class ListenError(CompanionError):
    """Speech input cannot work as asked."""


class AudioFormatError(ListenError, ValueError):
    """A WAV file cannot be read: damaged, empty, or in an encoding that is not PCM or float."""


class ModelError(ListenError):
    """A speech model is missing, broken, or cannot be downloaded."""


class MicrophoneError(ListenError):
    """No microphone, or PortAudio refused to open it."""
