"""The development set that chose the line from which a hand said at a reveal is read back
(hearing.HearingPolicy.hands_from): voices of one family, heard by a network that never
trained on that family, say their names as the referee asks before the game, then their
dice ("Ben four four four two six"), heard at the hand size the game allows, as `play` hears
them.

It prints, per confidence line, how many hands would be read back ("Did you say ...?") and
how many of those are right, how many right hands fall under the line (said again), and how
much table chatter said at the reveal would be read back as a hand or a count.

    python -m training.hands_dev --family kokoro --model build/lofo-dev/kokoro.npz

The network is the one `training.names_dev` uses (its docstring has the command).
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Sequence

import numpy as np

from training.names_dev import DICE_WORDS, NAME_SETS, say_once

LINES = (0.02, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.9)


def run(family: str, model: Path, voices: int, hands: int, seed: int) -> tuple[list, list]:
    """(confidence, right) of every hand heard, and the confidence of each chatter line heard
    as a call (0 when it was heard as none)."""
    from companion.listen.recogniser import CallRecogniser, RecogniserSettings
    from companion.sources import NAME_PHRASES, Expect
    from training.corpus import CHATTER_SENTENCES
    from training.voices import list_voices

    rng = random.Random(seed)
    heard: list[tuple[float, bool]] = []
    chatter: list[float] = []

    for names in NAME_SETS:
        for voice in list_voices(family, voices, seed):
            recogniser = CallRecogniser(names, RecogniserSettings.for_network(model))
            for player in names:
                for phrase, _ in NAME_PHRASES:
                    recogniser.learn_name(player, phrase)
                    recogniser.hear(say_once(voice, f"{player} {phrase}", rng))
            for _ in range(hands):
                player = rng.choice(names)
                size = rng.randint(1, 5)
                dice = " ".join(rng.choice(DICE_WORDS) for _ in range(size))
                recogniser.expect(Expect.COUNT, frozenset({size}))
                result = recogniser.hear(say_once(voice, f"{player} {dice}", rng))
                heard.append((result.confidence, result.text == f"{player.lower()} {dice}"))
            recogniser.expect(Expect.COUNT, frozenset(range(1, 6)))
            for line in rng.sample(CHATTER_SENTENCES, 3):
                result = recogniser.hear(say_once(voice, line, rng))
                chatter.append(result.confidence if result.text else 0.0)
        print(f"{family}: {names} done", flush=True)
    return heard, chatter


def at_line(heard: Sequence[tuple[float, bool]], chatter: Sequence[float], line: float) -> dict:
    """What a read-back line does: hands read back, right ones among them, right hands said
    again instead, and chatter heard as a call from the line."""
    asked = [ok for c, ok in heard if c >= line]
    return {"read back": len(asked), "right": sum(asked), "right said again": sum(ok for c, ok in heard if c < line),
            "chatter": sum(c >= line for c in chatter)}


def report(heard: Sequence[tuple[float, bool]], chatter: Sequence[float]) -> None:
    print(f"{len(heard)} hands, {sum(ok for _, ok in heard)} heard right (whatever the confidence), "
          f"and {len(chatter)} chatter lines said at the reveal")
    print("line | read back | of them right | right hands under the line | chatter read back")
    for line in LINES:
        n = at_line(heard, chatter, line)
        print(f"{line:4.2f} | {n['read back']:4d} | {n['right']:4d} ({100 * n['right'] / max(1, n['read back']):.0f}%) | "
              f"{n['right said again']:4d} | {n['chatter']}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m training.hands_dev", description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", default="kokoro", choices=("espeak", "piper", "kokoro", "festival"))
    parser.add_argument("--model", type=Path, required=True, help="a network trained without --family")
    parser.add_argument("--voices", type=int, default=8)
    parser.add_argument("--hands", type=int, default=8, help="hands each voice says per table")
    parser.add_argument("--seed", type=int, default=777)
    args = parser.parse_args(argv)
    report(*run(args.family, args.model, args.voices, args.hands, args.seed))


if __name__ == "__main__":
    main()
