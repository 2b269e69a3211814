"""The labelled dice photos (../shared/data/dice-photos): loading them, their fixed split, and
scoring a reading against labels.

Both sides of the photos need these: training learns from the training split only and checks
itself the way the benchmark scores, and `companion bench vision` reports the held-out split.
"""
from __future__ import annotations

import json
import pathlib
from dataclasses import dataclass, field

import numpy as np

from companion.vision.settings import CameraSettings
from companion.vision.types import DiceReading

PHOTOS = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "data" / "dice-photos"

# A label: face, box (x, y, w, h) and whether it is a Paco face.
Label = tuple[int, tuple, bool]


def load_labels(root: pathlib.Path) -> list[dict]:
    with open(root / "labels.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def labels_of(record: dict) -> list[Label]:
    """A photo's labelled dice (the photos have no Paco faces)."""
    return [(d["face"], tuple(d["box"]), False) for d in record["dice"]]


def real_split(records: list[dict]) -> tuple[list[dict], list[dict]]:
    """Fixed split: sorted by file name, every 5th photo is held out (40 of 200)."""
    recs = sorted(records, key=lambda r: r["file"])
    train = [r for i, r in enumerate(recs) if i % 5 != 0]
    held = [r for i, r in enumerate(recs) if i % 5 == 0]
    return train, held


def validation_split(train: list[dict], every: int) -> tuple[list[dict], list[dict]]:
    """For choosing training settings without touching the held-out photos: every `every`-th
    training photo is set aside (0 = none)."""
    if every <= 0:
        return train, []
    return [r for i, r in enumerate(train) if i % every != 3], [r for i, r in enumerate(train) if i % every == 3]


@dataclass
class Tally:
    """Readings scored against their labels, image by image."""

    name: str
    images: int = 0
    gt: int = 0
    found: int = 0
    right: int = 0
    fp: int = 0
    exact: int = 0
    paco_gt: int = 0
    paco_right: int = 0
    accepted: int = 0  # readings a reveal would settle the challenge with
    wrong_accepted: int = 0  # ... whose counts were wrong
    ms: list[float] = field(default_factory=list)  # per frame

    @property
    def ms_median(self) -> float:
        return float(np.median(self.ms)) if self.ms else float("nan")


def match(pred, gt: list[Label]) -> list[tuple[int, int]]:
    """One-to-one pairs (pred index, gt index): each centre inside the other's box, nearest first."""
    pairs = []
    for i, p in enumerate(pred):
        px, py = p.box[0] + p.box[2] / 2, p.box[1] + p.box[3] / 2
        for j, (_, (x, y, w, h), _) in enumerate(gt):
            gx, gy = x + w / 2, y + h / 2
            m = 0.1 * max(w, h)
            if x - m <= px <= x + w + m and y - m <= py <= y + h + m and \
               p.box[0] <= gx <= p.box[0] + p.box[2] and p.box[1] <= gy <= p.box[1] + p.box[3]:
                pairs.append((float(np.hypot(px - gx, py - gy)), i, j))
    pairs.sort()
    used_p, used_g, out = set(), set(), []
    for _, i, j in pairs:
        if i not in used_p and j not in used_g:
            used_p.add(i)
            used_g.add(j)
            out.append((i, j))
    return out


def score(t: Tally, reading: DiceReading, gt: list[Label], settings: CameraSettings = CameraSettings()) -> int:
    """Add one image to the tally; returns its number of errors (for the worst-case pictures)."""
    pairs = match(reading.dice, gt)
    t.images += 1
    t.gt += len(gt)
    t.found += len(pairs)
    right = sum(1 for i, j in pairs if reading.dice[i].face == gt[j][0])
    t.right += right
    t.fp += len(reading.dice) - len(pairs)
    for i, j in pairs:
        if gt[j][2]:
            t.paco_right += reading.dice[i].face == 1
    t.paco_gt += sum(1 for g in gt if g[2])
    want = {f: 0 for f in range(1, 7)}
    for g in gt:
        want[g[0]] += 1
    t.exact += reading.counts == want
    if settings.accepts(reading, len(gt)):
        t.accepted += 1
        t.wrong_accepted += reading.counts != want
    return (len(gt) - right) + (len(reading.dice) - len(pairs))
