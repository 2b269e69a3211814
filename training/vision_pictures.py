"""Pictures of something else entirely: what a reader pointed away from the dice must not count.

A reader pointed at a page of text, a chart, a screen or a circuit board should see no dice. The
detector fires on letters, plotted dots and a board's small parts (their two metal pads read as
a confident 6); these pictures hold none of a reveal's things, so every die read on them is
false. The face model learns "not a die" from its near misses on them
(training.vision_faces.picture_negatives), and `companion bench vision` reads them at seeds of
their own. Drawn with OpenCV only: pages, terminals, charts, diagrams and boards, photographed
at a slant under uneven light through a cheap camera.

Long: kept apart from companion/vision/scene_objects.py, which draws the things of a real
reveal beside dice; nothing here ever holds a die.
"""
from __future__ import annotations

import cv2
import numpy as np

FONTS = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_PLAIN, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_COMPLEX,
         cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_COMPLEX_SMALL, cv2.FONT_HERSHEY_SCRIPT_SIMPLEX)
# what text is made of: letters, digits and the marks that look most like pips (o : . 8 %)
GLYPHS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789oo88::..%%@#=-+*/()[]{}<>"
KINDS = ("page", "terminal", "chart", "diagram", "board")


def _colour(rng, lo: int = 0, hi: int = 256) -> tuple[int, int, int]:
    return tuple(int(v) for v in rng.integers(lo, hi, 3))


def _word(rng) -> str:
    return "".join(rng.choice(list(GLYPHS), int(rng.integers(1, 9))))


def _text_lines(rng, img, x0: int, y0: int, x1: int, y1: int, colour, *, scale=None, font=None,
                spacing: float = 1.6) -> None:
    font = int(rng.choice(FONTS)) if font is None else font
    scale = rng.uniform(0.35, 1.4) if scale is None else scale
    thick = int(rng.integers(1, 3))
    (_, th), _ = cv2.getTextSize("Ag", font, scale, thick)
    y = y0 + th
    while y < y1:
        x = x0 + int(rng.integers(0, 3)) * th
        while x < x1:
            w = _word(rng)
            (tw, _), _ = cv2.getTextSize(w, font, scale, thick)
            if x + tw > x1:
                break
            cv2.putText(img, w, (x, y), font, scale, colour, thick, cv2.LINE_AA)
            x += tw + int(th * rng.uniform(0.4, 1.0))
        y += int(th * spacing * rng.uniform(0.9, 1.3)) + 1


