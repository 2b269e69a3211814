"""The development set that chose how players' own names are learnt and spotted
(recogniser.LEARN_REACH, names.SPOT_COST): voices of one family, heard by a network that
never trained on that family, say each player's name as the referee asks before the game
("Ana calza", "Ana one two three"), then calls and hands.

It prints, for each voice family it is given:
- learning: how far under the best reading "<name> <phrase>" is when the phrase was said,
  and when another call was said instead (what LEARN_REACH must part);
- spotting: how close an utterance comes to the player's own "<name> calza", for that
  calza and for other calls in the same voice (what SPOT_COST and NAME_GAP must part);
- naming: whose calza or hand it was, by espeak-ng's templates alone and with the players'
  own.

    python -m training.names_dev --family kokoro --model build/lofo-dev/kokoro.npz

The network leaves the family out, trained on the recipe's first shard set (training.build
--seed 22, without the warped and stretched sets) in DIR:

    python -m training.train --data DIR --leave-out kokoro --epochs 20 --seed 22 \\
        --feature-noise 0.3 --time-masks 2 --out build/lofo-dev/kokoro.npz
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

import numpy as np

from companion.listen.names import NAME_GAP, SPOT_COST
from companion.listen.recogniser import LEARN_REACH

NAME_SETS = (("Ana", "Ben", "Cleo"), ("Dave", "Emma", "Frank"), ("Lucia", "Marco", "Sofia", "Tom"))
OTHER_CALLS = ("calza", "three fives", "dudo", "one six", "two sixes", "palifico", "seven twos",
               "four pacos", "take it back", "status")
DICE_WORDS = ("one", "two", "three", "four", "five", "six")


@dataclass(frozen=True)
class Spotting:
    """One utterance compared with every player's own "<name> calza"."""

    said: str
    player: str | None  # whose calza it was; None: another call
    nearest: str  # the player whose recording it came closest to
    cost: float  # mean cosine distance per step to that recording's name
    gap: float  # how much closer than the next player's
    call_cost: float = 0.0  # from the name to the call's end, to that player's own calza

    def spotted(self, cost: float = SPOT_COST, gap: float = NAME_GAP, whole: bool = True) -> bool:
        """As NameMatcher.spot; `whole` False: by the name alone, as it was before."""
        return self.cost <= cost and self.gap >= gap and (not whole or self.call_cost <= cost)


def spotting_counts(rows: Sequence[Spotting], cost: float = SPOT_COST, gap: float = NAME_GAP,
                    whole: bool = True) -> dict:
    """Calzas spotted as the right player, as the wrong one, and other calls spotted at all."""
    calzas = [r for r in rows if r.player is not None]
    others = [r for r in rows if r.player is None]
    return {"calzas": len(calzas), "others": len(others),
            "right": sum(r.spotted(cost, gap, whole) and r.nearest == r.player for r in calzas),
            "wrong player": sum(r.spotted(cost, gap, whole) and r.nearest != r.player for r in calzas),
            "others spotted": sum(r.spotted(cost, gap, whole) for r in others)}


def _take(voice, rng: random.Random):
    """The voice saying something once more, a little faster or slower (and higher or lower)."""
    tag = f"~{rng.random():.6f}"
    if voice.family == "espeak":
        return replace(voice, rate=voice.rate + rng.randint(-15, 15),
                       pitch=min(99, max(0, voice.pitch + rng.randint(-8, 8))), name=voice.name + tag)
    if voice.family == "piper":
        return replace(voice, length_scale=round(voice.length_scale * rng.uniform(.92, 1.08), 2),
                       name=voice.name + tag)
    if voice.family == "kokoro":
        return replace(voice, speed=round(voice.speed * rng.uniform(.92, 1.08), 2), name=voice.name + tag)
    return replace(voice, stretch=round(voice.stretch * rng.uniform(.92, 1.08), 2),
                   f0_mean=voice.f0_mean + rng.randint(-10, 10), name=voice.name + tag)


def say_once(voice, text: str, rng: random.Random) -> np.ndarray:
    """`text` said by the voice in a fresh take (`_take`), as 16-bit samples."""
    from training.voices import synthesise

    return (synthesise(_take(voice, rng), text) * 32767).astype(np.int16)


