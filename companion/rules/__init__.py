"""The pure rules core: bids, rules presets, the game state machine and its events. No I/O."""

from companion.rules.bids import ACE, FACES, Bid, bid_key, number_words, smallest_count_above
from companion.rules.errors import (
    BadCount, BadSetup, CallNotAllowed, IllegalBid, NothingToUndo, OutOfTurn, RulesError,
    RulesFileError, UnknownPlayer, UnknownPreset, WrongPhase,
)
from companion.rules.events import Event, EventFormatError
from companion.rules.game import (
    CALZA, DUDO, Action, BidAction, ChallengeAction, CountAction, Game, Phase, count_matching,
)
from companion.rules.presets import (
    DEFAULT_PRESET, PRESETS, CalzaCaller, CalzaStarter, DudoCaller, DudoLoss, FaceChange, Rules,
    get_preset, load_house_rules,
)

__all__ = [name for name in dir() if not name.startswith("_")]
