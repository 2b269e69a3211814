"""Whole scripted games, typed and then spoken, through the real `companion play`.

Each game is typed first (`companion play --players Ana Ben Cleo --input text --mute
--journal X`), which gives the journal a perfect hearing would write. Then a held-out
festival voice says every line into a WAV of its own, clean and in 12 dB babble, and the
recordings go through `companion play ... --input wav FILES --mute --journal Y` with the
bundled engine. A game is refereed right only when Y's events equal X's.

Like a player at the table, the voice says "yes" after every call that changes the game:
the referee asks "Did you say ...?" about a count always and about any call it is only
fairly sure of, and answers "There is nothing to confirm" to a "yes" nobody asked for. A
call the referee answers with "say again" is not repeated, so it fails the game.

    python -m benchmarks.games [--out bench-out] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PLAYERS = ("Ana", "Ben", "Cleo")
SEED = 99
BABBLE_SNR = 12.0

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


def needs_yes(line: str) -> bool:
    """Whether a player who hears "Did you say ...?" would have to answer this call: every
    call that changes the game (questions like "status" are simply answered)."""
    from companion.calls import Command, CommandCall, parse_call
    from companion.referee import changes_nothing

    call = parse_call(line, PLAYERS)
    return not changes_nothing(call) and not (
        isinstance(call, CommandCall) and call.name in (Command.YES, Command.NO))


def spoken_plan(script: str) -> list[str]:
    """What the voice says, one WAV each: every line, then "yes" where it may be asked."""
    plan = []
    for line in script_lines(script):
        plan.append(line)
        if needs_yes(line):
            plan.append("yes")
    return plan


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


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def play_typed(script: str, journal: Path) -> subprocess.CompletedProcess:
    journal.unlink(missing_ok=True)
    return subprocess.run([sys.executable, "-m", "companion", "play", "--players", *PLAYERS,
                           "--input", "text", "--mute", "--journal", str(journal)],
                          input=script, capture_output=True, text=True, env=_env(), cwd=ROOT,
                          timeout=120)


def play_spoken(files: list[Path], journal: Path, network: Path | None = None
                ) -> subprocess.CompletedProcess:
    """`network`: the bundled recogniser's weights to hear with (default: the shipped ones)."""
    journal.unlink(missing_ok=True)
    model = ["--model", str(network)] if network is not None else []
    return subprocess.run([sys.executable, "-m", "companion", "play", "--players", *PLAYERS,
                           "--engine", "bundled", *model, "--mute", "--journal", str(journal),
                           "--input", "wav", *map(str, files)],
                          capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=900)


def _say(job) -> tuple[str, np.ndarray | None, str]:
    from training import voices

    voice, text = job
    try:
        return text, voices.synthesise(voice, text), ""
    except Exception as err:  # reported; the game then fails rather than the benchmark
        return text, None, str(err)


