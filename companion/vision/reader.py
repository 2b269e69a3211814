"""DiceReader: one BGR frame in, a DiceReading out. Pure: never opens a camera or a file."""
from __future__ import annotations

import cv2
import numpy as np

from companion.vision.detect import Candidate, Region, crop, find_regions, leftovers, min_rect, same_die
from companion.vision.frames import as_bgr
from companion.vision.model import (ALL_VIEWS, NOT_DIE, PACO, PATCH, REFINE_BELOW, SEVERAL, TWO_VIEWS, FaceModel, Views,
                                    features, load_model)
from companion.vision.profile import Profile
from companion.vision.types import DiceReading, Die

_MODEL_CACHE: dict[str, FaceModel] = {}


def default_model() -> FaceModel:
    # loaded once per process: the reveal reads many frames
    if "default" not in _MODEL_CACHE:
        _MODEL_CACHE["default"] = load_model()
    return _MODEL_CACHE["default"]


class DiceReader:
    """Reads every die in a frame. Works uncalibrated for plain dice and for toucan Paco faces the
    model recognises as "a 1-face that is not a pip pattern"; a Profile adds the table background,
    the die size and the player's own Paco face."""

    def __init__(self, profile: Profile | None = None, model: FaceModel | None = None, *,
                 die_threshold: float = 0.5, paco_similarity: float = 0.8) -> None:
        self.profile = profile
        self.model = model or default_model()
        self.die_threshold = die_threshold
        self.paco_similarity = paco_similarity

    def read(self, frame: np.ndarray) -> DiceReading:
        img = as_bgr(frame)
        bg = None
        size = None
        if self.profile is not None:
            size = self.profile.die_size_for(img.shape)
            bg = self.profile.background_for(img.shape)
        seen: dict[tuple, float] = {}  # the size is judged in several passes, mostly on the same squares
        regions = find_regions(img, background=bg, die_size=size,
                               judge=lambda cands: self._one_die(img, cands, seen))
        dice = self._classify(img, regions)
        return DiceReading(dice=tuple(sorted(dice, key=lambda d: (d.box[1], d.box[0]))))

    def _one_die(self, img: np.ndarray, cands: list[Candidate], seen: dict | None = None) -> np.ndarray:
        """How likely each candidate is one whole die (not table, glare or several dice): how
        the detector settles the die size when squares of two sizes compete. `seen` keeps the
        answers for one frame."""
        seen = {} if seen is None else seen
        keys = [(round(c.cx, 1), round(c.cy, 1), round(c.w, 1), round(c.h, 1), round(c.angle, 1)) for c in cands]
        new = [i for i, k in enumerate(keys) if k not in seen]
        if new:
            p = self.model.predict_sym(np.stack([crop(img, cands[i], PATCH) for i in new]), (0,))
            for i, q in zip(new, 1.0 - p[:, NOT_DIE] - p[:, SEVERAL]):
                seen[keys[i]] = float(q)
        return np.array([seen[k] for k in keys], np.float32)

    def _classify(self, img: np.ndarray, regions: list[list[list[Candidate]]]) -> list[Die]:
        flat = [c for opts in regions for o in opts for c in o]
        if not flat:
            return []
        patches = np.stack([crop(img, c, PATCH) for c in flat])
        paco_sim = self._paco_similarity(patches)
        probs = self._read_options(regions, patches, paco_sim)
        kept: list[tuple[Candidate, Die]] = []
        extra: list[Candidate] = []
        i = 0
        for opts in regions:
            n = sum(len(o) for o in opts)
            cut, score = self._chosen_cut(opts, probs[i:i + n], None if paco_sim is None else paco_sim[i:i + n])
            i += n
            if isinstance(opts, Region) and sum(p[SEVERAL] >= 0.5 for _, p, _ in cut) >= max(1, len(cut) / 2):
                # Most parts hold several dice: the die size, measured on lone dice with their
                # side faces and shadows, came out too big for this cluster. Cut it again for
                # smaller dice and keep that cut if the model likes it clearly better.
                opts, cut = self._smaller(img, opts, cut, score)
            mine = [read for c, p, sim in cut for read in self._decide(img, c, p, sim)]
            if isinstance(opts, Region):
                if len(mine) > 1:
                    mine = self._join_halves(img, mine, opts.side)
                mine = self._recut_unsure(img, opts, mine)
                # then once more with the boxes well over a die's size among the unsure: such a
                # box can hold a die and part of the next, and be read surely as the one die
                mine = self._recut_unsure(img, opts, mine, oversize=True)
                extra.extend(leftovers(opts, [c for c, _ in mine]))
            kept.extend(mine)
        if extra:
            # a die-sized part of a cluster no chosen die covers: ask the model about it too
            p2 = self.model.predict(np.stack([crop(img, c, PATCH) for c in extra]))
            for c, p in zip(extra, p2):
                if p[NOT_DIE] < 0.3 and p[SEVERAL] < 0.5:
                    kept.extend(self._decide(img, c, p, None))
        return _suppress(kept)

    def _read_options(self, regions, patches: np.ndarray, paco_sim: np.ndarray | None) -> np.ndarray:
        """Class probabilities of every cut's patches, looking harder only where it can change
        the answer: one view of each patch; two (as `FaceModel.predict`) for the patches of the
        cuts that can still win, scoring within CONTENDS of their region's best; all eight for
        those of them still unsure. Most cuts of a cluster are clearly wrong, and their unsure
        patches were nine in ten of those read in eight views."""
        views = Views(self.model, patches)
        views.look(views.everyone, (0,))
        views.look(self._contenders(regions, views.probabilities(), paco_sim, CONTENDS_FOR_TWO), TWO_VIEWS)
        contenders = self._contenders(regions, views.probabilities(), paco_sim, CONTENDS_FOR_ALL)
        views.look(views.unsure(contenders, REFINE_BELOW), ALL_VIEWS)
        return views.probabilities()

    def _contenders(self, regions, probs: np.ndarray, paco_sim: np.ndarray | None, margin: float) -> np.ndarray:
        """Indices of the patches of every cut scoring within `margin` of its region's best."""
        out: list[np.ndarray] = []
        i = 0
        for opts in regions:
            n = sum(len(o) for o in opts)
            scores = self._cut_scores(opts, probs[i:i + n], None if paco_sim is None else paco_sim[i:i + n])
            for j, score in enumerate(scores):
                if score >= max(scores) - margin:
                    span = _span(opts, j)
                    out.append(np.arange(i + span.start, i + span.stop))
            i += n
        return np.concatenate(out) if out else np.zeros(0, int)

    def _cut_scores(self, opts, probs: np.ndarray, paco_sim: np.ndarray | None) -> list[float]:
        """How much each cut's crops look like single dice (their mean top face probability)."""
        scores = []
        for j in range(len(opts)):
            p = probs[_span(opts, j)]
            good = _faces(p).max(1)
            if paco_sim is not None:
                good = np.maximum(good, (paco_sim[_span(opts, j)] >= self.paco_similarity).astype(np.float32))
            scores.append(float(good.mean()))
        return scores

    def _best_cut(self, opts, probs: np.ndarray, paco_sim: np.ndarray | None) -> tuple[int, float]:
        """Score each way of cutting the blob: the one whose crops look most like single dice
        wins. Returns its index and score."""
        scores = self._cut_scores(opts, probs, paco_sim)
        best = 0
        for j in range(1, len(opts)):
            if scores[j] > scores[best] + 0.03:  # the preferred cut wins near-ties
                best = j
        if isinstance(opts, Region) and len(opts) > 1:
            # The model takes half a die (or a die with its side face) for a die, so a cut of
            # one die in two can score as well as the right cut. Two dice's tops cannot
            # overlap: of near-tied cuts, one whose parts crowd closer than that loses to one
            # with room for its dice. (Near ties only: where the die size came out too big,
            # the right cut crowds too, and then it scores clearly better.)
            near = [j for j in range(len(opts)) if scores[j] >= scores[best] - 0.03]
            roomy = [j for j in near if not _crowded(opts[j], opts.side)]
            if roomy and best not in roomy:
                best = max(roomy, key=lambda j: (scores[j], -j))
            more = [j for j in roomy if _adds_sure_dice(opts[best], probs[_span(opts, best)], opts[j], probs[_span(opts, j)], opts.side)]
            if more:
                best = max(more, key=lambda j: (len(opts[j]), scores[j]))
        return best, scores[best]

    def _chosen_cut(self, opts, probs: np.ndarray, paco_sim: np.ndarray | None) -> tuple[list[tuple], float]:
        """The best cut (see _best_cut) as (candidate, probabilities, similarity to the
        profile's Paco or None) for each of its dice, and its score."""
        best, score = self._best_cut(opts, probs, paco_sim)
        mine = _span(opts, best)
        sims = [None] * len(opts[best]) if paco_sim is None else paco_sim[mine]
        return list(zip(opts[best], probs[mine], sims)), score

    def _read_cuts(self, img, region: Region) -> tuple[list[tuple], float]:
        """Read every cut of a region made anew: its chosen cut (see _chosen_cut) and score."""
        patches = np.stack([crop(img, c, PATCH) for o in region for c in o])
        sims = self._paco_similarity(patches)
        return self._chosen_cut(region, self._read_options([region], patches, sims), sims)

    def _smaller(self, img, region: Region, cut, score: float):
        """(region, cut) for the first smaller die size whose best cut scores clearly better,
        else the ones given."""
        for factor in SMALLER:
            again = region.smaller(factor)
            if again is not None:
                new_cut, new_score = self._read_cuts(img, again)
                if new_score > score + 0.2:
                    return again, new_cut
        return region, cut

    def _recut_unsure(self, img, region: Region, mine: list[tuple[Candidate, Die]],
                      oversize: bool = False) -> list[tuple[Candidate, Die]]:
        """Keep the dice of a cluster the model is sure of and cut the rest of it again around
        them. One cut for a whole cluster can straddle two dice with one box (and lose one of
        them) while getting the others right; the dice it got right fix where the others can be.

        With `oversize`, a cluster's boxes well over a die's size count as unsure too (one can
        hold a die and part of the next and be read surely as the one die), and the new cut must
        leave its dice room for each other. Never for a lone die: its box takes in its side face.
        """
        big = [d.confidence >= SURE_DIE and max(c.w, c.h) > OVERSIZE * region.side for c, d in mine]
        if oversize and (len(mine) < 2 or not any(big) or region.dice_worth() < len(mine) + ROOM_FOR_ONE_MORE):
            return mine
        firm = [d.confidence >= SURE_DIE and not (oversize and b) for (_, d), b in zip(mine, big)]
        sure = [m for m, f in zip(mine, firm) if f]
        unsure = [m for m, f in zip(mine, firm) if not f]
        # with every die sure, only a die's worth of pixels left over is worth a look
        pieces = region.rest([c for c, _ in sure], least=0.6 if unsure else 0.9)
        if not pieces:
            return mine
        old = _total(unsure)
        taken = [c for c, _ in sure]
        # the sure dice's turn first: the cluster's dice lie much the same way
        angles = [c.angle for c, _ in sure] + [c.angle for c, _ in unsure]
        found: list[tuple[Candidate, Die]] = []
        for piece in pieces:
            reads = [read for c, p, sim in self._read_cuts(img, piece)[0] for read in self._decide(img, c, p, sim)]
            if _total(found) + _total(reads) <= old + RECUT_GAIN:
                # no cut of this piece falls on its dice well enough: slide a window over it
                scanned = self._scan(img, piece, angles, taken + [c for c, _ in found])
                if _total(scanned) > _total(reads):
                    reads = scanned
            found += reads
        # (a die _join_halves made is over OVERSIZE: this room is what keeps it from coming back
        # as its two halves)
        if _total(found) > old + RECUT_GAIN and not (oversize and _crowded([c for c, _ in sure + found], region.side, RECUT_ROOM)):
            return sure + found
        return mine

    def _scan(self, img, piece: Region, angles: list[float], taken: list[Candidate]) -> list[tuple[Candidate, Die]]:
        """Look for dice in a piece of a cluster with a die-sized window slid over it, a third
        of a die at a time, turned like the cluster's dice: where no cut of the piece falls on
        its dice (glare or table joined to it), the windows centred on a die are read surely.
        Windows are kept clear of the `taken` dice."""
        side = piece.side
        step = side / SCAN_STEPS
        # one point per working pixel: a full cell holds (step * scale)^2 of them
        cells, counts = np.unique(np.floor(piece.points / step).astype(np.int64), axis=0, return_counts=True)
        centres = (cells[counts >= 0.5 * (step * piece.scale) ** 2] + 0.5) * step
        turns: list[float] = []
        for a in [*angles[:1], min_rect(piece.points)[2], *angles[1:]]:
            if all(abs((a - t + 45) % 90 - 45) > 8 for t in turns):
                turns.append(a)
        wins = [Candidate(cx=float(x), cy=float(y), w=side, h=side, angle=float(a)) for x, y in centres for a in turns[:SCAN_TURNS]]
        if not wins:
            return []
        p = self.model.predict_sym(np.stack([crop(img, c, PATCH) for c in wins]), (0,))
        good = _faces(p).max(1) * (p[:, NOT_DIE] < self.die_threshold) * (p[:, SEVERAL] < 0.5)
        chosen: list[Candidate] = []
        for i in np.argsort(-good):
            if good[i] < SCAN_SURE:
                break
            # a window a third of a die off a die still holds all of it and reads it surely:
            # one window per die
            if _room(wins[i], chosen + taken) >= SCAN_APART * side:
                chosen.append(wins[i])
        if not chosen:
            return []
        patches = np.stack([crop(img, c, PATCH) for c in chosen])
        sims = self._paco_similarity(patches)
        return [read for k, (c, q) in enumerate(zip(chosen, self.model.predict(patches)))
                for read in self._decide(img, c, q, None if sims is None else sims[k])]

    def _join_halves(self, img, mine: list[tuple[Candidate, Die]], side: float) -> list[tuple[Candidate, Die]]:
        """Two thin parts side by side that together make one die-sized square are one die cut
        in two (the model reads each half as the die): read the square they make instead.

        A whole die's part is square; only a cut across a die leaves a part clearly thinner than
        a die, so two thin neighbours are joined only when the model reads their square as one
        die at least as surely."""
        thin = [i for i, (c, _) in enumerate(mine)
                if min(c.w, c.h) < HALF * side and max(c.w, c.h) > 0.75 * side]
        used: set[int] = set()
        joined: list[tuple[Candidate, Die]] = []
        for a in thin:
            for b in thin:
                if b <= a or a in used or b in used:
                    continue
                ca, cb = mine[a][0], mine[b][0]
                if _room(ca, [cb]) > 0.85 * side:
                    continue
                pts = np.concatenate([cv2.boxPoints(((c.cx, c.cy), (c.w, c.h), c.angle)) for c in (ca, cb)])
                (cx, cy), (w, h), ang = cv2.minAreaRect(pts.astype(np.float32))
                if not (0.75 * side <= min(w, h) and max(w, h) <= 1.6 * side):
                    continue  # (halves take in side faces and shadow: their square is a little big)
                union = Candidate(cx=cx, cy=cy, w=min(w, 1.2 * side), h=min(h, 1.2 * side), angle=ang,
                                  group=ca.group, parts=ca.parts)
                patch = crop(img, union, PATCH)[None]
                sim = self._paco_similarity(patch)
                read = self._decide(img, union, self.model.predict(patch)[0], None if sim is None else sim[0])
                if len(read) == 1 and read[0][1].confidence >= min(mine[a][1].confidence, mine[b][1].confidence):
                    used.update((a, b))
                    joined.append(read[0])
        return [m for i, m in enumerate(mine) if i not in used] + joined

    def _decide(self, img, c: Candidate, p: np.ndarray, sim) -> list[tuple[Candidate, Die]]:
        if sim is not None and sim >= self.paco_similarity and p[SEVERAL] < 0.5:
            # the player's own Paco face, shown at calibration
            return [(c, Die(face=1, box=c.box, confidence=float(max(sim, p[1] + p[PACO])), paco=True))]
        if p[NOT_DIE] >= self.die_threshold:
            return []
        if p[SEVERAL] >= 0.5:
            return self._resplit(img, c)
        return [(c, _die(c, p))]

    def _resplit(self, img: np.ndarray, c: Candidate) -> list[tuple[Candidate, Die]]:
        """A region the model says holds several dice: try two halves along its long side."""
        long_w = c.w >= c.h
        a = np.deg2rad(c.angle)
        ax = np.array([np.cos(a), np.sin(a)]) if long_w else np.array([-np.sin(a), np.cos(a)])
        L = max(c.w, c.h)
        s = min(c.w, c.h)
        parts = []
        for sign in (-1, 1):
            cx, cy = np.array([c.cx, c.cy]) + sign * ax * L / 4
            parts.append(Candidate(cx=float(cx), cy=float(cy), w=max(L / 2, s * 0.8) if long_w else s,
                                   h=s if long_w else max(L / 2, s * 0.8), angle=c.angle))
        patches = np.stack([crop(img, q, PATCH) for q in parts])
        probs = self.model.predict(patches)
        out = []
        for q, p in zip(parts, probs):
            if p[NOT_DIE] < self.die_threshold and p[SEVERAL] < 0.5:
                out.append((q, _die(q, p)))
        return out

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


