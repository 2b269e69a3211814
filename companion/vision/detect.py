"""Finding dice in a frame (no face reading here): a small learned detector.

Why this design: touching dice of one colour, glare joined to a die, wood grain and white dice on a
pale tray defeat a segmentation of "pixels unlike the table" however it is tuned (four rounds of
rules for cutting clusters still lost a die in one scene of twenty). A small fully convolutional
network learns them instead, from synthetic scenes (companion.vision.scenes) and the training
photos. It looks at the frame scaled so its longest side is 320 px, or so a die is about 18 px
across when the die size is known, and on a grid of 4 px cells gives, in the manner of CenterNet:
- how likely the cell holds the centre of a die's top face (a heatmap; a die is its local peak),
- where in the cell that centre is, the top's side, and its turn (as cos 4a and sin 4a: a square
  looks the same every 90 degrees).
It costs about 8 ms a 1280x720 frame on one core (companion.vision.dnn runs it). Trained by
`python -m training.vision`; the weights ship as detector_model.npz.
"""
from __future__ import annotations

import functools
import pathlib
from dataclasses import dataclass

import cv2
import numpy as np

from companion.vision.dnn import detector_onnx, load_onnx
from companion.vision.errors import ModelError
from companion.vision.model import MARGIN, PATCH, conv

MODEL_PATH = pathlib.Path(__file__).with_name("detector_model.npz")
INPUT = 320  # the longest side of the network's input when the die size is not known
# (out channels, kernel, stride, dilation) of each convolution, ReLU after all but the last: the
# dilated ones see a die's neighbours (receptive field ~67 input px, a die ~18)
LAYERS = ((16, 3, 2, 1), (16, 3, 1, 1), (32, 3, 2, 1), (48, 3, 1, 1), (48, 3, 1, 2), (48, 3, 1, 4),
          (48, 3, 1, 1), (6, 1, 1, 1))
STRIDE = int(np.prod([stride for _, _, stride, _ in LAYERS]))  # input pixels per heatmap cell (4)
OUTPUTS = 6  # heat logit, x and y offset in the cell, log(side / STRIDE), cos 4a, sin 4a
THRESHOLD = 0.3  # heat at a peak from which it is a die (the face model then judges it too)
DIE_AT_INPUT = 18.0  # input pixels a die's side is scaled to when its size is known
SIZES_SEEN = (14.0, 32.0)  # measured die sides at the input it reads best (recall 99.9% and more): else look again
LOOKS = 2  # ... at most this many times
CLOSE_UP_SCALES = (0.15, 0.2, 0.25, 0.35, 0.5, 0.7, 1.0)  # a close-up is looked at this much smaller, coarsest first
LARGEST_INPUT = 800  # another look never scales the frame's longest side beyond this


@dataclass(frozen=True)
class Candidate:
    """A die's top face: centre, side lengths and turn in full-resolution pixels."""

    cx: float
    cy: float
    w: float
    h: float
    angle: float  # degrees, 0 to 90: how far its edges are turned (cv2.boxPoints' angle)
    score: float = 1.0  # the detector's heat at the centre

    @property
    def box(self) -> tuple[int, int, int, int]:
        pts = cv2.boxPoints(((self.cx, self.cy), (self.w, self.h), self.angle))
        x0, y0 = pts.min(0)
        x1, y1 = pts.max(0)
        return int(round(x0)), int(round(y0)), int(round(x1 - x0)), int(round(y1 - y0))


def network_input(img: np.ndarray) -> np.ndarray:
    """A BGR uint8 image (h, w multiples of STRIDE) as the network's NCHW float input."""
    return ((img.astype(np.float32) - 128.0) / 64.0).transpose(2, 0, 1)[None].copy()


def resized(img: np.ndarray, f: float) -> tuple[np.ndarray, tuple[float, float]]:
    """The image scaled by about f, and the true (x, y) scales of its whole-pixel size."""
    h, w = img.shape[:2]
    sw, sh = max(1, int(round(w * f))), max(1, int(round(h * f)))
    out = cv2.resize(img, (sw, sh), interpolation=cv2.INTER_AREA if f < 1 else cv2.INTER_LINEAR)
    return out, (sw / w, sh / h)


def rescale(x, y, scale: tuple[float, float]):
    """Pixel coordinates (OpenCV's: pixel centres at whole numbers) in an image resized by `scale`."""
    return (x + 0.5) * scale[0] - 0.5, (y + 0.5) * scale[1] - 0.5


def scaled_input(img: np.ndarray, f: float) -> tuple[np.ndarray, tuple[float, float]]:
    """The frame scaled by about f, its sides padded up to whole heatmap cells (the pad repeats
    the edge, so it adds no outline), and its true scales."""
    small, scale = resized(img, f)
    sh, sw = small.shape[:2]
    return cv2.copyMakeBorder(small, 0, -sh % STRIDE, 0, -sw % STRIDE, cv2.BORDER_REPLICATE), scale


