"""What the camera read: plain frozen types that the reader gives, the reveal checks and the
referee counts.

What the dice are worth to a bid (aces wild or not) is the rules' to say: the referee counts a
reading's `faces` with companion.rules.count_matching, as it counts dice said aloud.
"""
from __future__ import annotations

import pathlib
from dataclasses import dataclass

from companion.rules import FACES


@dataclass(frozen=True)
class Die:
    """One die as the camera read it."""

    face: int  # 1..6; a Paco (toucan) face is reported as 1
    box: tuple[int, int, int, int]  # x, y, w, h in image pixels
    confidence: float  # 0..1, how sure the reader is of this face
    paco: bool = False  # True when read as the printed toucan rather than a pip

    def __post_init__(self) -> None:
        if self.face not in FACES:
            raise ValueError(f"a die shows 1 to 6, not {self.face!r}")

    def to_json(self) -> dict:
        return {"face": self.face, "box": [int(v) for v in self.box], "confidence": round(float(self.confidence), 3)}


NOT_A_DIE = "not a die"  # the face model is sure it is no die (a chip, a coin, a hand)
MAYBE_A_DIE = "maybe a die"  # it cannot tell (a card's club, a button): asked, not guessed


@dataclass(frozen=True)
class Refused:
    """Something the detector took for a die and the face model turned down or could not vouch
    for: shown to the players so they see what was left out of the count, never counted."""

    box: tuple[int, int, int, int]  # x, y, w, h in image pixels
    not_die: float  # 0..1, the face model's chance that it is no die
    reason: str = NOT_A_DIE

    def to_json(self) -> dict:
        return {"box": [int(v) for v in self.box], "not_die": round(float(self.not_die), 3), "reason": self.reason}


@dataclass(frozen=True)
class DiceReading:
    """Every die the camera read in one frame, and what it saw there but did not take for a die."""

    dice: tuple[Die, ...]
    refused: tuple[Refused, ...] = ()  # never counted: faces, counts and total are the dice's
    # candidates past the most the reader reads in a frame (a page of text, a board): left out
    # among `refused` as maybe dice, and a sign the frame is no reveal
    unread: int = 0
    # read from a frame without colour (a webcam's night mode): red pips on a dark die vanish
    # there, so no die read in it is sure
    colourless: bool = False

    @property
    def faces(self) -> tuple[int, ...]:
        """The faces read, one per die: what the rules count a bid from."""
        return tuple(d.face for d in self.dice)

    @property
    def counts(self) -> dict[int, int]:
        """Dice showing each face 1 to 6, each face only for itself."""
        return {face: sum(1 for d in self.dice if d.face == face) for face in FACES}

    @property
    def total(self) -> int:
        return len(self.dice)

    @property
    def maybe_dice(self) -> int:
        """How many refused things may be dice: left out as such, not as no die."""
        return sum(r.reason == MAYBE_A_DIE for r in self.refused)

    @property
    def min_confidence(self) -> float:
        return min((d.confidence for d in self.dice), default=1.0)


@dataclass(frozen=True)
class RevealOutcome:
    """What the camera made of a reveal: a reading it trusts, or why the players must count."""

    reading: DiceReading | None  # None => the referee must ask players for the count
    reason: str  # a sentence for people, e.g. "I see fourteen dice but fifteen are in play"
    annotated_path: pathlib.Path | None = None
