"""What the referee announces, as typed values, and the words for each.

The referee decides and returns these; it never builds a sentence. Each announcement says
what it means in `words(rules)`, so all the wording (and any translation) lives in this room,
beside the sentences for events (phrases) and refusals.

Long: every announcement the referee makes is here, so that its wording is in one place.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Mapping, Sequence, Union

from companion.calls import (HELP_WORDS, NOTHING_SAID, STOP_WORDS, Call, Command, CommandCall, NumberCall, UnparsableCall, bid_words,
                             describe_call, face_to_count, face_words, number_words)
from companion.rules import Action, BidAction, ChallengeAction, Game, Phase, RulesError
from companion.rules.bids import Bid
from companion.rules.events import ChallengeCalled, Event
from companion.rules.presets import Rules
from companion.voice.phrases import count_of, describe_events, join_and, palifico_rules, rules_words
from companion.voice.refusals import refusal

SAY_AGAIN = "Sorry, say again?"


# --- the game moving on ---------------------------------------------------------------------

@dataclass(frozen=True)
class EventsHappened:
    events: tuple[Event, ...]
    calza: bool = False  # the count settles a calza, challenged in an earlier batch
    # who may change the face in the palifico round the events leave the game in (None: not known)
    face_changers: tuple[str, ...] | None = None

    def words(self, rules: Rules) -> list[str]:
        return describe_events(self.events, rules, self.calza, self.face_changers)


@dataclass(frozen=True)
class Refused:
    """The rules refused the call."""

    error: RulesError

    def words(self, rules: Rules) -> list[str]:
        return [refusal(self.error, rules)]


@dataclass(frozen=True)
class BidStands:
    """The bid that stands said again (its bidder repeating it, or a neighbour echoing it):
    not a raise refused, which would sound like the player to move's mistake."""

    bid: Bid
    bidder: str
    turn: str

    def words(self, rules: Rules) -> list[str]:
        return [f"{bid_words(self.bid, rules.ace_word).capitalize()} is {self.bidder}'s bid already. "
                f"{self.turn}, your call."]


@dataclass(frozen=True)
class GameIsOver:
    winner: str

    def words(self, rules: Rules) -> list[str]:
        return [f"The game is over: {self.winner} won. Say 'take it back' to undo the last count."]


@dataclass(frozen=True)
class NewGameNotYet:
    """"New game" before this one is won."""

    status: Status

    def words(self, rules: Rules) -> list[str]:
        return [f"This game is not over. {self.status.sentence(rules, brief=True)} A new game can start once "
                "someone has won; to stop this one, type quit: it is saved."]


@dataclass(frozen=True)
class TookBack:
    action: Action
    status: Status

    def words(self, rules: Rules) -> list[str]:
        # a bid taken back changes no one's dice: whose call it is, and on what, is enough
        brief = isinstance(self.action, BidAction)
        return [f"Undone: {_action_words(self.action, rules.ace_word)}. {self.status.sentence(rules, brief)}"]


def _action_words(action: Action, ace_word: str) -> str:
    if isinstance(action, BidAction):
        return f"{action.player}'s {bid_words(action.bid, ace_word)}"
    if isinstance(action, ChallengeAction):
        return f"{action.player}'s {action.kind}"
    return f"the count of {number_words(action.count)}"


# --- hearing --------------------------------------------------------------------------------

@dataclass(frozen=True)
class SayAgain:
    # At a reveal, what to say: asked "Did you say the count is two?", players answer "the
    # count is three", which is heard far worse than the number alone.
    at_reveal: bool = False

    def words(self, rules: Rules) -> list[str]:
        return [f"{SAY_AGAIN[:-1]}: just the number, or your name and dice." if self.at_reveal else SAY_AGAIN]


