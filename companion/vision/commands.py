"""`companion see` and `companion calibrate`: argument setup and runners for the CLI to wire in."""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import signal
import sys
from typing import Callable

from companion.vision.errors import CalibrationCannotStart, CameraUnavailable, VisionError
from companion.vision.settings import CameraSettings
from companion.vision.types import DiceReading

CALIBRATION_ROOT = pathlib.Path("calibration")


def add_see_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("images", nargs="*", type=pathlib.Path,
                        help="photos of the table to read (a folder: its images, in name order)")
    parser.add_argument("--json", action="store_true",
                        help="one JSON line per image ({\"file\", \"error\"} for one that cannot be read)")
    parser.add_argument("--annotate", type=pathlib.Path, metavar="OUT.png",
                        help="save the picture with boxes, faces and counts (OUT-2.png... for more images)")
    parser.add_argument("--profile", type=pathlib.Path, metavar="DIR", help="calibration profile folder")
    parser.add_argument("--camera", type=int, metavar="N", help="read live from camera N")
    parser.add_argument("--headless", action="store_true", help="with --camera: print readings, no window")
    parser.add_argument("--frames", type=int, default=0, metavar="N", help="with --camera: stop after N frames")


def _err(msg: str) -> None:
    print(f"companion: {msg}", file=sys.stderr)


def _reader(profile_dir: pathlib.Path | None):
    from companion.vision.profile import load_profile
    from companion.vision.reader import DiceReader

    profile = load_profile(profile_dir) if profile_dir is not None else None
    return DiceReader(profile)


NO_COLOUR = "no colour in this picture"


def reading_json(file: str, reading: DiceReading) -> str:
    counts = {str(face): n for face, n in reading.counts.items()}
    return json.dumps({"file": file, "dice": [d.to_json() for d in reading.dice], "counts": counts,
                       "refused": [r.to_json() for r in reading.refused], "colourless": reading.colourless})


def refused_line(reading: DiceReading) -> str | None:
    """How many things were left out of the count and why, for people; None when nothing was."""
    maybe = reading.maybe_dice
    sure = len(reading.refused) - maybe
    parts = []
    if sure:
        parts.append("1 object refused as not a die" if sure == 1 else f"{sure} objects refused as not dice")
    if maybe:
        parts.append(f"{maybe} left out as maybe a die")
    return ", ".join(parts) or None


def _annotate_path(out: pathlib.Path, i: int, n: int) -> pathlib.Path:
    if n == 1 or i == 0:
        return out
    return out.with_name(f"{out.stem}-{i + 1}{out.suffix or '.png'}")


def run_see(args: argparse.Namespace) -> int:
    from companion.vision.annotate import annotate
    from companion.vision.frames import check_picture_name, image_files, picture_problem, read_frame, write_image

    if args.camera is None and not args.images:
        _err("see: give image files or --camera N")
        return 2
    if args.camera is not None and args.images:
        _err(f"see: give either --camera {args.camera} or image files ({args.images[0]}...), not both")
        return 2
    if args.camera is None and (args.headless or args.frames):
        _err(f"see: {'--headless' if args.headless else '--frames'} is for a live camera (--camera N); "
             "image files are read once each")
        return 2
    try:
        images = image_files(args.images)
    except VisionError as exc:
        _err(f"see: {exc}")
        return 2
    if args.annotate is not None:
        try:
            check_picture_name(args.annotate)  # before any image is read
        except OSError as exc:
            _err(f"see: --annotate {exc}")
            return 2
        for i in range(len(images)):
            out = _annotate_path(args.annotate, i, len(images))
            if any(_same_file(out, p) for p in images):
                _err(f"see: --annotate {out} would draw over a photo being read; give another name")
                return 2
    try:
        reader = _reader(getattr(args, "profile", None))
    except VisionError as exc:
        _err(str(exc))
        return 2
    if args.camera is not None:
        return _see_camera(args, reader)
    status = 0
    noted: set[str] = set()
    for i, path in enumerate(images):
        try:
            img = read_frame(path)
            reading = reader.read(img)
            note = reader.profile.framing_note(img.shape) if reader.profile is not None else None
            if note and note not in noted:  # once for every photo of that size, not once each
                noted.add(note)
                _err(f"{path}: {note}")
        except VisionError as exc:
            _err(str(exc))
            if args.json:  # one line per image, a failed one too
                print(json.dumps({"file": str(path), "error": str(exc)}), flush=True)
            status = 1
            continue
        if args.json:
            print(reading_json(str(path), reading), flush=True)
        else:
            counts = "  ".join(f"{f}s: {reading.counts[f]}" for f in range(1, 7))
            # the same line a reveal draws: below it, a game would ask the players instead
            camera = CameraSettings()
            doubtful = camera.doubtful(reading)
            marked = ", marked ?" if args.annotate is not None else ""
            doubt = f"  ({doubtful} read doubtfully{marked}: a reveal would ask the players)" \
                if doubtful else ""
            problem = picture_problem(img, reading)
            if problem:
                doubt += f"  ({problem})"
            elif reading.colourless:
                doubt += f"  ({NO_COLOUR}: no die in it is read surely)"
            if camera.cluttered(reading):
                crowd = (f"more than {camera.max_refused} things refused" if len(reading.refused) > camera.max_refused
                         else f"{reading.unread} candidates past the most read")
                doubt += f"  ({crowd}: a reveal would not trust this frame and would ask the players)"
            print(f"{path}: {reading.total} {'die' if reading.total == 1 else 'dice'}  {counts}{doubt}", flush=True)
            refused = refused_line(reading)
            if refused:
                print(f"  {refused}", flush=True)
        if args.annotate is not None:
            out = _annotate_path(args.annotate, i, len(images))
            try:
                out.parent.mkdir(parents=True, exist_ok=True)
                write_image(out, annotate(img, reading, NO_COLOUR if reading.colourless else None))
                if not args.json:  # --json keeps to one line per image
                    print(f"  annotated: {out}", flush=True)
            except OSError as exc:
                _err(f"cannot write {out}: {exc.strerror}" if exc.strerror else str(exc))
                status = 1
    return status


