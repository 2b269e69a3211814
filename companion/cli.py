"""The command line: arguments become frozen settings, then the rooms are wired together.

This is the only module that knows every room; device libraries are imported only when the
command that needs them runs, so `companion play --input text` starts in a blink anywhere.

Long: `play` joins every room (rules, journal, devices, display) and owns how a game starts
and stops (signals, a new game of the evening), which only this module may see all of.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import os
import signal
import sys
from pathlib import Path
from typing import Sequence

from companion.errors import CompanionError
from companion.play_settings import PlaySettings, add_play_parser


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

    help_for: str | None = None  # the command given, whose help to point to

    def error(self, message: str):
        prog = f"{self.prog} {self.help_for}" if self.help_for else self.prog
        self.exit(2, f"companion: {message} (see: {prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; `command` names the room command whose options to load."""
    parser = _Parser(prog="companion", description="An offline, hands-free Perudo referee.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_play_parser(sub)

    r = sub.add_parser("rules", help="list the rule presets and what each changes",
                       description="List the rule presets and what each changes from the base rules.")
    r.add_argument("preset", nargs="?", help="show every field of one preset")

    for name, (module, room, help_text) in ROOM_COMMANDS.items():
        room_parser = sub.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        if name == command:  # only the room in use is imported: `play` starts without numpy or cv2
            getattr(importlib.import_module(module), f"add_{room}_arguments")(room_parser)
    bench = sub.add_parser("bench", help="speech, talking-room and vision benchmarks")
    bench.add_argument("suite", choices=("speech", "talk", "vision"))
    bench.add_argument("bench_args", nargs=argparse.REMAINDER, help="options for the benchmark")
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    # an option the command does not know is reported by this parser: point to that command's help
    parser.help_for = command if command in sub.choices else None
    return parser


class _Version(argparse.Action):
    """--version, looked up only when asked for (reading the package's metadata costs every
    command's start)."""

    def __call__(self, parser, namespace, values, option_string=None):
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("companion")
        except PackageNotFoundError:  # run from a checkout that was never installed
            found = "(not installed)"
        print(f"companion {found}")  # on standard output, as argparse's own version action
        parser.exit(0)


def _command_in(argv: Sequence[str]) -> str | None:
    return next((arg for arg in argv if not arg.startswith("-")), None)


def _steady_streams() -> None:
    """Standard streams as a script, a launcher or a terminal may hand them over, made safe.

    A closed one is opened on /dev/null: else the first file the game opens takes its number,
    and a journal opened as descriptor 2 would collect every library's warnings. Text the
    output's encoding lacks (a "Ł" on a Latin-1 terminal) is written escaped, not a crash;
    input bytes that are not in the locale's encoding are kept as Python keeps them in file
    names (a path read from standard input still names its file), and TextSource refuses
    such a line as a call."""
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        if getattr(sys, name) is None:  # closed before Python started
            setattr(sys, name, open(fd, mode, closefd=False))
    for stream, errors in ((sys.stdin, "surrogateescape"), (sys.stdout, "backslashreplace"),
                           (sys.stderr, "backslashreplace")):
        with contextlib.suppress(AttributeError, ValueError, OSError):  # a test's stand-in, or a stream read already
            stream.reconfigure(errors=errors)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    _steady_streams()
    if not argv:  # what there is to do, rather than "COMMAND is required"
        build_parser().print_help(sys.stderr)
        return 2
    try:
        args = build_parser(_command_in(argv)).parse_args(argv)  # a room's options import it
        if args.command == "play":
            status = run_play(PlaySettings.from_args(args))
        elif args.command == "rules":
            status = run_rules(args.preset)
        elif args.command in ROOM_COMMANDS:
            module, room, _ = ROOM_COMMANDS[args.command]
            status = getattr(importlib.import_module(module), f"run_{room}")(args)
        else:
            status = _bench(args.suite).main(list(args.bench_args))
        sys.stdout.flush()  # what is still buffered fails here, where the handlers below catch it
        return status
    except CompanionError as error:
        for line in str(error).splitlines() or [""]:  # several problems at once: one line each
            print(f"companion: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:
        _tell("\ncompanion: stopped.")
        return 128 + getattr(stop, "signal", signal.SIGINT)
    except ImportError as error:  # a package or a system library gone (OpenCV without libGL)
        if (error.name or "").split(".")[0] in ("companion", "benchmarks", "training"):
            raise  # the program's own import gone wrong: a bug, with its traceback
        what = f"the Python package {error.name}" if error.name else "a library"
        print(f"companion: {what} cannot be loaded ({error}); ./setup.sh installs what the companion "
              "needs (from a checkout; else: apt-get install espeak-ng libportaudio2 libgl1 libglib2.0-0, "
              "then pip install the companion again)", file=sys.stderr)
        return 2
    except OSError as error:  # a path that cannot be used (too long, under a file), or the output's
        if error.filename is not None:
            print(f"companion: {error.filename}: {error.strerror or error}", file=sys.stderr)
            return 2
        if error.errno not in _OUTPUT_ERRORS:  # output whose reader went (`| head`) or whose disk is full
            raise
        if not isinstance(error, BrokenPipeError):
            _tell(f"companion: cannot write the output: {error.strerror}")  # stderr may be what went
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit's flush is quiet
        return 141 if isinstance(error, BrokenPipeError) else 2


_OUTPUT_ERRORS = (errno.EPIPE, errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT)


def _bench(suite: str):
    """A benchmark's module. They live in the repository beside the package, with the training
    tools they use, not in an installed package (whose site-packages would hold a `benchmarks`
    of any other project's under the same name)."""
    checkout = Path(__file__).resolve().parents[1]
    # a checkout, not site-packages with another project's `benchmarks` beside the package
    if not ((checkout / "pyproject.toml").is_file() and (checkout / "benchmarks" / f"{suite}.py").is_file()):
        raise CompanionError("the benchmarks run from a checkout of the repository (they use its training "
                             "tools and the data beside it); this installed companion has none")
    if str(checkout) not in sys.path[:1]:
        sys.path.insert(0, str(checkout))
    return importlib.import_module(f"benchmarks.{suite}")


def run_rules(name: str | None) -> int:
    from companion.rules.presets import preset_lines

    print("\n".join(preset_lines(name)))
    return 0


def _build_rules(settings: PlaySettings):
    from companion.play_settings import load_house_rules
    from companion.rules.presets import DEFAULT_PRESET, get_preset

    rules = get_preset(settings.preset or DEFAULT_PRESET)
    if settings.house_rules:
        rules = load_house_rules(settings.house_rules, rules, preset_given=settings.preset is not None,
                                 dice_given=settings.starting_dice)
    elif settings.starting_dice is not None:  # (house rules take --dice themselves)
        rules = rules.with_starting_dice(settings.starting_dice)
    return rules


def make_speaker(settings: PlaySettings, journal: Path | None = None, new_players: Sequence[str] = ()):
    """`new_players`: a new game's players, whose names a voice must say apart."""
    from companion.voice.speakers import announcer, check_wav_out

    check_wav_out(settings.wav_out, [*(p for p in (journal, settings.profile) if p), *settings.paths,
                                     *settings.camera_images])
    said_apart = (lambda: _check_names_said_apart(new_players, typed=settings.input == "text")) if new_players else None
    return announcer(settings.mute, settings.wav_out, lambda line: _tell(f"companion: {line}"),
                     resuming=settings.resume is not None, when_voiced=said_apart)


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
    # At the microphone, a call can also be typed at the terminal (the room too loud for it)
    keyboard = sys.stdin if settings.input == "mic" and sys.stdin.isatty() else None
    if keyboard is not None and hasattr(signal, "SIGTTIN"):
        try:  # read from the background (Ctrl-Z, bg), the terminal fails a read, not stops the game
            signal.signal(signal.SIGTTIN, signal.SIG_IGN)
        except ValueError:  # not the main thread
            pass
    source = open_source(settings.input, paths=settings.paths, players=game.players, settings=speech,
                         typed_from=keyboard)
    if keyboard is not None:
        print("companion: listening; a call can also be typed here (then Enter); quit or Ctrl-D stops the game",
              file=sys.stderr)
    return source


def _counter(settings: PlaySettings, first_round: int | None):
    """`first_round`: the first round of a resumed game whose reveal is still to come (the
    photos given are of its reveal and later ones)."""
    if not settings.uses_camera:
        return None
    from companion.vision.frames import CameraFrames, ImageFrames
    from companion.vision.profile import load_profile
    from companion.vision.reader import DiceReader
    from companion.vision.reveal import CameraCounter

    profile = load_profile(settings.profile) if settings.profile else None
    frames = (ImageFrames(settings.camera_images, first_round) if settings.camera_images
              else CameraFrames(settings.camera))
    return CameraCounter(frames, DiceReader(profile), warn=lambda note: print(f"companion: {note}", file=sys.stderr))


def _display(settings: PlaySettings, game, hands=None):
    """The table's web page, if asked for (None when not, or when it cannot start);
    `hands`: the dice said at a resumed game's reveal."""
    if not settings.display:
        return None
    from companion.display.live import open_display

    return open_display(game, settings.display_host, settings.display_port,
                        lambda line: print(f"companion: {line}", file=sys.stderr), hands)


def _check_names_said_apart(players, typed: bool) -> None:
    """Two names the voice says alike (Jon and John) leave a table that listens unable to
    tell whose turn it calls, whatever the input: refused, as the bundled recogniser refuses
    them for its own ears. `typed`: calls are typed, so a game on the screen alone could
    keep them."""
    from companion.listen.names import sound_alikes

    alike = sound_alikes(players)
    if alike:
        one, other = alike[0]
        raise CompanionError(f"{one} and {other} sound the same when I say them, so nobody could tell "
                             f"whose turn I call: please take another name (like {other}-B)"
                             + (", or play on the screen alone with --mute" if typed else ""))


def _tell(line: str) -> None:
    """A line on stderr that cannot fail: the terminal it goes to may be gone (a hang-up)."""
    with contextlib.suppress(OSError):
        print(line, file=sys.stderr)


def run_play(settings: PlaySettings) -> int:
    # From the first device opened to the last one closed, SIGTERM and SIGHUP stop the game
    # as Ctrl-C does (else a stop while the display starts, or while devices close, kills the
    # process with the voice's files left behind)
    with _stopped_by_sigterm():
        return _run_play(settings)


def _run_play(settings: PlaySettings) -> int:
    from companion import journal as journals
    from companion.calls import check_player_names
    from companion.hearing import HearingPolicy
    from companion.listen.vocabulary import aces_to_say
    from companion.referee import Referee, RefereeSettings
    from companion.rules import Game
    from companion.rules.names import as_written
    from companion.voice.announcements import sentences

    journal = None
    resumed = None
    if settings.resuming:
        path = settings.journal or journals.find_session(settings.resume or None)
        resumed = journals.resume(path, defer_repair=True)  # written once the devices are open
        game, journal = resumed.game, resumed.journal
    else:
        if not settings.players:
            raise CompanionError("name the players: companion play --players Ana Ben Cleo")
        check_player_names(settings.players)
        rules = _build_rules(settings)
        Game(settings.players, rules, settings.first)  # refused in the names as typed
        game = Game([as_written(p) for p in settings.players], rules, settings.first)
        path = settings.journal or journals.new_session_path()
        if settings.journal:  # a name chosen here is free (or, taken meanwhile, passed over)
            journals.check_new(path)
    display = None
    try:
        # Devices before the journal: a missing microphone, camera or profile must not
        # leave an empty game behind; the photos first, before the speech engine's wait.
        counter = _counter(settings, None if resumed is None else resumed.latest_round)
        # before the engine's wait: it checks --wav-out, and names a voice would say alike
        speaker = make_speaker(settings, path, new_players=game.players if resumed is None else ())
        source = _source(settings, game)
        if resumed is not None:
            resumed = resumed.write_repair()
            if resumed.dropped is not None:
                print(f"companion: {resumed.dropped.describe()}", file=sys.stderr)
            for note in resumed.notes:
                print(f"companion: {note}", file=sys.stderr)
        if journal is None:
            try:
                journal = (journals.Journal.start(path, game) if settings.journal
                           else journals.Journal.start_in_sessions(path, game))
                path = journal.path
            except CompanionError as error:  # a full disk: the table hears it, not only the screen
                _say_stopped(lambda said: speaker.say(" ".join(sentences(said, game.rules))), error, started=False)
                raise
        print(f"companion: journal {path}", file=sys.stderr)
        journals.mark_played(path)
        display = _display(settings, game, hands=resumed.hands if resumed is not None else None)
        if display is not None:
            journal, speaker = display.watch_journal(journal), display.watch_speaker(speaker)
            source, counter = display.watch_source(source), display.watch_counter(counter)
        # Typed lines are trusted; speech is judged on its engine's confidence scale.
        hearing = HearingPolicy() if settings.input == "text" else HearingPolicy.for_speech()
        aces_as = aces_to_say(settings.input != "text", game.rules.ace_word)
        can_type = settings.input == "text" or getattr(source, "typed", None) is not None

        def referee_for(game, journal, path, resumed=None):
            reveal_dir = path.with_name(path.stem + "-reveals") if counter is not None else None
            return Referee(game, speaker, journal, counter, RefereeSettings(hearing, reveal_dir, aces_as, can_type),
                           resumed=resumed, log=lambda text: print(text, file=sys.stderr))

        referee = referee_for(game, journal, path, resumed)
        starting_next = False  # a new game of the evening is being started: nothing of it is saved yet
        try:
            referee.run(source, resumed=settings.resuming)
            while referee.new_game_wanted:  # the same table plays again, in a journal of its own
                journal.close()
                print(f"companion: {journals.last_line(path)}", file=sys.stderr)
                game = Game(game.players, game.rules, game.first)  # who opened it opens again
                # beside the game before (a --journal elsewhere keeps the evening together)
                starting_next = True
                journal = journals.Journal.start_in_sessions(journals.new_session_path(path.parent), game)
                starting_next = False
                path = journal.path
                print(f"companion: journal {path}", file=sys.stderr)
                journals.mark_played(path)
                if counter is not None:
                    counter.new_game()
                if display is not None:
                    display.new_game(game)
                    journal = display.watch_journal(journal)
                names_asked = frozenset(referee.names_asked)
                referee = referee_for(game, journal, path)
                referee.run(source, names_asked=names_asked)
        except KeyboardInterrupt as stop:  # Ctrl-C, or a service manager stopping the game
            _tell("\ncompanion: stopped; every call so far is in the journal.")
            _tell(f"companion: {journals.last_line(path)}")
            return 128 + getattr(stop, "signal", signal.SIGINT)
        except CompanionError as error:
            # A device lost mid-game (the microphone unplugged): the journal has every call so far
            # (or, its file replaced by another, a copy beside it has).
            print(f"companion: {error}", file=sys.stderr)
            if getattr(error, "resumable", True):
                print(f"companion: {journals.last_line(getattr(error, 'resume_from', None) or path)}", file=sys.stderr)
            _say_stopped(referee.say, error, started=not starting_next)
            return 2
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()
            if display is not None:
                display.close()
    except KeyboardInterrupt:
        if journal is not None:  # stopped as the game was getting ready: it is there to go on
            _tell(f"companion: {journals.last_line(path)}")
        raise
    finally:
        if journal is not None:
            journal.close()
    print(f"companion: {journals.last_line(path)}", file=sys.stderr)
    return 0


def _say_stopped(say, error: CompanionError, started: bool = True) -> None:
    """Tell the table aloud why the game stopped, as far as the voice still works (`say`
    speaks announcements)."""
    from companion.journal import JournalError
    from companion.listen.errors import MicrophoneError
    from companion.vision.errors import VisionError
    from companion.voice.announcements import GameStopped

    if isinstance(error, JournalError):
        why = "I cannot save any more calls" if started else "I cannot save a game there"
    else:
        why = ("the microphone stopped" if isinstance(error, MicrophoneError) else
               "the camera stopped" if isinstance(error, VisionError) else "something went wrong")
    try:
        say([GameStopped(why, started, saved=getattr(error, "resumable", True))])
    except (CompanionError, OSError, RuntimeError):
        pass  # the voice is what failed: the screen has said it


@contextlib.contextmanager
def _stopped_by_sigterm():
    """While the game runs, SIGTERM (and SIGHUP: the terminal or SSH session closed) stops it
    the way Ctrl-C does: the pause line is printed and the voice's files are cleared away,
    instead of the process vanishing ("Terminated")."""
    def stop(signum, frame):
        for s in stopping:  # the first stops the game; another must not cut its closing short
            signal.signal(s, signal.SIG_IGN)
        stopped = KeyboardInterrupt()
        stopped.signal = signum  # the exit status says which: 128 + 15
        raise stopped

    # one ignored on purpose stays so (`nohup companion play` keeps playing when the terminal goes)
    stopping = [s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None))
                if s is not None and signal.getsignal(s) is not signal.SIG_IGN]
    try:
        previous = {s: signal.signal(s, stop) for s in stopping}
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
