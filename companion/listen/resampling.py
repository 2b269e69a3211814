"""Changing the sample rate: a band-limited (Kaiser-windowed sinc) polyphase resampler in
numpy, for a whole recording (`resample`) or a stream a block at a time (`BlockResampler`,
the same samples as the whole stream resampled at once)."""

from __future__ import annotations

import math
import operator
from functools import lru_cache

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

SAMPLE_RATE = 16000  # what the recognisers hear


# The low-pass filter: a sinc windowed by a Kaiser window (beta 8.6: about 86 dB of
# stopband) reaching ZEROS zero crossings of the sinc either side of the centre. The
# cutoff is ROLLOFF of the lower of the two Nyquist frequencies, so the transition band
# ends close to that Nyquist: to 16 kHz, flat (-0.1 dB) to 7 kHz, -6 dB near 7.5 kHz and
# over 80 dB down from 8.2 kHz.
ZEROS = 32
BETA = 8.6
ROLLOFF = 0.94
_TABLE = 4096  # steps of the Kaiser window's table
_BLOCK = 1 << 20  # coefficients / window elements handled at once (bounds the memory)
_CACHED = 1 << 18  # filter banks up to this many coefficients are kept for the next call


def resample(samples: np.ndarray, rate_in: int, rate_out: int) -> np.ndarray:
    """`samples` taken at `rate_in` Hz, resampled to `rate_out` Hz, as float32.

    Band-limited: a windowed-sinc low-pass filter at the lower Nyquist frequency keeps
    anything above it from folding back (aliasing). The ratio is reduced by the gcd to
    up/down, and output sample n is computed at exactly n*down/up input samples, with
    one filter per distinct phase (polyphase), so there is no drift even over hours.
    The output has ceil(len * rate_out / rate_in) samples: the duration is kept. Outside
    the recording the signal is taken as silence. A 2-D array is read as (frames, channels)
    and each channel resampled. The input is not scaled or clipped: float in, float out.
    """
    rate_in, rate_out = _rate(rate_in, "rate_in"), _rate(rate_out, "rate_out")
    x = np.asarray(samples)
    if x.ndim == 2:
        columns = [resample(x[:, c], rate_in, rate_out) for c in range(x.shape[1])]
        frames = -(-x.shape[0] * rate_out // rate_in)
        return np.stack(columns, axis=1) if columns else np.zeros((frames, 0), np.float32)
    if x.ndim != 1:
        raise ValueError(f"resample takes a 1-D array of samples (or 2-D: frames, channels), "
                         f"not {x.ndim}-D")
    x = x.astype(np.float32)  # a copy, even at the same rate: the caller's array is never shared
    if rate_in == rate_out or len(x) == 0:
        return x
    common = math.gcd(rate_in, rate_out)
    return _polyphase(x, rate_out // common, rate_in // common)


def _rate(rate, name: str) -> int:
    try:
        value = operator.index(rate)
    except TypeError:
        if not (isinstance(rate, (float, np.floating)) and float(rate).is_integer()):
            raise ValueError(f"{name} must be a whole number of Hz, not {rate!r}") from None
        value = int(rate)
    if value <= 0:
        raise ValueError(f"{name} must be a positive number of Hz, not {rate!r}")
    return value


def _polyphase(x: np.ndarray, up: int, down: int) -> np.ndarray:
    """Output n = q*rows + k is the dot product of filter k with the input from
    q*down + base[k] on (the input padded with `left` zeros in front)."""
    n_out = -(-len(x) * up // down)
    rows = min(up, n_out)  # output phases; a short input needs only its first few
    taps, left = _taps(up, down)
    periods = -(-n_out // rows)
    last_base = ((rows - 1) * down) // up
    padded = np.zeros(max((periods - 1) * down + last_base + taps, left + len(x)), np.float32)
    padded[left:left + len(x)] = x
    windows = sliding_window_view(padded, taps)  # windows[i] = padded[i:i + taps], no copy
    out = np.empty((periods, rows), np.float32)
    block_rows = max(1, _BLOCK // taps)
    # With down >= taps the strided windows go to BLAS as they are; otherwise numpy copies
    # each one, so take the periods in blocks to bound that copy.
    block_periods = periods if down >= taps else max(1, _BLOCK // taps)
    for first in range(0, rows, block_rows):
        last = min(rows, first + block_rows)
        if rows * taps <= _CACHED:
            bank, base = _cached_bank(up, down, rows)
            bank, base = bank[first:last], base[first:last]
        else:
            bank, base = _bank(up, down, first, last)
        for p0 in range(0, periods, block_periods):
            p1 = min(periods, p0 + block_periods)
            for k in range(last - first):
                start = p0 * down + int(base[k])
                out[p0:p1, first + k] = windows[start:start + (p1 - p0 - 1) * down + 1:down] @ bank[k]
    return out.reshape(-1)[:n_out]


def filter_reach(rate_in: int, rate_out: int) -> int:
    """How far `resample`'s filter reaches, in input samples: an output sample depends on
    the input within this distance either side of its position, and on nothing further."""
    common = math.gcd(rate_in, rate_out)
    return _taps(rate_out // common, rate_in // common)[0] // 2


class BlockResampler:
    """A device's blocks at its own rate as samples at the recogniser's rate, the same as the
    whole stream resampled at once. Each output sample waits only for the input its filter
    reaches (2 ms at 48 kHz), so what comes out of a block is a few samples short of it and
    the rest follows with the next."""

    def __init__(self, rate: int) -> None:
        self.rate = rate
        common = math.gcd(rate, SAMPLE_RATE)
        self._up, self._down = SAMPLE_RATE // common, rate // common
        self._reach = filter_reach(rate, SAMPLE_RATE) + 1
        self.reset()

    def reset(self) -> None:
        """A new stream: after a pause (the companion speaking), what was heard is not joined on."""
        self._kept = np.zeros(0, np.float32)  # input from absolute sample `_start` on
        self._start = 0  # always a multiple of `_down`, so the output grid stays aligned
        self._next = 0  # the next output sample to give

    def __call__(self, block: np.ndarray) -> np.ndarray:
        up, down, reach = self._up, self._down, self._reach
        x = np.concatenate([self._kept, block.astype(np.float32)])
        end = self._start + len(x)
        ready = max(self._next, ((end - reach) * up) // down)  # outputs before this have all their input
        given = self._outputs(x, ready)
        keep = max(self._start, ((ready * down // up - reach) // down) * down)
        self._kept, self._start, self._next = x[keep - self._start:], keep, ready
        return given

    def flush(self) -> np.ndarray:
        """The outputs still held back at the end of the stream, the input after it taken as
        silence (as `resample` takes it): what joins the blocks to the whole stream resampled."""
        n_out = -(-(self._start + len(self._kept)) * self._up // self._down)
        given = self._outputs(self._kept, n_out) if n_out > self._next else np.zeros(0, np.int16)
        self.reset()
        return given

    def _outputs(self, x: np.ndarray, upto: int) -> np.ndarray:
        """Output samples `_next` up to `upto` of input `x` (from sample `_start` on), as int16.
        Resampled from a multiple of `down` far enough back that they see the real input
        before them, not the zeros `resample` pads with (but for the stream's first samples)."""
        up, down = self._up, self._down
        seg = max(self._start, ((self._next * down // up - self._reach) // down) * down)
        out = resample(x[seg - self._start:], self.rate, SAMPLE_RATE)
        first = seg * up // down
        return np.clip(np.round(out[self._next - first:upto - first]), -32768, 32767).astype(np.int16)


def _taps(up: int, down: int) -> tuple[int, int]:
    """Filter length, and how many input samples before the centre it reaches."""
    reach = math.ceil(ZEROS * max(1.0, down / up))
    return 2 * reach, reach - 1


@lru_cache(maxsize=32)
def _cached_bank(up: int, down: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    bank, base = _bank(up, down, 0, rows)
    bank.setflags(write=False)
    base.setflags(write=False)
    return bank, base


def _bank(up: int, down: int, first: int, last: int) -> tuple[np.ndarray, np.ndarray]:
    """The filters of output phases first..last-1 (float32, one row each, summing to 1)
    and where each starts in the input. Phase k sits at input position k*down/up =
    base + frac; tap j is input sample base - left + j."""
    taps, left = _taps(up, down)
    scale = min(1.0, up / down)  # the cutoff, as a fraction of the input's Nyquist
    cutoff = ROLLOFF * scale
    half_width = ZEROS / scale  # in input samples
    k = np.arange(first, last, dtype=np.int64)
    base = (k * down) // up
    frac = ((k * down) % up) / up
    offsets = np.arange(-left, taps - left, dtype=np.float64)
    t = frac[:, None] - offsets[None, :]  # distance from the phase's position, in input samples
    # sin(pi c (frac - o)) by angle addition: two outer products instead of one sin per tap
    a, b = np.pi * cutoff * frac, np.pi * cutoff * offsets
    sines = np.outer(np.sin(a), np.cos(b)) - np.outer(np.cos(a), np.sin(b))
    arg = np.pi * cutoff * t
    small = np.abs(arg) < 1e-12
    h = cutoff * np.divide(sines, arg, out=np.ones_like(arg), where=~small)
    h *= _kaiser(np.square(t / half_width))
    h /= h.sum(axis=1, keepdims=True)  # unit gain at DC for every phase: no ripple from them
    return h.astype(np.float32), base


@lru_cache(maxsize=1)
def _kaiser_table() -> np.ndarray:
    s = np.linspace(0.0, 1.0, _TABLE + 1)
    return np.i0(BETA * np.sqrt(1.0 - s)) / np.i0(BETA)


def _kaiser(s: np.ndarray) -> np.ndarray:
    """The Kaiser window at u where s = u*u (|u| <= 1 inside, 0 outside), read off a
    table in s: the window is smooth in s, so linear steps are within 1e-7 of np.i0
    and many times faster."""
    table = _kaiser_table()
    pos = np.minimum(s, 1.0) * _TABLE
    i = np.minimum(pos.astype(np.int64), _TABLE - 1)
    w = table[i] + (pos - i) * (table[i + 1] - table[i])
    w[s > 1.0] = 0.0
    return w