@dataclass(frozen=True)
class NotUnderstood:
    """A typed line that is no call, said as precisely as can be told."""

    text: str
    why: str  # UnparsableCall.why
    players: tuple[str, ...]
    unknown_player: str | None = None  # a word where a player's name would make it a call
    # a call that a name leads now ("Ana five five three" at a reveal, "Cleo calza"), if any
    named_example: str | None = None
    at_reveal: bool = False

    def words(self, rules: Rules) -> list[str]:
        if self.unknown_player:
            return [f"There is no player called {self.unknown_player}; the players are {join_and(self.players)}."]
        if self.why == NOTHING_SAID and any("a" <= c <= "z" for c in self.text.lower()):  # a name alone
            if self.named_example:
                what = "dice" if self.at_reveal else "call"
                return [f"Say the {what} after the name, like {self.named_example}."]
            return ["Bids and dudo need no name now: say the call alone, like four fives, or dudo."]
        word = self.text.strip().lower().strip("?!.")
        if word in HELP_WORDS or self.text.strip() == "?":
            calza = f", calza or {self.players[0]} calza" if rules.calza else ""
            palifico = ", palifico" if rules.palifico else ""
            return [f"Calls are bids like four fives or three {rules.ace_word}, dudo{calza}, and after "
                    f"a challenge the count, like seven, or each player's name and dice. Also: take it back, "
                    f"repeat, status{palifico}."]
        if word in STOP_WORDS:  # typed QUIT_WORDS stop the game themselves
            return ["To stop, type quit or press Control C: the game is saved, and "
                    "companion play --resume carries it on."]
        why = "" if self.why == UnparsableCall(self.text).why else f" ({self.why})"
        # said back whole, a pasted page would hold the game up for minutes
        shown = self.text if len(self.text) <= QUOTED else self.text[:QUOTED].rstrip() + "..."
        return [f"Sorry, I did not understand {shown!r}{why}. Say it again, or type help."]


QUOTED = 40  # characters of a line not understood that are said back


@dataclass(frozen=True)
class AskToConfirm:
    call: Call

    def words(self, rules: Rules) -> list[str]:
        return [f"Did you say {_asked(self.call, rules)}?"]


def _asked(call: Call, rules: Rules) -> str:
    """What "Did you say ...?" asks about: a count said plainly as one, so that a one-die hand
    heard without its name ("Dan two") is not confirmed as the count by its player, who did
    say "two"."""
    if isinstance(call, NumberCall) and call.speaker is None:
        return f"the count is {describe_call(call, rules.ace_word)}"
    return _as_said(call, rules)


def _as_said(call: Call, rules: Rules) -> str:
    """A call in the words a question about it uses: "take it back" as players say it
    ("undo" sounds like the referee's word)."""
    if isinstance(call, CommandCall) and call.name is Command.UNDO:
        return "take it back"
    return describe_call(call, rules.ace_word)


@dataclass(frozen=True)
class NothingToConfirm:
    def words(self, rules: Rules) -> list[str]:
        return ["There is nothing to confirm."]


@dataclass(frozen=True)
class NothingToCancel:
    def words(self, rules: Rules) -> list[str]:
        # (not "nothing to cancel": typed, "cancel" takes back the last call)
        return ["There is no question to say no to."]


@dataclass(frozen=True)
class Declined:
    """A "no" to "Did you say ...?"."""

    at_reveal: bool = False  # nobody "calls" a count or dice

    def words(self, rules: Rules) -> list[str]:
        return ["Not taken. Say the count, or your name and dice." if self.at_reveal else
                "Not taken. If you called, say it again."]


@dataclass(frozen=True)
class AskedAgain:
    """Something unclear heard while "Did you say ...?" waits (often a faint "yes"): the
    question again, so the player knows to answer it rather than say the call again."""

    call: Call

    def words(self, rules: Rules) -> list[str]:
        return [f"Sorry, yes or no: did you say {_asked(self.call, rules)}?"]


@dataclass(frozen=True)
class StillAsking:
    """Another move heard while "Did you say ...?" waits. Whose move it is, and what it
    raises or challenges, depend on the answer, so the question comes first."""

    call: Call

    def words(self, rules: Rules) -> list[str]:
        return [f"First: did you say {_asked(self.call, rules)}? Yes or no."]


@dataclass(frozen=True)
class QuestionDropped:
    """A "Did you say ...?" taken back or gone unanswered: that call was never taken."""

    call: Call
    status: Status

    def words(self, rules: Rules) -> list[str]:
        # a count as "a count of seven": "Not taken: the count is seven" half heard is a count
        what = _as_said(self.call, rules)
        if isinstance(self.call, NumberCall) and self.call.speaker is None:
            what = f"a count of {what}"
        return [f"Not taken: {what}. {self.status.sentence(rules, brief=True)}"]


