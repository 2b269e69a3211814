"""`companion bench speech`: how well the bundled call recogniser hears calls it never trained on.

Voices the shipped network never heard:
- festival: festival's diphone voice with its own duration and pitch settings, under a seed
  training never uses, heard by a network trained without festival (the shipped one if it
  left festival out, else --lofo DIR/festival.npz); the scripted games are said by it too;
- real:<speaker>: the real person named in the model card as held out
  (../shared/data/speech-real-dev), saying digits;
- lofo:<family> (with --lofo DIR): espeak, piper or kokoro voices, each heard by a network
  trained without that family (DIR/<family>.npz).

Every utterance gets 0.4 s of room before and 0.6 s after, clean and in babble and pink
noise at 24, 18, 12 and 6 dB SNR (over the speech's active part); the babble is 5-6 talkers
made of held-out voices only. Each file is decoded the way the microphone path does it
(endpointer, then the engine listening for what the game would expect at that moment), and
the referee's own hearing rule (RefereeSettings.hearing, with `play`'s thresholds) decides
what would have been done with it:

  acc      right call, acted on (applied, or asked about with "Did you say ...?")
  raw      right call, whatever the confidence
  silent   wrong call acted on
  again    call not acted on (nothing heard, ignored, or "say again")
  chatter  table talk acted on as a call
  phrase   acc over calls said inside a phrase ("okay I bid nine fives please")
  lat50/90 end of speech -> call known: endpoint delay + the engine's finishing time

Also: CPU while listening to a quiet room, the shipped model's size, and whole scripted games
(benchmarks/games.py) typed and then spoken through `companion play`.

    python -m companion bench speech --quick --workers 1
"""

from __future__ import annotations

import os

# Decoding is measured single-threaded, as it runs on a small board (set before numpy loads).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import multiprocessing  # noqa: E402
import random  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import zlib  # noqa: E402
from dataclasses import asdict, dataclass, replace  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable, Sequence  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PLAYERS = ("Ana", "Ben", "Cleo")
SEED = 99  # the benchmark's; training uses 22
VOICE_SEED = 99  # festival voice settings of the benchmark's speakers
BABBLE_VOICE_SEED = 98  # ... and of the babble's talkers
FESTIVAL_VOICES, QUICK_VOICES = 12, 4
SNRS, QUICK_SNRS = (24, 18, 12, 6), (18, 6)
NOISES = ("babble", "pink")
LEAD_S, TAIL_S = 0.4, 0.6  # room before and after each utterance
PEAK = 0.3  # speech peak level (of full scale) before noise: a call at arm's length
FLOOR = 3.0  # room hiss (LSB standard deviation): a real room is never digitally silent
RATE = 16000
REAL_DIR = ROOT.parent / "shared" / "data" / "speech-real-dev"
REAL_TAKES, QUICK_REAL_TAKES = 25, 1  # takes per digit of the held-out speaker
LOFO_FAMILIES = ("espeak", "piper", "kokoro")
MAX_COUNT = 30
CORPUS_VERSION = 1  # bump when the way files are made changes (the cache key includes it)

# Table talk that must not become a call: none of these is in training/corpus.py's lists.
# Sound-alikes of calls on purpose ("do you know", "call the taxi", "I doubt that ...").
CHATTER = """\
do you know
do you know where the bottle opener is
call the taxi
call the taxi before midnight
pass me the pizza
pass me the pizza while it is hot
hmm I doubt that
I doubt that very much
five minutes left
we have five minutes left
dude that was brutal
two dozen eggs in the fridge
three of them went home early
the bus comes at seven
my daughter turned six last week
nine lives like a cat
it was twenty degrees today
I had four cups of coffee
grab me a napkin
whose phone keeps buzzing
the candle is almost out
you always pick the blue cup
I am keeping an eye on you
could you turn the lamp on
that is a bold move
he is sweating already
she never blinks when she lies
my cousin plays this in Lima
we used to play on the beach
the dog is barking at the door
put some music on
the ice has melted
I will be right back
hold my drink for a second
there goes my last chance
don't knock the cups over
this is my lucky chair
the neighbours can hear us
can someone open the window
it is way too hot in here
I should have folded earlier
you are not fooling anyone
these crisps are stale
I spilled juice on the carpet
how many rounds is that now
has anyone seen the remote
the oven is still on
let me check the rules
I swear I saw a six under there
nobody cheats at my table
she is on a winning streak
let's call it a night
double chocolate cake for dessert
the taxi is outside
one day I will win this
not in a million years
the weather turned so quickly
my back is killing me
the baby monitor is beeping
we are out of ice
this game never ends
he is counting on his fingers
look who is talking
that cup has a crack in it
the score is tied
I would never lie to you
they sell these dice at the market
careful the glass is full
no idea what he is doing
that is the spirit
it is almost eleven
just one more game
we should stretch our legs
did anyone feed the cat
that song is stuck in my head
what a lovely evening
a piece of cake
keep calm and carry on
who brought the olives
go easy on him
"""

