"""Counting the dice at a reveal: several frames must agree before the referee trusts the camera."""
from __future__ import annotations

import pathlib
import re
import statistics
import time
from typing import Callable, Protocol

import numpy as np

from companion.calls import number_words
from companion.vision.annotate import annotate
from companion.vision.errors import RevealNotInView, VisionError
from companion.vision.frames import FrameSource, picture_problem, write_image
from companion.vision.settings import CameraSettings
from companion.vision.types import DiceReading, RevealOutcome

# A look (a frame and its reading) far longer than the looks before it, and than this, was the
# process stopped (Ctrl-Z, then fg): it counts as long as a usual one. (A crowded frame takes
# about 1.5 s on a Raspberry Pi 4.)
LONGEST_LOOK_S = 3.0


class DiceReaderLike(Protocol):
    def read(self, frame: np.ndarray) -> DiceReading: ...


def _dice_word(n: int) -> str:
    return "die" if n == 1 else "dice"


def _left_out(reading: DiceReading, expected_total: int) -> str:
    """When dice are missing, what was left out of the count (a die among it would be missing
    too), to end the reason with; nothing else."""
    if not reading.refused or reading.total >= expected_total:
        return ""
    maybe = reading.maybe_dice
    sure = len(reading.refused) - maybe
    parts = []
    if sure:
        parts.append(f"{number_words(sure)} {'thing that is not a die' if sure == 1 else 'things that are not dice'}")
    if maybe:
        parts.append(f"{number_words(maybe)} {'thing' if maybe == 1 else 'things'} I cannot tell "
                     f"{'is a die' if maybe == 1 else 'are dice'}")
    return "; I left out " + " and ".join(parts)


def not_in_play(seen: int, expected_total: int, say_total: bool) -> str:
    """Why `seen` dice settle nothing: "I see six dice but fifteen are in play", or where the
    rules hide how many are in play, only which way the count is off."""
    if say_total:
        in_play = f"{number_words(expected_total)} {'is' if expected_total == 1 else 'are'} in play"
    else:
        in_play = f"{'more' if expected_total > seen else 'fewer'} are in play"
    seen_words = f"{number_words(seen)} {_dice_word(seen)}" if seen else "no dice"
    return f"I see {seen_words} but {in_play}"


def next_reveal_path(save_dir: pathlib.Path) -> pathlib.Path:
    """reveal-0001.png, reveal-0002.png, ... never overwriting an earlier reveal."""
    save_dir.mkdir(parents=True, exist_ok=True)
    nums = [int(m.group(1)) for p in save_dir.glob("reveal-*.png") if (m := re.fullmatch(r"reveal-(\d+)\.png", p.name))]
    return save_dir / f"reveal-{(max(nums) + 1 if nums else 1):04d}.png"


