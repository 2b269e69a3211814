"""Whom a call heard without its caller's name is asked about, round the table.

A name is the word a recogniser most easily loses ("Ana calza" heard as "calza"), and a
challenge or a one-die hand without it could be anyone's. The referee asks about it as one
player's ("Did you say Cleo calza?"); after a "no", the same call heard again is asked
about as the next player's who could have said it, from the player to move, so every
caller has a way through with a "yes".

What it remembers holds for one point of the game: the count of events journalled so far.
Every move, undo and hand said changes it and no undo brings one back, so a question or a
"no" never outlives the moment it was about.
"""

from __future__ import annotations

from typing import Sequence

from companion.calls import CalzaCall, Call, DudoCall, HandCall, NumberCall
from companion.rules import CALZA, DUDO, CalzaCaller, DudoCaller, Game, Phase

HAND = "hand"  # beside DUDO and CALZA: a number asked about as a one-die player's hand
COUNT_DECLINED = ("count", "")  # in the "no"s: the number asked about as the count


def _hand(value: int) -> str:
    """The kind a "no" to a one-die hand is kept as: that number, as that player's."""
    return f"{HAND} {value}"


def _refused(value: int) -> tuple[str, str]:
    """Kept beside the "no"s: that number was refused as the count, with its range."""
    return (f"count {value} refused", "")


def challengers(game: Game, kind: str) -> list[str]:
    """The players who may call `kind` (DUDO or CALZA) now."""
    return [p for p in game.active_players if game.challenge_problem(kind, p) is None]


class RoundTheTable:
    def __init__(self) -> None:
        self._point = 0  # events journalled so far
        self._who_calls_asked: int | None = None  # the point "Who calls calza?" was asked at
        self._not_callers: tuple[int, set[tuple[str, str]]] = (0, set())  # answered "no" about, as (kind, player)

    def moved(self, events: int) -> None:
        """`events` more were journalled: the game is at a new point."""
        self._point += events

    # --- "Who calls calza?" -------------------------------------------------------------------

    def asked_who_calls(self) -> None:
        self._who_calls_asked = self._point

    @property
    def who_calls_open(self) -> bool:
        """"Who calls calza?" was asked and nothing has happened in the game since."""
        return self._who_calls_asked == self._point

    def drop_who_calls(self) -> None:
        self._who_calls_asked = None

    def who_calls_example(self, game: Game) -> str:
        """The player the question names as its example: the next who may call calza not yet
        answered "no" about."""
        eligible = challengers(game, CALZA)
        return self.next_to_ask(game, CALZA, eligible) or eligible[0]

    # --- naming -------------------------------------------------------------------------------

    def named(self, game: Game, call: Call, declined: Call | None, hands_missing: Sequence[str],
              not_the_count: bool = False) -> Call:
        """A bare calza only one player may call, other than the player to move, as theirs
        ("Cleo calza"), and a bare dudo where anyone may call it as the player to move's
        ("Ben dudo"): heard, it is asked about by name, for someone else may have said it
        (and would lose the die if wrong). Said again after a "no" (or after "Who calls
        calza?"), it is asked about as the next player's who may call it. A number said
        again after a "no" to it as the count (`declined`), or one that cannot be the count
        (`not_the_count`), is a one-die hand whose name was lost ("Dan two"): offered as each
        one-die player's yet to say their dice. A number said again after a "no" to it as one
        player's hand is asked about as the count first (it may be "the count is two" heard
        as "Ben two"), unless it cannot be the count: then the offers go round again."""
        if (isinstance(call, DudoCall) and call.speaker is None and game.phase is Phase.BIDDING
                and game.rules.dudo_caller is DudoCaller.ANYONE):
            return DudoCall(self.next_to_ask(game, DUDO, challengers(game, DUDO)) or game.turn)
        if (isinstance(call, CalzaCall) and call.speaker is None and game.rules.calza
                and game.rules.calza_caller is not CalzaCaller.NEXT_PLAYER):
            eligible = challengers(game, CALZA)
            if len(eligible) == 1:
                return CalzaCall(eligible[0])
            if self.who_calls_open:
                asked = self.next_to_ask(game, CALZA, eligible)
                if asked is not None:
                    return CalzaCall(asked)
        if (isinstance(call, NumberCall) and call.speaker is None and game.phase is Phase.REVEAL
                and 1 <= call.value <= 6 and (not_the_count or declined == call or (
                    isinstance(declined, HandCall) and declined.dice == (call.value,)))):
            here = self._declined_here()
            if isinstance(declined, HandCall) and not not_the_count and COUNT_DECLINED not in here:
                return call  # a hand heard ("the count is two" as "Ben two") and declined: the count first
            lone = [p for p in hands_missing if game.dice[p] == 1]
            asked = self.next_to_ask(game, _hand(call.value), lone)
            if asked is None and not_the_count and _refused(call.value) in here:
                # each offered and declined, then refused as the count (the table heard the
                # count's range): said again, it is offered round again
                kinds = (_hand(call.value), _refused(call.value)[0])
                self._not_callers = (self._point, {d for d in here if d[0] not in kinds})
                asked = self.next_to_ask(game, _hand(call.value), lone)
            if asked is not None:
                return HandCall(asked, (call.value,), asked)
            # each one-die player offered and declined: the count again
        return call

    def next_to_ask(self, game: Game, kind: str, callers: list[str]) -> str | None:
        """The first of `callers`, round the table from the player to move, not yet answered
        "no" about for this `kind`; None once all have been."""
        declined = self._declined_here()
        seats = list(game.players)
        start = seats.index(game.turn) if game.turn in seats else 0
        in_turn = sorted(callers, key=lambda p: (seats.index(p) - start) % len(seats))
        return next((p for p in in_turn if (kind, p) not in declined), None)

    def count_refused(self, value: int) -> None:
        """The number was refused as the count (it cannot be it): said again, it is offered
        round the one-die players again."""
        self._not_callers = (self._point, self._declined_here() | {_refused(value)})

    def answered_no(self, game: Game, call: Call | None) -> None:
        """A "no" to "Did you say Ben dudo?" (or "Cleo two?" for a one-die hand): the next
        bare dudo (or number) is asked about as another's. Once every one-die player has
        been offered, the number is the count again; a "no" to that offers them afresh."""
        declined = self._declined_here()
        if isinstance(call, NumberCall):
            # the count declined again, after the one-die players: they are offered afresh
            declined = ({d for d in declined if not d[0].startswith(HAND)} if COUNT_DECLINED in declined
                        else set(declined)) | {COUNT_DECLINED}
        elif isinstance(call, HandCall) and call.speaker and len(call.dice) == 1:
            declined = declined | {(_hand(call.dice[0]), call.speaker)}
        elif isinstance(call, (DudoCall, CalzaCall)) and call.speaker:
            kind = DUDO if isinstance(call, DudoCall) else CALZA
            declined = declined | {(kind, call.speaker)}
            if all((kind, p) in declined for p in challengers(game, kind)):  # everyone said no: round again
                declined = {d for d in declined if d[0] != kind}
        self._not_callers = (self._point, declined)

    def _declined_here(self) -> set[tuple[str, str]]:
        point, declined = self._not_callers
        return declined if point == self._point else set()