# What the babble's talkers read (not the chatter above: babble is noise, not test items).
BABBLE_LINES = """\
and then we drove all the way back to the coast because she forgot her passport
I told him the meeting was moved to Thursday but nobody listens to me anymore
the restaurant on the corner closed down last spring and nothing has opened since
have you tried the new bakery near the station their bread is wonderful
we painted the whole kitchen yellow and now I regret every single stroke
my brother wants to buy a boat even though he gets seasick on a ferry
the garden needs watering every evening when it is this dry outside
she finally finished her thesis after working on it for almost four years
the traffic this morning was so bad I nearly missed the first train
they say it will snow next week but I will believe it when I see it
honestly the film was far too long and the ending made no sense at all
we should invite the new neighbours over for dinner some time soon
the library has a reading group that meets on the first Monday of the month
I am thinking of learning the guitar again after all these years
his grandmother still bakes a cake for every birthday in the family
the hotel room had a view of the harbour and the boats coming in
""".splitlines()

# Words around a call that change nothing: how players wrap a call.
LEADS = ["make it", "I'll go", "okay I bid", "um", "so", "okay", "I bid", "I'll say",
         "so I bid", "okay make it"]
PLURAL = {1: ("ones", "aces", "pacos"), 2: ("twos",), 3: ("threes",), 4: ("fours",),
          5: ("fives",), 6: ("sixes",)}
SINGULAR = {1: ("ace", "paco"), 2: ("two",), 3: ("three",), 4: ("four",), 5: ("five",),
            6: ("six",)}
COMMANDS = ["take it back", "undo", "repeat", "status", "what's the bid", "yes", "no",
            "say again"]


# --- the corpus ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Item:
    key: str
    kind: str  # bid, count, challenge, named, hand, command, phrase, chatter, digit
    say: str  # what the voice says (the recording's file name for real speech)
    truth_text: str | None  # the call as parse_call reads it; None for chatter
    truth: dict | None  # call_json of that call
    voice: str  # the voice's name (or real:<speaker>)
    expect: str  # Expect value the game would listen with: "calls" or "count"


@dataclass(frozen=True)
class SetSpec:
    """One group of voices scored together."""

    name: str  # "festival", "real:lucas", "lofo:espeak"
    family: str | None  # voice family to synthesise with; None: real recordings
    model: str | None = None  # the network to hear it with; None: the shipped one
    quick: bool = False

    @property
    def slug(self) -> str:
        return self.name.replace(":", "-")


def call_json(call) -> dict | None:
    """What is compared between the call said and the call heard: the call and, when one
    was named, who called it ("Ben calza")."""
    if call is None:
        return None
    data = dict(call.to_json())
    if getattr(call, "speaker", None):
        data["speaker"] = call.speaker
    return data


def _truth(text: str | None) -> dict | None:
    from companion.calls import parse_call

    return None if text is None else call_json(parse_call(text, PLAYERS))


def _expect_for(truth: dict | None, index: int) -> str:
    """The moment of the game an utterance is heard at: a count or a player's dice after a
    challenge, every other call while bidding; commands and chatter half at each."""
    if truth is None or truth["kind"] == "command":
        return "count" if index % 2 else "calls"
    return "count" if truth["kind"] in ("number", "hand") else "calls"


