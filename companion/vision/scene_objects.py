"""Things beside the dice at a real reveal, for the synthetic scenes: chips, coins, cups, hands...

A reader that only ever saw dice on a bare table reads a poker chip's ring of spots as a 2 and a
cup's rim as a die; these give it what it must refuse. Each drawer makes one upright object on its
own canvas (BGR and alpha, float32, sized from the scene's die side `s`, lit from the scene's light
turned into the canvas); place_objects turns, places, shadows and pastes them beside the dice.

Long: one small drawer per kind of thing, kept together so every look-alike of a die the reader
is taught to refuse is in one place.
"""
from __future__ import annotations

import cv2
import numpy as np

# BGR palettes of the real things
CHIP_COLOURS = ((40, 40, 190), (160, 70, 25), (50, 125, 35), (28, 28, 28), (232, 232, 228), (120, 40, 110))
METALS = ((60, 170, 210), (195, 195, 192), (70, 115, 185))  # gold, silver, copper
CUP_COLOURS = ((35, 60, 100), (25, 45, 75), (28, 28, 30), (40, 40, 170), (150, 70, 30), (40, 120, 40), (30, 170, 210))
SKINS = ((170, 195, 235), (140, 170, 220), (105, 140, 195), (70, 105, 160), (45, 70, 115))
CAP_COLOURS = ((40, 40, 190), (60, 170, 210), (190, 190, 190), (40, 120, 40), (150, 70, 20), (235, 235, 235),
               (25, 25, 25))
BUTTON_COLOURS = ((240, 240, 238), (25, 25, 25), (40, 70, 110), (90, 40, 20), (40, 40, 170), (200, 230, 240),
                  (130, 130, 130))
PHONE_COLOURS = ((20, 20, 22), (55, 55, 60), (175, 175, 180), (90, 40, 20), (60, 50, 170), (190, 170, 230))
CRUMB_COLOURS = ((120, 170, 205), (40, 70, 110), (30, 120, 220), (35, 40, 45), (220, 225, 230))
RED, BLACK = (30, 30, 200), (25, 25, 25)

# how high each thing stands (in die sides): how far its shadow falls and how soft it is
HEIGHTS = {"chip": 0.12, "coin": 0.04, "cup": 0.6, "hand": 0.9, "bottle_cap": 0.12, "button": 0.04,
           "card": 0.02, "phone": 0.08, "crumbs": 0.03}
# how often each kind comes up: chips and cups are what fooled the reader
WEIGHTS = {"chip": 0.2, "coin": 0.1, "cup": 0.14, "hand": 0.1, "bottle_cap": 0.08, "button": 0.1,
           "card": 0.1, "phone": 0.06, "crumbs": 0.08}
# flat things first, so a chip may lie on a card and a hand reach over both
LAYERS = {"card": 0, "phone": 0, "crumbs": 1, "coin": 2, "button": 2, "bottle_cap": 2, "chip": 3, "cup": 4, "hand": 5}
SMALL_FIRST = ("crumbs", "button", "coin", "bottle_cap", "chip", "card", "phone", "cup", "hand")
MOST = {"hand": 2, "cup": 2, "phone": 1}  # at most this many in one scene
EDGE_KINDS = {"hand": 1.0, "cup": 0.5, "phone": 0.3}  # share that enters from the frame's edge


def _fx(v: float) -> int:
    return int(round(v * 16))  # fixed point for shift=4: sub-pixel anti-aliased shapes


def _disc(img, c, r, col) -> None:
    cv2.circle(img, (_fx(c[0]), _fx(c[1])), max(_fx(r), 1), col, -1, cv2.LINE_AA, shift=4)


def _ring(img, c, r, col, thickness: int = 1) -> None:
    cv2.circle(img, (_fx(c[0]), _fx(c[1])), max(_fx(r), 1), col, max(int(thickness), 1), cv2.LINE_AA, shift=4)


def _ellipse(img, c, axes, col, angle: float = 0.0, thickness: int = -1, arc=(0, 360)) -> None:
    cv2.ellipse(img, (_fx(c[0]), _fx(c[1])), (_fx(axes[0]), _fx(axes[1])), angle, arc[0], arc[1], col, thickness,
                cv2.LINE_AA, shift=4)


def _poly(img, pts, col) -> None:
    cv2.fillPoly(img, [np.round(np.asarray(pts) * 16).astype(np.int32)], col, cv2.LINE_AA, shift=4)


