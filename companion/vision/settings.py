"""CameraSettings: when a reveal trusts what the camera read, and how long it looks first."""
from __future__ import annotations

from dataclasses import dataclass

from companion.vision.types import DiceReading, Die


@dataclass(frozen=True)
class CameraSettings:
    # The least confidence, over every die, at which a reading settles a challenge; below it the
    # players are asked (`companion bench vision` reports how often a wrong count still gets
    # through). Chosen never on the held-out photos. With the eight-view check
    # (reader.VIEWS_AGREEING), no settled reveal of 600 development scenes is wrong at any line
    # from 0.9, and of the training photos 1 of 153 at 0.9 and none at 0.97. A model trained
    # without a fifth of those photos settled some of them wrongly even at 0.999: its sure
    # mistakes are sure at any line, which is what the eight-view check is for.
    min_confidence: float = 0.97
    # A live camera's consecutive frames that must read the same faces before it is believed.
    frames_to_agree: int = 3
    # Reads of recorded frames before giving up: they do not change with waiting.
    max_frames: int = 10
    # Seconds a live camera keeps looking for every die in play (the cups coming up, a hand
    # moving away) before it says what it saw.
    patience: float = 20.0
    # A frame with more things the reader turned down than this is no reveal on a table (a
    # screen, a page of text): the dice read in it are not trusted either. Real photos of dice
    # have at most 2 such things, rendered reveals with cups, chips, coins and hands at most 6;
    # screenshots of text 19 to 114, with dice read in them at full confidence.
    max_refused: int = 12

    def __post_init__(self) -> None:
        if not 1 <= self.frames_to_agree <= self.max_frames:
            raise ValueError("need 1 <= frames_to_agree <= max_frames")
        if not 0.0 <= self.min_confidence <= 1.0:
            raise ValueError(f"min_confidence is a probability, not {self.min_confidence!r}")

    def doubts(self, die: Die) -> bool:
        """Is this die read less surely than a reveal needs to settle a challenge by itself?"""
        return die.confidence < self.min_confidence

    def doubtful(self, reading: DiceReading) -> int:
        """How many of the reading's dice a reveal would doubt."""
        return sum(1 for d in reading.dice if self.doubts(d))

    def cluttered(self, reading: DiceReading) -> bool:
        """Does the frame hold too many things that are not dice to be a reveal on a table?
        (Candidates too many to read are: the left-out spots of a page are merged into a few.)"""
        return len(reading.refused) > self.max_refused or reading.unread > 0

    def accepts(self, reading: DiceReading, expected_total: int) -> bool:
        """Would a reveal trust this reading: every die in play seen, every one read surely
        enough, in a frame that looks like a table."""
        return reading.total == expected_total and not self.doubtful(reading) and not self.cluttered(reading)
