"""Stage 1 of training the call recogniser: say the corpus in many voices, put each clip
at a table (augment.py) and store its speech-embedding sequence with its token label.

    python -m training.build --out build/speech [--family espeak] [--items N] [--seed S]

One shard per voice family (`<family>.npz`), plus `real.npz` for the real recordings of
`../shared/data/speech-real-dev` (each speaker kept apart by name, so a speaker can be held
out) and `noise.npz`, the table with nobody calling. Shards already built are kept: delete one to build it again.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from companion.listen.embedding import SpeechEmbedding
from companion.listen.embedding import padded
from companion.listen.tokens import INDEX, number_tokens
from training import augment, corpus

RATE = 16000
REAL_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "speech-real-dev"
HELD_OUT_SPEAKER = "lucas"  # the real speaker training leaves out by default, for the benchmark

# Items said per family and noisy copies of each.
FAMILIES = {"espeak": (6000, 2), "piper": (2500, 2), "kokoro": (1500, 2), "festival": (2000, 2)}
VOICES_PER_FAMILY = {"espeak": 400, "piper": 40, "kokoro": 60, "festival": 40}


def features(audio: np.ndarray, warp: float | None = None, tempo: float | None = None) -> np.ndarray:
    """What the recogniser sees of one utterance (float audio in -1..1); `warp`: a vocal
    tract length factor applied to its mel frames first (a new speaker from an old one);
    `tempo`: the mel frames said faster (above 1) or slower at the same pitch."""
    embedding = SpeechEmbedding.shared()
    mels = embedding.mels(padded(audio.astype(np.float32)))
    if warp is not None:
        mels = augment.warp_mels(mels, warp)
    if tempo is not None:
        mels = augment.stretch_mels(mels, tempo)
    return embedding.embed_mels(mels)


def at_the_table(speech: np.ndarray, rng: np.random.Generator, babble: list[np.ndarray],
                 noisy: bool) -> tuple[np.ndarray, str]:
    """Pre-roll and tail of room sound around the speech, then the table's conditions."""
    before = np.zeros(int(rng.uniform(0.05, 0.6) * RATE), np.float32)
    after = np.zeros(int(rng.uniform(0.1, 0.5) * RATE), np.float32)
    return augment.table(np.concatenate([before, speech, after]), rng, babble, noisy)


@dataclass
class Job:
    family: str
    voice_index: int
    items: list
    seed: int
    copies: int
    warp: tuple[float, float] | None = None  # vocal tract length factors drawn from this range
    tempo: tuple[float, float] | None = None  # tempo factors drawn from this range
    respell: bool = False  # the Spanish words said in other ways half the time


_BABBLE: list[np.ndarray] = []


def _init_worker(babble: list[np.ndarray]) -> None:
    global _BABBLE
    _BABBLE = babble


def _run(job: Job) -> list[tuple[np.ndarray, tuple[int, ...], str, str, str, str]]:
    from training import voices

    rng = np.random.default_rng(job.seed)
    spelling = random.Random(job.seed)
    voice = voices.list_voices(job.family, VOICES_PER_FAMILY[job.family], 7)[job.voice_index]
    out = []
    for item in job.items:
        said = corpus.said_as(item.text, spelling) if job.respell else item.text
        try:
            speech = voices.synthesise(voice, said)
        except Exception as err:  # one voice failing a word must not stop the build
            print(f"  skipped {voice.name} {item.text!r}: {err}", flush=True)
            continue
        labels = tuple(INDEX[t] for t in item.tokens)
        for copy in range(job.copies):
            # The first copy is mostly clean, later ones noisy: noise is the hard part.
            audio, note = at_the_table(speech, rng, _BABBLE, noisy=copy > 0 or rng.random() < 0.3)
            warp = None if job.warp is None else float(rng.uniform(*job.warp))
            if warp is not None:
                note += f"+warp{warp:.2f}"
            tempo = None if job.tempo is None else float(rng.uniform(*job.tempo))
            if tempo is not None:
                note += f"+tempo{tempo:.2f}"
            if said != item.text:
                note += f"+said:{said}"
            out.append((features(audio, warp, tempo).astype(np.float16), labels, item.kind, item.text,
                        voice.name, note))
    return out


