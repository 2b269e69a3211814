"""The referee: calls in, events out, and everything said in between.

It is the only place that knows about prompts, read-backs, "say again", confirmations and
asking for the count. The rules core decides; the referee asks it, applies what is allowed,
journals the events first (so a crash loses nothing) and then announces them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Callable, Mapping, Protocol, Sequence

from companion.calls import (
    BidCall,
    CalzaCall,
    Call,
    Command,
    CommandCall,
    DudoCall,
    FILLERS,
    HandCall,
    NumberCall,
    PalificoCall,
    UnparsableCall,
    bid_words,
    describe_call,
    face_words,
    number_words,
    parse_call,
    parse_call_or_none,
)
from companion.rules import (
    CALZA,
    DUDO,
    Bid,
    BidAction,
    CalzaCaller,
    ChallengeAction,
    CountAction,
    Game,
    Phase,
    RulesError,
    count_matching,
)
from companion.rules.events import ChallengeCalled, Event, HandShown, Undone
from companion.sources import CallSource, Expect, Utterance
from companion.vision.types import RevealOutcome
from companion.voice.phrases import count_of, describe_events, face_to_count, join_and
from companion.voice.refusals import refusal
from companion.voice.speakers import Speaker


def check_player_names(names: Sequence[str]) -> None:
    """Refuse names the referee could not tell apart from calls ("Five", "Dudo", "Ana Maria")."""
    from companion.calls import parse_call_or_none
    from companion.rules import BadSetup

    for name in names:
        if len(name.split()) != 1 or not name.replace("-", "").replace("'", "").isalpha():
            raise BadSetup(f"player names must be single words of letters; {name!r} is not")
        if parse_call_or_none(name) is not None:
            raise BadSetup(f"{name!r} sounds like a call; choose another name for that player")


class EventSink(Protocol):
    def append(self, events: Sequence[Event]) -> None: ...


class CountSource(Protocol):
    """Something that can read the dice at a reveal (the camera)."""

    def reveal(self, expected_total: int, save_dir: Path | None = None,
               round_number: int | None = None) -> RevealOutcome: ...


SAY_AGAIN = "Sorry, say again?"


def changes_nothing(call: Call) -> bool:
    """A question to the referee: answering it leaves the game as it was."""
    return isinstance(call, PalificoCall) or (
        isinstance(call, CommandCall) and call.name in (Command.STATUS, Command.REPEAT))


class Hearing(Enum):
    """What the referee does with a heard call, by how sure the recogniser is of it."""

    IGNORE = "ignore"  # passed over in silence: chatter forced into the grammar
    SAY_AGAIN = "say again"  # never applied
    ASK = "ask"  # "Did you say ...?", applied after a "yes"
    APPLY = "apply"


@dataclass(frozen=True)
class RefereeSettings:
    # Speech below `ignore_below` confidence is table chatter forced into the grammar and is
    # passed over in silence; below `reject_below` it is never applied ("say again"); below
    # `confirm_below` it is applied only after a "yes". Typed calls are always trusted.
    # The scale is the bundled call recogniser's calibrated probability that the call is
    # right, fitted on voices its network never trained on (companion.listen.engine).
    ignore_below: float = 0.2
    reject_below: float = 0.5
    confirm_below: float = 0.7
    # One short word gives a recogniser little to be sure of, and a call that can never get
    # through stalls the game or leaves a question unanswered. So from this line a heard
    # dudo or calza gets "Did you say dudo?" instead of silence or "say again", and a
    # question that changes nothing (status, repeat, palifico) is simply answered.
    short_calls_from: float = 0.1
    reveal_dir: Path | None = None  # where annotated reveal pictures are kept

    def hearing(self, call: Call, confidence: float, asking: bool = False,
                settles: bool = False) -> Hearing:
        """The one rule for a heard call (the speech benchmark scores it too); `asking`: a
        "Did you say ...?" waits for its answer; `settles`: the call decides the challenge
        (as a spoken count always does)."""
        if confidence >= self.short_calls_from and changes_nothing(call):
            return Hearing.APPLY  # a wrong answer costs a sentence, a question a round trip
        if (asking and isinstance(call, CommandCall) and call.name is Command.NO
                and confidence >= self.short_calls_from):
            return Hearing.APPLY  # declining changes nothing, and one short "no" scores low
        if isinstance(call, CommandCall) and call.name in (Command.YES, Command.NO):
            # An answer to "Did you say ...?" is never itself asked about.
            return Hearing.APPLY if confidence >= self.reject_below else (
                Hearing.IGNORE if confidence < self.ignore_below else Hearing.SAY_AGAIN)
        short = confidence >= self.short_calls_from and isinstance(call, (DudoCall, CalzaCall))
        if confidence < self.ignore_below and not short:
            return Hearing.IGNORE
        if confidence < self.reject_below and not short:
            return Hearing.SAY_AGAIN
        if confidence < self.confirm_below or settles or isinstance(call, NumberCall):
            # The count decides who loses a die, and a wrong one can be heard confidently
            # (espeak's "twenty" as "twenty eight" at 0.93): it is always read back first.
            return Hearing.ASK
        return Hearing.APPLY


class Referee:
    def __init__(
        self,
        game: Game,
        speaker: Speaker,
        journal: EventSink | None = None,
        counter: CountSource | None = None,
        settings: RefereeSettings = RefereeSettings(),
        log: Callable[[str], None] | None = None,
        hands: Mapping[str, tuple[int, ...]] | None = None,
    ) -> None:
        self.game = game
        self.speaker = speaker
        self.journal = journal
        self.counter = counter
        self.settings = settings
        self._log = log or (lambda text: None)
        self._last_said: list[str] = []
        self._hands: dict[str, tuple[int, ...]] = dict(hands or {})  # said so far at a reveal
        self._pending: Call | None = None  # a doubtful call waiting for "yes"
        self._camera_due = False  # a challenge was announced: the camera reads the reveal next
        self._source: CallSource | None = None

    # --- the loop ------------------------------------------------------------------------

    def run(self, source: CallSource, resumed: bool = False) -> Game:
        """Run until the input ends; returns the game as it stands. A won game still
        listens, so a misheard final count can be undone."""
        self._source = source
        if resumed:
            self.say([f"Resuming the game. {self.status_sentence()}"])
        else:
            self.say(describe_events(self.game.events, self.game.rules))
        while True:
            source.expect(self.expecting())
            utterance = source.next_utterance()
            if utterance is None:
                break
            self.hear(utterance)
        return self.game

    def say(self, sentences: Sequence[str]) -> None:
        sentences = [s for s in sentences if s]
        if not sentences:
            return
        if sentences != [SAY_AGAIN]:  # "repeat" after "say again" repeats what came before
            self._last_said = list(sentences)
        text = " ".join(sentences)
        if self._source is not None:
            self._source.mute()  # never hear ourselves
        try:
            self.speaker.say(text)
        finally:
            if self._source is not None:
                self._source.unmute()

    # --- understanding -------------------------------------------------------------------

    def hear(self, utterance: Utterance) -> None:
        """Handle one typed line or spoken utterance, saying whatever needs saying."""
        self.say(self.respond(utterance))
        if self._camera_due:
            # Only now, with "lift the cups" said, is there anything for the camera to see.
            self._camera_due = False
            self.say(self._camera_count())

    def respond(self, utterance: Utterance) -> list[str]:
        """What to say to one utterance (a challenge it makes leaves the camera due: hear()
        reads it once this has been said)."""
        self._camera_due = False
        players = self.game.players
        if utterance.typed:
            try:
                call = parse_call(utterance.text, players)
            except UnparsableCall as err:
                return [self._not_understood(utterance.text, err)]
            return self.handle(call)

        if not utterance.text.strip():
            self._log("(heard nothing that is a call)")
            return []
        call = self.choose(utterance)
        if call is None:
            self._log(f"(not a call: {utterance.text!r})")
            return []
        confidence = utterance.confidence if utterance.confidence is not None else 1.0
        settles = isinstance(call, HandCall) and self.game.phase is Phase.REVEAL and (
            self._hands_missing() == [self.game.player_named(call.player)])
        hearing = self.settings.hearing(call, confidence, asking=self._pending is not None, settles=settles)
        if hearing is Hearing.IGNORE:
            self._log(f"(too unsure to be a call: {utterance.text!r}, confidence {confidence:.2f})")
            return []
        if hearing is Hearing.SAY_AGAIN:
            return [SAY_AGAIN]
        if hearing is Hearing.ASK and not self.makes_sense(call):
            # Refused as it is, no question about a call that cannot stand; a question
            # already waiting still waits.
            pending, refused = self._pending, self.handle(call)
            self._pending = pending
            return refused
        if (hearing is Hearing.ASK and isinstance(call, CalzaCall) and call.speaker is None
                and self.game.rules.calza_caller is not CalzaCaller.NEXT_PLAYER
                and len(self._calza_callers()) > 1):
            return self.handle(call)  # "Who calls calza?" asks all a "Did you say calza?" would
        if hearing is Hearing.ASK:
            self._pending = call
            return [f"Did you say {describe_call(call, self.game.rules.ace_word)}?"]
        return self.handle(call)

    def _not_understood(self, text: str, err: UnparsableCall) -> str:
        """Why a typed line is not a call, as precisely as can be told."""
        players = self.game.players
        words = text.strip().split()
        known = {p.lower() for p in players}
        # A capitalised word the referee does not know, where a player's name would make
        # the line a call ("Dave calza", "calza Dave", "Dave 1 2 3 4 5"), is a wrong name.
        for i in (0, len(words) - 1) if len(words) > 1 else ():
            word = words[i].strip(".,!?")
            rest = words[1:] if i == 0 else words[:-1]
            if (word[:1].isupper() and word.isalpha() and word.lower() not in known
                    and parse_call_or_none(word) is None and word.lower() not in FILLERS
                    and parse_call_or_none(" ".join([players[0], *rest] if i == 0 else [*rest, players[0]]),
                                           players) is not None):
                return f"There is no player called {word}; the players are {join_and(players)}."
        if words and err.why == "nothing was said":  # a name alone
            return f"Say the call after the name, like {players[0]} calza."
        why = "" if err.why == UnparsableCall(text).why else f" ({err.why})"
        return f"Sorry, I did not understand {text!r}{why}. Say it again?"

    def choose(self, utterance: Utterance) -> Call | None:
        """Pick the call among the recogniser's guesses: the best one, unless it makes no
        sense now and a close alternative does. A clearly heard illegal bid is kept, so it
        is reported as illegal rather than swapped for a legal one."""
        players = self.game.players
        best = parse_call_or_none(utterance.text, players)
        if best is not None and (self.makes_sense(best) or (utterance.confidence or 0) >= self.settings.confirm_below):
            return best
        for text in utterance.alternatives:
            call = parse_call_or_none(text, players)
            if call is not None and self.makes_sense(call):
                return call
        return best

    def expecting(self) -> Expect:
        """What can be said now: the count after a challenge, otherwise calls."""
        return Expect.COUNT if self.game.phase is Phase.REVEAL else Expect.CALLS

    def makes_sense(self, call: Call) -> bool:
        """Would this call be allowed now? Used only to rank a recogniser's guesses."""
        game = self.game
        if isinstance(call, CommandCall):
            return call.name not in (Command.YES, Command.NO) or self._pending is not None
        if game.phase is Phase.BIDDING:
            if isinstance(call, BidCall):
                player = call.speaker or game.turn
                return player == game.turn and game.bid_problem(player, call.bid) is None
            if isinstance(call, CalzaCall) and call.speaker is None and (
                    game.rules.calza_caller is not CalzaCaller.NEXT_PLAYER):
                return bool(self._calza_callers())  # anyone's who may call it (see _calza)
            if isinstance(call, (DudoCall, CalzaCall)):
                kind = DUDO if isinstance(call, DudoCall) else CALZA
                return game.challenge_problem(kind, call.speaker or game.turn) is None
            return False
        if game.phase is Phase.REVEAL:
            if isinstance(call, NumberCall):
                low, high = self._count_bounds() if self._hands else (0, game.dice_in_play)
                return low <= call.value <= high
            if isinstance(call, HandCall):
                try:
                    game.check_hands({call.player: call.dice})
                except RulesError:
                    return False
                return True
            return False
        return False

    # --- acting --------------------------------------------------------------------------

    def handle(self, call: Call) -> list[str]:
        """Apply a call that was understood; returns what to say."""
        game = self.game
        if isinstance(call, CommandCall):
            return self._command(call)
        if isinstance(call, PalificoCall):  # a question: a call waiting for "yes" still waits
            return [self._palifico_sentence()]
        self._pending = None
        if game.phase is Phase.OVER:
            return [f"The game is over: {game.winner} won. Say 'take it back' to undo the last count."]
        try:
            if isinstance(call, BidCall):
                return self._bid(call)
            if isinstance(call, DudoCall):
                return self._challenge(DUDO, call.speaker or game.turn)
            if isinstance(call, CalzaCall):
                return self._calza(call)
            if isinstance(call, NumberCall):
                return self._count(call.value)
            if isinstance(call, HandCall):
                return self._hand(call)
        except RulesError as error:
            return [refusal(error, game.rules)]
        return []

    def _apply(self, action) -> list[str]:
        challenge = self.game.challenge  # what a count settles: said as a dudo's or a calza's
        events = self.game.apply(action)
        self._record(events)
        return describe_events(events, self.game.rules, calza=challenge is not None and challenge.kind == CALZA)

    def _record(self, events: Sequence[Event]) -> None:
        if self.journal is not None:
            self.journal.append(events)

    def _bid(self, call: BidCall) -> list[str]:
        game = self.game
        if game.phase is Phase.REVEAL:
            return [f"The cups are up. {self._count_prompt()}"]
        player = game.player_named(call.speaker) if call.speaker else game.turn
        return self._apply(BidAction(player, call.bid))  # an IllegalBid is said by handle()

    def _calza(self, call: CalzaCall) -> list[str]:
        game = self.game
        if call.speaker:
            return self._challenge(CALZA, game.player_named(call.speaker))
        if game.rules.calza_caller is CalzaCaller.NEXT_PLAYER:
            return self._challenge(CALZA, game.turn)
        if not game.rules.calza:
            return [f"Calza is not played under the {game.rules.name} rules."]
        eligible = self._calza_callers()
        if len(eligible) == 1:
            return self._challenge(CALZA, eligible[0])
        if not eligible:
            problem = game.challenge_problem(CALZA, game.turn)
            return [refusal(problem, game.rules)] if problem else []
        return [f"Who calls calza? Say your name and calza, like {eligible[0]} calza."]

    def _calza_callers(self) -> list[str]:
        return [p for p in self.game.active_players if self.game.challenge_problem(CALZA, p) is None]

    def _challenge(self, kind: str, player: str) -> list[str]:
        said = self._apply(ChallengeAction(kind, player))
        self._hands = {}
        if self.counter is None:
            return said + [self._count_prompt(again=False)]
        self._camera_due = True
        return said

    def _camera_count(self) -> list[str]:
        game = self.game
        challenge = game.challenge
        assert challenge is not None
        try:
            outcome = self.counter.reveal(game.dice_in_play, self.settings.reveal_dir, game.round_number)
        except Exception as error:  # a camera failing mid-game must not end the game
            self._log(f"(camera failed: {error})")
            return [f"The camera failed: {error}. {self._count_prompt()}"]
        if outcome.reading is None:
            return [f"I cannot count this one: {outcome.reason}. {self._count_prompt()}"]
        count = count_matching(outcome.reading.faces, challenge.face, challenge.aces_wild)
        ace_word = game.rules.ace_word
        seen = f"I see {bid_words(Bid(count, challenge.face), ace_word)}" if count else \
            f"I see no {face_words(challenge.face, 2, ace_word)}"
        if challenge.aces_wild and challenge.face != 1:
            seen += f", {ace_word} included"
        seen += "."
        return [seen] + self._apply(CountAction(count, None, "camera", outcome.reading.faces))

    def _count_prompt(self, again: bool = True) -> str:
        """Ask for the count; `again` repeats what to count (the challenge already said it)."""
        challenge = self.game.challenge
        assert challenge is not None
        what = face_to_count(challenge.face, challenge.aces_wild, self.game.rules.ace_word)
        first = self.game.active_players[0]
        # Not a one first: spoken right after a name ("Ana one five..."), a recogniser can
        # drop it.
        example = " ".join(str(face) for face in ((5, 5, 3, 1, 2, 6) * 3)[: self.game.dice[first]])
        ask = f"How many {what}? Say the number" if again else "Say the count"
        return f"{ask}, or each player's dice, like {first} {example}."

    def _count(self, value: int) -> list[str]:
        if self.game.phase is not Phase.REVEAL:
            return [f"{number_words(value).capitalize()} is not a call. "
                    f"{self.game.turn}, bid or call dudo."]
        if self._hands:  # dice already said bound the count: refuse one they rule out
            low, high = self._count_bounds()
            if not low <= value <= high:
                shown = join_and(list(self._hands))
                return [f"{shown} already {'shows' if len(self._hands) == 1 else 'show'} "
                        f"{number_words(low)}, so the count is {number_words(low)} to "
                        f"{number_words(high)}, not {number_words(value)}. Say the count again, "
                        f"or the dice of {join_and(self._hands_missing())}."]
        return self._apply(CountAction(value))

    def _count_bounds(self) -> tuple[int, int]:
        """The counts the dice said so far allow: what they show, up to every other die
        matching."""
        challenge = self.game.challenge
        assert challenge is not None
        shown = sum(count_matching(d, challenge.face, challenge.aces_wild) for d in self._hands.values())
        return shown, shown + sum(self.game.dice[p] for p in self._hands_missing())

    def _hand(self, call: HandCall) -> list[str]:
        game = self.game
        if game.phase is not Phase.REVEAL:
            return ["Nobody has challenged yet: keep your dice hidden!"]
        checked = game.check_hands({call.player: call.dice})
        self._record([HandShown(player, dice) for player, dice in checked.items()])
        self._hands.update(checked)
        missing = self._hands_missing()
        # Every hand is read back, so a hand heard under the wrong name is caught at once.
        (player, dice), = checked.items()
        got = f"Got {player}'s dice: {', '.join(number_words(d) for d in dice)}."
        if missing:
            return [f"{got} Still need {join_and(missing)}."]
        count, _ = self._count_bounds()  # every hand is in: the bounds meet
        hands, self._hands = self._hands, {}
        return [got, f"That makes {number_words(count)}."] + self._apply(CountAction(count, hands))

    def _hands_missing(self) -> list[str]:
        return [p for p in self.game.active_players if p not in self._hands]

    def _command(self, call: CommandCall) -> list[str]:
        name = call.name
        if name is Command.REPEAT:
            return list(self._last_said) or [self.status_sentence()]
        if name is Command.STATUS:
            return [self.status_sentence()]
        if name is Command.YES:
            pending, self._pending = self._pending, None
            return self.handle(pending) if pending is not None else ["There is nothing to confirm."]
        if name is Command.NO:
            had, self._pending = self._pending, None
            return ["Ignored. Say it again."] if had is not None else ["There is nothing to cancel."]
        return self._undo()

    def _undo(self) -> list[str]:
        self._pending = None
        self._hands = {}
        try:
            action = self.game.undo()
        except RulesError as error:
            return [refusal(error, self.game.rules)]
        self._record([Undone(_action_dict(action))])
        return [f"Undone: {_describe_action(action, self.game.rules.ace_word)}. {self.status_sentence()}"]

    # --- describing the state --------------------------------------------------------------

    def status_sentence(self) -> str:
        game = self.game
        ace = game.rules.ace_word
        if game.phase is Phase.OVER:
            return f"The game is over: {game.winner} won."
        parts = []
        if game.phase is Phase.REVEAL:
            challenge = game.challenge
            assert challenge is not None
            parts.append(f"{challenge.player} called {challenge.kind} on {challenge.bidder}'s "
                         f"{bid_words(Bid(challenge.count, challenge.face), ace)}. {self._count_prompt()}")
            if self._hands:
                got = join_and([f"{player}'s" for player in self._hands])
                parts.append(f"Got {got} dice. Still need {join_and(self._hands_missing())}.")
        else:
            if game.last_bid is None:
                parts.append(f"Round {number_words(game.round_number)}, no bid yet. {game.turn} opens.")
            else:
                parts.append(f"The bid is {bid_words(game.last_bid, ace)} by {game.last_bidder}. "
                             f"{game.turn}, your call.")
            if game.is_palifico_round:
                parts.append(f"Palifico round for {game.palifico_player}.")
        if game.rules.announce_dice_in_play:  # hidden dice (a pouch, a lid) stay hidden
            holdings = ", ".join(f"{p} {number_words(game.dice[p])}" for p in game.active_players)
            parts.append(f"Dice: {holdings}; {count_of(game.dice_in_play)} in play.")
        return " ".join(parts)

    def _palifico_sentence(self) -> str:
        game = self.game
        rules = game.rules
        if game.is_palifico_round:
            return f"Yes: this is {game.palifico_player}'s palifico round."
        if not rules.palifico:
            return f"There are no palifico rounds under the {rules.name} rules."
        if len(game.active_players) < rules.palifico_min_players:
            return (f"This is not a palifico round: there are none with fewer than "
                    f"{number_words(rules.palifico_min_players)} players left.")
        return "This is not a palifico round; palifico comes when a player first drops to one die."


def _action_dict(action) -> dict:
    if isinstance(action, BidAction):
        return {"kind": "bid", "player": action.player, "count": action.bid.count, "face": action.bid.face}
    if isinstance(action, ChallengeAction):
        return {"kind": action.kind, "player": action.player}
    return {"kind": "count", "count": action.count}


def _describe_action(action, ace_word: str) -> str:
    if isinstance(action, BidAction):
        return f"{action.player}'s {bid_words(action.bid, ace_word)}"
    if isinstance(action, ChallengeAction):
        return f"{action.player}'s {action.kind}"
    return f"the count of {number_words(action.count)}"
