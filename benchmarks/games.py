"""Whole scripted games, typed and then spoken, through the real `companion play`.

Each game is typed first (`companion play --players Ana Ben Cleo --input text --mute
--journal X`), which gives the journal a perfect hearing would write. Then a held-out
festival voice plays it like a person at the table, clean and in 12 dB babble: the
benchmark drives `companion play ... --input wav - --learn-names --mute --journal Y` with
the bundled engine, hands it the recording of one line at a time, reads what the referee
says up to its `listening>` prompt, and reacts as a player would. First each player says
their name as the referee asks ("Ana calza", "Ana one two three"), then the game's lines:

- "Sorry, say again?" (or silence: the call was passed over as chatter; or a reply that
  takes nothing, as "Who calls calza?" or a refused bid): the same words again, in a fresh take (each line is recorded TAKES times, the voice's speed and pitch
  varied a little), so a repeat adds nothing the typed game lacks;
- "Did you say X?": "yes" when X is the line's call (both parsed by `parse_call`), else
  "no" and, once the referee has dropped it ("If you called, say it again"), the line again;
- after TRIES tries of a line the player gives up (and would type it): the game fails.

A game is refereed right only when Y's events equal X's. Each report line says how many
repeats and questions the game cost.

Long: the games, their recordings, the player who reacts to the referee and the pipes to
`companion play` are kept together, so what a game needed said is read in one place.

    python -m benchmarks.games [--out bench-out] [--workers 2] [--model NETWORK.npz] [--no-learn-names]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Callable, Literal, Sequence

import numpy as np

from companion.demo import ANSWERS, TRIES, Cost
from companion.demo import say_line as player_says
from companion.listen.sources import PROMPT  # what `play --input wav -` waits after
from companion.sources import NAME_PHRASES

ROOT = Path(__file__).resolve().parents[1]
PLAYERS = ("Ana", "Ben", "Cleo")
SEED = 99
BABBLE_SNR = 12.0
TAKES = 3  # recordings of every line, the first in the voice's own manner
NAME_TAKES = TAKES  # the takes of a name said before the game are numbered from here
TAKE_STRETCH = 0.08  # a fresh take speaks up to 8 % faster or slower ...
TAKE_F0 = 10  # ... and up to 10 Hz higher or lower
GAME_TIMEOUT_S = 900

# Four short games (Ana opens; asmodee rules), each with bids, a dudo and its spoken count,
# a calza and a "take it back". Every line is accepted when typed.
GAMES: dict[str, str] = {
    "fives": """\
two fives
three fives
take it back
three fives
four fives
dudo
three
# Cleo lost a die and opens round two
two threes
three threes
Cleo calza
three
""",
    "pacos": """\
three sixes
four sixes
five sixes
three pacos
seven twos
status
eight twos
dudo
nine
# Ana lost a die and opens round two
four fours
take it back
four threes
five threes
Ana calza
four
# Ana lost another and opens round three
two sixes
three fours
dudo
two
""",
    "hands": """\
one six
two sixes
three twos
dudo
Ana six six one two three
Ben four four four two six
Cleo five five two one one
# Ana lost a die and opens round two
three fours
take it back
two fours
four fours
Cleo calza
five
""",
    "undo": """\