def jitter(rng, c, amount=15):
    """A colour moved up to `amount` at random in each channel (no two things quite alike)."""
    return tuple(int(np.clip(v + rng.integers(-amount, amount + 1), 0, 255)) for v in c)


def pick(rng, options):
    """One of `options`, drawn from `rng`."""
    return options[int(rng.integers(len(options)))]


def _canvas(w: float, h: float, fill) -> tuple[np.ndarray, np.ndarray]:
    """A colour canvas filled with the object's colour (so anti-aliased edges take no black
    fringe from outside) and an empty alpha."""
    img = np.empty((int(np.ceil(h)), int(np.ceil(w)), 3), np.uint8)
    img[:] = fill
    return img, np.zeros(img.shape[:2], np.uint8)


def _disc_canvas(r: float, fill) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A canvas for a round thing of radius `r` with a little room around it, and its centre."""
    size = 2 * r + 4
    img, alpha = _canvas(size, size, fill)
    return img, alpha, np.array([size / 2, size / 2])


def _round_shade(mask: np.ndarray, radius: float, lv, k: float = 0.25) -> np.ndarray:
    """Brightness of a rounded body from its outline: edges fall off and turn toward or away
    from the light (`lv`: the way the light travels, so shadows fall along it)."""
    dist = cv2.distanceTransform((mask > 127).astype(np.uint8), cv2.DIST_L2, 5)
    t = np.clip(dist / max(radius, 1.0), 0, 1)
    gy, gx = np.gradient(cv2.GaussianBlur(dist, (0, 0), 1.0))
    norm = np.sqrt(gx * gx + gy * gy) + 1e-6
    facing = (gx * lv[0] + gy * lv[1]) / norm  # pointing inward along the light: the edge facing the lamp
    return (0.72 + 0.28 * np.sqrt(t * (2 - t)) + k * (1 - t) * facing).astype(np.float32)


def _lit(shape, c, r, lv, k: float) -> np.ndarray:
    """A flat gradient across a disc: the side toward the lamp a little brighter."""
    yy, xx = np.mgrid[0:shape[0], 0:shape[1]].astype(np.float32)
    return (1 - k * ((xx - c[0]) * lv[0] + (yy - c[1]) * lv[1]) / r).astype(np.float32)


def _out(img, alpha, shade=None):
    f = img.astype(np.float32)
    if shade is not None:
        f *= shade[..., None]
    return np.clip(f, 0, 255), alpha.astype(np.float32) / 255


def _draw_chip(rng, s, lv):
    """A poker chip: its ring of white edge spots is what read as a 2. Sometimes a small stack."""
    r = s * rng.uniform(1.2, 1.9) / 2
    n = 1 if rng.random() < 0.6 else int(rng.integers(2, 4))
    step = rng.normal(0, 0.07 * r, (n, 2))
    size = 2 * r + 2 * np.abs(step).sum(0).max() + 6
    body = jitter(rng, pick(rng, CHIP_COLOURS))
    spot = (238, 238, 238) if sum(body) < 500 else pick(rng, ((40, 40, 190), (160, 70, 25), BLACK))
    img, alpha = _canvas(size, size, body)
    c = np.array([size / 2, size / 2]) - step[1:].sum(0) / 2
    spots, a0 = int(rng.integers(6, 9)), rng.uniform(0, np.pi)
    half = r * rng.uniform(0.13, 0.2)
    for i in range(n):
        top = i == n - 1
        _disc(alpha, c, r, 255)
        _disc(img, c, r, body if top else tuple(int(v * 0.6) for v in body))
        for k in range(spots):
            a = a0 + 2 * np.pi * k / spots
            u, t = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
            r_in = r * (0.72 if top else 0.9)
            _poly(img, [c + u * r_in - t * half, c + u * r * 0.99 - t * half, c + u * r * 0.99 + t * half,
                        c + u * r_in + t * half], spot if top else tuple(int(v * 0.6) for v in spot))
        if not top:
            _ring(img, c, r, (15, 15, 15))
            c = c + step[i + 1]
    inner = r * rng.uniform(0.55, 0.66)
    if rng.random() < 0.5:  # a paper inlay in the middle
        _disc(img, c, inner, jitter(rng, (215, 225, 230)))
    _ring(img, c, inner, spot, r * 0.05)
    _ring(img, c, r - 0.5, tuple(int(v * 0.5) for v in body))
    return _out(img, alpha, _lit(alpha.shape, c, r, lv, 0.12))


def _draw_coin(rng, s, lv):
    """A coin: metal with a bright spot, a raised rim and faint embossing; round and pip-free."""
    r = s * rng.uniform(0.6, 1.2) / 2
    metal = jitter(rng, pick(rng, METALS), 12)
    img, alpha, c = _disc_canvas(r, metal)
    _disc(alpha, c, r, 255)
    yy, xx = np.mgrid[0:alpha.shape[0], 0:alpha.shape[1]].astype(np.float32)
    dx, dy = xx - c[0], yy - c[1]
    hx, hy = -np.array(lv) * r * 0.35
    shade = 0.65 + 0.55 * np.exp(-((dx - hx) ** 2 + (dy - hy) ** 2) / (2 * (0.6 * r) ** 2))
    relief = np.zeros(alpha.shape, np.uint8)
    if rng.random() < 0.6:  # a number or a head in low relief
        cv2.putText(relief, str(pick(rng, (1, 2, 5, 10, 20, 50))), (int(c[0] - r * 0.45), int(c[1] + r * 0.3)),
                    cv2.FONT_HERSHEY_SIMPLEX, r / 30, 255, max(1, int(r / 12)), cv2.LINE_AA)
    else:
        cv2.ellipse(relief, (int(c[0]), int(c[1])), (int(r * 0.35), int(r * 0.45)), 0, 0, 360, 255, -1, cv2.LINE_AA)
    grain = cv2.GaussianBlur(rng.normal(0, 0.4, alpha.shape).astype(np.float32), (0, 0), max(r * 0.06, 0.7))
    relief = relief.astype(np.float32) / 255 + grain
    ry, rx = np.gradient(cv2.GaussianBlur(relief, (0, 0), max(r * 0.03, 0.6)))
    shade -= 0.35 * (rx * lv[0] + ry * lv[1]) * (np.hypot(dx, dy) < r * 0.82)
    rim = (np.hypot(dx, dy) > r * 0.86).astype(np.float32)
    shade += rim * (0.15 - 0.3 * (dx * lv[0] + dy * lv[1]) / r)
    return _out(img, alpha, shade.astype(np.float32))


def _draw_cup(rng, s, lv):
    """A dice cup: its mouth from above (dark inside, lit rim) or tipped on its side."""
    col = jitter(rng, pick(rng, CUP_COLOURS), 12)
    leather = rng.random() < 0.6
    d = s * rng.uniform(2.5, 4)
    if rng.random() < 0.6:
        r = d / 2
        img, alpha = _canvas(d + 4, d + 4, col)
        c = np.array([r + 2, r + 2])
        _disc(alpha, c, r, 255)
        rim_w = r * rng.uniform(0.07, 0.12)
        yy, xx = np.mgrid[0:alpha.shape[0], 0:alpha.shape[1]].astype(np.float32)
        dx, dy = xx - c[0], yy - c[1]
        rho = np.hypot(dx, dy) / r
        cosl = (dx * lv[0] + dy * lv[1]) / (rho * r + 1e-6)
        floor = rng.uniform(0.5, 0.72)
        wall = np.clip((rho - floor) / (1 - rim_w / r - floor), 0, 1)  # 0 at the floor, 1 under the rim
        inside = 0.12 + 0.35 * wall * np.clip(cosl, 0, 1) + 0.08 * wall  # the far wall catches the lamp
        lip = rho >= 1 - rim_w / r
        shade = np.where(lip, 0.85 - 0.3 * cosl, inside).astype(np.float32)
        gloss = lip * np.clip(-cosl, 0, 1) ** 3 * rng.uniform(50, 110)  # the lamp on the rim, even a black one
        img = np.clip(img + gloss[..., None], 0, 255).astype(np.uint8)
        if leather:
            _ring(img, c, r - rim_w / 2, jitter(rng, (150, 190, 215)), rim_w / 4)  # stitching
    else:
        length, base = d * rng.uniform(1.1, 1.4), d * rng.uniform(0.75, 0.9)
        img, alpha = _canvas(length + d * 0.25 + 4, d + 4, col)
        cy, x0, x1 = d / 2 + 2, d * 0.12 + 2, d * 0.12 + 2 + length
        _poly(alpha, [(x0, cy - base / 2), (x1, cy - d / 2), (x1, cy + d / 2), (x0, cy + base / 2)], 255)
        _ellipse(alpha, (x0, cy), (base * 0.12, base / 2), 255)
        _ellipse(alpha, (x1, cy), (d * 0.12, d / 2), 255)
        shade = _round_shade(alpha, d * 0.45, lv, 0.35)
        lip = d * rng.uniform(0.05, 0.08)
        ring = np.zeros_like(alpha)
        _ellipse(ring, (x1, cy), (d * 0.12, d / 2), 255)
        hole = np.zeros_like(alpha)
        _ellipse(hole, (x1, cy), (d * 0.12 - lip * 0.6, d / 2 - lip), 255)
        shade = np.where(ring > 127, 1.05, shade)
        shade = (shade * (1 - hole / 255 * 0.85)).astype(np.float32)
        if leather:
            _ellipse(img, (x1 - lip * 1.5, cy), (d * 0.12, d / 2 - lip * 0.5), jitter(rng, (150, 190, 215)),
                     thickness=max(1, int(lip / 3)), arc=(90, 270))  # stitching by the mouth
    if leather:  # grain of the leather
        shade *= 1 + cv2.GaussianBlur(rng.normal(0, 0.08, alpha.shape).astype(np.float32), (0, 0), 0.8)
    return _out(img, alpha, shade)


def _draw_hand(rng, s, lv):
    """A hand reaching in, fingers first (the wrist at the canvas bottom leaves the frame)."""
    skin = jitter(rng, pick(rng, SKINS), 10)
    pw = s * rng.uniform(3.2, 4.2)
    ph, fw, fl = pw * rng.uniform(1.0, 1.15), pw * rng.uniform(0.22, 0.26), pw * rng.uniform(0.85, 1.05)
    w, h = pw * 1.9, fl + ph * 1.6
    img, alpha = _canvas(w, h, skin)
    shade = np.ones(alpha.shape, np.float32)
    palm = np.array([w / 2, fl + ph * 0.45])
    parts = []  # (mask, rounding radius), back to front
    m = np.zeros_like(alpha)
    _ellipse(m, palm, (pw / 2, ph / 2), 255)
    x, y = palm
    _poly(m, [(x - pw * 0.42, y), (x + pw * 0.42, y), (x + pw * 0.38, h), (x - pw * 0.38, h)], 255)  # the wrist
    parts.append((m, pw * 0.3))
    fingers = int(rng.integers(3, 5))
    spread = rng.uniform(0.0, 0.1)
    tips = []
    if rng.random() < 0.6:  # the thumb, to one side
        side = pick(rng, (-1, 1))
        a = np.pi / 2 + side * rng.uniform(0.7, 1.1)
        b = palm + np.array([side * pw * 0.38, ph * 0.1])
        tips.append((b, b + np.array([np.cos(a), -np.sin(a)]) * fl * 0.7, fw * 1.1))
    for i in range(fingers):
        k = i - (fingers - 1) / 2
        a = np.pi / 2 - k * spread + rng.normal(0, 0.04)
        b = palm + np.array([k * pw * 0.24, -ph * 0.38])
        tips.append((b, b + np.array([np.cos(a), -np.sin(a)]) * fl * (1 - 0.12 * abs(k)) * rng.uniform(0.93, 1.0), fw))
    for b, e, wid in tips:
        m = np.zeros_like(alpha)
        cv2.line(m, (_fx(b[0]), _fx(b[1])), (_fx(e[0]), _fx(e[1])), 255, max(1, int(wid)), cv2.LINE_AA, shift=4)
        _disc(m, e, wid / 2, 255)
        parts.append((m, wid / 2))
    for m, rad in parts:
        a = m.astype(np.float32) / 255
        shade = shade * (1 - a) + _round_shade(m, rad, lv, 0.2) * a
        alpha = np.maximum(alpha, m)
    nail = tuple(int(v * 0.7 + t * 0.3) for v, t in zip(skin, (205, 205, 240)))
    for b, e, wid in tips:
        u = (e - b) / np.linalg.norm(e - b)
        nc = e - u * wid * 0.42
        ang = np.degrees(np.arctan2(u[1], u[0]))
        _ellipse(img, nc, (wid * 0.36, wid * 0.3), nail, ang)
        kc = e - u * (np.linalg.norm(e - b) * 0.5)
        _ellipse(img, kc, (wid * 0.08, wid * 0.25), tuple(int(v * 0.85) for v in skin), ang)  # knuckle crease
    alpha = cv2.GaussianBlur(alpha, (0, 0), 0.7)
    return _out(img, alpha, shade * _lit(alpha.shape, (w / 2, h / 2), h / 2, lv, 0.06))


def _draw_bottle_cap(rng, s, lv):
    """A crown cap: a printed disc with a crimped, zig-zag skirt."""
    r = s * rng.uniform(0.8, 1.1) / 2
    col = jitter(rng, pick(rng, CAP_COLOURS))
    img, alpha, c = _disc_canvas(r, col)
    teeth = int(rng.integers(18, 25))
    a = np.linspace(0, 2 * np.pi, 2 * teeth, endpoint=False) + rng.uniform(0, np.pi)
    rad = np.where(np.arange(2 * teeth) % 2 == 0, r, r * 0.9)
    _poly(alpha, c + np.stack([np.cos(a) * rad, np.sin(a) * rad], 1), 255)
    print_col = pick(rng, ((240, 240, 240), RED, BLACK, (40, 170, 210)))
    _ring(img, c, r * 0.55, print_col, r * 0.08)
    if rng.random() < 0.5:
        brand = "".join(chr(65 + int(v)) for v in rng.integers(0, 26, 2))
        cv2.putText(img, brand, (int(c[0] - r * 0.4), int(c[1] + r * 0.18)), cv2.FONT_HERSHEY_SIMPLEX, r / 45,
                    print_col, max(1, int(r / 15)), cv2.LINE_AA)
    yy, xx = np.mgrid[0:alpha.shape[0], 0:alpha.shape[1]].astype(np.float32)
    theta = np.arctan2(yy - c[1], xx - c[0])
    skirt = np.hypot(xx - c[0], yy - c[1]) > r * 0.78
    shade = _lit(alpha.shape, c, r, lv, 0.15) + skirt * (0.12 * np.cos(theta * teeth) - 0.12)
    return _out(img, alpha, shade.astype(np.float32))


def _draw_button(rng, s, lv):
    """A sewing button: two or four holes the table shows through, like pips. A hard negative."""
    r = s * rng.uniform(0.4, 0.7) / 2
    col = jitter(rng, pick(rng, BUTTON_COLOURS))
    img, alpha, c = _disc_canvas(r, col)
    _disc(alpha, c, r, 255)
    holes, gap, hr = pick(rng, (2, 4)), r * rng.uniform(0.22, 0.32), r * rng.uniform(0.1, 0.15)
    a0 = rng.uniform(0, np.pi)
    for k in range(holes):
        a = a0 + 2 * np.pi * k / holes
        _disc(alpha, c + np.array([np.cos(a), np.sin(a)]) * gap, hr, 0)
    yy, xx = np.mgrid[0:alpha.shape[0], 0:alpha.shape[1]].astype(np.float32)
    dx, dy = xx - c[0], yy - c[1]
    rim = np.hypot(dx, dy) > r * 0.75
    shade = 0.9 + rim * (0.12 - 0.25 * (dx * lv[0] + dy * lv[1]) / r) + ~rim * 0.1 * (dx * lv[0] + dy * lv[1]) / r
    return _out(img, alpha, shade.astype(np.float32))


def _suit(img, suit: str, c, size: float, col) -> None:
    """A card suit symbol of about `size` pixels, centred at c."""
    c, u = np.asarray(c, float), size / 2
    p = lambda *xy: c + np.array(xy) * u  # noqa: E731
    if suit == "diamond":
        _poly(img, [p(0, -1), p(0.7, 0), p(0, 1), p(-0.7, 0)], col)
    elif suit == "heart":
        for x in (-0.45, 0.45):
            _disc(img, p(x, -0.3), u * 0.5, col)
        _poly(img, [p(-0.93, -0.1), p(0.93, -0.1), p(0, 0.95)], col)
    elif suit == "spade":
        for x in (-0.45, 0.45):
            _disc(img, p(x, 0.2), u * 0.5, col)
        _poly(img, [p(-0.93, 0.0), p(0.93, 0.0), p(0, -0.95)], col)
        _poly(img, [p(0, 0.3), p(-0.3, 0.95), p(0.3, 0.95)], col)
    else:
        for xy in ((0, -0.45), (-0.47, 0.15), (0.47, 0.15)):
            _disc(img, p(*xy), u * 0.42, col)
        _poly(img, [p(0, 0), p(-0.3, 0.95), p(0.3, 0.95)], col)


def _draw_card(rng, s, lv):
    """A playing card: white with dark or red symbols, a hard negative. Sometimes face down."""
    w = s * rng.uniform(2.3, 2.7)
    h = w * 1.4
    paper = jitter(rng, (238, 242, 244), 8)
    img, alpha = _canvas(w + 2, h + 2, paper)
    rr = w * 0.08
    cv2.rectangle(alpha, (int(rr) + 1, 1), (int(w - rr), int(h)), 255, -1)
    cv2.rectangle(alpha, (1, int(rr) + 1), (int(w), int(h - rr)), 255, -1)
    for cx, cy in ((rr + 1, rr + 1), (w - rr, rr + 1), (rr + 1, h - rr), (w - rr, h - rr)):
        _disc(alpha, (cx, cy), rr, 255)
    if rng.random() < 0.25:  # the back: a coloured pattern inside a white border
        back = pick(rng, ((150, 60, 30), (40, 40, 170)))
        m = int(w * 0.07)
        cv2.rectangle(img, (m, m), (int(w) - m, int(h) - m), back, -1)
        for k in range(-int(h), int(w + h), max(3, int(w / 10))):
            cv2.line(img, (k, m), (k + int(h), m + int(h)), paper, 1, cv2.LINE_AA)
            cv2.line(img, (k, int(h) - m), (k + int(h), int(h) - m - int(h)), paper, 1, cv2.LINE_AA)
        border = np.ones(alpha.shape, bool)
        border[m:int(h) - m, m:int(w) - m] = False
        img[border] = paper
    else:
        suit = pick(rng, ("heart", "diamond", "spade", "club"))
        col = RED if suit in ("heart", "diamond") else BLACK
        n = int(rng.integers(1, 4))
        big = w * (0.42 if n == 1 else 0.26)
        for k in range(n):
            _suit(img, suit, (w / 2 + 1, h / 2 + 1 + (k - (n - 1) / 2) * h * 0.28), big, col)
        corner = np.full_like(img, 255)
        rank = "A" if n == 1 else str(n)
        cv2.putText(corner, rank, (int(w * 0.05), int(w * 0.2)), cv2.FONT_HERSHEY_SIMPLEX, w / 130, col,
                    max(1, int(w / 60)), cv2.LINE_AA)
        _suit(corner, suit, (w * 0.12, w * 0.3), w * 0.1, col)
        corner = np.minimum(corner, corner[::-1, ::-1])
        img = np.minimum(img, corner)
    return _out(img, alpha, _lit(alpha.shape, (w / 2, h / 2), h / 2, lv, 0.05))


def _draw_phone(rng, s, lv):
    """A phone lying on the table: a dark rounded slab with a glossy screen."""
    w = s * rng.uniform(2.8, 3.2)
    h = w * rng.uniform(1.9, 2.1)
    body = jitter(rng, pick(rng, PHONE_COLOURS), 10)
    img, alpha = _canvas(w + 2, h + 2, body)
    screen = np.zeros_like(alpha)
    for m, dst in ((0, alpha), (w * 0.05, screen)):
        r = w * 0.14 - m * 0.8
        x0, y0, x1, y1 = 1 + m, 1 + m, w - m, h - m
        cv2.rectangle(dst, (int(x0 + r), int(y0)), (int(x1 - r), int(y1)), 255, -1)
        cv2.rectangle(dst, (int(x0), int(y0 + r)), (int(x1), int(y1 - r)), 255, -1)
        for cx, cy in ((x0 + r, y0 + r), (x1 - r, y0 + r), (x0 + r, y1 - r), (x1 - r, y1 - r)):
            _disc(dst, (cx, cy), r, 255)
    screen = screen > 127
    img[screen] = (14, 14, 16)
    _disc(img, (w / 2 + 1, w * 0.1 + 1), w * 0.025, (5, 5, 5))
    yy, xx = np.mgrid[0:alpha.shape[0], 0:alpha.shape[1]].astype(np.float32)
    a = rng.uniform(0, np.pi)
    band = np.clip((xx * np.cos(a) + yy * np.sin(a) - rng.uniform(0.3, 0.7) * (w + h) / 2) / (w * 0.1), 0, 1)
    shine = screen * (band * rng.uniform(25, 60)).astype(np.float32)
    f = np.clip(img.astype(np.float32) + shine[..., None], 0, 255).astype(np.uint8)
    return _out(f, alpha, _round_shade(alpha, w * 0.04, lv, 0.3))


def _draw_crumbs(rng, s, lv):
    """A few crumbs or bits of snack: small irregular blobs."""
    spread = s * rng.uniform(0.6, 1.2)
    size = 2 * spread + s * 0.5
    col = pick(rng, CRUMB_COLOURS)
    img, alpha = _canvas(size, size, col)
    for _ in range(int(rng.integers(3, 9))):
        c = size / 2 + rng.normal(0, spread / 2.5, 2).clip(-spread, spread)
        r = s * rng.uniform(0.05, 0.15)
        k = int(rng.integers(5, 9))
        a = np.sort(rng.uniform(0, 2 * np.pi, k))
        rad = r * rng.uniform(0.6, 1.3, k)
        pts = c + np.stack([np.cos(a) * rad, np.sin(a) * rad], 1)
        _poly(alpha, pts, 255)
        _poly(img, pts, jitter(rng, col, 20))
    return _out(img, alpha, _round_shade(alpha, s * 0.05, lv, 0.3))


DRAWERS = {"chip": _draw_chip, "coin": _draw_coin, "cup": _draw_cup, "hand": _draw_hand,
           "bottle_cap": _draw_bottle_cap, "button": _draw_button, "card": _draw_card,
           "phone": _draw_phone, "crumbs": _draw_crumbs}
OBJECT_KINDS = tuple(DRAWERS)


def _turn(rgb: np.ndarray, alpha: np.ndarray, deg: float):
    """Rotate premultiplied colour and alpha onto a canvas big enough for the turned object."""
    h, w = alpha.shape
    M = cv2.getRotationMatrix2D((w / 2, h / 2), deg, 1.0)
    c, s = abs(M[0, 0]), abs(M[0, 1])
    nw, nh = int(h * s + w * c) + 2, int(h * c + w * s) + 2
    M[0, 2] += nw / 2 - w / 2
    M[1, 2] += nh / 2 - h / 2
    pm = cv2.warpAffine(rgb * alpha[..., None], M, (nw, nh), flags=cv2.INTER_LINEAR)
    return pm, cv2.warpAffine(alpha, M, (nw, nh), flags=cv2.INTER_LINEAR)


def _clip_box(x: int, y: int, w: int, h: int, W: int, H: int):
    """Destination and source slices of a w x h patch put at (x, y) on a W x H image."""
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, W), min(y + h, H)
    if x1 <= x0 or y1 <= y0:
        return None
    return (slice(y0, y1), slice(x0, x1)), (slice(y0 - y, y1 - y), slice(x0 - x, x1 - x))


def _paste(img, pm, alpha, x, y, lv, height, s, strength) -> None:
    """Shadow, then the object itself, onto the table image (float32, in place)."""
    H, W = img.shape[:2]
    off = np.array(lv) * s * height
    sigma = s * (0.06 + 0.3 * height) + 0.8
    pad = int(np.abs(off).max() + 3 * sigma) + 2
    sh = np.zeros((alpha.shape[0] + 2 * pad, alpha.shape[1] + 2 * pad), np.float32)
    ox, oy = int(round(off[0])), int(round(off[1]))
    sh[pad + oy:pad + oy + alpha.shape[0], pad + ox:pad + ox + alpha.shape[1]] = alpha
    sh = cv2.GaussianBlur(sh, (0, 0), sigma)
    cut = _clip_box(x - pad, y - pad, sh.shape[1], sh.shape[0], W, H)
    if cut:
        img[cut[0]] *= (1 - strength * sh[cut[1]])[..., None]
    cut = _clip_box(x, y, alpha.shape[1], alpha.shape[0], W, H)
    if cut:
        a = alpha[cut[1]][..., None]
        img[cut[0]] = img[cut[0]] * (1 - a) + pm[cut[1]]


def _inside(poly: np.ndarray, w: int, h: int) -> np.ndarray | None:
    """The part of a convex polygon inside the frame."""
    frame = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)
    area, part = cv2.intersectConvexConvex(poly.astype(np.float32), frame)
    if part is None or area <= 1 or area > cv2.contourArea(poly.astype(np.float32)) + 1:  # last: degenerate
        return None
    return part.reshape(-1, 2)


def place_objects(rng: np.random.Generator, img: np.ndarray, dice: list[np.ndarray], s: float, light,
                  count: int, kinds: tuple[str, ...]) -> list[tuple[str, np.ndarray]]:
    """Draw `count` objects of `kinds` on the table image (float32, in place), none over a die's top
    face (`dice`: top-face corners); one that finds no room is left out, but never all of them.
    Returns each drawn object's kind and its footprint inside the frame (a convex polygon)."""
    p = np.array([WEIGHTS[k] for k in kinds])
    chosen = sorted((kinds[int(i)] for i in rng.choice(len(kinds), count, p=p / p.sum())), key=LAYERS.get)
    lv = np.array([np.cos(light), np.sin(light)])
    placed: list[tuple[str, np.ndarray]] = []
    for kind in chosen:
        if sum(k == kind for k, _ in placed) < MOST.get(kind, count):
            placed += _place_one(rng, kind, img, dice, s, lv, placed, 40)
    # a scene that was to show something shows something: in a crowded one, small things fit
    for kind in [k for k in SMALL_FIRST if k in kinds and count and not placed] * 3:
        placed += _place_one(rng, kind, img, dice, s, lv, placed, 100)
        if placed:
            break
    return placed


