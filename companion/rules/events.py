"""Events: the single record of a game.

The journal stores them, resume replays them, undo pops them and announcements are rendered
from them. Each is a small frozen dataclass with a round trip to plain data (one JSON line).
Four of them are players' actions (`GameStarted`, `BidMade`, `ChallengeCalled`,
`DiceCounted`); the rest follow from those and are re-derived and checked on replay.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Sequence

from companion.rules.bids import is_whole_number as _whole
from companion.rules.errors import RulesError


class EventFormatError(RulesError):
    pass


def _dice(x: Any) -> bool:
    return isinstance(x, tuple) and all(_whole(d) for d in x)


def _names(x: Any) -> bool:
    return isinstance(x, Mapping) and all(isinstance(k, str) for k in x)


# What each field's type (as its annotation reads) takes from a journal line, after lists
# became tuples: a line of another type is damage, said as such, not a game taken on trust.
_FITS: dict[str, tuple[str, Any]] = {
    "str": ("text", lambda x: isinstance(x, str)),
    "str | None": ("text or null", lambda x: x is None or isinstance(x, str)),
    "int": ("a whole number", _whole),
    "bool": ("true or false", lambda x: isinstance(x, bool)),
    "tuple[str, ...]": ("a list of text", lambda x: isinstance(x, tuple) and all(isinstance(p, str) for p in x)),
    "tuple[int, ...]": ("a list of whole numbers", _dice),
    "tuple[int, ...] | None": ("a list of whole numbers or null", lambda x: x is None or _dice(x)),
    "Mapping[str, int]": ("names with whole numbers", lambda x: _names(x) and all(_whole(v) for v in x.values())),
    "Mapping[str, tuple[int, ...]] | None": ("names with lists of whole numbers, or null",
                                             lambda x: x is None or (_names(x) and all(map(_dice, x.values())))),
    "Mapping[str, Any]": ("a table of names", _names),
}


def json_text(value: Any) -> str:
    """A value as its journal line gave it, cut short."""
    text = json.dumps(list(value) if isinstance(value, tuple) else value, default=str)
    return text if len(text) <= 40 else text[:40] + "..."


@dataclass(frozen=True)
class Event:
    type: ClassVar[str] = ""
    # Fields added after journals were first written: a line without one holds its default,
    # and a default is not written, so older journals read (and are written) as before.
    added_later: ClassVar[frozenset[str]] = frozenset()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in self.added_later and value == f.default:
                continue
            if isinstance(value, tuple):
                value = list(value)
            if isinstance(value, Mapping):
                value = {k: list(v) if isinstance(v, tuple) else v for k, v in value.items()}
            data[f.name] = value
        return data

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> "Event":
        if not isinstance(data, Mapping) or not isinstance(data.get("type"), str):
            raise EventFormatError("an event needs a 'type'")
        cls = EVENT_TYPES.get(data["type"])
        if cls is None:
            raise EventFormatError(f"unknown event type {data['type']!r}")
        names = {f.name for f in dataclasses.fields(cls)}
        given = set(data) - {"type"}
        if not given <= names or not names - given <= cls.added_later:
            raise EventFormatError(f"event {data['type']!r} has fields {sorted(given)}, expected {sorted(names)}")
        values = {}
        for f in dataclasses.fields(cls):
            if f.name not in given:
                continue
            value = data[f.name]
            if isinstance(value, list):
                value = tuple(value)
            if isinstance(value, dict):
                value = {k: tuple(v) if isinstance(v, list) else v for k, v in value.items()}
            if not _FITS[f.type][1](value):
                raise EventFormatError(f"bad {data['type']!r} event: {f.name} must be {_FITS[f.type][0]}, "
                                       f"not {json_text(value)}")
            values[f.name] = value
        try:
            return cls(**values)
        except (TypeError, ValueError) as exc:
            raise EventFormatError(f"bad {data['type']!r} event: {exc}") from None


@dataclass(frozen=True)
class GameStarted(Event):
    type: ClassVar[str] = "game_started"
    players: tuple[str, ...]
    first: str
    rules: Mapping[str, Any]


@dataclass(frozen=True)
class RoundStarted(Event):
    type: ClassVar[str] = "round_started"
    number: int
    opener: str
    dice: Mapping[str, int]  # dice held by each player still in, in seating order
    palifico: str | None  # the palifico player, in a palifico round


@dataclass(frozen=True)
class PalificoDeclared(Event):
    type: ClassVar[str] = "palifico"
    player: str


@dataclass(frozen=True)
class BidMade(Event):
    type: ClassVar[str] = "bid"
    player: str
    count: int
    face: int
    next_player: str


@dataclass(frozen=True)
class ChallengeCalled(Event):
    """A dudo or a calza on the last bid: the cups come up."""

    type: ClassVar[str] = "challenge"
    kind: str  # "dudo" or "calza"
    player: str
    bidder: str
    count: int
    face: int
    aces_wild: bool


# Who counted the dice at a reveal: a DiceCounted's and a CountAction's `source`.
COUNTED_BY_PLAYERS = "players"
COUNTED_BY_CAMERA = "camera"


@dataclass(frozen=True)
class DiceCounted(Event):
    type: ClassVar[str] = "count"
    count: int  # dice showing the bid face (plus wild aces)
    hands: Mapping[str, tuple[int, ...]] | None = None  # each player's dice, when given
    source: str = COUNTED_BY_PLAYERS  # or COUNTED_BY_CAMERA
    correct: bool = False  # was the challenged claim right (at least / exactly the bid)?
    # The faces the camera read, when it counted: replay counts them again under the game's
    # rules, so a resumed game re-checks the camera's count as it does one made from hands.
    camera_dice: tuple[int, ...] | None = None
    added_later: ClassVar[frozenset[str]] = frozenset({"camera_dice"})

    @property
    def said_as_number(self) -> bool:
        """The players said the count as a number, not each their dice (CountAction's twin)."""
        return self.source == COUNTED_BY_PLAYERS and not self.hands


@dataclass(frozen=True)
class DieLost(Event):
    type: ClassVar[str] = "die_lost"
    player: str
    lost: int
    remaining: int


@dataclass(frozen=True)
class DieRegained(Event):
    type: ClassVar[str] = "die_regained"
    player: str
    gained: int  # 0 when already at the most dice the rules allow
    remaining: int


@dataclass(frozen=True)
class PlayerEliminated(Event):
    type: ClassVar[str] = "eliminated"
    player: str


@dataclass(frozen=True)
class GameOver(Event):
    type: ClassVar[str] = "game_over"
    winner: str


@dataclass(frozen=True)
class Undone(Event):
    """Takes back the last player's action and everything that followed from it. `hands`:
    the dice said at the reveal that stand again when a count made from them is taken back
    (the referee's record, in the same line, so a power cut cannot part them from the undo;
    journals written before it carry them as hand lines after the undo)."""

    type: ClassVar[str] = "undo"
    action: Mapping[str, Any] = field(default_factory=dict)
    hands: Mapping[str, tuple[int, ...]] | None = None
    added_later: ClassVar[frozenset[str]] = frozenset({"hands"})


@dataclass(frozen=True)
class HandShown(Event):
    """One player's dice said at a reveal before everyone's are in. The game takes the count
    only once every hand is known; this record keeps the hands said so far across a crash."""

    type: ClassVar[str] = "hand"
    player: str
    dice: tuple[int, ...] = ()


@dataclass(frozen=True)
class HandTakenBack(Event):
    """A hand said at a reveal, taken back before the count ("take it back")."""

    type: ClassVar[str] = "hand_taken_back"
    player: str


def hands_so_far(events: Sequence[Event],
                 said_before: Mapping[str, tuple[int, ...]] | None = None) -> dict[str, tuple[int, ...]]:
    """The dice said at the reveal in progress: the hands recorded since the last action,
    after the dice an undo of a count left standing. `said_before`: the dice said before
    `events`, which stand if nothing in them but hands follows (a record read on as it grows)."""
    start = len(events)
    while start and isinstance(events[start - 1], (HandShown, HandTakenBack)):
        start -= 1
    if start:
        before = events[start - 1]
        hands = dict(before.hands) if isinstance(before, Undone) and before.hands else {}
    else:
        hands = dict(said_before or {})
    for event in events[start:]:
        # In the order said, as the referee keeps them (and a count made from them is
        # written); a hand said again replaces the first, and one taken back is gone.
        hands.pop(event.player, None)
        if isinstance(event, HandShown):
            hands[event.player] = event.dice
    return hands


EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (GameStarted, RoundStarted, PalificoDeclared, BidMade, ChallengeCalled, DiceCounted,
                DieLost, DieRegained, PlayerEliminated, GameOver, Undone, HandShown, HandTakenBack)
}
ACTION_TYPES = {BidMade.type, ChallengeCalled.type, DiceCounted.type}
