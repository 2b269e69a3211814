"""Drawing a reading onto a frame: boxes, faces, confidence, what was refused, and the counts in a
banner above the frame (on it, it would hide the labels of the dice nearest the top)."""
from __future__ import annotations

import cv2
import numpy as np

from companion.vision.settings import CameraSettings
from companion.vision.types import MAYBE_A_DIE, NOT_A_DIE, DiceReading, Refused

_COLOURS = {1: (0, 0, 255), 2: (0, 160, 255), 3: (0, 220, 220), 4: (0, 200, 0), 5: (255, 140, 0), 6: (255, 0, 200)}
# What was refused as no die: grey, dashed and labelled, unlike any face's colour and solid box;
# what may be a die but was left out: dashed too, in cyan, so the players look at it
REFUSED_COLOUR = (128, 128, 128)
MAYBE_COLOUR = (255, 255, 0)
_REFUSED_STYLE = {NOT_A_DIE: (REFUSED_COLOUR, (255, 255, 255)), MAYBE_A_DIE: (MAYBE_COLOUR, (0, 0, 0))}  # box, text


def annotate(frame: np.ndarray, reading: DiceReading, note: str | None = None,
             settings: CameraSettings = CameraSettings()) -> np.ndarray:
    """A copy of `frame` with every die boxed and labelled, under a banner of the counts (the
    picture returned is taller than the frame by the banner; the frame is its bottom); a die
    `settings` would doubt at a reveal is marked "?", and what was left out of the count is
    boxed in dashes: grey for "not a die", cyan for "maybe a die"."""
    scale = max(0.4, min(frame.shape[:2]) / 900)
    thick = max(1, int(round(scale * 2)))
    text = "  ".join(f"{f}:{reading.counts[f]}" for f in range(1, 7)) + f"  total {reading.total}"
    if reading.refused:
        text += f"  {len(reading.refused)} refused"
    if note:
        text += f"  {note}"
    banner_scale, banner_thick = scale, thick
    (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, banner_scale, banner_thick)
    if tw + 12 > frame.shape[1]:  # a small picture: shrink the banner to fit rather than cut it
        banner_scale *= (frame.shape[1] - 12) / (tw + 12)
        banner_thick = 1
        (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, banner_scale, banner_thick)
    banner = th + 14
    canvas = np.zeros((banner + frame.shape[0], frame.shape[1], 3), np.uint8)
    canvas[banner:] = frame if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    out = canvas[banner:]  # a view: what is drawn on it lands on the canvas, in frame coordinates
    for r in reading.refused:
        _draw_refused(out, r, scale, thick)
    for d in reading.dice:
        x, y, w, h = d.box
        col = _COLOURS[d.face]
        cv2.rectangle(out, (x, y), (x + w, y + h), col, thick)
        label = ("P" if d.paco else str(d.face)) + ("?" if settings.doubts(d) else "")
        _label(out, label, d.box, col, (255, 255, 255), scale, thick)
    cv2.putText(canvas, text, (6, th + 6), cv2.FONT_HERSHEY_SIMPLEX, banner_scale, (255, 255, 255), banner_thick,
                cv2.LINE_AA)
    return canvas


def _draw_refused(out: np.ndarray, r: Refused, scale: float, thick: int) -> None:
    """A refused thing's box in dashes (a die's is solid and coloured), labelled with why."""
    colour, text_colour = _REFUSED_STYLE.get(r.reason, _REFUSED_STYLE[NOT_A_DIE])
    x, y, w, h = r.box
    dash = max(4, int(round(8 * scale)))
    corners = [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]
    for (x0, y0), (x1, y1) in zip(corners, corners[1:] + corners[:1]):
        n = max(1, int(np.hypot(x1 - x0, y1 - y0) // dash))
        for k in range(0, n, 2):  # every other piece of the side
            a, b = k / n, min(1.0, (k + 1) / n)
            cv2.line(out, (int(round(x0 + (x1 - x0) * a)), int(round(y0 + (y1 - y0) * a))),
                     (int(round(x0 + (x1 - x0) * b)), int(round(y0 + (y1 - y0) * b))), colour, thick)
    _label(out, r.reason, r.box, colour, text_colour, scale, thick)


def _label(out: np.ndarray, text: str, box: tuple[int, int, int, int], fill: tuple, text_colour: tuple,
           scale: float, thick: int) -> None:
    """A label on a filled strip just above the box; below it where the frame's top edge leaves
    no room above, and inside its top only where neither has room, so the whole label is
    always seen, and over what the box holds only when it must be."""
    x, y, w, h = box
    (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
    lx = max(0, min(x, out.shape[1] - tw - 4))
    strip = th + 6
    top = (y - strip if y - strip >= 0 else y + h if y + h + strip <= out.shape[0]
           else max(0, min(y, out.shape[0] - strip)))
    cv2.rectangle(out, (lx, top), (lx + tw + 4, top + th + 6), fill, -1)
    cv2.putText(out, text, (lx + 2, top + th + 2), cv2.FONT_HERSHEY_SIMPLEX, scale, text_colour, thick, cv2.LINE_AA)