class CameraCounter:
    """Reads frames until `settings.frames_to_agree` consecutive ones give the same face counts
    (one read of a still photo is enough: it agrees with itself).

    From a live camera it waits for the cups: it keeps reading until the agreeing frames also
    show every die in play, or `settings.patience` seconds have passed (then it says what it
    saw). Recorded frames do not change with waiting, so they get `settings.max_frames` reads
    at most."""

    def __init__(self, frames: FrameSource, reader: DiceReaderLike, settings: CameraSettings = CameraSettings(),
                 *, clock=time.monotonic, warn: Callable[[str], None] | None = None) -> None:
        self.frames = frames
        self.reader = reader
        self.settings = settings
        self._clock = clock
        self._warn = warn  # told once when the profile does not fit the frames, once when no picture can be saved
        self._warned = False
        self._picture_warned = False

    def reveal(self, expected_total: int, save_dir: pathlib.Path | None = None,
               round_number: int | None = None, *, say_total: bool = True,
               latest_round: int | None = None) -> RevealOutcome:
        """Count the dice of this round's reveal (`round_number`: the same round revealed again
        after an undo is looked at again, not taken for the next; `latest_round`: the latest
        the table has rolled for, whose dice a live camera sees). Where the rules hide how
        many dice are in play (`say_total` False), a reason never names that number."""
        live, settings = self.frames.live, self.settings
        # A photo agrees with itself: reading it again would only repeat the answer.
        to_agree = 1 if self.frames.still else settings.frames_to_agree
        self.frames.begin_reveal(round_number, latest_round)
        looked = 0.0  # seconds spent looking, of settings.patience
        looks: list[float] = []
        turn_began = self._clock()
        run: list[tuple[np.ndarray, DiceReading]] = []
        last: tuple[np.ndarray, DiceReading] | None = None
        reads = 0
        while True:
            try:
                frame = self.frames.read()
                self._check_framing(frame)
                reading = self.reader.read(frame)
            except RevealNotInView as exc:
                return self._done(None, str(exc), last, save_dir)
            except VisionError as exc:
                return self._done(None, f"the camera failed ({exc})", last, save_dir)
            reads += 1
            last = (frame, reading)
            if run and run[-1][1].counts != reading.counts:
                run = []
            run.append((frame, reading))
            agreed = len(run) >= to_agree
            # of the agreeing frames, the one the reader was surest about
            best = max(run, key=lambda fr: fr[1].min_confidence)
            # A live camera keeps looking while what it sees would not settle the challenge
            # (a cup still down, a hand over a die); recorded frames are what they are, and
            # so is a camera giving no colour (waiting would not bring it back).
            if agreed and (not live or settings.accepts(best[1], expected_total) or best[1].colourless):
                break
            now = self._clock()
            # (the table had no time to lift its cups while the process was stopped)
            usual = max(LONGEST_LOOK_S, 3 * statistics.median(looks)) if looks else LONGEST_LOOK_S
            looks.append(min(now - turn_began, usual))
            looked += looks[-1]
            turn_began = now
            if (looked >= settings.patience) if live else (reads >= settings.max_frames):
                if agreed:
                    break
                return self._done(None, f"the frames disagree after {number_words(reads)} {'try' if reads == 1 else 'tries'}", last, save_dir)
        frame, reading = best
        if settings.accepts(reading, expected_total):
            return self._done(reading, f"I read all {number_words(reading.total)} {_dice_word(reading.total)}",
                              best, save_dir)
        # too few dice, or dice too hard to read, in a dark or blurred picture: that is what to
        # put right, and what was left out as no dice is most likely the dice themselves
        short = reading.total < expected_total or (reading.total == expected_total and settings.doubtful(reading))
        problem = picture_problem(frame, reading) if short else None
        if problem:
            seen = (not_in_play(reading.total, expected_total, say_total) if reading.total < expected_total
                    else "some dice are too hard to read")
            return self._done(None, f"{seen}; {problem}", best, save_dir)
        if settings.cluttered(reading):
            refused = len(reading.refused)
            crowd = f"{number_words(refused)} things" if refused > settings.max_refused else "too many things"
            return self._done(None, f"I see {crowd} I cannot take for dice: "
                                    f"this does not look like dice on a table", best, save_dir)
        if reading.colourless and reading.total:
            return self._done(None, "the camera's picture has no colour, and without it I cannot be sure "
                                    "of the pips", best, save_dir)
        if reading.total != expected_total:
            return self._done(None, not_in_play(reading.total, expected_total, say_total)
                                    + _left_out(reading, expected_total), best, save_dir)
        return self._done(None, "some dice are too hard to read", best, save_dir)

    def new_game(self) -> None:
        """The table plays again, its rounds numbered from one: recorded photos go on from
        the next (a live camera sees what is there)."""
        new_game = getattr(self.frames, "new_game", None)
        if new_game is not None:
            new_game()

    def _check_framing(self, frame: np.ndarray) -> None:
        profile = getattr(self.reader, "profile", None)
        if self._warn is None or self._warned or profile is None:
            return
        note = profile.framing_note(frame.shape)
        if note:
            self._warned = True
            self._warn(f"the camera: {note}")

    def _done(self, reading, reason, shot, save_dir) -> RevealOutcome:
        path = None
        if save_dir is not None and shot is not None:
            note = "OK" if reading is not None else reason
            try:
                path = next_reveal_path(pathlib.Path(save_dir))
                write_image(path, annotate(shot[0], shot[1], note, self.settings))
            except OSError as exc:  # a full disk or a bad folder loses the picture, not the count
                path = None
                if self._warn is not None and not self._picture_warned:
                    self._picture_warned = True
                    self._warn(f"the reveals' pictures cannot be saved in {save_dir} "
                               f"({exc.strerror or exc}); the camera still counts")
        return RevealOutcome(reading=reading, reason=reason, annotated_path=path)
