"""The development set for hands said with pauses between the dice, at a reveal:

    python -m training.hand_pauses_dev [--family espeak] [--allow none 0.5 0.8 ...]
    python -m training.hand_pauses_dev --speaker lucas

A player reading out their dice stops between them ("Ana ... five, five, three"). Each hand
("Ana five five three", three to five dice) is said word by word in a training voice, the
words joined by 0, 0.15, 0.3 and 0.5 s of quiet (0: the hand said in one breath), and heard
through the microphone's path (`sources.Listener`, the bundled recogniser, 0.1 s blocks, the
hand size the game allows), after each player has said their name as the referee asks. Per
setting of the pause an utterance may hold (`--allow`: seconds, as a name's pause; with "h"
after them, as a hand's, which the engine hears cut short, `Listener.allow_pause`; "none":
the endpoint settings alone) it prints how often the first call read back (confidence 0.3 or
more, `engine.ENGINE_HANDS`) is the hand, another call, or none, and how often the
hand was heard as several calls. The voices are ones the network trained on: a place to
compare settings, not a measure of hearing.

`--speaker lucas` strings five of the held-out real speaker's digits together with those
pauses instead (trimmed to where his voice starts and ends, in a room as loud as his
recordings') and counts how often the endpointer alone parts them into several utterances:
a real voice's pauses, though no names.
"""

from __future__ import annotations

import argparse
import random
from typing import Sequence

import numpy as np

from companion.listen.engine import ENGINE_HANDS
from companion.listen.sources import Listener
from training.talking_room_dev import voiced_span

PAUSES = (0.0, 0.15, 0.3, 0.5)
ROOM_HISS = 20  # int16 units, as the benchmarks' quiet room
SEED = 5


def _said(parts: Sequence[np.ndarray], pause: float, rng: np.random.Generator,
          room: float = 0.0) -> np.ndarray:
    """Words joined by `pause` s of quiet, in a quiet room, as 16-bit samples at half scale.
    `room`: the room's level in the words' own units (real recordings hold their room's
    noise, which a quieter room around them would make sound like more voice)."""
    gap = np.zeros(int(pause * 16000), np.float32)
    joined = [np.zeros(9600, np.float32)]
    for i, part in enumerate(parts):
        joined += [part] if i == 0 else [gap, part]
    x = np.concatenate(joined + [np.zeros(19200, np.float32)])
    scale = 0.5 / (float(np.max(np.abs(x))) + 1e-9)
    x = x * scale
    x = x + rng.normal(0, max(ROOM_HISS / 32768, room * scale), len(x)).astype(np.float32)
    return (np.clip(x, -1, 1) * 32767).astype(np.int16)


