"""Drawing a reading onto a frame: boxes, faces, confidence, what was refused, and the counts in a
banner."""
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
    """A copy of `frame` with every die boxed and labelled, and the counts written on top; a die
    `settings` would doubt at a reveal is marked "?", and what was left out of the count is
    boxed in dashes: grey for "not a die", cyan for "maybe a die"."""
    out = frame.copy()
    scale = max(0.4, min(out.shape[:2]) / 900)
    thick = max(1, int(round(scale * 2)))
    for r in reading.refused:
        _draw_refused(out, r, scale, thick)
    for d in reading.dice:
        x, y, w, h = d.box
        col = _COLOURS[d.face]
        cv2.rectangle(out, (x, y), (x + w, y + h), col, thick)
        label = ("P" if d.paco else str(d.face)) + ("?" if settings.doubts(d) else "")
        (tw, th), _ = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
        cv2.rectangle(out, (x, max(0, y - th - 6)), (x + tw + 4, y), col, -1)
        cv2.putText(out, label, (x + 2, y - 4), cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255), thick, cv2.LINE_AA)
    text = "  ".join(f"{f}:{reading.counts[f]}" for f in range(1, 7)) + f"  total {reading.total}"
    if reading.refused:
        text += f"  {len(reading.refused)} refused"
    if note:
        text += f"  {note}"
    (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
    if tw + 12 > out.shape[1]:  # a small picture: shrink the banner to fit rather than cut it
        scale *= (out.shape[1] - 12) / (tw + 12)
        thick = 1
        (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
    cv2.rectangle(out, (0, 0), (tw + 12, th + 14), (0, 0, 0), -1)
    cv2.putText(out, text, (6, th + 6), cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255), thick, cv2.LINE_AA)
    return out


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
    (tw, th), _ = cv2.getTextSize(r.reason, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
    lx = max(0, min(x, out.shape[1] - tw - 4))  # the whole label in the picture, even at its edge
    cv2.rectangle(out, (lx, max(0, y - th - 6)), (lx + tw + 4, y), colour, -1)
    cv2.putText(out, r.reason, (lx + 2, y - 4), cv2.FONT_HERSHEY_SIMPLEX, scale, text_colour, thick, cv2.LINE_AA)
