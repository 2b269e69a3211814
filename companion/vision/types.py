"""Plain result types shared by the reader, the reveal and the commands."""
from __future__ import annotations

from dataclasses import dataclass, field

FACES = (1, 2, 3, 4, 5, 6)

# The least confidence, over every die, at which a reading settles a challenge; below it the
# players are asked (`companion bench vision` reports how often a wrong count still gets through).
# Chosen never on the held-out photos. With the learned detector, the wider face model and the
# eight-view check (reader.VIEWS_AGREEING), 2026-11-24: on 600 development scenes (7000000+,
# 9000000+) no settled reveal is wrong at any line from 0.9 (590 settled at 0.9 and 0.97, 589 at
# 0.99); on the 160 training photos, which it learned from, 1 of 153 wrong at 0.9, 0 of 144 at
# 0.97, 0 of 138 at 0.99. Trained without a fifth of those photos (and before the check), the
# model settled 2 of 26 of them wrongly at 0.97 and 1 of 22 even at 0.999: its sure mistakes are
# sure at any line, which is what the eight-view check is for. It stays at 0.97.
MIN_CONFIDENCE = 0.97


@dataclass(frozen=True)
class Die:
    face: int  # 1..6; a Paco (toucan) face is reported as 1
    box: tuple[int, int, int, int]  # x, y, w, h in image pixels
    confidence: float  # 0..1, the model's probability for this face
    paco: bool = False  # True when read as the printed toucan rather than a pip

    def to_json(self) -> dict:
        return {"face": self.face, "box": [int(v) for v in self.box], "confidence": round(float(self.confidence), 3)}


@dataclass(frozen=True)
class DiceReading:
    dice: tuple[Die, ...]
    counts: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # counts always derived from dice so the two can never disagree
        c = {f: 0 for f in FACES}
        for d in self.dice:
            c[d.face] += 1
        object.__setattr__(self, "counts", c)

    @property
    def total(self) -> int:
        return len(self.dice)

    @property
    def min_confidence(self) -> float:
        return min((d.confidence for d in self.dice), default=1.0)

    @property
    def doubtful(self) -> int:
        """Dice read less surely than a reveal needs to settle a challenge by itself."""
        return sum(1 for d in self.dice if d.confidence < MIN_CONFIDENCE)

    def count_for(self, face: int, aces_wild: bool) -> int:
        """Dice that count toward a bid on `face`: aces only count for themselves on a bid of 1s."""
        if face not in FACES:
            raise ValueError(f"face must be 1..6, not {face!r}")
        if face == 1 or not aces_wild:
            return self.counts[face]
        return self.counts[face] + self.counts[1]

    def counts_json(self) -> dict[str, int]:
        return {str(f): self.counts[f] for f in FACES}