def _place_one(rng, kind: str, img: np.ndarray, dice, s: float, lv, placed, tries: int) -> list:
    """Draw one object where it overlaps no die's top and little of the other objects: [] if it
    found no room in `tries` positions, else [(kind, its footprint inside the frame)]."""
    h, w = img.shape[:2]
    edge = rng.random() < EDGE_KINDS.get(kind, 0.0)
    side = int(rng.integers(4))  # the frame edge it comes in from: bottom, right, top, left
    deg = side * 90 + rng.normal(0, 15) if edge else rng.uniform(0, 360)
    t = np.radians(deg)
    A = np.array([[np.cos(t), np.sin(t)], [-np.sin(t), np.cos(t)]])  # canvas -> scene directions
    rgb, alpha = DRAWERS[kind](rng, s, A.T @ lv)
    pm, alpha = _turn(rgb, alpha, deg)
    pts = cv2.findNonZero((alpha > 0.1).astype(np.uint8))
    if pts is None:
        return []
    hull = cv2.convexHull(pts).reshape(-1, 2).astype(np.float32)
    ah, aw = alpha.shape
    for _ in range(tries):
        if edge:  # centre near the edge, the canvas's bottom (a wrist, a cup's far side) outside
            out = np.array([[0, 1], [1, 0], [0, -1], [-1, 0]][side], float)
            along = rng.uniform(0.1, 0.9) * np.array([w, h])
            c = np.where(out != 0, (out > 0) * np.array([w, h]), along) - out * rng.uniform(-0.05, 0.3) * max(ah, aw)
        elif dice and rng.random() < 0.4:  # right beside a die: the hard case
            q = dice[int(rng.integers(len(dice)))]
            a = rng.uniform(0, 2 * np.pi)
            c = q.mean(0) + np.array([np.cos(a), np.sin(a)]) * (s * 0.6 + max(ah, aw) / 2 * rng.uniform(0.7, 1.1))
        else:
            c = rng.uniform([0.05 * w, 0.05 * h], [0.95 * w, 0.95 * h])
        x, y = int(round(c[0] - aw / 2)), int(round(c[1] - ah / 2))
        poly = hull + np.float32([x, y])
        part = _inside(poly, w, h)
        if part is None or cv2.contourArea(part) < (0.25 if edge else 0.6) * cv2.contourArea(poly):
            continue
        centre = (part.min(0) + part.max(0)) / 2  # nor its box's centre in a die's box: no die-like box
        if any(cv2.intersectConvexConvex(poly, q.astype(np.float32))[0] > 0.5 or
               np.all(np.abs(centre - (q.min(0) + q.max(0)) / 2) < (q.max(0) - q.min(0)) / 2 + 0.15 * s)
               for q in dice):
            continue
        if any(cv2.intersectConvexConvex(part, o)[0] > 0.1 * min(cv2.contourArea(part), cv2.contourArea(o))
               for _, o in placed):
            continue
        _paste(img, pm, alpha, x, y, lv, HEIGHTS[kind], s, rng.uniform(0.3, 0.5))
        return [(kind, part)]
    return []
