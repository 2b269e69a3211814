"""A development set for calls said into a room that has been talking for a while:

    python -m training.talking_room_dev [--set louder_talker_db=none ...] [--speaker lucas]

At a real table the talk does not stop for a call: someone says "four fives" over two or five
others who have been talking for seconds. The room's talk opens an utterance before the call,
which then runs on into the call, and the recogniser, hearing the talk before it, hears no call.
(The speech benchmark says each call after 0.4 s of the room, too short for that.)

Each call is said 1.5 to 5 s into babble of the training talkers (build/speech/babble.npz,
from `python -m training.build`) that goes on 1.5 s after it, clean (no babble) and at 24,
18 and 12 dB, and heard through the microphone's path (`sources.Listener`, the bundled
recogniser, 0.1 s blocks). Per level it prints: how often the call got an utterance of its
own (one starting at most 0.7 s before the call and lasting to its end), how often an
utterance began inside the call (the call split), how often the call was acted on right
(heard at ENGINE_THRESHOLD or more), wrongly, how many calls the babble alone had acted on,
and how long after the call's end it was acted on. By default the calls are said by training
voices (piper and espeak-ng) and the digits by the real speakers training hears: a place to compare endpointer settings, not a measure of
hearing. `--speaker lucas` says `--count` of the held-out real speaker's digits instead, drawn
from all his takes (the benchmark's babble uses some of them as talkers), heard by a network
that never trained on him: a figure for his hearing, once the settings are chosen.
`--set` changes EndpointSettings; the mixed recordings are kept (`--cache`).

`--hand-due` hears the digits as counts at a reveal, where a hand may be said (and, as the
microphone allows it, hold a pause: `--no-hand-pause` for the listening before that).

`--talk-after` says each call in a quiet room instead, with the table talking from the
moment it ends (the reaction to a "dudo!"), at 12, 6 and 0 dB under the call: the voice
activity model, having heard the call, hears that talk as the caller going on.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import numpy as np

from benchmarks.speech_corpus import PEAK, RATE
from companion.calls import number_words
from companion.listen.audio import read_wav
from companion.listen.endpoint import EndpointSettings
from companion.listen.engine import ENGINE_THRESHOLD
from companion.listen.recogniser import CallRecogniser
from companion.listen.sources import Listener, pause_allowed
from companion.sources import Expect
from training import augment, build, voices
from training.endpoint_dev import real_recordings, setting_changes
from training.augment import speech_power

LEVELS = (None, 24, 18, 12)  # None: no babble
AFTER_LEVELS = (None, 12, 6, 0)  # the talk after a call, in dB under it (--talk-after)
SEED = 9
CALLS = ("three fours", "five sixes", "two aces", "seven threes", "four pacos", "nine twos",
         "dudo", "calza", "six fives", "eleven fours", "eight ones", "twelve sixes")
BEFORE_S = (1.5, 5.0)  # the room talks this long before the call
AFTER_S = 1.5
FLOOR = 20  # hiss (int16 units), as the benchmark's room


def said(speaker: str | None, rng: np.random.Generator, count: int) -> list[tuple[str, Expect, np.ndarray]]:
    """(what was said, what the game listens for, float audio) for each call."""
    out = []
    if speaker is None:
        by = voices.list_voices("piper", 6, 77) + voices.list_voices("espeak", 6, 77)
        for k in range(count):
            text = CALLS[k % len(CALLS)]
            out.append((text, Expect.CALLS, voices.synthesise(by[k % len(by)], text)))
    files = real_recordings(speaker)
    for i in sorted(rng.choice(len(files), min(count, len(files)), replace=False)):
        digit = int(files[i].stem.split("_")[0])
        out.append((number_words(digit), Expect.COUNT, read_wav(files[i]).astype(np.float32) / 32768))
    return out


def recordings(babble_path: Path, speaker: str | None, count: int, talk_after: bool = False) -> list[dict]:
    rng = np.random.default_rng(SEED)
    talkers, _ = build.load_clips(babble_path)
    out = []
    for text, expect, speech in said(speaker, rng, count):
        speech = speech * (PEAK / (float(np.max(np.abs(speech))) + 1e-9))
        before = int(rng.uniform(*BEFORE_S) * RATE)
        n = before + len(speech) + int(AFTER_S * RATE)
        babble = augment.babble_track(talkers, n, int(rng.choice([2, 5])), rng)
        if talk_after:  # quiet until the voice ends, then the table talks on
            babble[:before + voiced_span(speech)[1]] = 0
            out += said_into(babble, speech, before, AFTER_LEVELS, rng, text, expect)
        else:
            out += said_into(babble, speech, before, LEVELS, rng, text, expect)
    return out


def voiced_span(speech: np.ndarray, peak: float = PEAK) -> tuple[int, int]:
    """The first and last sample of `speech` (at `peak`, the benchmark's) that the voice reaches."""
    active = np.flatnonzero(np.abs(speech) > 0.02 * peak)
    return int(active[0]), int(active[-1])


def said_into(room: np.ndarray, speech: np.ndarray, before: int, levels, rng: np.random.Generator,
              text: str, expect: Expect) -> list[dict]:
    """`speech` (float, at the benchmark's peak) said `before` samples into `room` (talk as
    long as the recording, at any level), over the benchmark's hiss, at each of `levels` (dB
    under the speech; None: no talk): one recording each, with where the voice starts and ends."""
    n = len(room)
    voice = np.zeros(n, np.float32)
    voice[before:before + len(speech)] = speech
    start, end = (before + at for at in voiced_span(speech))
    out = []
    for level in levels:
        mixed = voice + rng.normal(0, FLOOR / 32768, n).astype(np.float32)
        if level is not None:
            mixed += room * np.float32(np.sqrt(speech_power(speech) / 10 ** (level / 10)))
        audio = np.clip(mixed * 32768, -32768, 32767).astype(np.int16)
        out.append({"level": level, "text": text, "expect": expect, "start": start, "end": end, "audio": audio})
    return out


def judge(files: list[dict], settings: EndpointSettings, recogniser=None,
          hand_sizes: frozenset[int] = frozenset(), hand_pause: bool = True) -> dict:
    """Per level: calls, calls with an utterance of their own, calls split, calls acted on
    right and wrongly, calls acted on in utterances of the talk alone, and how long after each
    call's end it was acted on (s). `hand_sizes`: counts are heard where a hand of that many
    dice may be said, as at a reveal, with the pause a hand may hold (unless not `hand_pause`)."""
    recogniser = recogniser or CallRecogniser()
    rows: dict = {}
    for f in files:
        recogniser.expect(f["expect"], hand_sizes)
        listener = Listener(recogniser, settings)
        if hand_pause:
            listener.allow_pause(pause_allowed(f["expect"], hand_sizes), hand=True)
        spans = list(listener.recording(f["audio"]))
        start, end = f["start"], f["end"]
        row = rows.setdefault(f["level"], {**dict.fromkeys(("calls", "own", "split", "right", "wrong", "babble"), 0),
                                           "known_after": []})
        row["calls"] += 1
        row["own"] += any(start - 0.7 * RATE <= s.start <= start + 0.15 * RATE and s.end >= end - 0.15 * RATE
                          for s in spans)
        row["split"] += any(start + 0.15 * RATE < s.start < end - 0.15 * RATE for s in spans)
        acted = [s for s in spans if s.result.text and s.result.confidence >= ENGINE_THRESHOLD]
        on_call = [s for s in acted if s.start < end and s.end > start]
        away = [s for s in acted if not (s.start < end and s.end > start)]
        if on_call:
            row["right" if on_call[0].result.text == f["text"] else "wrong"] += 1
            row["known_after"].append((on_call[0].detected_at - end) / RATE)
        row["babble"] += len(away)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.talking_room_dev",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--babble", type=Path, default=Path("build/speech/babble.npz"))
    parser.add_argument("--speaker", help="the real speaker whose digits are said (the held-out one: lucas)")
    parser.add_argument("--count", type=int, default=60, help="calls, and as many real digits")
    parser.add_argument("--talk-after", action="store_true",
                        help="a quiet room until the call ends, the table talking from then on")
    parser.add_argument("--hand-due", action="store_true",
                        help="the digits are heard as counts at a reveal, where a hand of one to five dice "
                             "may be said (and may hold a pause)")
    parser.add_argument("--no-hand-pause", action="store_true", help="with --hand-due: no longer pause allowed")
    parser.add_argument("--cache", type=Path, help="default: build/talking-room-dev[-after][-SPEAKER].npz")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="an EndpointSettings field, e.g. louder_talker_db=10 (none: None)")
    args = parser.parse_args(argv)
    changes = setting_changes(args.set, parser)
    settings = dataclasses.replace(EndpointSettings(), **changes)
    cache = args.cache or Path(f"build/talking-room-dev{'-after' if args.talk_after else ''}"
                               f"{'-' + args.speaker if args.speaker else ''}.npz")
    if cache.exists():
        audio, columns = build.load_clips(cache)
        files = [{"level": None if lv < 0 else int(lv), "text": str(t), "expect": Expect[str(e)],
                  "start": int(s), "end": int(e2), "audio": a}
                 for a, lv, t, e, s, e2 in zip(audio, columns["level"], columns["text"], columns["expect"],
                                              columns["start"], columns["end"])]
    elif not args.babble.exists():
        parser.error(f"{args.babble} not found: build it with python -m training.build")
    else:
        files = recordings(args.babble, args.speaker, args.count, args.talk_after)
        cache.parent.mkdir(parents=True, exist_ok=True)
        build.save_clips(cache, [f["audio"] for f in files],
                         level=[-1 if f["level"] is None else f["level"] for f in files],
                         text=[f["text"] for f in files], expect=[f["expect"].name for f in files],
                         start=[f["start"] for f in files], end=[f["end"] for f in files])
    print(f"{len(files)} recordings; settings changed: {changes or 'none'}")
    print_table(judge(files, settings, hand_sizes=frozenset(range(1, 6)) if args.hand_due else frozenset(),
                      hand_pause=not args.no_hand_pause))
    return 0


def by_level(rows: dict) -> list[tuple[int | None, dict]]:
    """The rows of `judge`, clean first, then from the quietest babble to the loudest."""
    return sorted(rows.items(), key=lambda kv: -(kv[0] if kv[0] is not None else 99))


def print_table(rows: dict) -> None:
    print("babble dB | calls | own utterance | split | acted on right | wrong | acted on in the talk alone "
          "| acted on after the call ends, p50 / p90 ms")
    for level, row in by_level(rows):
        n = row["calls"]
        after = np.array(row.get("known_after", [])) * 1000
        known = f"{np.median(after):.0f} / {np.percentile(after, 90):.0f}" if len(after) else "-"
        print(f"{'clean' if level is None else level:>9} | {n:5} | {100 * row['own'] / n:12.1f}% | "
              f"{100 * row['split'] / n:4.1f}% | {100 * row['right'] / n:13.1f}% | "
              f"{100 * row['wrong'] / n:4.1f}% | {row['babble']:26} | {known}")


if __name__ == "__main__":
    raise SystemExit(main())
