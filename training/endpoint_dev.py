"""A development set for the endpointer in babble, apart from the benchmark's voices and babble:

    python -m training.endpoint_dev [--set stop_below_peak_db=20 ...]

Calls said by training voices (piper and espeak-ng) and digits said by the real speakers
training hears (never the held-out one), in babble of the training talkers
(build/speech/babble.npz, from `python -m training.build`) at 24, 18, 12 and 6 dB, clean,
and in pink noise at those levels, with the benchmark's room before and after. Each file goes
through the endpointer alone (no recogniser), and per level it prints how often no utterance held any of the call (the call
missed), how often the end of the call was found before the recording ran out, how often an
utterance ended inside the call (the call cut short), and the delay from the end of speech
to the known end. `--set` changes EndpointSettings.
The recordings are kept (`--cache`) so that settings are compared on the same audio: piper
draws its own noise, so each new set says the calls a little differently.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import numpy as np

from benchmarks.speech_audio import mix, speech_end, speech_start
from benchmarks.speech_corpus import LEAD_S, PEAK, RATE
from companion.listen.audio import read_wav
from companion.listen.endpoint import FRAME, EndpointSettings, split
from training import augment, build, corpus, voices

SNRS = (24, 18, 12, 6)
SEED = 5


def real_recordings(speaker: str | None = None) -> list[Path]:
    """The real recordings (DIGIT_SPEAKER_TAKE.wav) of `speaker`, or else of the speakers
    training hears (never the held-out one)."""
    said_by = lambda p: p.stem.split("_")[1]  # noqa: E731
    return sorted(p for p in (build.REAL_DIR / "recordings").glob("*.wav")
                  if (said_by(p) == speaker if speaker else said_by(p) != build.HELD_OUT_SPEAKER))


def real_digits(count: int, rng: np.random.Generator) -> list[np.ndarray]:
    """`count` recordings of digits by the real speakers training hears (float, -1..1)."""
    files = real_recordings()
    if not files:
        return []
    chosen = rng.choice(len(files), min(count, len(files)), replace=False)
    return [read_wav(files[i]).astype(np.float32) / 32768 for i in sorted(chosen)]


def recordings(babble_path: Path, calls: int = 120, digits: int = 60
               ) -> list[tuple[str, int | None, int, int, np.ndarray]]:
    """(room: babble, clean or pink; SNR, None clean; samples where the call starts and
    ends; int16 audio) for each call in each room."""
    rng = np.random.default_rng(SEED)
    talkers, _ = build.load_clips(babble_path)
    said_by = voices.list_voices("piper", 6, 77) + voices.list_voices("espeak", 6, 77)
    said = [voices.synthesise(said_by[k % len(said_by)], item.text)
            for k, item in enumerate(corpus.items(calls, 4242))]
    out, spoken = [], []
    for speech in said + real_digits(digits, rng):
        speech = speech * (PEAK / (float(np.max(np.abs(speech))) + 1e-9))  # the benchmark's level
        start = int(LEAD_S * RATE) + speech_start(speech)
        end = int(LEAD_S * RATE) + speech_end(speech)
        babble = augment.babble_track(talkers, 6 * RATE, int(rng.integers(5, 7)), rng)
        out += [("babble", snr, start, end, mix(speech, babble, snr, rng)) for snr in SNRS]
        spoken.append((speech, start, end))
    # (a generator of their own, so the babble mixes stay those of the babble-only set)
    rng = np.random.default_rng(SEED + 1)
    pink = augment.coloured_noise(60 * RATE, rng, 1.0)
    for speech, start, end in spoken:
        out.append(("clean", None, start, end, mix(speech, None, None, rng)))
        out += [("pink", snr, start, end, mix(speech, pink, snr, rng)) for snr in SNRS]
    return out


def judge(files: list[tuple[str, int | None, int, int, np.ndarray]], settings: EndpointSettings
          ) -> dict[tuple[str, int | None], dict]:
    """Per room and level: calls, calls no utterance held any of, ends found before the
    recording ran out, calls cut short, delays (s)."""
    by_level: dict[tuple[str, int | None], dict] = {}
    for room, snr, start, end, audio in files:
        segments = split(audio, settings)
        found = [s for s in segments if end <= s.detected_at < len(audio) - FRAME]
        # an utterance that ended inside the call (not one of the room's talk that ended
        # where the call began)
        cut = any(s.detected_at < end - 0.1 * RATE and s.end > max(start, LEAD_S * RATE) + 0.1 * RATE
                  for s in segments)
        missed = not any(s.start < end and s.end > start for s in segments)
        row = by_level.setdefault((room, snr), {"calls": 0, "missed": 0, "found": 0, "cut": 0, "delays": []})
        row["calls"] += 1
        row["missed"] += missed
        row["cut"] += cut
        if found:
            row["found"] += 1
            row["delays"].append((found[0].detected_at - end) / RATE)
    return by_level


def setting_changes(options: list[str], parser: argparse.ArgumentParser) -> dict:
    """--set NAME=VALUE options -> EndpointSettings fields (VALUE none: None)."""
    changes: dict = {}
    for option in options:
        name, _, value = option.partition("=")
        if name not in {f.name for f in dataclasses.fields(EndpointSettings)}:
            parser.error(f"EndpointSettings has no {name!r}")
        default = getattr(EndpointSettings(), name)
        if value == "none":
            changes[name] = None
        elif isinstance(default, bool):
            changes[name] = value.lower() in ("1", "true", "yes")
        else:
            changes[name] = type(default if default is not None else 0.0)(value)
    return changes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.endpoint_dev", description=__doc__.split("\n\n")[0])
    parser.add_argument("--babble", type=Path, default=Path("build/speech/babble.npz"))
    parser.add_argument("--cache", type=Path, default=Path("build/endpoint-dev.npz"),
                        help="the recordings, made once and then reused")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="an EndpointSettings field, e.g. stop_below_peak_db=20 (none: None)")
    args = parser.parse_args(argv)
    changes = setting_changes(args.set, parser)
    settings = dataclasses.replace(EndpointSettings(), **changes)
    cached = build.load_clips(args.cache) if args.cache.exists() else None
    if cached and "room" in cached[1]:  # a cache from before clean and pink rooms is made again
        audio, columns = cached
        files = [(str(room), None if snr < 0 else int(snr), int(start), int(end), a)
                 for room, snr, start, end, a in zip(columns["room"], columns["snr"], columns["start"],
                                                     columns["end"], audio)]
    elif not args.babble.exists():
        parser.error(f"{args.babble} not found: build it with python -m training.build")
    else:
        files = recordings(args.babble)
        args.cache.parent.mkdir(parents=True, exist_ok=True)
        build.save_clips(args.cache, [f[4] for f in files], room=[f[0] for f in files],
                         snr=[-1 if f[1] is None else f[1] for f in files],
                         start=[f[2] for f in files], end=[f[3] for f in files])
    print(f"{len(files)} recordings; settings changed: {changes or 'none'}")
    print("room         | missed | end found | cut short | delay p50 / p90 ms")
    rows = judge(files, settings)
    for room, snr in sorted(rows, key=lambda k: (k[0], -(k[1] if k[1] is not None else 99))):
        row = rows[room, snr]
        d = np.array(row["delays"]) * 1000
        delay = f"{np.median(d):.0f} / {np.percentile(d, 90):.0f}" if len(d) else "-"
        name = room if snr is None else f"{room} {snr} dB"
        print(f"{name:12} | {100 * row['missed'] / row['calls']:5.1f}% | {100 * row['found'] / row['calls']:8.0f}% "
              f"| {100 * row['cut'] / row['calls']:8.0f}% | {delay}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
