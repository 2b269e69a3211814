"""Reading and checking audio: everything the recognisers see is 16 kHz mono 16-bit PCM.

`read_wav` takes a WAV in any common PCM or float encoding, at any rate from 4 to 192 kHz
and with any number of channels, and gives it back as 16 kHz mono int16: channels are
averaged and the rate is changed by `resample` (companion.listen.resampling). The RIFF
chunks are parsed here, since the standard `wave` module refuses float and
WAVE_FORMAT_EXTENSIBLE files.
"""

from __future__ import annotations

import shlex
import struct
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from companion.files import open_file
from companion.listen.errors import AudioFormatError
from companion.listen.resampling import SAMPLE_RATE, BlockResampler

MIN_RATE, MAX_RATE = 4000, 192000  # the sample rates read_wav accepts

# --- reading WAV files -------------------------------------------------------------------

_PCM, _FLOAT, _EXTENSIBLE = 0x0001, 0x0003, 0xFFFE
_GUID_TAIL = bytes.fromhex("000000001000800000aa00389b71")  # KSDATAFORMAT_SUBTYPE_* after the tag
_UNSUPPORTED = {
    0x0002: "Microsoft ADPCM", 0x0006: "A-law", 0x0007: "mu-law", 0x0011: "IMA ADPCM",
    0x0031: "GSM 6.10", 0x0040: "G.721 ADPCM", 0x0050: "MPEG audio", 0x0055: "MP3",
    0x0161: "Windows Media Audio", 0x00FF: "AAC", 0x1610: "AAC", 0x2000: "AC-3",
    0x674F: "Ogg Vorbis", 0xF1AC: "FLAC",
}
_OTHER_FILES = ((b"ID3", "an MP3 file"), (b"\xff\xfb", "an MP3 file"), (b"\xff\xf3", "an MP3 file"),
                (b"fLaC", "a FLAC file"), (b"OggS", "an Ogg file"), (b"FORM", "an AIFF file"),
                (b"RIFX", "a big-endian (RIFX) WAV"))


@dataclass(frozen=True)
class _Wav:
    encoding: int  # _PCM or _FLOAT
    channels: int
    rate: int
    width: int  # bytes per sample
    data_offset: int
    data_size: int  # what is really there, even if the header promised more


# The loudest sample (of 32767) of a recording of nothing: digital silence, or a converter's
# dither.
NOTHING_RECORDED = 4


def recorded_nothing(samples: np.ndarray) -> bool:
    """No samples, or none above NOTHING_RECORDED: no call, whatever a decoder would guess."""
    return not len(samples) or int(np.abs(samples.astype(np.int32)).max()) <= NOTHING_RECORDED


def read_wav(path: str | Path) -> np.ndarray:
    """The samples of a WAV file as 16 kHz mono int16 (a new array).

    8-bit unsigned, 16/24/32-bit integer and 32/64-bit float PCM, plain or
    WAVE_FORMAT_EXTENSIBLE, at 4000-192000 Hz, any number of channels: channels are
    averaged, the rate is resampled to 16 kHz and float is clipped to -1..1. A recording
    cut short (or written by a streaming tool with no data size) gives what is there.
    Anything else is refused with an AudioFormatError that says why and how to convert it.
    """
    blocks = list(read_wav_blocks(path, seconds=None))
    return np.concatenate(blocks) if blocks else np.zeros(0, np.int16)


def read_wav_blocks(path: str | Path, seconds: float | None = 2.0) -> Iterator[np.ndarray]:
    """`read_wav`'s samples a block of about `seconds` (None: all) at a time, the same
    samples when joined: an evening's recording is heard in a few megabytes, not
    gigabytes. The file is checked (an AudioFormatError) before the first block."""
    path = Path(path)
    f = _open(path)
    try:
        wav = _parse(path, f)
    except BaseException:
        f.close()
        raise
    return _blocks(f, wav, seconds)


def _blocks(f, wav: _Wav, seconds: float | None) -> Iterator[np.ndarray]:
    with f:
        frame = wav.width * wav.channels
        left = wav.data_size - wav.data_size % frame  # a frame cut off at the end is dropped
        per_read = left if seconds is None else max(1, int(seconds * wav.rate)) * frame
        plain = (wav.encoding, wav.width, wav.channels, wav.rate) == (_PCM, 2, 1, SAMPLE_RATE)
        resampler = BlockResampler(wav.rate) if wav.rate != SAMPLE_RATE else None
        f.seek(wav.data_offset)
        while left > 0:
            raw = f.read(min(per_read, left))
            if not raw:
                break
            left -= len(raw)
            raw = raw[:len(raw) - len(raw) % frame]
            if plain:
                yield np.frombuffer(raw, dtype="<i2").astype(np.int16)
                continue
            mono = _mono(_samples(raw, wav), wav.channels)
            if resampler is None:
                yield np.clip(np.rint(mono * 32768.0), -32768, 32767).astype(np.int16)
            else:  # scaled by a power of two first, which is exact: the same as scaled after
                yield resampler(mono * 32768.0)
        if resampler is not None:
            yield resampler.flush()