@dataclass(frozen=True)
class HandTakenBack:
    """A "take it back" at a reveal while hands are being said: the last hand goes."""

    player: str
    missing: tuple[str, ...]

    def words(self, rules: Rules) -> list[str]:
        return [f"Took back {self.player}'s dice. Still need {join_and(self.missing)}."]


# --- calls out of place ---------------------------------------------------------------------

@dataclass(frozen=True)
class SayYourName:
    """Before the game: a player is asked to say their name before a few words (one of
    sources.NAME_PHRASES), so that its sound is learnt."""

    words_to_say: str  # "Ana calza"
    player: str
    first: bool  # the first thing asked: say what this is for
    again: bool = False  # not heard so the last time

    def words(self, rules: Rules) -> list[str]:
        if self.again:
            return [f"Sorry, say again: {self.words_to_say}."]
        ask = f"{self.player}, say: {self.words_to_say}."
        if self.first:
            return [f"Before we play, I will learn how each of you says your name. {ask}"]
        return [ask]


@dataclass(frozen=True)
class NameLearned:
    player: str
    heard: int  # how many of the phrases were heard; none: the name is known by its spelling

    def words(self, rules: Rules) -> list[str]:
        if self.heard:
            return [f"Thanks, {self.player}."]
        return [f"I could not catch it, {self.player}; I will go by how your name usually sounds."]


@dataclass(frozen=True)
class SayAcesAs:
    """The preset's word for aces is one the speech engine cannot hear (the leaflet's jokers)."""

    word: str  # one it can: "ones"

    def words(self, rules: Rules) -> list[str]:
        return [f"I cannot hear the word {rules.ace_word}: say {self.word} instead, three {self.word} "
                f"for three {rules.ace_word}."]


@dataclass(frozen=True)
class WhoCallsCalza:
    example: str  # a player who may call it

    def words(self, rules: Rules) -> list[str]:
        return [f"Who calls calza? Say your name and calza, like {self.example} calza."]


@dataclass(frozen=True)
class NumberWhileBidding:
    """A bare number before anyone challenged."""

    value: int
    turn: str
    opening: bool = False  # no bid yet, so nothing to call dudo on

    def words(self, rules: Rules) -> list[str]:
        what = "your bid" if self.opening else "bid or call dudo"
        return [f"{number_words(self.value).capitalize()} is not a call. {self.turn}, {what}."]


@dataclass(frozen=True)
class HandsStayHidden:
    """A player's dice said before anyone challenged."""

    def words(self, rules: Rules) -> list[str]:
        return ["Nobody has challenged yet: keep your dice hidden!"]


@dataclass(frozen=True)
class PalificoInfo:
    """The answer to "palifico?"."""

    palifico_player: str | None  # whose palifico round this is, if it is one
    players_left: int

    def words(self, rules: Rules) -> list[str]:
        if self.palifico_player is not None:
            return [f"Yes: this is {self.palifico_player}'s palifico round."]
        if not rules.palifico:
            return [f"There are no palifico rounds under the {rules_words(rules)}."]
        if self.players_left < rules.palifico_min_players:
            return [f"This is not a palifico round: there are none with fewer than "
                    f"{number_words(rules.palifico_min_players)} players left."]
        when = "first drops to one die" if rules.palifico_once else "drops from two dice to one"
        return [f"This is not a palifico round; palifico comes when a player {when}."]


# --- the count ------------------------------------------------------------------------------

# The dice an example hand shows. Not a one first: spoken right after a name ("Ana one
# five..."), a recogniser can drop it.
EXAMPLE_HAND = (5, 5, 3, 1, 2, 6) * 3


