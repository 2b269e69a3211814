"""Finding die-shaped regions on the table (no face reading here).

Why this design: dice are small, solid-coloured squares that differ from a table which is smooth at
the scale of a few dice. So we estimate the table colour everywhere (a calibration photo of the empty
table when we have one, else a large median filter), mark pixels far from it (those darker than the
table by a line of their own: wood grain widens the spread on the bright side only), and split blobs
whose area says they hold several touching dice (k-means cuts, plus a cut seeded at the peaks of the
distance transform; the reader keeps the cut the face model likes best). The die size comes from
lone, crisp-edged squares (soft-edged glare patches are left out). Dice the colour test misses (cream
dice on a pale tray) are found as die-sized spots dense with sharp lightness edges (pips, outlines).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import cv2
import numpy as np

GLARE_WEIGHT = 0.8  # brighter-than-table weighs a little less (glare); 0.55 cost real cream dice
LOW_FLOOR = 8.0  # Lab distance below which a pixel is table; real cloths vary ~3-5
SOFT_EDGE = 4.0  # outline sharpness below which a blob is glare or shading (dice: 6+, glare: ~2)
WORK = 640  # longest side of the working image: enough for dice >= ~25 px at 1280 wide


@dataclass(frozen=True)
class Candidate:
    cx: float  # centre in full-resolution pixels
    cy: float
    w: float
    h: float
    angle: float  # degrees, as cv2.minAreaRect gives it
    group: int = 0  # index of the blob it came from (touching dice share one)
    parts: int = 1  # how many candidates that blob was split into

    @property
    def box(self) -> tuple[int, int, int, int]:
        pts = cv2.boxPoints(((self.cx, self.cy), (self.w, self.h), self.angle))
        x0, y0 = pts.min(0)
        x1, y1 = pts.max(0)
        return int(round(x0)), int(round(y0)), int(round(x1 - x0)), int(round(y1 - y0))


def _lab(img: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(img, cv2.COLOR_BGR2LAB).astype(np.float32)


def _median_background(lab_u8: np.ndarray, k_frac: float) -> np.ndarray:
    h, w = lab_u8.shape[:2]
    f = 160.0 / max(h, w)
    tiny = cv2.resize(lab_u8, (max(8, int(w * f)), max(8, int(h * f))), interpolation=cv2.INTER_AREA)
    k = int(k_frac * 160) | 1
    k = max(5, min(k, 101))
    med = cv2.merge([cv2.medianBlur(np.ascontiguousarray(tiny[..., c]), k) for c in range(3)])
    return cv2.resize(med, (w, h), interpolation=cv2.INTER_LINEAR).astype(np.float32)


def foreground(img_small: np.ndarray, background_small: np.ndarray | None, k_frac: float
               ) -> tuple[np.ndarray, np.ndarray]:
    """A float map of how far each pixel is from the table colour (Lab units, shadows damped), and
    where the pixel is darker than the table."""
    lab_u8 = cv2.cvtColor(img_small, cv2.COLOR_BGR2LAB)
    lab = lab_u8.astype(np.float32)
    if background_small is not None:
        bg = _lab(background_small)
        # the room light may have changed since calibration: match overall lightness
        gain = np.median(lab[..., 0]) / max(1.0, float(np.median(bg[..., 0])))
        bg[..., 0] *= float(np.clip(gain, 0.6, 1.6))
    else:
        bg = _median_background(lab_u8, k_frac)
    d = lab - bg
    dl = d[..., 0]
    # darker-than-table counts less: shadows are darker with the same hue
    darker = dl < 0
    dl = np.where(darker, dl * 0.55, dl * GLARE_WEIGHT)
    return np.sqrt(dl * dl + d[..., 1] ** 2 + d[..., 2] ** 2), darker


def _fill_holes(mask: np.ndarray) -> np.ndarray:
    """Fill pips that match the table colour, but not the inside of a frame (big holes stay)."""
    cnts, hier = cv2.findContours(mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    out = mask.copy()
    if hier is None:
        return out
    for i, h in enumerate(hier[0]):
        parent = h[3]
        if parent >= 0 and cv2.contourArea(cnts[i]) < 0.3 * cv2.contourArea(cnts[parent]):
            cv2.drawContours(out, cnts, i, 255, -1)
    return out


def _nearest(pts: np.ndarray, centres: np.ndarray) -> np.ndarray:
    d = (centres * centres).sum(1)[None, :] - 2.0 * (pts @ centres.T)
    return d.argmin(1)


def _dt_peaks(pts: np.ndarray, side: float) -> np.ndarray:
    """Die centres as the well-separated maxima of the distance to the piece's outline."""
    x0, y0 = pts.min(0).astype(int) - 2
    x1, y1 = pts.max(0).astype(int) + 3
    m = np.zeros((y1 - y0, x1 - x0), np.uint8)
    m[pts[:, 1].astype(int) - y0, pts[:, 0].astype(int) - x0] = 255
    dt = cv2.distanceTransform(m, cv2.DIST_L2, 5)
    k = max(3, int(0.5 * side) | 1)
    local = (dt >= cv2.dilate(dt, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))) & (dt >= 0.3 * side)
    ys, xs = np.nonzero(local)
    order = np.argsort(-dt[ys, xs])
    peaks: list[tuple[float, float]] = []
    for i in order:  # strongest first, none closer than 0.7 of a die to a stronger one
        p = (float(xs[i] + x0), float(ys[i] + y0))
        if all((p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 >= (0.7 * side) ** 2 for q in peaks):
            peaks.append(p)
    return np.array(peaks, np.float32).reshape(-1, 2)


def _kmeans(pts: np.ndarray, k: int, iters: int = 8, init: np.ndarray | None = None) -> np.ndarray:
    """Deterministic k-means on pixel coordinates (farthest-point start) -> labels for all points."""
    step = max(1, len(pts) // 800)  # fit on a subsample: blobs can hold tens of thousands of pixels
    sub = pts[::step]
    if init is not None:
        c = list(init[:k])
    else:
        c = [sub[np.argmin(sub[:, 0] + sub[:, 1])]]
        dmin = ((sub - c[0]) ** 2).sum(1)
        for _ in range(1, k):
            c.append(sub[int(np.argmax(dmin))])
            dmin = np.minimum(dmin, ((sub - c[-1]) ** 2).sum(1))
    centres = np.array(c, np.float32)
    for _ in range(iters):
        lab = _nearest(sub, centres)
        cnt = np.bincount(lab, minlength=k).astype(np.float32)
        sx = np.bincount(lab, sub[:, 0], minlength=k)
        sy = np.bincount(lab, sub[:, 1], minlength=k)
        new = np.where(cnt[:, None] > 0, np.stack([sx, sy], 1) / np.maximum(cnt, 1)[:, None], centres)
        new = new.astype(np.float32)
        if np.abs(new - centres).max() < 0.2:
            break
        centres = new
    return _nearest(pts, centres)


def _hull(pts: np.ndarray) -> np.ndarray:
    """The convex hull of a set of pixels. Pixels in raster order (as np.nonzero lists them) are
    cut to each row's first and last first: the same hull from a few hundred points instead of
    thousands (the hulls were a tenth of the reader's time)."""
    x, y = pts[:, 0], pts[:, 1]
    if len(pts) > 64 and np.all((y[1:] > y[:-1]) | ((y[1:] == y[:-1]) & (x[1:] >= x[:-1]))):
        cut = np.flatnonzero(y[1:] != y[:-1]) + 1
        pts = pts[np.concatenate([[0], cut, cut - 1, [len(pts) - 1]])]
    return cv2.convexHull(pts)


def min_rect(pts: np.ndarray):
    """cv2.minAreaRect of a set of pixels, from their hull: the same rectangle, far faster."""
    return cv2.minAreaRect(_hull(pts))


@dataclass(frozen=True)
class Blob:
    points: np.ndarray  # (n, 2) float32 pixel coordinates in the working image
    area: float
    rect: tuple  # cv2.minAreaRect
    solidity: float
    sub: np.ndarray | None = None  # its pixels within its bounding box (bool), for _sharpness
    origin: tuple[int, int] = (0, 0)  # that box's top-left corner


def _gradient(dist: np.ndarray) -> np.ndarray:
    gx = cv2.Sobel(dist, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(dist, cv2.CV_32F, 0, 1, ksize=3)
    return cv2.magnitude(gx, gy) / 8.0


def _sharpness(b: Blob, grad: np.ndarray | None) -> float:
    """Typical |gradient| of the table distance across the blob's outline (Lab units a pixel).

    Dice have crisp outlines (6 and up); glare and lighting patches fade out over many pixels (~2)."""
    if grad is None or b.sub is None:
        return 99.0
    m = np.pad(b.sub.astype(np.uint8), 2)
    band = cv2.dilate(m, np.ones((3, 3), np.uint8)) - cv2.erode(m, np.ones((3, 3), np.uint8))
    x, y = b.origin
    H, W = grad.shape
    g = np.zeros(m.shape, np.float32)
    xa, ya = x - 2, y - 2
    xs, ys = max(0, xa), max(0, ya)
    xe, ye = min(W, xa + m.shape[1]), min(H, ya + m.shape[0])
    g[ys - ya:ye - ya, xs - xa:xe - xa] = grad[ys:ye, xs:xe]
    vals = g[band > 0]
    return float(np.percentile(vals, 75)) if len(vals) else 99.0


def _blobs(mask: np.ndarray, min_area: float) -> list[Blob]:
    n, lab, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    out = []
    for i in range(1, n):
        area = float(stats[i, cv2.CC_STAT_AREA])
        if area < min_area:
            continue
        x, y, w, h = stats[i, :4]
        sub = (lab[y:y + h, x:x + w] == i)
        ys, xs = np.nonzero(sub)
        pts = np.stack([xs + x, ys + y], 1).astype(np.float32)
        hull = _hull(pts)
        hull_area = max(1.0, cv2.contourArea(hull))
        out.append(Blob(points=pts, area=area, rect=cv2.minAreaRect(hull), solidity=area / hull_area,
                        sub=sub, origin=(int(x), int(y))))
    return out


def _single_size(blobs: list[Blob], grad: np.ndarray | None = None) -> float | None:
    """Typical die side from blobs that look like one lone square (glare patches left out)."""
    return _size_estimate(blobs, grad)[0]


ROUND_LIMIT = 0.87  # area over the enclosing circle's: squares ~0.64-0.85, discs (glare, feet) ~1
ROUND_LIMIT_JUDGED = 0.92  # ... with a judge to turn discs away, blurred dice (to ~0.9) count too

# A judge: the probability that each candidate is one whole die. find_regions takes one for
# full-resolution candidates and hands _size_estimate one for the working image's.
Judge = Callable[[list["Candidate"]], np.ndarray]


def _support(sides: np.ndarray, v: float) -> float:
    """How many lone squares, counted by side, are within 20% of size v.

    Weighted by side, so a crowd of specks does not outvote a few dice; by area, one square
    cluster of four dice outvoted a dozen lone ones."""
    return float(np.sum(sides[np.abs(sides - v) <= 0.2 * v]))


def _mode(sides: np.ndarray) -> tuple[float, float]:
    """The most common size (the median of the squares near it) and its support."""
    support = np.array([_support(sides, v) for v in sides])
    v = sides[int(np.argmax(support))]
    return float(np.median(sides[np.abs(sides - v) <= 0.2 * v])), float(support.max())


def _rival_size(sides: np.ndarray, side: float) -> bool:
    """Do lone squares of a clearly other size hold at least half the chosen size's support?"""
    mine = _support(sides, side)
    return any(abs(np.log(v / side)) > np.log(1.25) and _support(sides, v) >= 0.5 * mine for v in sides)


def _size_estimate(blobs: list[Blob], grad: np.ndarray | None = None,
                   judge: Judge | None = None) -> tuple[float | None, float]:
    """(die side, its support: how many lone squares, in sides, agree with it; 0 when it is only
    the width of a chain).

    Lone squares of two sizes (dice, and square clusters of four of them; or blurred dice turned
    away as discs) are told apart by `judge`, when given: only squares it takes for single dice
    then count."""
    squares, rounds = [], []
    for b in blobs:
        (w, h) = b.rect[1]
        if min(w, h) <= 0:
            continue
        if max(w, h) / min(w, h) < 1.3 and b.solidity > 0.85 and b.area / (w * h) > 0.72 and min(w, h) >= 8 \
                and _sharpness(b, grad) >= SOFT_EDGE:
            # squares fill ~64% of their enclosing circle, discs (glare, tray feet) ~100%
            _, r = cv2.minEnclosingCircle(np.ascontiguousarray(b.points[:: max(1, len(b.points) // 400)]))
            roundness = b.area / (np.pi * max(r, 1.0) ** 2)
            if roundness < (ROUND_LIMIT_JUDGED if judge else ROUND_LIMIT):  # rounded real dice reach 0.83
                squares.append(b)
                rounds.append(roundness)
    if squares:
        sides = np.array([np.sqrt(b.area) for b in squares])
        strict = np.array(rounds) < ROUND_LIMIT
        side, support = _mode(sides[strict]) if strict.any() else (None, 0.0)
        if judge is not None:
            single = judge([Candidate(cx=b.rect[0][0], cy=b.rect[0][1], w=b.rect[1][0], h=b.rect[1][1],
                                      angle=b.rect[2]) for b in squares]) >= 0.5
            if single.any():
                return _mode(sides[single])
            side = None
        if side is not None:
            return side, support
    # no lone die (one cluster of touching dice): a die is about as wide as the thickest part of a chain
    best = 0.0
    big = [b for b in blobs if b.area >= 150]
    crisp = [b for b in big if _sharpness(b, grad) >= SOFT_EDGE] or big  # glare patches last
    for b in crisp:
        (w, h) = b.rect[1]
        if b.area < 150 or b.area / max(1.0, w * h) < 0.35:
            continue
        x0, y0 = b.points.min(0).astype(int)
        x1, y1 = b.points.max(0).astype(int)
        m = np.zeros((y1 - y0 + 3, x1 - x0 + 3), np.uint8)
        m[b.points[:, 1].astype(int) - y0 + 1, b.points[:, 0].astype(int) - x0 + 1] = 255
        dt = cv2.distanceTransform(m, cv2.DIST_L2, 5)
        # for a square of side s the 90th percentile of inner distances is about 0.34 s
        best = max(best, float(np.percentile(dt[dt > 0], 90)) * 2.9)
    return best or None, 0.0


SAME_DIE = 0.6  # centres closer than this many sides of the smaller box: one die, read twice


def same_die(a: Candidate, b: Candidate) -> bool:
    """Are two candidates one die? Two dice's tops cannot overlap, so their centres are at least a
    die's side apart; 0.6 of the smaller box leaves room for boxes that take in a side face (at
    0.45 a die cut in two, its halves 0.5 apart, was read twice)."""
    return bool(np.hypot(a.cx - b.cx, a.cy - b.cy) < SAME_DIE * min(max(a.w, a.h), max(b.w, b.h)))


def find_candidates(img: np.ndarray, *, background: np.ndarray | None = None,
                    die_size: float | None = None, threshold: float | None = None) -> list[Candidate]:
    """Die-shaped regions of a BGR frame (the preferred split of each blob), one per die: a spot of
    pips over a die the colour test found too is left out."""
    out: list[Candidate] = []
    for opts in find_regions(img, background=background, die_size=die_size, threshold=threshold):
        for c in opts[0]:
            if not any(same_die(c, o) for o in out):
                out.append(c)
    return out


def find_regions(img: np.ndarray, *, background: np.ndarray | None = None, die_size: float | None = None,
                 threshold: float | None = None, judge: Judge | None = None) -> list[list[list[Candidate]]]:
    """Per blob, alternative ways to cut it into dice (first = preferred), each a list of Candidates.

    `die_size` (px, full res) comes from calibration when known. Without it, `judge` (the
    probability that each full-resolution candidate is one whole die) settles the die size when
    lone squares of two sizes compete.
    """
    H, W = img.shape[:2]
    f = min(1.0, WORK / max(H, W))
    if judge is not None:
        full_res = judge
        judge = lambda cands: full_res([Candidate(cx=c.cx / f, cy=c.cy / f, w=c.w / f, h=c.h / f,  # noqa: E731
                                                  angle=c.angle) for c in cands])
    small = cv2.resize(img, (int(round(W * f)), int(round(H * f))), interpolation=cv2.INTER_AREA) if f < 1 else img
    bg_small = None
    if background is not None:
        bg_small = cv2.resize(background, (small.shape[1], small.shape[0]), interpolation=cv2.INTER_AREA)
    k_frac = 0.2 if die_size is None else float(np.clip(4.0 * die_size / max(H, W), 0.06, 0.4))
    mask, blobs, side, support = _segment(small, bg_small, k_frac, die_size * f if die_size else None, threshold,
                                          judge)
    if die_size is None and bg_small is None and side is not None:
        # second pass with a median window sized to the dice actually seen
        k2 = float(np.clip(4.0 * side / max(small.shape[:2]), 0.06, 0.4))
        if abs(k2 - k_frac) > 0.03:
            second = _segment(small, None, k2, None, threshold, judge)
            if second[2] is not None and (0.75 * side < second[2] < 1.35 * side or second[3] >= support):
                # (a size far off the first pass's must be backed by more lone dice)
                mask, blobs, side, support = second
    if side is None:
        return []
    unit = side * side
    regions: list[list[list[Candidate]]] = []

    for gi, b in enumerate(blobs):
        n_est = b.area / unit
        if n_est < 0.3:
            continue
        if b.solidity > 0.85 and _dice_in(n_est, *b.rect[1]) == 1:
            pieces = [(b.points, 1, n_est)]  # one die, perhaps with its side face and shadow
        else:
            pieces = []
            opened = []
            for piece in _open_pieces(b.points, side):
                opened.append(piece)
                (pw, ph) = min_rect(piece)[1]
                if len(piece) / unit >= 2 and len(piece) / max(1.0, pw * ph) < 0.4:
                    # a frame (the tray's wall) with a die against it: a wider opening takes
                    # the strip away and leaves the die (once: what it leaves is not opened again)
                    opened += _open_pieces(piece, side, 0.85)
            for piece in opened:
                n_p = len(piece) / unit
                (pw, ph) = min_rect(piece)[1]
                if n_p < 0.3 or len(piece) / max(1.0, pw * ph) < 0.4:
                    continue  # thin frames, cables, edges of the tray: not dice
                pieces.append((piece, _dice_in(n_p, pw, ph), n_p))
        for pts, k, n_p in pieces:
            opts = _cuts(pts, k, n_p, side, f, gi)
            if opts:
                regions.append(Region(opts, points=pts / f, side=side / f, scale=f, group=gi)
                               if k > 1 or n_p >= 1.3 else opts)
    for pts in _textured_spots(small, side):
        # a die the colour test missed or found only in part (white on a pale tray): found by its
        # pips and outline
        n_p = len(pts) / (TEXTURE_AREA * unit)
        k = 1 if n_p < 1.7 else min(int(round(n_p)), 12)
        ks = [k] + ([k - 1] if k > 1 else []) + ([k + 1] if n_p >= 1.3 else [])
        opts = [o for o in (_split(pts, kk, side, f, len(blobs) + len(regions)) for kk in ks) if o]
        if opts:
            regions.append(opts)
    return regions


def _dice_in(n_p: float, w: float, h: float) -> int:
    """How many dice a piece of n_p die areas in a w x h rectangle holds: one (perhaps with its
    side face and shadow) when it is small and squarish enough, else about its area in dice."""
    aspect = max(w, h) / max(1e-3, min(w, h))
    if (n_p < 2.2 and aspect < 1.45) or (n_p < 1.8 and aspect < 1.7):
        return 1
    return min(max(2, int(round(n_p))), 40)


def _split(pts: np.ndarray, k: int, side: float, f: float, gi: int,
           init: np.ndarray | None = None) -> list[Candidate]:
    """Cut a piece (working-image pixels, die side `side`) into k dice by k-means; full-res Candidates."""
    unit = side * side
    parts = [pts] if k == 1 else [pts[lab == j] for lab in [_kmeans(pts, k, init=init)] for j in range(k)]
    out = []
    for q in parts:
        if len(q) < 0.25 * unit:
            continue
        (cx, cy), (rw, rh), ang = min_rect(q)
        if k > 1:  # a split part is never bigger than a die: cap it so crops stay centred
            rw, rh = min(rw, side * 1.22), min(rh, side * 1.22)
        out.append(Candidate(cx=cx / f, cy=cy / f, w=max(rw, 0.6 * side) / f, h=max(rh, 0.6 * side) / f,
                             angle=ang, group=gi, parts=k))
    return out


def _cuts(pts: np.ndarray, k: int, n_p: float, side: float, f: float, gi: int) -> list[list[Candidate]]:
    """Ways to cut a piece thought to hold k dice (n_p die areas); the reader keeps whichever
    the face model likes best."""
    ks = [k] + ([k - 1] if k > 1 else []) + ([k + 1] if (k > 1 or n_p >= 1.3) and k < 40 else [])
    if k <= 2 and n_p >= 1.3:
        ks.append(k + 2)  # three smaller dice in a tight triangle look like one or two
    opts = [o for o in (_split(pts, kk, side, f, gi) for kk in ks) if o]
    if k > 1:
        # also a cut seeded at the die-centre peaks of the distance transform
        peaks = _dt_peaks(pts, side)
        if 2 <= len(peaks) <= 40:
            o = _split(pts, len(peaks), side, f, gi, init=peaks)
            if o:
                opts.append(o)
    return opts


EDGE_STEP = 8.0  # L units per pixel: die outlines and pips on a pale tray; cloth and shading stay below
TEXTURE_AREA = 1.3  # a die's patch of dense edges, in die areas (the density window widens it)


def _textured_spots(small: np.ndarray, side: float) -> list[np.ndarray]:
    """Die-sized spots dense with sharp lightness edges.

    Spots over dice the colour test found too are kept: a white die on a pale table is often
    found only in part (its shadow, its side face), and the spot is the better cut of it; the
    reader keeps the surer of two reads of one die. (Skipping spots mostly over found blobs
    lost 12 of 20 missed dice on the training photos.)"""
    L = cv2.cvtColor(small, cv2.COLOR_BGR2LAB)[..., 0].astype(np.float32)
    edges = (_gradient(cv2.GaussianBlur(L, (0, 0), 1.0)) > EDGE_STEP).astype(np.float32)
    if float(edges.mean()) > 0.03:
        return []  # a busy table (wood grain, weave): edges say nothing there
    k = max(3, int(0.5 * side) | 1)
    dens = cv2.boxFilter(edges, -1, (k, k))
    spots = (dens > 0.15).astype(np.uint8)
    unit = side * side
    n, lab, stats, _ = cv2.connectedComponentsWithStats(spots, connectivity=8)
    out = []
    for i in range(1, n):
        area = float(stats[i, cv2.CC_STAT_AREA])
        if not 0.3 * unit <= area <= 4.0 * TEXTURE_AREA * unit:
            continue
        x, y, w, h = stats[i, :4]
        sub = lab[y:y + h, x:x + w] == i
        ys, xs = np.nonzero(sub)
        out.append(np.stack([xs + x, ys + y], 1).astype(np.float32))
    return out


class Region(list):
    """Alternative cuts of one piece of a blob (a list of lists of Candidates) that also remembers
    the piece's pixels (full-resolution coordinates) and the die side, so the reader can look for a
    die the chosen cut left out."""

    def __init__(self, opts, *, points: np.ndarray, side: float, scale: float = 1.0, group: int = 0) -> None:
        super().__init__(opts)
        self.points = points
        self.side = side
        self.scale = scale  # working image / full resolution: the cuts are made there
        self.group = group

    def dice_worth(self, factor: float = 1.0) -> float:
        """How many tops of dice `factor` times the die size the piece's pixels would make (one
        point per working pixel)."""
        side = self.side * factor * self.scale
        return len(self.points) / (side * side)

    def smaller(self, factor: float) -> "Region | None":
        """The piece's cuts for dice `factor` times the size (full-resolution side), as a Region."""
        f = self.scale
        side = self.side * factor * f
        pts = np.rint(self.points * f)  # back on the working image's pixels
        n_p = self.dice_worth(factor)
        k = min(max(2, int(round(n_p))), 40)
        opts = _cuts(pts, k, n_p, side, f, self.group)
        return Region(opts, points=self.points, side=side / f, scale=f, group=self.group) if opts else None

    def rest(self, kept: list[Candidate], least: float = 0.6, grow: float = 1.05) -> list["Region"]:
        """The piece without the pixels under `kept` dice, in pieces of at least 0.6 of a die,
        each with its own cuts: how the reader cuts a cluster again around the dice it is sure
        of. Nothing when less than `least` of a die is left in all."""
        f = self.scale
        side = self.side * f
        pts = np.rint(self.points * f)  # back on the working image's pixels
        free = np.ones(len(pts), bool)
        for c in kept:
            a = np.deg2rad(c.angle)
            d = pts - np.array([c.cx, c.cy], np.float32) * f
            u = np.abs(d[:, 0] * np.cos(a) + d[:, 1] * np.sin(a))
            v = np.abs(-d[:, 0] * np.sin(a) + d[:, 1] * np.cos(a))
            free &= ~((u <= c.w * f * grow / 2) & (v <= c.h * f * grow / 2))
        out = []
        if free.sum() < least * side * side:
            return out
        for piece in _open_pieces(pts[free], side, 0.5):
            n_p = len(piece) / (side * side)
            if n_p < 0.6:
                continue
            opts = _cuts(piece, _dice_in(n_p, *min_rect(piece)[1]), n_p, side, f, self.group)
            if opts:
                out.append(Region(opts, points=piece / f, side=self.side, scale=f, group=self.group))
        return out


def leftovers(region: Region, kept: list[Candidate]) -> list[Candidate]:
    """Die-sized parts of a piece that no kept candidate covers (a die the split missed)."""
    side = region.side
    sc = min(1.0, 24.0 / side)  # a die ~24 px across is detail enough here
    pts = region.points * sc
    x0, y0 = pts.min(0) - 2
    m = np.zeros((int(pts[:, 1].max() - y0) + 3, int(pts[:, 0].max() - x0) + 3), np.uint8)
    m[(pts[:, 1] - y0).astype(int), (pts[:, 0] - x0).astype(int)] = 255
    m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    for c in kept:  # blank each kept die (a little larger: its side face and shadow go with it)
        box = cv2.boxPoints(((c.cx * sc - x0, c.cy * sc - y0), (c.w * sc * 1.1, c.h * sc * 1.1), c.angle))
        cv2.fillConvexPoly(m, np.round(box).astype(np.int32), 0)
    s = side * sc
    k = max(3, int(0.55 * s) | 1)
    m = cv2.morphologyEx(m, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    n, lab, stats, _ = cv2.connectedComponentsWithStats(m, connectivity=8)
    out = []
    for i in range(1, n):
        if stats[i, cv2.CC_STAT_AREA] < 0.45 * s * s:
            continue
        ys, xs = np.nonzero(lab == i)
        (cx, cy), (rw, rh), ang = cv2.minAreaRect(np.stack([xs, ys], 1).astype(np.float32))
        rw, rh = float(np.clip(rw, 0.75 * s, 1.15 * s)), float(np.clip(rh, 0.75 * s, 1.15 * s))
        out.append(Candidate(cx=(cx + x0) / sc, cy=(cy + y0) / sc, w=rw / sc, h=rh / sc, angle=ang))
    return out


def _open_pieces(points: np.ndarray, side: float, width: float = 0.6) -> list[np.ndarray]:
    """Cut a big blob with an opening `width` of a die across: strips thinner than that vanish."""
    x0, y0 = points.min(0).astype(int) - 2
    x1, y1 = points.max(0).astype(int) + 3
    m = np.zeros((y1 - y0, x1 - x0), np.uint8)
    m[points[:, 1].astype(int) - y0, points[:, 0].astype(int) - x0] = 255
    k = max(3, int(width * side) | 1)
    m = cv2.morphologyEx(m, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    n, lab = cv2.connectedComponents(m, connectivity=8)
    out = []
    for i in range(1, n):
        ys, xs = np.nonzero(lab == i)
        out.append(np.stack([xs + x0, ys + y0], 1).astype(np.float32))
    return out


def _thresholds(sample: np.ndarray, low: float | None = None) -> tuple[float, float]:
    """(weak, strong) table-distance lines from the table's own spread (robust: dice are few)."""
    med = float(np.median(sample))
    mad = float(np.median(np.abs(sample - med))) * 1.4826
    low = max(LOW_FLOOR, med + 4.0 * mad) if low is None else low
    return low, max(18.0, med + 6.0 * mad, low)


def _hysteresis(dist: np.ndarray, weak: np.ndarray, high) -> np.ndarray:
    """Faint regions (a cream die on a grey cloth) count if they hold strong pixels (its pips)."""
    n, lab = cv2.connectedComponents(weak.astype(np.uint8), connectivity=8)
    strong_ids = np.unique(lab[(dist > high) & weak])
    keep = np.zeros(n, np.uint8)
    keep[strong_ids] = 255
    keep[0] = 0
    # a faint region spreading over a big part of the table is glare or shading, not one die:
    # inside it only the strong pixels count
    sizes = np.bincount(lab.ravel(), minlength=n)
    huge = np.nonzero(sizes > 0.02 * lab.size)[0]
    huge = huge[huge > 0]
    mask = keep[lab]
    if len(huge):
        in_huge = np.isin(lab, huge)
        mask[in_huge & (dist <= high)] = 0
    return mask


def _segment(small, bg_small, k_frac, side_hint, threshold, judge=None):
    dist, darker = foreground(small, bg_small, k_frac)
    sample = dist[::3, ::3]  # robust statistics need no more pixels than this
    low, high = _thresholds(sample, threshold)
    mask = _hysteresis(dist, dist > low, high)
    if threshold is None:
        # Wood grain and glare make a table brighter in places, hardly ever darker, and the spread
        # they add hid dark dice (a dark die on wood sits ~25 from the table, the global line
        # ~32). So the pixels darker than the table also get the line their own spread sets, in a
        # mask of their own (sharing one would join dice, shadows and grain into a "huge" region).
        dark = sample[darker[::3, ::3]]
        if dark.size >= 0.1 * sample.size:
            low_d, high_d = _thresholds(dark)
            if low_d < low:
                mask |= _hysteresis(dist, darker & (dist > low_d), min(high_d, high))
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    mask = _fill_holes(mask)
    min_area = 40.0 if side_hint is None else 0.25 * side_hint * side_hint
    grad = _gradient(dist)
    blobs = _blobs(mask, min_area)
    side, support = (side_hint, float("inf")) if side_hint else _size_estimate(blobs, grad, judge)
    if side_hint is None and support == 0.0 and blobs:
        # No lone square: on a grained table every die may touch a stripe of grain, and the
        # chain rule then measures the stripes. Strokes thinner than a die vanish under an
        # opening; the first width that leaves lone squares over twice as wide measures dice.
        for k in (5, 9, 15):
            opened = cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
            again, sup2 = _size_estimate(_blobs(opened, min_area), grad, judge)
            if again and sup2 > 0 and again > 2 * k:
                side, support = again, sup2
                break
    if side is not None:
        # strokes much thinner than a die (wood grain, cloth seams) cannot be dice: open them away
        k = int(0.3 * side) | 1
        if k >= 3:
            opened = cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
            if side_hint is None:
                again, sup2 = _size_estimate(_blobs(opened, min_area), grad, judge)
                if again and (0.75 * side < again < 1.35 * side or (sup2 > support and again < side)):
                    # (more lone squares, once thin strands such as wood grain no longer join
                    # the dice, beat the first guess)
                    side, support = again, sup2
            mask = opened
            blobs = _blobs(mask, 0.25 * side * side)
        else:
            blobs = [b for b in blobs if b.area >= 0.25 * side * side]
    return mask, blobs, side, support


def crop(img: np.ndarray, c: Candidate, out: int = 32, margin: float = 1.15) -> np.ndarray:
    """The candidate warped upright into an out x out patch (a little margin around it)."""
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
