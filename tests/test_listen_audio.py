"""read_wav converts any common WAV to 16 kHz mono int16; resample is band-limited.

Every file here is written by the small RIFF writer below (numpy + struct), so the
tests need neither sox nor the network.
"""

import math
import struct

import numpy as np
import pytest

from companion.listen.audio import SAMPLE_RATE, check_wav, read_wav, read_wav_blocks, wav_length, write_wav
from companion.listen.resampling import resample
from companion.listen.errors import AudioFormatError

PCM, FLOAT, EXTENSIBLE, ALAW, MULAW, MS_ADPCM, IMA_ADPCM = 1, 3, 0xFFFE, 6, 7, 2, 0x11
GUID_TAIL = bytes.fromhex("000000001000800000aa00389b71")


# --- a WAV writer for every kind of file ---------------------------------------------------

def encode(x, bits, tag=PCM, container=None):
    """Float samples (frames, channels) in -1..1 (or beyond, for float) as WAV bytes."""
    x = np.asarray(x, dtype=np.float64)
    if tag == FLOAT:
        return x.astype("<f4" if bits == 32 else "<f8").tobytes()
    if bits == 8:
        return np.clip(np.rint(x * 128 + 128), 0, 255).astype(np.uint8).tobytes()
    full = 2 ** (bits - 1)
    ints = np.clip(np.rint(x * full), -full, full - 1).astype(np.int64)
    container = container or bits
    ints = ints << (container - bits)  # left-justified in a wider container
    if container == 16:
        return ints.astype("<i2").tobytes()
    if container == 32:
        return ints.astype("<i4").tobytes()
    assert container == 24
    return ints.astype("<i4").view(np.uint8).reshape(-1, 4)[:, :3].tobytes()