@dataclass(frozen=True)
class CountPrompt:
    """Ask for the count; `again` repeats what to count (the challenge already said it)."""

    face: int
    aces_wild: bool
    example_player: str
    example_dice: int  # how many dice the example shows
    again: bool = True
    # Said at every challenge, an example hand soon grates: it is given in the first round
    # only.
    with_example: bool = True

    @classmethod
    def of(cls, game: Game, again: bool = True) -> "CountPrompt":
        """The prompt for the challenge in play, its example the first player's dice."""
        assert game.challenge is not None
        first = game.active_players[0]
        return cls(game.challenge.face, game.challenge.aces_wild, first, game.dice[first], again,
                   with_example=game.round_number <= 1)

    def words(self, rules: Rules) -> list[str]:
        return [self.sentence(rules)]

    def sentence(self, rules: Rules) -> str:
        what = face_to_count(self.face, self.aces_wild, rules.ace_word)
        question = f"How many {what}?"
        if not self.aces_wild and self.face != 1:  # not "How many threes only, pacos are not wild?"
            question = f"How many {face_words(self.face)}? {rules.ace_word.capitalize()} are not wild."
        example = " ".join(str(face) for face in EXAMPLE_HAND[: self.example_dice])
        ask = f"{question} Say the number" if self.again else "Say the count"
        if not self.with_example:
            return f"{ask}, or each player's dice."
        return f"{ask}, or each player's dice, like {self.example_player} {example}."


@dataclass(frozen=True)
class CupsAreUp:
    """A bid after the challenge."""

    prompt: CountPrompt

    def words(self, rules: Rules) -> list[str]:
        return [f"The cups are up. {self.prompt.sentence(rules)}"]


@dataclass(frozen=True)
class CountRuledOut:
    """A count the dice already said make impossible."""

    value: int
    low: int
    high: int
    shown_by: tuple[str, ...]
    missing: tuple[str, ...]
    dice_said: int = 2  # how many dice those players' hands hold

    def words(self, rules: Rules) -> list[str]:
        # "Ana's and Ben's dice already count four": "Ana and Ben already show four" is heard
        # as "show fours"
        owners = join_and([player + "'s" for player in self.shown_by])
        dice = f"{owners} die already counts" if self.dice_said == 1 else f"{owners} dice already count"
        low, high = number_words(self.low), number_words(self.high)
        again = f"Say the count again, or the dice of {join_and(self.missing)}."
        if not rules.announce_dice_in_play:  # the most the count can be would tell the hidden dice in play
            if self.value > self.high:
                return [f"The count cannot be {number_words(self.value)}: that is more than the dice said "
                        f"and the dice still hidden can show. {again}"]
            return [f"{dice} {low}, so the count is at least {low}, not {number_words(self.value)}. {again}"]
        # "between three and eight": "three to eight" is heard as three numbers
        return [f"{dice} {low}, so the count is between {low} and {high}, not {number_words(self.value)}. {again}"]


def faces_said(dice: Sequence[int]) -> str:
    """A hand's faces as read back: "five, five, three"."""
    return ", ".join(number_words(d) for d in dice)


def dice_words(dice: Sequence[int]) -> str:
    """"dice: five, five, three", or "die: four" for a hand of one."""
    return f"{'die' if len(dice) == 1 else 'dice'}: {faces_said(dice)}"


@dataclass(frozen=True)
class GotHand:
    """One player's dice, read back so a hand heard under the wrong name is caught at once."""

    player: str
    dice: tuple[int, ...]
    missing: tuple[str, ...]
    replaced: tuple[int, ...] | None = None  # the other dice said for this player before

    def words(self, rules: Rules) -> list[str]:
        got = f"Got {self.player}'s {dice_words(self.dice)}"
        if self.replaced is not None:  # said aloud: a hand heard under the wrong name shows
            got += f" (in place of {faces_said(self.replaced)})"
        return [f"{got}. Still need {join_and(self.missing)}." if self.missing else f"{got}."]


@dataclass(frozen=True)
class CameraFailed:
    error: str
    prompt: CountPrompt

    def words(self, rules: Rules) -> list[str]:
        return [f"The camera failed: {self.error}. {self.prompt.sentence(rules)}"]


@dataclass(frozen=True)
class CameraCannotCount:
    reason: str
    prompt: CountPrompt

    def words(self, rules: Rules) -> list[str]:
        return [f"I cannot count this one: {self.reason}. {self.prompt.sentence(rules)}"]


