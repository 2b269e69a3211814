"""The hearing policy: what to do with one heard utterance, given what the game expects.

One pure function, `decide`, used by the referee and by the speech benchmark alike, so the
benchmark scores the rule the game is played by. Typed lines are always trusted; speech is
applied, asked about ("Did you say ...?"), answered with "say again" or passed over, by the
recogniser's confidence and by whether the call makes sense at this moment.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from enum import Enum
from typing import Callable

from companion.calls import BidCall, CalzaCall, Call, Command, CommandCall, DudoCall, HandCall, NumberCall, PalificoCall
from companion.sources import Heard


class Verdict(Enum):
    IGNORE = "ignore"  # passed over in silence: nothing heard, no call, or chatter
    SAY_AGAIN = "say again"  # never applied (a typed line: why it is no call)
    ASK = "ask"  # "Did you say ...?", applied after a "yes"
    REFUSE = "refuse"  # not allowed now: told why at once; a question already waiting still waits
    APPLY = "apply"


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    call: Call | None = None  # the call chosen among the guesses (None: there was none)
    # Heard as itself, name and all, at the line of calls taken unasked (a dudo is asked
    # about however sure); False where the call is refused or said again.
    sure: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class HearingPolicy:
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
    # A hand said at the reveal ("Ben four four four two six") is five words, each of which
    # may be misheard, so its confidence is low even when every word is right, and says
    # little about whether it is. It is read back anyway ("Did you say ...?") below
    # `confirm_below`, so from this line it is asked about instead of "say again": a wrong
    # one costs a "no", and a player asked to repeat a hand that is never sure enough
    # stalls the reveal.
    hands_from: float = 0.2
    # A person who is not understood says the call again, and a recogniser that is unsure of
    # a voice tends to be unsure in the same way each time. So the same call heard in two
    # utterances in a row, each from this line, is asked about ("Did you say ...?") instead
    # of being dropped a second time: the question costs a "yes", never a wrong move.
    repeated_from: float = 0.02
    # A "Did you say ...?" waits through this many spoken utterances that are no answer to it
    # (chatter included), then lapses: a "yes" said to a neighbour long after must not apply
    # a call the table has moved on from. One or two leave room for "what?" or a cough.
    question_lapses_after: int = 3
    # A question asked again ("Sorry, yes or no: ...") this many times running is dropped: in
    # noise an answer can stay too faint to take, and the table must not be held there.
    asked_again_at_most: int = 5

    @classmethod
    def for_speech(cls) -> "HearingPolicy":
        """The lines for speech: they belong to the engines' confidence scale, so they are
        set where that scale is fitted (companion.listen.engine), and read here only."""
        from companion.listen.engine import ENGINE_CONFIRM, ENGINE_HANDS, ENGINE_SHORT_CALLS, ENGINE_THRESHOLD

        return cls(reject_below=ENGINE_THRESHOLD, confirm_below=ENGINE_CONFIRM,
                   short_calls_from=ENGINE_SHORT_CALLS, hands_from=ENGINE_HANDS)


def _always(call: Call) -> bool:
    return True


def _never(call: Call) -> bool:
    return False


def _itself(call: Call) -> Call:
    return call


@dataclass(frozen=True)
class Moment:
    """What the game expects as the utterance arrives (the referee fills it in; without a
    game, as in the benchmark, every call is taken to make sense)."""

    asking: bool = False  # a "Did you say ...?" waits for its answer
    allowed: Callable[[Call], bool] = _always  # would the rules take this move now?
    settles: Callable[[Call], bool] = _never  # does this call decide the challenge?
    # The referee answers this call with a question of its own ("Who calls calza?"), so a
    # "Did you say ...?" first would ask twice.
    asks_back: Callable[[Call], bool] = _never
    # The call the utterance before was heard as and not taken (see `unsure_call`).
    unsure_before: Call | None = None
    # The call as this moment names its caller: a bare calza only one player may call is
    # theirs ("calza" -> "Cleo calza"), and asked about by name, never applied unasked.
    named: Callable[[Call], Call] = _itself
    # The call the players just answered "no" to. Heard again at once, it is most likely
    # the same mishearing of the words said again: another reading is preferred, and
    # without one it is not asked about again straight away.
    declined: Call | None = None
    # "Who calls calza?" waits ("take it back" then takes back only that question).
    who_calls_asked: bool = False
    # When the "Did you say ...?" waiting was first asked (time.monotonic()), where known.
    question_asked_at: float | None = None


def changes_nothing(call: Call) -> bool:
    """A question to the referee: answering it leaves the game as it was."""
    return isinstance(call, PalificoCall) or (
        isinstance(call, CommandCall) and call.name in (Command.STATUS, Command.REPEAT))


def decide(heard: Heard, moment: Moment = Moment(), policy: HearingPolicy = HearingPolicy()) -> Decision:
    """The one rule for what was heard: apply, ask, refuse, say again or ignore."""
    if heard.typed:
        best = heard.best
        return Decision(Verdict.APPLY, best) if best is not None else Decision(Verdict.SAY_AGAIN)
    if not heard.spoken:
        # Silence, or a sound with no voice in it (a beep, a clatter), is no call, whatever
        # it read as: calls are said aloud to the whole table, not whispered.
        return Decision(Verdict.IGNORE)
    chosen = choose(heard, moment, policy)
    if chosen is None:
        return Decision(Verdict.IGNORE)
    if is_answer(chosen) and said_before(heard, moment.question_asked_at):
        # said before the question it would answer was asked (talk at the table as the
        # referee began: "yeah, fours again"): a "yes" in it confirms a call nobody confirmed
        return Decision(Verdict.IGNORE, chosen)
    call = moment.named(chosen)
    drops_a_question = takes_back_a_question(call, moment)
    verdict = by_confidence(call, heard.confidence or 0.0, policy, moment.asking or drops_a_question,
                            moment.settles(call))
    sure = (heard.confidence or 0.0) >= policy.confirm_below and call == chosen == heard.best
    if verdict is Verdict.APPLY and (chosen != heard.best or call != chosen) and not (
            changes_nothing(call) or is_answer(call) or drops_a_question):
        # The confidence is the best reading's, and of the words heard: another reading, or
        # a caller's name the words lacked, has not earned it. It is asked about instead.
        verdict = Verdict.ASK
    if call == moment.declined and verdict in (Verdict.ASK, Verdict.APPLY) and not (
            call == chosen and declined_but_meant(call, heard, moment, policy)):
        verdict = Verdict.SAY_AGAIN
    if verdict in (Verdict.SAY_AGAIN, Verdict.IGNORE) and (
            heard_twice(call, heard, moment, policy) or corrects_a_hand(call, heard, moment, policy)):
        # A question to the referee is answered, never read back ("Did you say repeat?"),
        # and only when heard over the line of calls at all: two faint pieces of chatter
        # ("not again") are no question.
        if not changes_nothing(call):
            verdict = Verdict.ASK
        elif verdict is Verdict.SAY_AGAIN:
            verdict = Verdict.APPLY
    if verdict is Verdict.ASK and not makes_sense(call, moment):
        # No question about a call that cannot stand: it is refused, and why. A bid heard
        # unsure that cannot stand is more likely misheard ("four sixes" as "fourteen sixes")
        # than said, and its refusal would answer a bid nobody made: "say again"; heard the
        # same again, it is refused (a player who did bid it learns what may be bid).
        # So with any other call heard unsure: table talk is heard as counts and challenges
        # ("hmm" as a count of ten at a reveal of six dice, chatter before the first bid as
        # calza), and a refusal nobody asked for talks over the call being said.
        # With a question waiting, it is more likely a garbled answer ("yes, dudo" heard as
        # "Dev dudo", which only Ben may call): the question again, not a refusal.
        talk_reads_as = isinstance(call, (NumberCall, DudoCall, CalzaCall)) and not sure
        misheard = (call != moment.unsure_before and (isinstance(call, BidCall) or talk_reads_as)) or (
            moment.asking and not sure)
        return Decision(Verdict.SAY_AGAIN if misheard else Verdict.REFUSE, call)
    if verdict is Verdict.ASK and moment.asks_back(call):
        return Decision(Verdict.APPLY, call)
    if verdict is Verdict.ASK and drops_who_calls(call, moment):
        return Decision(Verdict.APPLY, call)  # it takes back only "Who calls calza?", as with any question
    if verdict is Verdict.APPLY and makes_sense(call, moment) and read_back_however_sure(call, moment) and (
            not moment.asks_back(call)):  # "Who calls calza?" is the question
        verdict = Verdict.ASK  # (one the rules refuse is refused, and why)
    return Decision(verdict, call, sure=sure)


def said_before(heard: Heard, asked_at: float | None) -> bool:
    """Did the utterance end before the question asked at `asked_at`, to be heard after it?"""
    return heard.ended_at is not None and asked_at is not None and heard.ended_at < asked_at


def why_ignored(heard: Heard, call: Call | None, asking: bool = False, asked_at: float | None = None) -> str:
    """What the log says of an utterance passed over (Verdict.IGNORE), `call` its decision's,
    `asking`: whether a question was waiting, first asked at `asked_at`."""
    if not heard.text.strip():
        return "(heard nothing that is a call)"
    if heard.voiced is False:
        return f"(no voice in that sound, so no call: it read as {heard.text!r})"
    if call is None:
        return f"(not a call: {heard.text!r})"
    if is_answer(call) and asking and said_before(heard, asked_at):
        return f"(said before I asked, so {heard.text!r} answers nothing)"
    if is_answer(call) and not asking:
        return f"(nothing was asked, so {heard.text!r} answers nothing)"
    return f"(too unsure to be a call: {heard.text!r}, confidence {heard.confidence or 0:.3f})"


def heard_twice(call: Call, heard: Heard, moment: Moment, policy: HearingPolicy) -> bool:
    """The same call as the utterance before, which was not taken either: worth a question,
    when it makes sense now and no question is waiting."""
    return (call == moment.unsure_before and not moment.asking and makes_sense(call, moment)
            and (heard.confidence or 0.0) >= policy.repeated_from and not is_answer(call))


def corrects_a_hand(call: Call, heard: Heard, moment: Moment, policy: HearingPolicy) -> bool:
    """Other dice for the player whose dice were just read back wrong: the player saying them
    again after their "no". A hand's confidence stays low even when every die is right, and
    a question costs a "yes", never a wrong count."""
    declined = moment.declined
    return (isinstance(call, HandCall) and isinstance(declined, HandCall) and call.player == declined.player
            and call.dice != declined.dice and (heard.confidence or 0.0) >= policy.repeated_from
            and makes_sense(call, moment))


def unsure_call(heard: Heard, decision: Decision, policy: HearingPolicy) -> Call | None:
    """What to remember of this utterance for the next one: the call it was heard as, if it
    was dropped (said again or passed over) and heard from `policy.repeated_from`."""
    if heard.typed or decision.verdict not in (Verdict.SAY_AGAIN, Verdict.IGNORE):
        return None
    if decision.call is None or is_answer(decision.call):
        return None
    return decision.call if (heard.confidence or 0.0) >= policy.repeated_from else None


def is_answer(call: Call) -> bool:
    return isinstance(call, CommandCall) and call.name in (Command.YES, Command.NO)


def is_undo(call: Call) -> bool:
    return isinstance(call, CommandCall) and call.name is Command.UNDO


def takes_back_a_question(call: Call, moment: Moment) -> bool:
    """"Take it back" with a question waiting takes back only the question; "Who calls
    calza?" is taken back so, or answered "no"."""
    return (is_undo(call) and moment.asking) or drops_who_calls(call, moment)


