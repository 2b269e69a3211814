"""Synthetic table scenes with known dice, for tests, training and the benchmark.

Deterministic given a seed: the dice, table and camera come from one numpy Generator; the things
beside the dice (`objects`) and the dice finishes (`dice_style`) from streams of their own, drawn
only when asked for, so a scene without them stays pixel for pixel what it was before they existed.

Long: a die's face, finish and toucan are drawn here beside the one function that places, lights
and photographs them, since a scene's pixels depend on the order of every random draw in it.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from companion.vision.scene_objects import OBJECT_KINDS, jitter, pick, place_objects

CANON = 96  # side of the canonical die face drawing, before warping into the scene

# pip centres on a unit face, per face value
PIPS = {
    1: [(0.5, 0.5)],
    2: [(0.27, 0.27), (0.73, 0.73)],
    3: [(0.27, 0.27), (0.5, 0.5), (0.73, 0.73)],
    4: [(0.27, 0.27), (0.73, 0.27), (0.27, 0.73), (0.73, 0.73)],
    5: [(0.27, 0.27), (0.73, 0.27), (0.5, 0.5), (0.27, 0.73), (0.73, 0.73)],
    6: [(0.27, 0.25), (0.73, 0.25), (0.27, 0.5), (0.73, 0.5), (0.27, 0.75), (0.73, 0.75)],
}

BODY_COLOURS = [  # BGR
    (30, 30, 200), (40, 160, 40), (190, 80, 20), (20, 200, 230), (240, 240, 240),
    (25, 25, 25), (140, 40, 130), (0, 120, 240), (200, 200, 60), (60, 60, 130),
    (120, 190, 240), (90, 90, 90), (30, 90, 30), (150, 20, 20), (210, 170, 240),
]


@dataclass(frozen=True)
class SceneDie:
    face: int  # 1..6 (a Paco face is 1)
    box: tuple[int, int, int, int]
    paco: bool
    corners: tuple[tuple[float, float], ...]  # top-face corners in the final image


@dataclass(frozen=True)
class SceneObject:
    kind: str  # one of OBJECT_KINDS: a thing in view that is not a die
    box: tuple[int, int, int, int]  # x, y, w, h in the final image, clipped to it


@dataclass(frozen=True)
class Scene:
    image: np.ndarray  # BGR uint8
    dice: tuple[SceneDie, ...]
    background: str
    objects: tuple[SceneObject, ...] = ()
    dice_style: str = "plain"

    @property
    def counts(self) -> dict[int, int]:
        c = {f: 0 for f in range(1, 7)}
        for d in self.dice:
            c[d.face] += 1
        return c


def _lum(c) -> float:
    b, g, r = c
    return 0.114 * b + 0.587 * g + 0.299 * r


# Pip colours of real dice beside white and black: red, gold, yellow, green, blue (BGR).
PIP_COLOURS = ((40, 40, 200), (40, 160, 200), (0, 220, 255), (60, 160, 40), (200, 90, 30))

# Finishes of real dice, for benchmark breakdowns; "plain" is the usual mix above.
DICE_STYLES = ("plain", "dark", "transparent", "marbled", "metallic", "coloured_pips", "dark_marbled")
STYLE_BODIES = {
    "dark": ((22, 22, 22), (70, 30, 20), (30, 60, 20)),  # black, navy, dark green
    "transparent": ((40, 40, 210), (200, 110, 30), (60, 180, 60), (225, 225, 225), (30, 140, 230), (150, 50, 140)),
    "marbled": tuple(BODY_COLOURS),
    "metallic": ((60, 170, 210), (195, 195, 192), (70, 115, 185)),  # gold, silver, copper
    "coloured_pips": ((240, 240, 240), (200, 230, 245), (25, 25, 25), (110, 110, 110)),
    # dark bodies swirled with a second colour, pips red, gold or white: the real dice the
    # independent check found misread most
    "dark_marbled": ((22, 22, 22), (70, 30, 20), (30, 60, 20), (30, 30, 110), (90, 30, 70)),
}
# The body finish each style is drawn with (the others are solid).
STYLE_FINISH = {"marbled": "marbled", "metallic": "metallic", "transparent": "transparent",
                "dark_marbled": "marbled"}
WHITE, GOLD = (245, 245, 245), (40, 175, 215)
OBJECT_STREAM, STYLE_STREAM = 0x0B1EC7, 0x57F1E  # seed the extra streams apart from the scene's own


def _style_colours(rng, style: str, bg_mean) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Body and pip colours of a die of the given finish, standing out from the table if it can."""
    bodies = STYLE_BODIES[style]
    for _ in range(10):
        body = jitter(rng, pick(rng, bodies), 12)
        if _contrast_ok(body, bg_mean, 30):
            break
    if style == "dark":
        return body, WHITE if rng.random() < 0.6 else GOLD
    if style == "metallic":
        return body, (30, 30, 30)
    if style == "coloured_pips":
        options = [c for c in PIP_COLOURS if _contrast_ok(body, c, 60)] or list(PIP_COLOURS)
        return body, pick(rng, options)
    if style == "dark_marbled":
        return body, pick(rng, [c for c in (*PIP_COLOURS, WHITE, GOLD) if _contrast_ok(body, c, 60)])
    return body, WHITE if _lum(body) < 150 else (20, 20, 20)