# Room between dice. Two tops cannot overlap, so touching dice's centres are a top's side apart,
# and the die side measured from blobs (with side faces) is a little more than a top's. How close
# is too close depends on what the two boxes are, each line chosen on the development scenes:
# one die read twice (detect.SAME_DIE, 0.6) < a cut's parts on one die (CROWDED, 0.7) < two
# windows on one die (SCAN_APART, 0.75) < a big box cut again into halves (RECUT_ROOM, 0.8) < a
# die a near-tied cut adds (ROOM, 0.85).
CONTENDS_FOR_TWO = 0.15  # a cut read in one view within this of its region's best is read in two
CONTENDS_FOR_ALL = 0.1  # ... and its unsure patches in all eight, if it is within this of the best in two
SURE_DIE = 0.95  # a cluster's dice read at least this surely stay put when the rest is cut again
OVERSIZE = 1.15  # ... and are no bigger than this many die sides
ROOM_FOR_ONE_MORE = 0.75  # ... when its pixels make this many dice more than it read
RECUT_ROOM = 0.8  # ... and leave every die this many die sides of room
RECUT_GAIN = 0.8  # ... and the new cut must add this much confidence, summed over its dice
SMALLER = (0.75, 0.6)  # die sizes, as fractions of the measured one, tried on a cluster of "several"
HALF = 0.8  # a part whose short side is under this many die sides is part of a die, not a die
SCAN_SURE = 0.97  # a window slid over a cluster is taken for a die when read this surely
SCAN_STEPS, SCAN_TURNS = 3, 2  # ... slid a third of a die at a time, turned at most two ways
SCAN_APART = 0.75  # ... and at least this many die sides from another such window
ROOM = 0.85  # a die a cut adds to a cluster's near-tied cut is at least this many die sides from the others
CROWDED = 0.7  # parts' centres closer than this many die sides: one die cut in two (touching tops
# are a top's side apart, and the die size measured from blobs, with side faces, is a little more)


