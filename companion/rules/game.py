"""The game: a pure state machine of rounds, bids, challenges and counts.

It answers questions (whose turn, is this bid legal, what are the smallest raises, may this
player call calza) and applies actions, returning the events they cause. It never prints,
reads a file or touches a device. Undo replays every action but the last from the start, so
there is one way to reach a state and nothing to keep in step.

Long: every rule of the game is checked in this one class, as python-chess keeps its Board
whole, so a reader finds all of a rule's cases (and the presets' differences) side by side.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Mapping, Sequence, Union

from companion.rules.bids import ACE, FACES, Bid, bid_key, is_face, is_whole_number, smallest_count_above
from companion.rules.errors import (
    BadCount,
    BadSetup,
    BidRefusal,
    CallNotAllowed,
    ChallengeRefusal,
    CountRefusal,
    IllegalBid,
    NothingToUndo,
    OutOfTurn,
    PhaseRefusal,
    UnknownPlayer,
    WrongPhase,
)
from companion.rules.events import (
    COUNTED_BY_PLAYERS,
    BidMade,
    ChallengeCalled,
    DiceCounted,
    DieLost,
    DieRegained,
    Event,
    GameOver,
    GameStarted,
    PalificoDeclared,
    PlayerEliminated,
    RoundStarted,
    Undone,
)
from companion.rules.presets import CalzaCaller, CalzaStarter, DudoCaller, DudoLoss, FaceChange, Rules
from companion.rules.names import name_key

DUDO = "dudo"
CALZA = "calza"
COUNT = "count"  # an undone count, as the journal names it


class Phase(enum.Enum):
    BIDDING = "bidding"
    REVEAL = "reveal"  # cups are up: waiting for the count
    OVER = "over"


@dataclass(frozen=True)
class BidAction:
    player: str
    bid: Bid


@dataclass(frozen=True)
class ChallengeAction:
    kind: str  # DUDO or CALZA
    player: str


@dataclass(frozen=True)
class CountAction:
    count: int
    hands: Mapping[str, tuple[int, ...]] | None = None
    source: str = COUNTED_BY_PLAYERS  # or COUNTED_BY_CAMERA
    camera_dice: tuple[int, ...] | None = None  # the faces the camera read, when it counted

    @property
    def said_as_number(self) -> bool:
        """The players said the count as a number, not each their dice: a number taken back
        leaves standing the dice said before it (see dice_left_standing)."""
        return self.source == COUNTED_BY_PLAYERS and not self.hands


Action = Union[BidAction, ChallengeAction, CountAction]


def undone_event(action: Action) -> Undone:
    """The journal's line for an action taken back: what it was, so a replay can check it."""
    if isinstance(action, BidAction):
        return Undone({"kind": "bid", "player": action.player, "count": action.bid.count, "face": action.bid.face})
    if isinstance(action, ChallengeAction):
        return Undone({"kind": action.kind, "player": action.player})
    return Undone({"kind": COUNT, "count": action.count})


def dice_left_standing(action: Action, said_before: Mapping[str, tuple[int, ...]]) -> dict[str, tuple[int, ...]]:
    """The dice said at a reveal that stand again when `action` is taken back (the referee's
    record, in the undo's line): of a count the players' dice made, all but the last said,
    which settled it (rather than every player saying theirs again, each a new chance to
    mishear); of a number the players counted, the dice said before it (`said_before`);
    of anything else, none."""
    if not isinstance(action, CountAction) or action.source != COUNTED_BY_PLAYERS:
        return {}
    if action.said_as_number:
        return dict(said_before)
    return {player: tuple(dice) for player, dice in list(action.hands.items())[:-1]}


def count_matching(dice: Sequence[int], face: int, aces_wild: bool) -> int:
    """How many of `dice` count for a bid on `face`."""
    return sum(1 for d in dice if d == face or (aces_wild and face != ACE and d == ACE))


