"""A played game summed up from its standing events: rounds, bids, challenges and how they
came out, dice per player, and each player's record. Pure: no files and no plotting, so every
figure can be checked against the events."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping, Sequence

from companion.calls import face_words
from companion.journal import DamagedJournal, read_game
from companion.rules import DUDO
from companion.rules.events import (
    BidMade, ChallengeCalled, DiceCounted, DieLost, DieRegained, Event, GameOver, GameStarted, RoundStarted,
    Undone,
)


@dataclass(frozen=True)
class RecapBid:
    player: str
    count: int
    face: int


@dataclass(frozen=True)
class Challenge:
    """A dudo or a calza and how it came out; the outcome is None while the cups are up."""

    kind: str  # DUDO or CALZA
    caller: str
    bidder: str
    bid: RecapBid
    counted: int | None = None
    correct: bool | None = None  # the bid held (dudo) or was exact (calza)
    loser: str | None = None
    lost: int = 0
    regained: int = 0  # the calza caller's die back; 0 when already at the most dice

    @property
    def settled(self) -> bool:
        return self.counted is not None

    @property
    def caller_right(self) -> bool | None:
        return self.loser != self.caller if self.settled else None


@dataclass(frozen=True)
class Round:
    number: int
    opener: str
    palifico: str | None
    bids: tuple[RecapBid, ...]
    challenge: Challenge | None
    dice_at_start: Mapping[str, int]  # every player, 0 once out
    dice_at_end: Mapping[str, int]  # the same at the round's end (or now, in a round not done)


@dataclass(frozen=True)
class PlayerStats:
    """One player's game. Only dudos test a bid: a calza is the caller's own claim, so it
    counts for the caller and not against the bidder."""

    player: str
    bids: int = 0
    bids_challenged: int = 0  # by a dudo that was counted
    bluffs_caught: int = 0  # of those, the bid was wrong
    bids_held: int = 0  # of those, the bid held
    dudos: int = 0
    dudos_right: int = 0
    calzas: int = 0
    calzas_right: int = 0


@dataclass(frozen=True)
class Recap:
    players: tuple[str, ...]
    rules_name: str
    ace_word: str
    rounds: tuple[Round, ...]
    winner: str | None
    stats: tuple[PlayerStats, ...]

    @property
    def challenges(self) -> list[tuple[int, Challenge]]:
        return [(r.number, r.challenge) for r in self.rounds if r.challenge is not None]

    @property
    def final_dice(self) -> Mapping[str, int]:
        return self.rounds[-1].dice_at_end

    def dice_series(self, player: str) -> list[int]:
        """The player's dice at the start, then after each round: the dice chart's line."""
        return [self.rounds[0].dice_at_start[player]] + [r.dice_at_end[player] for r in self.rounds]


@dataclass
class _RoundSoFar:
    """The round being read, until the next one starts."""

    number: int
    opener: str
    palifico: str | None
    dice_at_start: dict[str, int]
    bids: list[RecapBid] = field(default_factory=list)
    challenge: Challenge | None = None

    def settle(self, **outcome) -> None:
        if self.challenge is None:
            raise ValueError(f"round {self.number} has a count or a die lost with no challenge before it")
        self.challenge = replace(self.challenge, **outcome)

    def done(self, dice: Mapping[str, int]) -> Round:
        return Round(self.number, self.opener, self.palifico, tuple(self.bids), self.challenge,
                     self.dice_at_start, dict(dice))


def recap_of(events: Sequence[Event]) -> Recap:
    """The recap of a game from its standing events (`Game.events`: undone actions gone)."""
    start = events[0] if events else None
    if not isinstance(start, GameStarted):
        raise ValueError("a game's events begin with its start")
    if any(isinstance(e, Undone) for e in events):
        raise ValueError("these events still hold undone actions: recap the replayed game's events")
    players = tuple(start.players)
    dice: dict[str, int] = {}
    rounds: list[Round] = []
    current: _RoundSoFar | None = None
    winner = None
    for event in events:
        if isinstance(event, RoundStarted):
            if current is not None:
                rounds.append(current.done(dice))
            dice = {p: event.dice.get(p, 0) for p in players}
            current = _RoundSoFar(event.number, event.opener, event.palifico, dict(dice))
        elif isinstance(event, GameOver):
            winner = event.winner
        elif current is None:
            continue
        elif isinstance(event, BidMade):
            current.bids.append(RecapBid(event.player, event.count, event.face))
        elif isinstance(event, ChallengeCalled):
            current.challenge = Challenge(event.kind, event.player, event.bidder,
                                          RecapBid(event.bidder, event.count, event.face))
        elif isinstance(event, DiceCounted):
            current.settle(counted=event.count, correct=event.correct)
        elif isinstance(event, DieLost):
            dice[event.player] = event.remaining
            current.settle(loser=event.player, lost=event.lost)
        elif isinstance(event, DieRegained):
            dice[event.player] = event.remaining
            current.settle(regained=event.gained)
    if current is not None:
        rounds.append(current.done(dice))
    return Recap(players, str(start.rules.get("name", "")), str(start.rules.get("ace_word", "aces")),
                 tuple(rounds), winner, tuple(_stats(p, rounds) for p in players))


def _stats(player: str, rounds: Sequence[Round]) -> PlayerStats:
    counts = dict.fromkeys(("bids_challenged", "bluffs_caught", "bids_held", "dudos", "dudos_right",
                            "calzas", "calzas_right"), 0)
    for r in rounds:
        c = r.challenge
        if c is None or not c.settled:
            continue
        if c.kind == DUDO and c.bidder == player:
            counts["bids_challenged"] += 1
            counts["bids_held" if c.loser != player else "bluffs_caught"] += 1
        if c.caller == player:
            called = "dudos" if c.kind == DUDO else "calzas"
            counts[called] += 1
            counts[f"{called}_right"] += bool(c.caller_right)
    bids = sum(1 for r in rounds for b in r.bids if b.player == player)
    return PlayerStats(player, bids, **counts)


def face_name(face: int, ace_word: str) -> str:
    """ "fives", and face 1 in the rules' own word ("pacos", "aces")."""
    return face_words(face, 2, ace_word)


