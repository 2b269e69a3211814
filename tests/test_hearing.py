"""The hearing policy on its own: a Heard value and a moment in, a decision out."""

from dataclasses import replace

import pytest

from companion.calls import BidCall, CalzaCall, DudoCall, NumberCall, UnparsableCall, parse_call
from companion.hearing import Decision, HearingPolicy, Moment, Verdict, decide, unsure_call
from companion.rules import Bid
from companion.sources import Guess, Heard, Utterance

PLAYERS = ("Ana", "Ben", "Cleo")


def spoken(text, confidence, *alternatives):
    return Heard.from_speech(text, alternatives, confidence, PLAYERS)


def verdict(text, confidence, moment=Moment()):
    return decide(spoken(text, confidence), moment).verdict


def test_the_rule_for_a_heard_call_by_its_confidence():
    assert [verdict("three fours", c) for c in (0.1, 0.3, 0.6, 0.8)] == [
        Verdict.IGNORE, Verdict.SAY_AGAIN, Verdict.ASK, Verdict.APPLY]
    assert verdict("dudo", 0.15) is Verdict.ASK  # a faint dudo is asked about
    assert verdict("status", 0.15) is Verdict.APPLY  # a question is simply answered
    assert verdict("dudo", 0.05) is verdict("status", 0.05) is Verdict.IGNORE
    assert [verdict("twenty eight", c) for c in (0.1, 0.3, 0.6, 0.95)] == [
        Verdict.IGNORE, Verdict.SAY_AGAIN, Verdict.ASK, Verdict.ASK]  # a count is always read back


def test_a_hand_under_the_reject_line_is_read_back_rather_than_said_again():
    speech = HearingPolicy(ignore_below=0.2, reject_below=0.7, confirm_below=0.9, short_calls_from=0.4,
                           hands_from=0.3)

    def hand(confidence, policy=speech):
        return decide(spoken("Ben four four four two six", confidence), Moment(), policy).verdict

    assert [hand(c) for c in (0.1, 0.25, 0.35, 0.6, 0.8, 0.95)] == [
        Verdict.IGNORE, Verdict.SAY_AGAIN, Verdict.ASK, Verdict.ASK, Verdict.ASK, Verdict.APPLY]
    # a bid at the same confidence is still said again: only a hand is read back so low
    assert decide(spoken("four fours", 0.35), Moment(), speech).verdict is Verdict.SAY_AGAIN
    # a hand that cannot stand now is refused, not asked about
    assert decide(spoken("Ben four four", 0.35), Moment(allowed=lambda call: False), speech).verdict is Verdict.REFUSE
    assert HearingPolicy.for_speech().hands_from < HearingPolicy.for_speech().reject_below


def test_a_sound_with_no_voice_in_it_is_no_call_however_sure():
    beep = Heard.from_speech("four fours", (), 0.99, PLAYERS, voiced=False)
    asking = Moment(asking=True)
    assert decide(beep).verdict is Verdict.IGNORE
    assert decide(Heard.from_speech("yes", (), 0.99, PLAYERS, voiced=False), asking).verdict is Verdict.IGNORE
    # a voice heard, or no voice activity model to tell: the confidence decides, as ever
    for voiced in (True, None):
        assert decide(Heard.from_speech("four fours", (), 0.99, PLAYERS, voiced=voiced)).verdict is Verdict.APPLY


def test_answers_to_a_question():
    asking = Moment(asking=True)
    assert verdict("no", 0.12, asking) is Verdict.APPLY  # declining changes nothing
    assert verdict("no", 0.12) is Verdict.IGNORE  # with nothing asked, too faint to answer
    assert verdict("yes", 0.6, asking) is Verdict.APPLY  # never itself asked about
    assert verdict("yes", 0.3, asking) is Verdict.SAY_AGAIN


def test_a_spoken_yes_or_no_with_nothing_asked_is_table_talk():
    for word in ("yes", "no"):
        assert decide(spoken(word, 0.99)) == Decision(Verdict.IGNORE, parse_call(word, PLAYERS))
        assert verdict(word, 0.99, Moment(asking=True)) is Verdict.APPLY
        assert decide(Heard.from_text(word, PLAYERS)).verdict is Verdict.APPLY  # typed: meant
    # a reading that makes sense now is still preferred to a "no" ("nine" heard as "no")
    assert decide(spoken("no", 0.9, "nine")) == Decision(Verdict.ASK, NumberCall(9))