def spoken_lines(seed: int, quick: bool) -> list[tuple[str, str, str | None]]:
    """(kind, said, truth text) for one voice set: bids over every face, bare counts,
    challenges, named calls, hands, commands, calls inside phrases and table chatter."""
    from companion.calls import number_words

    rng = random.Random(seed)
    lines: list[tuple[str, str, str | None]] = []
    # Bids: every count from 2 to 30 comes up (twice in a full run), spread over the faces.
    per_face = 1 if quick else 9
    pool = list(range(2, MAX_COUNT + 1)) * 2
    rng.shuffle(pool)
    for face in range(1, 7):
        counts = sorted(pool[(face - 1) * per_face: face * per_face])
        for k, n in enumerate(counts):
            word = PLURAL[face][(k + face) % len(PLURAL[face])]
            text = f"{number_words(n)} {word}"
            lines.append(("bid", text, text))
    singular_faces = [rng.choice(range(1, 7)), rng.choice(range(1, 7))] if quick else range(1, 7)
    for face in singular_faces:
        for lead in ("a", "one") if not quick else (rng.choice(("a", "one")),):
            text = f"{lead} {rng.choice(SINGULAR[face])}"
            lines.append(("bid", text, text))
    counts = rng.sample(range(0, MAX_COUNT + 1), 4) if quick else range(0, MAX_COUNT + 1)
    for n in counts:
        lines.append(("count", number_words(n), number_words(n)))
    for word in (["dudo", "calza", "palifico"] if quick
                 else ["dudo"] * 3 + ["calza"] * 3 + ["palifico"] * 2):
        lines.append(("challenge", word, word))
    for text in (["Ben calza"] if quick else
                 ["Ben calza", "Ana calza", "Cleo calza", "Ben dudo", "Cleo dudo"]):
        lines.append(("named", text, text))
    for _ in range(1 if quick else 4):
        dice = " ".join(number_words(rng.randint(1, 6)) for _ in range(rng.randint(2, 5)))
        text = f"{rng.choice(PLAYERS)} {dice}"
        lines.append(("hand", text, text))
    commands = ["take it back", "status", "yes", "no"] if quick else COMMANDS * 2
    for text in commands:
        lines.append(("command", text, text))
    phrases = [("make it three aces", "three aces"), ("I'll go four fours", "four fours"),
               ("okay I bid nine fives please", "nine fives"), ("um, seven", "seven")]
    if not quick:
        for _ in range(16):
            what = rng.random()
            if what < 0.6:
                n, face = rng.randint(1, 12), rng.randint(1, 6)
                call = (f"{number_words(n)} {rng.choice(PLURAL[face])}" if n > 1
                        else f"one {rng.choice(SINGULAR[face])}")
                lead = rng.choice(LEADS)
            elif what < 0.8:
                call, lead = rng.choice(["dudo", "calza"]), rng.choice(["um", "so", "okay"])
            else:
                call, lead = number_words(rng.randint(0, 20)), rng.choice(["um,", "so,", "okay"])
            tail = " please" if rng.random() < 0.25 else ""
            phrases.append((f"{lead} {call}{tail}", call))
    for said, call in phrases:
        lines.append(("phrase", said, call))
    chatter = [line for line in CHATTER.splitlines() if line.strip()]
    for text in (rng.sample(chatter, 12) if quick else chatter):
        lines.append(("chatter", text, None))
    return lines


def build_items(spec: SetSpec, voice_names: Sequence[str], seed: int = SEED) -> list[Item]:
    """The utterances of one synthetic voice set, each given to one of `voice_names`."""
    rng = random.Random(seed + zlib.crc32(spec.name.encode()))
    lines = spoken_lines(seed + zlib.crc32(spec.name.encode()) % 1000, spec.quick)
    order = list(range(len(lines)))
    rng.shuffle(order)  # every voice says a mix of kinds
    voice_of = {i: voice_names[k % len(voice_names)] for k, i in enumerate(order)}
    items, seen = [], {}
    for i, (kind, said, truth_text) in enumerate(lines):
        n = seen[kind] = seen.get(kind, -1) + 1
        truth = _truth(truth_text)
        items.append(Item(f"{kind}-{n:03d}", kind, said, truth_text, truth, voice_of[i],
                          _expect_for(truth, n)))
    return items


def real_items(speaker: str, quick: bool, real_dir: Path = REAL_DIR, seed: int = SEED
               ) -> tuple[list[Item], list[Path]]:
    """The held-out speaker's digits (takes chosen by seed), and the takes left over (for
    the babble)."""
    from companion.calls import number_words

    rng = random.Random(seed)
    files = sorted((real_dir / "recordings").glob(f"*_{speaker}_*.wav"))
    by_digit: dict[int, list[Path]] = {}
    for path in files:
        by_digit.setdefault(int(path.stem.split("_")[0]), []).append(path)
    items, rest = [], []
    takes = QUICK_REAL_TAKES if quick else REAL_TAKES
    for digit in sorted(by_digit):
        paths = sorted(by_digit[digit], key=lambda p: int(p.stem.split("_")[2]))
        chosen = set(rng.sample(range(len(paths)), min(takes, len(paths))))
        for k, path in enumerate(paths):
            if k not in chosen:
                rest.append(path)
                continue
            text = number_words(digit)
            items.append(Item(f"digit{digit}-{path.stem.split('_')[2]}", "digit", path.name,
                              text, _truth(text), f"real:{speaker}", "count"))
    return items, rest