def wav_length(path: str | Path) -> int:
    """How many samples `read_wav` would give, from the header alone."""
    path = Path(path)
    with _open(path) as f:
        wav = _parse(path, f)
    frames = wav.data_size // (wav.width * wav.channels)
    return -(-frames * SAMPLE_RATE // wav.rate)


def check_wav(path: str | Path) -> None:
    """Refuse a file read_wav would refuse, reading only its header."""
    path = Path(path)
    with _open(path) as f:
        _parse(path, f)


def _convert(path: Path, how: str = "Convert it with") -> str:
    return f"{how}: sox {shlex.quote(str(path))} -r 16000 -c 1 -b 16 out.wav"


def _convert_other(path: Path) -> str:
    # sox goes by the file's name, so it refuses an MP3 called .wav; ffmpeg reads the contents
    return f"convert it with: ffmpeg -i {shlex.quote(str(path))} -ar 16000 -ac 1 -sample_fmt s16 out.wav"


def _open(path: Path):
    try:
        return open_file(path)
    except IsADirectoryError:
        raise AudioFormatError(f"{path}: is a folder, not a WAV file") from None
    except FileNotFoundError:
        raise AudioFormatError(f"{path}: no such file") from None
    except OSError as err:
        raise AudioFormatError(f"{path}: cannot be read ({err.strerror or err})") from None


def _parse(path: Path, f) -> _Wav:
    """The format and where the audio is, from the RIFF chunks; f is left anywhere."""
    try:
        size = f.seek(0, 2)
        f.seek(0)
        head = f.read(12)
        if not head:
            raise AudioFormatError(f"{path}: the file is empty")
        _riff_header(path, head)
        fmt, data = None, None
        pos = 12
        while pos + 8 <= size and (fmt is None or data is None):
            f.seek(pos)
            chunk_id, chunk_size = struct.unpack("<4sI", f.read(8))
            if not _plausible(chunk_id):
                break  # not a chunk: the rest is garbage (or a chunk's size was wrong)
            body_at = pos + 8
            if chunk_id == b"fmt " and fmt is None:
                fmt = f.read(min(chunk_size, 256))
            elif chunk_id == b"data" and data is None:
                if chunk_size in (0, 0xFFFFFFFF) or body_at + chunk_size > size:
                    data = (body_at, size - body_at)  # cut short, or streamed: all that is there
                    break
                data = (body_at, chunk_size)
            pos = _next_chunk(f, body_at, chunk_size, size)
    except OSError as err:
        raise AudioFormatError(f"{path}: cannot be read ({err.strerror or err})") from None
    if fmt is None:
        raise AudioFormatError(
            f"{path}: not a readable WAV file (no fmt chunk: nothing says how the audio is "
            f"encoded). {_convert(path)}")
    if data is None:
        raise AudioFormatError(f"{path}: not a readable WAV file (no data chunk: it holds no audio)")
    return _format(path, fmt, *data)


def _riff_header(path: Path, head: bytes) -> None:
    if head[:4] in (b"RIFF", b"RF64") and head[8:12] == b"WAVE":
        return  # RF64's sizes (0xFFFFFFFF here) are read as "up to the end of the file"
    if head[:4] in (b"RIFF", b"RF64") and len(head) < 12:
        why = "its header is cut short"
    elif head[:4] == b"RIFF":
        why = f"a RIFF file of type {head[8:12]!r}, not WAVE"
    else:
        kind = next((name for magic, name in _OTHER_FILES if head.startswith(magic)), None)
        kind = "an MP4/M4A file" if head[4:8] == b"ftyp" else kind
        why = f"it looks like {kind}" if kind else "it does not start with a RIFF/WAVE header"
    raise AudioFormatError(
        f"{path}: not a readable WAV file ({why}); a PCM or float WAV is needed. "
        f"If it is audio in another format, {_convert_other(path)}")


def _plausible(chunk_id: bytes) -> bool:
    return len(chunk_id) == 4 and all(32 <= c < 127 for c in chunk_id)


def _next_chunk(f, body_at: int, chunk_size: int, size: int) -> int:
    """Where the chunk after this one starts: chunks are padded to an even size, but
    some writers leave the pad byte out, so an odd chunk is followed to whichever of the
    two places holds a chunk id."""
    after = body_at + chunk_size
    if chunk_size % 2 == 0 or after + 9 > size:
        return after + chunk_size % 2
    f.seek(after)
    peek = f.read(5)
    return after + 1 if _plausible(peek[1:5]) or not _plausible(peek[:4]) else after


def _format(path: Path, fmt: bytes, data_offset: int, data_size: int) -> _Wav:
    if len(fmt) < 16:
        raise AudioFormatError(f"{path}: not a readable WAV file (its fmt chunk is cut short)")
    tag, channels, rate, _, block_align, bits = struct.unpack_from("<HHIIHH", fmt)
    container = tag
    if tag == _EXTENSIBLE:
        if len(fmt) < 40:
            raise AudioFormatError(
                f"{path}: not a readable WAV file (its WAVE_FORMAT_EXTENSIBLE fmt chunk is cut short)")
        tag = struct.unpack_from("<H", fmt, 24)[0]
        if fmt[26:40] != _GUID_TAIL:
            raise AudioFormatError(
                f"{path}: its audio has an unknown WAVE_FORMAT_EXTENSIBLE subformat "
                f"({fmt[24:40].hex()}); PCM or float WAVs can be read. {_convert(path)}")
    within = " inside WAVE_FORMAT_EXTENSIBLE" if container == _EXTENSIBLE else ""
    if tag not in (_PCM, _FLOAT):
        name = _UNSUPPORTED.get(tag, "an encoding that is not PCM")
        raise AudioFormatError(
            f"{path}: its audio is {name} (WAV format tag 0x{tag:04X}{within}), which cannot be read "
            f"here; 8/16/24/32-bit integer PCM or 32/64-bit float WAVs can. {_convert(path)}")
    if channels == 0:
        raise AudioFormatError(f"{path}: not a readable WAV file (its header says 0 channels)")
    if not MIN_RATE <= rate <= MAX_RATE:
        raise AudioFormatError(
            f"{path}: found a sample rate of {rate} Hz; {MIN_RATE} to {MAX_RATE} Hz can be read. "
            f"{_convert(path)}")
    width = (bits + 7) // 8
    if tag == _PCM and width not in (1, 2, 3, 4):
        raise AudioFormatError(
            f"{path}: found {bits}-bit integer PCM{within}; 8, 16, 24 or 32-bit can be read. "
            f"{_convert(path)}")
    if tag == _FLOAT and bits not in (32, 64):
        raise AudioFormatError(
            f"{path}: found {bits}-bit float{within}; 32 or 64-bit float can be read. {_convert(path)}")
    if block_align not in (0, width * channels):
        raise AudioFormatError(
            f"{path}: not a readable WAV file (its header is inconsistent: {block_align} bytes a frame "
            f"for {channels} channel{'s' if channels != 1 else ''} of {bits}-bit audio). {_convert(path)}")
    return _Wav(tag, channels, rate, width, data_offset, data_size)


def _samples(raw: bytes, wav: _Wav) -> np.ndarray:
    """Every sample (channels interleaved) as float32 in -1..1."""
    if wav.encoding == _FLOAT:
        x = np.frombuffer(raw, dtype="<f4" if wav.width == 4 else "<f8")
        # clipped before anything else: +-inf, huge values and NaN (as silence) are safe
        return np.clip(np.nan_to_num(x, nan=0.0, posinf=1.0, neginf=-1.0), -1.0, 1.0).astype(np.float32)
    if wav.width == 1:  # 8-bit WAV is unsigned, silence at 128
        return (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    if wav.width == 3:  # little-endian 24-bit: into the top of an int32, then shifted down
        wide = np.zeros((len(raw) // 3, 4), np.uint8)
        wide[:, 1:] = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3)
        return ((wide.view("<i4").reshape(-1) >> 8) / float(1 << 23)).astype(np.float32)
    dtype, full = ("<i2", 32768.0) if wav.width == 2 else ("<i4", float(1 << 31))
    return (np.frombuffer(raw, dtype=dtype) / full).astype(np.float32)


def _mono(x: np.ndarray, channels: int) -> np.ndarray:
    return x if channels == 1 else x.reshape(-1, channels).mean(axis=1, dtype=np.float32)


def write_wav(path: str | Path, samples: np.ndarray, rate: int = SAMPLE_RATE) -> None:
    data = np.clip(np.asarray(samples), -32768, 32767).astype("<i2")
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(data.tobytes())
