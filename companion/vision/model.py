"""The small face model: a convolutional network over a die patch, shipped as face_model.npz.

Classes: 0 not a die, 1..6 pip faces, 7 Paco (toucan) face, 8 a patch over several touching dice.
"""
from __future__ import annotations

import functools
import pathlib
from dataclasses import dataclass

import cv2
import numpy as np

from companion.vision.dnn import DnnForward
from companion.vision.errors import ModelError

PATCH = 32
MARGIN = 1.25  # a patch shows a die's top and this much around it (its edges, a little table)
N_CLASSES = 9
NOT_DIE, PACO, SEVERAL = 0, 7, 8
MODEL_PATH = pathlib.Path(__file__).with_name("face_model.npz")


CHANNELS = 3


def features(patches: np.ndarray) -> np.ndarray:
    """(n, 32, 32, 3) BGR uint8 -> (n, 3*32*32) float32, channel-major.

    Why: pip patterns are about contrast with the die body, not about its colour, so each patch is
    described relative to its own body colour (median of the centre): signed differences of L, a and
    b. Red, white or black dice with light or dark pips then look alike to the model.
    """
    n = len(patches)
    if n == 0:
        return np.zeros((0, CHANNELS * PATCH * PATCH), np.float32)
    lab = cv2.cvtColor(patches.reshape(n * PATCH, PATCH, 3), cv2.COLOR_BGR2LAB).reshape(n, PATCH, PATCH, 3)
    lab = lab.astype(np.float32)
    c = PATCH // 4
    body = np.median(lab[:, c:-c, c:-c].reshape(n, -1, 3), axis=1)
    d = (lab - body[:, None, None, :]) / np.array([40.0, 20.0, 20.0], np.float32)
    f = np.clip(d, -3, 3).transpose(0, 3, 1, 2)
    return np.ascontiguousarray(f).reshape(n, -1).astype(np.float32)


def dihedral(patches: np.ndarray, k: int) -> np.ndarray:
    """One of the 8 symmetries of the square (die faces keep their value under all of them)."""
    p = np.rot90(patches, k % 4, axes=(1, 2))
    if k >= 4:
        p = p[:, :, ::-1]
    return np.ascontiguousarray(p)