def voices_for(family: str, quick: bool):
    from training import voices

    return voices.list_voices(family, QUICK_VOICES if quick else FESTIVAL_VOICES, seed=VOICE_SEED)


def conditions(quick: bool) -> list[tuple[str, str | None, float | None]]:
    out: list[tuple[str, str | None, float | None]] = [("clean", None, None)]
    for noise in NOISES:
        out += [(f"{noise}{snr}", noise, float(snr)) for snr in (QUICK_SNRS if quick else SNRS)]
    return out


def _digest(value) -> str:
    return hashlib.sha1(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:10]


# --- audio -----------------------------------------------------------------------------------

def _level(audio: np.ndarray) -> np.ndarray:
    """float speech scaled to the benchmark's peak level."""
    audio = np.asarray(audio, np.float32)
    return audio * (PEAK / (float(np.max(np.abs(audio))) + 1e-9))


def speech_end(speech: np.ndarray) -> int:
    """Where the voice really stops in a clip (synthesisers leave a little quiet)."""
    loud = np.flatnonzero(np.abs(speech) > 0.02 * (np.max(np.abs(speech)) + 1e-9))
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
    speaker's unused digits) and pink noise, cached."""
    from training import augment, voices

    seconds = 30 if quick else 60
    talkers = voices.list_voices("festival", 3 if quick else 6, seed=BABBLE_VOICE_SEED)
    lines = [line for line in BABBLE_LINES if line.strip()][: 8 if quick else None]
    rng = random.Random(SEED)
    digits = sorted(rng.sample(spare_takes, min(len(spare_takes), 12 if quick else 60)))
    key = _digest([CORPUS_VERSION, seconds, [v.name for v in talkers], lines,
                   [p.name for p in digits]])
    folder = out / "speech-corpus" / f"noise-{'quick' if quick else 'full'}-{key}"
    babble_path = folder / "babble.npy"
    if not babble_path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        t = time.time()
        jobs = [(talkers[i % len(talkers)], line) for i, line in enumerate(lines)]
        clips = _map(_say, jobs, workers)
        from companion.listen.audio import read_wav

        clips += [read_wav(p).astype(np.float32) / 32768 for p in digits]
        track_rng = np.random.default_rng(SEED)
        n = seconds * RATE
        babble = augment.babble_track(clips, n, int(track_rng.integers(5, 7)), track_rng)
        np.save(babble_path, babble.astype(np.float32))
        log(f"babble: {len(jobs)} lines and {len(digits)} digits of held-out voices "
            f"({time.time() - t:.0f} s) -> {babble_path}")
    pink = augment.coloured_noise(seconds * RATE, np.random.default_rng(SEED + 1), 1.0)
    return {"babble": np.load(babble_path), "pink": pink}


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
                   {k: [len(v), float(np.sum(v[:1000] ** 2))] for k, v in noises.items()}])
    folder = out / "speech-corpus" / f"{spec.slug}-{'quick' if spec.quick else 'full'}-{key}"
    manifest_path = folder / "manifest.json"
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
        kept = {i.key for i in items} & set(manifest["ends"])
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
        f"({time.time() - t:.0f} s)")
    return Corpus(spec, folder, [i for i in items if i.key in ends], ends)


# --- decoding --------------------------------------------------------------------------------

_ENGINES: dict[str | None, object] = {}


def _engine(model: str | None):
    """One engine per network, made in the worker that uses it."""
    if model not in _ENGINES:
        from companion.listen.sources import make_engine

        shipped = _ENGINES.get(None) or make_engine("bundled", None, PLAYERS, max_count=MAX_COUNT)
        _ENGINES[None] = shipped
        if model is not None:
            from companion.listen.recogniser import CallRecogniser, RecogniserSettings

            _ENGINES[model] = CallRecogniser(
                PLAYERS, RecogniserSettings(max_count=MAX_COUNT, model=Path(model)),
                names=shipped.names)  # the same name templates: only the network differs
    return _ENGINES[model]


