"""The `hear`, `models` and `devices` commands, and the speech-source factory for `play`."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from companion.calls import call_to_json, describe_call, parse_call_or_none
from companion.errors import CompanionError
from companion.listen.audio import SAMPLE_RATE, read_wav, recorded_nothing, wav_length
from companion.listen import ENGINES
from companion.listen.engine import ENGINE_THRESHOLD, Recognition
from companion.listen.errors import AudioFormatError
from companion.listen.microphone import list_microphones
from companion.listen.sources import decode_span, expand_paths, make_engine
from companion.listen.vosk_engine import DEFAULT_MODEL, download, find_model, models_dirs, user_models_dir
from companion.sources import Expect, names_and_files

__all__ = ["add_hear_arguments", "run_hear", "add_models_arguments", "run_models",
           "add_devices_arguments", "run_devices"]


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engine", choices=ENGINES, default="auto",
                        help="speech engine (auto: Vosk if a model is installed, else the bundled "
                             "call recogniser)")
    parser.add_argument("--model", help="a Vosk model folder, or a network (.npz) for the "
                        "bundled recogniser")


def add_hear_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", help="WAV files or folders (any rate, channels, PCM or float)")
    parser.add_argument("--json", action="store_true", help="one JSON line per file")
    parser.add_argument("--players", nargs="*", default=[], help="player names to listen for")
    parser.add_argument("--expect", choices=[e.value for e in Expect], default=Expect.ANY.value,
                        help="listen only for what can be said at one moment of a game: "
                             "calls (bidding), count (after a challenge) or any (default)")
    add_engine_arguments(parser)


def _check_names(players) -> None:
    from companion.calls import check_player_names
    from companion.rules import Game

    check_player_names(players)
    if len(players) > 1:
        Game(players)  # each a different name


def run_hear(args: argparse.Namespace) -> int:
    """One line per file; a file or folder that cannot be read is reported and the rest
    still heard (exit 1), while a missing engine or model stops everything (exit 2)."""
    failed = 0
    args.players, args.files = names_and_files(args.players, args.files)
    if not args.files:
        print("companion: name the WAV files or folders to hear: companion hear FILE...", file=sys.stderr)
        return 2
    try:
        _check_names(args.players)  # as `play` checks them, so a name hear takes is one play takes
        engine = make_engine(args.engine, args.model, args.players,
                             lambda line: print(line, file=sys.stderr))
        engine.expect(Expect(args.expect))
        for arg in args.files:
            try:
                paths = expand_paths([arg])
            except AudioFormatError as err:
                paths = []
                failed += _report(err)
            for path in paths:  # a bad file in a folder leaves the rest of the folder heard
                try:
                    _hear(engine, path, args)
                except AudioFormatError as err:
                    failed += _report(err)
    except CompanionError as err:
        print(f"companion: {err}", file=sys.stderr)
        return 2
    return 1 if failed else 0


def _report(err: AudioFormatError) -> int:
    print(f"companion: {err}", file=sys.stderr, flush=True)
    return 1


# `hear` reads a file as one call: a longer recording (an evening's) is refused, not read
# whole into memory (gigabytes for an hour at 48 kHz) to be heard as a single call.
HEAR_LONGEST_S = 120


def _hear(engine, path: Path, args: argparse.Namespace) -> None:
    # Each file is one utterance here, trimmed by the endpointer as in `play`.
    seconds = wav_length(path) / SAMPLE_RATE
    if seconds > HEAR_LONGEST_S:
        whole = math.ceil(seconds)  # 120.6 s is not "2 min 0 s", which would be allowed
        long = f"{whole // 60} min {whole % 60} s"
        raise AudioFormatError(
            f"{path}: {long} long, and hear reads a file as one call (up to {HEAR_LONGEST_S // 60} "
            f"minutes): play --input wav hears a long recording call by call")
    samples = read_wav(path)
    from companion.listen.endpoint import EndpointSettings, utterances

    found = utterances(samples)
    if len(found) > 1:  # one line per file is the format; say what it leaves out
        print(f"companion: {path} holds {len(found)} utterances; hear reads a file as one call "
              "(play --input wav hears them one by one)", file=sys.stderr, flush=True)
    if recorded_nothing(samples) or (not found and len(samples) > EndpointSettings().max_utterance * SAMPLE_RATE):
        # Nothing recorded, or longer than any call with no speech starting in it: no call.
        # Decoding it (a file of a quiet room may run for minutes) would only find words in the noise.
        result = Recognition("", voiced=False)
    else:
        result = decode_span(engine, samples, found=found)
    call = parse_call_or_none(result.text, args.players)
    # "call" is what the referee would act on: null below the confidence line or where no
    # voice was heard, while "text" still shows what the recogniser made of the sound.
    if result.confidence < ENGINE_THRESHOLD or result.voiced is False:
        call = None
    if args.json:
        alternatives = [{"text": text, "score": round(score, 4)} for text, score in
                        zip(result.alternatives, result.alternative_scores or (None,) * 99)]
        print(json.dumps({"file": str(path), "text": result.text,
                          "call": call_to_json(call),
                          "confidence": round(result.confidence, 4),
                          "alternatives": alternatives}), flush=True)
    else:
        heard = describe_call(call) if call else (
            "(no call: no voice in it)" if result.voiced is False else "(no call)")
        print(f"{path}: {heard}   [heard {result.text!r}, "
              f"confidence {result.confidence:.2f}]", flush=True)


def add_models_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="models_command", required=True, metavar="{download,list}")
    get = sub.add_parser("download", help="fetch a Vosk model into the user data folder")
    get.add_argument("name", nargs="?", default=DEFAULT_MODEL, help=f"the Vosk model (default: {DEFAULT_MODEL})")
    get.add_argument("--url", help=argparse.SUPPRESS)  # for tests and mirrors
    sub.add_parser("list", help="show installed speech models")


def _progress(done: int, total: int) -> None:
    if total:
        filled = int(30 * done / total)
        print(f"\r[{'#' * filled}{'.' * (30 - filled)}] {done >> 20}/{total >> 20} MiB",
              end="", file=sys.stderr, flush=True)


def run_models(args: argparse.Namespace) -> int:
    try:
        if args.models_command == "download":
            path = download(args.name, user_models_dir(), getattr(args, "url", None), _progress)
            print(file=sys.stderr)
            print(f"installed {path}")
            return 0
        found = [p for folder in models_dirs() if folder.is_dir()
                 for p in sorted(folder.iterdir()) if p.is_dir() and not p.name.startswith(".")]
        active = find_model()
        if not found:
            print(f"(no Vosk model in {' or '.join(str(folder) for folder in models_dirs())})", file=sys.stderr)
        for path in found:
            print(f"{path}{'   (used by --engine auto)' if path == active else ''}")
        print("bundled call recogniser" + ("" if active else "   (used by --engine auto)"))
        return 0
    except CompanionError as err:
        print(file=sys.stderr)
        print(f"companion: {err}", file=sys.stderr)
        return 2


def add_devices_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def run_devices(args: argparse.Namespace) -> int:
    try:
        mics = list_microphones()
    except CompanionError as err:
        print(f"companion: {err}", file=sys.stderr)
        return 2
    if not mics:
        print("no microphones found: plug one in (a USB microphone or a headset), then run this again")
        return 1
    for index, name in mics:
        print(f"{index}: {name}")
    return 0
