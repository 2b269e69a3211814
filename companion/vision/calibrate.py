"""Building a calibration profile from photos (a folder) or live from a camera.

Image folder naming convention (png, jpg, jpeg, webp, bmp or tif, any case):
  empty*.png   the table with no dice, camera where it will be during play (one or more)
  dice*.png    a few dice on that table; optionally name the faces shown after the last '-',
               e.g. dice-2356.png or dice-1-2-6.png, and calibration checks it reads exactly those
  paco*.png    the Paco (toucan) face of the player's own dice held toward the camera
At least one empty* and one paco* image are needed; dice* images are strongly advised (they give
the die size and the check). Calibration then reads the images back and refuses a profile that
misreads them.

Long: the photos' checks and the live dialogue share the profile they build and its read-back.
"""
from __future__ import annotations

import pathlib
import re
import shutil
from dataclasses import dataclass, replace
from typing import Callable, Protocol

import cv2
import numpy as np

from companion.vision.detect import crop
from companion.vision.errors import CalibrationCannotStart, CalibrationFailed, ImageUnreadable
from companion.vision.frames import IMAGE_SUFFIXES, FrameSource, read_frame, without_colour, write_image
from companion.calls import number_words
from companion.sources import files_in
from companion.vision.model import NOT_DIE, PATCH
from companion.vision.profile import Profile


@dataclass(frozen=True)
class CalibrationImages:
    empty: tuple[np.ndarray, ...]
    dice: tuple[tuple[np.ndarray, tuple[int, ...] | None], ...]  # image, faces named in the file name
    paco: tuple[np.ndarray, ...]
    # Where each photo came from, so a refusal names the file to retake.
    dice_names: tuple[str, ...] = ()
    paco_names: tuple[str, ...] = ()
    empty_names: tuple[str, ...] = ()

    def label(self, kind: str, i: int) -> str:
        """'dice-2356.png', or 'dice photo 2' for a photo taken by the camera."""
        names = {"dice": self.dice_names, "paco": self.paco_names, "empty": self.empty_names}[kind]
        if i < len(names):
            return names[i]
        return f"{'empty-table' if kind == 'empty' else kind} photo {i + 1}"


def expected_faces(name: str) -> tuple[int, ...] | None:
    """'dice-2356.png' -> (2, 3, 5, 6); 'dice-1-2-6.png' -> (1, 2, 6); 'dice.png' -> None."""
    stem = pathlib.Path(name).stem
    m = re.fullmatch(r"dice[^-]*((?:-[1-6]+)+)", stem, flags=re.IGNORECASE)
    if not m:
        return None
    return tuple(sorted(int(c) for c in m.group(1) if c.isdigit()))


def load_calibration_images(folder: str | pathlib.Path) -> CalibrationImages:
    d = pathlib.Path(folder)
    if not d.is_dir():
        raise CalibrationCannotStart(f"{d} is not a folder of calibration images")
    try:
        files = files_in(d, IMAGE_SUFFIXES)
    except OSError as exc:
        raise CalibrationCannotStart(f"cannot read the folder {d}: {exc.strerror or exc}") from None
    pick = lambda prefix: [p for p in files if p.name.lower().startswith(prefix)]  # noqa: E731
    empty, dice, paco = pick("empty"), pick("dice"), pick("paco")
    # Every problem with the folder at once, so it can be put right in one go.
    problems = []
    if not empty:
        problems.append(f"{d}: no empty*.png (or .jpg) photo of the table without dice")
    if not paco:
        problems.append(f"{d}: no paco*.png (or .jpg) photo of the Paco face held to the camera")
    for p in dice:  # a face typed wrong would leave the photo silently unchecked
        faces = p.stem.rsplit("-", 1)[1] if "-" in p.stem else ""
        if re.search(r"\d", faces) and not re.fullmatch(r"[1-6]+", faces):
            problems.append(f"{p.name}: the faces after its last '-' are digits 1 to 6 (dice-2356.png); "
                            f"leave digits out of that part (dice-a.png) not to check what it shows")
    images: dict[pathlib.Path, np.ndarray] = {}
    for p in empty + dice + paco:
        try:
            images[p] = read_frame(p)  # a photo too small to use is named here
        except ImageUnreadable as exc:
            problems.append(f"calibration image unreadable: {exc}")
    # Photos of dice without colour: no die read in them is sure, a die left on the "empty"
    # table included. (The empty table alone may be a neutral cloth, colourless in colour.)
    grey = [p.name for p in dice + paco if p in images and without_colour(images[p])]
    if grey:
        problems.append(f"{', '.join(grey)}: no colour (a black-and-white or night mode); calibrate "
                        f"with the camera giving colour, as it must at a reveal")
    if problems:
        raise CalibrationFailed("\n".join(problems))
    return CalibrationImages(empty=tuple(images[p] for p in empty),
                             dice=tuple((images[p], expected_faces(p.name)) for p in dice),
                             paco=tuple(images[p] for p in paco),
                             dice_names=tuple(p.name for p in dice),
                             paco_names=tuple(p.name for p in paco),
                             empty_names=tuple(p.name for p in empty))