@dataclass(frozen=True)
class CameraSaw:
    count: int
    face: int
    aces_wild: bool

    def words(self, rules: Rules) -> list[str]:
        ace_word = rules.ace_word
        wild = self.aces_wild and self.face != 1
        if not self.count:  # not "no fives, pacos included", as if pacos were seen
            also = f" and no {ace_word}" if wild else ""
            return [f"I see no {face_words(self.face, 2, ace_word)}{also}."]
        seen = f"I see {bid_words(Bid(self.count, self.face), ace_word)}"
        return [seen + (f", {ace_word} included." if wild else ".")]


# --- where the game stands ------------------------------------------------------------------

@dataclass(frozen=True)
class Status:
    """Where the game stands, as "status" answers it."""

    winner: str | None
    challenge: ChallengeCalled | None  # at a reveal
    count_prompt: CountPrompt | None  # at a reveal
    hands_said: tuple[tuple[str, tuple[int, ...]], ...]  # at a reveal: the dice said so far, by player
    hands_missing: tuple[str, ...]
    round_number: int
    last_bid: Bid | None
    last_bidder: str | None
    turn: str
    palifico_player: str | None  # in a palifico round
    dice: tuple[tuple[str, int], ...]  # each player still in, and their dice
    dice_in_play: int
    camera_looks: bool = False  # at a reveal: the camera is about to count, not the players
    lift_cups: bool = False  # at a reveal picked up again: the cups may be back down
    face_changers: tuple[str, ...] = ()  # in a palifico round: who may change the face
    out: tuple[str, ...] = ()  # players knocked out

    @classmethod
    def of(cls, game: Game, hands_said: Mapping[str, tuple[int, ...]] | None = None) -> "Status":
        """The game as it stands; `hands_said`: the dice said so far at a reveal."""
        reveal = game.phase is Phase.REVEAL
        hands_said = dict(hands_said or {}) if reveal else {}
        return cls(
            winner=game.winner if game.phase is Phase.OVER else None,
            challenge=game.challenge if reveal else None,
            count_prompt=CountPrompt.of(game) if reveal else None,
            hands_said=tuple(hands_said.items()),
            hands_missing=tuple(p for p in game.active_players if p not in hands_said) if reveal else (),
            round_number=game.round_number,
            last_bid=game.last_bid,
            last_bidder=game.last_bidder,
            turn=game.turn,
            palifico_player=game.palifico_player if game.is_palifico_round else None,
            dice=tuple((p, game.dice[p]) for p in game.active_players),
            dice_in_play=game.dice_in_play,
            face_changers=game.face_changers(),
            out=tuple(p for p in game.players if game.dice[p] == 0),
        )

    def words(self, rules: Rules) -> list[str]:
        return [self.sentence(rules)]

    def sentence(self, rules: Rules, brief: bool = False) -> str:
        """`brief`: whose call it is and on what, without the palifico rule and the dice held
        (nothing of those changed: after a question dropped, say)."""
        ace = rules.ace_word
        if self.winner is not None:
            return f"The game is over: {self.winner} won."
        parts = []
        if self.challenge is not None and self.count_prompt is not None:
            # At a reveal, only what the table needs to go on: said aloud, every word waits
            c = self.challenge
            parts.append(f"{c.player} called {c.kind} on {c.bidder}'s {bid_words(Bid(c.count, c.face), ace)}.")
            if self.camera_looks or self.lift_cups:
                parts.append("Lift the cups.")
            if self.hands_said:  # the players are saying their dice: read back, then the rest, please
                (first, dice), *others = self.hands_said
                got = "; ".join([f"Got {first}'s {dice_words(dice)}",
                                 *(f"{player}'s: {faces_said(held)}"
                                   for player, held in others)])
                parts.append(f"{got}. Still need {join_and(self.hands_missing)}.")
            elif not self.camera_looks:  # the players count
                parts.append(self.count_prompt.sentence(rules))
            return " ".join(parts)
        if self.last_bid is None:
            parts.append(f"Round {number_words(self.round_number)}, no bid yet. {self.turn} opens.")
        else:
            parts.append(f"The bid is {bid_words(self.last_bid, ace)} by {self.last_bidder}. "
                         f"{self.turn}, your call.")
        if brief:
            return " ".join(parts)
        if self.palifico_player is not None:
            rule = palifico_rules(self.palifico_player, rules, self.face_changers, [p for p, _ in self.dice])
            parts.append(f"Palifico round for {self.palifico_player}: {rule}.")
        if rules.announce_dice_in_play:  # hidden dice (a pouch, a lid) stay hidden
            # "Ana has five dice, Ben four": "Ana five, Ben four" is heard as two bids
            (first, held), *others = self.dice
            holdings = join_and([f"{first} has {count_of(held)}", *(f"{p} {number_words(n)}" for p, n in others)])
            parts.append(f"{holdings}; {count_of(self.dice_in_play)} in play.")
        elif self.out:  # how many each holds stays hidden, but not who is still playing
            parts.append(f"{join_and(self.out)} {'is' if len(self.out) == 1 else 'are'} out.")
        return " ".join(parts)


