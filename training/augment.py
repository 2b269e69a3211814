"""Make a clean synthetic clip sound like a table: speed, room, telephone band, gain, noise.

All float32 audio at 16 kHz in -1..1, numpy only. Every function takes the random
generator it draws from, so a training run is repeatable from its seed.
"""

from __future__ import annotations

import numpy as np

RATE = 16000


def speed(x: np.ndarray, factor: float) -> np.ndarray:
    """Play faster (factor > 1) or slower: tempo and pitch move together, as in Kaldi's
    speed perturbation."""
    n = int(len(x) / factor)
    return np.interp(np.arange(n) * factor, np.arange(len(x)), x).astype(np.float32)


def _fft_convolve(x: np.ndarray, h: np.ndarray) -> np.ndarray:
    n = len(x) + len(h) - 1
    size = 1 << (n - 1).bit_length()
    y = np.fft.irfft(np.fft.rfft(x, size) * np.fft.rfft(h, size), size)[:len(x)]
    return y.astype(np.float32)


def room(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A synthetic room: direct sound, a few early reflections and an exponential tail
    (RT60 0.15-0.8 s), mixed at a random direct-to-reverberant ratio."""
    rt60 = rng.uniform(0.15, 0.8)
    n = int(rt60 * RATE)
    t = np.arange(n) / RATE
    tail = rng.standard_normal(n) * np.exp(-6.9 * t / rt60)
    tail[: int(0.003 * RATE)] = 0
    h = tail * 10 ** (-rng.uniform(3, 15) / 20) / np.sqrt(np.sum(tail ** 2) + 1e-9)
    h[0] = 1.0
    for _ in range(rng.integers(2, 6)):
        h[rng.integers(int(0.002 * RATE), int(0.03 * RATE))] += rng.uniform(0.1, 0.5)
    y = _fft_convolve(x, h.astype(np.float32))
    return y * (np.max(np.abs(x)) / (np.max(np.abs(y)) + 1e-9))


def _lowpass(cutoff: float, taps: int = 101) -> np.ndarray:
    n = np.arange(taps) - (taps - 1) / 2
    h = np.sinc(2 * cutoff / RATE * n) * np.hamming(taps)
    return (h / h.sum()).astype(np.float32)


def telephone(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Narrow band (about 300-3,400 Hz, as 8 kHz audio), with a little codec-like grit."""
    low = _fft_convolve(x, _lowpass(rng.uniform(3300, 3800)))
    y = low - _fft_convolve(low, _lowpass(rng.uniform(200, 400)))
    if rng.random() < 0.5:  # mu-law's coarse steps
        mu = 255.0
        q = np.sign(y) * np.log1p(mu * np.minimum(np.abs(y), 1)) / np.log1p(mu)
        q = np.round(q * 127) / 127
        y = np.sign(q) * np.expm1(np.abs(q) * np.log1p(mu)) / mu
    return y.astype(np.float32)


def coloured_noise(n: int, rng: np.random.Generator, exponent: float) -> np.ndarray:
    """1/f**exponent noise: 0 white, 1 pink, 2 brown."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n)
    f[0] = f[1]
    y = np.fft.irfft(spectrum / f ** (exponent / 2), n)
    return (y / (np.std(y) + 1e-9)).astype(np.float32)


def clatter(n: int, rng: np.random.Generator) -> np.ndarray:
    """Dice, cups and glasses: short decaying clicks at random times over a faint hum."""
    y = coloured_noise(n, rng, 1.0) * 0.05
    for _ in range(int(rng.integers(2, 12) * n / RATE)):
        at, length = rng.integers(0, n), int(rng.uniform(0.005, 0.06) * RATE)
        burst = rng.standard_normal(length) * np.exp(-np.arange(length) / (length / 5))
        end = min(n, at + length)
        y[at:end] += burst[: end - at] * rng.uniform(0.3, 2.0)
    return y / (np.std(y) + 1e-9)


def speech_power(x: np.ndarray) -> float:
    """Mean power of the loud part (the top half of 20 ms frames), so pauses do not
    lower a clip's level and SNRs mean the same for short and long calls."""
    frames = x[: len(x) // 320 * 320].reshape(-1, 320)
    if not len(frames):
        return float(np.mean(x ** 2) + 1e-12)
    power = np.sort(np.mean(frames ** 2, axis=1))
    return float(np.mean(power[len(power) // 2:]) + 1e-12)


def mix(speech: np.ndarray, noise: np.ndarray, snr_db: float) -> np.ndarray:
    noise = noise[: len(speech)]
    scale = np.sqrt(speech_power(speech) / (np.mean(noise ** 2) + 1e-12) / 10 ** (snr_db / 10))
    return (speech + scale * noise).astype(np.float32)


def babble_track(clips: list[np.ndarray], n: int, talkers: int,
                 rng: np.random.Generator) -> np.ndarray:
    """`talkers` voices speaking at once, each a run of random clips with short gaps."""
    out = np.zeros(n, dtype=np.float32)
    for _ in range(talkers):
        track = np.zeros(n, dtype=np.float32)
        at = int(rng.integers(-RATE, RATE // 2))
        while at < n:
            clip = clips[rng.integers(len(clips))]
            clip = clip / (np.sqrt(speech_power(clip)) + 1e-9)
            a, b = max(at, 0), min(n, at + len(clip))
            if b > a:
                track[a:b] += clip[a - at: b - at]
            at += len(clip) + int(rng.uniform(0.05, 0.5) * RATE)
        out += track * rng.uniform(0.5, 1.0)
    return out / (np.std(out) + 1e-9)


def noise_of_kind(kind: str, n: int, rng: np.random.Generator,
                  babble_clips: list[np.ndarray]) -> np.ndarray:
    if kind == "babble":
        return babble_track(babble_clips, n, int(rng.integers(3, 8)), rng)
    if kind == "clatter":
        return clatter(n, rng)
    return coloured_noise(n, rng, {"white": 0.0, "pink": 1.0, "brown": 2.0}[kind])


def table(x: np.ndarray, rng: np.random.Generator, babble_clips: list[np.ndarray],
          noisy: bool) -> tuple[np.ndarray, str]:
    """One random table condition for a clip (already padded with its pre-roll and tail).
    Returns the audio and a short description for the training log."""
    notes = []
    if rng.random() < 0.5:
        x = speed(x, rng.uniform(0.88, 1.12))
        notes.append("speed")
    if rng.random() < 0.5:
        x = room(x, rng)
        notes.append("room")
    if rng.random() < 0.15:
        x = telephone(x, rng)
        notes.append("phone")
    if noisy:
        kind = rng.choice(["babble", "babble", "babble", "pink", "white", "brown", "clatter"])
        snr = float(rng.uniform(0, 30))
        x = mix(x, noise_of_kind(kind, len(x), rng, babble_clips), snr)
        notes.append(f"{kind}{snr:.0f}")
    gain = 10 ** (rng.uniform(-30, 0) / 20) / (np.max(np.abs(x)) + 1e-9)
    x = x * gain
    if rng.random() < 0.05:  # a shouted call into a cheap microphone
        x = np.clip(x * rng.uniform(2, 6), -1, 1)
        notes.append("clip")
    return x.astype(np.float32), "+".join(notes) or "clean"


MEL_RANGE_HZ = (60.0, 3800.0)  # the speech embedding's mel filterbank (32 bands)


def _mel(f):
    return 2595.0 * np.log10(1.0 + np.asarray(f) / 700.0)


def _hz(m):
    return 700.0 * (10 ** (np.asarray(m) / 2595.0) - 1.0)


def warp_mels(mels: np.ndarray, alpha: float) -> np.ndarray:
    """Vocal tract length perturbation on log-mel frames: every frequency scaled by `alpha`
    (above 1: a shorter vocal tract, as in a higher voice), so one voice stands in for
    another with other formants. Each band takes the log-mel value found at its centre
    frequency divided by `alpha`, interpolated between bands; the edges are held."""
    bands = mels.shape[1]
    lo, hi = _mel(MEL_RANGE_HZ[0]), _mel(MEL_RANGE_HZ[1])
    centres = np.linspace(lo, hi, bands + 2)[1:-1]
    source = (_mel(_hz(centres) / alpha) - centres[0]) / (centres[1] - centres[0])
    return _interpolated(mels, np.clip(source, 0, bands - 1), axis=1)


def stretch_mels(mels: np.ndarray, tempo: float) -> np.ndarray:
    """Log-mel frames said `tempo` times as fast (above 1: faster), pitch and formants
    unchanged: each output frame is interpolated between the two input frames nearest its
    time. Speed perturbation moves tempo and pitch together; this moves tempo alone."""
    if len(mels) == 0:
        return mels
    count = max(int(round(len(mels) / tempo)), 1)
    return _interpolated(mels, np.clip(np.arange(count) * tempo, 0, len(mels) - 1), axis=0)


def _interpolated(mels: np.ndarray, source: np.ndarray, axis: int) -> np.ndarray:
    """`mels` read at the fractional positions `source` along `axis` (frames 0, bands 1),
    each between its two nearest neighbours."""
    low = np.floor(source).astype(int)
    high = np.minimum(low + 1, mels.shape[axis] - 1)
    frac = (source - low).astype(np.float32).reshape([-1 if i == axis else 1 for i in range(mels.ndim)])
    return (np.take(mels, low, axis) * (1 - frac) + np.take(mels, high, axis) * frac).astype(np.float32)
