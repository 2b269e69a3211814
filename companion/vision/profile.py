"""Calibration profiles: calibration/<name>/profile.json plus reference images.

profile.json (version 2):
  {"version": 2, "name": str, "resolution": [h, w], "die_size": float px at that resolution or null,
   "background": "background.png" or null, "paco": ["paco-0.png", ...]}
die_size is the side of a die's top face as the detector measures it; background.png is the empty
table; paco-N.png are 32x32 upright patches of the player's Paco face (cut as the reader cuts dice).
Version 1 profiles measured dice another way (boxes with side faces and shadows) and are refused.
Anything missing, unreadable or inconsistent raises ProfileError: a bad profile never gives a count.
"""
from __future__ import annotations

import json
import pathlib
from dataclasses import dataclass
from functools import cached_property

import cv2
import numpy as np

from companion.files import read_bytes
from companion.vision.errors import ProfileError
from companion.vision.frames import MAX_PIXELS, decode_image, write_image
from companion.vision.model import PATCH, dihedral, features

VERSION = 2


@dataclass(frozen=True, eq=False)
class Profile:
    name: str
    resolution: tuple[int, int]  # (h, w) of the calibration photos
    die_size: float | None
    background: np.ndarray | None  # BGR empty table
    paco_patches: np.ndarray  # (n, 32, 32, 3) uint8
    directory: pathlib.Path | None = None

    @cached_property  # eight views of every Paco photo: worked out once, not on each use
    def paco_features(self) -> np.ndarray | None:
        if not len(self.paco_patches):
            return None
        # all 8 symmetries: the face may lie any way round on the table
        return np.concatenate([features(dihedral(self.paco_patches, k)) for k in range(8)])

    def fits(self, shape) -> bool:
        """Was the profile made with this frame's framing (aspect ratio)? Only then do its table
        photo and die size say anything about the frame: a webcam switched from 16:9 to 4:3 crops
        the table differently, and a die size scaled by width alone was wrong by far."""
        h, w = shape[:2]
        return abs(h / w - self.resolution[0] / self.resolution[1]) <= 0.02

    def framing_note(self, shape) -> str | None:
        """The sentence telling the user this frame does not fit the profile, or None if it fits.
        One wording for `see` and for play, which each put where the frame came from in front."""
        if self.fits(shape):
            return None
        h, w = self.resolution
        return (f"framed {shape[1]}x{shape[0]}, unlike the profile's {w}x{h} photos; its table photo and "
                "die size are not used (calibrate again for this camera setting)")

    def die_size_for(self, shape) -> float | None:
        if self.die_size is None or not self.fits(shape):
            return None
        return self.die_size * shape[1] / self.resolution[1]

    def background_for(self, shape) -> np.ndarray | None:
        """The empty table, if it was taken with the same framing (aspect ratio) as this frame."""
        if self.background is None or not self.fits(shape):
            return None
        return self.background

    def save(self, directory: pathlib.Path) -> pathlib.Path:
        """Write the profile; ProfileError if the folder cannot be made or written."""
        directory = pathlib.Path(directory)
        images = {}
        if self.background is not None:
            images["background.png"] = self.background
        paco = [f"paco-{i}.png" for i in range(len(self.paco_patches))]
        images.update(zip(paco, self.paco_patches))
        data = {"version": VERSION, "name": self.name, "resolution": list(self.resolution),
                "die_size": None if self.die_size is None else round(float(self.die_size), 2),
                "background": "background.png" if self.background is not None else None,
                "paco": paco}
        try:
            directory.mkdir(parents=True, exist_ok=True)
            for name, image in images.items():
                write_image(directory / name, image)
            # The JSON last: a folder without it is not a profile, so a failed save is never
            # mistaken for one.
            (directory / "profile.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise ProfileError(f"cannot save the profile in {directory}: {exc.strerror or exc}") from None
        return directory


def _img(directory: pathlib.Path, name, what: str, flags=cv2.IMREAD_COLOR) -> np.ndarray:
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name.startswith("."):
        raise ProfileError(f"{directory / 'profile.json'}: {what} must be a plain file name, not {name!r}")
    p = directory / name
    if not p.is_file():
        raise ProfileError(f"{directory}: the {what} image {name} is missing")
    try:  # read by Python, decoded by OpenCV: its own path handling crashes on a name not in UTF-8
        img = decode_image(read_bytes(p), flags)
    except OSError as exc:
        raise ProfileError(f"{directory}: the {what} image {name} cannot be read ({exc.strerror or exc})") from None
    if img is None or img.size == 0:
        raise ProfileError(f"{directory}: the {what} image {name} is not a readable image")
    return img


def load_profile(directory: str | pathlib.Path) -> Profile:
    """Load and check a profile folder; every defect becomes a ProfileError with a clear sentence."""
    d = pathlib.Path(directory)
    if d.is_file() and d.name == "profile.json":
        d = d.parent
    pj = d / "profile.json"
    if d.is_file():
        raise ProfileError(f"{d} is a file; a calibration profile is a folder (made by: companion calibrate)")
    if not d.is_dir():
        raise ProfileError(f"calibration profile {d} does not exist; run: companion calibrate")
    if not pj.is_file():
        raise ProfileError(f"{d} has no profile.json; run: companion calibrate")
    try:
        data = json.loads(read_bytes(pj).decode("utf-8-sig"))  # a Windows editor's BOM too
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProfileError(f"{pj} is corrupt ({exc}); run calibration again") from None
    if not isinstance(data, dict):
        raise ProfileError(f"{pj} is corrupt (not a JSON object); run calibration again")
    if data.get("version") == 1:
        again = f"companion calibrate --images {d / 'images'} --out {d}" if (d / "images").is_dir() else "companion calibrate"
        raise ProfileError(f"{pj} was made by an earlier companion, which measured dice another way; "
                           f"calibrate again: {again}")
    if data.get("version") != VERSION:
        raise ProfileError(f"{pj} has version {data.get('version')!r}, this program reads version {VERSION}")
    res = data.get("resolution")
    if (not isinstance(res, list) or len(res) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in res)):
        raise ProfileError(f"{pj}: resolution must be [height, width] in pixels")
    if res[0] * res[1] > MAX_PIXELS:
        raise ProfileError(f"{pj}: resolution {res[1]}x{res[0]} is more than any camera's; run calibration again")
    ds = data.get("die_size")
    if ds is not None and (isinstance(ds, bool) or not isinstance(ds, (int, float)) or not (4 <= ds <= max(res))):
        raise ProfileError(f"{pj}: die_size {ds!r} is not a plausible size in pixels")
    name = data.get("name")
    if not isinstance(name, str):
        raise ProfileError(f"{pj}: name must be a string")
    bg = None
    if data.get("background") is not None:
        bg = _img(d, data["background"], "background")
        if bg.shape[:2] != tuple(res):
            raise ProfileError(f"{d}: background image is {bg.shape[1]}x{bg.shape[0]}, profile says {res[1]}x{res[0]}")
    paco_names = data.get("paco", [])
    if not isinstance(paco_names, list):
        raise ProfileError(f"{pj}: paco must be a list of image names")
    patches = []
    for n in paco_names:
        p = _img(d, n, "Paco")
        if p.shape[:2] != (PATCH, PATCH):
            p = cv2.resize(p, (PATCH, PATCH), interpolation=cv2.INTER_AREA)
        patches.append(p)
    arr = np.stack(patches) if patches else np.zeros((0, PATCH, PATCH, 3), np.uint8)
    return Profile(name=name, resolution=(res[0], res[1]), die_size=None if ds is None else float(ds),
                   background=bg, paco_patches=arr, directory=d)