def bid_words(bid: RecapBid, ace_word: str) -> str:
    """ "3 fives", "1 paco": the count in figures, the face as the referee says it."""
    return f"{bid.count} {face_words(bid.face, bid.count, ace_word)}"


def outcome_words(challenge: Challenge) -> str:
    """Who was right, in a sentence for the challenges table."""
    if not challenge.settled:
        return "the cups were up when the game stopped: not counted"
    if challenge.kind == DUDO:
        verdict = "the bid was right" if challenge.correct else "the bid was wrong"
    else:
        verdict = "exactly the bid" if challenge.correct else "not exactly the bid"
    if challenge.loser is not None:
        change = f"{challenge.loser} lost " + ("a die" if challenge.lost == 1 else f"{challenge.lost} dice")
    elif challenge.regained:
        change = f"{challenge.caller} won back a die"
    else:
        change = f"{challenge.caller} already had the most dice"
    return f"{verdict}: {change}"


def read_recap(journal_path: Path) -> tuple[Recap, bool]:
    """The recap of a journal's game; the flag says a last line cut off mid-write was left out.
    A file that is not a journal is a JournalError, raised before anything is written."""
    try:
        game, torn = read_game(Path(journal_path))
    except DamagedJournal as error:
        # resuming cuts the game back to the lines before the damage, keeping a copy
        raise DamagedJournal(f"{error}; companion play --resume {journal_path} repairs it (keeping the "
                           "file as it was beside it), and the recap is then of the game up to that line") from None
    return recap_of(game.events), torn