def test_the_same_call_again_after_it_was_dropped_is_asked_about():
    four_fours = BidCall(Bid(4, 4))
    again = Moment(unsure_before=four_fours)
    assert verdict("four fours", 0.3, again) is Verdict.ASK  # not "say again" twice
    assert verdict("four fours", 0.05, again) is Verdict.ASK  # nor passed over twice
    assert verdict("four fours", 0.01, again) is Verdict.IGNORE  # under the repeat line
    assert verdict("five fours", 0.3, again) is Verdict.SAY_AGAIN  # another call
    assert verdict("four fours", 0.3, Moment(asking=True, unsure_before=four_fours)) is Verdict.SAY_AGAIN
    refused = Moment(unsure_before=four_fours, allowed=lambda call: False)
    assert verdict("four fours", 0.1, refused) is Verdict.IGNORE  # no question about a call that cannot stand
    assert verdict("yes", 0.1, Moment(unsure_before=parse_call("yes", PLAYERS))) is Verdict.IGNORE


def test_a_call_just_declined_gives_way_to_another_reading_or_is_said_again():
    five_fives = BidCall(Bid(5, 5))
    after_no = Moment(declined=five_fives)
    assert decide(spoken("five fives", 0.6, "two fives"), after_no) == Decision(Verdict.ASK, BidCall(Bid(2, 5)))
    assert decide(spoken("five fives", 0.6), after_no) == Decision(Verdict.SAY_AGAIN, five_fives)
    assert decide(spoken("five fives", 0.95), after_no).verdict is Verdict.SAY_AGAIN  # not applied unasked either
    assert decide(spoken("five fives", 0.6)).verdict is Verdict.ASK  # nothing declined: asked as ever
    assert decide(spoken("two fives", 0.6), after_no) == Decision(Verdict.ASK, BidCall(Bid(2, 5)))
    # The best reading's confidence is not the other reading's: asked about, not applied.
    assert decide(spoken("five fives", 0.95, "two fives"), after_no) == Decision(Verdict.ASK, BidCall(Bid(2, 5)))
    # ... but an answer or a "take it back" is never asked about, whichever reading it is
    asking = Moment(asking=True)
    assert decide(spoken("six", 0.6, "yes"), replace(asking, allowed=lambda call: False)).verdict is Verdict.APPLY
    assert decide(spoken("take it back", 0.6), asking) == Decision(Verdict.APPLY, parse_call("undo", PLAYERS))
    assert decide(spoken("take it back", 0.6)).verdict is Verdict.ASK  # nothing asked: it undoes a call


def test_other_dice_for_the_player_whose_hand_was_declined_are_asked_about():
    misheard = parse_call("Ben four four one two six", PLAYERS)
    after_no = Moment(declined=misheard)
    right = parse_call("Ben four four four two six", PLAYERS)
    faint = spoken("Ben four four four two six", 0.1)  # under every line but the repeat's
    assert decide(faint) == Decision(Verdict.IGNORE, right)  # heard with nothing declined
    assert decide(faint, after_no) == Decision(Verdict.ASK, right)  # the correction after a "no"
    assert decide(spoken("Ben four four one two six", 0.1), after_no).verdict is Verdict.IGNORE  # the same again
    assert decide(spoken("Cleo four four four two six", 0.1), after_no).verdict is Verdict.IGNORE  # another's
    assert decide(faint, replace(after_no, allowed=lambda call: False)).verdict is Verdict.IGNORE
    assert decide(spoken("Ben four four four two six", 0.01), after_no).verdict is Verdict.IGNORE  # too faint


def test_a_call_whose_caller_the_moment_names_is_asked_about_by_that_name():
    cleo = CalzaCall("Cleo")
    only_cleo = Moment(named=lambda call: cleo if call == CalzaCall() else call)
    assert decide(spoken("calza", 0.99), only_cleo) == Decision(Verdict.ASK, cleo)
    assert decide(spoken("calza", 0.99), replace(only_cleo, declined=cleo)).verdict is Verdict.SAY_AGAIN
    heard_named = decide(spoken("Cleo calza", 0.99), only_cleo)  # a calza is read back however sure
    assert heard_named == Decision(Verdict.ASK, cleo) and heard_named.sure
    assert not decide(spoken("calza", 0.99), only_cleo).sure  # the name was the moment's, not heard
    # ... as the answer to "Who calls calza?" too: chatter heard as a calza may have asked it
    assert decide(spoken("Cleo calza", 0.99), replace(only_cleo, who_calls_asked=True)) == Decision(Verdict.ASK, cleo)


def test_a_challenge_or_take_it_back_heard_however_surely_is_read_back():
    # Table talk is heard as them as surely as they are said ("dude, no" as dudo at 0.98):
    # cups lifted on a dudo nobody called cannot be put down unseen.
    for text in ("dudo", "Ben dudo", "Ben calza", "take it back"):
        decision = decide(spoken(text, 0.99))
        assert decision.verdict is Verdict.ASK and decision.sure, text
    assert decide(spoken("five fives", 0.99)) == Decision(Verdict.APPLY, BidCall(Bid(5, 5)))  # a bid is not
    # one the rules refuse now is refused, and why, not asked about
    refused = decide(spoken("Ben dudo", 0.99), Moment(allowed=lambda call: False))
    assert refused.verdict is Verdict.APPLY and refused.sure
    # "take it back" while "Who calls calza?" waits takes back only that question
    assert decide(spoken("take it back", 0.99), Moment(who_calls_asked=True)).verdict is Verdict.APPLY


