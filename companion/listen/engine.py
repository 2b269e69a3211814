"""What every recogniser gives back, and the small interface the sources drive."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from companion.sources import Expect


@dataclass(frozen=True)
class Recognition:
    text: str  # best transcript inside the call grammar ("" when it heard no call)
    alternatives: tuple[str, ...] = ()  # other in-grammar transcripts, best first
    confidence: float = 0.0  # 0..1; below ENGINE_THRESHOLD the referee should say "say again"
    audio_seconds: float = 0.0
    decode_seconds: float = 0.0  # CPU time spent on the whole utterance
    finish_seconds: float = 0.0  # time from the last sample to the result (the latency part)
    # How likely each alternative is beside the best one (1.0: as likely), where the engine
    # can tell; empty otherwise.
    alternative_scores: tuple[float, ...] = ()
    details: dict = field(default_factory=dict, compare=False)
    # The best call is the start of a longer one the grammar allows ("twenty" of "twenty
    # four"): heard before the utterance is over, more may be coming.
    may_go_on: bool = False
    # Did the utterance hold a voice, by the voice activity model (None: not known)? Set by
    # the decode path, which has the endpointer's view of the audio; engines leave it.
    voiced: bool | None = None


class Engine(Protocol):
    name: str

    def expect(self, what: Expect, hand_sizes: frozenset[int] = frozenset()) -> None:
        """Listen only for the calls that make sense now, from the next utterance on (see
        CallSource.expect)."""

    def learn_name(self, player: str, phrase: str) -> bool:
        """Learn how `player` says their name from the next utterance, which should be
        "<player> <phrase>" (sources.NAME_PHRASES); heard so, it is given back as that call.
        False: this engine spells names from its own vocabulary and has nothing to learn."""

    def start(self) -> None:
        """Begin an utterance."""

    def feed(self, samples: np.ndarray) -> None:
        """Add int16 16 kHz samples to the current utterance (decoded as they come)."""

    def peek(self) -> Recognition | None:
        """What the utterance so far would be heard as, were it to end now, without ending
        it; None from an engine that cannot tell before the end."""

    def finish(self) -> Recognition:
        """End the utterance and return what was heard."""

    def decode(self, samples: np.ndarray) -> Recognition:
        """One whole utterance: start, feed, finish."""


# The confidence below which a result should be answered with "say again", the one above
# which it can be applied without "Did you say ...?", and the one from which a dudo, calza
# or question (one short word) is asked about or answered. The scale is the bundled call
# recogniser's calibrated probability that the call is right, fitted on voices its network
# never trained on; on those (training.confidence), 4.6% of calls are wrong and acted on from
# 0.7 and 0.6% are wrong and applied at once from 0.9.
ENGINE_THRESHOLD = 0.7
ENGINE_CONFIRM = 0.9
ENGINE_SHORT_CALLS = 0.4
# From this line a hand said at the reveal is read back rather than said again. On hands of
# one to five dice said in voices the network never heard (training.hands_dev, Kokoro), the
# confidence hardly tells a right hand from a wrong one (66% of the hands from 0.3 are right,
# 73% from 0.7), and from 0.7 only 35 of 116 right hands got through; from 0.3, 97 do, and 2
# more of 72 chatter lines said at the reveal are asked about (5 in all; 6 from 0.2).
ENGINE_HANDS = 0.3


def decode_in_chunks(engine: Engine, samples: np.ndarray, chunk: int = 1600) -> Recognition:
    """Feed a whole utterance in 0.1 s pieces, as the microphone would."""
    engine.start()
    for i in range(0, len(samples), chunk):
        engine.feed(samples[i:i + chunk])
    return engine.finish()
