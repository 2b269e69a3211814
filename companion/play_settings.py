"""`companion play`'s options, and the frozen settings they become (checked together before
any device, model or journal is touched)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from companion.display import DEFAULT_HOST, DEFAULT_PORT
from companion.errors import CompanionError
from companion.listen import ENGINES
from companion.files import read_bytes
from companion.rules import Rules, RulesFileError
from companion.rules.presets import DEFAULT_PRESET, MOST_DICE, PRESETS, house_rules


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
    resume: str | None  # None: a new game; "": the game played last; else a name or path
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
        if (self.paths and not self.players and self.resume is None and self.input != "wav"
                and all(p.parent == Path() and not p.suffix and str(p)[:1].isalpha() and not p.exists()
                        for p in self.paths)):
            # `companion play Ana Ben Cleo`: names, not files
            names = " ".join(str(p) for p in self.paths)
            seem = "looks like a player's name" if len(self.paths) == 1 else "look like the players' names"
            raise CompanionError(f"{names} {seem}: companion play --players {names}")
        if self.input != "wav" and self.paths:
            hint = ("; add --input wav to play recordings" if self.paths[0].suffix.lower() == ".wav" else
                    "; add --input wav to read the recordings' paths from standard input"
                    if str(self.paths[0]) == "-" else
                    f"; to play a typed script, pipe it in: companion play --input text < {self.paths[0]}")
            raise CompanionError(f"files are only read with --input wav (got {self.paths[0]} "
                                 f"with --input {self.input}){hint}")
        if self.preset is not None and not self.preset.strip():
            raise CompanionError("--rules needs a preset's name: companion rules lists them")
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
            apply, them = ("only apply", "them") if len(speech_only) > 1 else ("applies only", "it")
            raise CompanionError(f"{' and '.join(speech_only)} {apply} to speech (how calls are heard): "
                                 f"use {them} with --input mic or --input wav")
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


def add_play_parser(sub) -> None:
    p = sub.add_parser("play", help="referee a game", description="Referee a game of Perudo.")
    p.add_argument("--players", nargs="+", metavar="NAME", help="players in seating order")
    p.add_argument("--rules", metavar="PRESET", help=f"rules preset: {', '.join(PRESETS)} (default "
                                                     f"{DEFAULT_PRESET}; `companion rules` says what each changes)")
    p.add_argument("--house-rules", type=Path, metavar="TOML", help="TOML file of rule fields to override")
    p.add_argument("--dice", type=int, metavar="N", help="starting dice per player (default 5)")
    p.add_argument("--first", metavar="NAME", help="who opens the first round (default: the first named)")
    p.add_argument("--input", choices=("text", "wav", "mic"), default="mic",
                   help="where calls come from: typed or piped text, WAV files, or the microphone "
                        "(the default); "
                        "--input wav - reads a WAV path a line from standard input after each "
                        "'listening>' line (a bad path is skipped; end of input ends the game)")
    p.add_argument("files", nargs="*", type=Path, metavar="FILE",
                   help="WAV files or folders for --input wav, or - for paths from standard input")
    p.add_argument("--mute", action="store_true", help="print announcements only, do not speak")
    p.add_argument("--wav-out", type=Path, metavar="WAV", help="also write every announcement into this WAV file")
    p.add_argument("--journal", type=Path, metavar="PATH", help="journal file (default: a new file in the data dir)")
    p.add_argument("--resume", nargs="?", const="", metavar="SESSION", help="continue a saved game: a journal or a session name (default: the game played last)")
    p.add_argument("--camera", type=int, metavar="N",
                   help="read the dice at each reveal from camera N (0: the first webcam)")
    p.add_argument("--camera-images", nargs="+", type=Path, metavar="IMAGE",
                   help="read the reveals from photos instead of a camera: one photo per reveal, "
                        "in order; once they run out, the players are asked for the count")
    p.add_argument("--profile", type=Path, metavar="DIR", help="camera calibration profile")
    p.add_argument("--engine", choices=ENGINES, default="auto",
                   help="speech engine (auto: Vosk if a model is installed, else the bundled call recogniser)")
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


def load_house_rules(path: Path, base: Rules, preset_given: bool = False,
                     dice_given: int | None = None) -> Rules:
    """The house rules file at `path` over the preset `base` (see rules.presets.house_rules)."""
    try:
        raw = read_bytes(path)
    except OSError as exc:
        raise RulesFileError(f"cannot read house rules {path}: {exc.strerror or exc}") from None
    if not raw and not Path(path).is_file():
        raise RulesFileError(f"house rules {path}: nothing was read from it (a pipe nothing writes to?)")
    try:
        text = raw.decode("utf-8-sig")  # a Windows editor's BOM too
    except UnicodeDecodeError as exc:
        raise RulesFileError(f"house rules {path} are not valid TOML: {exc} (words go in quotes, "
                             f"true and false without: dudo_caller = \"anyone\", calza = true)") from None
    return house_rules(text, path, base, preset_given, dice_given)