def _decode_job(job: dict) -> dict:
    from companion.calls import parse_call_or_none
    from companion.listen.audio import read_wav
    from companion.listen.endpoint import split
    from companion.listen.sources import decode_span
    from companion.sources import Expect

    engine = _engine(job["model"])
    engine.expect(Expect(job["expect"]))
    samples = read_wav(job["path"])
    result = decode_span(engine, samples)  # the path WavSource and the microphone use
    ends = [s.detected_at for s in split(samples) if s.detected_at >= job["speech_end"]]
    return {"set": job["set"], "condition": job["condition"], "key": job["key"],
            "kind": job["kind"], "expect": job["expect"], "truth": job["truth"],
            "text": result.text, "alternatives": list(result.alternatives),
            "call": call_json(parse_call_or_none(result.text, PLAYERS)),
            "confidence": float(result.confidence), "audio": result.audio_seconds,
            "cpu": result.decode_seconds, "finish": result.finish_seconds,
            "endpoint_delay": (ends[0] - job["speech_end"]) / RATE if ends else None}


def decode(corpora: list[Corpus], workers: int, log: Callable[[str], None]) -> list[dict]:
    jobs = []
    for c in corpora:
        for name, _, _ in conditions(c.spec.quick):
            for item in c.items:
                jobs.append({"set": c.spec.name, "model": c.spec.model, "condition": name,
                             "key": item.key, "kind": item.kind, "expect": item.expect,
                             "truth": item.truth, "speech_end": c.ends[item.key],
                             "path": str(c.folder / name / f"{item.key}.wav")})
    t = time.time()
    rows: list[dict] = []
    if workers <= 1:
        for job in jobs:
            rows.append(_decode_job(job))
            if len(rows) % 100 == 0:
                log(f"  decoded {len(rows)}/{len(jobs)} ({time.time() - t:.0f} s)")
    else:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            for row in pool.imap_unordered(_decode_job, jobs, chunksize=4):
                rows.append(row)
                if len(rows) % 200 == 0:
                    log(f"  decoded {len(rows)}/{len(jobs)} ({time.time() - t:.0f} s)")
    order = {(j["set"], j["condition"], j["key"]): i for i, j in enumerate(jobs)}
    rows.sort(key=lambda r: order[(r["set"], r["condition"], r["key"])])
    log(f"decoded {len(rows)} files in {time.time() - t:.0f} s")
    return rows


# --- scoring ---------------------------------------------------------------------------------

def referee_settings():
    """The referee's settings as `companion play` sets them for speech."""
    from companion.listen.engine import ENGINE_CONFIRM, ENGINE_SHORT_CALLS, ENGINE_THRESHOLD
    from companion.referee import RefereeSettings

    return replace(RefereeSettings(), reject_below=ENGINE_THRESHOLD, confirm_below=ENGINE_CONFIRM,
                   short_calls_from=ENGINE_SHORT_CALLS)


def hearing(row: dict, settings=None):
    """What the referee does with a decoded row (None: nothing in it parses as a call)."""
    from companion.calls import parse_call_or_none

    call = parse_call_or_none(row["text"], PLAYERS)
    if call is None:
        return None
    return (settings or referee_settings()).hearing(call, row["confidence"], asking=False,
                                                    settles=False)


def acted_on(row: dict, settings=None) -> bool:
    """Would the referee act on this heard call: at once, or after a "yes"?"""
    from companion.referee import Hearing

    return hearing(row, settings) in (Hearing.ASK, Hearing.APPLY)