def save(path: Path, rows: list, extra: dict | None = None) -> None:
    feats = [r[0] for r in rows]
    lengths = np.array([len(f) for f in feats])
    labels = [np.array(r[1], np.int16).reshape(-1) for r in rows]
    np.savez_compressed(
        path, features=np.concatenate(feats), lengths=lengths,
        labels=np.concatenate(labels), label_lengths=np.array([len(x) for x in labels]),
        kinds=np.array([r[2] for r in rows]), texts=np.array([r[3] for r in rows]),
        voices=np.array([r[4] for r in rows]), notes=np.array([r[5] for r in rows]),
        **(extra or {}))


def save_clips(path: Path, clips: list[np.ndarray], **columns) -> None:
    """Audio clips of different lengths in one file (and per-clip `columns` beside them)."""
    np.savez_compressed(path, audio=np.concatenate(clips), lengths=np.array([len(c) for c in clips]),
                        **columns)


def load_clips(path: Path) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    """The clips `save_clips` wrote, and its columns."""
    with np.load(path) as data:
        clips = np.split(data["audio"], np.cumsum(data["lengths"])[:-1])
        return clips, {k: data[k] for k in data.files if k not in ("audio", "lengths")}


def load(path: Path) -> dict:
    """A shard as lists: features (T, 96) float32 and labels per clip, plus metadata."""
    with np.load(path) as data:
        ends = np.cumsum(data["lengths"])
        feats = np.split(data["features"].astype(np.float32), ends[:-1])
        label_ends = np.cumsum(data["label_lengths"])
        labels = np.split(data["labels"].astype(np.int64), label_ends[:-1])
        return {"features": feats, "labels": labels,
                **{k: list(data[k]) for k in ("kinds", "texts", "voices", "notes")}}


def babble_clips(seed: int, count: int = 160) -> list[np.ndarray]:
    """Talkers for babble: chatter said by espeak and piper voices (training families)."""
    from training import voices

    rng = np.random.default_rng(seed)
    pool = voices.list_voices("espeak", 60, seed) + voices.list_voices("piper", 6, seed)
    clips = []
    for i, item in enumerate(corpus.items(count * 4, seed)):
        if item.kind != "chatter" and i % 3:
            continue
        clips.append(voices.synthesise(pool[rng.integers(len(pool))], item.text))
        if len(clips) >= count:
            break
    return clips