def _metal(rng, img: np.ndarray) -> np.ndarray:
    """A metal body: darker toward the edges, a bright specular spot, fine brushing."""
    s = img.shape[0]
    yy, xx = np.mgrid[0:s, 0:s].astype(np.float32) / s
    hx, hy = rng.uniform(0.2, 0.8, 2)
    spec = np.exp(-((xx - hx) ** 2 + (yy - hy) ** 2) / (2 * rng.uniform(0.12, 0.25) ** 2)) * rng.uniform(0.4, 0.8)
    radial = 0.65 + 0.45 * np.clip(1 - np.hypot(xx - 0.5, yy - 0.5) / 0.7, 0, 1)
    brush = cv2.resize(rng.normal(0, 0.05, (s, 1)).astype(np.float32), (s, s))
    out = img.astype(np.float32) * (radial + brush)[..., None]
    return np.clip(out + (255 - out) * spec[..., None], 0, 255).astype(np.uint8)


def draw_face(rng: np.random.Generator, face: int, body, pip, paco: bool = False, size: int = CANON,
              rough: bool = False):
    """Draw one die's top face (BGR) and its alpha mask on a size x size canvas. `rough`: looks of
    real dice that a solid die with contrasted pips lacks, each at random: a marbled or
    translucent body (see _marble), coloured pips of little contrast, a glare streak."""
    return _draw_face(rng, face, body, pip, paco, size, rough)[:2]