def _span(opts, j: int) -> slice:
    """Where cut j's candidates sit in the flat list of all the cuts' candidates."""
    start = sum(len(o) for o in opts[:j])
    return slice(start, start + len(opts[j]))


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


def _adds_sure_dice(cut, probs, other, other_probs, side: float) -> bool:
    """Does `other` read every die of `cut` the same (same place, same face) and more dice besides,
    each surely? Then it explains more of the cluster and nothing less."""
    if len(other) <= len(cut):
        return False
    fa, fb = _faces(probs), _faces(other_probs)
    used = set()
    for a, pa in zip(cut, fa):
        twin = [i for i, b in enumerate(other) if i not in used and same_die(a, b) and fb[i].argmax() == pa.argmax()]
        if not twin:
            return False
        used.add(twin[0])
    extra = [i for i in range(len(other)) if i not in used]
    if not all(fb[i].max() >= SURE_DIE for i in extra):  # (the face's own probability)
        return False
    # and each new die has a whole die's room (a die's side face read as another die is not)
    return all(_room(other[i], other[:i] + other[i + 1:]) >= ROOM * side for i in extra)


def _room(c: Candidate, others: list[Candidate]) -> float:
    """Distance from a candidate's centre to the nearest of the others' (inf for none)."""
    return min((float(np.hypot(c.cx - o.cx, c.cy - o.cy)) for o in others), default=float("inf"))


def _total(reads: list[tuple[Candidate, Die]]) -> float:
    return sum(d.confidence for _, d in reads)


def _crowded(cut: list[Candidate], side: float, room: float = CROWDED) -> bool:
    """Are any two centres of the cut closer than `room` die sides? (All pairs at once: it runs
    on every near-tied cut of every cluster.)"""
    c = np.array([[q.cx, q.cy] for q in cut])
    if len(c) < 2:
        return False
    d = np.hypot(c[:, None, 0] - c[None, :, 0], c[:, None, 1] - c[None, :, 1])
    return bool(d[np.triu_indices(len(c), 1)].min() < room * side)


def _suppress(kept: list[tuple[Candidate, Die]]) -> list[Die]:
    """Drop a die that is the same die as a more confident one (detect.same_die): one die, one answer."""
    order = sorted(range(len(kept)), key=lambda i: -kept[i][1].confidence)
    out: list[tuple[Candidate, Die]] = []
    for i in order:
        c, d = kept[i]
        if not any(same_die(c, o) for o, _ in out):
            out.append((c, d))
    return [d for _, d in out]