def test_what_is_remembered_for_the_next_utterance():
    def remembered(heard):
        return unsure_call(heard, decide(heard), HearingPolicy())

    assert remembered(spoken("four fours", 0.3)) == BidCall(Bid(4, 4))  # said again
    assert remembered(spoken("four fours", 0.1)) == BidCall(Bid(4, 4))  # passed over
    assert remembered(spoken("four fours", 0.01)) is None  # too faint to count
    assert remembered(spoken("four fours", 0.6)) is None  # asked about
    assert remembered(spoken("no", 0.1)) is None  # answers are not calls to repeat
    assert remembered(spoken("", 0.9)) is None
    assert remembered(Heard.from_text("banana split", PLAYERS)) is None


def test_the_other_lines_are_the_policys():
    strict = HearingPolicy(ignore_below=0.2, reject_below=0.7, confirm_below=0.9, short_calls_from=0.4)
    assert decide(spoken("three fours", 0.8), Moment(), strict).verdict is Verdict.ASK
    assert decide(spoken("three fours", 0.95), Moment(), strict).verdict is Verdict.APPLY
    assert decide(spoken("dudo", 0.3), Moment(), strict).verdict is Verdict.SAY_AGAIN


def test_typed_lines_are_trusted_or_not_understood():
    assert decide(Heard.from_text("three fours", PLAYERS)) == Decision(Verdict.APPLY, BidCall(Bid(3, 4)))
    not_a_call = Heard.from_text("banana split", PLAYERS)
    assert decide(not_a_call) == Decision(Verdict.SAY_AGAIN)
    assert not_a_call.unparsable == UnparsableCall("banana split").why and not_a_call.best is None
    assert Heard.from_text("banana split", PLAYERS) == not_a_call
    assert Heard.from_text("Dave calza", PLAYERS).unknown_player == "Dave"


def test_nothing_heard_or_no_call_is_ignored():
    assert decide(spoken("", 0.9)) == Decision(Verdict.IGNORE)
    assert decide(spoken("six of us played last night", 0.9)) == Decision(Verdict.IGNORE)


def test_an_alternative_that_makes_sense_is_preferred_when_unsure():
    only_five = Moment(allowed=lambda call: call == BidCall(Bid(5, 4)))
    heard = spoken("two fours", 0.69, "five fours")
    assert decide(heard, only_five) == Decision(Verdict.ASK, BidCall(Bid(5, 4)))
    # Heard clearly, the illegal bid is kept, to be refused as it is.
    assert decide(spoken("two fours", 0.95, "five fours"), only_five).call == BidCall(Bid(2, 4))


def test_a_call_that_cannot_stand_is_refused_not_asked_about():
    nothing = Moment(allowed=lambda call: False)
    # (heard surely, it is taken, and the rules refuse it, and say why)
    # heard unsure, it is more likely table talk ("hmm" as a count of ten, chatter as a
    # calza before any bid) than said: "say again", and refused when heard so again
    for unsure in ("dudo", "calza", "ten"):
        assert decide(spoken(unsure, 0.6), nothing).verdict is Verdict.SAY_AGAIN
    again = Moment(allowed=lambda call: False, unsure_before=DudoCall())
    assert decide(spoken("dudo", 0.6), again) == Decision(Verdict.REFUSE, DudoCall())
    assert decide(spoken("dudo", 0.6), Moment(asks_back=lambda call: True)).verdict is Verdict.APPLY
    assert decide(spoken("Ana 5 5 5 5 5", 0.95), Moment(settles=lambda call: True)).verdict is Verdict.ASK


@pytest.mark.parametrize("utterance, guesses", [
    (Utterance("four", ("for fours", "banana", "five"), 0.5, "mic", (0.8, 0.5, 0.2)),
     (Guess(NumberCall(4), 1.0), Guess(BidCall(Bid(4, 4)), 0.8), Guess(NumberCall(5), 0.2))),
    (Utterance("banana", ("five",), 0.5, "mic"), (Guess(NumberCall(5)),)),
    (Utterance("Ana dudo"), (Guess(DudoCall("Ana")),)),
])
def test_every_transcript_is_parsed_once_into_guesses(utterance, guesses):
    heard = Heard.from_utterance(utterance, PLAYERS)
    assert heard.guesses == guesses
    assert heard.best == (None if utterance.text == "banana" else guesses[0].call)
    assert heard.typed is utterance.typed and heard.origin == utterance.origin