def no_display() -> bool:
    """No screen to show a window on: Linux without X or Wayland (a Raspberry Pi reached over
    SSH). OpenCV's window there aborts the process instead of raising."""
    return sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _headless(args, command: str) -> bool:
    """--headless, or said once and taken where there is no display."""
    if not args.headless and no_display():
        _err(f"{command}: there is no display for the preview window (no DISPLAY or WAYLAND_DISPLAY); "
             "going on as with --headless")
        return True
    return args.headless


def _see_camera(args, reader) -> int:
    import cv2

    from companion.vision.annotate import annotate
    from companion.vision.frames import CameraFrames

    try:
        cam = CameraFrames(args.camera)
    except VisionError as exc:  # nothing can be read: refused as a bad profile is (and as play refuses it)
        _err(str(exc))
        return 2
    headless = _headless(args, "see")
    n = 0
    try:
        with cam:
            while not args.frames or n < args.frames:
                frame = cam.read()
                reading = reader.read(frame)
                n += 1
                if headless:
                    line = json.loads(reading_json(f"camera:{args.camera}", reading))
                    line["frame"] = n
                    print(json.dumps(line), flush=True)
                else:
                    cv2.imshow("companion see", annotate(frame, reading))
                    if cv2.waitKey(1) & 0xFF in (27, ord("q")):
                        break
    except VisionError as exc:
        _err(str(exc))
        return 1
    except KeyboardInterrupt:
        pass
    finally:
        if not headless:
            cv2.destroyAllWindows()
    return 0


def _same_file(a: pathlib.Path, b) -> bool:
    """One file under two names: a link (symbolic or hard) or the same path written otherwise."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them is not there (yet)
        return pathlib.Path(a).resolve() == pathlib.Path(b).resolve()


def add_calibrate_arguments(parser: argparse.ArgumentParser) -> None:
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--images", type=pathlib.Path, metavar="DIR",
                     help="folder with empty*.png (no dice), dice*.png (a few dice, e.g. dice-2356.png) and "
                          "paco*.png (your Paco face held to the camera)")
    src.add_argument("--camera", type=int, metavar="N", help="calibrate live from camera N, with prompts")
    parser.add_argument("--name", help="profile name (default: the --out folder's name, else 'default')")
    parser.add_argument("--out", type=pathlib.Path, metavar="DIR",
                        help="profile folder (default: calibration/NAME in the current folder)")
    parser.add_argument("--mute", action="store_true", help="with --camera: print the prompts only")
    parser.add_argument("--headless", action="store_true",
                        help="with --camera: no preview window; answer at the keyboard")


def run_calibrate(args: argparse.Namespace, say: Callable[[str], None] | None = None) -> int:
    from companion.vision.calibrate import (TerminalPrompter, WindowPrompter, calibrate_images,
                                            calibrate_live)
    from companion.vision.frames import CameraFrames
    from companion.vision.reader import DiceReader
    from companion.voice.speakers import announcer

    name = args.name if args.name is not None else (args.out.resolve().name if args.out else "") or "default"
    if args.name is not None and (not name or name != pathlib.Path(name).name or name.startswith(".")):
        _err(f"calibration failed: --name {name!r} must be a plain name such as 'kitchen' "
             "(no folders; use --out DIR for another place)")
        return 2
    out = args.out or CALIBRATION_ROOT / name
    started = False
    try:
        if args.images is not None:
            prof = calibrate_images(args.images, out, name)
        else:
            with CameraFrames(args.camera) as cam:
                started = True
                # Spoken too: the person is at the table, not at the screen.
                say = say or announcer(args.mute, warn=_err).say
                prompter = TerminalPrompter() if _headless(args, "calibrate") else \
                    WindowPrompter(cam, DiceReader())
                try:
                    prof = calibrate_live(cam, out, name=name, say=say, prompter=prompter)
                finally:
                    prompter.close()
    except CalibrationCannotStart as exc:  # as `see` does: exit 2 where it could not start
        _err(f"calibration cannot start: {exc}")
        return 2
    except CameraUnavailable as exc:
        if not started:
            _err(f"calibration cannot start: {exc}")
            return 2
        _err(f"calibration failed: {exc}")
        if say is not None:
            say("Calibration failed; no profile was saved. The reason is on the screen.")
        return 1
    except VisionError as exc:
        _err(f"calibration failed: {exc}")
        if args.camera is not None and say is not None:
            say("Calibration failed; no profile was saved. The reason is on the screen.")
        return 1
    except KeyboardInterrupt as stop:
        _err("calibration stopped; no profile was saved")
        return 128 + getattr(stop, "signal", signal.SIGINT)
    size = f"{prof.die_size:.0f} px" if prof.die_size else "unknown"
    n = len(prof.paco_patches)
    paco = ("no Paco reference (the ace shown is a single pip, which needs none)" if not n
            else f"{n} Paco reference{'s' if n > 1 else ''}")
    print(f"Profile '{prof.name}' saved in {out}: die size {size}, {paco}.", flush=True)  # a path: not for the voice
    return 0
