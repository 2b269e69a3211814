"""The referee: what was heard in, events and announcements out.

It is the one place that knows turns, prompts and asking for the count. The hearing policy
(companion.hearing) says whether to apply a heard call, ask about it or let it pass; the
rules core says whether it is allowed and what happens. The referee applies what is
allowed, journals the events first (so a crash loses nothing) and returns what to announce;
voice/ words it, and the loop in `hear` speaks it. Before the first call it asks each
player to say their name, where the source can learn how it sounds (`learn_names`).

Long: everything the referee says back to the table, and why, is read in this one place.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Protocol, Sequence

from companion.calls import (
    BidCall, CalzaCall, Call, Command, CommandCall, DudoCall, HandCall, NumberCall, PalificoCall,
    describe_call, number_words, parse_call)
from companion.errors import CompanionError
from companion.hearing import (Decision, HearingPolicy, Moment, Verdict, changes_nothing, decide, is_answer,
                               is_challenge_or_undo, is_undo, said_before, says_it_again, unsure_call,
                               why_ignored)
from companion.journal import Resumed
from companion.rules import (
    CALZA, DUDO, Action, BidAction, CallNotAllowed, CalzaCaller, ChallengeAction, ChallengeRefusal, CountAction,
    DudoCaller, Game, Phase, RulesError, count_matching, dice_left_standing, undone_event)
from companion.rules.events import (COUNTED_BY_CAMERA, ChallengeCalled, DiceCounted, Event, HandShown, HandTakenBack,
                                    PlayerEliminated, RoundStarted)
from companion.round_the_table import RoundTheTable, challengers
from companion.rules.names import name_key
from companion.sources import NAME_PHRASES, CallSource, Expect, Heard, Utterance
from companion.vision.types import RevealOutcome
from companion.voice import announcements as announce
from companion.voice.announcements import Announcement
from companion.voice.speakers import Speaker


# Tries a player gets to say each of NAME_PHRASES before the game, as many as a player at the
# table gives a line (companion.demo.TRIES) before moving on.
NAME_TRIES = 3


class EventSink(Protocol):
    def append(self, events: Sequence[Event]) -> None: ...


class CountSource(Protocol):
    """Something that can read the dice at a reveal (the camera)."""

    def reveal(self, expected_total: int, save_dir: Path | None = None,
               round_number: int | None = None, *, say_total: bool = True,
               latest_round: int | None = None) -> RevealOutcome: ...


@dataclass(frozen=True)
class RefereeSettings:
    hearing: HearingPolicy = HearingPolicy()  # typed calls are always trusted
    reveal_dir: Path | None = None  # where annotated reveal pictures are kept
    # The word to say for the preset's aces where the speech engine cannot hear the preset's
    # own (the leaflet's "jokers"): told to the table as the game starts.
    say_aces_as: str | None = None
    # Calls can be typed (a typed game, or a terminal beside the microphone): a won game's
    # log line says `new game` plays again.
    can_type: bool = False


@dataclass(frozen=True)
class Outcome:
    """What one utterance did: the events applied (already journalled) and what to say."""

    events: tuple[Event, ...] = ()
    announcements: tuple[Announcement, ...] = ()
    camera_due: bool = False  # a challenge was called: the camera reads the reveal once said


class Referee:
    def __init__(
        self,
        game: Game,
        speaker: Speaker,
        journal: EventSink | None = None,
        counter: CountSource | None = None,
        settings: RefereeSettings = RefereeSettings(),
        log: Callable[[str], None] | None = None,
        resumed: Resumed | None = None,  # the journal's game picked up: what it says of the reveal
    ) -> None:
        self.game = game
        self.speaker = speaker
        self.journal = journal
        self.counter = counter
        self.settings = settings
        self._log = log or (lambda text: None)
        self._last_said: tuple[Announcement, ...] = ()
        self._hands: dict[str, tuple[int, ...]] = dict(resumed.hands) if resumed else {}  # said so far at a reveal
        self._count_taken_back = resumed is not None and resumed.count_taken_back
        self._damaged = resumed is not None and resumed.dropped is not None  # said on resuming
        # the dice said before each number counted that stands (see _undo)
        self._under_counts: list[dict[str, tuple[int, ...]]] = list(resumed.under_counts) if resumed else []
        self._pending: Call | None = None  # a doubtful call waiting for "yes"
        self._not_answered = 0  # spoken utterances since the question that were no answer to it
        self._asked_again = 0  # times running the question was asked again ("Sorry, yes or no")
        # the latest round the table has rolled for (see _record), before a pause too
        self._latest_round = resumed.latest_round if resumed else game.round_number
        self._unsure: Call | None = None  # the last utterance's call, dropped as unsure
        self._declined: Call | None = None  # the call just answered "no", until the next call
        self._round = RoundTheTable()  # whom a call heard without its caller's name is asked about
        self._camera_due = False
        self._held = False  # the current utterance's move was held back by the question again
        self._question_asked_at: float | None = None  # when the question waiting was first asked
        self._events: list[Event] = []  # journalled while answering the current utterance
        self._source: CallSource | None = None
        # "new game" was typed at a won game: `run` returns, for the same table to play again
        self.new_game_wanted = False
        self.names_asked: set[str] = set()  # the players asked to say their names, this game or before

    # --- the loop: hear, decide, speak --------------------------------------------------------

    def run(self, source: CallSource, resumed: bool = False, names_asked: frozenset[str] = frozenset()) -> Game:
        """Run until the input ends, or "new game" is typed at a won game; returns the game as
        it stands. A won game still listens, so a misheard final count can be undone.
        `names_asked`: players whose names this source was already given (an earlier game
        of the evening), not asked again."""
        self._source = source
        self.names_asked = set(names_asked)
        if not self.learn_names(source):
            return self.game
        aces_as = [announce.SayAcesAs(self.settings.say_aces_as)] if self.settings.say_aces_as else []
        # one announcement, so that "repeat" says the start (or where a resume stands) with it
        self.say((self._resume() if resumed else [announce.EventsHappened(tuple(self.game.events))]) + aces_as)
        if resumed and self._camera_due_on_resuming():
            self._camera_looks()
        was_over = False
        while not self.new_game_wanted:
            if self.game.phase is Phase.OVER and not was_over and self.settings.can_type:
                self._log(f"companion: {self.game.winner} won; type new game to play again with the same players")
            was_over = self.game.phase is Phase.OVER
            source.expect(self.expecting(), self.hand_sizes())
            utterance = source.next_utterance()
            if utterance is None:
                break
            self.hear(utterance)
        return self.game

    def _resume(self) -> list[Announcement]:
        """Where the game stands, said on resuming; first the count of a reveal whose every
        hand was said before the stop (a kill between the last hand and the count it made)."""
        said: list[Announcement] = []
        if self.game.phase is Phase.REVEAL and self._hands and not self._hands_missing():
            said = self._settle_from_hands()
        elif self.game.phase is Phase.REVEAL and not self._hands:  # the cups may be back down
            looks = replace(self.status(), camera_looks=self._camera_due_on_resuming(), lift_cups=True)
            return [announce.Resumed(looks, damaged=self._damaged)]
        return [*said, announce.Resumed(self.status(), None if said else self._last_round(), self._damaged)]

    def _camera_due_on_resuming(self) -> bool:
        """Stopped at a reveal before the camera looked (or while the players were told it
        could not), nobody's dice said yet: it looks as the game resumes, at this round's dice.
        Not where the players took back a count of it: they overruled the camera, and count."""
        return (self.game.phase is Phase.REVEAL and not self._hands and self.counter is not None
                and not self._count_taken_back)

    def _last_round(self) -> tuple[ChallengeCalled, announce.EventsHappened] | None:
        """The last challenge and how it ended, when the game stands at a new round's start:
        a game stopped as that was said (or days ago) is picked up knowing who lost the die."""
        events = self.game.events
        if self.game.phase is not Phase.BIDDING or self.game.last_bid is not None:
            return None
        counted = [i for i, e in enumerate(events) if isinstance(e, DiceCounted)]
        if not counted:
            return None
        challenge = next(e for e in reversed(events[:counted[-1]]) if isinstance(e, ChallengeCalled))
        outcome = tuple(e for e in events[counted[-1]:] if not isinstance(e, RoundStarted))
        return challenge, announce.EventsHappened(outcome, challenge.kind == CALZA)

    def learn_names(self, source: CallSource) -> bool:
        """Before play, where the source can learn from it, each player still in says their
        name before each of NAME_PHRASES ("Ana calza", "Ana one two three"), so the engine
        knows the name by their own voice. Nothing said here is a call: the game is
        untouched. False when the input ended on the way."""
        for i, player in enumerate(p for p in self._players_to_learn() if p not in self.names_asked):
            self.names_asked.add(player)
            learnt = 0
            for j, (phrase, expect) in enumerate(NAME_PHRASES):
                said = f"{player} {phrase}"
                wanted = parse_call(said, self.game.players)
                sizes = frozenset({len(wanted.dice)}) if isinstance(wanted, HandCall) else frozenset()
                attempt = 0
                while attempt < NAME_TRIES:
                    source.expect(expect, sizes)
                    if not source.learn_name(player, phrase):
                        return True  # typed input, or an engine with nothing to learn
                    self.say([announce.SayYourName(said, player, first=i == j == attempt == 0,
                                                   again=attempt > 0)])
                    utterance = source.next_utterance()
                    if utterance is None:
                        return False
                    heard = Heard.from_utterance(utterance, self.game.players)
                    if heard.best == wanted:
                        learnt += 1
                        break
                    # "repeat", heard as surely as the game answers it, asks for the words again
                    # without using a try (a cough faintly read as it still uses one)
                    again = (isinstance(heard.best, CommandCall) and heard.best.name is Command.REPEAT
                             and (heard.typed or (heard.confidence or 0.0) >= self.settings.hearing.short_calls_from))
                    attempt += 0 if again else 1
                    self._log(f"(not {said!r}: {heard.text!r})")
            self.say([announce.NameLearned(player, learnt)])
        return True

    def _players_to_learn(self) -> list[str]:
        """The players still in; in a finished game, with the last one out, whom the "take
        it back" that a won game is resumed for brings back."""
        players = list(self.game.active_players)
        if self.game.phase is Phase.OVER:
            last_out = next((e.player for e in reversed(self.game.events) if isinstance(e, PlayerEliminated)), None)
            if last_out is not None:
                players = [p for p in self.game.players if p in players or p == last_out]
        return players

    def hear(self, utterance: Utterance | Heard) -> None:
        """Handle one typed line or spoken utterance, saying whatever needs saying."""
        if isinstance(utterance, Utterance):
            utterance = Heard.from_utterance(utterance, self.game.players)  # the one parse
        outcome = self.respond(utterance)
        self.say(outcome.announcements)
        if outcome.camera_due:
            # Only now, with "lift the cups" said, is there anything for the camera to see.
            self._camera_looks()

    def _camera_looks(self) -> None:
        """The camera reads the reveal just said, and what it saw is said; "repeat" then says
        the two together, the challenge (or where a resumed game stands) with the count."""
        before = self._last_said
        self.say(self.read_camera().announcements)
        if before and self._last_said is not before:
            self._last_said = before + self._last_said

    def say(self, announcements: Sequence[Announcement]) -> None:
        text = " ".join(announce.sentences(announcements, self.game.rules))
        if not text:
            return
        if all(isinstance(a, announce.Declined) for a in announcements):
            self._last_said = ()  # "repeat" then says where the game stands, not the question declined
        elif not all(isinstance(a, (announce.SayAgain, announce.Repeated)) for a in announcements):
            # "repeat" after "say again" (or after "repeat": not "Again: Again: ...") repeats before
            self._last_said = tuple(announcements)
        if self._source is not None:
            self._source.mute()  # never hear ourselves
        try:
            self.speaker.say(text)
        finally:
            if self._source is not None:
                self._source.unmute()

    def expecting(self) -> Expect:
        """What can be said now: the count after a challenge, otherwise calls."""
        return Expect.COUNT if self.game.phase is Phase.REVEAL else Expect.CALLS

    def hand_sizes(self) -> frozenset[int]:
        """How many dice a hand said now can hold: as many as a player in the game has (a
        hand already said may be said again); empty while bidding."""
        if self.game.phase is not Phase.REVEAL:
            return frozenset()
        return frozenset(self.game.dice[p] for p in self.game.active_players)

    # --- deciding -----------------------------------------------------------------------------

    def respond(self, heard: Heard) -> Outcome:
        """What one utterance does; a challenge it makes leaves the camera due (`hear` reads
        it once the challenge has been said)."""
        self._camera_due, self._events = False, []
        if self._round.who_calls_open:
            heard = _names_who_calls(heard, self.game.players)
        moment = Moment(asking=self._pending is not None, allowed=self._allowed,
                        settles=self._settles, asks_back=self._asks_back, named=self._named,
                        unsure_before=self._unsure, declined=self._declined,
                        who_calls_asked=self._round.who_calls_open,
                        question_asked_at=self._question_asked_at if self._pending is not None else None)
        decision = decide(heard, moment, self.settings.hearing)
        self._unsure = unsure_call(heard, decision, self.settings.hearing)
        if decision.verdict is not Verdict.IGNORE:
            self._declined = None  # once: the next call heard, taken or not, ends it
        asked, self._held = self._pending, False
        announcements = self._act_on(heard, decision)
        lapsed = self._let_question_lapse(asked, heard, decision) or self._stop_asking_again(asked, announcements)
        if lapsed:  # not "First: did you say ...?" (or "Sorry, yes or no: ...") and at once "Not taken"
            announcements = [a for a in announcements if not isinstance(a, (announce.StillAsking, announce.AskedAgain))]
        announcements += lapsed
        return Outcome(tuple(self._events), tuple(announcements), self._camera_due)

    def _act_on(self, heard: Heard, decision: Decision) -> list[Announcement]:
        call = decision.call
        if decision.verdict is Verdict.IGNORE:
            self._log(why_ignored(heard, call, self._pending is not None, self._question_asked_at))
            if (self._pending is not None and heard.spoken and call is not None and is_answer(call)
                    and not said_before(heard, self._question_asked_at)):
                # a "yes" too faint to take, or chatter read as one: the question again (it
                # counts towards the lapse, so chatter cannot hold the question open)
                return [announce.AskedAgain(self._pending)]
            return []
        if decision.verdict is Verdict.SAY_AGAIN:
            if isinstance(call, NumberCall) and not self._allowed(call):
                self._round.count_refused(call.value)  # (told to say it again: next, offered round again)
            if self._pending is not None:
                return [announce.AskedAgain(self._pending)]
            if call is not None:
                return [announce.SayAgain(at_reveal=self.game.phase is Phase.REVEAL and not isinstance(call, CommandCall))]
            return [announce.NotUnderstood(heard.text, heard.unparsable or "", self.game.players,
                                           heard.unknown_player, self._named_example(heard.text),
                                           at_reveal=self.game.phase is Phase.REVEAL)]
        assert call is not None
        pending = self._pending
        if pending is not None and call != pending and self._same_call(call, pending):
            call = pending  # "Ben dudo" after "Did you say dudo?", where only Ben may call it
        if pending is not None and call == pending and (
                says_it_again(call, heard, self.settings.hearing, self._names_no_less)
                or (decision.verdict is Verdict.APPLY and _move(call))):
            self._pending = None
            return self._handle(pending)  # said again, and clearly: that is a yes
        if pending is not None and call == pending and is_challenge_or_undo(call):
            return [announce.AskedAgain(pending)]  # "dudo!" again, unclear: "Sorry, yes or no: ..."
        if pending is not None and is_undo(pending) and _move(call) and decision.sure and self._allowed(call):
            # The table plays on, clearly, past "Did you say take it back?" (chatter is heard
            # as it surely): the question is dropped, said aloud, and the move taken as ever.
            self._pending = None
            return [announce.QuestionDropped(pending, self.status()), *self._act_on(heard, decision)]
        if pending is not None and _move(call) and call != pending and (
                decision.verdict in (Verdict.ASK, Verdict.APPLY)) and (
                _turn_move(pending) or _another_fact(pending, call) or is_undo(pending)):
            # Whose turn it is, and what the next move raises or challenges, hang on the
            # answer: a move taken now would go to the wrong player or the wrong bid. At a
            # reveal, another player's dice or a count would leave the question's "yes" to
            # the wrong call.
            self._held = True
            return [announce.StillAsking(pending)]
        if decision.verdict is Verdict.ASK:
            # (asked again later, by "Sorry, yes or no" or with where the game stands, it is
            # still the question asked now: a "yes" said after now answers it)
            self._pending, self._question_asked_at = call, time.monotonic()
            return [announce.AskToConfirm(call)]
        if decision.verdict is Verdict.REFUSE or (pending is not None and _move(call) and not self._allowed(call)):
            # said why, as it is; a question waiting still waits
            if isinstance(call, NumberCall):
                self._round.count_refused(call.value)
            refused = self._handle(call)
            self._pending = pending
            return refused
        return self._handle(call)

    def _named_example(self, said: str = "") -> str | None:
        """A call a player's name leads now, for the hint to a name said alone: a hand at a
        reveal, else a calza or (where anyone may call it) a dudo someone may call. The
        player named, where the call is theirs to make."""
        game = self.game
        named = _player_said_alone(said, game.players)
        if game.phase is Phase.REVEAL and game.challenge is not None:
            prompt = self._count_prompt()
            player = named if named in game.active_players else prompt.example_player
            dice = announce.EXAMPLE_HAND[:game.dice[player]]
            return f"{player} {' '.join(number_words(d) for d in dice)}"
        if game.phase is not Phase.BIDDING:
            return None
        for kind, allowed in ((CALZA, game.rules.calza), (DUDO, game.rules.dudo_caller is DudoCaller.ANYONE)):
            callers = challengers(game, kind) if allowed else []
            if callers:
                return f"{named if named in callers else callers[0]} {kind}"
        return None

    def _same_call(self, call: Call | None, other: Call | None) -> bool:
        """Two hearings of one call: equal, or the same challenge where one names the only
        player who may make it now and the other names nobody ("Ben dudo" and "dudo" where
        only the player to move, Ben, may call dudo)."""
        if call == other:
            return True
        if not (isinstance(call, (DudoCall, CalzaCall)) and type(call) is type(other)):
            return False
        assert other is not None
        callers = challengers(self.game, DUDO if isinstance(call, DudoCall) else CALZA)
        if len(callers) != 1 or (call.speaker is None) == (other.speaker is None):
            return False
        return name_key(call.speaker or other.speaker or "") == name_key(callers[0])

    def _names_no_less(self, asked: Call, said: Call | None) -> bool:
        """`said` is the call `asked` about, and names its caller where the question's name
        may be the referee's guess: a bare repeat of "Did you say Cleo calza?" (a bare calza
        is given to the one player who may call it, under rules where others may too) may
        still be another's, name unheard. A dudo's name, and a calza's where only the player
        to move may call it, are never guessed: "dudo!" confirms "Did you say Ben dudo?"."""
        if said == asked:
            return True
        guessed = isinstance(asked, CalzaCall) and self.game.rules.calza_caller is not CalzaCaller.NEXT_PLAYER
        return self._same_call(said, asked) and (getattr(asked, "speaker", None) is None or not guessed)

    def _stop_asking_again(self, asked: Call | None, said: list[Announcement]) -> list[Announcement]:
        """Drop a question asked again `asked_again_at_most` times running (an answer too faint
        to take, over and over, in noise), saying so: "Not taken" asks the table nothing, and
        the call can be made afresh."""
        if asked is None or self._pending is not asked or not any(isinstance(a, announce.AskedAgain) for a in said):
            self._asked_again = 0
            return []
        self._asked_again += 1
        if self._asked_again < self.settings.hearing.asked_again_at_most:
            return []
        return self._drop_question(asked, f"asked again {self._asked_again} times")

    def _let_question_lapse(self, asked: Call | None, heard: Heard, decision: Decision) -> list[Announcement]:
        """Count the spoken utterances that went by a waiting question, and drop it after
        `question_lapses_after` of them (a new question starts the count again), saying so:
        the table must know that call was not taken."""
        if asked is None or self._pending is not asked:
            self._not_answered = 0
            return []
        chatter_held = self._held and not decision.sure and _turn_move(decision.call)
        heard_at_all = decision.verdict is not Verdict.IGNORE
        if (self._held and not chatter_held) or not heard.spoken or (
                heard_at_all and decision.call is not None and (is_answer(decision.call) or changes_nothing(decision.call)
                                                                or self._same_call(decision.call, asked))):
            # typed, silence, a beep, an answer, the asked call said again, "repeat", or a move
            # held back by asking the question again: nobody talked past it unheard. A bid or
            # challenge held back that was heard unsure ("whose go is it" faintly read as
            # dudo) is chatter, and counts;
            # a hand or a count at a reveal is read back unsure even when right, and does not.
            # A faint answer is asked for again; one below the line of calls at all ("did you
            # see the match" read as a "no" at 0.00) is chatter, and counts.
            return []
        self._not_answered += 1
        if self._not_answered < self.settings.hearing.question_lapses_after:
            return []
        return self._drop_question(asked, f"{self._not_answered} utterances went by the question")

    def _drop_question(self, asked: Call, why: str) -> list[Announcement]:
        """The question lapses, said aloud: its call was never taken."""
        self._log(f"(no longer asking about {describe_call(asked, self.game.rules.ace_word)}: {why})")
        self._pending, self._asked_again, self._not_answered = None, 0, 0
        return [announce.QuestionDropped(asked, self.status())]

    def _allowed(self, call: Call) -> bool:
        """Would the rules take this move now? (Questions are not moves; "take it back" is
        taken where there is something in the game to take back: a question waiting, which
        it takes back too, is the hearing's to know.)"""
        game = self.game
        if is_undo(call):
            return bool(game.actions or self._hands)
        if game.phase is Phase.BIDDING:
            if isinstance(call, BidCall):
                player = call.speaker or game.turn
                return player == game.turn and game.bid_problem(player, call.bid) is None
            if isinstance(call, CalzaCall) and call.speaker is None and (
                    game.rules.calza_caller is not CalzaCaller.NEXT_PLAYER):
                return bool(challengers(game, CALZA))  # anyone's who may call it (see _calza)
            if isinstance(call, (DudoCall, CalzaCall)):
                kind = DUDO if isinstance(call, DudoCall) else CALZA
                return game.challenge_problem(kind, call.speaker or game.turn) is None
        elif game.phase is Phase.REVEAL:
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

    def _settles(self, call: Call) -> bool:
        """The last missing hand decides the challenge."""
        return isinstance(call, HandCall) and self.game.phase is Phase.REVEAL and (
            self._hands_missing() == [self.game.player_named(call.player)])

    def _asks_back(self, call: Call) -> bool:
        """A bare calza that several may call is answered with "Who calls calza?"."""
        return (isinstance(call, CalzaCall) and call.speaker is None
                and self.game.rules.calza_caller is not CalzaCaller.NEXT_PLAYER
                and len(challengers(self.game, CALZA)) > 1)

    def _named(self, call: Call) -> Call:
        # (ruled out by the total only where the total is told: the question would tell it;
        # not while a question waits: held behind it, a number heard in chatter would keep it open)
        not_the_count = (isinstance(call, NumberCall) and self.game.phase is Phase.REVEAL and self._pending is None
                         and (bool(self._hands) or self.game.rules.announce_dice_in_play)
                         and not self._allowed(call))
        return self._round.named(self.game, call, self._declined, self._hands_missing(), not_the_count)

    # --- acting -------------------------------------------------------------------------------

    def _handle(self, call: Call) -> list[Announcement]:
        """Apply a call that was understood; returns what to announce."""
        game = self.game
        if isinstance(call, CommandCall):
            return self._command(call)
        if isinstance(call, PalificoCall):  # a question: a call waiting for "yes" still waits, and is said so
            palifico = game.palifico_player if game.is_palifico_round else None
            return [announce.PalificoInfo(palifico, len(game.active_players)), *self._questions_waiting()]
        self._pending = None
        if game.phase is Phase.OVER:
            return [announce.GameIsOver(game.winner)]
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
            return [announce.Refused(error)]
        return []

    def _apply(self, action: Action) -> list[Announcement]:
        challenge = self.game.challenge  # what a count settles: said as a dudo's or a calza's
        events = self.game.apply(action)
        self._record(events)
        calza = challenge is not None and challenge.kind == CALZA
        return [announce.EventsHappened(tuple(events), calza, self.game.face_changers())]

    def _record(self, events: Sequence[Event]) -> None:
        # the latest round the table has rolled for, taken back since or not: its dice are
        # the ones on the table, whatever round a reveal done again belongs to
        self._latest_round = max([self._latest_round, *(e.number for e in events if isinstance(e, RoundStarted))])
        self._round.moved(len(events))
        self._events.extend(events)
        if self.journal is not None:
            self.journal.append(events)

    def _bid(self, call: BidCall) -> list[Announcement]:
        game = self.game
        if game.phase is Phase.REVEAL:
            return [announce.CupsAreUp(self._count_prompt())]
        player = game.player_named(call.speaker) if call.speaker else game.turn
        if call.bid == game.last_bid and game.last_bidder is not None and player == game.turn:
            return [announce.BidStands(call.bid, game.last_bidder, game.turn)]
        return self._apply(BidAction(player, call.bid))  # an IllegalBid is refused by _handle

    def _calza(self, call: CalzaCall) -> list[Announcement]:
        game = self.game
        if call.speaker:
            return self._challenge(CALZA, game.player_named(call.speaker))
        if game.rules.calza_caller is CalzaCaller.NEXT_PLAYER:
            return self._challenge(CALZA, game.turn)
        if not game.rules.calza:
            # (at any moment: that it is not played says more than that now is not the time)
            return [announce.Refused(CallNotAllowed(CALZA, game.turn, ChallengeRefusal.CALZA_NOT_PLAYED))]
        eligible = challengers(game, CALZA)
        if len(eligible) == 1:  # typed (a heard one is named, and asked about, first)
            return self._challenge(CALZA, eligible[0])
        if not eligible:
            problem = game.challenge_problem(CALZA, game.turn)
            return [announce.Refused(problem)] if problem else []
        self._round.asked_who_calls()
        return [self._who_calls_calza()]

    def _who_calls_calza(self) -> announce.WhoCallsCalza:
        return announce.WhoCallsCalza(self._round.who_calls_example(self.game))

    def _challenge(self, kind: str, player: str) -> list[Announcement]:
        said = self._apply(ChallengeAction(kind, player))
        self._hands = {}
        if self.counter is None:
            return said + [self._count_prompt(again=False)]
        self._camera_due = True
        return said

    def read_camera(self) -> Outcome:
        """Count the revealed dice from the camera, or ask the players when it cannot."""
        game, challenge = self.game, self.game.challenge
        assert challenge is not None and self.counter is not None
        self._events = []
        try:
            outcome = self.counter.reveal(game.dice_in_play, self.settings.reveal_dir, game.round_number,
                                          say_total=game.rules.announce_dice_in_play, latest_round=self._latest_round)
        except CompanionError as error:  # a camera failing mid-game must not end the game
            self._log(f"(camera failed: {error})")
            return Outcome(announcements=(announce.CameraFailed(str(error), self._count_prompt()),))
        except Exception as error:  # noqa: BLE001 - nor must a fault in the code that reads it
            # whose trace is kept on the terminal for a report; the table hears no Python
            self._log(f"(camera failed: {error!r})\n{traceback.format_exc().rstrip()}")
            return Outcome(announcements=(announce.CameraFailed("something went wrong in reading the dice",
                                                                self._count_prompt()),))
        if outcome.reading is None:
            cannot = announce.CameraCannotCount(outcome.reason, self._count_prompt())
            return Outcome(announcements=(cannot,))
        count = count_matching(outcome.reading.faces, challenge.face, challenge.aces_wild)
        try:
            applied = self._apply(CountAction(count, None, COUNTED_BY_CAMERA, outcome.reading.faces))
        except RulesError as error:  # a reading that is not the dice in play settles nothing
            self._log(f"(camera reading refused: {error})")
            from companion.vision.reveal import not_in_play  # the camera's words: loaded with the camera

            reason = not_in_play(outcome.reading.total, game.dice_in_play, game.rules.announce_dice_in_play)
            return Outcome(announcements=(announce.CameraCannotCount(reason, self._count_prompt()),))
        said = [announce.CameraSaw(count, challenge.face, challenge.aces_wild), *applied]
        return Outcome(tuple(self._events), tuple(said))

    def _count_prompt(self, again: bool = True) -> announce.CountPrompt:
        return announce.CountPrompt.of(self.game, again)

    def _count(self, value: int) -> list[Announcement]:
        if self.game.phase is not Phase.REVEAL:
            return [announce.NumberWhileBidding(value, self.game.turn, opening=self.game.last_bid is None)]
        if self._hands:  # dice already said bound the count: refuse one they rule out
            low, high = self._count_bounds()
            if not low <= value <= high:
                missing = tuple(self._hands_missing())
                said = sum(len(dice) for dice in self._hands.values())
                return [announce.CountRuledOut(value, low, high, tuple(self._hands), missing, said)]
        said = self._apply(CountAction(value))
        # the count settled the reveal: the dice said before it are done with, unless the
        # count is taken back (see _undo)
        self._under_counts.append(self._hands)
        self._hands = {}
        return said

    def _count_bounds(self) -> tuple[int, int]:
        """The counts the dice said so far allow: what they show, up to every other die
        matching."""
        challenge = self.game.challenge
        assert challenge is not None
        shown = sum(count_matching(d, challenge.face, challenge.aces_wild) for d in self._hands.values())
        return shown, shown + sum(self.game.dice[p] for p in self._hands_missing())

    def _hand(self, call: HandCall) -> list[Announcement]:
        game = self.game
        if game.phase is not Phase.REVEAL:
            return [announce.HandsStayHidden()]
        checked = game.check_hands({call.player: call.dice})
        self._record([HandShown(player, dice) for player, dice in checked.items()])
        (player, dice), = checked.items()
        before = self._hands.pop(player, None)  # kept in the order last said, so "take it back" takes the last
        self._hands.update(checked)
        missing = self._hands_missing()
        got = announce.GotHand(player, dice, tuple(missing), before if before != dice else None)
        return [got] if missing else [got, *self._settle_from_hands()]

    def _settle_from_hands(self) -> list[Announcement]:
        """The count every player's dice make, applied (every hand is in: the bounds meet)."""
        count, _ = self._count_bounds()
        hands, self._hands = self._hands, {}
        return self._apply(CountAction(count, hands))  # said as "Eight counted: ..."

    def _hands_missing(self) -> list[str]:
        return [p for p in self.game.active_players if p not in self._hands]

    def _command(self, call: CommandCall) -> list[Announcement]:
        name = call.name
        if name is Command.REPEAT:
            return [announce.Repeated(self._last_said)] if self._last_said else self._where_we_are()
        if name is Command.STATUS:
            return self._where_we_are()
        if name is Command.YES:
            pending, self._pending = self._pending, None
            return self._handle(pending) if pending is not None else [announce.NothingToConfirm()]
        if name is Command.NEW_GAME:
            if self.game.phase is not Phase.OVER:  # this game would be left behind, unfinished
                return [announce.NewGameNotYet(self.status())]
            self._pending, self.new_game_wanted = None, True
            return []  # the next game says its own start
        if name is Command.NO:
            had, self._pending = self._pending, None
            self._declined = had
            self._round.answered_no(self.game, had)
            if had is None and self._round.who_calls_open:  # "Who calls calza?" "No": nobody did
                self._round.drop_who_calls()
                return [announce.QuestionDropped(CalzaCall(), self.status())]
            if had is None:
                return [announce.NothingToCancel()]
            return [announce.Declined(at_reveal=isinstance(had, (NumberCall, HandCall)))]
        if self._pending is not None:  # "take it back" while asking takes back the question
            had, self._pending = self._pending, None
            return [announce.QuestionDropped(had, self.status())]
        if self._round.who_calls_open:  # ... and "Who calls calza?"
            self._round.drop_who_calls()
            return [announce.QuestionDropped(CalzaCall(), self.status())]
        if self.game.phase is Phase.REVEAL and self._hands:  # ... and at a reveal, the last hand
            player = list(self._hands)[-1]
            del self._hands[player]
            self._record([HandTakenBack(player)])
            return [announce.HandTakenBack(player, tuple(self._hands_missing()))]
        return self._undo()

    def _where_we_are(self) -> list[Announcement]:
        """Where the game stands, and the question waiting, if one is: it still waits."""
        return [self.status(), *self._questions_waiting()]

    def _questions_waiting(self) -> list[Announcement]:
        """The question the referee waits for an answer to, asked again (or nothing)."""
        if self._pending is not None:
            return [announce.AskToConfirm(self._pending)]
        if self._round.who_calls_open:
            return [self._who_calls_calza()]
        return []

    def _undo(self) -> list[Announcement]:
        self._pending = None
        self._hands = {}
        try:
            action = self.game.undo()
        except RulesError as error:
            return [announce.Refused(error)]
        number = isinstance(action, CountAction) and action.said_as_number
        said_before = self._under_counts.pop() if number and self._under_counts else {}
        kept = dice_left_standing(action, said_before)  # a new dict: _hands changes, the line does not
        self._record([replace(undone_event(action), hands=kept or None)])
        self._hands = dict(kept)
        return [announce.TookBack(action, self.status())]

    def status(self) -> announce.Status:
        return announce.Status.of(self.game, self._hands)