def conv(x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: int = 1, dilation: int = 1) -> np.ndarray:
    """A 'same' k x k convolution, NHWC, as one matrix product (im2col): `w` is (k*k*in, out) with
    rows in (dy, dx, channel) order, the layout both shipped networks keep their weights in."""
    n, h, wd, c = x.shape
    k = int(round(np.sqrt(w.shape[0] // c)))
    pad = dilation * (k // 2)
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    oh, ow = (h - 1) // stride + 1, (wd - 1) // stride + 1
    cols = np.concatenate([xp[:, dy * dilation:dy * dilation + stride * (oh - 1) + 1:stride,
                              dx * dilation:dx * dilation + stride * (ow - 1) + 1:stride, :]
                           for dy in range(k) for dx in range(k)], axis=3)
    return cols @ w + b


def im2col_weights(w: np.ndarray) -> np.ndarray:
    """An (out, in, k, k) convolution weight, as ONNX and torch hold it, as the im2col matrix `conv`
    takes (the inverse of `companion.vision.dnn.oihw`)."""
    return np.ascontiguousarray(np.asarray(w).transpose(2, 3, 1, 0).reshape(-1, w.shape[0]))


def pool2(x: np.ndarray) -> np.ndarray:
    n, h, w, c = x.shape
    return x.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


TWO_VIEWS = (0, 5)  # as it is, and turned and mirrored
ALL_VIEWS = tuple(range(8))
REFINE_BELOW = 0.9  # a patch read less surely than this in two views is read in all eight


def face_probabilities(p: np.ndarray) -> np.ndarray:
    """(n, 6) probabilities of faces 1 to 6 from (n, N_CLASSES) model outputs, a Paco counting as a 1."""
    return np.stack([p[:, 1] + p[:, PACO], p[:, 2], p[:, 3], p[:, 4], p[:, 5], p[:, 6]], 1)


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(1, keepdims=True)
    e = np.exp(z)
    return (e / e.sum(1, keepdims=True)).astype(np.float32)


@dataclass(frozen=True, eq=False)
class FaceModel:
    """Three 3x3 conv + pool stages, then two dense layers (weights as float32 numpy arrays)."""

    weights: tuple[np.ndarray, ...]  # c1w c1b c2w c2b c3w c3b f1w f1b f2w f2b
    mean: np.ndarray  # per-feature centring, used for Paco template similarity
    std: np.ndarray
    # Run by onnxruntime or OpenCV's DNN module (companion/vision/dnn.py), far faster than
    # numpy, when one loads it; built on first use.
    use_dnn: bool = True

    @functools.cached_property
    def _dnn(self) -> DnnForward | None:
        return DnnForward.build(self.weights, CHANNELS, PATCH)

    def logits(self, f: np.ndarray) -> np.ndarray:
        """Logits from features, the fast way when there is one."""
        if self.use_dnn and len(f) and self._dnn is not None:
            return self._dnn(f)
        return self.logits_from_features(f)

    def logits_from_features(self, f: np.ndarray) -> np.ndarray:
        """The reference forward pass in numpy (training uses the same layers)."""
        n = len(f)
        x = f.reshape(n, CHANNELS, PATCH, PATCH).transpose(0, 2, 3, 1)
        ws = self.weights
        for i in range(0, 6, 2):
            x = pool2(np.maximum(conv(x, ws[i], ws[i + 1]), 0))
        x = np.maximum(x.reshape(n, -1) @ ws[6] + ws[7], 0)
        return x @ ws[8] + ws[9]

    def predict(self, patches: np.ndarray, refine_below: float = REFINE_BELOW) -> np.ndarray:
        """Class probabilities from two symmetries; patches the model is unsure of (top probability
        under `refine_below`) are looked at in all eight (+2.5 points per die on real photos),
        which costs little because most patches are clear."""
        return self._views_as_needed(patches, refine_below).probabilities()

    def predict_checked(self, patches: np.ndarray, refine_below: float = REFINE_BELOW) -> tuple[np.ndarray, np.ndarray]:
        """`predict`'s probabilities, and per patch the share of its eight views whose own top face
        is the face those probabilities give: a die read surely from two views can still be a
        die some turns of which read as another face (glare across a pip, dark pips on a dark
        body), and those are the sure mistakes."""
        views = self._views_as_needed(patches, refine_below)
        probs = views.probabilities()
        views.look(views.everyone, ALL_VIEWS)
        return probs, views.agreement(face_probabilities(probs).argmax(1))

    def _views_as_needed(self, patches: np.ndarray, refine_below: float) -> Views:
        """Every patch read in two views, and in all eight where those leave it unsure."""
        views = Views(self, patches)
        views.look(views.everyone, TWO_VIEWS)
        views.look(views.unsure(views.everyone, refine_below), ALL_VIEWS)
        return views

    def predict_sym(self, patches: np.ndarray, symmetries: tuple[int, ...]) -> np.ndarray:
        """Class probabilities with logits averaged over the given symmetries of the square."""
        views = Views(self, patches)
        views.look(views.everyone, symmetries)
        return views.probabilities()

    def save(self, path: pathlib.Path) -> None:
        arrs = {f"w{i}": w.astype(np.float32) for i, w in enumerate(self.weights)}
        np.savez_compressed(path, mean=self.mean.astype(np.float32), std=self.std.astype(np.float32), **arrs)


def load_model(path: pathlib.Path | None = None) -> FaceModel:
    path = pathlib.Path(path or MODEL_PATH)
    try:
        with np.load(path) as z:
            n = sum(1 for k in z.files if k.startswith("w"))
            weights = tuple(z[f"w{i}"] for i in range(n))
            mean, std = z["mean"], z["std"]
    except FileNotFoundError:
        raise ModelError(f"face model {path} is missing; build it with: python -m training.vision") from None
    except Exception as exc:  # corrupt zip, missing keys
        raise ModelError(f"face model {path} is unreadable ({exc}); rebuild it with: python -m training.vision") from None
    if (n != 10 or weights[0].shape[0] != 9 * CHANNELS or weights[-1].shape[-1] != N_CLASSES
            or mean.shape != (CHANNELS * PATCH * PATCH,) or std.shape != mean.shape
            or any(bias.shape != (w.shape[-1],) for w, bias in zip(weights[::2], weights[1::2]))):
        raise ModelError(f"face model {path} has the wrong shape; rebuild it with: python -m training.vision")
    if not all(np.isfinite(a).all() for a in (*weights, mean, std)):  # NaN would read as confident nonsense
        raise ModelError(f"face model {path} holds numbers that are not finite; rebuild it with: python -m training.vision")
    return FaceModel(weights=weights, mean=mean, std=std)


class Views:
    """A batch of patches read in as many of the square's symmetries as each one needs.

    The class probabilities average the logits of the views read so far, so looking harder at a
    patch adds views instead of reading it again from the start. (Features commute with the
    symmetries, the body colour being a median of the centre, so they are computed once.)"""

    def __init__(self, model: FaceModel, patches: np.ndarray) -> None:
        self.model = model
        n = len(patches)
        self.everyone = np.arange(n)
        self._maps = features(patches).reshape(n, CHANNELS, PATCH, PATCH)
        self._sum = np.zeros((n, N_CLASSES), np.float64)
        self._seen = np.zeros((n, len(ALL_VIEWS)), bool)
        self._top_face = np.zeros((n, len(ALL_VIEWS)), np.int8)  # each view's own top face (0-5)

    def look(self, which: np.ndarray, symmetries: tuple[int, ...]) -> None:
        """Read the patches `which` (indices) in each of `symmetries` they were not read in yet
        (all of them in one batch: the network's fixed cost per call is paid once)."""
        batches = []
        for k in symmetries:
            todo = which[~self._seen[which, k]]
            if len(todo):
                maps = np.rot90(self._maps[todo], k % 4, axes=(2, 3))  # as `dihedral`, channels first
                if k >= 4:
                    maps = maps[:, :, :, ::-1]
                batches.append((k, todo, np.ascontiguousarray(maps).reshape(len(todo), -1)))
        if not batches:
            return
        logits = self.model.logits(np.concatenate([flat for _, _, flat in batches]))
        top_faces = face_probabilities(softmax(logits)).argmax(1)
        start = 0
        for k, todo, _ in batches:
            part = slice(start, start + len(todo))
            self._sum[todo] += logits[part]
            self._seen[todo, k] = True
            self._top_face[todo, k] = top_faces[part]
            start += len(todo)

    def probabilities(self) -> np.ndarray:
        if not len(self._sum):
            return np.zeros((0, N_CLASSES), np.float32)
        return softmax(self._sum / np.maximum(1, self._seen.sum(1))[:, None])

    def agreement(self, faces: np.ndarray) -> np.ndarray:
        """Per patch, the share of the views read so far whose own top face is `faces` (0-5)."""
        agree = (self._top_face == np.asarray(faces)[:, None]) & self._seen
        return agree.sum(1) / np.maximum(1, self._seen.sum(1))

    def unsure(self, which: np.ndarray, below: float) -> np.ndarray:
        """Those of the patches `which` whose top probability is under `below`."""
        return which[self.probabilities()[which].max(1) < below] if len(which) else which