def _page(rng, h: int, w: int) -> np.ndarray:
    """A printed or handwritten-looking page: paragraphs, headings, perhaps a table."""
    paper = _colour(rng, 215, 256)
    img = np.full((h, w, 3), paper, np.uint8)
    ink = _colour(rng, 0, 70)
    y = int(rng.integers(10, h // 8))
    while y < h - 20:
        block = int(rng.integers(40, max(41, h // 3)))
        if rng.random() < 0.2:  # a table of numbers
            rows, cols = int(rng.integers(2, 8)), int(rng.integers(2, 6))
            cw, rh = (w - 40) // cols, max(12, block // rows)
            for r in range(rows + 1):
                cv2.line(img, (20, y + r * rh), (20 + cols * cw, y + r * rh), ink, 1, cv2.LINE_AA)
            for c in range(cols + 1):
                cv2.line(img, (20 + c * cw, y), (20 + c * cw, y + rows * rh), ink, 1, cv2.LINE_AA)
            for r in range(rows):
                for c in range(cols):
                    cv2.putText(img, str(int(rng.integers(0, 10 ** int(rng.integers(1, 5))))),
                                (24 + c * cw, y + r * rh + int(rh * 0.75)), cv2.FONT_HERSHEY_SIMPLEX,
                                min(1.0, rh / 30), ink, 1, cv2.LINE_AA)
            y += rows * rh + 15
            continue
        head = rng.random() < 0.3
        _text_lines(rng, img, 20, y, w - 20, min(h - 10, y + block), _colour(rng, 0, 160) if head else ink,
                    scale=rng.uniform(0.9, 2.0) if head else None)
        y += block + int(rng.integers(8, 30))
    return img


def _terminal(rng, h: int, w: int) -> np.ndarray:
    """A screen: a dark or light editor or terminal with coloured monospace text and panes."""
    dark = rng.random() < 0.6
    img = np.full((h, w, 3), _colour(rng, 0, 50) if dark else _colour(rng, 220, 256), np.uint8)
    panes = int(rng.integers(1, 4))
    edges = np.sort(rng.integers(w // 5, 4 * w // 5, panes - 1)).tolist()
    xs = [0, *edges, w]
    for a, b in zip(xs[:-1], xs[1:]):
        if rng.random() < 0.3:
            cv2.rectangle(img, (a, 0), (b, int(rng.integers(20, 40))), _colour(rng, 40, 200), -1)
        y = int(rng.integers(30, 50))
        scale = rng.uniform(0.35, 0.7)
        while y < h - 5:
            colour = _colour(rng, 120, 256) if dark else _colour(rng, 0, 140)
            _text_lines(rng, img, a + 6, y - 14, b - 6, y, colour, scale=scale, font=cv2.FONT_HERSHEY_PLAIN
                        if rng.random() < 0.5 else cv2.FONT_HERSHEY_SIMPLEX)
            y += int(22 * scale / 0.5)
        cv2.line(img, (b - 1, 0), (b - 1, h), _colour(rng), 1)
    return img


def _chart(rng, h: int, w: int) -> np.ndarray:
    """A plot: axes, grid, ticks, and lines, scattered dots, bars or box plots."""
    img = np.full((h, w, 3), _colour(rng, 225, 256), np.uint8)
    x0, y0, x1, y1 = int(w * 0.1), int(h * 0.08), int(w * 0.95), int(h * 0.88)
    ink = _colour(rng, 0, 60)
    if rng.random() < 0.5:
        for gx in np.linspace(x0, x1, int(rng.integers(4, 12))):
            cv2.line(img, (int(gx), y0), (int(gx), y1), (215, 215, 215), 1)
        for gy in np.linspace(y0, y1, int(rng.integers(4, 10))):
            cv2.line(img, (x0, int(gy)), (x1, int(gy)), (215, 215, 215), 1)
    cv2.line(img, (x0, y1), (x1, y1), ink, 2)
    cv2.line(img, (x0, y0), (x0, y1), ink, 2)
    for gx in np.linspace(x0, x1, int(rng.integers(4, 10))):
        cv2.putText(img, str(int(rng.integers(0, 100))), (int(gx) - 8, y1 + 22), cv2.FONT_HERSHEY_SIMPLEX, 0.5,
                    ink, 1, cv2.LINE_AA)
    for _ in range(int(rng.integers(1, 5))):
        colour = _colour(rng, 0, 220)
        kind = rng.choice(["line", "scatter", "bars", "box"])
        if kind == "line":
            xs = np.linspace(x0, x1, int(rng.integers(5, 60)))
            ys = np.clip(np.cumsum(rng.normal(0, (y1 - y0) / 15, len(xs))) + (y0 + y1) / 2, y0, y1)
            cv2.polylines(img, [np.stack([xs, ys], 1).astype(np.int32)], False, colour, int(rng.integers(1, 4)),
                          cv2.LINE_AA)
            if rng.random() < 0.5:
                for x, y in zip(xs, ys):
                    cv2.circle(img, (int(x), int(y)), int(rng.integers(2, 6)), colour, -1, cv2.LINE_AA)
        elif kind == "scatter":
            n = int(rng.integers(20, 300))
            cx, cy = rng.uniform(x0, x1), rng.uniform(y0, y1)
            pts = np.stack([rng.normal(cx, (x1 - x0) / 5, n), rng.normal(cy, (y1 - y0) / 5, n)], 1)
            r = int(rng.integers(2, 7))
            for x, y in pts:
                if x0 < x < x1 and y0 < y < y1:
                    cv2.circle(img, (int(x), int(y)), r, colour, -1 if rng.random() < 0.8 else 1, cv2.LINE_AA)
        elif kind == "bars":
            n = int(rng.integers(3, 15))
            bw = (x1 - x0) / n
            for i in range(n):
                top = int(rng.uniform(y0, y1))
                cv2.rectangle(img, (int(x0 + i * bw + bw * 0.15), top), (int(x0 + (i + 1) * bw - bw * 0.15), y1),
                              colour, -1)
        else:
            n = int(rng.integers(2, 8))
            bw = (x1 - x0) / n
            for i in range(n):
                cx = int(x0 + (i + 0.5) * bw)
                lo, q1, q3, hi = np.sort(rng.uniform(y0, y1, 4)).astype(int)
                cv2.line(img, (cx, lo), (cx, hi), colour, 1)
                cv2.rectangle(img, (int(cx - bw * 0.3), q1), (int(cx + bw * 0.3), q3), colour, 2)
                for y in rng.uniform(y0, y1, int(rng.integers(0, 6))):
                    cv2.circle(img, (cx, int(y)), 4, colour, 1, cv2.LINE_AA)
    return img


def _diagram(rng, h: int, w: int) -> np.ndarray:
    """Boxes and ellipses with labels, joined by lines and arrows (class diagrams, flow charts)."""
    img = np.full((h, w, 3), _colour(rng, 210, 256), np.uint8)
    ink = _colour(rng, 0, 80)
    centres = []
    for _ in range(int(rng.integers(3, 14))):
        bw, bh = int(rng.integers(60, max(61, w // 3))), int(rng.integers(30, max(31, h // 4)))
        x, y = int(rng.integers(0, max(1, w - bw))), int(rng.integers(0, max(1, h - bh)))
        fill = _colour(rng, 150, 256)
        if rng.random() < 0.7:
            cv2.rectangle(img, (x, y), (x + bw, y + bh), fill, -1)
            cv2.rectangle(img, (x, y), (x + bw, y + bh), ink, int(rng.integers(1, 3)))
            if rng.random() < 0.5:
                cv2.line(img, (x, y + bh // 3), (x + bw, y + bh // 3), ink, 1)
        else:
            cv2.ellipse(img, (x + bw // 2, y + bh // 2), (bw // 2, bh // 2), 0, 0, 360, fill, -1, cv2.LINE_AA)
            cv2.ellipse(img, (x + bw // 2, y + bh // 2), (bw // 2, bh // 2), 0, 0, 360, ink, 1, cv2.LINE_AA)
        _text_lines(rng, img, x + 4, y + 2, x + bw - 4, y + bh - 2, ink, scale=rng.uniform(0.3, 0.6))
        centres.append((x + bw // 2, y + bh // 2))
    for _ in range(len(centres)):
        a, b = rng.choice(len(centres), 2, replace=False)
        cv2.arrowedLine(img, centres[a], centres[b], ink, 1, cv2.LINE_AA, tipLength=0.03)
    return img


def _board(rng, h: int, w: int) -> np.ndarray:
    """A circuit board: small parts with two metal pads, chips with rows of pins, plated holes,
    traces and white print."""
    board = [(40, 110, 30), (35, 90, 20), (120, 60, 20), (30, 30, 30), (60, 40, 110), (150, 150, 40)]
    img = np.full((h, w, 3), board[int(rng.integers(len(board)))], np.uint8)
    img = np.clip(img.astype(np.int16) + rng.integers(-15, 16, 3), 0, 255).astype(np.uint8)
    metal = ((170, 190, 200), (120, 190, 220), (200, 200, 200))
    trace = tuple(int(min(255, v * 1.3 + 10)) for v in img[0, 0])
    for _ in range(int(rng.integers(20, 80))):
        pts = [(int(rng.integers(0, w)), int(rng.integers(0, h)))]
        for _ in range(int(rng.integers(1, 4))):
            x, y = pts[-1]
            pts.append((x + int(rng.integers(-200, 200)), y) if rng.random() < 0.5 else (x, y + int(rng.integers(-200, 200))))
        cv2.polylines(img, [np.array(pts, np.int32)], False, trace, int(rng.integers(1, 4)))
    s = rng.uniform(8, 40)  # the smallest part's length in pixels
    for _ in range(int(rng.integers(15, 120))):
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        k = rng.random()
        pad = metal[int(rng.integers(len(metal)))]
        if k < 0.45:  # a resistor or capacitor: a body between two pads
            L, W = s * rng.uniform(1, 2.2), s * rng.uniform(0.5, 1.1)
            turned = rng.random() < 0.5
            bx, by = (W, L) if turned else (L, W)
            body = ((30, 30, 30), (60, 110, 170), (170, 170, 160), (40, 80, 140))[int(rng.integers(4))]
            cv2.rectangle(img, (int(x - bx / 2), int(y - by / 2)), (int(x + bx / 2), int(y + by / 2)), body, -1)
            for sgn in (-1, 1):
                px, py = (x, y + sgn * L * 0.4) if turned else (x + sgn * L * 0.4, y)
                pw, ph = (W / 2, L * 0.12) if turned else (L * 0.12, W / 2)
                cv2.rectangle(img, (int(px - pw), int(py - ph)), (int(px + pw), int(py + ph)), pad, -1)
        elif k < 0.65:  # a chip with pins on two or four sides
            side = s * rng.uniform(2, 8)
            cv2.rectangle(img, (int(x), int(y)), (int(x + side), int(y + side)), (25, 25, 28), -1)
            n = int(rng.integers(4, 25))
            for i in range(n):
                t = side * (i + 0.5) / n
                for (px, py) in ((x + t, y - 3), (x + t, y + side + 3), (x - 3, y + t), (x + side + 3, y + t))[
                                 :2 if rng.random() < 0.5 else 4]:
                    cv2.circle(img, (int(px), int(py)), max(1, int(side / n / 3)), pad, -1)
            cv2.circle(img, (int(x + side * 0.15), int(y + side * 0.15)), max(1, int(side / 20)), (60, 60, 60), -1)
        elif k < 0.85:  # plated holes, alone or in a header row
            r = s * rng.uniform(0.2, 0.5)
            for i in range(int(rng.integers(1, 12))):
                c = (int(x + i * r * 3.2), int(y))
                cv2.circle(img, c, int(r * 1.8), pad, -1, cv2.LINE_AA)
                cv2.circle(img, c, max(1, int(r)), (20, 20, 20), -1, cv2.LINE_AA)
        else:  # white print: a part's name, a box round nothing, a dot
            _text_lines(rng, img, x, y, x + int(s * 6), y + int(s * 1.5), (235, 235, 235),
                        scale=rng.uniform(0.3, 0.6), spacing=1.0)
    return img


DRAW = {"page": _page, "terminal": _terminal, "chart": _chart, "diagram": _diagram, "board": _board}


def _photographed(rng, img: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The picture as a webcam sees it: at a slant, uneven light, a little blur, noise and JPEG."""
    h, w = img.shape[:2]
    H, W = size
    m = 0.12 * min(W, H)
    dst = np.float32([[rng.uniform(-m, m), rng.uniform(-m, m)], [W + rng.uniform(-m, m), rng.uniform(-m, m)],
                      [W + rng.uniform(-m, m), H + rng.uniform(-m, m)], [rng.uniform(-m, m), H + rng.uniform(-m, m)]])
    warp = cv2.getPerspectiveTransform(np.float32([[0, 0], [w, 0], [w, h], [0, h]]), dst)
    out = cv2.warpPerspective(img, warp, (W, H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    a = rng.uniform(0, 2 * np.pi)
    light = 1 + rng.uniform(0, 0.35) * ((np.cos(a) * xx / W + np.sin(a) * yy / H) - 0.5)
    p = out.astype(np.float32) * light[..., None] * rng.uniform(0.75, 1.1)
    p = cv2.GaussianBlur(p, (0, 0), rng.uniform(0.3, 1.4))
    p += rng.normal(0, rng.uniform(1, 5), p.shape).astype(np.float32)
    out = np.clip(p, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(45, 95))])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else out


def generate_picture(seed: int, size: tuple[int, int] = (720, 1280), kind: str | None = None) -> np.ndarray:
    """Picture `seed` (BGR, `size` as (height, width)): a page, screen, chart, diagram or board,
    drawn at a random resolution and photographed; never a die in it."""
    rng = np.random.default_rng([seed, 41])
    kind = kind or KINDS[seed % len(KINDS)]
    scale = rng.uniform(0.6, 2.0)
    h, w = int(size[0] * scale), int(size[1] * scale)
    return _photographed(rng, DRAW[kind](rng, h, w), size)