def build_profile(images: CalibrationImages, name: str, *, model=None) -> Profile:
    """Profile from the photos: median empty table, die size from the dice photos, Paco patches."""
    from companion.vision.reader import DiceReader

    plain = DiceReader(None, model)  # the reader as it is before any calibration
    problems = [f"{images.label('empty', i)}: {problem}; the empty-table photo must show the "
                "table alone, where the dice will be, without them"
                for i, im in enumerate(images.empty) if (problem := dice_on_empty_table(im, plain))]
    patches = []
    for i, im in enumerate(images.paco):
        found, problem = paco_references(im, plain)
        patches += found
        if problem:
            problems.append(f"{images.label('paco', i)}: {problem}; {PACO_HINT}")
    if problems:
        raise CalibrationFailed("\n".join(problems))
    shape = images.empty[0].shape
    same = [im for im in images.empty if im.shape == shape]
    background = np.median(np.stack(same), axis=0).astype(np.uint8) if len(same) > 1 else same[0]
    sizes = []
    for i, (im, _) in enumerate(images.dice):
        if im.shape[:2] != shape[:2]:
            raise CalibrationFailed(f"{images.label('dice', i)}: dice photos must have the same size "
                                    "as the empty-table photo")
        sizes += [c.w for c in plain.detector.find(im) if c.score >= SURE_SIZE]
    die_size = float(np.median(sizes)) if sizes else None
    profile = Profile(name=name, resolution=(int(shape[0]), int(shape[1])), die_size=die_size, background=background,
                      paco_patches=np.stack(patches) if patches else np.zeros((0, PATCH, PATCH, 3), np.uint8))
    check_profile(profile, images, DiceReader(profile, model))
    return profile


# How sure the uncalibrated reader must be before calibration believes it: that an "empty" photo
# shows a die, or that a "Paco" photo shows a plain face. Synthetic empty tables (50 seeds)
# gave nothing above 0.71.
SURE = 0.9
SURE_SIZE = 0.5  # the detector's heat from which a die found in a dice photo measures the die size
PACO_HINT = "hold only the toucan face of your dice to the camera, close and well lit"


def dice_on_empty_table(image: np.ndarray, plain_reader) -> str | None:
    """Why a photo of the empty table is not one ("I see four dice on it"), or None. `plain_reader`
    is a reader without a profile: dice left on the table would become part of it."""
    from companion.voice.phrases import count_of

    n = sum(1 for d in plain_reader.read(image).dice if d.confidence >= SURE)
    return f"I see {count_of(n)} on it" if n else None


def paco_references(image: np.ndarray, plain_reader) -> tuple[list[np.ndarray], str | None]:
    """The Paco references in a photo of the Paco face held to the camera, or why there are none.

    They are the biggest dice the detector finds. One the face model reads surely as
    a pip face of two to six is not a Paco and refuses the photo: a plain face kept as a
    reference would be read as a 1 in every game after. Dice whose ace is a single pip show
    one: the reader reads it as a 1 already, and as a reference it would draw every die
    towards a 1, so it is accepted and not kept."""
    from companion.voice.phrases import join_and

    model = plain_reader.model
    cands = plain_reader.detector.find(image, close_up=True)
    if not cands:
        return [], "I see no die"
    big = max(max(c.w, c.h) for c in cands)
    cands = [c for c in cands if max(c.w, c.h) >= 0.6 * big]
    patches = [crop(image, c) for c in cands]
    probs = model.predict(np.stack(patches))
    plain_faces = sorted(int(np.argmax(p[2:7])) + 2 for p in probs if p[2:7].max() >= SURE)
    if plain_faces:
        faces = join_and([number_words(f) for f in plain_faces])
        return [], f"I see {'a ' if len(plain_faces) == 1 else 'the faces '}{faces}, not the Paco"
    # kept only where the model takes it for a die at all, as the reader does (die_threshold)
    kept = [patch for patch, p in zip(patches, probs) if p[NOT_DIE] < 0.5 and p[1] < SURE]
    return (kept, None) if kept or any(p[1] >= SURE for p in probs) else ([], "I see only the table")