def drops_who_calls(call: Call, moment: Moment) -> bool:
    """"Take it back" or "no" while "Who calls calza?" waits: nobody called it."""
    return moment.who_calls_asked and isinstance(call, CommandCall) and call.name in (Command.NO, Command.UNDO)


def choose(heard: Heard, moment: Moment, policy: HearingPolicy) -> Call | None:
    """Pick the call among the recogniser's guesses: the best one, unless it makes no sense
    now, or was just declined, and a close alternative does not. A clearly heard illegal bid
    is kept, so it is reported as illegal rather than swapped for a legal one; a "yes" or
    "no" with nothing asked is not (it answers nothing)."""
    best = heard.best
    if best is not None and (best != moment.declined or declined_but_meant(best, heard, moment, policy)) and (
            makes_sense(best, moment)
            or ((heard.confidence or 0) >= policy.confirm_below and not is_answer(best))):
        return best
    for guess in heard.guesses[1 if best is not None else 0:]:
        if guess.call != moment.declined and makes_sense(guess.call, moment):
            return guess.call
    return best


def makes_sense(call: Call, moment: Moment) -> bool:
    """Would this call be taken now? Only ranks guesses and spares needless questions."""
    if drops_who_calls(call, moment):
        return True
    if is_undo(call):
        return moment.asking or moment.allowed(call)
    if isinstance(call, CommandCall):
        return not is_answer(call) or moment.asking
    return moment.allowed(call)


