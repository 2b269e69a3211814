"""Where frames come from: a camera or image files. The reader itself never opens devices."""
from __future__ import annotations

import pathlib
import re
from typing import Protocol, Sequence

import cv2
import numpy as np

from companion.calls import number_words
from companion.files import read_bytes
from companion.sources import files_in
from companion.vision.errors import CameraUnavailable, DiceRolledSince, ImageUnreadable, NoFrame, PhotosUsedUp
from companion.vision.types import DiceReading


class FrameSource(Protocol):
    # A live source shows the table as it is now (the cups still coming up); recorded frames
    # are what they are, however long one waits for them. A still source (a photo) gives the
    # same frame however often it is read.
    live: bool
    still: bool

    def begin_reveal(self, round_number: int | None = None, latest_round: int | None = None) -> None:
        """A reveal starts (that of this round: a reveal done again after an undo is the same
        one; `latest_round`: the latest the table has rolled for). A source of one photo per
        reveal moves on to the next photo."""
        ...

    def read(self) -> np.ndarray:
        """The next BGR frame; raises NoFrame (a CameraUnavailable) when there is none."""
        ...


MAX_PIXELS = 120_000_000  # above the largest phone cameras' photos (108 Mpx)
# JPEG's start-of-frame markers, which hold its size (not C4, C8 and CC, which are other tables)
_JPEG_FRAMES = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def header_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) as a PNG's, JPEG's, WebP's, TIFF's, BMP's, GIF's or PNM's header gives
    them, before anything is decoded; None for other formats or a header that cannot be read."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
    if re.match(rb"P[1-6]\s", data[:3]):
        return _pnm_size(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp_size(data)
    if data[:4] in (b"II*\x00", b"MM\x00*"):
        return _tiff_size(data)
    if data[:2] == b"BM" and len(data) >= 26:
        return _bmp_size(data)
    if data[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 9 < len(data) and data[i] == 0xFF:
        marker, length = data[i + 1], int.from_bytes(data[i + 2:i + 4], "big")
        if marker in _JPEG_FRAMES:
            return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
        i += 2 + length
    return None


def _pnm_size(data: bytes) -> tuple[int, int] | None:
    """A PBM, PGM or PPM's sides: the two numbers after its magic, comments (#...) skipped."""
    text = re.sub(rb"#[^\r\n]*", b" ", data[2:1024])
    sides = re.match(rb"\s*(\d+)\s+(\d+)", text)
    return (int(sides[1]), int(sides[2])) if sides else None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    kind = data[12:16]
    if kind == b"VP8X" and len(data) >= 30:  # the extended format's canvas, 24-bit sides less one
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    if kind == b"VP8 " and len(data) >= 30:  # lossy: 14-bit sides after the key frame's start code
        return (int.from_bytes(data[26:28], "little") & 0x3FFF, int.from_bytes(data[28:30], "little") & 0x3FFF)
    if kind == b"VP8L" and len(data) >= 25:  # lossless: 14-bit sides less one, packed
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


def _bmp_size(data: bytes) -> tuple[int, int] | None:
    header = int.from_bytes(data[14:18], "little")  # the kind of header, by its length
    if header == 12:  # OS/2's: 16-bit sides
        return int.from_bytes(data[18:20], "little"), int.from_bytes(data[20:22], "little")
    if header >= 40:  # Windows': 32-bit, a negative height drawn top down
        return (int.from_bytes(data[18:22], "little", signed=True),
                abs(int.from_bytes(data[22:26], "little", signed=True)))
    return None


def _tiff_size(data: bytes) -> tuple[int, int] | None:
    """The first image's ImageWidth and ImageLength tags."""
    order = "little" if data[:2] == b"II" else "big"
    start = int.from_bytes(data[4:8], order)
    if start + 2 > len(data):
        return None
    sides: dict[int, int] = {}
    for k in range(int.from_bytes(data[start:start + 2], order)):
        entry = data[start + 2 + 12 * k:start + 14 + 12 * k]
        if len(entry) < 12:
            break
        tag, kind = int.from_bytes(entry[0:2], order), int.from_bytes(entry[2:4], order)
        if tag in (256, 257):  # SHORT (3) sits in the value's first two bytes, LONG (4) fills it
            sides[tag] = int.from_bytes(entry[8:10] if kind == 3 else entry[8:12], order)
    return (sides[256], sides[257]) if len(sides) == 2 else None


def read_image(path: str | pathlib.Path) -> np.ndarray:
    """Decode one image file to BGR, or raise ImageUnreadable with a sentence a person understands."""
    p = pathlib.Path(path)
    try:
        data = read_bytes(p)
    except FileNotFoundError:
        raise ImageUnreadable(f"{p}: no such file") from None
    except IsADirectoryError:
        raise ImageUnreadable(f"{p}: is a folder, not an image") from None
    except OSError as exc:
        raise ImageUnreadable(f"{p}: cannot be read ({exc.strerror or exc})") from None
    if not data:
        raise ImageUnreadable(f"{p}: the file is empty")
    size = header_size(data)
    if size is not None and size[0] * size[1] > MAX_PIXELS:
        # decoded, it would take gigabytes (a small file can say so: a PNG of one colour)
        raise ImageUnreadable(f"{p}: {size[0]}x{size[1]} pixels is more than any camera's photo; "
                              f"scale it down (to 4000 px across, say)")
    img = decode_image(data)
    if img is None or img.size == 0:
        raise ImageUnreadable(f"{p}: not an image OpenCV can decode")
    return img


def decode_image(data: bytes, flags: int = cv2.IMREAD_COLOR) -> np.ndarray | None:
    """cv2.imdecode, None where it raises (a header giving more pixels than it will make)."""
    try:
        return cv2.imdecode(np.frombuffer(data, np.uint8), flags)
    except cv2.error:
        return None


def check_picture_name(path: str | pathlib.Path) -> None:
    """OSError unless OpenCV can encode a picture of this name's type (cv2.imwrite would
    raise cv2.error on it). Only the suffix goes to OpenCV: a path that is not UTF-8 (a
    folder named in Latin-1) crashes its path handling outright."""
    suffix = pathlib.Path(path).suffix.lower()
    if not suffix.isascii() or not cv2.haveImageWriter(f"picture{suffix}"):
        raise OSError(f"{path}: not a picture file name (end it in .png or .jpg)")


def write_image(path: str | pathlib.Path, image: np.ndarray) -> None:
    """Write a picture, or raise OSError with a sentence a person understands. Encoded by
    OpenCV and written by Python, which takes any path the system does."""
    check_picture_name(path)
    ok, data = cv2.imencode(pathlib.Path(path).suffix.lower(), image)
    if not ok:
        raise OSError(f"cannot write {path}: the picture cannot be encoded")
    try:
        pathlib.Path(path).write_bytes(data.tobytes())
    except OSError as exc:
        raise OSError(f"cannot write {path}: {exc.strerror or exc}") from None


MIN_SIDE = 16  # pixels: anything narrower cannot hold a readable die


def as_bgr(frame: np.ndarray, name: str | pathlib.Path | None = None) -> np.ndarray:
    """Accept grey, BGR or BGRA uint8 frames; anything else is unreadable. `name` (the file it
    came from) starts the message when there is one."""
    where = f"{name}: " if name is not None else ""
    if not isinstance(frame, np.ndarray) or frame.size == 0 or frame.ndim not in (2, 3):
        raise ImageUnreadable(f"{where}the frame is empty or not an image array")
    if frame.dtype != np.uint8:
        raise ImageUnreadable(f"{where}the frame has pixel type {frame.dtype}, expected 8-bit")
    if min(frame.shape[:2]) < MIN_SIDE:
        h, w = frame.shape[:2]
        raise ImageUnreadable(f"{where}the image is only {w}x{h} pixels: too small to show dice")
    if frame.ndim == 2:
        return cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    if frame.shape[2] == 4:
        return cv2.cvtColor(frame, cv2.COLOR_BGRA2BGR)
    if frame.shape[2] != 3:
        raise ImageUnreadable(f"{where}the frame has {frame.shape[2]} channels, expected 3")
    return frame


def without_colour(frame: np.ndarray) -> bool:
    """A grey frame (a webcam's night or infrared mode, a black-and-white photo): its three
    channels agree, but for rounding, at nearly every pixel. Red pips on a dark die vanish in
    one. (Colour photos of dice agree at at most 54% of their pixels, grey ones at all; a
    rendered grey table with a few coloured dice at 99%.)"""
    if frame.ndim == 2:
        return True
    small = frame[::4, ::4, :3].astype(np.int16)
    apart = np.maximum(np.abs(small[..., 0] - small[..., 1]), np.abs(small[..., 1] - small[..., 2]))
    return float((apart <= 2).mean()) >= 0.998


# A frame whose brightest pixels (its 99th percentile) are darker than this is too dark to
# read dice in: a lens covered, a room gone dim (the 200 real photos: 187 and up, and at a
# quarter of their light 47 to 53, where the reader loses most dice; rendered dark tables: 60).
DARK_BELOW = 60
# A frame whose sharpest edges (the 99.5th percentile of the Laplacian, at 640 px across, or
# as it is when smaller: enlarged, a sharp small frame would look soft) are softer than this
# is out of focus (the 200 real photos: 11 and up, rendered reveals 17; the photos blurred by
# a Gaussian of 4 px at that size: 4 at most, of 2 px: 5 in the middle).
BLURRED_BELOW = 6.0


def picture_problem(frame: np.ndarray, reading: DiceReading) -> str | None:
    """Why a frame may show too few dice however many lie there ("the picture is too dark"),
    to tell the players what to put right; None when nothing is seen wrong with it. Out of
    focus only where something was found and left out (most likely the dice, unread): a
    bare table is as soft as a blurred one."""
    grey = frame if frame.ndim == 2 else cv2.cvtColor(frame[..., :3], cv2.COLOR_BGR2GRAY)
    scale = 640 / max(grey.shape[:2])
    if scale < 1:
        grey = cv2.resize(grey, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    if float(np.percentile(grey, 99)) < DARK_BELOW:
        return "the picture is too dark"
    if reading.refused and float(np.percentile(np.abs(cv2.Laplacian(grey, cv2.CV_64F)), 99.5)) < BLURRED_BELOW:
        return "the picture is out of focus"
    return None


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tif", ".tiff")


def image_files(paths: Sequence[str | pathlib.Path]) -> list[pathlib.Path]:
    """The paths given, a folder's images in name order (numbers by value, as a camera
    numbers its photos); a folder without images is an ImageUnreadable."""
    files: list[pathlib.Path] = []
    for p in map(pathlib.Path, paths):
        if not p.is_dir():
            files.append(p)  # read_frame says what is wrong with it, if anything
            continue
        try:
            found = files_in(p, IMAGE_SUFFIXES)
        except OSError as exc:
            raise ImageUnreadable(f"{p}: cannot be listed ({exc.strerror or exc})") from None
        if not found:
            raise ImageUnreadable(f"{p}: no images in this folder ({', '.join(IMAGE_SUFFIXES)})")
        files += found
    return files


def read_frame(path: str | pathlib.Path) -> np.ndarray:
    """An image file as a frame the reader takes (BGR, big enough), or ImageUnreadable naming the file."""
    return as_bgr(read_image(path), path)


class ImageFrames:
    """One photo per reveal, in the order given: a game's reveals replayed from pictures.

    Every file is decoded once at the start, so an unreadable one is refused before the game
    rather than at a reveal; each is decoded again at its reveal (a game of phone photos held
    decoded would take hundreds of megabytes). A photo agrees with itself, so it is read once.
    When the photos run out, a reveal has none (PhotosUsedUp) and the players are asked."""

    live = False
    still = True

    def __init__(self, paths: Sequence[str | pathlib.Path], first_round: int | None = None) -> None:
        """`first_round`: the round a resumed game goes on from; the reveals of earlier rounds
        had their photos before the pause, so a reveal of one done again has none here."""
        if not paths:
            raise NoFrame("no image files given")
        self._paths = image_files(paths)
        problems = []
        for p in self._paths:
            try:
                read_frame(p)
            except ImageUnreadable as exc:
                problems.append(str(exc))
        if problems:
            raise ImageUnreadable("; ".join(problems))
        self._i = -1  # no reveal yet
        self._used = -1  # the last photo a reveal has taken
        self._photo_of_round: dict[int, int] = {}
        self._first_round = first_round
        self._before_the_pause = False

    def begin_reveal(self, round_number: int | None = None, latest_round: int | None = None) -> None:
        """The next photo, or the one this round's reveal had before: a reveal done again
        after "take it back", however far back, looks at the same photo."""
        self._before_the_pause = (round_number is not None and self._first_round is not None
                                  and round_number < self._first_round)
        if self._before_the_pause:
            return
        if round_number is not None and round_number in self._photo_of_round:
            self._i = self._photo_of_round[round_number]
            return
        self._used += 1
        self._i = self._used
        if round_number is not None:
            self._photo_of_round[round_number] = self._i

    def new_game(self) -> None:
        """The table plays again: its rounds count from one anew, and their reveals take the
        photos after those the game before used."""
        self._photo_of_round, self._first_round = {}, None

    def read(self) -> np.ndarray:
        if self._before_the_pause:
            raise PhotosUsedUp("this round was revealed before the game was paused, and the photos given now are of later rounds")
        i = max(self._i, 0)
        if i >= len(self._paths):
            raise PhotosUsedUp("there is no photo left for this reveal")
        path = self._paths[i]
        try:
            return read_frame(path)
        except ImageUnreadable as exc:  # (gone or changed since the start) said at the table: no path
            why = str(exc).removeprefix(f"{path}: ")
            raise ImageUnreadable(f"photo {number_words(i + 1)} of those given cannot be read: {why}") from None


class ArrayFrames:
    """Frames already in memory (tests, replays); repeats the last one."""

    live = False

    def __init__(self, frames: Sequence[np.ndarray]) -> None:
        if not frames:
            raise NoFrame("no frames given")
        self._frames = list(frames)
        self._i = 0

    still = False

    def begin_reveal(self, round_number: int | None = None, latest_round: int | None = None) -> None:
        pass  # frames run on across reveals, as a camera's do

    def read(self) -> np.ndarray:
        f = self._frames[min(self._i, len(self._frames) - 1)]
        self._i += 1
        return f


class CameraFrames:
    """Frames from cv2.VideoCapture(index). Opened at construction so a missing camera fails early."""

    live = True
    still = False

    def __init__(self, index: int, *, width: int | None = 1280, height: int | None = 720) -> None:
        self.index = index
        self._rolled_since = False
        if index < 0:  # OpenCV's "any camera" index, which crashes some builds outright
            raise CameraUnavailable(f"cameras are numbered from 0, so there is no camera {index}")
        cap = cv2.VideoCapture(index)
        if not cap.isOpened():
            cap.release()
            raise CameraUnavailable(f"camera {index} cannot be opened (is it plugged in and free?)")
        if width and height:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, width)
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        self._cap = cap

    # Frames a camera driver may hold from before the reveal (V4L2 keeps about four): nobody
    # reads the camera between reveals, so the first frames read would show the last reveal.
    STALE_FRAMES = 5

    def begin_reveal(self, round_number: int | None = None, latest_round: int | None = None) -> None:
        """A reveal of a round before the latest one rolled for (taken back into, after the
        next round's roll) is not on the table any more: reading it would count the later dice."""
        self._rolled_since = None not in (round_number, latest_round) and round_number < latest_round
        for _ in range(self.STALE_FRAMES):  # the table as it is now, not as it was
            self._cap.grab()

    def read(self) -> np.ndarray:
        if self._rolled_since:
            raise DiceRolledSince("the dice of that round may have been rolled again since")
        ok, frame = self._cap.read()
        if not ok or frame is None:
            raise NoFrame(f"camera {self.index} gave no frame")
        return frame

    def close(self) -> None:
        self._cap.release()

    def __enter__(self) -> "CameraFrames":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