def _draw_face(rng, face: int, body, pip, paco: bool = False, size: int = CANON, rough: bool = False,
               finish: str | None = None, frng=None):
    """draw_face, and a `finish` of DICE_STYLES drawn from `frng` (marbled, metallic or transparent);
    a transparent face also returns its opacity (pips solid, body see-through), else None."""
    s = size
    img = np.zeros((s, s, 3), np.uint8)
    img[:] = body
    streak = False
    if rough:
        if rng.random() < 0.4:
            img = _marble(rng, img, body, pip, face)
        if rng.random() < 0.4:  # red or gold pips on a red or dark die
            options = [c for c in PIP_COLOURS if _contrast_ok(body, c, 25)]
            if options:
                pip = pick(rng, options)
        streak = rng.random() < 0.4
    if finish == "marbled":
        img = _swirl(frng, img)
    mask = np.zeros((s, s), np.uint8)
    r = int(s * rng.uniform(0.08, 0.18))  # rounded corners
    cv2.rectangle(mask, (r, 0), (s - 1 - r, s - 1), 255, -1)
    cv2.rectangle(mask, (0, r), (s - 1, s - 1 - r), 255, -1)
    for cx, cy in ((r, r), (s - 1 - r, r), (r, s - 1 - r), (s - 1 - r, s - 1 - r)):
        cv2.circle(mask, (cx, cy), r, 255, -1, cv2.LINE_AA)
    # soft shading toward the edges, like a real bevel
    yy, xx = np.mgrid[0:s, 0:s].astype(np.float32) / s
    edge = np.minimum(np.minimum(xx, 1 - xx), np.minimum(yy, 1 - yy))
    shade = 0.8 + 0.2 * np.clip(edge / 0.1, 0, 1)
    img = (img.astype(np.float32) * shade[..., None]).clip(0, 255).astype(np.uint8)
    if finish == "metallic":
        img = _metal(frng, img)
    bare = img.copy() if finish == "transparent" else None
    if paco:
        _draw_toucan(rng, img, body)
    else:
        pr = s * rng.uniform(0.075, 0.1)
        if face == 1:
            pr *= rng.uniform(1.0, 1.6)  # many dice have a bigger ace pip
        k = rng.uniform(0.92, 1.0)
        for px, py in PIPS[face]:
            cx = (0.5 + (px - 0.5) * k) * s
            cy = (0.5 + (py - 0.5) * k) * s
            cv2.circle(img, (int(cx * 16), int(cy * 16)), int(pr * 16), pip, -1, cv2.LINE_AA, shift=4)
    if streak:
        _glare_streak(rng, img)
    if bare is None:
        return img, mask, None
    # see-through body with lighter, denser edges (the bevel catches light); pips and toucan solid
    rim = (1 - np.clip(edge / 0.12, 0, 1))[..., None]
    solid = np.any(img != bare, axis=2, keepdims=True)
    img = np.where(solid, img, np.clip(img + (255.0 - img) * 0.35 * rim, 0, 255)).astype(np.uint8)
    level = frng.uniform(0.4, 0.6)
    return img, mask, np.where(solid, 1.0, level + (1 - level) * 0.6 * rim)[..., 0].astype(np.float32)


def _glare_streak(rng, img: np.ndarray) -> None:
    """A lamp's reflection along a die's glossy top: a thin bright band, often across the pips."""
    s = img.shape[0]
    a = rng.uniform(0, np.pi)
    d = np.array([np.cos(a), np.sin(a)]) * s
    c = np.array([s / 2, s / 2]) + rng.uniform(-0.3, 0.3, 2) * s
    band = np.zeros((s, s), np.float32)
    p0, p1 = (c - d).astype(int), (c + d).astype(int)
    cv2.line(band, (int(p0[0]), int(p0[1])), (int(p1[0]), int(p1[1])), 1.0, max(1, int(s * rng.uniform(0.03, 0.1))), cv2.LINE_AA)
    band = cv2.GaussianBlur(band, (0, 0), s * 0.015) * rng.uniform(0.5, 0.95)
    out = img.astype(np.float32)
    img[:] = np.clip(out + (255 - out) * band[..., None], 0, 255).astype(np.uint8)


def _marble(rng, img: np.ndarray, body, pip, face: int) -> np.ndarray:
    """A marbled body (a second colour swirled through it) or a translucent one (the pips of the
    faces below show through faintly, a little off): real dice that a solid body does not teach."""
    if rng.random() < 0.5:
        return _swirl(rng, img)
    s = img.shape[0]
    ghost = img.copy()
    dx, dy = rng.uniform(-0.08, 0.08, 2) * s
    below = int(rng.integers(1, 7))
    for px, py in PIPS[below]:
        cv2.circle(ghost, (int((px * s + dx) * 16), int((py * s + dy) * 16)), int(s * 0.09 * 16), pip, -1,
                   cv2.LINE_AA, shift=4)
    ghost = cv2.GaussianBlur(ghost, (0, 0), s * 0.03)
    out = img.astype(np.float32) * 0.75 + ghost.astype(np.float32) * 0.25
    return np.clip(out, 0, 255).astype(np.uint8)


