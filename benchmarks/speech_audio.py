"""The speech benchmark's recordings: each line said by its voice, levelled, set in room
hiss and mixed with babble or pink noise, cached by a digest of everything that made it.
"""

from __future__ import annotations

import json
import multiprocessing
import random
import time
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from benchmarks.speech_corpus import (BABBLE_LINES, BABBLE_VOICE_SEED, CORPUS_VERSION, FLOOR, Item, LEAD_S, NOISES, PEAK, RATE, REAL_DIR, SEED, SetSpec, TAIL_S, _digest, build_items, conditions, real_items, voices_for)

# --- audio -----------------------------------------------------------------------------------

def _level(audio: np.ndarray) -> np.ndarray:
    """float speech scaled to the benchmark's peak level."""
    audio = np.asarray(audio, np.float32)
    return audio * (PEAK / (float(np.max(np.abs(audio))) + 1e-9))


def _loud(speech: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.abs(speech) > 0.02 * (np.max(np.abs(speech)) + 1e-9))


def speech_start(speech: np.ndarray) -> int:
    """Where the voice really starts in a clip (recordings begin with a little quiet)."""
    loud = _loud(speech)
    return int(loud[0]) if len(loud) else 0


def speech_end(speech: np.ndarray) -> int:
    """Where the voice really stops in a clip (synthesisers leave a little quiet)."""
    loud = _loud(speech)
    return int(loud[-1]) + 1 if len(loud) else len(speech)


def mix(speech: np.ndarray, noise: np.ndarray | None, snr_db: float | None,
        rng: np.random.Generator) -> np.ndarray:
    """Room before and after, hiss, and noise at `snr_db` over the speech's active part
    (training.augment.speech_power); int16 at 16 kHz."""
    from training.augment import speech_power

    speech = np.asarray(speech, np.float32)
    padded = np.concatenate([np.zeros(int(LEAD_S * RATE), np.float32), speech,
                             np.zeros(int(TAIL_S * RATE), np.float32)])
    out = padded + rng.normal(0, FLOOR / 32768, len(padded)).astype(np.float32)
    if noise is not None and snr_db is not None:
        start = int(rng.integers(0, max(1, len(noise) - len(padded))))
        piece = np.resize(noise[start:start + len(padded)], len(padded)).astype(np.float32)
        piece /= float(np.sqrt(np.mean(piece ** 2))) + 1e-9
        out += piece * np.float32(np.sqrt(speech_power(speech) / 10 ** (snr_db / 10)))
    peak = float(np.max(np.abs(out)))
    if peak > 0.97:  # loud noise is turned down the way an automatic gain control would
        out *= 0.97 / peak
    return np.clip(out * 32768, -32768, 32767).astype(np.int16)


def noise_tracks(out: Path, quick: bool, speaker: str, spare_takes: list[Path], workers: int,
                 log: Callable[[str], None]) -> dict[str, np.ndarray]:
    """Babble (5-6 talkers: held-out festival voices reading BABBLE_LINES and the held-out
    speaker's unused digits), talk (the same talkers' lines alone: a table talking with
    nobody calling) and pink noise, cached."""
    from training import augment, voices

    seconds = 30 if quick else 60
    talkers = voices.list_voices("festival", 3 if quick else 6, seed=BABBLE_VOICE_SEED)
    lines = [line for line in BABBLE_LINES if line.strip()][: 8 if quick else None]
    rng = random.Random(SEED)
    digits = sorted(rng.sample(spare_takes, min(len(spare_takes), 12 if quick else 60)))
    key = _digest([CORPUS_VERSION, seconds, [v.name for v in talkers], lines,
                   [p.name for p in digits]])
    folder = out / "speech-corpus" / f"noise-{'quick' if quick else 'full'}-{key}"
    babble_path, talk_path = folder / "babble.npy", folder / "talk.npy"
    if not babble_path.exists() or not talk_path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        t = time.time()
        jobs = [(talkers[i % len(talkers)], line) for i, line in enumerate(lines)]
        clips = _map(_say, jobs, workers)
        from companion.listen.audio import read_wav

        n = seconds * RATE
        talk_rng = np.random.default_rng(SEED + 2)
        talk = augment.babble_track(clips, n, int(talk_rng.integers(5, 7)), talk_rng)
        np.save(talk_path, talk.astype(np.float32))
        clips += [read_wav(p).astype(np.float32) / 32768 for p in digits]
        track_rng = np.random.default_rng(SEED)
        babble = augment.babble_track(clips, n, int(track_rng.integers(5, 7)), track_rng)
        np.save(babble_path, babble.astype(np.float32))
        log(f"babble: {len(jobs)} lines and {len(digits)} digits of held-out voices "
            f"({time.time() - t:.0f} s) -> {babble_path}, {talk_path}")
    pink = augment.coloured_noise(seconds * RATE, np.random.default_rng(SEED + 1), 1.0)
    return {"babble": np.load(babble_path), "talk": np.load(talk_path), "pink": pink}


