"""Building a calibration profile from photos (a folder) or live from a camera.

Image folder naming convention (png, jpg or jpeg, any case):
  empty*.png   the table with no dice, camera where it will be during play (one or more)
  dice*.png    a few dice on that table; optionally name the faces shown after the last '-',
               e.g. dice-2356.png or dice-1-2-6.png, and calibration checks it reads exactly those
  paco*.png    the Paco (toucan) face of the player's own dice held toward the camera
At least one empty* and one paco* image are needed; dice* images are strongly advised (they give
the die size and the check). Calibration then reads the images back and refuses a profile that
misreads them.
"""
from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass, replace
from typing import Callable

import cv2
import numpy as np

from companion.vision.detect import crop, find_candidates
from companion.vision.errors import CalibrationFailed, ImageUnreadable
from companion.vision.frames import FrameSource, read_image
from companion.vision.model import PATCH
from companion.vision.profile import Profile

_EXT = (".png", ".jpg", ".jpeg", ".bmp")


@dataclass(frozen=True)
class CalibrationImages:
    empty: tuple[np.ndarray, ...]
    dice: tuple[tuple[np.ndarray, tuple[int, ...] | None], ...]  # image, faces named in the file name
    paco: tuple[np.ndarray, ...]


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
        raise CalibrationFailed(f"{d} is not a folder of calibration images")
    files = sorted(p for p in d.iterdir() if p.suffix.lower() in _EXT and p.is_file())
    pick = lambda prefix: [p for p in files if p.name.lower().startswith(prefix)]  # noqa: E731
    empty, dice, paco = pick("empty"), pick("dice"), pick("paco")
    if not empty:
        raise CalibrationFailed(f"{d}: no empty*.png photo of the table without dice")
    if not paco:
        raise CalibrationFailed(f"{d}: no paco*.png photo of the Paco face held to the camera")
    try:
        return CalibrationImages(empty=tuple(read_image(p) for p in empty),
                                 dice=tuple((read_image(p), expected_faces(p.name)) for p in dice),
                                 paco=tuple(read_image(p) for p in paco))
    except ImageUnreadable as exc:
        raise CalibrationFailed(f"calibration image unreadable: {exc}") from None


def build_profile(images: CalibrationImages, name: str, *, model=None) -> Profile:
    """Profile from the photos: median empty table, die size from the dice photos, Paco patches."""
    from companion.vision.reader import DiceReader

    shape = images.empty[0].shape
    same = [im for im in images.empty if im.shape == shape]
    background = np.median(np.stack(same), axis=0).astype(np.uint8) if len(same) > 1 else same[0]
    sizes = []
    for im, _ in images.dice:
        if im.shape[:2] != shape[:2]:
            raise CalibrationFailed("dice photos must have the same size as the empty-table photo")
        for c in find_candidates(im, background=background):
            sizes.append(min(c.w, c.h))
    die_size = float(np.median(sizes)) if sizes else None
    patches = []
    for im in images.paco:
        cands = find_candidates(im)
        if not cands:
            raise CalibrationFailed("no die found in a paco photo: hold the Paco face closer and well lit")
        big = max(max(c.w, c.h) for c in cands)
        for c in cands:
            if max(c.w, c.h) >= 0.6 * big:
                patches.append(crop(im, c, PATCH))
    profile = Profile(name=name, resolution=(int(shape[0]), int(shape[1])), die_size=die_size,
                      background=background, paco_patches=np.stack(patches))
    check_profile(profile, images, DiceReader(profile, model))
    return profile


def check_profile(profile: Profile, images: CalibrationImages, reader) -> None:
    """Read the calibration photos back; refuse the profile if they are misread."""
    # Paco photos are held up to the camera: not over the table, not at table distance
    from companion.vision.reader import DiceReader

    held = DiceReader(replace(profile, background=None, die_size=None), reader.model)
    for i, im in enumerate(images.paco):
        r = held.read(im)
        if r.total == 0 or r.counts[1] == 0:
            raise CalibrationFailed(f"paco photo {i + 1}: the Paco face was not read as a 1; retake it")
    for i, (im, want) in enumerate(images.dice):
        r = reader.read(im)
        if r.total == 0:
            raise CalibrationFailed(f"dice photo {i + 1}: no dice found; check the light and the framing")
        if want is not None:
            got = tuple(sorted(d.face for d in r.dice))
            if got != want:
                raise CalibrationFailed(f"dice photo {i + 1}: read faces {got}, the file name says {want}")


def calibrate_images(folder: str | pathlib.Path, out_dir: str | pathlib.Path, name: str | None = None,
                     *, model=None) -> Profile:
    out = pathlib.Path(out_dir)
    prof = build_profile(load_calibration_images(folder), name or out.name, model=model)
    prof.save(out)
    return prof


def _median_frame(frames: FrameSource, n: int) -> np.ndarray:
    shots = [frames.read() for _ in range(n)]
    return np.median(np.stack(shots), axis=0).astype(np.uint8)


def calibrate_live(frames: FrameSource, out_dir: str | pathlib.Path, *, name: str | None = None,
                   say: Callable[[str], None] = print, wait: Callable[[str], object] = input,
                   model=None) -> Profile:
    """Guide a person through calibration with a camera; saves the photos too, for a rerun."""
    out = pathlib.Path(out_dir)
    shots = out / "images"
    shots.mkdir(parents=True, exist_ok=True)
    steps = [("empty", "Clear the table of dice and cups, then press Enter."),
             ("dice", "Put four or five dice on the table, apart from each other, then press Enter."),
             ("paco", "Hold one of your dice with its Paco face toward the camera, then press Enter.")]
    for stem, prompt in steps:
        say(prompt)
        wait("")
        img = _median_frame(frames, 5) if stem == "empty" else frames.read()
        cv2.imwrite(str(shots / f"{stem}.png"), img)  # no digits: "dice-1" would mean "shows a 1"
        say("Got it.")
    prof = calibrate_images(shots, out, name or out.name, model=model)
    say(f"Calibration saved in {out}. I read the dice you showed me.")
    return prof