def record(out: Path, babble: np.ndarray, voices: Sequence, workers: int,
           log: Callable[[str], None]) -> dict[tuple[str, str], list[Path]]:
    """One WAV per spoken line, per game and condition (cached): (game, condition) -> files."""
    from benchmarks import speech
    from companion.listen.audio import write_wav

    plans = {name: spoken_plan(script) for name, script in GAMES.items()}
    voice_of = {name: voices[(3 * i) % len(voices)] for i, name in enumerate(GAMES)}
    key = speech._digest([speech.CORPUS_VERSION, plans, {n: v.name for n, v in voice_of.items()},
                          BABBLE_SNR, speech.LEAD_S, speech.TAIL_S, speech.PEAK, speech.FLOOR,
                          [len(babble), float(np.sum(babble[:1000] ** 2))]])
    folder = out / "speech-corpus" / f"games-{key}"
    files: dict[tuple[str, str], list[Path]] = {}
    for name, plan in plans.items():
        for cond in ("clean", f"babble{BABBLE_SNR:.0f}"):
            files[(name, cond)] = [folder / name / cond / f"{n:02d}.wav" for n in range(len(plan))]
    if all(p.exists() for paths in files.values() for p in paths):
        return files
    t = time.time()
    jobs = sorted({(voice_of[name], line) for name, plan in plans.items() for line in plan},
                  key=lambda j: (j[0].name, j[1]))
    said = {}
    for (voice, _), (text, audio, problem) in zip(jobs, speech._map(_say, jobs, workers)):
        if audio is None:
            log(f"games: {voice.name} could not say {text!r}: {problem}")
        said[(voice.name, text)] = audio
    for name, plan in plans.items():
        for cond in ("clean", f"babble{BABBLE_SNR:.0f}"):
            for n, (line, path) in enumerate(zip(plan, files[(name, cond)])):
                path.parent.mkdir(parents=True, exist_ok=True)
                audio = said[(voice_of[name].name, line)]
                if audio is None:
                    audio = np.zeros(1600, np.float32)  # the line is missing: silence
                rng = np.random.default_rng([SEED, n, len(name), sum(map(ord, name + cond))])
                noisy = cond != "clean"
                write_wav(path, speech.mix(speech._level(audio), babble if noisy else None,
                                           BABBLE_SNR if noisy else None, rng))
    log(f"games: {sum(len(p) for p in plans.values())} lines said by "
        f"{len(set(v.name for v in voice_of.values()))} festival voices "
        f"({time.time() - t:.0f} s) -> {folder}")
    return files


def run_games(out: Path, babble: np.ndarray, voices: Sequence, workers: int,
              log: Callable[[str], None], network: Path | None = None) -> dict:
    """Play every game typed, then spoken clean and in babble; count the ones refereed right."""
    out = Path(out).resolve()
    files = record(out, babble, voices, workers, log)
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
        (name, cond), paths = job
        path = journals / f"{name}-{cond}.jsonl"
        result = play_spoken(paths, path, network)
        (journals / f"{name}-{cond}.log").write_text(result.stdout + "\n--- stderr ---\n" + result.stderr)
        if result.returncode != 0 or not path.exists():
            return {"game": name, "condition": cond, "passed": False, "journal": str(path),
                    "note": f"companion play failed ({result.returncode}): "
                            f"{(result.stderr.strip().splitlines() or [''])[-1]}"}
        passed, note = compare(typed[name], journal_events(path))
        return {"game": name, "condition": cond, "passed": passed, "note": note,
                "journal": str(path)}

    with ThreadPoolExecutor(max(1, workers)) as pool:  # each run is a process of its own
        results = list(pool.map(spoken, files.items()))
    total = len(GAMES)
    count = lambda cond: sum(r["passed"] for r in results if r["condition"] == cond)  # noqa: E731
    log(f"games: played {len(results)} spoken games in {time.time() - t:.0f} s "
        f"(journals and logs in {journals})")
    return {"total": total, "clean": count("clean"), "babble12": count(f"babble{BABBLE_SNR:.0f}"),
            "games": results}


def main(argv: Sequence[str] | None = None) -> int:
    from benchmarks import speech
    from companion.listen.network import CallNetwork

    parser = argparse.ArgumentParser(prog="python -m benchmarks.games", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("bench-out"))
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    speaker = CallNetwork.load().card.get("held_out_speaker") or ""
    _, spare = speech.real_items(speaker, False) if speaker else ([], [])
    noises = speech.noise_tracks(args.out, False, speaker, spare, args.workers, log)
    result = run_games(args.out, noises["babble"], speech.voices_for("festival", False),
                       args.workers, log)
    for g in result["games"]:
        print(f"game {g['game']:10} {g['condition']:9} {'right' if g['passed'] else 'WRONG'}  {g['note']}")
    print(f"games refereed right: clean {result['clean']}/{result['total']}, "
          f"babble 12 dB {result['babble12']}/{result['total']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
