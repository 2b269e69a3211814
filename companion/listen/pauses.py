"""Shortening the quiet inside an utterance before the engine hears it.

A player reading out their dice at a reveal pauses between them ("Ana ... five, five,
three"), but the call network learnt hands said in one breath: heard with its pauses, a hand
loses its name or its dice (the development set `python -m training.hand_pauses_dev` gives
the figures). So, where a hand is due, each stretch of quiet inside the utterance is cut to
`keep` seconds, as if the hand had been said without stopping.
"""

from __future__ import annotations

import numpy as np

from companion.listen.endpoint import FRAME, frame_db

# Quiet kept of each pause: a stop consonant's closure ("eight", "two") is shorter, so no
# word is cut inside; see HAND_PAUSE_S in sources.py for what the pause may be.
KEEP_S = 0.1
# Over the room's level, a frame this much louder is no pause (as EndpointSettings.stop_db).
QUIET_DB = 4.0


class PauseShortener:
    """Feed it an utterance's samples block by block; it gives back the same samples, less
    each quiet stretch's frames beyond the first `keep` seconds. Quiet is a 10 ms frame under
    the room's level (`floor_db`, as the endpointer measures it) plus QUIET_DB. The quiet
    before the first word is kept whole: a player's name is known by how it sounds after
    quiet (names.NameMatcher's templates)."""

    def __init__(self, floor_db: float, keep: float = KEEP_S, band: tuple[float, float] | None = None) -> None:
        self.line = floor_db + QUIET_DB
        self.band = band  # where the floor was measured in a band (EndpointSettings.band)
        self.keep_frames = round(keep * 100)
        self._pending = np.zeros(0, np.int16)
        self._quiet_frames: int | None = None  # of the quiet going on; None: no word yet

    def __call__(self, samples: np.ndarray) -> np.ndarray:
        data = np.concatenate([self._pending, np.asarray(samples, np.int16)])
        n = len(data) // FRAME
        self._pending = data[n * FRAME:]
        frames = data[:n * FRAME].reshape(n, FRAME)
        kept = np.ones(n, bool)
        for i, db in enumerate(frame_db(data[:n * FRAME], self.band)):
            if db >= self.line:
                self._quiet_frames = 0
            elif self._quiet_frames is not None:
                self._quiet_frames += 1
            kept[i] = self._quiet_frames is None or self._quiet_frames <= self.keep_frames
        return frames[kept].reshape(-1)

    def rest(self) -> np.ndarray:
        """The last part of a frame, held back until the utterance ends."""
        rest, self._pending = self._pending, np.zeros(0, np.int16)
        return rest


# A recording cut tight around its words has no room in it: its quietest tenth is then a
# quiet part of a word, and a pause is at least this far under its loudest tenth.
PAUSE_UNDER_WORDS_DB = 30.0
ROOM_FRAMES = 10  # frames of a recording outside its words that give the room's level


def shorten_pauses(samples: np.ndarray, room: np.ndarray | None = None, keep: float = KEEP_S) -> np.ndarray:
    """A whole recorded utterance with its pauses shortened. The room's level is that of
    `room` (the recording's sound outside its utterances) where it holds ROOM_FRAMES, as the
    endpointer learns it from the room before a call; else the utterance's quietest tenth,
    and no nearer than PAUSE_UNDER_WORDS_DB to its loudest tenth."""
    samples = np.asarray(samples, np.int16)
    around = frame_db(np.asarray(room, np.int16)) if room is not None else np.zeros(0)
    if len(around) >= ROOM_FRAMES:
        floor = float(np.median(around))
    else:  # (the utterance's own levels are needed only here)
        levels = frame_db(samples)
        if len(levels) == 0:
            return samples
        floor = min(float(np.percentile(levels, 10)),
                    float(np.percentile(levels, 90)) - PAUSE_UNDER_WORDS_DB - QUIET_DB)
    shortener = PauseShortener(floor, keep)
    return np.concatenate([shortener(samples), shortener.rest()])