def fmt_chunk(rate, channels, bits, tag=PCM, extensible=False, container=None, guid_tail=GUID_TAIL):
    container = container or bits
    block = channels * ((container + 7) // 8)
    if not extensible:
        return struct.pack("<HHIIHH", tag, channels, rate, rate * block, block, bits)
    return (struct.pack("<HHIIHH", EXTENSIBLE, channels, rate, rate * block, block, container)
            + struct.pack("<HHI", 22, bits, (1 << channels) - 1)
            + struct.pack("<H", tag) + guid_tail)


def chunk(chunk_id, body, size=None, pad=True):
    size = len(body) if size is None else size
    return chunk_id + struct.pack("<I", size) + body + (b"\0" if pad and len(body) % 2 else b"")


def riff(*chunks, riff_size=None, form=b"WAVE"):
    body = form + b"".join(chunks)
    return b"RIFF" + struct.pack("<I", len(body) if riff_size is None else riff_size) + body


def make_wav(path, x, rate, bits=16, tag=PCM, extensible=False, container=None, before=(), between=()):
    """x: (frames,) or (frames, channels) floats."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    fmt = fmt_chunk(rate, x.shape[1], bits, tag, extensible, container)
    data = encode(x, bits, tag, container if extensible else None)
    path.write_bytes(riff(*before, chunk(b"fmt ", fmt), *between, chunk(b"data", data)))
    return path


def tone(freq, rate, seconds=1.0, amplitude=0.5):
    return amplitude * np.sin(2 * np.pi * freq * np.arange(round(rate * seconds)) / rate)


def peak_hz(samples):
    spectrum = np.abs(np.fft.rfft(samples.astype(np.float64) * np.hanning(len(samples))))
    return np.argmax(spectrum) * SAMPLE_RATE / len(samples)


def rms(samples):
    return float(np.sqrt(np.mean(np.square(samples.astype(np.float64)))))


def middle(samples, fraction=0.1):
    cut = int(len(samples) * fraction)
    return samples[cut:len(samples) - cut]


# --- the 16 kHz mono 16-bit case is untouched ---------------------------------------------

def test_16k_mono_16bit_is_read_exactly(tmp_path):
    samples = np.random.default_rng(0).integers(-32768, 32768, 4000).astype(np.int16)
    write_wav(tmp_path / "a.wav", samples)
    out = read_wav(tmp_path / "a.wav")
    assert out.dtype == np.int16 and np.array_equal(out, samples)
    out[0] = 1  # a writable array of its own
    check_wav(tmp_path / "a.wav")


# --- other rates -----------------------------------------------------------------------------

@pytest.mark.parametrize("rate", [4000, 8000, 11025, 22050, 32000, 44100, 48000, 96000, 192000])
@pytest.mark.parametrize("freq", [440, 1000])
def test_a_tone_at_any_rate_keeps_its_pitch_length_and_level(tmp_path, rate, freq):
    path = make_wav(tmp_path / "t.wav", tone(freq, rate, 1.0), rate)
    check_wav(path)
    out = read_wav(path)
    assert out.dtype == np.int16
    assert len(out) == math.ceil(rate * 1.0 * SAMPLE_RATE / rate)
    assert abs(len(out) / SAMPLE_RATE - 1.0) < 0.003
    assert abs(peak_hz(out) - freq) <= 2
    assert rms(middle(out)) == pytest.approx(0.5 * 32768 / math.sqrt(2), rel=0.01)


@pytest.mark.parametrize("rate, seconds", [(44100, 0.7531), (8000, 0.123), (22050, 2.0001), (48000, 0.0003)])
def test_the_duration_is_kept_within_a_few_ms(tmp_path, rate, seconds):
    frames = round(rate * seconds)
    out = read_wav(make_wav(tmp_path / "d.wav", tone(440, rate, seconds), rate))
    assert abs(len(out) / SAMPLE_RATE - frames / rate) < 0.002


def test_an_odd_rate_is_resampled_too(tmp_path):
    # gcd(44101, 16000) = 1: 16000 filter phases, still exact and band-limited
    out = read_wav(make_wav(tmp_path / "odd.wav", tone(1000, 44101, 0.5), 44101))
    assert len(out) == math.ceil(round(44101 * 0.5) * 16000 / 44101)
    assert abs(peak_hz(out) - 1000) <= 2


def test_the_anti_alias_filter_keeps_7khz_and_removes_12khz(tmp_path):
    for rate in (44100, 48000):
        kept = read_wav(make_wav(tmp_path / "7k.wav", tone(7000, rate, 0.5), rate))
        assert rms(middle(kept)) == pytest.approx(0.5 * 32768 / math.sqrt(2), rel=0.05)
        assert abs(peak_hz(kept) - 7000) <= 3
        gone = read_wav(make_wav(tmp_path / "12k.wav", tone(12000, rate, 0.5), rate))
        # without the filter it would fold back to 4 kHz at full level
        drop_db = 20 * math.log10(rms(middle(gone)) / (0.5 * 32768 / math.sqrt(2)) + 1e-12)
        assert drop_db < -30, (rate, drop_db)


# --- channels and encodings --------------------------------------------------------------

def test_stereo_is_averaged_to_mono(tmp_path):
    left, right = tone(440, 44100, 0.5), tone(1000, 44100, 0.5)
    out = read_wav(make_wav(tmp_path / "st.wav", np.stack([left, right], axis=1), 44100))
    spectrum = np.abs(np.fft.rfft(middle(out).astype(float)))
    freqs = np.fft.rfftfreq(len(middle(out)), 1 / SAMPLE_RATE)
    top_two = sorted(freqs[np.argsort(spectrum)[-2:]])
    assert abs(top_two[0] - 440) <= 3 and abs(top_two[1] - 1000) <= 3
    assert rms(middle(out)) == pytest.approx(0.5 * 0.5 * 32768, rel=0.02)  # two tones at half level
    # opposite channels cancel; a six-channel file is read as well
    opposite = read_wav(make_wav(tmp_path / "op.wav", np.stack([left, -left], axis=1), 44100))
    assert np.abs(opposite).max() <= 1
    six = read_wav(make_wav(tmp_path / "six.wav", np.tile(tone(440, 48000, 0.2)[:, None], 6), 48000, bits=24))
    assert len(six) == 3200 and abs(peak_hz(six) - 440) <= 6


FORMATS = {
    "8-bit unsigned": dict(bits=8),
    "16-bit": dict(bits=16),
    "24-bit": dict(bits=24),
    "32-bit": dict(bits=32),
    "float32": dict(bits=32, tag=FLOAT),
    "float64": dict(bits=64, tag=FLOAT),
    "extensible 16-bit": dict(bits=16, extensible=True),
    "extensible 24-bit": dict(bits=24, extensible=True),
    "extensible 32-bit": dict(bits=32, extensible=True),
    "extensible 24 in 32": dict(bits=24, extensible=True, container=32),
    "extensible 20 in 24": dict(bits=20, extensible=True, container=24),
    "extensible float32": dict(bits=32, tag=FLOAT, extensible=True),
    "extensible float64": dict(bits=64, tag=FLOAT, extensible=True),
}


@pytest.mark.parametrize("kind", FORMATS)
@pytest.mark.parametrize("rate, channels", [(16000, 1), (44100, 2), (8000, 1)])
def test_every_encoding_is_read(tmp_path, kind, rate, channels):
    x = np.tile(tone(1000, rate, 0.5)[:, None], channels)
    path = make_wav(tmp_path / "f.wav", x, rate, **FORMATS[kind])
    check_wav(path)
    out = read_wav(path)
    assert out.dtype == np.int16 and len(out) == 8000
    assert abs(peak_hz(out) - 1000) <= 3
    # 8-bit is coarse: quantisation noise of 1/256 is still far below 1% of the level
    assert rms(middle(out)) == pytest.approx(0.5 * 32768 / math.sqrt(2), rel=0.01)


def test_integer_encodings_at_16k_give_the_same_samples(tmp_path):
    x = np.random.default_rng(1).integers(-32768, 32768, 1000)
    for kind, shift in (("24-bit", 8), ("32-bit", 16), ("extensible 24-bit", 8)):
        spec = FORMATS[kind]
        data = (x << shift).astype("<i4")
        raw = data.tobytes() if spec["bits"] == 32 else data.view(np.uint8).reshape(-1, 4)[:, :3].tobytes()
        path = tmp_path / "i.wav"
        path.write_bytes(riff(chunk(b"fmt ", fmt_chunk(16000, 1, spec["bits"], extensible=spec.get("extensible", False))),
                              chunk(b"data", raw)))
        assert np.array_equal(read_wav(path), x), kind  # negative 24-bit values keep their sign
    path = tmp_path / "u8.wav"
    path.write_bytes(riff(chunk(b"fmt ", fmt_chunk(16000, 1, 8)), chunk(b"data", bytes([0, 1, 127, 128, 129, 255]))))
    assert read_wav(path).tolist() == [-32768, -32512, -256, 0, 256, 32512]


def test_silence_is_zeros(tmp_path):
    for rate, kind in ((44100, "16-bit"), (8000, "8-bit unsigned"), (48000, "float32"), (22050, "24-bit")):
        out = read_wav(make_wav(tmp_path / "s.wav", np.zeros((rate // 2, 2)), rate, **FORMATS[kind]))
        assert len(out) == 8000 and not out.any(), (rate, kind)


def test_float_beyond_full_scale_clips_and_never_wraps(tmp_path):
    x = 2.0 * np.sign(tone(50, 16000, 0.5))  # +-2: twice full scale
    x[100:110] = 1e30
    for rate in (16000, 44100):
        xr = 2.0 * np.sign(tone(50, rate, 0.5))
        for bits in (32, 64):
            out = read_wav(make_wav(tmp_path / "c.wav", xr, rate, bits=bits, tag=FLOAT))
            assert out.max() == 32767 and out.min() == -32768
            want = np.sign(tone(50, 16000, 0.5))
            sure = np.abs(tone(50, 16000, 0.5)) > 0.1  # away from the zero crossings
            assert np.array_equal(np.sign(out[sure]), want[sure]), (rate, bits)
    out = read_wav(make_wav(tmp_path / "big.wav", x, 16000, bits=32, tag=FLOAT))
    assert (out[100:110] == 32767).all()
    # infinities clip, NaN is read as silence
    special = np.array([np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5], dtype="<f4")
    (tmp_path / "inf.wav").write_bytes(riff(chunk(b"fmt ", fmt_chunk(16000, 1, 32, FLOAT)),
                                            chunk(b"data", special.tobytes())))
    assert read_wav(tmp_path / "inf.wav").tolist() == [32767, -32768, 0, 32767, -32768, 16384]
    out = read_wav(make_wav(tmp_path / "nan.wav", np.where(np.arange(8000) % 7, tone(440, 8000), np.nan), 8000,
                            bits=32, tag=FLOAT))
    assert len(out) == 16000 and abs(peak_hz(out) - 440) <= 2


# --- the RIFF chunks -----------------------------------------------------------------------

def test_unknown_and_odd_chunks_are_skipped(tmp_path):
    x = tone(440, 22050, 0.5)
    listing = chunk(b"LIST", b"INFOISFT\x05\0\0\0Lavf\0")  # odd size 13: a pad byte follows
    fact = chunk(b"fact", struct.pack("<I", len(x)))
    path = make_wav(tmp_path / "l.wav", x, 22050, before=(listing,), between=(fact, chunk(b"junk", b"abc")))
    out = read_wav(path)
    assert len(out) == 8000 and abs(peak_hz(out) - 440) <= 2
    # a writer that left out the pad byte of an odd chunk
    fmt = chunk(b"fmt ", fmt_chunk(22050, 1, 16))
    data = chunk(b"data", encode(x[:, None], 16))
    (tmp_path / "nopad.wav").write_bytes(riff(chunk(b"LIST", b"INFOabcde", pad=False), fmt, data))
    assert np.array_equal(read_wav(tmp_path / "nopad.wav"), out)
    # fmt after the data is legal
    (tmp_path / "late.wav").write_bytes(riff(data, fmt))
    assert np.array_equal(read_wav(tmp_path / "late.wav"), out)


def test_a_recording_cut_short_gives_what_is_there(tmp_path):
    x = tone(440, 44100, 1.0)
    fmt = chunk(b"fmt ", fmt_chunk(44100, 2, 16))
    data = encode(np.stack([x, x], axis=1), 16)
    whole = riff(fmt, chunk(b"data", data))
    cut = len(whole) - len(data) // 2 - 3  # half the data gone, and a frame cut in two
    (tmp_path / "cut.wav").write_bytes(whole[:cut])
    check_wav(tmp_path / "cut.wav")
    out = read_wav(tmp_path / "cut.wav")
    frames = (len(data) // 2 - 3) // 4
    assert len(out) == math.ceil(frames * 16000 / 44100)
    assert abs(peak_hz(out) - 440) <= 3


@pytest.mark.parametrize("size", [0, 0xFFFFFFFF])
def test_a_streamed_file_with_no_data_size_is_read_to_its_end(tmp_path, size):
    x = tone(1000, 8000, 0.5)
    raw = riff(chunk(b"fmt ", fmt_chunk(8000, 1, 16)), chunk(b"data", encode(x[:, None], 16), size=size),
               riff_size=0 if size == 0 else 0xFFFFFFFF)
    (tmp_path / "stream.wav").write_bytes(raw)
    out = read_wav(tmp_path / "stream.wav")
    assert len(out) == 8000 and abs(peak_hz(out) - 1000) <= 2


def test_an_empty_data_chunk_gives_no_samples(tmp_path):
    (tmp_path / "e.wav").write_bytes(riff(chunk(b"fmt ", fmt_chunk(44100, 2, 24)), chunk(b"data", b"")))
    out = read_wav(tmp_path / "e.wav")
    assert out.dtype == np.int16 and len(out) == 0


# --- what is refused, and how --------------------------------------------------------------

def _fmt_only(rate=16000, channels=1, bits=16, tag=PCM, **kw):
    return riff(chunk(b"fmt ", fmt_chunk(rate, channels, bits, tag, **kw)), chunk(b"data", b"\0" * 64))


BAD = {
    "empty": (b"", ["the file is empty"]),
    "text": (b"this is not a wav file at all", ["not a readable WAV", "RIFF/WAVE", "ffmpeg"]),
    "mp3": (b"ID3\x03\0\0\0\0\0\0" + b"\0" * 40, ["MP3", "ffmpeg"]),
    "avi": (riff(chunk(b"LIST", b"hdrl"), form=b"AVI "), ["not WAVE"]),
    "cut header": (b"RIFF\x10\0\0", ["cut short"]),
    "no fmt": (riff(chunk(b"data", b"\0" * 64)), ["no fmt chunk"]),
    "no data": (riff(chunk(b"fmt ", fmt_chunk(16000, 1, 16)), chunk(b"LIST", b"INFO")), ["no data chunk"]),
    "only the header": (riff(), ["no fmt chunk"]),
    "short fmt": (riff(chunk(b"fmt ", b"\1\0\1\0"), chunk(b"data", b"\0\0")), ["fmt chunk is cut short"]),
    "A-law": (_fmt_only(8000, 1, 8, ALAW), ["A-law", "0x0006", "sox", "-r 16000 -c 1 -b 16"]),
    "mu-law": (_fmt_only(8000, 1, 8, MULAW), ["mu-law", "0x0007", "sox"]),
    "MS ADPCM": (_fmt_only(8000, 1, 4, MS_ADPCM), ["ADPCM", "0x0002", "sox"]),
    "IMA ADPCM": (_fmt_only(8000, 1, 4, IMA_ADPCM), ["IMA ADPCM", "0x0011", "sox"]),
    "unknown tag": (_fmt_only(8000, 1, 16, 0x1234), ["0x1234", "sox"]),
    "extensible A-law": (_fmt_only(8000, 1, 8, ALAW, extensible=True), ["A-law", "EXTENSIBLE", "sox"]),
    "extensible unknown GUID": (_fmt_only(16000, 1, 16, PCM, extensible=True, guid_tail=b"\x11" * 14),
                                ["subformat", "sox"]),
    "cut extensible": (riff(chunk(b"fmt ", fmt_chunk(16000, 1, 16, extensible=True)[:30]), chunk(b"data", b"")),
                       ["EXTENSIBLE fmt chunk is cut short"]),
    "rate 3000": (_fmt_only(3000), ["3000 Hz", "4000 to 192000", "sox"]),
    "rate 384000": (_fmt_only(384000), ["384000 Hz", "4000 to 192000"]),
    "rate 0": (_fmt_only(0), ["0 Hz"]),
    "no channels": (riff(chunk(b"fmt ", struct.pack("<HHIIHH", PCM, 0, 16000, 0, 0, 16)), chunk(b"data", b"")),
                    ["0 channels"]),
    "64-bit int": (_fmt_only(16000, 1, 64), ["64-bit integer PCM", "sox"]),
    "no bits": (_fmt_only(16000, 1, 0), ["0-bit"]),
    "16-bit float": (_fmt_only(16000, 1, 16, FLOAT), ["16-bit float"]),
    "bad block align": (riff(chunk(b"fmt ", struct.pack("<HHIIHH", PCM, 2, 16000, 0, 3, 16)), chunk(b"data", b"")),
                        ["inconsistent"]),
}


@pytest.mark.parametrize("name", BAD)
@pytest.mark.parametrize("reader", [read_wav, check_wav, wav_length, read_wav_blocks])
def test_a_bad_file_is_refused_clearly(tmp_path, name, reader):
    contents, words = BAD[name]
    path = tmp_path / "bad file.wav"
    path.write_bytes(contents)
    with pytest.raises(AudioFormatError) as err:
        reader(path)
    message = str(err.value)
    assert message.startswith(str(path) + ":")
    for word in words:
        assert word in message, (name, message)
    if "sox" in words:  # the suggested command works on a name with a space in it
        assert f"sox '{path}' -r 16000 -c 1 -b 16 out.wav" in message
    if "ffmpeg" in words:  # not a WAV: a tool that reads the contents, not the name
        assert f"ffmpeg -i '{path}' -ar 16000 -ac 1 -sample_fmt s16 out.wav" in message and "sox" not in message


@pytest.mark.parametrize("reader", [read_wav, check_wav, wav_length, read_wav_blocks])
def test_a_folder_or_a_missing_file_is_refused_clearly(tmp_path, reader):
    with pytest.raises(AudioFormatError, match="is a folder"):
        reader(tmp_path)
    with pytest.raises(AudioFormatError, match="missing.wav: no such file"):
        reader(tmp_path / "missing.wav")


# --- resample on its own -----------------------------------------------------------------

def _bandlimited(rate, seconds, top, seed):
    """A few sines below `top` Hz, and a function giving their exact value at any time."""
    rng = np.random.default_rng(seed)
    freqs, phases = rng.uniform(50, top, 6), rng.uniform(0, 2 * np.pi, 6)

    def at(t):
        return 0.15 * np.sin(2 * np.pi * freqs[:, None] * t[None, :] + phases[:, None]).sum(axis=0)
    return at(np.arange(round(rate * seconds)) / rate), at


@pytest.mark.parametrize("rate_in, rate_out", [(44100, 16000), (48000, 16000), (8000, 16000), (11025, 16000),
                                               (16000, 44100), (44101, 16000), (22050, 32000)])
def test_resample_matches_the_signal_at_the_new_sample_times(rate_in, rate_out):
    # band-limited input: the output must be the same signal sampled at n / rate_out,
    # to the end of the recording (no drift: the ratio is exact)
    x, at = _bandlimited(rate_in, 2.0, 0.35 * min(rate_in, rate_out), seed=rate_in)
    y = resample(x, rate_in, rate_out)
    assert y.dtype == np.float32 and len(y) == math.ceil(len(x) * rate_out / rate_in)
    want = at(np.arange(len(y)) / rate_out)
    edge = rate_out // 20  # the filter sees silence beyond the ends
    assert np.abs(y[edge:-edge] - want[edge:-edge]).max() < 2e-3


def test_resample_api():
    x = np.linspace(-1, 1, 441)
    same = resample(x, 16000, 16000)
    assert same.dtype == np.float32 and np.allclose(same, x) and same is not x
    assert resample(np.zeros(0), 44100, 16000).shape == (0,)
    assert len(resample(np.ones(1), 44100, 16000)) == 1
    dc = resample(np.full(44100, 0.3), 44100, 16000)
    assert np.allclose(dc[1000:-1000], 0.3, atol=1e-5)  # unit gain at DC, every phase
    two = resample(np.stack([x, -x], axis=1), 44100, 16000)
    assert two.shape == (160, 2) and np.allclose(two[:, 0], -two[:, 1])
    assert np.allclose(resample(x.astype(np.float32), 44100.0, 16000), resample(x, 44100, 16000))
    big = np.random.default_rng(2).normal(0, 100, 4410)  # not scaled, not clipped
    assert np.abs(resample(big, 44100, 16000)).max() > 100
    for bad in (0, -8000, 44100.5, "44100"):
        with pytest.raises(ValueError):
            resample(x, bad, 16000)
    with pytest.raises(ValueError):
        resample(np.zeros((2, 2, 2)), 44100, 16000)


def test_a_folder_of_recordings_plays_in_the_order_its_numbers_say(tmp_path):
    from companion.listen.sources import expand_paths

    for name in ("call10.wav", "call2.wav", "call1.wav", "Call3.WAV", "notes.txt"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "call4.wav").mkdir()  # a folder named like a recording is not one
    assert [p.name for p in expand_paths([tmp_path])] == ["call1.wav", "call2.wav", "Call3.WAV", "call10.wav"]


@pytest.mark.parametrize("rate,channels,bits,tag", [(16000, 1, 16, PCM), (48000, 2, 16, PCM),
                                                    (44100, 1, 32, FLOAT), (8000, 3, 24, PCM),
                                                    (16000, 2, 8, PCM)])
def test_blocks_join_to_the_whole_recording(tmp_path, rate, channels, bits, tag):
    # A long recording is heard a block at a time: the blocks, joined, are the samples
    # read whole (resampled in blocks, a sample may round the other way), and no block
    # holds much more than it was asked to.
    x = np.random.default_rng(rate).normal(0, 0.25, (round(rate * 3.3), channels)).clip(-1, 1)
    path = make_wav(tmp_path / "long.wav", x, rate, bits, tag)
    whole = read_wav(path)
    blocks = list(read_wav_blocks(path, seconds=0.37))
    joined = np.concatenate(blocks)
    assert len(whole) == len(joined) == wav_length(path) == math.ceil(len(x) * SAMPLE_RATE / rate)
    assert len(blocks) >= 9 and max(len(b) for b in blocks) <= 0.37 * SAMPLE_RATE + 100
    assert np.abs(whole.astype(int) - joined).max() <= 1
    assert np.mean(whole == joined) > 0.999
    assert all(b.dtype == np.int16 for b in blocks)


def test_a_file_cut_short_reads_the_same_in_blocks(tmp_path):
    x = tone(440, 22050, 2.0)
    path = make_wav(tmp_path / "cut.wav", x, 22050)
    path.write_bytes(path.read_bytes()[:-1001])  # half a frame at the end, and the rest gone
    joined = np.concatenate(list(read_wav_blocks(path, seconds=0.25)))
    assert len(joined) == len(read_wav(path)) == wav_length(path) < 2 * SAMPLE_RATE