@dataclass(frozen=True, eq=False)
class Detector:
    """The network's weights (im2col matrices and biases, see model.conv) and how to run it."""

    weights: tuple[np.ndarray, ...]  # w0 b0 w1 b1 ... one pair per LAYERS entry
    use_dnn: bool = True

    @functools.cached_property
    def _forward(self):
        """The network's forward pass by a runtime, built on first use (None where none loads it)."""
        channels = self.weights[0].shape[0] // 9  # a 3x3 first layer's im2col rows
        return load_onnx(detector_onnx(self.weights, LAYERS, channels), "dice detector",
                         (1, channels, 4 * STRIDE, 4 * STRIDE))

    def maps(self, x: np.ndarray) -> np.ndarray:
        """(OUTPUTS, h / STRIDE, w / STRIDE) output maps for one NCHW input."""
        if self.use_dnn and self._forward is not None:
            return self._forward(x)[0]
        return self.maps_numpy(x)

    def maps_numpy(self, x: np.ndarray) -> np.ndarray:
        """The reference forward pass in numpy (slow; the runtimes' must agree with it)."""
        h = x[0].transpose(1, 2, 0)[None]
        for i, (_, _, stride, dilation) in enumerate(LAYERS):
            h = conv(h, self.weights[2 * i], self.weights[2 * i + 1], stride, dilation)
            if i < len(LAYERS) - 1:
                h = np.maximum(h, 0)
        return h[0].transpose(2, 0, 1)

    def find(self, img: np.ndarray, *, die_size: float | None = None, close_up: bool = False,
             threshold: float = THRESHOLD) -> list[Candidate]:
        """The dice in a BGR frame, surest first. `die_size` (full-resolution px) when known;
        `close_up` for a die held to the camera (see _close_up)."""
        h, w = img.shape[:2]
        if die_size:
            return self._find_at(img, _clamp(DIE_AT_INPUT / die_size, h, w), threshold)
        f = INPUT / max(h, w)
        if close_up:
            return self._close_up(img, f, threshold)
        found = self._find_at(img, f, threshold)
        # Dice far bigger or smaller than those it learned (a camera low over the table, or high
        # above a big one) are found less surely, and measured toward the sizes it knows: look
        # again where they would be the usual size, twice at most. Dice measured too big are, if
        # they then measure the usual size; dice measured too small may not be (a 5 px die
        # measures 13, as a 15 px die does), so a closer look counts if it finds more.
        for _ in range(LOOKS):
            side = _measured(found, f)
            if side is None or _reads_well(side):
                break
            f2 = _clamp(f * DIE_AT_INPUT / side, h, w)
            if abs(np.log(f2 / f)) < np.log(1.2):
                break
            again = self._find_at(img, f2, threshold)
            if f2 > f:
                better = _sure(again) > _sure(found)
            else:
                new_side = _measured(again, f2)
                better = new_side is not None and _reads_well(new_side)
            if not better:
                break
            found, f = again, f2
        return found

    def _close_up(self, img: np.ndarray, f: float, threshold: float) -> list[Candidate]:
        """A die held to the camera may be several times the usual size, and then its pips look
        like dice of the usual size: the dice are those of the coarsest scale at which dice are
        found at a size it reads well, and found as many at the next scale too. (At the
        coarsest scales the frame is a few cells across: one of two dice a third of the frame
        wide can be missed there, and the other measured half again too big.)"""
        looks: list[tuple[list[Candidate], bool]] = []
        for k in CLOSE_UP_SCALES:
            found = self._find_at(img, f * k, threshold)
            side = _measured(found, f * k)
            looks.append((found, side is not None and _reads_well(side)))
            if len(looks) > 1:
                (coarser, reads_well), (_, next_reads_well) = looks[-2:]
                if reads_well and next_reads_well and _sure(coarser) == _sure(found):
                    return coarser
        # no two scales in a row agree: the coarsest that reads well
        return next((found for found, reads_well in looks if reads_well), looks[-1][0])

    def _find_at(self, img: np.ndarray, f: float, threshold: float) -> list[Candidate]:
        x, scale = scaled_input(img, f)
        return decode(self.maps(network_input(x)), scale, threshold)


def _sure(found: list[Candidate]) -> int:
    """How many of the candidates are dice by the detector's own line (weak peaks may be asked
    for too, to teach the face model)."""
    return sum(c.score >= THRESHOLD for c in found)


def _measured(found: list[Candidate], f: float) -> float | None:
    """The typical side, at an input scaled by f, of the dice found surely (None: none)."""
    sides = [c.w for c in found if c.score >= THRESHOLD]
    return float(np.median(sides)) * f if sides else None