def metrics(rows: list[dict], settings=None) -> dict:
    """The figures of one group of rows (see the module's docstring)."""
    from companion.referee import Hearing

    settings = settings or referee_settings()
    calls = [r for r in rows if r["truth"] is not None]
    chatter = [r for r in rows if r["truth"] is None]
    phrases = [r for r in calls if r.get("kind") == "phrase"]
    acted = {id(r): acted_on(r, settings) for r in rows}
    right = lambda r: r["call"] is not None and r["call"] == r["truth"]  # noqa: E731
    share = lambda n, d: n / len(d) if d else float("nan")  # noqa: E731
    latencies = [r["endpoint_delay"] + r["finish"] for r in calls
                 if r.get("endpoint_delay") is not None]
    return {
        "n_calls": len(calls), "n_chatter": len(chatter), "n_phrases": len(phrases),
        "accuracy": share(sum(acted[id(r)] and right(r) for r in calls), calls),
        "raw_accuracy": share(sum(right(r) for r in calls), calls),
        "silent_errors": share(sum(acted[id(r)] and not right(r) for r in calls), calls),
        # Wrong calls applied without even a "Did you say ...?" first.
        "silent_unasked": share(sum(not right(r) and hearing(r, settings) is Hearing.APPLY
                                    for r in calls), calls),
        "again": share(sum(not acted[id(r)] for r in calls), calls),
        "chatter_accepted": share(sum(acted[id(r)] for r in chatter), chatter),
        "phrase_accuracy": share(sum(acted[id(r)] and right(r) for r in phrases), phrases),
        "latency_median": float(np.median(latencies)) if latencies else float("nan"),
        "latency_p90": float(np.percentile(latencies, 90)) if latencies else float("nan"),
        "endpoint_missed": share(len(calls) - len(latencies), calls),
        "rtf": (sum(r.get("cpu", 0.0) for r in rows) / sum(r.get("audio", 0.0) for r in rows)
                if sum(r.get("audio", 0.0) for r in rows) else float("nan")),
    }


def summarise(rows: list[dict], settings=None) -> dict[str, dict[str, dict]]:
    """set -> condition -> metrics, in the order the rows come."""
    out: dict[str, dict[str, dict]] = {}
    for name in dict.fromkeys(r["set"] for r in rows):
        mine = [r for r in rows if r["set"] == name]
        out[name] = {cond: metrics([r for r in mine if r["condition"] == cond], settings)
                     for cond in dict.fromkeys(r["condition"] for r in mine)}
    return out


def _pct(x: float) -> str:
    return "    -" if x != x else f"{100 * x:5.1f}"


def _ms(x: float) -> str:
    return "    -" if x != x else f"{1000 * x:5.0f}"


def print_table(summary: dict[str, dict[str, dict]], out=sys.stdout) -> None:
    print(f"{'set':14} {'condition':10} {'calls':>5} {'acc%':>5} {'raw%':>5} {'silent':>6} "
          f"{'again':>5} {'chat%':>5} {'phr%':>5} {'lat50':>5} {'lat90':>5} {'EPmis':>5} "
          f"{'RTF':>5}", file=out)
    for name, conds in summary.items():
        for cond, s in conds.items():
            print(f"{name:14} {cond:10} {s['n_calls']:5d} {_pct(s['accuracy'])} "
                  f"{_pct(s['raw_accuracy'])} {_pct(s['silent_errors']):>6} {_pct(s['again'])} "
                  f"{_pct(s['chatter_accepted'])} {_pct(s['phrase_accuracy'])} "
                  f"{_ms(s['latency_median'])} {_ms(s['latency_p90'])} "
                  f"{_pct(s['endpoint_missed'])} {s['rtf']:5.2f}", file=out)


def overall(rows: list[dict], summary: dict[str, dict[str, dict]], main_set: str,
            real_set: str | None, settings=None) -> dict:
    """The headline figures: the festival voices' accuracy, the real speaker's, and the
    worst silent-error rate over every level of both."""
    nan = float("nan")
    fest = summary.get(main_set, {})
    noisy = [s["accuracy"] for c, s in fest.items() if c != "clean"]
    real = summary.get(real_set or "", {})
    real_noisy = [s["accuracy"] for c, s in real.items() if c != "clean"]
    held = [r for r in rows if r["set"] in (main_set, real_set)]
    every = metrics(held, settings) if held else {}
    worst = max(((s["silent_errors"], f"{name} {c}") for name in (main_set, real_set or "")
                 for c, s in summary.get(name, {}).items() if s["silent_errors"] == s["silent_errors"]),
                default=(nan, ""))
    return {
        "clean_accuracy": fest.get("clean", {}).get("accuracy", nan),
        "noisy_mean_accuracy": float(np.mean(noisy)) if noisy else nan,
        "babble6_accuracy": fest.get("babble6", {}).get("accuracy", nan),
        "real_clean_accuracy": real.get("clean", {}).get("accuracy", nan),
        "real_noisy_mean_accuracy": float(np.mean(real_noisy)) if real_noisy else nan,
        "silent_errors_max": worst[0], "silent_errors_max_where": worst[1],
        "chatter_accepted": metrics([r for r in rows if r["set"] == main_set], settings)[
            "chatter_accepted"] if fest else nan,
        "latency_median": every.get("latency_median", nan),
        "latency_p90": every.get("latency_p90", nan),
        "rtf": every.get("rtf", nan),
    }