def check_profile(profile: Profile, images: CalibrationImages, reader) -> None:
    """Read the calibration photos back; refuse the profile if they are misread."""
    # Paco photos are held up to the camera: not over the table, not at table distance
    from companion.vision.reader import DiceReader

    held = DiceReader(replace(profile, background=None, die_size=None), reader.model, detector=reader.detector,
                      close_up=True)
    for i, im in enumerate(images.paco):
        r = held.read(im)
        if r.total == 0 or r.counts[1] == 0:
            raise CalibrationFailed(f"{images.label('paco', i)}: the Paco face was not read as a 1; retake it")
    for i, (im, want) in enumerate(images.dice):
        r = reader.read(im)
        if r.total == 0:
            raise CalibrationFailed(f"{images.label('dice', i)}: no dice found; check the light and the framing")
        if want is not None:
            got = tuple(sorted(d.face for d in r.dice))
            if len(got) > 2 * len(want):  # dice everywhere: likely in the "empty" photo too
                raise CalibrationFailed(
                    f"{images.label('dice', i)}: read {len(got)} dice where the file name says "
                    f"{len(want)}; is the empty-table photo really without dice?")
            if got != want:
                raise CalibrationFailed(f"{images.label('dice', i)}: read faces {got}, the file name says {want}")


def calibrate_images(folder: str | pathlib.Path, out_dir: str | pathlib.Path, name: str | None = None,
                     *, model=None) -> Profile:
    out = pathlib.Path(out_dir)
    prof = build_profile(load_calibration_images(folder), name or out.name, model=model)
    prof.save(out)
    return prof


def _median_frame(frames: FrameSource, n: int) -> np.ndarray:
    shots = [frames.read() for _ in range(n)]
    return np.median(np.stack(shots), axis=0).astype(np.uint8)


class Prompter(Protocol):
    """How a person answers during live calibration (the questions are also spoken)."""

    def wait(self, prompt: str) -> None:
        """Return when the person says they are ready; CalibrationFailed if they give up."""

    def confirm(self, question: str) -> bool:
        """Yes or no from the person."""

    def close(self) -> None:
        """Calibration is over (a window to put away)."""


class TerminalPrompter:
    """Enter to go on, y or n to answer, at the keyboard."""

    def __init__(self, read: Callable[[str], str] = input) -> None:
        self._read = read

    def wait(self, prompt: str) -> None:
        self._answer("(press Enter) ")

    def confirm(self, question: str) -> bool:
        while True:
            answer = self._answer("(y/n) ").strip().lower()
            if answer in ("y", "yes", ""):
                return True
            if answer in ("n", "no"):
                return False

    def close(self) -> None:
        pass

    def _answer(self, hint: str) -> str:
        try:
            return self._read(hint)
        except EOFError:  # stdin closed: nobody is there to answer
            raise CalibrationFailed("calibration stopped: no answer from the keyboard") from None


class WindowPrompter:
    """A live preview of the camera with the prompt written over it, and what the reader
    sees, so the person can frame the table; keys answer (Enter or space, y, n; Esc stops)."""

    def __init__(self, frames: FrameSource, reader=None, title: str = "companion calibrate") -> None:
        self.frames = frames
        self.reader = reader
        self.title = title

    def wait(self, prompt: str) -> None:
        self._keys(prompt + "  [Enter]", self.ENTER)

    def confirm(self, question: str) -> bool:
        return self._keys(question + "  [y/n]", self.ENTER | {ord("y"), ord("n")}) != ord("n")

    def close(self) -> None:
        try:
            cv2.destroyWindow(self.title)
        except cv2.error:
            pass

    ENTER = {13, 10, 32}  # Enter (either code) or space

    def _keys(self, text: str, wanted: set[int]) -> int:
        try:
            while True:
                cv2.imshow(self.title, preview(self.frames.read(), text, self.reader))
                key = cv2.waitKey(30) & 0xFF
                if key == 27:
                    raise CalibrationFailed("calibration stopped (Esc)")
                if key in wanted:
                    return key
        except cv2.error as exc:  # no display to show a window on
            raise CalibrationFailed(f"cannot show the camera preview ({exc.msg.strip()}); "
                                    "use --headless") from None


PROMPT_BAND = 34  # pixels: the prompt's strip above the preview


