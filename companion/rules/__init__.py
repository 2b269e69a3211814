"""The pure rules core: bids, rules presets, the game state machine and its events.

No I/O and no words: calls are read in `companion.calls` and everything said is worded in
`companion.voice`, from the events and the errors' fields.
"""

from companion.rules.bids import ACE, FACES, Bid, bid_key, smallest_count_above
from companion.rules.errors import (
    BadCount, BadSetup, BidRefusal, CallNotAllowed, ChallengeRefusal, CountRefusal, IllegalBid,
    NothingToUndo, OutOfTurn, PhaseRefusal, RulesError, RulesFileError, UnknownPlayer,
    UnknownPreset, WrongPhase,
)
from companion.rules.events import Event, EventFormatError
from companion.rules.game import (
    CALZA, COUNT, DUDO, Action, BidAction, ChallengeAction, CountAction, Game, Phase, count_matching,
    dice_left_standing, undone_event,
)
from companion.rules.presets import (
    DEFAULT_PRESET, PRESETS, CalzaCaller, CalzaStarter, DudoCaller, DudoLoss, FaceChange, Rules,
    get_preset, house_rules,
)

__all__ = [name for name in dir() if not name.startswith("_")]