def _say(job) -> np.ndarray:
    from training import voices

    voice, text = job
    return voices.synthesise(voice, text)


def _map(fn, jobs: list, workers: int) -> list:
    if workers <= 1 or len(jobs) <= 1:
        return [fn(j) for j in jobs]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        return pool.map(fn, jobs, chunksize=1)


_NOISES: dict[str, np.ndarray] = {}  # set before the workers fork


def _make_job(job) -> tuple[str, int | None, str]:
    """Say one item (or read its recording), then write it in every condition."""
    from companion.listen.audio import read_wav, write_wav

    folder, item, voice, source, conds, seed = job
    folder = Path(folder)
    clean_path = folder / "speech" / f"{item.key}.npy"
    try:
        if clean_path.exists():
            speech = np.load(clean_path)
        else:
            if source is not None:
                raw = read_wav(source).astype(np.float32) / 32768
            else:
                from training import voices

                raw = voices.synthesise(voice, item.say)
            speech = _level(raw)
            np.save(clean_path, speech)
    except Exception as err:  # one voice failing one text must not stop the benchmark
        return item.key, None, f"{item.say!r}: {err}"
    for name, noise, snr in conds:
        path = folder / name / f"{item.key}.wav"
        if not path.exists():
            rng = np.random.default_rng([seed, zlib.crc32(f"{name}/{item.key}".encode())])
            write_wav(path, mix(speech, _NOISES.get(noise or ""), snr, rng))
    return item.key, int(LEAD_S * RATE) + speech_end(speech), ""


@dataclass
class Corpus:
    spec: SetSpec
    folder: Path
    items: list[Item]
    ends: dict[str, int]  # key -> sample where the voice stops in each mixed file


def build_set(spec: SetSpec, out: Path, noises: dict[str, np.ndarray], workers: int,
              log: Callable[[str], None], real_dir: Path = REAL_DIR, speaker: str = "") -> Corpus:
    """Create (or reuse) one set's files: clean speech plus one WAV per condition."""
    conds = conditions(spec.quick)
    if spec.family is None:
        items, _ = real_items(speaker, spec.quick, real_dir)
        voices, sources = {}, {i.key: str(real_dir / "recordings" / i.say) for i in items}
    else:
        voice_list = voices_for(spec.family, spec.quick)
        items = build_items(spec, [v.name for v in voice_list])
        voices, sources = {v.name: v for v in voice_list}, {}
    key = _digest([CORPUS_VERSION, spec.name, spec.quick, [asdict(i) for i in items],
                   [asdict(v) for v in voices.values()], conds, LEAD_S, TAIL_S, PEAK, FLOOR,
                   {k: [len(v), float(np.sum(v[:1000] ** 2))] for k, v in noises.items() if k in NOISES}])
    folder = out / "speech-corpus" / f"{spec.slug}-{'quick' if spec.quick else 'full'}-{key}"
    manifest_path = folder / "manifest.json"
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
        kept = {i.key for i in items} & set(manifest["ends"])
        if len(kept) < len(items):  # said on every run that reuses the set, not only the first
            log(f"{spec.name}: {len(items) - len(kept)} of {len(items)} items could not be made and are "
                f"left out (why: the run that made {folder})")
        return Corpus(spec, folder, [i for i in items if i.key in kept], manifest["ends"])
    for sub in ["speech"] + [name for name, _, _ in conds]:
        (folder / sub).mkdir(parents=True, exist_ok=True)
    t = time.time()
    _NOISES.clear()
    _NOISES.update(noises)
    jobs = [(str(folder), i, voices.get(i.voice), sources.get(i.key), conds, SEED) for i in items]
    ends, failed = {}, []
    for key_, end, problem in _map(_make_job, jobs, workers):
        if end is None:
            failed.append(problem)
        else:
            ends[key_] = end
    for problem in failed:
        log(f"{spec.name}: skipped {problem}")
    manifest_path.write_text(json.dumps({"set": spec.name, "items": [asdict(i) for i in items],
                                         "ends": ends}, indent=1))
    log(f"{spec.name}: {len(ends)} utterances x {len(conds)} conditions in {folder} "
        f"({time.time() - t:.0f} s)" + (f"; {len(failed)} of {len(items)} left out" if failed else ""))
    return Corpus(spec, folder, [i for i in items if i.key in ends], ends)