def by_confidence(call: Call, confidence: float, policy: HearingPolicy, asking: bool = False,
                  settles: bool = False) -> Verdict:
    """The verdict by the recogniser's confidence alone; `settles`: the call decides the
    challenge (as a spoken count always does)."""
    over_short_line = confidence >= policy.short_calls_from
    if over_short_line and changes_nothing(call):
        return Verdict.APPLY  # a wrong answer costs a sentence, a question a round trip
    if asking and over_short_line and isinstance(call, CommandCall) and call.name in (Command.NO, Command.UNDO):
        # Declining changes nothing, and one short "no" scores low; "take it back" with a
        # question waiting takes back only the question, so it is never asked about either.
        return Verdict.APPLY
    if is_answer(call) and not asking:
        # A spoken "yes" or "no" with no question waiting is table talk ("no way", "do you
        # know"), not a word to the referee: it gets no reply.
        return Verdict.IGNORE
    if is_answer(call):
        # An answer to "Did you say ...?" is never itself asked about.
        return Verdict.APPLY if confidence >= policy.reject_below else (
            Verdict.IGNORE if confidence < policy.ignore_below else Verdict.SAY_AGAIN)
    if isinstance(call, HandCall) and policy.hands_from <= confidence < policy.reject_below:
        return Verdict.ASK
    short = over_short_line and isinstance(call, (DudoCall, CalzaCall))
    if confidence < policy.ignore_below and not short:
        return Verdict.IGNORE
    if confidence < policy.reject_below and not short:
        return Verdict.SAY_AGAIN
    if confidence < policy.confirm_below or settles or isinstance(call, NumberCall):
        # The count decides who loses a die, and a wrong one can be heard confidently
        # (espeak's "twenty" as "twenty eight" at 0.93): it is always read back first.
        return Verdict.ASK
    return Verdict.APPLY


