"""Errors of the rules core: a call that was understood but is not allowed now."""

from __future__ import annotations

from typing import Sequence

from companion.errors import CompanionError


class RulesError(CompanionError, ValueError):
    """Parsed, but not allowed: the message says why, in words fit to be spoken."""


class IllegalBid(RulesError):
    def __init__(self, message: str, smallest_raises: Sequence = ()) -> None:
        super().__init__(message)
        self.smallest_raises = tuple(smallest_raises)


class OutOfTurn(RulesError):
    pass


class CallNotAllowed(RulesError):
    """A dudo or calza the rules forbid here (no bid yet, a palifico round, two players...)."""


class WrongPhase(RulesError):
    """A bid during a reveal, a count while bidding, anything after the game is over."""


class BadCount(RulesError):
    pass


class UnknownPlayer(RulesError):
    pass


class BadSetup(RulesError):
    """Players or rules that cannot start a game (duplicate names, one player...)."""


class UnknownPreset(RulesError):
    pass


class RulesFileError(RulesError):
    pass


class NothingToUndo(RulesError):
    pass