def preview(frame: np.ndarray, prompt: str, reader=None) -> np.ndarray:
    """What the calibration window shows: the frame (with what `reader` sees drawn on it,
    under its banner of counts) below a strip holding the prompt. The strip is added, not
    drawn over the top, which would hide the counts or the dice nearest the top."""
    from companion.vision.annotate import annotate

    shown = annotate(frame, reader.read(frame)) if reader else frame
    if shown.ndim == 2:
        shown = cv2.cvtColor(shown, cv2.COLOR_GRAY2BGR)
    band = np.zeros((PROMPT_BAND, shown.shape[1], 3), np.uint8)
    cv2.putText(band, prompt, (8, 24), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 1, cv2.LINE_AA)
    return np.vstack([band, shown])


DICE_TRIES = 3


def calibrate_live(frames: FrameSource, out_dir: str | pathlib.Path, *, name: str | None = None,
                   say: Callable[[str], None] = print, prompter: Prompter | None = None,
                   model=None) -> Profile:
    """Guide a person through calibration with a camera; saves the photos too, for a rerun.

    The dice photo is read back at once and the person asked whether the faces are right;
    its file name then records those faces, so the finished profile must read them again.
    The photos are taken into images.new/ and replace images/ only once the profile is made:
    a calibration stopped half way leaves the earlier profile as it was, photos and all."""
    from companion.vision.reader import DiceReader
    from companion.voice.phrases import count_of

    prompter = prompter or TerminalPrompter()
    out = pathlib.Path(out_dir)
    shots = out / "images.new"
    try:
        if shots.exists():
            shutil.rmtree(shots)  # photos of a calibration that never finished
        shots.mkdir(parents=True)
    except OSError as exc:
        raise CalibrationFailed(f"cannot use {shots}: {exc.strerror or exc}") from None

    def ask(prompt: str) -> None:
        say(prompt)
        prompter.wait(prompt)

    plain = DiceReader(None, model)
    ask("Clear the table of dice and cups, then press Enter.")
    for attempt in range(DICE_TRIES):
        empty = _median_frame(frames, 5)
        problem = dice_on_empty_table(empty, plain)
        if problem is None:
            break
        # dice left there would become part of the table, and never be seen again
        ask(f"{problem}. Clear the table of dice and cups, then press Enter.")
    else:
        raise CalibrationFailed(f"the table was not clear of dice in {DICE_TRIES} tries")
    _save(shots / "empty.png", empty)
    say("Got it.")
    reader = DiceReader(Profile(name="trial", resolution=empty.shape[:2], die_size=None,
                                background=empty, paco_patches=np.zeros((0, PATCH, PATCH, 3), np.uint8)),
                        model)
    for attempt in range(DICE_TRIES):
        ask("Put four or five dice on the table, apart from each other, then press Enter."
            if attempt == 0 else "Spread the dice out a little, then press Enter.")
        image = frames.read()
        faces = sorted(d.face for d in reader.read(image).dice)
        if not faces:
            say("I see no dice. Check the light and that the camera sees the table.")
            continue
        spoken = ", ".join(number_words(f) for f in faces[:-1]) + " and " if len(faces) > 1 else ""
        question = f"I see {count_of(len(faces))}: {spoken}{number_words(faces[-1])}. Is that right?"
        say(question)
        if prompter.confirm(question):
            # No other digits in the name: "dice-2356" means the dice show 2, 3, 5 and 6.
            _save(shots / f"dice-{''.join(map(str, faces))}.png", image)
            break
        say("Then let us try again.")
    else:
        raise CalibrationFailed(f"the dice were not read right in {DICE_TRIES} tries: check the "
                                "light and the camera, then calibrate again")
    ask("Hold one of your dice with its Paco face toward the camera, then press Enter.")
    for attempt in range(DICE_TRIES):
        paco = frames.read()
        _, problem = paco_references(paco, plain)
        if problem is None:
            break
        ask(f"{problem}. Hold only the Paco face of one of your dice toward the camera, close and "
            "well lit, then press Enter.")
    else:
        raise CalibrationFailed(f"no Paco face was shown in {DICE_TRIES} tries")
    _save(shots / "paco.png", paco)
    say("Got it.")
    prof = calibrate_images(shots, out, name or out.name, model=model)
    try:
        if (out / "images").exists():
            shutil.rmtree(out / "images")
        shots.rename(out / "images")
    except OSError as exc:
        raise CalibrationFailed(f"the profile is saved, but its photos could not be moved to "
                                f"{out / 'images'}: {exc.strerror or exc}") from None
    say("Calibration saved. I read the dice you showed me and your Paco face.")  # where: on the screen
    return prof


def _save(path: pathlib.Path, image: np.ndarray) -> None:
    try:
        write_image(path, image)
    except OSError as exc:
        raise CalibrationFailed(str(exc)) from None
