"""`companion bench talk`: calls said into a room that has been talking for a while.

    companion bench talk [--quick] [--out DIR]

At a real table the talk does not stop for a call: someone says "four" over others who have
been talking for seconds, and the talk has opened an utterance before the call begins. The
speech benchmark says each call 0.4 s after its room starts, too soon for that. Here the
held-out real speaker's digits (the speech benchmark's takes of him) are each said 1.5 to 5 s
into the speech benchmark's babble (held-out festival voices and his other takes), which goes
on 1.5 s after the call, clean and at 24, 18, 12 and 6 dB, and heard through the microphone's
path (`sources.Listener`, the bundled recogniser, 0.1 s blocks).

Per level: how often the call got an utterance of its own (starting at most 0.7 s before it
and lasting to its end), how often an utterance began inside it (split), how often it was
acted on right (heard as said at ENGINE_THRESHOLD or more) or wrongly, and how many calls
the talk alone was heard as; then a one-line summary. The settings were chosen on
`python -m training.talking_room_dev` (training voices and talkers), not on this.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.speech_audio import noise_tracks
from benchmarks.speech_corpus import PEAK, RATE, REAL_DIR, real_items
from companion.listen.audio import read_wav
from companion.listen.endpoint import EndpointSettings
from companion.sources import Expect
from training.talking_room_dev import AFTER_S, BEFORE_S, by_level, judge, print_table, said_into

LEVELS = (None, 24, 18, 12, 6)  # None: no babble
SEED = 31


def recordings(speaker: str, quick: bool, real_dir: Path, out: Path, log) -> list[dict]:
    """Each of the speaker's benchmark takes said into the benchmark's babble at each level."""
    items, spare = real_items(speaker, quick, real_dir)
    babble = noise_tracks(out, quick, speaker, spare, 2, log)["babble"]
    rng = np.random.default_rng(SEED)
    files = []
    for item in items:
        speech = read_wav(real_dir / "recordings" / item.say).astype(np.float32) / 32768
        speech = speech * (PEAK / (float(np.max(np.abs(speech))) + 1e-9))
        before = int(rng.uniform(*BEFORE_S) * RATE)
        n = before + len(speech) + int(AFTER_S * RATE)
        at = int(rng.integers(0, len(babble) - n))
        room = babble[at:at + n] / (float(np.sqrt(np.mean(babble[at:at + n] ** 2))) + 1e-9)
        files += said_into(room, speech, before, LEVELS, rng, item.truth_text, Expect.COUNT)
    return files


def summary_line(rows: dict) -> str:
    share = lambda key, row: f"{100 * row[key] / row['calls']:.1f}%"  # noqa: E731
    right = ", ".join(f"{'clean' if level is None else f'{level} dB'} {share('right', row)}"
                      for level, row in by_level(rows))
    worst, share_wrong = max(((level, row["wrong"] / row["calls"]) for level, row in rows.items()),
                             key=lambda kv: kv[1])
    return (f"talk: the held-out speaker's digits said into a talking room, acted on right: {right}; "
            f"wrong at most {100 * share_wrong:.1f}% ({'clean' if worst is None else f'{worst} dB'}); "
            f"the talk alone heard as {sum(row['babble'] for row in rows.values())} calls")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="companion bench talk", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one take of each digit")
    parser.add_argument("--out", type=Path, default=Path("bench-out"), help="where the babble is cached")
    parser.add_argument("--real", type=Path, default=REAL_DIR, metavar="DIR",
                        help="the real recordings (default: ../shared/data/speech-real-dev)")
    args = parser.parse_args(argv)
    from companion.listen.network import CallNetwork

    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    speaker = CallNetwork.load().card.get("held_out_speaker")
    if not speaker or not (args.real / "recordings").is_dir():
        log(f"companion: no recordings of the held-out speaker {speaker!r} under {args.real}")
        return 2
    began = time.time()
    files = recordings(speaker, args.quick, args.real, args.out, log)
    rows = judge(files, EndpointSettings())
    print_table(rows)
    print(summary_line(rows))
    log(f"{len(files)} recordings heard in {time.time() - began:.0f} s")
    return 0