@dataclass(frozen=True)
class Repeated:
    """What was said last, said again on "repeat", marked so: "Ben loses a die" heard twice
    must not sound like a second die lost, nor "Undone: ..." like a second undo."""

    said: tuple  # the announcements, as said

    def words(self, rules: Rules) -> list[str]:
        # (a resumed game's line is said again as where the game stands, without "Resuming the game")
        said = tuple(dataclasses.replace(a, said_again=True) if isinstance(a, Resumed) else a for a in self.said)
        again = sentences(said, rules)
        return [f"Again: {again[0]}", *again[1:]] if again else []


@dataclass(frozen=True)
class Resumed:
    status: Status
    # the challenge the round before ended on, and how it ended, when no round is under way
    last_round: tuple[ChallengeCalled, EventsHappened] | None = None
    damaged: bool = False  # the journal's last lines were damaged and dropped: the game is from before them
    said_again: bool = False  # on "repeat"

    def words(self, rules: Rules) -> list[str]:
        before = ""
        if self.damaged:  # the screen says which lines; the table needs to know to check
            before = (" Part of the saved game was damaged and is lost: it goes on from an"
                      " earlier point, so check everyone's dice.")
        if self.last_round is not None:
            # which bid was challenged, and by whom (days later, nobody recalls), then how
            # it ended: "Three counted: ..."
            c, ended = self.last_round
            bid = bid_words(Bid(c.count, c.face), rules.ace_word)
            said = " ".join(ended.words(rules))
            before += f" Last round, {c.player} called {c.kind} on {c.bidder}'s {bid}. {said}"
        # a won game is resumed to take back its last count
        after = " Say 'take it back' to undo the last count." if self.status.winner else ""
        opening = "" if self.said_again else "Resuming the game."
        return [f"{opening}{before} {self.status.sentence(rules)}{after}".lstrip()]


@dataclass(frozen=True)
class GameStopped:
    """The game cannot go on (the journal cannot be written, a device was lost): said aloud,
    for a table that listens rather than reads the screen."""

    why: str  # "I cannot save any more calls"
    started: bool = True  # False: stopped before the first call (nothing was saved)
    saved: bool = True  # False: the game so far could not be kept anywhere

    def words(self, rules: Rules) -> list[str]:
        if not self.started:
            return [f"I cannot start the game: {self.why}. The screen says why."]
        if not self.saved:
            return [f"I have to stop: {self.why}, and could not keep the game anywhere. The screen says why."]
        return [f"I have to stop: {self.why}. The game is saved up to the last call I answered; "
                "the screen says how to go on."]


Announcement = Union[
    EventsHappened, Refused, GameIsOver, NewGameNotYet, TookBack, SayAgain, NotUnderstood, AskToConfirm,
    NothingToConfirm, NothingToCancel, Declined, StillAsking, QuestionDropped, HandTakenBack,
    SayYourName, NameLearned, SayAcesAs, WhoCallsCalza,
    NumberWhileBidding, HandsStayHidden, PalificoInfo, CountPrompt, CupsAreUp, CountRuledOut,
    GotHand, CameraFailed, CameraCannotCount, CameraSaw, Status, Resumed, Repeated, GameStopped]


def sentences(announcements: Sequence[Announcement], rules: Rules) -> list[str]:
    """Every sentence of these announcements, in order (announcements with nothing to say
    give none)."""
    return [s for a in announcements for s in a.words(rules) if s]