def summary_line(o: dict, cpu: float | None, model_mb: float, games: dict | None) -> str:
    def pct(x):
        return "n/a" if x is None or x != x else f"{100 * x:.1f}%"

    line = (f"speech: clean {pct(o['clean_accuracy'])}, mean 6-24 dB "
            f"{pct(o['noisy_mean_accuracy'])}, babble 6 dB {pct(o['babble6_accuracy'])}, "
            f"real digits {pct(o['real_clean_accuracy'])} clean / "
            f"{pct(o['real_noisy_mean_accuracy'])} noisy, silent errors max "
            f"{pct(o['silent_errors_max'])}"
            + (f" ({o['silent_errors_max_where']})" if o["silent_errors_max_where"] else "")
            + f", chatter accepted {pct(o['chatter_accepted'])}, latency p90 "
            + ("n/a" if o["latency_p90"] != o["latency_p90"] else f"{1000 * o['latency_p90']:.0f} ms")
            + ", CPU on silence " + ("n/a" if cpu is None else f"{100 * cpu:.2f}%")
            + f", model {model_mb:.2f} MB")
    if games:
        line += (f"; games refereed right: clean {games['clean']}/{games['total']}, "
                 f"babble 12 dB {games['babble12']}/{games['total']}")
    return line


def plot(summary: dict[str, dict[str, dict]], quick: bool, path: Path,
         log: Callable[[str], None]) -> bool:
    try:
        import matplotlib
    except ImportError:
        log("plot skipped: matplotlib is not installed (.venv/bin/pip install matplotlib)")
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    snrs = QUICK_SNRS if quick else SNRS
    clean_x = max(snrs) + 8
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for k, (name, conds) in enumerate(summary.items()):
        colour = f"C{k}"
        for noise, style in zip(NOISES, ("-o", "--s")):
            xs, ys = [clean_x], [100 * conds.get("clean", {}).get("accuracy", float("nan"))]
            for snr in snrs:
                xs.append(snr)
                ys.append(100 * conds.get(f"{noise}{snr}", {}).get("accuracy", float("nan")))
            ax.plot(xs, ys, style, color=colour, label=f"{name}, {noise}")
    ax.set_xticks([clean_x, *snrs], ["clean", *map(str, snrs)])
    ax.set_xlabel("SNR (dB)")
    ax.set_ylabel("calls understood and acted on (%)")
    ax.set_title("Held-out voices: accuracy vs noise")
    ax.set_ylim(0, 100)
    ax.invert_xaxis()
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


# --- CPU on silence, model size --------------------------------------------------------------

def silence_cpu(seconds: float = 60.0) -> dict:
    """CPU time per second of audio while a quiet room goes through the Listener (endpointer
    + engine) in 0.1 s chunks, as the microphone path feeds it. Run it in a process of its
    own with one thread (see measure_silence_cpu)."""
    from companion.listen.sources import CHUNK, Listener, make_engine

    engine = make_engine("bundled", None, PLAYERS, max_count=MAX_COUNT)
    rng = np.random.default_rng(SEED)
    from training.augment import coloured_noise

    n = int(seconds * RATE)
    room = coloured_noise(n, rng, 1.0) * 20 + rng.normal(0, FLOOR, n)  # about -60 dBFS
    room = np.clip(room, -32768, 32767).astype(np.int16)
    listener = Listener(engine)
    heard = 0
    began = time.process_time()
    for i in range(0, n, CHUNK):
        heard += len(listener.feed(room[i:i + CHUNK]))
    heard += len(listener.flush())
    spent = time.process_time() - began
    return {"cpu_fraction": spent / seconds, "audio_seconds": seconds, "cpu_seconds": spent,
            "utterances_heard": heard}


def measure_silence_cpu(seconds: float, log: Callable[[str], None]) -> dict | None:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "benchmarks.speech", "--silence-cpu",
                           str(seconds)], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=600)
    if proc.returncode != 0:
        log(f"CPU on silence: failed: {proc.stderr.strip()[-500:]}")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def model_megabytes() -> float:
    from companion.listen.network import MODEL_PATH
    from companion.listen.recogniser import CONFIDENCE_PATH

    return sum(p.stat().st_size for p in (MODEL_PATH, CONFIDENCE_PATH) if p.exists()) / 1e6


