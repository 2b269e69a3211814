"""DiceReader: one BGR frame in, a DiceReading out. Pure: never opens a camera or a file."""
from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from companion.vision.detect import THRESHOLD, Candidate, Detector, crop, load_detector, same_die
from companion.vision.frames import as_bgr, without_colour
from companion.vision.model import (NOT_DIE, PACO, REFINE_BELOW, SEVERAL, FaceModel, face_probabilities, features,
                                    load_model, softmax)
from companion.vision.profile import Profile
from companion.vision.types import MAYBE_A_DIE, NOT_A_DIE, DiceReading, Die, Refused

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


# A spot the detector finds on the calibration photo of the empty table (weak peaks included) is
# the table's own look-alike of a die (a printed square, a stand's foot) where it still looks the
# same in the frame: under this share of its patch changed by more than CHANGED (Lab units, after
# matching the frame's overall lightness to the photo's). A die thrown there changes a tenth of
# the patch and more, even a white two on a printed white five; camera noise changes none.
SAME_AS_TABLE = 0.03
CHANGED = 25.0
LOOKALIKE_HEAT = 0.1

# A die is read in all eight turns and mirrorings of its patch; when fewer than this share of
# them read the face it is given (two or more of the eight dissent), its confidence falls to
# that share, so a reveal asks. Chosen on training photos set aside from a model trained without
# them (241 dice): it doubted 2 of its 4 surely misread dice and none of the 236 read right
# (one dissent allowed; no dissent allowed doubted 6 right ones for the same 2); on 300
# development scenes it doubts none.
VIEWS_AGREEING = 0.8

# A candidate the face model gives this chance or more of being no die at all, but less than the
# reader's die_threshold, is left out of the count as "maybe a die" and shown as such: guessing
# it a die counted a playing card's clubs as dice, and the count that falls short tells the
# players why the camera's count was not used. On the benchmark's scenes (with and without
# things beside the dice, every finish, the held-out photos) the dice read kept a chance under
# 0.11 and the false dice on cards had 0.21 to 0.49; the line is where a die used to be doubted.
MAYBE_NOT_DIE = 0.2

# A die read unsurely (its top class under model.REFINE_BELOW, or a view of the eight
# dissenting; and more likely a die than not) is read again from four crops, each moved by
# this share of its side up, down, left or right, and its five crops' readings are averaged:
# on small real dice the detector's centre can be a few pixels off, and a pip cut by the
# patch's edge reads as another face. Chosen on the training photos set aside (241 dice), read
# by three face models trained without them: 6, 6 and 5 dice misread without the second look,
# 4, 5 and 5 with it; a shift of 0.05 or 0.12 did no better, and on 100 marbled scenes of other
# seeds than the benchmark's it changed nothing. Things likely no die are not looked at again:
# with things beside the dice, that took a frame from 87 to 109 ms for no die more read right.
SECOND_LOOK_SHIFT = 0.08

# The detector gives a bright pip or swirl of a dark marbled die a peak of its own, a "die"
# about half the die's side, whose crop, one round spot, reads as a sure one. A candidate
# under SPOT_SIDE of the frame's typical die (the median side of the dice read, spots left
# out) and of a bigger die's side, centred within SPOT_REACH of that die's side from its
# centre (its corners are 0.71 away; the reach goes a quarter of a side past its edges), is a
# spot on it. Two dice seen from above cannot lie so close unless one is under half the
# other's side: their tops do not overlap, so their centres are at least half the sum of
# their sides apart. (A camera tilted far shortens the distances up the frame; dice of two
# sizes in one game, far apart in size, could then be taken for a die and its spot.) On 100
# dark marbled scenes of the development seeds, SPOT_SIDE 0.8 took false dice from 11 to 5
# and dice read right from 1646 to 1648 of 1673 (a die whose spot the detector was surer of
# is read from its own crop); SPOT_SIDE 0.75 left 8 false dice. No other set moved, nor the
# 160 training photos.
SPOT_SIDE = 0.8
SPOT_REACH = 0.75
# ... and a die still read from such a candidate (the die's own candidate missing or turned
# down, as when the detector finds only spots on it, or a swirl just too big to be a spot) is
# read again from crops of the typical side: around the candidate's centre and a quarter of
# that side away in the eight directions, as a spot lies off its die's centre. Only a reading
# of another face is taken: real photos hold dice of several sizes, many under SPOT_SIDE of the
# typical one, and re-read they kept their faces but not always their confidence (a real one
# fell from 1.00 to 0.63). On the development scenes above that took the dark marbled dice's
# false dice from 5 to 0 and their misreadings from 16 to 14, and changed no reading of the
# other sets or of the 200 real photos.
SMALL_LOOK_SHIFT = 0.25
SMALL_LOOKS = tuple((dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1))
SMALL_READS = 10  # nine crops each: a frame of small look-alikes costs at most 90 more