def read_back_however_sure(call: Call, moment: Moment) -> bool:
    """A challenge, which has the cups lifted, and "take it back": table talk is heard as them
    as surely as they are said ("dude, no" as dudo at 0.98, "oh dear" as undo at 0.98, in
    voices the network never trained on), and a round's dice once seen cannot be hidden
    again. Not "take it back" with a question waiting (it takes back only the question)."""
    return is_challenge_or_undo(call) and not takes_back_a_question(call, moment)


def is_challenge_or_undo(call: Call) -> bool:
    return isinstance(call, (DudoCall, CalzaCall)) or is_undo(call)


def declined_but_meant(call: Call, heard: Heard, moment: Moment, policy: HearingPolicy) -> bool:
    """The call just declined, heard again as itself at the line of calls taken unasked, and
    one read back however sure: a dudo is declined as often because nobody called it (chatter
    read as one) as because it was misheard, so the real one after is asked about, not
    turned away as the same mishearing."""
    return (call == moment.declined == heard.best and (heard.confidence or 0.0) >= policy.confirm_below
            and read_back_however_sure(call, moment))


def says_it_again(call: Call, heard: Heard, policy: HearingPolicy,
                  same: Callable[[Call, Call | None], bool] = operator.eq) -> bool:
    """A challenge or "take it back" asked about, heard again as itself as surely as a "yes"
    must be: that is the "yes" ("dudo!" said again). `same` tells two hearings of one call
    apart from two calls ("Ben dudo" is "dudo" where only Ben may call it). Not a count, nor
    the dice that settle a reveal: they are read back because the same voice is misheard the
    same way twice ("twenty" as "twenty eight"), and only a "yes" settles them."""
    return is_challenge_or_undo(call) and same(call, heard.best) and (heard.confidence or 0.0) >= policy.reject_below