def _swirl(rng, img: np.ndarray) -> np.ndarray:
    """A second colour swirled through the body: a marbled die."""
    s = img.shape[0]
    other = np.array(jitter(rng, pick(rng, BODY_COLOURS), 25), np.float32)
    field = cv2.resize(rng.normal(0, 1, (5, 5)).astype(np.float32), (s, s), interpolation=cv2.INTER_CUBIC)
    veins = np.abs(np.sin(field * rng.uniform(1, 3) + rng.uniform(0, np.pi)))
    amount = np.clip(1 - veins / rng.uniform(0.35, 0.9), 0, 1) * rng.uniform(0.5, 0.9)
    out = img.astype(np.float32) * (1 - amount[..., None]) + other * amount[..., None]
    return np.clip(out, 0, 255).astype(np.uint8)


def _draw_toucan(rng, img, body) -> None:
    """A stylised toucan head: dark head, pale throat, big coloured beak, eye. Never a pip pattern."""
    s = img.shape[0]
    u = lambda v: int(v * s * 16)  # noqa: E731 - fixed-point coordinates
    dark = (20, 20, 20) if _lum(body) > 70 else (235, 235, 235)
    cx, cy = rng.uniform(0.3, 0.4), rng.uniform(0.45, 0.55)
    cv2.ellipse(img, (u(cx), u(cy)), (u(0.22), u(0.27)), 0, 0, 360, dark, -1, cv2.LINE_AA, shift=4)
    throat = (200, 240, 250) if _lum(body) < 170 else (60, 200, 240)
    cv2.ellipse(img, (u(cx + 0.05), u(cy + 0.14)), (u(0.1), u(0.08)), 0, 0, 360, throat, -1, cv2.LINE_AA, shift=4)
    beak = [(0, 140, 255), (0, 200, 255), (0, 90, 230)][int(rng.integers(3))]
    pts = np.array([[cx + 0.12, cy - 0.12], [cx + 0.62, cy - 0.02], [cx + 0.55, cy + 0.06],
                    [cx + 0.12, cy + 0.06]]) * s
    cv2.fillPoly(img, [np.round(pts * 16).astype(np.int32)], beak, cv2.LINE_AA, shift=4)
    tip = np.array([[cx + 0.5, cy - 0.04], [cx + 0.62, cy - 0.02], [cx + 0.55, cy + 0.06], [cx + 0.46, cy + 0.05]]) * s
    cv2.fillPoly(img, [np.round(tip * 16).astype(np.int32)], (30, 30, 210), cv2.LINE_AA, shift=4)
    cv2.line(img, (u(cx + 0.12), u(cy - 0.03)), (u(cx + 0.55), u(cy + 0.01)), (20, 20, 20), max(1, s // 60), cv2.LINE_AA, shift=4)
    cv2.circle(img, (u(cx + 0.02), u(cy - 0.08)), u(0.065), (255, 160, 60), -1, cv2.LINE_AA, shift=4)
    cv2.circle(img, (u(cx + 0.02), u(cy - 0.08)), u(0.03), (10, 10, 10), -1, cv2.LINE_AA, shift=4)


def _background(rng, h: int, w: int) -> tuple[np.ndarray, str]:
    kind = ["felt", "wood", "cloth"][int(rng.integers(3))]
    if kind == "felt":
        base = np.array([[40, 110, 30], [90, 60, 20], [30, 30, 120], [50, 50, 50], [70, 100, 60]][int(rng.integers(5))], np.float32)
        noise = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 1.2) * 10
        img = base[None, None, :] + noise[..., None]
    elif kind == "wood":
        base = np.array([[40, 80, 140], [60, 110, 170], [30, 55, 95], [90, 150, 200]][int(rng.integers(4))], np.float32)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        ang = rng.uniform(0, np.pi)
        t = xx * np.cos(ang) + yy * np.sin(ang)
        wob = cv2.resize(rng.normal(0, 1, (8, 8)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC) * 15
        grain = np.sin((t + wob) / rng.uniform(6, 14)) * 0.5 + 0.5
        grain = grain ** 3
        img = base[None, None, :] * (0.8 + 0.3 * grain[..., None])
        img += rng.normal(0, 3, (h, w, 1)).astype(np.float32)
    else:
        c1 = np.array(pick(rng, BODY_COLOURS), np.float32) * 0.5 + 60
        c2 = c1 * rng.uniform(0.75, 0.95)
        p = int(rng.integers(3, 7))
        yy, xx = np.mgrid[0:h, 0:w]
        weave = (((xx // p) + (yy // p)) % 2).astype(np.float32)
        weave = cv2.GaussianBlur(weave, (0, 0), 0.8)
        img = c1 * weave[..., None] + c2 * (1 - weave[..., None])
        img += rng.normal(0, 3, (h, w, 1)).astype(np.float32)
    return img, kind


def _contrast_ok(a, b, minimum: float = 45.0) -> bool:
    lab = cv2.cvtColor(np.array([[a, b]], np.uint8), cv2.COLOR_BGR2LAB).astype(np.float32)[0]
    return float(np.linalg.norm(lab[0] - lab[1])) >= minimum


def generate_scene(seed: int, *, size: tuple[int, int] = (720, 1280), n_dice: int | None = None,
                   paco_fraction: float = 0.3, touching: float = 0.35, angle: float = 1.0,
                   hard: float = 1.0, faces: tuple[int, ...] | None = None,
                   body_colours: tuple[tuple[int, int, int], ...] | None = None,
                   die_scale: float = 1.0, table_seed: int | None = None, rough: float = 0.0,
                   objects: float = 0.0, object_kinds: tuple[str, ...] | None = None,
                   dice_style: str | None = None) -> Scene:
    """Make one scene: (height, width) `size`, 1..30 dice unless `n_dice` given.

    `angle` scales the perspective tilt (0 = top-down), `hard` scales glare, blur and noise.
    `table_seed` fixes the table, light and camera apart from the dice (calibration photos share it).
    `rough` is the share of dice drawn with real dice's rougher looks (see draw_face; 0: no random
    draw for it, so scenes made before it existed stay the same).
    `objects` is the chance that things other than dice are in view (chips, coins, cups, hands...:
    see scene_objects; `object_kinds` limits them), never over a die's top face.
    `dice_style` draws every die in one finish of DICE_STYLES, in the layout the plain scene of
    that seed has when `rough` is 0.
    """
    if dice_style is not None and dice_style not in DICE_STYLES:
        raise ValueError(f"dice_style {dice_style!r} is not one of {DICE_STYLES}")
    if object_kinds is not None and not set(object_kinds) <= set(OBJECT_KINDS):
        raise ValueError(f"object_kinds {object_kinds!r}: each must be one of {OBJECT_KINDS}")
    styled = dice_style not in (None, "plain")
    srng = np.random.default_rng([seed, STYLE_STREAM]) if styled else None
    finish = STYLE_FINISH.get(dice_style)
    rng = np.random.default_rng(seed)
    tr = rng if table_seed is None else np.random.default_rng(table_seed)
    h, w = size
    n = int(n_dice if n_dice is not None else rng.integers(1, 31))
    bg, kind = _background(tr, h, w)
    bg_mean = tuple(int(v) for v in bg.reshape(-1, 3).mean(0))
    # die size in pixels: smaller when many dice must fit
    base = min(h, w)
    hi = base * (0.13 if n <= 8 else 0.1 if n <= 18 else 0.085)
    s_mean = rng.uniform(base * 0.065, hi) * die_scale
    img = bg.copy()
    table = bg  # the bare table, lit the same way: fills the frame corners the perspective leaves empty
    light = tr.uniform(0, 2 * np.pi)
    lx, ly = np.cos(light), np.sin(light)
    placed: list[np.ndarray] = []
    dice_meta = []
    tries = 0
    while len(placed) < n and tries < n * 200:
        tries += 1
        s = s_mean * rng.uniform(0.92, 1.08)
        if placed and rng.random() < touching:
            # touching: put it flush against a random placed die
            j = int(rng.integers(len(placed)))
            pc = placed[j].mean(0)
            e = placed[j][1] - placed[j][0]
            theta = np.arctan2(e[1], e[0]) + rng.normal(0, 0.08)
            k = int(rng.integers(4))
            d = np.array([np.cos(theta + k * np.pi / 2), np.sin(theta + k * np.pi / 2)])
            c = pc + d * (np.linalg.norm(e) / 2 + s / 2) * 1.02 + rng.normal(0, s * 0.05, 2)
        else:
            theta = rng.uniform(0, np.pi / 2)
            c = np.array([rng.uniform(s, w - s), rng.uniform(s, h - s)])
        R = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
        sq = (np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]]) * s) @ R.T + c
        if sq.min() < 4 or sq[:, 0].max() > w - 5 or sq[:, 1].max() > h - 5:
            continue
        ok = True
        for q in placed:
            area, _ = cv2.intersectConvexConvex(sq.astype(np.float32), q.astype(np.float32))
            if area > 0.02 * s * s:
                ok = False
                break
        if ok:
            placed.append(sq)
    things = _place_objects(seed, objects, object_kinds, img, placed, s_mean, light, n)
    # draw shadows first, then side faces, then tops (so neighbours overlap correctly)
    shadow = np.zeros((h, w), np.float32)
    for sq in placed:
        s = np.linalg.norm(sq[1] - sq[0])
        off = np.array([lx, ly]) * s * rng.uniform(0.05, 0.18)
        cv2.fillConvexPoly(shadow, np.round((sq + off) * 16).astype(np.int32), 1.0, cv2.LINE_AA, shift=4)
    shadow = cv2.GaussianBlur(shadow, (0, 0), s_mean * 0.08 + 1)
    img *= (1 - rng.uniform(0.3, 0.55) * shadow)[..., None]
    cam = np.array([w / 2, h / 2]) + tr.normal(0, 0.2, 2) * [w, h]
    tops = []
    for sq in placed:
        s = np.linalg.norm(sq[1] - sq[0])
        face = int(rng.integers(1, 7)) if faces is None else int(faces[int(rng.integers(len(faces)))])
        paco = face == 1 and rng.random() < paco_fraction  # Paco dice: toucan replaces the ace
        palette = body_colours or BODY_COLOURS
        for _ in range(20):
            body = jitter(rng, pick(rng, palette), 25 if body_colours is None else 8)
            if _contrast_ok(body, bg_mean, 40):
                break
        pip = (245, 245, 245) if _lum(body) < 120 else (20, 20, 20)
        if rng.random() < 0.2:
            pip = (0, 0, 220) if _lum(body) > 150 else (0, 220, 255)
            if not _contrast_ok(body, pip, 60):
                pip = (245, 245, 245) if _lum(body) < 120 else (20, 20, 20)
        if styled:  # the usual choice above is still drawn: the layout stays the plain scene's
            body, pip = _style_colours(srng, dice_style, bg_mean)
        this_rough = not styled and rough > 0 and rng.random() < rough
        top, mask, opacity = _draw_face(rng, face, body, pip, paco, rough=this_rough, finish=finish, frng=srng)
        # side face toward the camera's far side: gives the moderate-angle 3D look
        vec = (sq.mean(0) - cam) / max(w, h) * angle * s * rng.uniform(0.3, 0.7)
        side = np.vstack([sq, sq + vec])
        hull = cv2.convexHull(side.astype(np.float32))
        side_col = tuple(int(v * rng.uniform(0.45, 0.7)) for v in body)
        sq_top = sq - vec * 0.0  # the top stays where placed; sides show beyond it
        src = np.array([[0, 0], [CANON, 0], [CANON, CANON], [0, CANON]], np.float32)
        # warp only into the die's own region: whole-frame warps per die were the slow part
        x0, y0 = np.maximum(np.floor(sq_top.min(0)).astype(int) - 2, 0)
        x1, y1 = np.minimum(np.ceil(sq_top.max(0)).astype(int) + 3, [w, h])
        under = None if opacity is None else img[y0:y1, x0:x1].copy()  # seen through a clear die
        if opacity is None:
            cv2.fillConvexPoly(img, np.round(hull.reshape(-1, 2) * 16).astype(np.int32), side_col, cv2.LINE_AA, shift=4)
        else:
            _glass_side(img, hull.reshape(-1, 2), side_col)
        M = cv2.getPerspectiveTransform(src, (sq_top - [x0, y0]).astype(np.float32))
        rw, rh = int(x1 - x0), int(y1 - y0)
        warped = cv2.warpPerspective(top, M, (rw, rh), flags=cv2.INTER_LINEAR)
        wm = cv2.warpPerspective(mask, M, (rw, rh), flags=cv2.INTER_LINEAR).astype(np.float32)[..., None] / 255
        if under is not None:
            under = (under, wm * cv2.warpPerspective(opacity, M, (rw, rh), flags=cv2.INTER_LINEAR)[..., None])
        tops.append((y0, y1, x0, x1, warped, wm, under))
        dice_meta.append((face, paco, sq_top))
    # Tops go on after every side: a die's side stands lower than any top, so from above it can
    # never hide a neighbour's top (painting side and top die by die buried touching dice).
    for y0, y1, x0, x1, warped, wm, under in tops:
        if under is None:
            img[y0:y1, x0:x1] = img[y0:y1, x0:x1] * (1 - wm) + warped.astype(np.float32) * wm
        else:  # a clear top over the table (not over its own side), then the body at its opacity
            below, wo = under
            region = img[y0:y1, x0:x1] * (1 - wm) + below * wm
            img[y0:y1, x0:x1] = region * (1 - wo) + warped.astype(np.float32) * wo
    # lighting gradient across the table
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    g = tr.uniform(-0.35, 0.35) * ((xx - w / 2) * np.cos(light) + (yy - h / 2) * np.sin(light)) / max(w, h)
    vign = 1 - tr.uniform(0, 0.25) * (((xx - w / 2) / w) ** 2 + ((yy - h / 2) / h) ** 2) * 2
    img *= ((1 + g) * vign)[..., None]
    table = table * ((1 + g) * vign)[..., None]
    # glare: a soft bright patch (lamp reflection), sometimes over dice
    for _ in range(int(tr.integers(0, 3))):
        gx, gy = tr.uniform(0, w), tr.uniform(0, h)
        gs = tr.uniform(0.03, 0.12) * max(w, h)
        blob = np.exp(-(((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * gs * gs)))
        glare = (blob * tr.uniform(40, 110) * hard)[..., None]
        img += glare
        table = table + glare
    img = np.clip(img, 0, 255)
    # moderate perspective of the whole table
    t = 0.07 * angle
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    dst = src + tr.uniform(-t, t, (4, 2)).astype(np.float32) * [w, h]
    dst = np.float32(dst)
    # keep it inside the frame by normalising to the bounding box of dst
    lo = dst.min(0)
    hi2 = dst.max(0)
    dst = (dst - lo) / (hi2 - lo) * [w - 1, h - 1]
    P = cv2.getPerspectiveTransform(src, dst.astype(np.float32))
    # the corners outside the warped table show a mirrored bare table: mirroring the whole image
    # used to put mirror copies of border dice there, real-looking dice missing from the labels
    img = cv2.warpPerspective(img.astype(np.float32), P, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    inside = cv2.warpPerspective(np.ones((h, w), np.float32), P, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    bare = cv2.warpPerspective(np.clip(table, 0, 255).astype(np.float32), P, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    img = img + bare * (1 - inside)[..., None]
    blur = tr.uniform(0, 1.3) * hard
    if blur > 0.3:
        img = cv2.GaussianBlur(img, (0, 0), blur)
    img += rng.normal(0, rng.uniform(1, 7) * hard, img.shape).astype(np.float32)
    img = np.clip(img, 0, 255).astype(np.uint8)
    if rng.random() < 0.5:
        q = int(rng.integers(60, 95))
        img = cv2.imdecode(cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, q])[1], cv2.IMREAD_COLOR)
    out = []
    for face, paco, sq in dice_meta:
        pts = cv2.perspectiveTransform(sq.reshape(-1, 1, 2).astype(np.float32), P).reshape(-1, 2)
        x0, y0 = pts.min(0)
        x1, y1 = pts.max(0)
        box = (int(round(x0)), int(round(y0)), int(round(x1 - x0)), int(round(y1 - y0)))
        out.append(SceneDie(face=face, box=box, paco=paco, corners=tuple(map(tuple, pts.tolist()))))
    seen = []
    for thing, poly in things:  # its footprint in the frame through the same camera as the dice
        pts = cv2.perspectiveTransform(poly.reshape(-1, 1, 2).astype(np.float32), P).reshape(-1, 2)
        x0, y0 = np.clip(pts.min(0), 0, [w, h])
        x1, y1 = np.clip(pts.max(0), 0, [w, h])
        if x1 - x0 >= 2 and y1 - y0 >= 2:
            seen.append(SceneObject(thing, (int(round(x0)), int(round(y0)), int(round(x1 - x0)), int(round(y1 - y0)))))
    return Scene(image=img, dice=tuple(out), background=kind, objects=tuple(seen), dice_style=dice_style or "plain")


def _place_objects(seed: int, objects: float, kinds, img, dice: list, s: float, light: float, n: int) -> list:
    """Things beside the dice (fewer the more dice), from a stream of their own: the dice come out
    the same with or without them, and objects=0 draws nothing at all."""
    if objects <= 0:
        return []
    orng = np.random.default_rng([seed, OBJECT_STREAM])
    if orng.random() >= objects:
        return []
    most = 6 if n <= 6 else 5 if n <= 12 else 4 if n <= 20 else 3
    return place_objects(orng, img, dice, s, light, int(orng.integers(1, most + 1)), tuple(kinds or OBJECT_KINDS))


def _glass_side(img: np.ndarray, hull: np.ndarray, colour) -> None:
    """A clear die's side: tinted, the table still showing through it."""
    h, w = img.shape[:2]
    x0, y0 = np.maximum(np.floor(hull.min(0)).astype(int), 0)
    x1, y1 = np.minimum(np.ceil(hull.max(0)).astype(int) + 1, [w, h])
    if x1 <= x0 or y1 <= y0:
        return
    m = np.zeros((y1 - y0, x1 - x0), np.float32)
    cv2.fillConvexPoly(m, np.round((hull - [x0, y0]) * 16).astype(np.int32), 1.0, cv2.LINE_AA, shift=4)
    m = m[..., None] * 0.55
    img[y0:y1, x0:x1] = img[y0:y1, x0:x1] * (1 - m) + np.array(colour, np.float32) * m


def generate_paco_closeup(seed: int, size: tuple[int, int] = (480, 640),
                          body_colours: tuple[tuple[int, int, int], ...] | None = None) -> Scene:
    """The Paco face of a player's dice held toward the camera: one to three big toucan faces."""
    rng = np.random.default_rng(seed)
    return generate_scene(seed, size=size, n_dice=int(rng.integers(1, 4)), faces=(1,), paco_fraction=1.0,
                          angle=0.3, hard=0.5, body_colours=body_colours, die_scale=1.6, touching=0.0)