def build_family(family: str, out: Path, items: int, copies: int, seed: int,
                 babble: list[np.ndarray], workers: int,
                 warp: tuple[float, float] | None = None,
                 tempo: tuple[float, float] | None = None, respell: bool = False) -> None:
    # Other items and other voices' draws than the plain shard's (and each other's).
    seed += 2 if tempo is not None else 1 if warp is not None else 0
    said = corpus.items(items, seed + zlib.crc32(family.encode()) % 1000)
    n_voices = VOICES_PER_FAMILY[family]
    jobs = []
    per_job = 25
    for start in range(0, len(said), per_job):
        index = (start // per_job) % n_voices
        jobs.append(Job(family, index, said[start:start + per_job], seed * 7919 + start, copies,
                        warp, tempo, respell))
    rows: list = []
    begun = time.time()
    # spawn, not fork: the parent may already run TFLite and BLAS threads, and a forked
    # child can inherit one of their locks held and never start.
    with mp.get_context("spawn").Pool(workers, _init_worker, (babble,)) as pool:
        for i, result in enumerate(pool.imap_unordered(_run, jobs)):
            rows.extend(result)
            if i % 20 == 0:
                print(f"  {family}: {len(rows)} clips, {time.time() - begun:.0f} s", flush=True)
    save(out, rows)
    print(f"{family}: {len(rows)} clips in {time.time() - begun:.0f} s -> {out}", flush=True)


def build_real(out: Path, seed: int, babble: list[np.ndarray], copies: int = 3) -> None:
    """Real people's digits, resampled from 8 kHz; every clip kept clean once plus noisy
    copies. Speakers stay named so training can hold one out."""
    from companion.listen.audio import read_wav

    rng = np.random.default_rng(seed)
    files = sorted((REAL_DIR / "recordings").glob("*.wav"))
    if not files:
        raise SystemExit(f"no recordings under {REAL_DIR}")
    rows = []
    for path in files:
        digit, speaker, _ = path.stem.split("_")
        speech = read_wav(path).astype(np.float32) / 32768.0
        labels = tuple(INDEX[t] for t in number_tokens(int(digit)))
        for copy in range(copies):
            audio, note = at_the_table(speech, rng, babble, noisy=copy > 0)
            rows.append((features(audio).astype(np.float16), labels, "number",
                         path.name, f"real:{speaker}", note))
    save(out, rows)
    print(f"real: {len(rows)} clips -> {out}", flush=True)


def build_noise(out: Path, seed: int, babble: list[np.ndarray], count: int = 1500) -> None:
    """What a table sounds like when nobody is calling: room noise, distant babble, dice,
    hum, a knock on the microphone, silence. Labelled with no tokens at all."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(count):
        n = int(rng.uniform(0.3, 3.0) * RATE)
        kind = rng.choice(["babble", "babble", "pink", "white", "brown", "clatter", "hum",
                           "silence", "knock"])
        if kind == "hum":
            t = np.arange(n) / RATE
            audio = sum(np.sin(2 * np.pi * f * t + rng.uniform(0, 6)) / k
                        for k, f in enumerate((50 * rng.integers(1, 3),) * 3, 1)).astype(np.float32)
        elif kind == "silence":
            audio = np.zeros(n, np.float32)
        elif kind == "knock":
            audio = np.zeros(n, np.float32)
            audio[rng.integers(0, n // 2)] = 1.0
            audio = augment.room(audio, rng)
        else:
            audio = augment.noise_of_kind(kind, n, rng, babble)
        audio = audio * 10 ** (rng.uniform(-50, 0) / 20) / (np.max(np.abs(audio)) + 1e-9)
        if rng.random() < 0.05:
            audio = np.clip(audio * 20, -1, 1)  # a signal stuck at full scale
        rows.append((features(audio.astype(np.float32)).astype(np.float16), (), "noise",
                     kind, f"noise:{kind}", "noise"))
    save(out, rows)
    print(f"noise: {len(rows)} clips -> {out}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("build/speech"))
    parser.add_argument("--family", action="append", help="only these families (and 'real')")
    parser.add_argument("--items", type=int, help="items per family (default: FAMILIES)")
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--warp", type=float, nargs=2, metavar=("LOW", "HIGH"),
                        help="also build <family>-warped.npz shards (a third of the items), "
                             "each clip's voice warped by a vocal tract length factor in LOW-HIGH")
    parser.add_argument("--tempo", type=float, nargs=2, metavar=("LOW", "HIGH"),
                        help="build <family>-stretched.npz shards instead (a third of the items): "
                             "each clip said at a tempo factor in LOW-HIGH, and warped if --warp")
    parser.add_argument("--respell", action="store_true",
                        help="say the Spanish words (calza, dudo, pacos, palifico) in other "
                             "ways half the time, as people do (training.corpus.SAID_AS)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    wanted = args.family or [*FAMILIES, "real", "noise"]
    babble_path = args.out / "babble.npz"
    if babble_path.exists():
        babble, _ = load_clips(babble_path)
    else:
        babble = babble_clips(args.seed)
        save_clips(babble_path, babble)
    for family in wanted:
        if (args.warp or args.tempo) and family in FAMILIES:
            path = args.out / f"{family}-{'stretched' if args.tempo else 'warped'}.npz"
            if not path.exists():
                items, copies = FAMILIES[family]
                build_family(family, path, (args.items or items) // 3, copies, args.seed, babble,
                             args.workers, args.warp and tuple(args.warp),
                             args.tempo and tuple(args.tempo), args.respell)
            continue
        path = args.out / f"{family}.npz"
        if path.exists():
            print(f"{family}: kept {path}")
            continue
        if family == "real":
            build_real(path, args.seed, babble)
        elif family == "noise":
            build_noise(path, args.seed, babble)
        else:
            items, copies = FAMILIES[family]
            build_family(family, path, args.items or items, copies, args.seed, babble, args.workers)


if __name__ == "__main__":
    main()
