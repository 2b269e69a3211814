"""`companion bench speech`: how well spoken calls are understood, in how much noise.

Builds (and caches) a corpus of synthetic speech with espeak-ng: several voices and speaking
rates, bids over every face with counts from 1 to 25, challenges, bare numbers, commands and
a good share of table chatter that must NOT become a call. Each utterance is mixed with
babble (overlapping synthetic talkers) and pink noise at several SNRs, then decoded through
exactly the path WAV files and the microphone use. Reports intent accuracy, silent errors
(a wrong call accepted with confidence), chatter false accepts, real-time factor and the
latency from end of speech to a known call.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from companion.listen.audio import SAMPLE_RATE, read_wav, write_wav
from companion.listen.engine import ENGINE_CONFIRM
from companion.calls import parse_call
from companion.referee import Hearing, RefereeSettings

PLAYERS = ("Ana", "Ben", "Cleo")
# espeak-ng's Klatt variants: its default formant voices are so unlike natural speech that
# the bundled acoustic model mishears about half of them (measured: ~55% on clean calls).
VOICES = ("en-us+klatt", "en+klatt2", "en-gb-x-rp+klatt3", "en+klatt4", "en-us+klatt5",
          "en-gb-scotland+klatt2", "en-029+klatt")
# The confidence model (companion/listen/sphinx_confidence.json) is fitted on a corpus of
# its own: other voice and accent pairs, other counts, other chatter and other babble, so
# every benchmark voice is held out of the fit.
TRAIN_VOICES = ("en-gb-x-gbclan+klatt", "en-us-nyc+klatt2", "en-gb-x-gbcwmd+klatt3",
                "en+klatt5", "en-us+klatt4", "en-gb-scotland+klatt", "en-029+klatt3",
                "en-gb-x-rp+klatt")
RATES = (140, 165, 190)
SNRS = (24, 18, 12, 6)
NOISES = ("babble", "pink")
LEAD_SILENCE = 0.4  # seconds of room before and after each utterance
TAIL_SILENCE = 0.6

FACE_SAY = {1: ["aces", "pacos", "ones"], 2: ["twos"], 3: ["threes"], 4: ["fours"],
            5: ["fives"], 6: ["sixes"]}
FACE_SAY_ONE = {1: ["ace", "paco"], 2: ["two"], 3: ["three"], 4: ["four"], 5: ["five"],
                6: ["six"]}

# Table talk that is not a call. Some contain numbers and face words on purpose.
CHATTER = """\
who wants another drink
pass me the chips please
I think it is my turn now
the pizza is getting cold
she rolled three fives last time
six of us played last night
my phone is ringing again
did you see the game yesterday
I have no idea what you have under there
you are bluffing I can tell
stop looking at my cup
this is the best game ever
can we open the window
I need to go to the bathroom
the dog wants to go outside
how long have we been playing
I lost two dice already
that was a lucky guess
somebody turn the music down
we should order some food
are you even paying attention
I forgot my glasses at home
you always do that
it is getting late
let me think about it for a minute
nobody believes me anymore
my dice are cursed tonight
your cup is leaking
the cat knocked over the lamp
I will get you next round
that is what she said
he never tells the truth
do you have any more crackers
my brother taught me this game
we played this on the boat
I love this music
the kids are asleep upstairs
what time is the train tomorrow
the wine is really good
I should have stayed at home
this chair is uncomfortable
you are all ganging up on me
no more cheese for you
five people came to the party
there were four of us at dinner
I bought two new shirts today
seven days without rain
the bus was twenty minutes late
my sister has three kids
it costs ten dollars
we won six games in a row
fifteen years ago I lived in Spain
I drove for two hours
one more glass and then I stop
call me when you get home
the weather is terrible outside
he owes me money
let us take a break
I am hungry again
she laughed so hard
nice shirt by the way
shuffle the cups properly
careful with the table
keep your voice down
where did I put my keys
the movie starts at nine
I can not believe it
he is always so lucky
that was close
look at the time
the neighbours are complaining
my hands are cold
I need a coffee
the last round was crazy
you go first next time
I am not telling you
please stop singing
the lights are flickering
does anyone want tea
it smells like burnt toast
my grandmother played this game
the dice are too loud
I have a meeting tomorrow
tell me a story
we should play cards later
how was your holiday
the kitchen is a mess
I think he is lying
you look tired
sorry I was not listening
is it raining now
the children are fighting
that is a nice watch
I am going to win this time
turn the heating up
do not spill your drink
we need more chairs
this is taking forever
my feet hurt
he counts every dice twice
wait a second I dropped one
that joke was terrible
where is the bottle opener
"""

# Chatter for the confidence fit only; none of these sentences is in CHATTER.
TRAIN_CHATTER = """\
who left the door open
I am going to get some ice
the music is too loud in here
are you sure about that
my uncle cheats at every game
put the snacks on the other table
we have to leave by eleven
have you seen my jacket
the soup needs more salt
I was going to say that
look at his face he is bluffing
can somebody help me with this
it is colder than yesterday
they moved to a new flat
two of my friends are coming later
I ran five miles this morning
there are three bottles left
my train leaves at six
we waited forty minutes for the taxi
eight people signed up
she has four brothers
he bought a car for twelve thousand
the shop closes at seven
I slept nine hours last night
your turn to pick the music
who is winning right now
stop laughing it is not funny
this table is too small
do not look at my dice
I need to charge my phone
the baby is crying again
we should do this every week
my cousin never loses
pour me a little more
that is the third time tonight
I knew you would say that
whose glass is this
the oven timer went off
next time we play at my place
I have been lucky all evening
can you pass the salt
you cheated and you know it
the rules say something else
how many rounds have we played
my arm is getting tired
he keeps changing his mind
the garden looks lovely
is there any more bread
I could play this all night
the lamp is too bright
"""


@dataclass(frozen=True)
class Item:
    key: str
    say: str  # what espeak is asked to say
    truth: dict | None  # call.to_json() of the intended call; None for chatter
    voice: str
    rate: int


@dataclass(frozen=True)
class CorpusSpec:
    """Which utterances a corpus holds and where it is kept (a folder under --out)."""

    name: str
    voices: tuple[str, ...]
    chatter: str
    seeds: tuple[int, ...]  # one round of calls per seed
    quick: bool = False  # a small subset, two SNRs

    @property
    def babble_file(self) -> str:
        return "babble.wav" if self.voices == VOICES else f"babble-{self.name}.wav"


BENCH = CorpusSpec("full", VOICES, CHATTER, (7,))
QUICK = CorpusSpec("quick", VOICES, CHATTER, (7,), quick=True)
TRAIN = CorpusSpec("train", TRAIN_VOICES, TRAIN_CHATTER, (11, 12, 13))


def build_items(spec: CorpusSpec = BENCH) -> list[Item]:
    if len(spec.seeds) > 1:  # several rounds, each with its own counts and voices
        items: list[Item] = []
        for k, seed in enumerate(spec.seeds):
            part = build_items(replace(spec, seeds=(seed,)))
            items += [Item(f"r{k}{i.key}", i.say, i.truth, i.voice, i.rate) for i in part]
        return items
    quick = spec.quick
    rng = random.Random(spec.seeds[0])
    from companion.rules.bids import number_words

    calls: list[tuple[str, dict]] = []
    for face in range(1, 7):
        counts = sorted(rng.sample(range(1, 26), 14 if not quick else 3))
        for count in counts:
            word = rng.choice(FACE_SAY_ONE[face] if count == 1 else FACE_SAY[face])
            lead = rng.choice(["", "", "", "I bid ", "um "])
            spoken = number_words(count) if count > 1 or rng.random() < 0.5 else "a"
            if spoken == "a" and face == 1:
                spoken = "an"
            calls.append((f"{lead}{spoken} {word}", {"kind": "bid", "count": count, "face": face}))
    for phrase in ["dudo", "dudo", "dudo", "calza", "calza", "calzo", "palifico", "palifico",
                   "Ben dudo", "Ana calza", "dudo Cleo", "I doubt it"]:
        kind = ("dudo" if "dudo" in phrase or "doubt" in phrase else
                "calza" if "calz" in phrase else "palifico")
        calls.append((phrase, {"kind": kind}))
    for n in rng.sample(range(0, 31), 14 if not quick else 4):
        if n == 0:
            continue
        calls.append((number_words(n), {"kind": "number", "value": n}))
    for phrase, name in [("undo", "undo"), ("say again", "repeat"), ("what's the bid", "status"),
                         ("repeat", "repeat"), ("yes", "yes"), ("no", "no")]:
        calls.append((phrase, {"kind": "command", "name": name}))
    chatter = [line for line in spec.chatter.splitlines() if line.strip()]
    if quick:
        calls = rng.sample(calls, 30)
        chatter = rng.sample(chatter, 15)
    items, combos = [], [(v, r) for v in spec.voices for r in RATES]
    rng.shuffle(combos)
    everything = [(say, truth) for say, truth in calls] + [(say, None) for say in chatter]
    for i, (say, truth) in enumerate(everything):
        voice, rate = combos[i % len(combos)]
        items.append(Item(f"u{i:04d}", _espeak_text(say), truth, voice, rate))
    return items


def _espeak_text(say: str) -> str:
    # English voices read Spanish words oddly; spell them the way players at an English
    # table say them.
    return (say.replace("dudo", "doodoe").replace("calza", "kalsa").replace("calzo", "kalso")
            .replace("palifico", "[[pal'i:fi:koU]]").replace("pacos", "pahcoes")
            .replace("paco", "pahco"))


# --- synthesis -------------------------------------------------------------------------------

def synthesise(text: str, voice: str, rate: int, workdir: Path) -> np.ndarray:
    """espeak-ng speech resampled to 16 kHz mono 16-bit with sox."""
    raw = workdir / f"raw-{os.getpid()}.wav"
    out = workdir / f"res-{os.getpid()}.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(rate), "-w", str(raw), text],
                   check=True, capture_output=True)
    subprocess.run(["sox", str(raw), "-r", str(SAMPLE_RATE), "-c", "1", "-b", "16", str(out)],
                   check=True, capture_output=True)
    return read_wav(out)


def _pad(speech: np.ndarray) -> np.ndarray:
    return np.concatenate([np.zeros(int(LEAD_SILENCE * SAMPLE_RATE)), speech.astype(np.float64),
                           np.zeros(int(TAIL_SILENCE * SAMPLE_RATE))])


def pink_noise(n: int, rng: np.random.Generator) -> np.ndarray:
    white = rng.normal(size=n)
    spectrum = np.fft.rfft(white)
    f = np.arange(len(spectrum), dtype=np.float64)
    f[0] = 1.0
    pink = np.fft.irfft(spectrum / np.sqrt(f), n)
    return pink / (np.std(pink) + 1e-9)


def make_babble(workdir: Path, seconds: float = 60.0, talkers: int = 6,
                spec: CorpusSpec = BENCH) -> np.ndarray:
    """Several overlapping synthetic talkers reading chatter: the noise of a busy table."""
    rng = random.Random(99 if spec.voices == VOICES else 199)
    lines = [line for line in spec.chatter.splitlines() if line.strip()]
    n = int(seconds * SAMPLE_RATE)
    mix = np.zeros(n)
    for t in range(talkers):
        voice = spec.voices[t % len(spec.voices)]
        text = ". ".join(rng.sample(lines, 40))
        track = synthesise(text, voice, 175, workdir).astype(np.float64)
        track = np.resize(track, n)  # loops the talker if short
        mix += np.roll(track, rng.randrange(n)) / (np.std(track) + 1e-9)
    return mix / (np.std(mix) + 1e-9)


def mix(speech: np.ndarray, noise: np.ndarray | None, snr_db: float | None,
        rng: np.random.Generator) -> np.ndarray:
    padded = _pad(speech)
    floor = rng.normal(0, 3.0, len(padded))  # a real room is never digitally silent
    if noise is None or snr_db is None:
        return np.clip(padded + floor, -32768, 32767).astype(np.int16)
    active = speech.astype(np.float64)
    active = active[np.abs(active) > 0.02 * np.max(np.abs(active))]
    p_speech = float(np.mean(active ** 2))
    start = int(rng.integers(0, max(1, len(noise) - len(padded))))
    piece = np.resize(noise[start:start + len(padded)], len(padded)).astype(np.float64)
    piece /= np.std(piece) + 1e-9
    gain = np.sqrt(p_speech / (10 ** (snr_db / 10)))
    out = padded + floor + gain * piece
    peak = np.max(np.abs(out))
    if peak > 32000:  # keep it in range the way an automatic gain control would
        out *= 32000 / peak
    return np.clip(out, -32768, 32767).astype(np.int16)


def conditions(quick: bool) -> list[tuple[str, str | None, float | None]]:
    out = [("clean", None, None)]
    snrs = (18, 6) if quick else SNRS
    for noise in NOISES:
        out += [(f"{noise}{snr}", noise, float(snr)) for snr in snrs]
    return out


def _synth_job(args: tuple[Item, str]) -> tuple[str, int]:
    item, folder = args
    path = Path(folder) / "speech" / f"{item.key}.wav"
    if not path.exists():
        with tempfile.TemporaryDirectory() as tmp:
            write_wav(path, synthesise(item.say, item.voice, item.rate, Path(tmp)))
    return item.key, 0


def build_corpus(out: Path, spec: CorpusSpec, workers: int = 2, log=print
                 ) -> tuple[list[Item], Path]:
    """Create (or reuse) the corpus: a manifest plus one WAV per item and condition."""
    quick = spec.quick
    items = build_items(spec)
    folder = out / spec.name
    (folder / "speech").mkdir(parents=True, exist_ok=True)
    t = time.time()
    with multiprocessing.Pool(workers) as pool:
        pool.map(_synth_job, [(item, str(folder)) for item in items])
    babble_path = out / spec.babble_file
    if not babble_path.exists():
        with tempfile.TemporaryDirectory() as tmp:
            b = make_babble(Path(tmp), spec=spec)
        write_wav(babble_path, b * 3000)
    babble = read_wav(babble_path).astype(np.float64)
    pink = pink_noise(60 * SAMPLE_RATE, np.random.default_rng(5))
    noises = {"babble": babble, "pink": pink}
    for name, noise, snr in conditions(quick):
        cdir = folder / name
        cdir.mkdir(exist_ok=True)
        for k, item in enumerate(items):
            path = cdir / f"{item.key}.wav"
            if path.exists():
                continue
            rng = np.random.default_rng(hash((name, k)) & 0xFFFFFFFF)
            speech = read_wav(folder / "speech" / f"{item.key}.wav")
            write_wav(path, mix(speech, noises.get(noise or ""), snr, rng))
    manifest = [{"key": i.key, "say": i.say, "truth": i.truth, "voice": i.voice, "rate": i.rate}
                for i in items]
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1))
    log(f"corpus: {len(items)} utterances x {len(conditions(quick))} conditions in {folder} "
        f"({time.time() - t:.0f} s)")
    return items, folder


# --- evaluation ------------------------------------------------------------------------------

def expect_for(truth: dict | None, key: str, in_game: bool = True):
    """The moment of the game an utterance is heard at, as the referee would tell the
    engine: a count (or a player's dice) after a challenge, every other call while bidding.
    Chatter is heard at both, so half of it (by its key) is decoded at each."""
    from companion.sources import Expect

    if not in_game:
        return Expect.ANY
    if truth is None:
        return Expect.COUNT if int(key[-1]) % 2 else Expect.CALLS
    return Expect.COUNT if truth["kind"] in ("number", "hand") else Expect.CALLS


def _decode_job(args: tuple[str, str, list[tuple[str, str, dict | None]], bool, bool]) -> list[dict]:
    """Decode a share of the corpus in a worker process (one engine per process)."""
    engine_name, folder, jobs, measure_only, in_game = args
    from companion.calls import parse_call_or_none
    from companion.listen.endpoint import split
    from companion.listen.sources import decode_span, make_engine

    if measure_only:  # rows to fit a confidence on: the shipped one may not fit them
        from companion.listen.sphinx import SphinxEngine, SphinxSettings

        engine = SphinxEngine(PLAYERS, SphinxSettings(measure_only=True))
    else:
        engine = make_engine(engine_name, None, PLAYERS)
    rows = []
    for condition, key, truth in jobs:
        engine.expect(expect_for(truth, key, in_game))
        samples = read_wav(Path(folder) / condition / f"{key}.wav")
        result = decode_span(engine, samples)  # the path WavSource and the mic use
        call = parse_call_or_none(result.text, PLAYERS)
        # Where the voice really stops: espeak pads its own output with some silence.
        clean = np.abs(read_wav(Path(folder) / "speech" / f"{key}.wav").astype(np.float64))
        voiced = np.nonzero(clean > 0.02 * clean.max())[0]
        speech_end = int(LEAD_SILENCE * SAMPLE_RATE) + int(voiced[-1] if len(voiced) else len(clean))
        segments = split(samples)
        ends = [s.detected_at for s in segments if s.detected_at >= speech_end]
        endpoint_delay = (ends[0] - speech_end) / SAMPLE_RATE if ends else None
        rows.append({"condition": condition, "key": key, "text": result.text,
                     "call": call.to_json() if call else None,
                     "confidence": result.confidence, "audio": result.audio_seconds,
                     "cpu": result.decode_seconds, "finish": result.finish_seconds,
                     "endpoint_delay": endpoint_delay,
                     "details": {k: v for k, v in result.details.items()
                                 if isinstance(v, (int, float))}})
    return rows


def evaluate(items: list[Item], folder: Path, engine: str, quick: bool, workers: int,
             measure_only: bool = False, in_game: bool = True) -> list[dict]:
    jobs = [(name, item.key, item.truth) for name, _, _ in conditions(quick) for item in items]
    shares = [jobs[i::workers] for i in range(workers)]
    with multiprocessing.Pool(workers) as pool:
        parts = pool.map(_decode_job, [(engine, str(folder), share, measure_only, in_game)
                                       for share in shares])
    truth = {item.key: item.truth for item in items}
    rows = [row for part in parts for row in part]
    for row in rows:
        row["truth"] = truth[row["key"]]
    return rows


# The referee's own rule (RefereeSettings.hearing) decides, with the benchmark's threshold as
# its "say again" line: calls are applied at once from CONFIRM, after a "yes" from the
# threshold, a dudo or calza is asked about from a lower line, and anything below the
# ignore line is passed over in silence.
CONFIRM = ENGINE_CONFIRM


def hearing(row: dict, threshold: float) -> Hearing:
    settings = replace(RefereeSettings(), reject_below=threshold, confirm_below=CONFIRM)  # as `play` sets them
    return settings.hearing(parse_call(row["text"], PLAYERS), row["confidence"])


def acted_on(row: dict, threshold: float) -> bool:
    """Would the referee act on this heard call (at once, or after a "yes")?"""
    return row["call"] is not None and hearing(row, threshold) in (Hearing.ASK, Hearing.APPLY)


def summarise(rows: list[dict], threshold: float) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for condition in dict.fromkeys(r["condition"] for r in rows):
        mine = [r for r in rows if r["condition"] == condition]
        calls = [r for r in mine if r["truth"] is not None]
        chatter = [r for r in mine if r["truth"] is None]
        sure = lambda r: acted_on(r, threshold)  # noqa: E731
        latencies = [r["endpoint_delay"] + r["finish"] for r in calls
                     if r["endpoint_delay"] is not None]
        out[condition] = {
            "n_calls": len(calls), "n_chatter": len(chatter),
            "accuracy": sum(sure(r) and r["call"] == r["truth"] for r in calls) / max(1, len(calls)),
            "raw_accuracy": sum(r["call"] == r["truth"] for r in calls) / max(1, len(calls)),
            "silent_errors": sum(sure(r) and r["call"] != r["truth"] for r in calls) / max(1, len(calls)),
            # Wrong calls applied without even a "Did you say ...?" first.
            "silent_unconfirmed": sum(r["call"] is not None and hearing(r, threshold) is Hearing.APPLY
                                      and r["call"] != r["truth"] for r in calls) / max(1, len(calls)),
            "say_again": sum(r["call"] is not None and not sure(r) for r in calls) / max(1, len(calls)),
            "chatter_accepted": sum(sure(r) for r in chatter) / max(1, len(chatter)),
            # Chatter the referee would interrupt with "say again" rather than pass over.
            "chatter_answered": sum(r["call"] is not None and hearing(r, threshold) is Hearing.SAY_AGAIN
                                    for r in chatter) / max(1, len(chatter)),
            "rtf": sum(r["cpu"] for r in mine) / max(1e-9, sum(r["audio"] for r in mine)),
            "latency_median": float(np.median(latencies)) if latencies else float("nan"),
            "latency_p90": float(np.percentile(latencies, 90)) if latencies else float("nan"),
            "endpoint_missed": 1 - len(latencies) / max(1, len(calls)),
        }
    return out


def print_table(engine: str, summary: dict[str, dict], out=sys.stdout) -> None:
    head = (f"{'engine':13} {'condition':10} {'acc':>6} {'raw':>6} {'silent':>7} {'sil0.7':>7} {'again':>6} "
            f"{'chatter':>8} {'chat?':>6} {'RTF':>5} {'lat50':>6} {'lat90':>6} {'EPmiss':>6}")
    print(head, file=out)
    for name, s in summary.items():
        print(f"{engine:13} {name:10} {100 * s['accuracy']:5.1f}% {100 * s['raw_accuracy']:5.1f}% "
              f"{100 * s['silent_errors']:6.1f}% {100 * s['silent_unconfirmed']:6.1f}% "
              f"{100 * s['say_again']:5.1f}% "
              f"{100 * s['chatter_accepted']:7.1f}% {100 * s['chatter_answered']:5.1f}% "
              f"{s['rtf']:5.2f} "
              f"{1000 * s['latency_median']:5.0f}ms {1000 * s['latency_p90']:5.0f}ms "
              f"{100 * s['endpoint_missed']:5.1f}%", file=out)


def overall(rows: list[dict], summary: dict[str, dict], threshold: float) -> dict:
    noisy = [s for name, s in summary.items() if name != "clean"]
    every = summarise([dict(r, condition="all") for r in rows], threshold)["all"]
    return {
        "clean_accuracy": summary["clean"]["accuracy"],
        "noisy_mean_accuracy": float(np.mean([s["accuracy"] for s in noisy])) if noisy else float("nan"),
        "silent_errors": every["silent_errors"],
        "silent_unconfirmed": every["silent_unconfirmed"],
        "chatter_accepted": every["chatter_accepted"],
        "rtf": every["rtf"],
        "latency_median": every["latency_median"],
        "latency_p90": every["latency_p90"],
    }


def fit_confidence(rows: list[dict], silent: float = 0.005, silent_confirm: float = 0.0015,
                   chatter: float = 0.008, seed: int = 0):
    """Fit the engine's confidence on decoded rows of the training corpus: a small network
    over confidence_features for "the call heard is the call said", then placed so that on
    those rows 0.5 keeps silent errors under `silent` (the product's target) and chatter
    under `chatter`, and 0.7 keeps silent errors under `silent_confirm`. Returns a
    ConfidenceModel."""
    from companion.listen.confidence import fit, place
    from companion.listen.sphinx import FEATURES, confidence_features

    heard = [r for r in rows if r["call"] is not None]
    x = np.array([confidence_features(r["details"]) for r in heard])
    y = np.array([r["call"] == r["truth"] for r in heard], dtype=np.float64)
    model = fit(x, y, FEATURES, seed=seed)
    logit = model.logits(x)
    n_calls = sum(r["truth"] is not None for r in rows)
    n_chat = sum(r["truth"] is None for r in rows)
    is_call = np.array([r["truth"] is not None for r in heard])
    wrong = np.sort(logit[(y == 0) & is_call])[::-1]
    chat = np.sort(logit[~is_call])[::-1]

    def line(err: float, chat_err: float) -> float:  # the lowest logit within both limits
        k_wrong, k_chat = int(err * n_calls), int(chat_err * n_chat)
        t_wrong = wrong[k_wrong] if k_wrong < len(wrong) else -np.inf
        t_chat = chat[k_chat] if k_chat < len(chat) else -np.inf
        return float(max(t_wrong, t_chat)) + 1e-6

    return place(model, line(silent, chatter), line(silent_confirm, chatter))


def rescore(rows: list[dict], model) -> list[dict]:
    """The rows as they would have come out with another confidence model (no decoding)."""
    from companion.listen.sphinx import confidence_features

    return [dict(r, confidence=model.confidence(confidence_features(r["details"])))
            if r["call"] is not None else r for r in rows]


def plot(summary_by_engine: dict[str, dict[str, dict]], quick: bool, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    snrs = (18, 6) if quick else SNRS
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for engine, summary in summary_by_engine.items():
        for noise, style in zip(NOISES, ("-o", "--s")):
            xs = [40] + list(snrs)
            ys = [100 * summary["clean"]["accuracy"]] + [
                100 * summary[f"{noise}{snr}"]["accuracy"] for snr in snrs]
            ax.plot(xs, ys, style, label=f"{engine}, {noise}")
    ax.set_xlabel("SNR (dB); 40 = clean")
    ax.set_ylabel("intent accuracy (%)")
    ax.set_title("Spoken calls understood vs noise")
    ax.axhline(95, color="grey", lw=0.5)
    ax.invert_xaxis()
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _fit_and_show(args) -> int:
    """Build and decode the training corpus (both cached), fit the confidence on it, write
    the model, and show what it would have scored on the last benchmark run."""
    from companion.listen.sphinx import CONFIDENCE_MODEL

    log = lambda line: print(line, file=sys.stderr)  # noqa: E731
    rows_path = args.out / "rows-pocketsphinx-train.json"
    # Rows decoded by another grammar or other decoder settings would fit the confidence to
    # measurements the engine no longer makes: they are reused only if nothing changed.
    decoded_by = _decoder_signature(args.context == "game")
    cached = json.loads(rows_path.read_text()) if rows_path.exists() else {}
    if isinstance(cached, dict) and cached.get("decoded_by") == decoded_by:
        rows = cached["rows"]
        log(f"training rows: {rows_path} (decoded by the same grammar and settings)")
    else:
        items, folder = build_corpus(args.out, TRAIN, args.workers, log)
        t = time.time()
        rows = evaluate(items, folder, "pocketsphinx", False, args.workers, measure_only=True,
                        in_game=args.context == "game")
        log(f"training corpus: decoded {len(rows)} files in {time.time() - t:.0f} s")
        rows_path.write_text(json.dumps({"decoded_by": decoded_by, "rows": rows}))
    model = fit_confidence(rows)
    out = args.model_out or CONFIDENCE_MODEL
    out.write_text(model.to_json() + "\n")
    print(f"confidence model written to {out} (fitted on {len(rows)} training files)")
    parts = [("training corpus (fitted on)", rows)]
    bench_path = args.out / f"rows-pocketsphinx{_suffix(False, args.context) or '-full'}.json"
    if bench_path.exists():
        parts.append(("benchmark, last run, rescored", json.loads(bench_path.read_text())))
    for name, part in parts:
        part = rescore(part, model)
        o = overall(part, summarise(part, args.threshold), args.threshold)
        print(f"  {name}: clean {100 * o['clean_accuracy']:.1f}%, mean 6-24 dB "
              f"{100 * o['noisy_mean_accuracy']:.1f}%, silent errors {100 * o['silent_errors']:.2f}% "
              f"({100 * o['silent_unconfirmed']:.2f}% at >= {CONFIRM}), chatter accepted "
              f"{100 * o['chatter_accepted']:.1f}%")
    return 0


def _decoder_signature(in_game: bool) -> str:
    """What decoded a set of rows: the training corpus, the bundled engine (its version,
    grammars and settings) and the measurements taken."""
    import hashlib
    from importlib.metadata import version

    from companion.listen.sphinx import FEATURES, SphinxSettings
    from companion.listen.vocabulary import jsgf
    from companion.sources import Expect

    settings = SphinxSettings()
    grammars = [jsgf(PLAYERS, settings.leads, settings.hands, what) for what in Expect]
    text = repr((TRAIN, version("pocketsphinx"), settings.options, settings.leads,
                 settings.hands, settings.nbest, in_game, grammars, FEATURES))
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def _suffix(quick: bool, context: str) -> str:
    """How one run's files are told from another's: "-quick", "-nocontext", both or none."""
    return ("-quick" if quick else "") + ("" if context == "game" else "-nocontext")


def main(argv: list[str] | None = None) -> int:
    from companion.listen.engine import ENGINE_THRESHOLD

    parser = argparse.ArgumentParser(prog="companion bench speech", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("bench-out/speech"))
    parser.add_argument("--quick", action="store_true", help="a small subset, two SNRs")
    parser.add_argument("--engines", nargs="+", default=["pocketsphinx"],
                        choices=("pocketsphinx", "vosk"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--context", choices=("game", "none"), default="game",
                        help="game: each utterance is decoded listening for what can be said "
                             "at its moment of the game (a count after a challenge, calls "
                             "otherwise), as `play` does; none: one grammar for every call, "
                             "as `hear` does")
    parser.add_argument("--threshold", type=float, default=ENGINE_THRESHOLD,
                        help="confidence below which the referee says 'say again'")
    parser.add_argument("--fit-confidence", action="store_true",
                        help="fit the pocketsphinx confidence on its own training corpus "
                             "(other voices, sentences and babble than the benchmark's), "
                             "write it to --model-out and show what it would have scored "
                             "on the last benchmark run")
    parser.add_argument("--model-out", type=Path, default=None,
                        help="where --fit-confidence writes the model (default: the one "
                             "shipped in companion/listen/)")
    args = parser.parse_args(argv)
    if args.fit_confidence:
        return _fit_and_show(args)
    for tool in ("espeak-ng", "sox"):
        if shutil.which(tool) is None:
            print(f"error: {tool} is needed to build the corpus (apt-get install {tool})",
                  file=sys.stderr)
            return 2
    log = lambda line: print(line, file=sys.stderr)  # noqa: E731
    items, folder = build_corpus(args.out, QUICK if args.quick else BENCH, args.workers, log)
    summaries, report = {}, {}
    suffix = _suffix(args.quick, args.context)
    for engine in args.engines:
        if engine == "vosk":
            from companion.listen.vosk_engine import find_model

            if find_model() is None:
                log("vosk: skipped, no model under models/ (companion models download)")
                continue
        t = time.time()
        rows = evaluate(items, folder, engine, args.quick, args.workers,
                        in_game=args.context == "game")
        log(f"{engine}: decoded {len(rows)} files in {time.time() - t:.0f} s")
        summaries[engine] = summarise(rows, args.threshold)
        report[engine] = {"conditions": summaries[engine],
                          "overall": overall(rows, summaries[engine], args.threshold)}
        (args.out / f"rows-{engine}{suffix or '-full'}.json").write_text(json.dumps(rows))
    if not summaries:
        print("error: no engine could run", file=sys.stderr)
        return 2
    for engine, summary in summaries.items():
        print_table(engine, summary)
    png = args.out / f"accuracy-vs-snr{suffix}.png"
    plot(summaries, args.quick, png)
    (args.out / f"report{suffix}.json").write_text(json.dumps(report, indent=1))
    for engine, r in report.items():
        o = r["overall"]
        print(f"{engine}: clean {100 * o['clean_accuracy']:.1f}%, mean 6-24 dB "
              f"{100 * o['noisy_mean_accuracy']:.1f}%, silent errors {100 * o['silent_errors']:.2f}% "
              f"({100 * o['silent_unconfirmed']:.2f}% at >= {CONFIRM}), "
              f"chatter accepted {100 * o['chatter_accepted']:.1f}%, RTF {o['rtf']:.2f}, "
              f"latency median {1000 * o['latency_median']:.0f} ms / p90 "
              f"{1000 * o['latency_p90']:.0f} ms (threshold {args.threshold}); plot: {png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