def run(family: str, model: Path, voices: int, seed: int) -> None:
    from companion.listen.recogniser import CallRecogniser, RecogniserSettings
    from companion.sources import NAME_PHRASES, Expect
    from training.voices import list_voices

    rng = random.Random(seed)
    said_margins, other_margins, spottings = [], [], []
    named = {"espeak": {"hand": [0, 0], "calza": [0, 0]}, "espeak + own": {"hand": [0, 0], "calza": [0, 0]}}
    for names in NAME_SETS:
        recogniser = CallRecogniser(names, RecogniserSettings.for_network(model))
        matcher = recogniser.names
        espeak_templates = {p: list(t) for p, t in matcher.templates.items()}

        def hear(voice, text: str, expect: Expect, sizes: frozenset = frozenset()):
            feats = recogniser.features(say_once(voice, text, rng))
            log_probs = recogniser.network.log_probs(feats)
            return feats, log_probs, recogniser.graph(expect, sizes).decode(log_probs)

        for voice in list_voices(family, voices, seed):
            matcher.templates = {p: list(t) for p, t in espeak_templates.items()}
            matcher.own, matcher.own_calls = {}, {}
            for player in names:
                for phrase, expect in NAME_PHRASES:
                    sizes = frozenset({3}) if expect is Expect.COUNT else frozenset()
                    feats, log_probs, decoded = hear(voice, f"{player} {phrase}", expect, sizes)
                    said_margins.append(decoded.calls[0][1] - matcher.align(phrase, log_probs).calls[0][1])
                    matcher.learn(player, phrase, feats, log_probs)
            for other in rng.sample(OTHER_CALLS, 4):  # said when a name was asked for
                feats, log_probs, decoded = hear(voice, other, Expect.CALLS)
                if decoded.calls:
                    other_margins.append(decoded.calls[0][1] - matcher.align("calza", log_probs).calls[0][1])
            calls = ([(p, f"{p} calza") for p in names] + [(None, t) for t in rng.sample(OTHER_CALLS, 5)]
                     + [(None, f"{rng.choice(names)} {t}") for t in rng.sample(OTHER_CALLS[1:], 3)])
            for player, text in calls:
                feats, log_probs, _ = hear(voice, text, Expect.CALLS)
                aligned = matcher.align("calza", log_probs)
                costs = matcher.own_calza_costs(feats, aligned)
                if len(costs) < 2:
                    continue
                spottings.append(Spotting(text, player, costs[0][1], costs[0][0], costs[1][0] - costs[0][0],
                                          matcher.own_call_cost(feats, aligned, costs[0][1])))
            for kind in ("hand", "hand", "calza"):
                player = rng.choice(names)
                if kind == "hand":
                    dice = [rng.choice(DICE_WORDS) for _ in range(rng.randint(2, 5))]
                    feats, _, decoded = hear(voice, f"{player} {' '.join(dice)}", Expect.COUNT,
                                             frozenset({len(dice)}))
                else:
                    feats, _, decoded = hear(voice, f"{player} calza", Expect.CALLS)
                if decoded.name_frames is None:
                    continue
                own = matcher.templates
                for which, templates in (("espeak", espeak_templates), ("espeak + own", own)):
                    matcher.templates = templates
                    who = matcher.match(feats, decoded.name_frames)
                    named[which][kind][0 if who and who[0] == player else 1] += 1
                matcher.templates = own
        print(f"{family}: {names} done", flush=True)

    print(f"\n{family}, heard by {model} ({voices} voices, seed {seed})")
    print(f"learning: the phrase said is {np.max(said_margins):.1f} at most under the best reading "
          f"(median {np.median(said_margins):.1f}, {len(said_margins)} said); other calls "
          f"{np.min(other_margins):.1f} to {np.max(other_margins):.1f} (median {np.median(other_margins):.1f}), "
          f"{sum(m <= LEARN_REACH for m in other_margins)} of {len(other_margins)} within LEARN_REACH {LEARN_REACH}")
    every_name = {p for ps in NAME_SETS for p in ps}
    named_others = [s for s in spottings if not s.player and s.said.split()[0] in every_name]
    for what, cost in (("name", lambda s: s.cost), ("whole call", lambda s: s.call_cost)):
        calzas = [cost(s) for s in spottings if s.player]
        others = [cost(s) for s in spottings if not s.player and s not in named_others]
        print(f"spotting by the {what}: own calzas come within {np.quantile(calzas, 0.9):.3f} (9 in 10), "
              f"at most {np.max(calzas):.3f}; other calls from {np.min(others):.3f}, named other calls from "
              f"{min(cost(s) for s in named_others):.3f}")
    for whole in (False, True):
        print(f"at SPOT_COST {SPOT_COST}, NAME_GAP {NAME_GAP}, {'name and whole call' if whole else 'name alone'}: "
              f"{spotting_counts(spottings, whole=whole)}, named other calls spotted "
              f"{sum(s.spotted(whole=whole) for s in named_others)} of {len(named_others)}")
    for which, kinds in named.items():
        print(f"naming by {which} templates: " + ", ".join(
            f"{kind} {right} right, {wrong} wrong" for kind, (right, wrong) in kinds.items()))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m training.names_dev", description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", default="kokoro", choices=("espeak", "piper", "kokoro", "festival"))
    parser.add_argument("--model", type=Path, required=True, help="a network trained without --family")
    parser.add_argument("--voices", type=int, default=8)
    parser.add_argument("--seed", type=int, default=999)
    args = parser.parse_args(argv)
    run(args.family, args.model, args.voices, args.seed)


if __name__ == "__main__":
    main()