# The face model reads at most this many of a frame's candidates, the detector's surest first;
# the rest are left out as "maybe a die", so a count that falls short says why. A reveal shows a
# few candidates more than it has dice (at most 34, 7 more than the dice, in the benchmark's 1200
# rendered scenes, chips, coins and cards beside the dice in 400), but a page of text or a
# circuit board gives 200 to 550, 2.5 to 5 ms each to read (onnxruntime, OpenCV): 1.5 to 3 s a
# frame where a live view needs well under one.
MAX_READ = 100
UNREAD_NOT_DIE = 0.5  # a candidate never read: as likely no die as a die

# A frame without colour (a webcam's night or infrared mode) is read, but no die in it is sure:
# on grey copies of the 200 real photos, 5 of the 97 readings a reveal would have trusted were
# wrong (a dark die's red pips gone: a two read as a one at 0.97), against none of 178 in colour.
COLOURLESS_CONFIDENCE = 0.5


class DiceReader:
    """Reads every die in a frame. Works uncalibrated for plain dice and for toucan Paco faces the
    model recognises as "a 1-face that is not a pip pattern"; a Profile adds the die size, the
    empty table and the player's own Paco face."""

    def __init__(self, profile: Profile | None = None, model: FaceModel | None = None, *,
                 detector: Detector | None = None, close_up: bool = False, die_threshold: float = 0.5,
                 paco_similarity: float = 0.8, max_read: int = MAX_READ) -> None:
        self.profile = profile
        self.close_up = close_up  # frames of a die held to the camera (calibration's Paco photo)
        self.model = model or default_model()
        self.detector = detector or default_detector()
        self.die_threshold = die_threshold
        self.paco_similarity = paco_similarity
        self.max_read = max_read
        self._table: dict[tuple, tuple] = {}  # per frame shape: the empty table, its look-alikes, its lightness
        self._paco_templates: np.ndarray | None = None

    def read(self, frame: np.ndarray) -> DiceReading:
        img = as_bgr(frame)
        size = self.profile.die_size_for(img.shape) if self.profile is not None else None
        found = self._not_table(img, self.detector.find(img, die_size=size, close_up=self.close_up), size)
        if not found:
            return DiceReading(dice=(), colourless=without_colour(img))
        found, unread = found[:self.max_read], found[self.max_read:]  # surest first
        patches = np.stack([crop(img, c) for c in found])
        probs, agreement = self._second_look(img, found, *self.model.predict_checked(patches))
        sims = self._paco_similarity(patches)
        decided = [(c, self._decide(c, probs[i], None if sims is None else sims[i], agreement[i]))
                   for i, c in enumerate(found)]
        kept = [(c, d) for c, d in decided if d is not None]
        typical = _typical_side([c for c, _ in kept])
        kept = self._small_read_again(img, _one_per_die(kept, typical), typical)
        left_out: dict[str, list[tuple[Candidate, float]]] = {NOT_A_DIE: [],
                                                              MAYBE_A_DIE: [(c, UNREAD_NOT_DIE) for c in unread]}
        for (c, d), p in zip(decided, probs):
            if d is not None:
                continue
            # maybe a die: every one, for each would have been counted; not a die: only what the
            # detector itself took for one (its weak peaks are asked about too)
            if p[NOT_DIE] < self.die_threshold:
                left_out[MAYBE_A_DIE].append((c, float(p[NOT_DIE])))
            elif c.score >= THRESHOLD:
                left_out[NOT_A_DIE].append((c, float(p[NOT_DIE])))
        kept_spots = [c for c, _ in kept]
        refused = [r for reason, spots in left_out.items() for r in _refused(spots, kept_spots, reason, typical)]
        # a box the detector reached past the frame's edge with is told as the part in the frame
        dice = [replace(d, box=_within(d.box, img.shape)) for _, d in kept]
        refused = [replace(r, box=_within(r.box, img.shape)) for r in refused]
        colourless = without_colour(img)
        if colourless:  # on grey photos, 5 in 100 readings sure in every view were wrong
            dice = [replace(d, confidence=min(d.confidence, COLOURLESS_CONFIDENCE)) for d in dice]
        return DiceReading(dice=tuple(sorted(dice, key=lambda d: (d.box[1], d.box[0]))),
                           refused=tuple(sorted(refused, key=lambda r: (r.box[1], r.box[0]))), unread=len(unread),
                           colourless=colourless)

    def _second_look(self, img: np.ndarray, found: list[Candidate], probs: np.ndarray,
                     agreement: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`predict_checked`'s reading, with each unsure die read again from shifted crops
        (SECOND_LOOK_SHIFT): its log probabilities and views' agreement averaged over the five."""
        doubted = (probs.max(1) < REFINE_BELOW) | (agreement < 1.0)
        unsure = np.nonzero(doubted & (probs[:, NOT_DIE] < self.die_threshold))[0]
        if not len(unsure):
            return probs, agreement
        moves = ((1, 0), (-1, 0), (0, 1), (0, -1))
        shifted = np.stack([crop(img, _moved(found[i], dx, dy)) for i in unsure for dx, dy in moves])
        p, a = self.model.predict_checked(shifted)
        log_p = np.log(np.clip(np.concatenate([probs[unsure, None], p.reshape(len(unsure), len(moves), -1)], 1),
                               1e-9, 1.0)).mean(1)
        probs, agreement = probs.copy(), agreement.astype(np.float64)
        probs[unsure] = softmax(log_p)
        agreement[unsure] = (agreement[unsure] + a.reshape(len(unsure), len(moves)).sum(1)) / (1 + len(moves))
        return probs, agreement

    def _small_read_again(self, img: np.ndarray, kept: list[tuple[Candidate, Die]],
                          typical: float) -> list[tuple[Candidate, Die]]:
        """The dice, each one read from a candidate under SPOT_SIDE of the `typical` side (a Paco
        face aside; SMALL_READS of them at most) read again from crops of that side
        (SMALL_LOOKS). Where the crop likeliest to be a die reads as a die of another face
        (`_decide`), that is the answer: none, where it lies on a die read from its own crop
        (within SPOT_REACH of its side), else that die; two that then are one die are one."""
        small = [i for i, (c, d) in enumerate(kept) if _small(c, typical) and not d.paco][:SMALL_READS]
        if not small:
            return kept
        own = [c for j, (c, _) in enumerate(kept) if j not in small]
        step = SMALL_LOOK_SHIFT * typical
        looks = [replace(kept[i][0], cx=kept[i][0].cx + dx * step, cy=kept[i][0].cy + dy * step, w=typical, h=typical)
                 for i in small for dx, dy in SMALL_LOOKS]
        probs, agreement = self.model.predict_checked(np.stack([crop(img, c) for c in looks]))
        out: dict[int, tuple[Candidate, Die] | None] = dict(enumerate(kept))
        for k, i in enumerate(small):
            at = k * len(SMALL_LOOKS) + int(np.argmin(probs[k * len(SMALL_LOOKS):(k + 1) * len(SMALL_LOOKS), NOT_DIE]))
            die = self._decide(looks[at], probs[at], None, agreement[at])
            if die is None or die.face == kept[i][1].face:
                continue
            on_a_die = any(np.hypot(looks[at].cx - o.cx, looks[at].cy - o.cy) < SPOT_REACH * _side(o) for o in own)
            out[i] = None if on_a_die else (looks[at], die)
        return _one_per_die([x for x in out.values() if x is not None], typical)

    def _not_table(self, img: np.ndarray, found: list[Candidate], size: float | None) -> list[Candidate]:
        """The candidates less the empty table's look-alikes of dice, where they look unchanged."""
        bg = self.profile.background_for(img.shape) if self.profile is not None else None
        if bg is None or not found:
            return found
        if img.shape not in self._table:
            if bg.shape[:2] != img.shape[:2]:  # the same framing at another resolution
                bg = cv2.resize(bg, (img.shape[1], img.shape[0]), interpolation=cv2.INTER_AREA)
            self._table[img.shape] = (bg, self.detector.find(bg, die_size=size, threshold=LOOKALIKE_HEAT),
                                      _lightness(bg))
        bg, lookalikes, table_lightness = self._table[img.shape]
        near = [any(same_die(c, t) for t in lookalikes) for c in found]
        if not any(near):
            return found
        # the room light may have changed since calibration: match the frame's overall lightness
        gain = float(np.clip(table_lightness / max(1.0, _lightness(img)), 0.6, 1.6))
        return [c for c, n in zip(found, near) if not (n and _unchanged(crop(img, c), crop(bg, c), gain))]

    def _decide(self, c: Candidate, p: np.ndarray, sim, agreement: float) -> Die | None:
        """The die a candidate is, or None when the face model says it is no die."""
        if sim is not None and sim >= self.paco_similarity and p[SEVERAL] < 0.5:
            # the player's own Paco face, shown at calibration (its likeness to the calibrated
            # toucan, not the views' agreement, vouches for it: a printed toucan is no pip pattern)
            return Die(face=1, box=c.box, confidence=float(max(sim, p[1] + p[PACO])), paco=True)
        if p[NOT_DIE] >= min(self.die_threshold, MAYBE_NOT_DIE):
            return None  # table, glare, a spot between dice (each has its own centre), a chip, a coin
        # "Several dice" is kept, doubtful (_die damps it): the detector gives each die a centre of
        # its own, and the crops the model calls several were mostly lone dice (4 of 5 on 600
        # development scenes and the training photos), which dropping would lose from the count.
        return _die(c, p, agreement)

    def _paco_similarity(self, patches: np.ndarray) -> np.ndarray | None:
        if self.profile is None or self.profile.paco_features is None:
            return None
        if self._paco_templates is None:  # the calibrated Paco faces, set out once like the patches
            self._paco_templates = self._unit_features(self.profile.paco_features)
        return (self._unit_features(features(patches)) @ self._paco_templates.T).max(1)

    def _unit_features(self, f: np.ndarray) -> np.ndarray:
        """Features centred and scaled as the model saw them, each of length one (for cosines)."""
        f = (f - self.model.mean) / self.model.std
        return f / (np.linalg.norm(f, axis=1, keepdims=True) + 1e-6)


def _moved(c: Candidate, dx: int, dy: int) -> Candidate:
    """The candidate moved by SECOND_LOOK_SHIFT of its side, `dx` and `dy` times."""
    step = SECOND_LOOK_SHIFT * max(c.w, c.h)
    return replace(c, cx=c.cx + dx * step, cy=c.cy + dy * step)


def _lab(img: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(img, cv2.COLOR_BGR2LAB).astype(np.float32)


def _lightness(img: np.ndarray) -> float:
    """A frame's typical lightness (median Lab L over every 4th pixel)."""
    return float(np.median(_lab(img)[::4, ::4, 0]))


def _unchanged(patch: np.ndarray, table_patch: np.ndarray, gain: float) -> bool:
    """Does a frame's patch show what the empty table showed there (see SAME_AS_TABLE)?"""
    a, b = _lab(patch), _lab(table_patch)
    a[..., 0] *= gain
    return float((np.abs(a - b).max(axis=2) > CHANGED).mean()) < SAME_AS_TABLE


def _die(c: Candidate, p: np.ndarray, agreement: float) -> Die:
    """The die a candidate is, from the model's probabilities for it and the share of its views
    that agree on the face."""
    faces = face_probabilities(p[None])[0]
    f = int(np.argmax(faces)) + 1
    # confidence: how sure the face is, given it is a die at all, damped when it may not be a die
    conf = float(faces[f - 1] / max(1e-6, faces.sum())) * float(min(1.0, faces.sum() / 0.8))
    if agreement < VIEWS_AGREEING:
        conf = min(conf, float(agreement))
    return Die(face=f, box=c.box, confidence=conf, paco=bool(f == 1 and p[PACO] > p[1]))


def _one_per_die(kept: list[tuple[Candidate, Die]], typical: float) -> list[tuple[Candidate, Die]]:
    """One answer per die: of two reads of one die (detect.same_die), the detector's surer one;
    a candidate under SPOT_SIDE of the `typical` side is weighed after the others, and is a spot
    on a bigger die it lies in (`_spots`), however sure either is."""
    small = {id(c): _small(c, typical) for c, _ in kept}
    out: list[tuple[Candidate, Die]] = []
    for c, d in sorted(kept, key=lambda k: (small[id(k[0])], -k[0].score)):
        if not any(_on_a_die(c, o, typical) for o, _ in out):
            out.append((c, d))
    return out


def _on_a_die(c: Candidate, die: Candidate, typical: float) -> bool:
    """Is `c` that die found again, or a spot on it (`_spots`)?"""
    return same_die(c, die) or (_small(c, typical) and bool(_spots(_side(c), c.cx, c.cy, _side(die), die.cx, die.cy)))


def _small(c: Candidate, typical: float) -> bool:
    """Is `c` under SPOT_SIDE of the frame's `typical` die side?"""
    return _side(c) < SPOT_SIDE * typical


def _spots(side, x, y, die_side, die_x, die_y):
    """Is a candidate of this side and centre a spot on a die of these: under SPOT_SIDE of its
    side, centred within SPOT_REACH of it from its centre? Element by element for arrays."""
    return (side < SPOT_SIDE * die_side) & (np.hypot(x - die_x, y - die_y) < SPOT_REACH * die_side)


def _typical_side(candidates: list[Candidate]) -> float:
    """The median side of the candidates that are no spot on a bigger one (`_spots`): a lone
    die with two spots on it is a die of its own side. 0 for none."""
    if not candidates:
        return 0.0
    side = np.array([_side(c) for c in candidates])
    x, y = np.array([c.cx for c in candidates]), np.array([c.cy for c in candidates])
    spot = _spots(side[:, None], x[:, None], y[:, None], side[None], x[None], y[None]).any(axis=1)
    return float(np.median(side[~spot]))


def _side(c: Candidate) -> float:
    return max(c.w, c.h)


def _refused(turned_down: list[tuple[Candidate, float]], kept: list[Candidate], reason: str,
             typical: float) -> list[Refused]:
    """What the face model turned down for `reason` (each spot with its not-a-die chance), one entry per thing:
    a spot where a die was kept is that die found twice or a spot on it (`_on_a_die`, with the
    frame's `typical` die side), not a thing left out; spots less than a side apart, or in one
    another's box, are one thing (the detector takes each white mark on a poker chip's rim for a
    small die), its box around them all, as sure of being no die as the least sure of them."""
    spots = [spot for spot in turned_down if not any(_on_a_die(spot[0], k, typical) for k in kept)]
    groups = _things(spots)
    return [Refused(box=_around([spots[i][0].box for i in g]), not_die=min(spots[i][1] for i in g), reason=reason)
            for g in groups]


def _things(spots: list[tuple[Candidate, float]]) -> list[list[int]]:
    """The spots (indices) grouped into things: two groups are one thing while any of their spots
    are less than the smaller's side apart or the boxes around the groups overlap, until no two
    groups are. Merging only ever adds reasons to merge, so the grouping does not depend on the
    order; done on arrays, as a page of text gives a thousand spots."""
    if not spots:
        return []
    boxes = np.array([c.box for c, _ in spots], np.float64)
    x0, y0, x1, y1 = boxes[:, 0], boxes[:, 1], boxes[:, 0] + boxes[:, 2], boxes[:, 1] + boxes[:, 3]
    cx, cy = np.array([c.cx for c, _ in spots]), np.array([c.cy for c, _ in spots])
    side = np.array([max(c.w, c.h) for c, _ in spots])
    dist = np.hypot(cx[:, None] - cx[None], cy[:, None] - cy[None])
    near = dist < (side[:, None] + side[None]) / 2 + np.minimum(side[:, None], side[None])
    label = _components(near | _overlaps(x0, y0, x1, y1))
    while True:  # the boxes around the groups grow as they join, and may then overlap others
        ids, group = np.unique(label, return_inverse=True)
        around = [np.full(len(ids), np.inf), np.full(len(ids), np.inf), np.full(len(ids), -np.inf),
                  np.full(len(ids), -np.inf)]
        for edge, values, pick in zip(around, (x0, y0, x1, y1), (np.minimum, np.minimum, np.maximum, np.maximum)):
            pick.at(edge, group, values)
        joined = _components(_overlaps(*around))
        if len(np.unique(joined)) == len(ids):
            return [np.nonzero(group == g)[0].tolist() for g in range(len(ids))]
        label = joined[group]


def _overlaps(x0: np.ndarray, y0: np.ndarray, x1: np.ndarray, y1: np.ndarray) -> np.ndarray:
    """Which boxes (as corners) overlap which, strictly."""
    return (x0[:, None] < x1[None]) & (x0[None] < x1[:, None]) & (y0[:, None] < y1[None]) & (y0[None] < y1[:, None])


def _components(linked: np.ndarray) -> np.ndarray:
    """The connected component of each node of a symmetric boolean adjacency matrix, as a label
    (the smallest index in it)."""
    label = np.arange(len(linked))
    while True:  # each node takes the smallest label among its links until none changes
        smaller = np.where(linked, label[None, :], len(label)).min(1)
        new = np.minimum(label, smaller)
        new = new[new]  # jump along chains: far fewer rounds on long ones
        if np.array_equal(new, label):
            return label
        label = new


def _within(box: tuple[int, int, int, int], shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """The part of `box` inside a frame of `shape`."""
    x, y, w, h = box
    x0, y0 = max(0, x), max(0, y)
    x1, y1 = min(shape[1], x + w), min(shape[0], y + h)
    return x0, y0, max(1, x1 - x0), max(1, y1 - y0)


def _around(boxes: list[tuple[int, int, int, int]]) -> tuple[int, int, int, int]:
    """The least box holding all of them."""
    x0, y0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
    x1, y1 = max(b[0] + b[2] for b in boxes), max(b[1] + b[3] for b in boxes)
    return x0, y0, x1 - x0, y1 - y0