def _quietest_tenth(x: np.ndarray) -> float:
    """The level (RMS) of a recording's quietest tenth of 10 ms frames: its room."""
    frames = x[: len(x) // 160 * 160].reshape(-1, 160)
    return float(np.percentile(np.sqrt(np.mean(frames ** 2, axis=1)), 10))


def _trimmed(x: np.ndarray) -> np.ndarray:
    """Where the voice is, as a word said alone."""
    first, last = voiced_span(x, peak=float(np.max(np.abs(x))))
    return x[first:last + 1]


def _listener(recogniser, allow: str) -> Listener:
    listener = Listener(recogniser)
    if allow != "none":
        listener.allow_pause(float(allow.rstrip("h")), hand=allow.endswith("h"))
    return listener


def run(family: str, voices: int, hands: int, allows: Sequence[str], seed: int) -> dict:
    """{(allow, pause): [right, wrong, none, heard as several calls, hands]}."""
    from companion.listen.recogniser import CallRecogniser
    from companion.sources import NAME_PHRASES, Expect
    from training.names_dev import DICE_WORDS, NAME_SETS, _take, say_once
    from training.voices import list_voices, synthesise

    rng, noise = random.Random(seed), np.random.default_rng(seed)
    tally = {(a, p): [0, 0, 0, 0, 0] for a in allows for p in PAUSES}
    for names in NAME_SETS[:2]:
        for voice in list_voices(family, voices, seed):
            recogniser = CallRecogniser(names)
            for player in names:
                for phrase, _ in NAME_PHRASES:
                    recogniser.learn_name(player, phrase)
                    recogniser.hear(say_once(voice, f"{player} {phrase}", rng))
            for _ in range(hands):
                player, size = rng.choice(names), rng.randint(3, 5)
                text = f"{player} " + " ".join(rng.choice(DICE_WORDS) for _ in range(size))
                take = _take(voice, rng)
                whole = synthesise(take, text)
                words = [_trimmed(synthesise(take, w)) for w in text.split()]
                for pause in PAUSES:
                    audio = _said([whole] if pause == 0 else words, pause, noise)
                    for allow in allows:
                        recogniser.expect(Expect.COUNT, frozenset({size}))
                        heard = [s.result for s in _listener(recogniser, allow).recording(audio) if s.result.text]
                        first = next((r for r in heard if r.confidence >= ENGINE_HANDS), None)
                        row = tally[(allow, pause)]
                        row[0 if first is not None and first.text == text.lower() else 1 if first is not None else 2] += 1
                        row[3] += len(heard) > 1
                        row[4] += 1
        print(f"{family}: {names} done", flush=True)
    return tally


def run_real(speaker: str, count: int, allows: Sequence[str], seed: int) -> dict:
    """{(allow, pause): [parted, strings]} for strings of five of `speaker`'s digits."""
    from companion.listen.audio import read_wav
    from training.endpoint_dev import real_recordings

    files = real_recordings(speaker)
    rng = np.random.default_rng(seed)
    tally = {(a, p): [0, 0] for a in allows for p in PAUSES[1:]}
    for _ in range(count):
        takes = [read_wav(files[i]).astype(np.float32) / 32768 for i in rng.choice(len(files), 5, replace=False)]
        digits = [_trimmed(x) for x in takes]
        room = max(_quietest_tenth(x) for x in takes)
        for pause in PAUSES[1:]:
            audio = _said(digits, pause, rng, room)
            for allow in allows:
                endpointer = _listener(None, allow).endpointer  # (no engine: it is not read)
                found = [s for s in endpointer.feed(audio) + endpointer.flush() if not s.room_talk]
                tally[(allow, pause)][0] += len(found) > 1
                tally[(allow, pause)][1] += 1
    return tally


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m training.hand_pauses_dev", description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", default="espeak", choices=("espeak", "piper", "kokoro", "festival"))
    parser.add_argument("--voices", type=int, default=3, help="per name set (two sets)")
    parser.add_argument("--hands", type=int, default=5, help="hands each voice says")
    parser.add_argument("--allow", nargs="+", default=["none", "0.8", "0.5h", "0.8h"])
    parser.add_argument("--speaker", help="the real speaker whose digits are strung together (endpointer only)")
    parser.add_argument("--count", type=int, default=40, help="strings of digits, with --speaker")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    head = "allowed | " + " | ".join(f"{p:.2f} s" for p in (PAUSES[1:] if args.speaker else PAUSES))
    if args.speaker:
        tally = run_real(args.speaker, args.count, args.allow, args.seed)
        print(f"{args.speaker}: {args.count} strings of five digits, the share parted into several utterances")
        print(head)
        for allow in args.allow:
            print(allow + " | " + " | ".join(f"{100 * tally[(allow, p)][0] / tally[(allow, p)][1]:.1f}%"
                                             for p in PAUSES[1:]))
        return
    tally = run(args.family, args.voices, args.hands, args.allow, args.seed)
    print(f"{args.family}: the first call read back is the hand / another call / none, and (x) heard as several calls")
    print(head)
    for allow in args.allow:
        print(allow + " | " + " | ".join("{}/{}/{} ({}) of {}".format(*tally[(allow, p)]) for p in PAUSES))


if __name__ == "__main__":
    main()
