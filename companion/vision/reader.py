"""DiceReader: one BGR frame in, a DiceReading out. Pure: never opens a camera or a file."""
from __future__ import annotations

import cv2
import numpy as np

from companion.vision.detect import Candidate, Detector, crop, load_detector, same_die
from companion.vision.frames import as_bgr
from companion.vision.model import NOT_DIE, PACO, SEVERAL, FaceModel, features, load_model
from companion.vision.profile import Profile
from companion.vision.types import DiceReading, Die

_CACHE: dict[str, object] = {}


def default_model() -> FaceModel:
    # loaded once per process: the reveal reads many frames
    if "faces" not in _CACHE:
        _CACHE["faces"] = load_model()
    return _CACHE["faces"]


def default_detector() -> Detector:
    if "detector" not in _CACHE:
        _CACHE["detector"] = load_detector()
    return _CACHE["detector"]


# A spot the detector finds on the calibration photo of the empty table, and that still looks the
# same in the frame (mean Lab difference of their patches under this), is the table's own pattern
# (a printed square, a stand's foot), not a die. A die put there changes the patch by 40 and more.
SAME_AS_TABLE = 12.0


class DiceReader:
    """Reads every die in a frame. Works uncalibrated for plain dice and for toucan Paco faces the
    model recognises as "a 1-face that is not a pip pattern"; a Profile adds the die size, the
    empty table and the player's own Paco face."""

    def __init__(self, profile: Profile | None = None, model: FaceModel | None = None, *,
                 detector: Detector | None = None, die_threshold: float = 0.5, paco_similarity: float = 0.8) -> None:
        self.profile = profile
        self.model = model or default_model()
        self.detector = detector or default_detector()
        self.die_threshold = die_threshold
        self.paco_similarity = paco_similarity
        self._table: dict[tuple, list[Candidate]] = {}  # look-alikes on the empty table, per frame shape

    def read(self, frame: np.ndarray) -> DiceReading:
        img = as_bgr(frame)
        size = self.profile.die_size_for(img.shape) if self.profile is not None else None
        found = [c for c in self.detector.find(img, die_size=size) if not self._is_table(img, c)]
        if not found:
            return DiceReading(dice=())
        patches = np.stack([crop(img, c) for c in found])
        probs = self.model.predict(patches)
        sims = self._paco_similarity(patches)
        kept = [read for i, c in enumerate(found)
                for read in self._decide(c, probs[i], None if sims is None else sims[i])]
        dice = _one_per_die(kept)
        return DiceReading(dice=tuple(sorted(dice, key=lambda d: (d.box[1], d.box[0]))))

    def _is_table(self, img: np.ndarray, c: Candidate) -> bool:
        """Is this spot the empty table's own look-alike of a die, unchanged?"""
        bg = self.profile.background_for(img.shape) if self.profile is not None else None
        if bg is None or bg.shape != img.shape:
            return False
        if img.shape not in self._table:
            self._table[img.shape] = self.detector.find(bg)
        if not any(same_die(c, t) for t in self._table[img.shape]):
            return False
        a, b = (cv2.cvtColor(crop(im, c), cv2.COLOR_BGR2LAB).astype(np.float32) for im in (img, bg))
        a[..., 0] *= np.median(b[..., 0]) / max(1.0, float(np.median(a[..., 0])))  # the light may have changed
        return float(np.abs(a - b).mean()) < SAME_AS_TABLE

    def _decide(self, c: Candidate, p: np.ndarray, sim) -> list[tuple[Candidate, Die]]:
        if sim is not None and sim >= self.paco_similarity and p[SEVERAL] < 0.5:
            # the player's own Paco face, shown at calibration
            return [(c, Die(face=1, box=c.box, confidence=float(max(sim, p[1] + p[PACO])), paco=True))]
        if p[NOT_DIE] >= self.die_threshold or p[SEVERAL] >= 0.5:
            return []  # table, glare, or a spot between dice (each of which has its own centre)
        return [(c, _die(c, p))]

    def _paco_similarity(self, patches: np.ndarray) -> np.ndarray | None:
        if self.profile is None or self.profile.paco_features is None or not len(self.profile.paco_features):
            return None
        f = features(patches)
        f = (f - self.model.mean) / self.model.std
        f /= np.linalg.norm(f, axis=1, keepdims=True) + 1e-6
        t = self.profile.paco_features
        t = (t - self.model.mean) / self.model.std
        t = t / (np.linalg.norm(t, axis=1, keepdims=True) + 1e-6)
        return (f @ t.T).max(1)


def _faces(p: np.ndarray) -> np.ndarray:
    """(n, 6) face probabilities of (n, N_CLASSES) model outputs, a Paco counting as a 1."""
    return np.stack([p[:, 1] + p[:, PACO], p[:, 2], p[:, 3], p[:, 4], p[:, 5], p[:, 6]], 1)


def _die(c: Candidate, p: np.ndarray) -> Die:
    """The die a candidate is, from the model's probabilities for it."""
    faces = _faces(p[None])[0]
    f = int(np.argmax(faces)) + 1
    # confidence: how sure the face is, given it is a die at all, damped when it may not be a die
    conf = float(faces[f - 1] / max(1e-6, faces.sum())) * float(min(1.0, faces.sum() / 0.8))
    return Die(face=f, box=c.box, confidence=conf, paco=bool(f == 1 and p[PACO] > p[1]))


def _one_per_die(kept: list[tuple[Candidate, Die]]) -> list[Die]:
    """One answer per die: of two reads of one die (detect.same_die), the detector's surer one."""
    out: list[Candidate] = []
    dice: list[Die] = []
    for c, d in sorted(kept, key=lambda k: -k[0].score):
        if not any(same_die(c, o) for o in out):
            out.append(c)
            dice.append(d)
    return dice
