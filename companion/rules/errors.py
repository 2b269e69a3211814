"""Errors of the rules core: a call that was understood but is not allowed now.

Each error a game in play can raise carries what was refused and why as data (a reason,
the bids, players and counts involved), so the words players hear are chosen outside the
rules (`companion.voice.refusals`). `str(error)` is a plain message for logs and
developers: digits, no number words, nothing meant to be read aloud.
"""

from __future__ import annotations

import enum
from typing import Sequence

from companion.errors import CompanionError
from companion.rules.bids import Bid


class RulesError(CompanionError, ValueError):
    """Parsed, but not allowed; the subclass and its fields say why."""


class BidRefusal(enum.Enum):
    """Why a bid is not allowed."""

    MORE_THAN_IN_PLAY = "more dice than are in play"
    # Where the total is hidden: more than the players still in could hold between them
    MORE_THAN_THE_PLAYERS_HOLD = "more dice than the players could hold"
    NOT_A_RAISE = "not above the last bid"
    FACE_STAYS = "the face stays in a palifico round"
    NO_ACES_OPENING = "a round cannot open on aces"
    ACES_OPENING_ONE_DIE_ONLY = "only a player with one die left may open on aces"
    ACES_OPENING_PALIFICO_ONLY = "only the palifico player may open on aces"


class IllegalBid(RulesError):
    """A bid that breaks a rule. `last` is the bid it had to raise (None at the opening),
    `smallest_raises` the bids the player may make instead, lowest first; `calza_open`:
    whether the player may call calza instead."""

    def __init__(self, bid: Bid, reason: BidRefusal, last: Bid | None = None,
                 smallest_raises: Sequence[Bid] = (), dice_in_play: int | None = None,
                 calza_open: bool = False, players_left: int | None = None,
                 most_dice: int | None = None) -> None:
        self.bid = bid
        self.players_left = players_left  # for MORE_THAN_THE_PLAYERS_HOLD: players still in,
        self.most_dice = most_dice  # ... and the most dice one may hold
        self.calza_open = calza_open
        self.reason = reason
        self.last = last
        self.smallest_raises = tuple(smallest_raises)
        self.dice_in_play = dice_in_play
        if reason is BidRefusal.MORE_THAN_IN_PLAY:
            message = f"bid {bid} is more than the {dice_in_play} dice in play"
        elif reason is BidRefusal.MORE_THAN_THE_PLAYERS_HOLD:
            message = f"bid {bid} is more than {players_left} players can hold at {most_dice} dice each"
        elif reason is BidRefusal.NOT_A_RAISE:
            message = f"bid {bid} is not above {last}"
        elif reason is BidRefusal.FACE_STAYS:
            message = f"bid {bid} changes the face of {last} in a palifico round"
        else:
            message = f"bid {bid}: {reason.value}"
        super().__init__(message)


class OutOfTurn(RulesError):
    """`player` tried to `call` ("bid", "dudo" or "calza") when only `turn` may."""

    def __init__(self, player: str, turn: str, call: str = "bid", player_out: bool = False) -> None:
        self.player = player
        self.turn = turn
        self.call = call
        self.player_out = player_out  # the player has no dice left: never their turn again
        super().__init__(f"it is {turn}'s turn, not {player}'s" if call == "bid"
                         else f"only {turn} may call {call} now, not {player}")


class ChallengeRefusal(enum.Enum):
    """Why a dudo or calza is not allowed."""

    PLAYER_OUT = "the player is out of the game"
    NO_BID = "there is no bid yet"
    OWN_BID = "a player cannot challenge their own bid"
    NOT_A_CHALLENGE = "a challenge is dudo or calza"
    CALZA_NOT_PLAYED = "calza is not played under these rules"
    CALZA_IN_PALIFICO = "calza is not allowed in a palifico round"
    CALZA_TOO_FEW_PLAYERS = "calza is not allowed with so few players left"
    CALZA_TOO_FEW_DICE = "calza is only allowed while more than half the dice remain"
    CALZA_BY_NEXT_PLAYER = "the next player may not call calza"


class CallNotAllowed(RulesError):
    """A dudo or calza the rules forbid here (no bid yet, a palifico round, two players...).
    `players_left` is set for CALZA_TOO_FEW_PLAYERS."""

    def __init__(self, kind: str, player: str, reason: ChallengeRefusal,
                 players_left: int | None = None) -> None:
        self.kind = kind
        self.player = player
        self.reason = reason
        self.players_left = players_left
        detail = f" ({players_left} players left)" if players_left is not None else ""
        super().__init__(f"{kind} by {player} refused: {reason.value}{detail}")


class PhaseRefusal(enum.Enum):
    """Why a call does not fit the moment of the game."""

    GAME_OVER = "the game is over"
    CUPS_UP = "the cups are up: the count comes first"
    NOTHING_TO_COUNT = "nobody has challenged, so there is nothing to count"


class WrongPhase(RulesError):
    """A bid during a reveal, a count while bidding, anything after the game is over.
    `winner` is set once the game is over."""

    def __init__(self, reason: PhaseRefusal, winner: str | None = None) -> None:
        self.reason = reason
        self.winner = winner
        super().__init__(reason.value + (f"; {winner} won" if winner else ""))


class CountRefusal(enum.Enum):
    """Why a count or a revealed hand cannot be right."""

    NOT_A_COUNT = "a count is a whole number from zero"
    MORE_THAN_IN_PLAY = "more than the dice in play"
    PLAYER_OUT = "the player is out of the game and has no dice"
    WRONG_NUMBER_OF_DICE = "not as many dice as the player holds"
    NOT_A_FACE = "a die shows 1 to 6"
    HANDS_MISSING = "some players' dice are missing"
    HANDS_DISAGREE = "the dice do not make the count"
    CAMERA_DICE_NOT_IN_PLAY = "the camera's dice are not the dice in play"
    CAMERA_DISAGREES = "the camera's dice do not make the count"


class BadCount(RulesError):
    """A count or hand that cannot be right. `said` is what was given (a count, or how many
    dice a hand had) and `actual` what the game knows it should be or stay within (the dice
    a player holds, the dice in play, what the hands make)."""

    def __init__(self, reason: CountRefusal, *, player: str | None = None, said: object = None,
                 actual: int | None = None, dice: Sequence[int] = (),
                 missing: Sequence[str] = ()) -> None:
        self.reason = reason
        self.player = player
        self.said = said
        self.actual = actual
        self.dice = tuple(dice)
        self.missing = tuple(missing)
        parts = [f"player {player}" if player else "",
                 f"said {said!r}" if said is not None else "",
                 f"actual {actual}" if actual is not None else "",
                 f"dice {list(dice)}" if dice else "",
                 f"missing {', '.join(missing)}" if missing else ""]
        detail = ", ".join(p for p in parts if p)
        super().__init__(reason.value + (f" ({detail})" if detail else ""))


class UnknownPlayer(RulesError):
    """A name that is not one of `players`."""

    def __init__(self, name: str, players: Sequence[str]) -> None:
        self.name = name
        self.players = tuple(players)
        super().__init__(f"there is no player called {name!r}; "
                         f"the players are {', '.join(self.players)}")


class BadSetup(RulesError):
    """Players or rules that cannot start a game (duplicate names, one player...)."""


class UnknownPreset(RulesError):
    pass


class RulesFileError(RulesError):
    pass


class NothingToUndo(RulesError):
    def __init__(self) -> None:
        super().__init__("there is nothing to undo")
