"""The command line: arguments become frozen settings, then the rooms are wired together.

This is the only module that knows every room; device libraries are imported only when the
command that needs them runs, so `companion play --input text` starts in a blink anywhere.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from companion.display import DEFAULT_HOST, DEFAULT_PORT
from companion.errors import CompanionError
from companion.listen import ENGINES
from companion.rules.presets import MOST_DICE


@dataclass(frozen=True)
class PlaySettings:
    players: tuple[str, ...]
    preset: str | None  # None: the default preset (or, resuming, the game's own)
    house_rules: Path | None
    starting_dice: int | None
    first: str | None
    input: str  # "text", "wav" or "mic"
    paths: tuple[Path, ...]
    mute: bool
    wav_out: Path | None
    journal: Path | None
    resume: str | None  # None: a new game; "": the newest saved game; else a name or path
    camera: int | None
    camera_images: tuple[Path, ...]
    profile: Path | None
    engine: str
    model: Path | None
    mic: str | None
    display: bool = False
    display_host: str = DEFAULT_HOST
    display_port: int = DEFAULT_PORT
    # Each player says their name before the game (sources.NAME_PHRASES), so it is known by its sound.
    # None: at the microphone, not from recordings (their files are the game's calls).
    learn_names: bool | None = None

    def __post_init__(self) -> None:
        # Refused before any device, model or journal is touched.
        if any(p.suffix.lower() == ".wav" for p in self.camera_images):  # `--camera-images a.png b.wav`
            raise CompanionError("--camera-images takes every file after it as a photo: name the recordings before it")
        if self.input == "wav" and not self.paths:
            raise CompanionError("name the recordings to play from: companion play --input wav FILE_OR_FOLDER...")
        if self.input != "wav" and self.paths:
            hint = ("; add --input wav to play recordings" if self.paths[0].suffix.lower() == ".wav" else
                    f"; to play a typed script, pipe it in: companion play --input text < {self.paths[0]}")
            raise CompanionError(f"files are only read with --input wav (got {self.paths[0]} "
                                 f"with --input {self.input}){hint}")
        if self.starting_dice is not None and not 1 <= self.starting_dice <= MOST_DICE:
            raise CompanionError(f"--dice must be 1 to {MOST_DICE} (as many as a cup holds), not {self.starting_dice}")
        if not 0 <= self.display_port <= 65535:
            raise CompanionError(f"--display-port must be a port number (0-65535), not {self.display_port}")
        if self.camera is not None and self.camera_images:
            raise CompanionError("use either --camera N or --camera-images, not both")
        if self.mic and self.input != "mic":
            raise CompanionError(f"--mic {self.mic} is the microphone to listen to: it needs --input mic")
        speech_only = [flag for flag, value in (("--engine", self.engine != "auto"), ("--model", self.model)) if value]
        if speech_only and self.input == "text":
            raise CompanionError(f"{', '.join(speech_only)} choose how calls are heard: they need --input mic or wav")
        if self.learn_names and self.input == "text":
            raise CompanionError("--learn-names learns how players say their names: it needs --input mic or wav")
        if self.profile is not None and not self.uses_camera:
            raise CompanionError(f"--profile {self.profile} is for reading the dice: "
                                 "give it with --camera N or --camera-images")
        if self.resuming:
            given = [flag for flag, value in (("--players", self.players), ("--rules", self.preset),
                                              ("--first", self.first), ("--dice", self.starting_dice),
                                              ("--house-rules", self.house_rules))
                     if value]
            if given:
                raise CompanionError(f"a resumed game keeps its own players and rules: leave out {', '.join(given)}")
            if self.resume and self.journal is not None:
                raise CompanionError(f"use either --resume {self.resume} or --journal {self.journal} "
                                     "(--resume --journal PATH resumes that journal)")

    @property
    def resuming(self) -> bool:
        return self.resume is not None

    @property
    def uses_camera(self) -> bool:
        return self.camera is not None or bool(self.camera_images)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "PlaySettings":
        from companion.sources import names_and_files

        players, files = names_and_files(args.players, args.files)
        return cls(
            players=tuple(players),
            preset=args.rules,
            house_rules=args.house_rules,
            starting_dice=args.dice,
            first=args.first,
            input=args.input,
            paths=tuple(Path(f) for f in files),
            mute=args.mute, wav_out=args.wav_out, journal=args.journal, resume=args.resume,
            camera=args.camera, camera_images=tuple(args.camera_images or ()), profile=args.profile,
            engine=args.engine, model=args.model, mic=args.mic,
            display=args.display or args.display_host is not None or args.display_port is not None,
            display_host=args.display_host or DEFAULT_HOST,
            display_port=DEFAULT_PORT if args.display_port is None else args.display_port,
            learn_names=args.learn_names,
        )


def _play_parser(sub) -> None:
    p = sub.add_parser("play", help="referee a game", description="Referee a game of Perudo.")
    p.add_argument("--players", nargs="+", metavar="NAME", help="players in seating order")
    p.add_argument("--rules", metavar="PRESET", help="rules preset (see `companion rules`; default asmodee)")
    p.add_argument("--house-rules", type=Path, metavar="TOML", help="TOML file of rule fields to override")
    p.add_argument("--dice", type=int, metavar="N", help="starting dice per player (default 5)")
    p.add_argument("--first", metavar="NAME", help="who opens the first round (default: the first named)")
    p.add_argument("--input", choices=("text", "wav", "mic"), default="mic",
                   help="where calls come from: typed or piped text, WAV files, or the microphone; "
                        "--input wav - reads a WAV path a line from standard input after each "
                        "'listening>' line (a bad path is skipped; end of input ends the game)")
    p.add_argument("files", nargs="*", type=Path, metavar="FILE",
                   help="WAV files or folders for --input wav, or - for paths from standard input")
    p.add_argument("--mute", action="store_true", help="print announcements only, do not speak")
    p.add_argument("--wav-out", type=Path, metavar="WAV", help="also write every announcement into this WAV file")
    p.add_argument("--journal", type=Path, metavar="PATH", help="journal file (default: a new file in the data dir)")
    p.add_argument("--resume", nargs="?", const="", metavar="SESSION", help="continue a saved game: a journal or a session name (default: the newest)")
    p.add_argument("--camera", type=int, metavar="N", help="read the dice at each reveal from camera N")
    p.add_argument("--camera-images", nargs="+", type=Path, metavar="IMAGE",
                   help="read the reveals from photos instead of a camera: one photo per reveal, "
                        "in order; once they run out, the players are asked for the count")
    p.add_argument("--profile", type=Path, metavar="DIR", help="camera calibration profile")
    p.add_argument("--engine", choices=ENGINES, default="auto", help="speech engine")
    p.add_argument("--model", type=Path, metavar="PATH",
                   help="Vosk model folder, or a network (.npz) for the bundled recogniser")
    p.add_argument("--mic", metavar="DEVICE", help="microphone (see `companion devices`)")
    p.add_argument("--learn-names", action=argparse.BooleanOptionalAction, default=None,
                   help="before the game, each player says their name before calza and before "
                        "one two three, so the bundled engine knows the names by their voices "
                        "(default: with --input mic)")
    p.add_argument("--display", action="store_true",
                   help=f"show the game on a web page (http://{DEFAULT_HOST}:{DEFAULT_PORT} by default)")
    p.add_argument("--display-host", metavar="HOST", help=f"address the page listens on (default {DEFAULT_HOST}, "
                   "this machine only; 0.0.0.0 lets a tablet or TV on the network see it)")
    p.add_argument("--display-port", type=int, metavar="PORT", help=f"the page's port (default {DEFAULT_PORT})")


# Commands whose options and code live in their own rooms:
# name -> (module, the room's name for it, help).
ROOM_COMMANDS = {
    "hear": ("companion.listen.commands", "hear", "recognise calls in WAV files"),
    "models": ("companion.listen.commands", "models", "list or download speech models"),
    "devices": ("companion.listen.commands", "devices", "list microphones"),
    "see": ("companion.vision.commands", "see", "read dice in images or from a camera"),
    "calibrate": ("companion.vision.commands", "calibrate", "calibrate the camera for your dice"),
    "recap": ("companion.recap", "recap", "an HTML page with charts of a finished or paused game"),
    "demo": ("companion.demo", "demo", "watch and hear a whole game played by synthetic voices"),
}


class _Parser(argparse.ArgumentParser):
    """argparse, with a mistake in the options said in one line (and where to read more)."""

    def error(self, message: str):
        self.exit(2, f"companion: {message} (see: {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; `command` names the room command whose options to load."""
    parser = _Parser(prog="companion", description="An offline, hands-free Perudo referee.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _play_parser(sub)

    r = sub.add_parser("rules", help="list the rule presets and what each changes",
                       description="List the rule presets and what each changes from the base rules.")
    r.add_argument("preset", nargs="?", help="show every field of one preset")

    for name, (module, room, help_text) in ROOM_COMMANDS.items():
        room_parser = sub.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        if name == command:  # only the room in use is imported: `play` starts without numpy or cv2
            getattr(importlib.import_module(module), f"add_{room}_arguments")(room_parser)
    bench = sub.add_parser("bench", help="speech and vision benchmarks")
    bench.add_argument("suite", choices=("speech", "vision"))
    bench.add_argument("bench_args", nargs=argparse.REMAINDER, help="options for the benchmark")
    return parser


def _command_in(argv: Sequence[str]) -> str | None:
    return next((arg for arg in argv if not arg.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(_command_in(argv)).parse_args(argv)
    try:
        if args.command == "play":
            status = run_play(PlaySettings.from_args(args))
        elif args.command == "rules":
            status = run_rules(args.preset)
        elif args.command in ROOM_COMMANDS:
            module, room, _ = ROOM_COMMANDS[args.command]
            status = getattr(importlib.import_module(module), f"run_{room}")(args)
        else:  # bench: beside the package, with the training tools they need
            status = importlib.import_module(f"benchmarks.{args.suite}").main(list(args.bench_args))
        sys.stdout.flush()  # what is still buffered fails here, where the handlers below catch it
        return status
    except CompanionError as error:
        for line in str(error).splitlines() or [""]:  # several problems at once: one line each
            print(f"companion: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ncompanion: stopped.", file=sys.stderr)
        return 130
    except OSError as error:  # a path that cannot be used (too long, under a file), or the output's
        if error.filename is not None:
            print(f"companion: {error.filename}: {error.strerror or error}", file=sys.stderr)
            return 2
        if error.errno not in _OUTPUT_ERRORS:  # output whose reader went (`| head`) or whose disk is full
            raise
        if not isinstance(error, BrokenPipeError):
            print(f"companion: cannot write the output: {error.strerror}", file=sys.stderr)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit's flush is quiet
        return 141 if isinstance(error, BrokenPipeError) else 2


_OUTPUT_ERRORS = (errno.EPIPE, errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT)


def run_rules(name: str | None) -> int:
    from companion.rules.presets import preset_lines

    print("\n".join(preset_lines(name)))
    return 0


def _build_rules(settings: PlaySettings):
    from companion.rules.presets import DEFAULT_PRESET, get_preset, load_house_rules

    rules = get_preset(settings.preset or DEFAULT_PRESET)
    if settings.house_rules:
        rules = load_house_rules(settings.house_rules, rules, preset_given=settings.preset is not None,
                                 dice_given=settings.starting_dice)
    if settings.starting_dice is not None:
        # A regained die never exceeds the start, unless the house rules let a hand grow
        # past it (max_dice above their own starting_dice): that stays.
        grows = settings.house_rules and rules.max_dice > rules.starting_dice
        most = max(rules.max_dice, settings.starting_dice) if grows else settings.starting_dice
        rules = rules.replace(starting_dice=settings.starting_dice, max_dice=most)
    return rules


def make_speaker(settings: PlaySettings, journal: Path | None = None):
    from companion.voice.speakers import announcer, check_wav_out

    check_wav_out(settings.wav_out, [*(p for p in (journal, settings.profile) if p), *settings.paths,
                                     *settings.camera_images])
    return announcer(settings.mute, settings.wav_out,
                     lambda line: print(f"companion: {line}", file=sys.stderr))


def _source(settings: PlaySettings, game):
    from companion.sources import TextSource

    if settings.input == "text":
        return TextSource()
    from companion.listen.inputs import SpeechSettings, open_source
    from companion.listen.vocabulary import MAX_COUNT

    # Listen for counts up to the most dice this table can hold (a bigger table than the
    # rulebooks' six players needs "forty"), without widening the grammar for the rest; an
    # engine that cannot hear that far says so as it starts.
    most_dice = len(game.players) * game.rules.max_dice
    learn_names = settings.input == "mic" if settings.learn_names is None else settings.learn_names
    speech = SpeechSettings(engine=settings.engine, model=settings.model, device=settings.mic,
                            max_count=max(MAX_COUNT, most_dice), learn_names=learn_names)
    return open_source(settings.input, paths=settings.paths, players=game.players, settings=speech)


def _counter(settings: PlaySettings):
    if not settings.uses_camera:
        return None
    from companion.vision.frames import CameraFrames, ImageFrames
    from companion.vision.profile import load_profile
    from companion.vision.reader import DiceReader
    from companion.vision.reveal import CameraCounter

    profile = load_profile(settings.profile) if settings.profile else None
    frames = ImageFrames(settings.camera_images) if settings.camera_images else CameraFrames(settings.camera)
    return CameraCounter(frames, DiceReader(profile), warn=lambda note: print(f"companion: {note}", file=sys.stderr))


def _display(settings: PlaySettings, game):
    """The table's web page, if asked for (None when not, or when it cannot start)."""
    if not settings.display:
        return None
    from companion.display.live import open_display

    return open_display(game, settings.display_host, settings.display_port,
                        lambda line: print(f"companion: {line}", file=sys.stderr))


def run_play(settings: PlaySettings) -> int:
    from companion import journal as journals
    from companion.calls import check_player_names
    from companion.hearing import HearingPolicy
    from companion.listen.vocabulary import aces_to_say
    from companion.referee import Referee, RefereeSettings
    from companion.rules import Game

    journal = None
    resumed = None
    if settings.resuming:
        path = settings.journal or journals.find_session(settings.resume or None)
        resumed = journals.resume(path)
        game, journal = resumed.game, resumed.journal
        if resumed.dropped is not None:
            print(f"companion: {resumed.dropped.describe()}", file=sys.stderr)
        for note in resumed.notes:
            print(f"companion: {note}", file=sys.stderr)
    else:
        if not settings.players:
            raise CompanionError("name the players: companion play --players Ana Ben Cleo")
        check_player_names(settings.players)
        game = Game(settings.players, _build_rules(settings), settings.first)
        path = settings.journal or journals.new_session_path()
        journals.check_new(path)
    display = None
    try:
        # Devices before the journal: a missing microphone, camera or profile must not
        # leave an empty game behind; the photos first, before the speech engine's wait.
        counter = _counter(settings)
        speaker = make_speaker(settings, path)  # before the engine's wait: it checks --wav-out
        source = _source(settings, game)
        if journal is None:
            journal = journals.Journal.start(path, game)
        print(f"companion: journal {path}", file=sys.stderr)
        display = _display(settings, game)
        if display is not None:
            journal, speaker = display.watch_journal(journal), display.watch_speaker(speaker)
            source, counter = display.watch_source(source), display.watch_counter(counter)
        reveal_dir = path.with_name(path.stem + "-reveals") if counter is not None else None
        # Typed lines are trusted; speech is judged on its engine's confidence scale.
        hearing = HearingPolicy() if settings.input == "text" else HearingPolicy.for_speech()
        aces_as = aces_to_say(settings.input != "text", game.rules.ace_word)
        referee = Referee(game, speaker, journal, counter, RefereeSettings(hearing, reveal_dir, aces_as),
                          resumed=resumed, log=lambda text: print(text, file=sys.stderr))
        try:
            with _stopped_by_sigterm():
                referee.run(source, resumed=settings.resuming)
        except KeyboardInterrupt as stop:  # Ctrl-C, or a service manager stopping the game
            print("\ncompanion: stopped; every call so far is in the journal.", file=sys.stderr)
            print(f"companion: {journals.last_line(path)}", file=sys.stderr)
            return 128 + getattr(stop, "signal", signal.SIGINT)
        except CompanionError as error:
            # A device lost mid-game (the microphone unplugged): the journal has every call so far.
            print(f"companion: {error}", file=sys.stderr)
            print(f"companion: {journals.last_line(path)}", file=sys.stderr)
            return 2
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()
            if display is not None:
                display.close()
    finally:
        if journal is not None:
            journal.close()
    print(f"companion: {journals.last_line(path)}", file=sys.stderr)
    return 0


@contextlib.contextmanager
def _stopped_by_sigterm():
    """While the game runs, SIGTERM stops it the way Ctrl-C does: the pause line is printed
    instead of the process vanishing ("Terminated")."""
    def stop(signum, frame):
        stopped = KeyboardInterrupt()
        stopped.signal = signum  # the exit status says which: 128 + 15
        raise stopped

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