class Game:
    def __init__(self, players: Sequence[str], rules: Rules | None = None, first: str | None = None) -> None:
        self.rules = rules or Rules()
        names = [p.strip() for p in players]
        if len(names) < 2:
            raise BadSetup("a game needs at least two players")
        if any(not n for n in names):
            raise BadSetup("a player's name cannot be empty")
        keys = [name_key(n) for n in names]
        twice = sorted({k for k in keys if keys.count(k) > 1})
        if twice:
            # Names are heard without case or accents, so "Ana" and "ana" are one name said twice.
            said = "; ".join(" and ".join(repr(n) for n in names if name_key(n) == key) for key in twice)
            raise BadSetup(f"each player needs a different name (names are heard without case or accents): {said}")
        self.players: tuple[str, ...] = tuple(names)
        if first is None:
            first = self.players[0]
        self.first = self.player_named(first)
        # Where the total is hidden, a bid above what the players still in could hold is
        # refused. An older version's journal may hold such bids: replaying it with
        # `admit_older_bids`, each is let through and kept in `older_bids` with every action
        # before it, so that it (and only it, after that very game) is made again after an undo.
        self.admit_older_bids = False
        self.older_bids: set[tuple[tuple[str, ...], str, Bid]] = set()
        self._actions: list[Action] = []
        self._history: list[tuple[Action | None, list[Event]]] = []
        self._restart()

    # --- state ---------------------------------------------------------------------------

    def _restart(self) -> None:
        self.dice: dict[str, int] = {p: self.rules.starting_dice for p in self.players}
        self.phase = Phase.BIDDING
        self.round_number = 0
        self.bids: list[tuple[str, Bid]] = []
        self.turn = self.first
        self.palifico_player: str | None = None
        self.been_palifico: set[str] = set()  # players whose palifico round came before this one
        self.challenge: ChallengeCalled | None = None
        self.last_loser: str | None = None
        self.winner: str | None = None
        start = GameStarted(self.players, self.first, self.rules.to_dict())
        self._history = [(None, [start, *self._start_round(self.first, None)])]

    @property
    def events(self) -> list[Event]:
        return [e for _, events in self._history for e in events]

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(self._actions)

    @property
    def active_players(self) -> tuple[str, ...]:
        return tuple(p for p in self.players if self.dice[p] > 0)

    @property
    def dice_in_play(self) -> int:
        return sum(self.dice.values())

    @property
    def bid_ceiling(self) -> int:
        """The most dice a bid may name: the dice in play, or where the total is hidden, what
        the players still in could hold between them (seen by all, so refusing above it tells
        nothing)."""
        if self.rules.announce_dice_in_play:
            return self.dice_in_play
        return len(self.active_players) * self.rules.max_dice

    @property
    def is_palifico_round(self) -> bool:
        return self.palifico_player is not None

    @property
    def aces_wild(self) -> bool:
        return not self.is_palifico_round

    @property
    def last_bid(self) -> Bid | None:
        return self.bids[-1][1] if self.bids else None

    @property
    def last_bidder(self) -> str | None:
        return self.bids[-1][0] if self.bids else None

    @property
    def current_player(self) -> str | None:
        """Whose call it is: to bid or challenge while bidding; nobody otherwise."""
        return self.turn if self.phase is Phase.BIDDING else None

    def player_named(self, name: str) -> str:
        for p in self.players:
            if name_key(p) == name_key(name):
                return p
        raise UnknownPlayer(name, self.players)

    def next_active_after(self, player: str) -> str:
        i = self.players.index(player)
        for step in range(1, len(self.players) + 1):
            candidate = self.players[(i + step) % len(self.players)]
            if self.dice[candidate] > 0:
                return candidate
        raise BadSetup("no player has dice left")  # unreachable once the game is over

    # --- questions -----------------------------------------------------------------------

    def may_change_face(self, player: str) -> bool:
        """In a palifico round, may `player` bid a different face from the last bid?"""
        if not self.is_palifico_round:
            return True
        rule = self.rules.palifico_face_change
        one_die = self.dice[player] == 1
        was_palifico = player in self.been_palifico or (
            self.rules.palifico_player_was_palifico and player == self.palifico_player)
        if rule is FaceChange.WAS_PALIFICO:
            return was_palifico
        if rule is FaceChange.WAS_PALIFICO_ON_ONE_DIE:
            return was_palifico and one_die
        if rule is FaceChange.ON_ONE_DIE:
            return one_die
        if rule is FaceChange.PALIFICO_PLAYER:
            return player == self.palifico_player
        return False

    def face_changers(self) -> tuple[str, ...]:
        """In a palifico round, the players still in who may change the face (else none)."""
        if not self.is_palifico_round:
            return ()
        return tuple(p for p in self.active_players if self.may_change_face(p))

    def may_open_with_aces(self, player: str) -> bool:
        """May `player` open this round with aces (pacos, jokers)?"""
        player = self.player_named(player)
        rules = self.rules
        return (rules.aces_opening
                or (rules.palifico_opens_aces and self.is_palifico_round and player == self.palifico_player)
                or (rules.one_die_opens_aces and self.dice[player] == 1))

    def bid_problem(self, player: str, bid: Bid) -> IllegalBid | None:
        """Why `player` may not bid `bid` now (turn and phase aside), or None if legal."""
        player = self.player_named(player)  # any spelling the actions take ("ana")
        reason = self._bid_refusal(player, bid)
        if reason is None:
            return None
        return IllegalBid(bid, reason, self.last_bid, self.smallest_raises(player), self.dice_in_play,
                          calza_open=self.challenge_problem(CALZA, player) is None,
                          players_left=len(self.active_players), most_dice=self.rules.max_dice)

    def _bid_refusal(self, player: str, bid: Bid) -> BidRefusal | None:
        last = self.last_bid
        if bid.count > self.bid_ceiling:
            if self.rules.announce_dice_in_play:
                return BidRefusal.MORE_THAN_IN_PLAY
            place = (tuple(map(repr, self._actions)), player, bid)  # (a count's hands are a dict: no hash)
            if self.admit_older_bids:
                self.older_bids.add(place)
            elif place not in self.older_bids:
                return BidRefusal.MORE_THAN_THE_PLAYERS_HOLD
        if last is None:
            if bid.is_aces and not self.may_open_with_aces(player):
                if self.rules.one_die_opens_aces:
                    return BidRefusal.ACES_OPENING_ONE_DIE_ONLY
                if self.is_palifico_round and self.rules.palifico_opens_aces:
                    return BidRefusal.ACES_OPENING_PALIFICO_ONLY
                return BidRefusal.NO_ACES_OPENING
            return None
        if bid.face != last.face and not self.may_change_face(player):
            return BidRefusal.FACE_STAYS
        if bid_key(bid, self.aces_wild) <= bid_key(last, self.aces_wild):
            return BidRefusal.NOT_A_RAISE
        return None

    def is_legal(self, bid: Bid, player: str | None = None) -> bool:
        player = player or self.current_player
        if player is None or self.phase is not Phase.BIDDING or self.player_named(player) != self.turn:
            return False
        return self.bid_problem(player, bid) is None

    def smallest_raises(self, player: str | None = None) -> list[Bid]:
        """For each face `player` may bid now, the smallest legal count, lowest first."""
        player = self.player_named(player) if player else self.turn
        last = self.last_bid
        raises = []
        for face in FACES:
            if last is None:
                bid = Bid(1, face)
                if bid.is_aces and not self.may_open_with_aces(player):
                    continue
            else:
                if face != last.face and not self.may_change_face(player):
                    continue
                bid = Bid(smallest_count_above(last, face, self.aces_wild), face)
            if bid.count <= self.bid_ceiling:
                raises.append(bid)
        return sorted(raises, key=lambda b: bid_key(b, self.aces_wild))

    def challenge_problem(self, kind: str, player: str) -> CallNotAllowed | OutOfTurn | WrongPhase | None:
        """Why `player` may not call dudo/calza now, or None if they may."""
        if self.phase is not Phase.BIDDING:
            return self._wrong_phase()
        player = self.player_named(player)
        if self.dice.get(player, 0) == 0:
            return CallNotAllowed(kind, player, ChallengeRefusal.PLAYER_OUT)
        if kind == CALZA and not self.rules.calza:  # before "no bid yet", which says it may come later
            return CallNotAllowed(kind, player, ChallengeRefusal.CALZA_NOT_PLAYED)
        if self.last_bid is None:
            return CallNotAllowed(kind, player, ChallengeRefusal.NO_BID)
        bidder = self.last_bidder
        if player == bidder:
            return CallNotAllowed(kind, player, ChallengeRefusal.OWN_BID)
        if kind == DUDO:
            if self.rules.dudo_caller is DudoCaller.NEXT_PLAYER and player != self.turn:
                return OutOfTurn(player, self.turn, DUDO)
            return None
        rules = self.rules
        if self.is_palifico_round and not rules.calza_in_palifico:
            return CallNotAllowed(kind, player, ChallengeRefusal.CALZA_IN_PALIFICO)
        if len(self.active_players) < rules.calza_min_players:
            return CallNotAllowed(kind, player, ChallengeRefusal.CALZA_TOO_FEW_PLAYERS,
                                  players_left=len(self.active_players))
        if rules.calza_needs_half_dice and self.dice_in_play * 2 <= rules.starting_dice * len(self.players):
            return CallNotAllowed(kind, player, ChallengeRefusal.CALZA_TOO_FEW_DICE)
        if rules.calza_caller is CalzaCaller.NEXT_PLAYER and player != self.turn:
            return OutOfTurn(player, self.turn, CALZA)
        if rules.calza_caller is CalzaCaller.ANY_EXCEPT_NEXT and player == self.turn:
            return CallNotAllowed(kind, player, ChallengeRefusal.CALZA_BY_NEXT_PLAYER)
        return None

    def _wrong_phase(self) -> WrongPhase:
        """Why nothing but the count fits a reveal, and nothing at all a finished game."""
        if self.phase is Phase.OVER:
            return WrongPhase(PhaseRefusal.GAME_OVER, self.winner)
        return WrongPhase(PhaseRefusal.CUPS_UP)

    # --- actions -------------------------------------------------------------------------

    def apply(self, action: Action) -> list[Event]:
        """Check and apply one player's action; raises a RulesError and changes nothing if not allowed."""
        if isinstance(action, BidAction):
            events = self._bid(action)
        elif isinstance(action, ChallengeAction):
            events = self._challenge(action)
        elif isinstance(action, CountAction):
            events = self._count(action)
        else:
            raise TypeError(f"not an action: {action!r}")
        self._actions.append(action)
        self._history.append((action, events))
        return events

    def bid(self, player: str, bid: Bid) -> list[Event]:
        return self.apply(BidAction(player, bid))

    def dudo(self, player: str) -> list[Event]:
        return self.apply(ChallengeAction(DUDO, player))

    def calza(self, player: str) -> list[Event]:
        return self.apply(ChallengeAction(CALZA, player))

    def reveal(self, count: int, hands: Mapping[str, Sequence[int]] | None = None, source: str = COUNTED_BY_PLAYERS,
               camera_dice: Sequence[int] | None = None) -> list[Event]:
        frozen = None if hands is None else {p: tuple(d) for p, d in hands.items()}
        return self.apply(CountAction(count, frozen, source, None if camera_dice is None else tuple(camera_dice)))

    def undo(self) -> Action:
        """Take back the last action; raises NothingToUndo at the start of the game."""
        if not self._actions:
            raise NothingToUndo()
        undone = self._actions[-1]
        actions = self._actions[:-1]
        self._actions = []
        self._restart()
        for action in actions:
            self.apply(action)
        return undone

    def _bid(self, action: BidAction) -> list[Event]:
        player = self.player_named(action.player)
        if self.phase is not Phase.BIDDING:
            raise self._wrong_phase()
        if player != self.turn:
            raise OutOfTurn(player, self.turn, player_out=self.dice[player] == 0)
        problem = self.bid_problem(player, action.bid)
        if problem is not None:
            raise problem
        self.bids.append((player, action.bid))
        self.turn = self.next_active_after(player)
        return [BidMade(player, action.bid.count, action.bid.face, self.turn)]

    def _challenge(self, action: ChallengeAction) -> list[Event]:
        if action.kind not in (DUDO, CALZA):
            raise CallNotAllowed(action.kind, action.player, ChallengeRefusal.NOT_A_CHALLENGE)
        player = self.player_named(action.player)
        problem = self.challenge_problem(action.kind, player)
        if problem is not None:
            raise problem
        bid = self.last_bid
        assert bid is not None and self.last_bidder is not None
        self.challenge = ChallengeCalled(action.kind, player, self.last_bidder, bid.count, bid.face, self.aces_wild)
        self.phase = Phase.REVEAL
        return [self.challenge]

    def check_hands(self, hands: Mapping[str, Sequence[int]]) -> dict[str, tuple[int, ...]]:
        """Check revealed dice against what each player holds; returns them keyed by real name."""
        checked: dict[str, tuple[int, ...]] = {}
        for name, dice in hands.items():
            player = self.player_named(name)
            if self.dice[player] == 0:
                raise BadCount(CountRefusal.PLAYER_OUT, player=player)
            if len(dice) != self.dice[player]:
                raise BadCount(CountRefusal.WRONG_NUMBER_OF_DICE, player=player, said=len(dice),
                               actual=self.dice[player])
            if not all(is_face(d) for d in dice):
                raise BadCount(CountRefusal.NOT_A_FACE, player=player, dice=dice)
            checked[player] = tuple(dice)
        return checked

    def _count(self, action: CountAction) -> list[Event]:
        if self.phase is Phase.BIDDING:
            raise WrongPhase(PhaseRefusal.NOTHING_TO_COUNT)
        if self.phase is not Phase.REVEAL:
            raise self._wrong_phase()
        challenge = self.challenge
        assert challenge is not None
        count = action.count
        if not is_whole_number(count) or count < 0:
            raise BadCount(CountRefusal.NOT_A_COUNT, said=count)
        if count > self.dice_in_play:
            raise BadCount(CountRefusal.MORE_THAN_IN_PLAY, said=count, actual=self.dice_in_play)
        hands = None
        if action.hands is not None:
            hands = self.check_hands(action.hands)
            missing = [p for p in self.active_players if p not in hands]
            if missing:
                raise BadCount(CountRefusal.HANDS_MISSING, missing=missing)
            counted = sum(count_matching(d, challenge.face, challenge.aces_wild) for d in hands.values())
            if counted != count:
                raise BadCount(CountRefusal.HANDS_DISAGREE, said=count, actual=counted)
        camera_dice = None
        if action.camera_dice is not None:
            # The camera counts only when it saw every die in play; the count must be theirs.
            camera_dice = tuple(action.camera_dice)
            if len(camera_dice) != self.dice_in_play or not all(is_face(d) for d in camera_dice):
                raise BadCount(CountRefusal.CAMERA_DICE_NOT_IN_PLAY, actual=self.dice_in_play, dice=camera_dice)
            counted = count_matching(camera_dice, challenge.face, challenge.aces_wild)
            if counted != count:
                raise BadCount(CountRefusal.CAMERA_DISAGREES, said=count, actual=counted)

        if challenge.kind == DUDO:
            correct = count >= challenge.count
        else:
            correct = count == challenge.count
        events: list[Event] = [DiceCounted(count, hands, action.source, correct, camera_dice)]
        losers: list[str] = []
        if challenge.kind == DUDO:
            loser = challenge.player if correct else challenge.bidder
            lost = 1
            if self.rules.dudo_loss is DudoLoss.DIFFERENCE:
                lost = max(1, abs(count - challenge.count))
            events += self._lose(loser, lost)
            losers.append(loser)
            opener = loser
        else:
            caller = challenge.player
            if correct:
                gained = min(1, self.rules.max_dice - self.dice[caller])
                self.dice[caller] += gained
                events.append(DieRegained(caller, gained, self.dice[caller]))
            else:
                events += self._lose(caller, 1)
                losers.append(caller)
            if self.rules.calza_starter is CalzaStarter.CALLER or not correct or self.last_loser is None:
                opener = caller
            else:
                opener = self.last_loser

        if len(self.active_players) == 1:
            self.winner = self.active_players[0]
            self.phase = Phase.OVER
            self.challenge = None
            return events + [GameOver(self.winner)]

        if self.dice[opener] == 0:
            opener = self.next_active_after(opener)
        palifico = None
        if (self.rules.palifico and len(self.active_players) >= self.rules.palifico_min_players):
            for loser in losers:
                if self.dice[loser] == 1 and not (self.rules.palifico_once and loser in self.been_palifico):
                    palifico = loser
        if palifico is not None:
            events.append(PalificoDeclared(palifico))
        return events + self._start_round(opener, palifico)

    def _lose(self, player: str, lost: int) -> list[Event]:
        lost = min(lost, self.dice[player])
        self.dice[player] -= lost
        self.last_loser = player
        events: list[Event] = [DieLost(player, lost, self.dice[player])]
        if self.dice[player] == 0:
            events.append(PlayerEliminated(player))
        return events

    def _start_round(self, opener: str, palifico: str | None) -> list[Event]:
        if self.palifico_player is not None:
            self.been_palifico.add(self.palifico_player)
        self.round_number += 1
        self.phase = Phase.BIDDING
        self.bids = []
        self.challenge = None
        self.turn = opener
        self.palifico_player = palifico
        dice = {p: self.dice[p] for p in self.active_players}
        return [RoundStarted(self.round_number, opener, dice, palifico)]