def _move(call: Call) -> bool:
    """A call that changes the game (not a question, an answer or a command)."""
    return not isinstance(call, (CommandCall, PalificoCall))


def _another_fact(asked: Call, heard: Call) -> bool:
    """At a reveal: `heard` is not `asked` said another way (a count for the count, a
    player's dice for that player's), so it cannot take the asked call's place."""
    if isinstance(asked, NumberCall):
        return isinstance(heard, HandCall)
    if isinstance(asked, HandCall):
        return isinstance(heard, NumberCall) or (isinstance(heard, HandCall) and heard.player != asked.player)
    return False


def _turn_move(call: Call) -> bool:
    """A move whose player and effect depend on whose turn it is and on the last bid."""
    return isinstance(call, (BidCall, DudoCall, CalzaCall))


def _names_who_calls(heard: Heard, players: Sequence[str]) -> Heard:
    """A player's name typed alone in answer to "Who calls calza?" is that player's calza. (A
    spoken name alone is no call the recogniser gives.)"""
    if not heard.typed or heard.unparsable is None:
        return heard
    name = _player_said_alone(heard.text, players)
    return Heard.from_text(f"{name} calza", players, heard.origin) if name else heard


def _player_said_alone(text: str, players: Sequence[str]) -> str | None:
    """The player whose name a line is, alone ("Cleo", "cleo!"); None if it is no name."""
    said = name_key(text.strip().strip(".,!?"))
    return next((p for p in players if name_key(p) == said), None)