two fours
two pacos
five threes
repeat
six threes
Ben calza
take it back
seven threes
dudo
four
# Ben lost a die and opens round two
a five
three fives
Ana calza
three
""",
}

# Journal fields that may differ between two faithful runs (the journal keeps no clock today).
VOLATILE = frozenset({"time", "timestamp", "at", "wall_time"})


def script_lines(script: str) -> list[str]:
    return [line.strip() for line in script.splitlines()
            if line.strip() and not line.strip().startswith("#")]


# What the players say before the game when the referee learns their names, in its order.
NAME_LINES = tuple(f"{player} {phrase}" for player in PLAYERS for phrase, _ in NAME_PHRASES)


def spoken_texts(script: str) -> list[str]:
    """Everything the voice may have to say in a game: its lines, the players' names before
    it, and the two answers."""
    return sorted(set(script_lines(script)) | set(NAME_LINES) | set(ANSWERS))


def journal_events(path: Path) -> list[dict]:
    events = []
    for line in Path(path).read_text().splitlines():
        if line.strip():
            events.append({k: v for k, v in json.loads(line).items() if k not in VOLATILE})
    return events


def compare(typed: list[dict], heard: list[dict]) -> tuple[bool, str]:
    """Same events? If not, where the spoken game first went its own way."""
    if typed == heard:
        return True, f"{len(typed)} events as typed"
    i = next((k for k, (a, b) in enumerate(zip(typed, heard)) if a != b), min(len(typed), len(heard)))
    show = lambda e: json.dumps(e, separators=(",", ":"))[:90] if e is not None else "nothing"  # noqa: E731
    return False, (f"event {i + 1}: typed {show(typed[i] if i < len(typed) else None)}, "
                   f"heard {show(heard[i] if i < len(heard) else None)}")


# --- the player ------------------------------------------------------------------------------

def say_line(line: str, say: Callable[[str, int], str | None], cost: Cost
             ) -> Literal["taken", "ended", "gave up"]:
    """Say one script line until the referee takes it, as a player at the table would (the
    demo's player, `companion.demo.say_line`). `say(text, take)` says a take of `text` and
    gives back what the referee said before it listened again (None: it stopped listening,
    the game is over or broke)."""
    said = player_says(line, PLAYERS, cost, TRIES)
    try:
        words, take = next(said)
        while True:
            words, take = said.send(say(words, take))
    except StopIteration as done:
        return done.value


class SpokenGame:
    """`companion play --input wav -` at the other end of two pipes: one WAV path in, what
    the referee said up to its next prompt back. Everything said both ways is kept."""

    def __init__(self, command: list[str], takes: Callable[[str, int], Path], errors: Path) -> None:
        self.takes = takes
        self._errors = errors.open("w")
        self.transcript: list[str] = []
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self._errors, text=True, bufsize=1, env=_env(),
                                        cwd=ROOT)
        self._watchdog = threading.Timer(GAME_TIMEOUT_S, self.process.kill)
        self._watchdog.daemon = True
        self._watchdog.start()
        self.opening = self._reply()

    def _reply(self) -> str | None:
        said = []
        while True:
            line = self.process.stdout.readline()
            if not line:
                return None
            line = line.rstrip("\n")
            self.transcript.append(line)
            if line == PROMPT:
                return "\n".join(said)
            said.append(line)

    def say(self, text: str, take: int) -> str | None:
        path = self.takes(text, take)
        self.transcript.append(f"    (says {text!r}, take {take + 1}: {path.name})")
        try:
            self.process.stdin.write(f"{path}\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        return self._reply()

    def finish(self) -> int:
        """End of input, as a player walking away: the referee pauses the game and exits."""
        try:
            self.process.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        rest = self.process.stdout.read()
        self.transcript += rest.splitlines()
        code = self.process.wait()
        self._watchdog.cancel()
        self._errors.close()
        return code


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def play_typed(script: str, journal: Path) -> subprocess.CompletedProcess:
    journal.unlink(missing_ok=True)
    return subprocess.run([sys.executable, "-m", "companion", "play", "--players", *PLAYERS,
                           "--input", "text", "--mute", "--journal", str(journal)],
                          input=script, capture_output=True, text=True, env=_env(), cwd=ROOT,
                          timeout=120)


def play_spoken(script: str, takes: Callable[[str, int], Path], journal: Path, log: Path,
                network: Path | None = None, learn_names: bool = True) -> tuple[int, Cost]:
    """Play the script out loud, line by line, reacting to the referee; the exit status and
    what it cost. `network`: the bundled recogniser's weights (default: the shipped ones).
    `learn_names`: the players say their names first, as the referee asks."""
    journal.unlink(missing_ok=True)
    model = ["--model", str(network)] if network is not None else []
    errors = log.with_suffix(".stderr")
    game = SpokenGame([sys.executable, "-m", "companion", "play", "--players", *PLAYERS,
                       "--engine", "bundled", *model, "--mute", "--journal", str(journal),
                       "--input", "wav", "-", "--learn-names" if learn_names else "--no-learn-names"],
                      takes, errors)
    cost = Cost()
    # The referee moves on after a name not heard in TRIES tries, as a player does.
    names = [line for line in NAME_LINES if learn_names]
    # Names are said in takes of their own: a game line said as at the start would be heard
    # by its own recording.
    say_name = lambda text, take: game.say(text, NAME_TAKES + take)  # noqa: E731
    if game.opening is not None and all(say_line(line, say_name, cost) == "taken" for line in names):
        for line in script_lines(script):
            if say_line(line, game.say, cost) != "taken":
                break
            cost.taken += 1
    code = game.finish()
    log.write_text("\n".join(game.transcript) + "\n--- stderr ---\n" + errors.read_text())
    errors.unlink()
    return code, cost


# --- the recordings --------------------------------------------------------------------------

def take_voice(voice, text: str, take: int):
    """The voice saying `text` for the take-th time: its own manner first, then a little
    faster or slower and higher or lower, the same way on every run."""
    if take == 0:
        return voice
    rng = random.Random(f"{SEED}|{voice.name}|{text}|{take}")
    stretch = round(voice.stretch * (1 + rng.uniform(-TAKE_STRETCH, TAKE_STRETCH)), 2)
    f0_mean = voice.f0_mean + rng.randint(-TAKE_F0, TAKE_F0)
    return replace(voice, stretch=stretch, f0_mean=f0_mean,
                   name=f"festival:kdlpc16k:stretch{stretch:.2f}:f0{f0_mean}:sd{voice.f0_std}")


def take_name(text: str, take: int) -> str:
    return f"{re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')}-{take + 1}.wav"


def _say(job) -> tuple[str, np.ndarray | None, str]:
    from training import voices

    voice, text = job
    try:
        return text, voices.synthesise(voice, text), ""
    except Exception as err:  # reported; the game then fails rather than the benchmark
        return text, None, str(err)


def record(out: Path, babble: np.ndarray, voices: Sequence, workers: int,
           log: Callable[[str], None]) -> dict[tuple[str, str], Path]:
    """TAKES WAVs of everything each game's voice may say, clean and in babble (cached):
    (game, condition) -> the folder of its takes, named by take_name."""
    from benchmarks import speech_audio as sound
    from benchmarks import speech_corpus as corpus
    from companion.listen.audio import write_wav

    texts = {name: spoken_texts(script) for name, script in GAMES.items()}
    voice_of = {name: voices[(3 * i) % len(voices)] for i, name in enumerate(GAMES)}
    conditions = ("clean", f"babble{BABBLE_SNR:.0f}")
    key = corpus._digest([corpus.CORPUS_VERSION, texts, {n: v.name for n, v in voice_of.items()},
                          TAKES, TAKE_STRETCH, TAKE_F0,
                          BABBLE_SNR, corpus.LEAD_S, corpus.TAIL_S, corpus.PEAK, corpus.FLOOR,
                          [len(babble), float(np.sum(babble[:1000] ** 2))]])
    folder = out / "speech-corpus" / f"games-{key}"
    folders = {(name, cond): folder / name / cond for name in GAMES for cond in conditions}
    takes = {text: [*range(TAKES), *(range(NAME_TAKES, NAME_TAKES + TAKES) if text in NAME_LINES else ())]
             for name in GAMES for text in texts[name]}
    wanted = [folders[(name, cond)] / take_name(text, take)
              for name in GAMES for cond in conditions for text in texts[name]
              for take in takes[text]]
    if all(p.exists() for p in wanted):
        return folders
    t = time.time()
    jobs = sorted({(take_voice(voice_of[name], text, take), text)
                   for name in GAMES for text in texts[name] for take in takes[text]},
                  key=lambda j: (j[0].name, j[1]))
    said = {}
    for (voice, _), (text, audio, problem) in zip(jobs, sound._map(_say, jobs, workers)):
        if audio is None:
            log(f"games: {voice.name} could not say {text!r}: {problem}")
        said[(voice.name, text)] = audio
    for name in GAMES:
        for cond in conditions:
            folders[(name, cond)].mkdir(parents=True, exist_ok=True)
            for text in texts[name]:
                for take in takes[text]:
                    audio = said[(take_voice(voice_of[name], text, take).name, text)]
                    if audio is None:
                        audio = np.zeros(1600, np.float32)  # the line is missing: silence
                    rng = np.random.default_rng([SEED, take, int(corpus._digest([name, cond, text]), 16)])
                    noisy = cond != "clean"
                    write_wav(folders[(name, cond)] / take_name(text, take),
                              sound.mix(sound._level(audio), babble if noisy else None,
                                         BABBLE_SNR if noisy else None, rng))
    log(f"games: {len(jobs)} takes said by {len(set(v.name for v in voice_of.values()))} "
        f"festival voices ({time.time() - t:.0f} s) -> {folder}")
    return folders


# --- the benchmark ---------------------------------------------------------------------------

def run_games(out: Path, babble: np.ndarray, voices: Sequence, workers: int,
              log: Callable[[str], None], network: Path | None = None,
              learn_names: bool = True) -> dict:
    """Play every game typed, then spoken clean and in babble; count the ones refereed right."""
    out = Path(out).resolve()
    folders = record(out, babble, voices, workers, log)
    journals = out / "games"
    journals.mkdir(parents=True, exist_ok=True)
    t = time.time()
    typed: dict[str, list[dict]] = {}
    for name, script in GAMES.items():
        path = journals / f"{name}-typed.jsonl"
        result = play_typed(script, path)
        if result.returncode != 0 or not path.exists():
            raise RuntimeError(f"the typed game {name!r} failed: {result.stderr[-500:]}")
        typed[name] = journal_events(path)

    def spoken(job) -> dict:
        (name, cond), folder = job
        path = journals / f"{name}-{cond}.jsonl"
        log_path = journals / f"{name}-{cond}.log"
        code, cost = play_spoken(GAMES[name], lambda text, take: folder / take_name(text, take),
                                 path, log_path, network, learn_names)
        row = {"game": name, "condition": cond, "journal": str(path), "log": str(log_path),
               "repeats": cost.repeats, "questions": cost.questions}
        if code != 0 or not path.exists():
            errors = log_path.read_text().split("--- stderr ---")[-1].strip().splitlines()
            return {**row, "passed": False,
                    "note": f"companion play failed ({code}): {(errors or [''])[-1]}"}
        if cost.gave_up is not None and cost.taken == 0 and cost.gave_up in NAME_LINES:
            return {**row, "passed": False, "note": f"gave up on the names at {cost.gave_up!r}"}
        if cost.gave_up is not None:
            return {**row, "passed": False,
                    "note": f"gave up on line {cost.taken + 1}/{len(script_lines(GAMES[name]))} "
                            f"{cost.gave_up!r} after {TRIES} tries"}
        passed, note = compare(typed[name], journal_events(path))
        return {**row, "passed": passed, "note": note}

    with ThreadPoolExecutor(max(1, workers)) as pool:  # each run is a process of its own
        results = list(pool.map(spoken, folders.items()))
    total = len(GAMES)
    count = lambda cond: sum(r["passed"] for r in results if r["condition"] == cond)  # noqa: E731
    log(f"games: played {len(results)} spoken games in {time.time() - t:.0f} s "
        f"(journals and logs in {journals})")
    return {"total": total, "clean": count("clean"), "babble12": count(f"babble{BABBLE_SNR:.0f}"),
            "games": results}


def report_line(game: dict) -> str:
    """One game's result, and what the player had to do to get it."""
    return (f"game {game['game']:10} {game['condition']:9} {'right' if game['passed'] else 'WRONG'}  "
            f"repeats {game.get('repeats', 0)}, questions {game.get('questions', 0)}  {game['note']}")


def main(argv: Sequence[str] | None = None) -> int:
    from benchmarks import out_problem, speech_audio, speech_corpus
    from companion.listen.network import CallNetwork

    parser = argparse.ArgumentParser(prog="python -m benchmarks.games", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("bench-out"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--model", type=Path, metavar="NETWORK.npz",
                        help="the bundled recogniser's network to hear with; needed when the "
                             "shipped one trained on festival (e.g. build/lofo-shipped/festival.npz)")
    parser.add_argument("--no-learn-names", action="store_true",
                        help="the players do not say their names before the game")
    args = parser.parse_args(argv)
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    unsaved = out_problem(args.out)
    if unsaved:
        log(f"games: {unsaved}")
        return 2
    card = CallNetwork.load().card
    # The festival voice must be one the network never heard, as in benchmarks/speech.py.
    if args.model is None and "festival" not in card.get("left_out", []):
        log("games: the shipped network trained on festival: give --model NETWORK.npz, one "
            "trained without it (python -m benchmarks.games --model build/lofo-shipped/festival.npz)")
        return 2
    if args.model is not None:
        if not args.model.exists():
            log(f"games: no network {args.model}")
            return 2
        speech_corpus.confidence_for(args.model, "festival", log)
    speaker = card.get("held_out_speaker") or ""
    _, spare = speech_corpus.real_items(speaker, False) if speaker else ([], [])
    noises = speech_audio.noise_tracks(args.out, False, speaker, spare, args.workers, log)
    result = run_games(args.out, noises["babble"], speech_corpus.voices_for("festival", False),
                       args.workers, log, args.model.resolve() if args.model else None,
                       not args.no_learn_names)
    for game in result["games"]:
        print(report_line(game))
    print(f"games refereed right: clean {result['clean']}/{result['total']}, "
          f"babble 12 dB {result['babble12']}/{result['total']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