# --- the command -----------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="companion bench speech",
                                     description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--quick", action="store_true",
                        help="a small run: 4 voices, a few of each kind, one digit take, "
                             f"SNRs {QUICK_SNRS}")
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--out", type=Path, default=Path("bench-out"),
                        help="where the corpus cache, speech.json and speech.png go")
    parser.add_argument("--lofo", type=Path, metavar="DIR",
                        help="also score espeak/piper/kokoro voices with the networks "
                             "DIR/<family>.npz trained without that family")
    parser.add_argument("--real", type=Path, default=REAL_DIR, metavar="DIR",
                        help="the real recordings (default: ../shared/data/speech-real-dev)")
    parser.add_argument("--no-games", action="store_true", help="skip the scripted games")
    parser.add_argument("--silence-cpu", type=float, metavar="SECONDS", help=argparse.SUPPRESS)
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.silence_cpu:
        print(json.dumps(silence_cpu(args.silence_cpu)))
        return 0
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    args.workers = max(1, args.workers)
    from companion.listen.network import CallNetwork

    began = time.time()
    card = CallNetwork.load().card
    speaker = card.get("held_out_speaker")
    log(f"shipped network: held-out speaker {speaker!r}, left out {card.get('left_out')}, "
        f"trained by {card.get('command', '?')!r}")
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    # The festival voice is heard by a network that never trained on it: the shipped one
    # when it left festival out, else --lofo DIR/festival.npz.
    festival_net = None
    if "festival" not in card.get("left_out", []):
        festival_net = args.lofo / "festival.npz" if args.lofo else None
        if festival_net is None or not festival_net.exists():
            log("the shipped network trained on festival: give --lofo DIR with festival.npz, "
                "a network trained without it")
            return 2
        festival_net = festival_net.resolve()
    specs = [SetSpec("festival", "festival", str(festival_net) if festival_net else None, args.quick)]
    _, spare = real_items(speaker, args.quick, args.real) if speaker else ([], [])
    real_set = None
    if speaker and (args.real / "recordings").is_dir():
        real_set = f"real:{speaker}"
        specs.append(SetSpec(real_set, None, None, args.quick))
    else:
        log(f"real speech: skipped (no recordings of {speaker!r} under {args.real})")
    if args.lofo:
        for family in LOFO_FAMILIES:
            path = args.lofo / f"{family}.npz"
            if not path.exists():
                log(f"lofo: no {path}, {family} skipped")
                continue
            left_out = CallNetwork.load(path).card.get("left_out", [])
            if family not in left_out:
                log(f"lofo: warning: {path} says it left out {left_out}, not {family}")
            specs.append(SetSpec(f"lofo:{family}", family, str(path.resolve()), args.quick))

    noises = noise_tracks(out, args.quick, speaker or "", spare, args.workers, log)
    corpora = [build_set(s, out, noises, args.workers, log, args.real, speaker or "")
               for s in specs]
    rows = decode(corpora, args.workers, log)
    settings = referee_settings()
    summary = summarise(rows, settings)
    top = overall(rows, summary, "festival", real_set, settings)

    cpu = measure_silence_cpu(20.0 if args.quick else 60.0, log)
    games = None
    if not args.no_games:
        from benchmarks import games as game_bench

        games = game_bench.run_games(out, noises["babble"], voices_for("festival", False),
                                     args.workers, log, festival_net)
    model_mb = model_megabytes()

    print_table(summary)
    if games:
        for g in games["games"]:
            print(f"game {g['game']:10} {g['condition']:9} "
                  f"{'right' if g['passed'] else 'WRONG'}  {g['note']}")
    line = summary_line(top, cpu["cpu_fraction"] if cpu else None, model_mb, games)
    print(line)
    png = out / "speech.png"
    plotted = plot(summary, args.quick, png, log)
    report = {"settings": {"quick": args.quick, "seed": SEED, "sets": [asdict(s) for s in specs],
                           "conditions": [c[0] for c in conditions(args.quick)],
                           "reject_below": settings.reject_below,
                           "confirm_below": settings.confirm_below, "network": card},
              "sets": summary, "overall": top, "cpu_on_silence": cpu, "model_mb": model_mb,
              "games": games, "summary": line, "seconds": time.time() - began}
    (out / "speech.json").write_text(json.dumps(report, indent=1))
    (out / "speech-rows.json").write_text(json.dumps(rows))
    log(f"wrote {out / 'speech.json'}, {out / 'speech-rows.json'}"
        + (f", {png}" if plotted else "") + f" ({time.time() - began:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
