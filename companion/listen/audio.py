"""Reading and checking audio: everything the recognisers see is 16 kHz mono 16-bit PCM."""

from __future__ import annotations

import shlex
import wave
from pathlib import Path

import numpy as np

from companion.listen.errors import AudioFormatError

SAMPLE_RATE = 16000


def read_wav(path: str | Path) -> np.ndarray:
    """The samples of a 16 kHz mono 16-bit WAV as int16; anything else is refused clearly."""
    return _open_wav(path, read=True)


def check_wav(path: str | Path) -> None:
    """Refuse a file read_wav would refuse, reading only its header."""
    _open_wav(path, read=False)


def _open_wav(path: str | Path, read: bool) -> np.ndarray:
    path = Path(path)
    try:
        with wave.open(str(path), "rb") as wav:
            rate, channels, width = wav.getframerate(), wav.getnchannels(), wav.getsampwidth()
            frames = wav.readframes(wav.getnframes()) if read else b""
    except FileNotFoundError:
        raise AudioFormatError(f"{path}: no such file") from None
    except (wave.Error, EOFError, OSError) as err:
        if path.is_file() and path.stat().st_size == 0:
            raise AudioFormatError(f"{path}: the file is empty") from None
        why = str(err) or "its header is cut short"
        if "unknown format" in why:  # WAVE_FORMAT_EXTENSIBLE, float: 24/32-bit or multichannel
            why = f"{why}: a 24- or 32-bit, float or multichannel encoding"
        raise AudioFormatError(
            f"{path}: not a readable WAV file ({why}); a 16 kHz mono 16-bit PCM WAV is needed. "
            f"If it is audio in another format, convert it with: sox {shlex.quote(str(path))} -r 16000 -c 1 -b 16 out.wav"
        ) from None
    if (rate, channels, width) != (SAMPLE_RATE, 1, 2):
        found = f"{rate} Hz, {channels} channel{'s' if channels != 1 else ''}, {8 * width}-bit"
        raise AudioFormatError(
            f"{path}: found {found}; needed 16000 Hz, 1 channel (mono), 16-bit PCM. "
            f"Convert it with: sox {shlex.quote(str(path))} -r 16000 -c 1 -b 16 out.wav")
    return np.frombuffer(frames, dtype="<i2").astype(np.int16)


def write_wav(path: str | Path, samples: np.ndarray, rate: int = SAMPLE_RATE) -> None:
    data = np.clip(np.asarray(samples), -32768, 32767).astype("<i2")
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(data.tobytes())