def _reads_well(side: float) -> bool:
    """Is a measured die side (input pixels) one of the sizes the detector reads best?"""
    return SIZES_SEEN[0] <= side <= SIZES_SEEN[1]


def _clamp(f: float, h: int, w: int) -> float:
    return float(min(f, LARGEST_INPUT / max(h, w)))


def decode(maps: np.ndarray, scale: tuple[float, float], threshold: float = THRESHOLD) -> list[Candidate]:
    """The dice in output maps of an input resized by `scale` (x, y): the heatmap's local peaks
    over `threshold`, in full-resolution pixels, surest first."""
    heat = 1.0 / (1.0 + np.exp(-maps[0]))
    peaks = (heat >= cv2.dilate(heat, np.ones((3, 3), np.uint8))) & (heat > threshold)
    ys, xs = np.nonzero(peaks)
    order = np.argsort(-heat[ys, xs], kind="stable")
    ys, xs = ys[order], xs[order]
    back = (1 / scale[0], 1 / scale[1])
    cx, cy = rescale((xs + maps[1, ys, xs]) * STRIDE, (ys + maps[2, ys, xs]) * STRIDE, back)
    sides = np.exp(np.clip(maps[3, ys, xs], -3, 5)) * STRIDE * 2 / (scale[0] + scale[1])
    turns = np.degrees(np.arctan2(maps[5, ys, xs], maps[4, ys, xs])) / 4 % 90.0
    return [Candidate(cx=float(x), cy=float(y), w=float(d), h=float(d), angle=float(a), score=float(heat[i, j]))
            for x, y, d, a, i, j in zip(cx, cy, sides, turns, ys, xs)]


def load_detector(path: pathlib.Path | None = None) -> Detector:
    path = pathlib.Path(path or MODEL_PATH)
    try:
        with np.load(path) as z:
            weights = tuple(z[f"w{i}"] for i in range(sum(1 for k in z.files if k.startswith("w"))))
    except FileNotFoundError:
        raise ModelError(f"dice detector {path} is missing; build it with: python -m training.vision") from None
    except Exception as exc:  # corrupt zip, missing keys
        raise ModelError(f"dice detector {path} is unreadable ({exc}); rebuild it with: "
                         "python -m training.vision") from None
    expected, cin = [], 3
    for out, k, _, _ in LAYERS:
        expected += [(k * k * cin, out), (out,)]
        cin = out
    if [w.shape for w in weights] != expected:
        raise ModelError(f"dice detector {path} has the wrong shape; rebuild it with: python -m training.vision")
    if not all(np.isfinite(w).all() for w in weights):
        raise ModelError(f"dice detector {path} holds numbers that are not finite; rebuild it with: "
                         "python -m training.vision")
    return Detector(weights=tuple(w.astype(np.float32) for w in weights))


SAME_DIE = 0.6  # centres closer than this many sides of the smaller top: one die, found twice
INSIDE_TOP = 0.5  # ... or closer than this many sides of the bigger top: a spot inside that die


def same_die(a: Candidate, b: Candidate) -> bool:
    """Are two candidates one die? Two dice's tops cannot overlap, so their centres are at least a
    die's side apart; and a centre inside the other's top (half its side from its centre) is a
    spot on that die, as a swirl of a marbled die read as a small die of its own. On 100 dark
    marbled scenes of the development seeds that took false dice from 12 to 4, for one die read
    wrong that was read right (of its two reads, the detector's surer one was wrong)."""
    small, big = sorted((max(a.w, a.h), max(b.w, b.h)))
    return bool(np.hypot(a.cx - b.cx, a.cy - b.cy) < max(SAME_DIE * small, INSIDE_TOP * big))


def crop(img: np.ndarray, c: Candidate, out: int = PATCH, margin: float = MARGIN) -> np.ndarray:
    """The candidate warped upright into an out x out patch, `margin` times its side across."""
    side = max(c.w, c.h) * margin
    up = int(np.clip(np.ceil(side / out), 1, 3))  # warp big then shrink with INTER_AREA: no aliasing
    big = out * up
    s = big / side
    a = np.deg2rad(c.angle)
    cos, sin = np.cos(a) * s, np.sin(a) * s
    # rotate by -angle around the centre, scale, move the centre to the patch centre
    M = np.array([[cos, sin, big / 2 - cos * c.cx - sin * c.cy],
                  [-sin, cos, big / 2 + sin * c.cx - cos * c.cy]], np.float32)
    patch = cv2.warpAffine(img, M, (big, big), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return patch if up == 1 else cv2.resize(patch, (out, out), interpolation=cv2.INTER_AREA)
