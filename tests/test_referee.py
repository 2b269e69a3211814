"""The referee: what it says and does for each call, with a recording speaker."""

from dataclasses import replace

import time

import pytest

from companion.hearing import HearingPolicy
from companion.listen.vocabulary import aces_to_say
from companion.referee import Referee, RefereeSettings
from companion.rules import Bid, DudoCaller, Game, Phase, get_preset
from companion.sources import Expect, TextSource, Utterance
from companion.vision.types import DiceReading, Die, RevealOutcome


class RecordingSpeaker:
    def __init__(self):
        self.said = []

    def say(self, text):
        self.said.append(text)


class RecordingJournal:
    def __init__(self):
        self.events = []

    def append(self, events):
        self.events.extend(events)


class MuteTracker(TextSource):
    """A text source that checks the referee mutes it while speaking."""

    def __init__(self, lines, speaker):
        super().__init__(lines)
        self.muted = False
        self.speaker = speaker
        self.heard_while_speaking = 0

    def mute(self):
        self.muted = True

    def unmute(self):
        self.muted = False


def make(players="Ana Ben Cleo", preset="asmodee", counter=None, **changes):
    rules = get_preset(preset).replace(**changes) if changes else get_preset(preset)
    speaker, journal = RecordingSpeaker(), RecordingJournal()
    referee = Referee(Game(players.split(), rules), speaker, journal, counter)
    return referee, speaker, journal


def say(referee, *lines, confidence=None, alternatives=()):
    """Hear each line as the game loop would; returns everything the referee said."""
    said = referee.speaker.said
    before = len(said)
    for line in lines:
        referee.hear(Utterance(line, tuple(alternatives), confidence, "test" if confidence else "text"))
    return " ".join(said[before:])


def asking_four_fours():
    """Ana bid three fours, and Ben's "four fours" was heard unsure: "Did you say four fours?"
    waits. Returns the referee and its journal."""
    referee, _, journal = make()
    say(referee, "three fours")
    assert say(referee, "four fours", confidence=0.6) == "Did you say four fours?"
    return referee, journal


def test_bids_are_read_back_with_whose_turn_is_next():
    referee, _, journal = make()
    assert say(referee, "three fours") == "Ana: three fours. Ben, your call."
    assert journal.events[-1].type == "bid"


def test_illegal_bid_gets_the_reason_and_the_smallest_raises():
    referee, _, journal = make("A B C D E F")
    say(referee, "nine fives")
    before = len(journal.events)
    text = say(referee, "nine fours")
    assert text == ("Nine fours does not raise nine fives. "
                    "The smallest raises: nine sixes, ten of any face, or five pacos.")
    assert len(journal.events) == before and referee.game.turn == "B"


def test_at_the_most_dice_in_play_only_higher_faces_are_offered():
    referee, _, _ = make()  # fifteen dice: sixteen of anything is out of reach
    say(referee, "fifteen fours")
    assert say(referee, "fifteen threes").endswith(
        "The smallest raises: fifteen fives, fifteen sixes, or eight pacos.")


def test_a_challenge_before_any_bid_says_what_is_missing():
    referee, _, journal = make()
    assert say(referee, "dudo") == "There is no bid yet to doubt."
    assert say(referee, "calza") == "There is no bid yet to call calza on."
    assert journal.events == []


def test_unparsable_and_out_of_turn_calls_change_nothing():
    referee, _, journal = make()
    assert "did not understand" in say(referee, "banana split")
    assert say(referee, "Ben three threes") == "It is Ana's turn, not Ben's."  # Ben's bid is not taken as Ana's
    assert referee.game.actions == () and journal.events == [] and referee.game.turn == "Ana"


def test_out_of_turn_named_bid():
    referee, _, _ = make()
    assert say(referee, "Ben three threes") == "It is Ana's turn, not Ben's."


def test_dudo_then_a_number_settles_the_round():
    referee, _, journal = make()
    say(referee, "three fours", "four fours")
    text = say(referee, "dudo")
    assert "Dudo from Cleo on Ben's four fours" in text and "fours, pacos included" in text
    text = say(referee, "two")
    assert "Ben loses a die and has four dice left" in text and "Round two. Ben opens" in text
    assert referee.game.dice["Ben"] == 4


def test_count_from_every_players_dice():
    referee, _, _ = make()
    say(referee, "three fives", "dudo")
    assert "Still need Ben and Cleo" in say(referee, "Ana 1 5 5 3 2")
    assert "five dice, not four" in say(referee, "Ben 5 5 5 5")
    say(referee, "Ben 2 2 2 2 2")
    text = say(referee, "Cleo 6 6 6 6 1")
    assert text.startswith("Got Cleo's dice: six, six, six, six, one. Four counted") and "the bid was right" in text
    assert referee.game.dice["Ben"] == 4


def test_the_words_a_table_hears_often_say_each_thing_once():
    referee, _, _ = make("Ana Ben Cleo Dan")
    assert say(referee, "seven") == "Seven is not a call. Ana, your bid."  # no bid yet to call dudo on
    say(referee, "three fives")
    assert say(referee, "seven") == "Seven is not a call. Ben, bid or call dudo."
    say(referee, "four fives")
    undone = say(referee, "take it back")  # a bid taken back changes nobody's dice: not listed
    assert undone == "Undone: Ben's four fives. The bid is three fives by Ana. Ben, your call."
    assert say(referee, "status").endswith("Ana has five dice, Ben five, Cleo five and Dan five; twenty dice in play.")
    # The example hand is given at the first round's challenge only.
    assert say(referee, "dudo").endswith("Say the count, or each player's dice, like Ana 5 5 3 1 2.")
    say(referee, "two")
    say(referee, "three fives")
    assert say(referee, "dudo").endswith("Say the count, or each player's dice.")
    assert "or each player's name and dice." in say(referee, "help")


def test_a_count_ruled_out_by_one_die_speaks_of_a_die():
    referee, _, _ = make(starting_dice=1)
    say(referee, "one five", "dudo", "Ana 5")
    assert say(referee, "zero").startswith("Ana's die already counts one, so the count is between one and three, not zero.")
    say(referee, "Ben 5")
    assert say(referee, "zero").startswith("Ana's and Ben's dice already count two")


def test_a_preset_with_house_rules_is_said_without_a_plus():
    from companion.voice.phrases import rules_words

    house = get_preset("asmodee").replace(name="asmodee+house", calza=False)
    assert rules_words(house) == "asmodee rules with house rules"
    assert rules_words(get_preset("pressman")) == "pressman rules"
    referee, _, _ = make(preset="asmodee", name="asmodee+house", calza=False)
    say(referee, "three fives")
    assert say(referee, "calza") == "Calza is not played under the asmodee rules with house rules."


def test_a_count_the_dice_already_said_rule_out_is_refused():
    referee, _, journal = make()
    say(referee, "three fives", "dudo", "Ana 1 1 1 1 1", "Ben 5 5 5 2 2")
    before = len(journal.events)
    text = say(referee, "two")
    assert text.startswith("Ana's and Ben's dice already count eight, so the count is between eight and thirteen, not two.")
    assert "the dice of Cleo" in text
    assert "Ana's and Ben's dice already count" in say(referee, "fourteen")
    assert len(journal.events) == before and referee.game.phase is Phase.REVEAL
    # A count inside the bounds settles it, as before.
    assert "Nine counted: the bid was right" in say(referee, "nine")


def test_a_typed_line_that_is_not_a_call_says_why_when_it_can():
    referee, _, _ = make()
    assert say(referee, "Dave calza") == "There is no player called Dave; the players are Ana, Ben and Cleo."
    assert "(a count cannot be negative)" in say(referee, "-3 fives")
    assert say(referee, "hello there") == "Sorry, I did not understand 'hello there'. Say it again, or type help."
    assert say(referee, "help").startswith("Calls are bids like four fives or three pacos, dudo, calza or Ana calza")
    assert say(referee, "?") == say(referee, "help")
    assert say(referee, "again") == "Again: " + say(referee, "help")  # as "say again": the last said
    assert "type quit" in say(referee, "stop") and "--resume" in say(referee, "bye")  # words that do not quit
    pressman, _, _ = make(preset="pressman")  # no calza under these rules: not offered
    assert "calza" not in say(pressman, "help") and "palifico" in say(pressman, "help")
    assert referee.game.actions == ()
    assert "no player called Dave" in say(referee, "calza Dave")
    assert "no player" not in say(referee, "yes dudo") and "no player" not in say(referee, "hey five threes")
    assert say(referee, "Ana") == "Bids and dudo need no name now: say the call alone, like four fives, or dudo."
    assert say(pressman, "Ben") == "Bids and dudo need no name now: say the call alone, like four fives, or dudo."
    say(pressman, "three fives", "dudo")
    assert say(pressman, "Ben") == "Say the dice after the name, like Ben five five three one two."  # Ben's own
    anyone, _, _ = make(preset="pressman", dudo_caller=DudoCaller.ANYONE)
    say(anyone, "three fives")
    assert say(anyone, "Cleo") == "Say the call after the name, like Cleo dudo."
    two, _, _ = make("Ana Ben")  # no calza with two players: not offered
    say(two, "three fives")
    assert say(two, "Ana") == "Bids and dudo need no name now: say the call alone, like four fives, or dudo."
    for marks in ("!!!", ".", "\u0663"):  # no letters: not a name said alone
        assert say(referee, marks).startswith("Sorry, I did not understand"), marks
    pasted = say(referee, "x" * 5000)  # said back whole, it would take minutes
    assert pasted == f"Sorry, I did not understand '{'x' * 40}...'. Say it again, or type help."
    assert referee.game.last_bid is None
    say(referee, "three fives")
    assert say(referee, "Ana") == "Say the call after the name, like Ben calza."  # one who may call it


def test_a_count_the_dice_said_rule_out_loses_to_an_alternative_that_fits():
    referee, _, _ = make()
    say(referee, "three fives", "dudo", "Ana 1 1 1 1 1", "Ben 5 5 5 2 2")
    assert say(referee, "two", confidence=0.6, alternatives=("nine",)) == "Did you say the count is nine?"


def test_the_bid_that_stands_said_again_is_not_refused_as_the_next_players_raise():
    referee, _, journal = make()
    say(referee, "three fours", "four fours")
    # Ben says his bid again, or Cleo echoes it: not "four fours does not raise four fours"
    assert say(referee, "four fours") == "Four fours is Ben's bid already. Cleo, your call."
    assert say(referee, "four fours", confidence=0.95) == "Four fours is Ben's bid already. Cleo, your call."
    assert [e.type for e in journal.events].count("bid") == 2 and referee.game.turn == "Cleo"
    assert "does not raise" in say(referee, "three fours")


def test_taking_back_a_count_said_after_some_dice_keeps_those_dice():
    referee, _, journal = make()
    say(referee, "three fours", "dudo", "Ana 4 4 1 2 3")
    assert say(referee, "nine").startswith("Nine counted")
    took_back = say(referee, "take it back")
    assert took_back.startswith("Undone: the count of nine.") and "Still need Ben and Cleo" in took_back
    assert referee._hands == {"Ana": (4, 4, 1, 2, 3)}
    assert "Ana's dice already count three" in say(referee, "two")  # the dice said still bound the count
    from companion.journal import hands_so_far
    assert hands_so_far(journal.events) == {"Ana": (4, 4, 1, 2, 3)}  # as a resume would find them


def test_count_too_large_is_refused():
    referee, _, _ = make()
    say(referee, "three fives", "dudo")
    assert "only fifteen dice in play" in say(referee, "sixteen")
    assert referee.game.phase is Phase.REVEAL
    hidden, _, _ = make(preset="pressman")  # the pouch hides the total: the refusal keeps it
    say(hidden, "three fives", "dudo")
    assert say(hidden, "sixteen") == "The count cannot be sixteen: that is more dice than are in play."
    say(hidden, "Ana 5 5 1 2 3")  # ... and so do the bounds the dice said set
    assert say(hidden, "fifteen").startswith("The count cannot be fifteen: that is more than the dice said and")
    assert say(hidden, "one").startswith("Ana's dice already count three, so the count is at least three, not one.")
    assert hidden.game.phase is Phase.REVEAL


def test_calza_needs_a_name_when_several_may_call_it():
    referee, _, _ = make("Ana Ben Cleo Dan")
    say(referee, "three fives")
    assert "Who calls calza?" in say(referee, "calza")
    assert "Calza from Cleo" in say(referee, "Cleo calza")
    referee, _, _ = make("Ana Ben Cleo Dan")
    say(referee, "three fives", "calza")
    assert say(referee, "no").startswith("Not taken: calza.")  # nobody called it: the question goes
    assert "Who calls calza?" not in say(referee, "status")


def test_a_name_typed_alone_answers_who_calls_calza():
    referee, _, _ = make("Ana Ben Cleo Dan")
    say(referee, "three fives", "calza")
    assert "Ana cannot challenge their own bid." in say(referee, "ana")
    assert say(referee, "Dan").startswith("Calza from Dan on Ana's three fives!")
    referee, _, _ = make("Ana Ben Cleo Dan")
    say(referee, "three fives")
    assert say(referee, "Dan").startswith("Say the call after the name, like Dan calza.")  # nobody asked
    assert say(referee, "Ana").startswith("Say the call after the name, like Ben calza.")  # not the bidder's


def test_a_calza_count_is_said_as_exact_or_not_never_as_a_wrong_bid():
    referee, _, _ = make()
    say(referee, "three fives", "Ben calza")
    text = say(referee, "four")
    assert text.startswith("Four counted: not exactly the bid. Ben loses a die")
    say(referee, "undo")
    assert say(referee, "three").startswith("Three counted: exactly the bid. Ben is right")
    referee, _, _ = make()
    say(referee, "three fives", "dudo")
    assert say(referee, "four").startswith("Four counted: the bid was right.")


def test_calza_where_the_rules_forbid_it():
    referee, _, _ = make("Ana Ben")
    say(referee, "two fives")
    assert "not allowed with two players" in say(referee, "Ben calza")
    referee, _, _ = make(preset="pressman")
    say(referee, "two fives")
    assert "not played under the pressman rules" in say(referee, "calza")


def test_undo_takes_back_the_last_call_and_is_journalled():
    referee, _, journal = make()
    say(referee, "three fours", "four fours")
    text = say(referee, "undo")
    assert text.startswith("Undone: Ben's four fours.") and "Ben, your call" in text
    assert journal.events[-1].type == "undo" and referee.game.last_bid == Bid(3, 4)


def test_repeat_and_status():
    referee, speaker, _ = make()
    referee.hear(Utterance("three fours"))
    assert say(referee, "repeat") == "Again: Ana: three fours. Ben, your call."
    status = say(referee, "what's the bid")
    assert "The bid is three fours by Ana. Ben, your call." in status and "fifteen dice in play" in status
    say(referee, "undo")
    assert say(referee, "repeat").startswith("Again: Undone: Ana's three fours.")  # not a second undo


def test_secret_totals_stay_secret():
    # Pressman's pouch and the leaflet's cup lid hide the lost dice: the referee never tells.
    for preset in ("pressman", "leaflet"):
        referee, speaker, _ = make(preset=preset)
        referee.run(TextSource(["three fours", "four fours", "dudo", "0"]))
        spoken = " ".join(speaker.said) + say(referee, "status") + say(referee, "repeat")
        assert "in play" not in spoken and "Dice:" not in spoken
    referee, _, _ = make(preset="pressman", announce_dice_in_play=True)  # a house rule tells
    assert "fifteen dice in play" in say(referee, "status")


def test_a_hidden_total_refuses_a_bid_no_table_of_players_could_hold_without_telling_it():
    referee, _, _ = make(preset="pressman")
    said = say(referee, "sixteen threes")
    assert said == "Sixteen threes is not allowed: three players hold at most fifteen dice. To open: one of any face."
    assert "in play" not in said and referee.game.last_bid is None


def test_the_whole_game_to_a_winner_with_palifico_and_elimination():
    referee, speaker, journal = make("Ana Ben", starting_dice=2, max_dice=2)
    lines = ["two threes", "dudo", "0",   # Ana loses: one die (two players: no palifico)
             "one six", "dudo", "0"]      # Ana loses her last die
    referee.run(TextSource(lines))
    spoken = " ".join(speaker.said)
    assert "Ana is out of the game." in spoken and spoken.endswith("Ben wins the game!")
    assert "palifico" not in spoken.lower()
    assert journal.events[-1].to_dict() == {"type": "game_over", "winner": "Ben"}


def test_a_misheard_final_count_can_be_undone():
    referee, speaker, journal = make("Ana Ben", starting_dice=1, max_dice=1)
    referee.run(TextSource(["one three", "dudo", "zero", "undo", "two"]))
    # "zero" (misheard) ended the game; the referee kept listening, so undo took it back
    assert speaker.said[3].endswith("Ana is out of the game. Ben wins the game!")
    assert speaker.said[4].startswith("Undone: the count of zero. Ben called dudo on Ana's one three.")
    assert speaker.said[5].endswith("Ben is out of the game. Ana wins the game!")
    assert referee.game.winner == "Ana"
    assert [e.type for e in journal.events][5:] == ["game_over", "undo", "count", "die_lost", "eliminated",
                                                    "game_over"]


def test_palifico_round_is_announced():
    referee, speaker, _ = make(starting_dice=2, max_dice=2)
    referee.run(TextSource(["two threes", "dudo", "0"]))
    spoken = " ".join(speaker.said)
    # nobody has been palifico before, so nobody may change the face: said so, not the rule's exception
    assert ("Ana loses a die and has one die left. Palifico for Ana! Round two. Ana opens. Five dice in "
            "play. Palifico round: pacos are not wild and the face stays.") in spoken
    # status (and a resume) says what the round changes, not only whose it is
    assert "Palifico round for Ana: pacos are not wild and the face stays." in say(referee, "status")


def test_a_palifico_round_names_who_may_change_the_face():
    referee, speaker, _ = make("Ana Ben Cleo", preset="wikipedia", starting_dice=2, max_dice=2)
    referee.game.dice["Cleo"] = 1  # on one die already: under Wikipedia, Cleo may change the face
    referee.run(TextSource(["two threes", "dudo", "0"]))
    assert speaker.said[-1].endswith("Palifico round: aces are not wild and the face stays, except for Ana and Cleo.")
    everyone, speaker, _ = make("Ana Ben", preset="wikipedia", starting_dice=2, max_dice=2)
    everyone.game.dice["Ben"] = 1
    everyone.run(TextSource(["two threes", "dudo", "0"]))  # both on one die: anyone may
    assert speaker.said[-1].endswith("Palifico round: aces are not wild, and anyone may change the face.")


def test_referee_mutes_its_source_while_speaking():
    speaker = RecordingSpeaker()
    states = []

    class Source(TextSource):
        muted = False

        def mute(self):
            self.muted = True

        def unmute(self):
            self.muted = False

    source = Source(["three fours"])
    original = speaker.say
    speaker.say = lambda text: (states.append(source.muted), original(text))
    Referee(Game(["Ana", "Ben"]), speaker).run(source)
    assert states and all(states) and not source.muted


def test_referee_tells_its_source_what_it_expects_next():
    heard_with = []

    class Source(TextSource):
        def expect(self, what, hand_sizes=frozenset()):
            self.expecting = (what, hand_sizes)

        def next_utterance(self):
            utterance = super().next_utterance()
            if utterance is not None:
                heard_with.append((utterance.text, *self.expecting))
            return utterance

    calls, count = (Expect.CALLS, frozenset()), Expect.COUNT
    Referee(Game(["Ana", "Ben"]), RecordingSpeaker()).run(
        Source(["three fours", "dudo", "undo", "dudo", "two", "two fives", "dudo", "one"]))
    assert heard_with == [("three fours", *calls), ("dudo", *calls),
                          ("undo", count, {5}), ("dudo", *calls), ("two", count, {5}),
                          # Ana lost a die: a hand said now holds four dice or five
                          ("two fives", *calls), ("dudo", *calls), ("one", count, {4, 5})]


# --- speech: confidence and alternatives ---------------------------------------------------

def test_low_confidence_speech_is_never_applied():
    referee, _, journal = make()
    assert say(referee, "three fours", confidence=0.3) == "Sorry, say again?"
    assert say(referee, "two sixes", confidence=0.1) == ""  # chatter forced into the grammar
    assert say(referee, "three fours", confidence=0.01) == ""  # below every line
    assert referee.game.actions == ()


def test_a_call_heard_the_same_twice_when_unsure_is_asked_about():
    referee, _, _ = make()
    assert say(referee, "four fours", confidence=0.3) == "Sorry, say again?"
    assert say(referee, "four fours", confidence=0.08) == "Did you say four fours?"
    assert referee.game.actions == ()  # asked, not taken
    assert say(referee, "yes", confidence=0.9) == "Ana: four fours. Ben, your call."
    # Passed over twice in silence: the same.
    assert say(referee, "five fours", confidence=0.1) == ""
    assert say(referee, "five fours", confidence=0.05) == "Did you say five fours?"
    assert "Not taken. If you called" in say(referee, "no", confidence=0.9)
    assert referee.game.last_bid == Bid(4, 4)
    # Something else heard in between: not a repeat.
    say(referee, "five fours", confidence=0.1)
    say(referee, "six twos", confidence=0.1)
    assert say(referee, "five fours", confidence=0.1) == ""
    # A repeat of a call the rules would refuse is passed over as before.
    say(referee, "two fours", confidence=0.1)
    assert say(referee, "two fours", confidence=0.1) == ""
    assert referee.game.last_bid == Bid(4, 4)


def test_doubtful_speech_asks_for_confirmation():
    referee, _, _ = make()
    assert say(referee, "three fours", confidence=0.6) == "Did you say three fours?"
    assert referee.game.actions == ()
    assert say(referee, "yes", confidence=0.9) == "Ana: three fours. Ben, your call."
    assert say(referee, "four fours", confidence=0.6) == "Did you say four fours?"
    assert "Not taken. If you called" in say(referee, "no", confidence=0.9)
    assert referee.game.last_bid == Bid(3, 4)


def test_a_faintly_heard_challenge_is_asked_about_not_dropped():
    referee, _, _ = make()
    say(referee, "three fours")
    # A bid this unsure would be passed over or asked again; a dudo is asked about.
    assert say(referee, "four fours", confidence=0.15) == ""
    assert say(referee, "dudo", confidence=0.15) == "Did you say dudo?"
    assert referee.game.phase is Phase.BIDDING
    assert say(referee, "yes", confidence=0.9).startswith("Dudo from Ben on Ana's three fours!")
    referee, _, _ = make()
    say(referee, "three fours")
    assert say(referee, "dudo", confidence=0.05) == ""  # below every line: chatter
    assert say(referee, "Cleo calza", confidence=0.3) == "Did you say Cleo calza?"
    assert "Not taken. If you called" in say(referee, "no", confidence=0.9) and referee.game.phase is Phase.BIDDING


def test_a_faintly_heard_question_is_answered():
    referee, _, _ = make()
    say(referee, "three fours")
    # A question changes nothing, so it is answered where a bid would be passed over.
    assert say(referee, "four fours", confidence=0.15) == ""
    answer = say(referee, "status", confidence=0.15)
    assert "three fours" in answer and "Did you say" not in answer
    assert say(referee, "palifico", confidence=0.6) == say(referee, "palifico")
    assert say(referee, "status", confidence=0.05) == ""  # below every line: chatter
    assert referee.game.last_bid == Bid(3, 4)
    # A question asked while a call waits for "yes" leaves it waiting.
    assert say(referee, "four fours", confidence=0.6) == "Did you say four fours?"
    say(referee, "palifico", confidence=0.15)
    say(referee, "status", confidence=0.15)
    assert say(referee, "yes", confidence=0.6).startswith("Ben: four fours.")  # an answer is never asked about


def test_alternatives_that_make_sense_are_preferred_when_unsure():
    referee, _, _ = make()
    say(referee, "three fours")
    # "two fours" is not a raise; the recogniser's second guess is.
    assert say(referee, "two fours", confidence=0.69, alternatives=("five fours",)).startswith("Did you say five fours")


def test_a_clearly_heard_illegal_bid_is_reported_not_swapped():
    referee, _, _ = make()
    say(referee, "three fours")
    text = say(referee, "two fours", confidence=0.95, alternatives=("five fours",))
    assert text.startswith("Two fours does not raise three fours.")


def test_chatter_from_the_microphone_is_ignored_quietly():
    referee, _, journal = make()
    assert say(referee, "", confidence=0.9) == ""
    assert say(referee, "six of us played last night", confidence=0.9) == ""
    assert referee.game.actions == ()


# --- the camera at a reveal ------------------------------------------------------------------

def camera_sees(counts: dict, in_play: int = 15) -> RevealOutcome:
    """The camera's trusted reading of the table: these faces (face: how many), and sixes for
    the rest of the dice in play."""
    faces = [face for face, n in counts.items() for _ in range(n)]
    faces += [6] * (in_play - len(faces))
    return RevealOutcome(DiceReading(tuple(Die(face, (10 * i, 0, 8, 8), 0.99) for i, face in enumerate(faces))), "")


class FakeCounter:
    def __init__(self, outcome):
        self.outcome = outcome
        self.expected = None

    def reveal(self, expected_total, save_dir=None, round_number=None, say_total=True, latest_round=None):
        self.expected = expected_total
        self.say_total = say_total
        self.round_number = round_number
        return self.outcome


def test_camera_count_settles_the_challenge():
    counter = FakeCounter(camera_sees({4: 2, 1: 1}))
    referee, _, journal = make(counter=counter)
    say(referee, "three fours")
    text = say(referee, "dudo")
    assert "I see three fours, pacos included." in text and "Ben loses a die" in text
    assert counter.expected == 15 and counter.round_number == 1
    assert [e for e in journal.events if e.type == "count"][0].source == "camera"


def test_repeat_after_a_camera_count_says_the_challenge_and_the_count():
    referee, _, _ = make(counter=FakeCounter(camera_sees({4: 2, 1: 1})))
    say(referee, "three fours", "dudo")
    again = say(referee, "repeat")
    assert again.startswith("Again: Dudo from Ben on Ana's three fours!") and "I see three fours" in again


def test_a_camera_reading_of_other_dice_than_in_play_settles_nothing():
    # A counter that let a wrong number of dice through must not end the game: the players
    # are asked for the count instead.
    referee, _, journal = make(counter=FakeCounter(camera_sees({4: 2}, in_play=14)))
    say(referee, "three fours")
    text = say(referee, "dudo")
    assert "I cannot count this one: I see fourteen dice but fifteen are in play." in text
    assert referee.game.phase is Phase.REVEAL and not [e for e in journal.events if e.type == "count"]
    assert "Ana loses a die" in say(referee, "two")  # three fours were bid; two are there


def test_a_fault_in_the_camera_code_asks_the_players_and_keeps_its_trace_for_a_report():
    class Faulty(FakeCounter):
        def reveal(self, *args, **kwargs):
            raise AttributeError("'NoneType' object has no attribute 'faces'")  # a bug, not a camera failure

    referee, _, journal = make(counter=Faulty(None))
    logged = []
    referee._log = logged.append
    say(referee, "three fours")
    text = say(referee, "dudo")
    assert "The camera failed: something went wrong in reading the dice. How many fours" in text  # the players count
    assert "NoneType" not in text  # Python's words stay on the terminal
    assert referee.game.phase is Phase.REVEAL and not [e for e in journal.events if e.type == "count"]
    assert "Traceback" in logged[-1] and "in reveal" in logged[-1] and "AttributeError" in logged[-1]
    assert "Ana loses a die" in say(referee, "two")


def test_a_camera_failure_of_its_own_kind_is_said_in_its_own_words():
    from companion.vision.errors import PhotosUsedUp

    class UsedUp(FakeCounter):
        def reveal(self, *args, **kwargs):
            raise PhotosUsedUp("the photos given are used up")

    referee, _, _ = make(counter=UsedUp(None))
    say(referee, "three fours")
    assert "The camera failed: the photos given are used up. How many fours" in say(referee, "dudo")


def test_where_the_total_is_hidden_the_camera_never_says_it():
    counter = FakeCounter(camera_sees({4: 2}, in_play=14))
    referee, _, _ = make(preset="pressman", counter=counter)
    say(referee, "three fours")
    text = say(referee, "dudo")
    assert counter.say_total is False  # the camera is told to keep it too
    assert "I see fourteen dice but more are in play." in text and "fifteen" not in text


def test_a_reveal_done_again_after_an_undo_is_the_same_rounds():
    counter = FakeCounter(camera_sees({4: 2, 1: 1}))
    referee, _, _ = make(counter=counter)
    say(referee, "three fours")
    say(referee, "dudo")
    say(referee, "take it back")  # the count, then...
    say(referee, "take it back")  # ...the dudo
    assert referee.game.phase is Phase.BIDDING and referee.game.round_number == 1
    counter.round_number = None
    say(referee, "dudo")
    assert counter.round_number == 1  # the camera looks at round one's dice again


@pytest.mark.parametrize("faces, bids, seen", [
    ({4: 1}, ["one four"], "I see one four, pacos included."),
    ({2: 3}, ["two fours"], "I see no fours and no pacos."),
    ({1: 2, 4: 3}, ["two fours", "two pacos"], "I see two pacos."),
])
def test_the_camera_count_says_what_it_counted(faces, bids, seen):
    referee, _, _ = make(counter=FakeCounter(camera_sees(faces)))
    for bid in bids:
        assert "Did you" not in say(referee, bid)
    assert seen in say(referee, "dudo")


def test_the_camera_looks_only_after_the_cups_were_called_up():
    counter = FakeCounter(camera_sees({4: 3}))
    referee, speaker, _ = make(counter=counter)
    said_before_looking = []
    reveal = counter.reveal
    counter.reveal = lambda *a, **k: (said_before_looking.append(list(speaker.said)), reveal(*a, **k))[1]
    say(referee, "three fours")
    say(referee, "dudo")
    assert "Lift the cups" in said_before_looking[0][-1]
    assert speaker.said[-1].startswith("I see three fours")


def test_camera_doubt_falls_back_to_asking():
    counter = FakeCounter(RevealOutcome(None, "I see 14 dice but 15 are in play"))
    referee, _, _ = make(counter=counter)
    say(referee, "three fours")
    text = say(referee, "dudo")
    assert "I cannot count this one: I see 14 dice but 15 are in play" in text and "How many fours" in text
    assert referee.game.phase is Phase.REVEAL
    say(referee, "three")
    assert referee.game.dice["Ben"] == 4


def test_a_doubtful_yes_confirms_nothing():
    referee, _, _ = make()
    assert say(referee, "three fours", confidence=0.6) == "Did you say three fours?"
    assert say(referee, "yes", confidence=0.3) == "Sorry, yes or no: did you say three fours?"
    assert referee.game.actions == ()
    assert say(referee, "yes", confidence=0.8) == "Ana: three fours. Ben, your call."


def heard_at(referee, text, ended_at, confidence=0.99):
    """An utterance the microphone heard end at `ended_at` (time.monotonic()); what was said back."""
    before = len(referee.speaker.said)
    referee.hear(Utterance(text, (), confidence, "mic", ended_at=ended_at))
    return " ".join(referee.speaker.said[before:])


def test_a_yes_said_before_the_question_was_asked_confirms_nothing():
    # "yeah" at the table just as the referee began "Did you say three fours?": it waited to
    # be heard while the question was said, and is no answer to it
    referee, _, _ = make()
    before_the_question = time.monotonic()
    assert say(referee, "three fours", confidence=0.6) == "Did you say three fours?"
    assert heard_at(referee, "yes", before_the_question) == "" and referee.game.actions == ()  # not asked again
    assert heard_at(referee, "yes", time.monotonic()) == "Ana: three fours. Ben, your call."


def test_a_yes_said_before_the_question_confirms_nothing_however_often_it_is_asked_again():
    # a mumble heard after the question draws "Sorry, yes or no"; the "yeah" said before the
    # question, heard after that, still answers nothing
    referee, _, _ = make()
    before_the_question = time.monotonic()
    assert say(referee, "three fours", confidence=0.6) == "Did you say three fours?"
    assert heard_at(referee, "yes", before_the_question, confidence=0.3) == ""
    assert say(referee, "yes", confidence=0.3) == "Sorry, yes or no: did you say three fours?"
    assert heard_at(referee, "yes", before_the_question) == "" and referee.game.actions == ()


def test_a_yes_said_after_the_question_answers_it_however_often_it_was_asked_again():
    # "Sorry, yes or no: ...", or where the game stands for another player's "status", asks
    # the question again: a "yes" said after the question itself (heard after either) answers it
    referee, _, _ = make()
    assert say(referee, "three fours", confidence=0.6) == "Did you say three fours?"
    after_the_question = time.monotonic()
    assert say(referee, "yes", confidence=0.3) == "Sorry, yes or no: did you say three fours?"
    assert heard_at(referee, "yes", after_the_question) == "Ana: three fours. Ben, your call."
    referee, _, _ = make()
    assert say(referee, "three fours", confidence=0.6) == "Did you say three fours?"
    after_the_question = time.monotonic()
    assert say(referee, "status").endswith("Did you say three fours?")
    assert heard_at(referee, "yes", after_the_question) == "Ana: three fours. Ben, your call."


def test_a_question_asked_again_and_again_is_dropped_not_asked_forever():
    """In babble a player's "no" stayed too faint to take: "Sorry, yes or no" came back a
    thousand times. Dropped, the call is not taken and can be said afresh."""
    referee, _, journal = make()
    referee = on_speech(referee)
    say(referee, "three fives", "dudo")
    assert say(referee, "two", confidence=0.95) == "Did you say the count is two?"
    for _ in range(HearingPolicy().asked_again_at_most - 1):
        assert say(referee, "no", confidence=0.3) == "Sorry, yes or no: did you say the count is two?"
    assert say(referee, "no", confidence=0.3).startswith("Not taken: a count of two. Ben called dudo on")
    assert referee.game.phase is Phase.REVEAL and not any(e.type == "count" for e in journal.events)
    assert say(referee, "two", confidence=0.95) == "Did you say the count is two?"  # asked afresh
    assert say(referee, "yes", confidence=0.3) == "Sorry, yes or no: did you say the count is two?"
    assert say(referee, "yes", confidence=0.9).startswith("Two counted")


def test_a_question_lapses_once_the_table_has_talked_past_it():
    referee, _, _ = make()
    assert say(referee, "three fours", confidence=0.6) == "Did you say three fours?"
    # two utterances of chatter (one heard as a faint bid) leave the question waiting
    assert say(referee, "nice try", confidence=0.4) == ""
    assert say(referee, "two fives", confidence=0.1) == ""
    assert say(referee, "yes", confidence=0.9) == "Ana: three fours. Ben, your call."
    assert say(referee, "four fours", confidence=0.6) == "Did you say four fours?"
    assert say(referee, "yes", confidence=0.3) == "Sorry, yes or no: did you say four fours?"  # no chatter
    for chatter in ("nice try", "two fives", "my turn"):
        say(referee, chatter, confidence=0.1)
    # a "yes" said to a neighbour after that applies nothing, and gets no reply
    assert say(referee, "yes", confidence=0.9) == ""
    assert say(referee, "yes") == "There is nothing to confirm."  # a typed one is meant
    assert say(referee, "no") == "There is no question to say no to."
    assert referee.game.last_bid == Bid(3, 4)
    # a typed line is no utterance the question waits through
    assert say(referee, "five fours", confidence=0.6) == "Did you say five fours?"
    for line in ("status", "status", "status"):
        say(referee, line)
    assert say(referee, "yes", confidence=0.9) == "Ben: five fours. Cleo, your call."


def test_a_sound_with_no_voice_changes_nothing_and_lets_a_question_wait():
    logged = []
    speaker, journal = RecordingSpeaker(), RecordingJournal()
    referee = Referee(Game(["Ana", "Ben", "Cleo"], get_preset("asmodee")), speaker, journal, log=logged.append)
    beep = Utterance("three fours", (), 0.95, "mic", voiced=False)
    referee.hear(beep)
    assert referee.game.last_bid is None and not journal.events
    assert logged[-1] == "(no voice in that sound, so no call: it read as 'three fours')"
    assert say(referee, "three fours", confidence=0.6) == "Did you say three fours?"
    for _ in range(5):  # a phone ringing on: no one talked past the question
        referee.hear(Utterance("yes", (), 0.95, "mic", voiced=False))
    assert referee.game.last_bid is None
    assert say(referee, "yes", confidence=0.9) == "Ana: three fours. Ben, your call."


def test_a_spoken_no_with_nothing_asked_is_passed_over_and_the_log_says_why():
    logged = []
    speaker, journal = RecordingSpeaker(), RecordingJournal()
    referee = Referee(Game(["Ana", "Ben", "Cleo"], get_preset("asmodee")), speaker, journal, log=logged.append)
    referee.hear(Utterance("no", (), 0.98, "mic"))  # "do you know where the bottle opener is"
    assert speaker.said == [] and not journal.events
    assert logged[-1] == "(nothing was asked, so 'no' answers nothing)"
    referee.hear(Utterance("three fours", (), 0.6, "mic"))
    assert speaker.said == ["Did you say three fours?"]
    referee.hear(Utterance("no", (), 0.98, "mic"))  # now it answers the question
    assert speaker.said[-1] == "Not taken. If you called, say it again." and referee.game.last_bid is None


def test_the_dice_example_has_as_many_dice_as_the_player_holds():
    referee, _, _ = make("Ana Ben", starting_dice=7, max_dice=7)
    say(referee, "three fours")
    assert say(referee, "dudo").endswith("like Ana 5 5 3 1 2 6 5.")


def test_asking_palifico_says_why_there_is_none():
    referee, _, _ = make("Ana Ben", starting_dice=2, max_dice=2)
    say(referee, "two threes", "dudo", "one")  # Ana drops to one die, but only two play
    assert say(referee, "palifico") == ("This is not a palifico round: there are none with "
                                        "fewer than three players left.")
    referee, _, _ = make(palifico=False)
    assert say(referee, "palifico") == "There are no palifico rounds under the asmodee rules."
    referee, _, _ = make()
    assert "first drops to one die" in say(referee, "palifico")
    referee, _, _ = make(palifico_once=False)  # the leaflet's palifico, at every drop
    assert say(referee, "palifico").endswith("palifico comes when a player drops from two dice to one.")


def test_a_spoken_count_is_always_read_back_before_it_settles_anything():
    referee, _, _ = make()
    say(referee, "three fives", "dudo")
    # espeak's "twenty" was heard as a confident "twenty eight": the count decides who
    # loses a die, so even a sure one is asked about.
    assert say(referee, "four", confidence=0.95) == "Did you say the count is four?"
    assert say(referee, "four", confidence=0.3) == "Sorry, yes or no: did you say the count is four?"
    assert referee.game.phase is Phase.REVEAL
    assert say(referee, "yes", confidence=0.9).startswith("Four counted: the bid was right.")


def test_a_faint_no_still_declines_a_question():
    referee, _, _ = make()
    say(referee, "three fives")
    assert say(referee, "dudo", confidence=0.6) == "Did you say dudo?"
    # below every line: chatter or a whisper, the question asked again
    assert say(referee, "no", confidence=0.05) == "Sorry, yes or no: did you say dudo?"
    assert say(referee, "no", confidence=0.12) == "Not taken. If you called, say it again."  # declining changes nothing
    assert say(referee, "yes", confidence=0.9) == ""  # with nothing asked, table talk
    assert say(referee, "no", confidence=0.12) == ""


def test_no_question_about_a_call_that_would_be_refused_and_repeat_skips_say_again():
    referee, _, _ = make()
    assert say(referee, "dudo", confidence=0.95) == "There is no bid yet to doubt."
    said = say(referee, "three fives")
    assert say(referee, "four fives", confidence=0.3) == "Sorry, say again?"
    assert say(referee, "repeat") == f"Again: {said}"


def test_talk_heard_as_a_call_that_cannot_stand_gets_say_again_not_a_refusal():
    # "hmm" at a reveal of six dice is heard as a count of ten (0.87), chatter before the
    # first bid as calza (0.68): a refusal nobody asked for talks over the call being said
    referee = on_speech(make("Ana Ben Cleo")[0])
    assert say(referee, "calza", confidence=0.68) == "Sorry, say again?"
    assert say(referee, "calza", confidence=0.68) == "There is no bid yet to call calza on."  # said so again
    referee = on_speech(make("Ana Ben Cleo", starting_dice=2)[0])
    say(referee, "two threes", "dudo")
    assert say(referee, "ten", confidence=0.87).startswith("Sorry, say again")
    assert say(referee, "ten", confidence=0.95).startswith("There are only six dice in play")  # said surely
    assert referee.game.phase is Phase.REVEAL


def test_a_faint_calza_without_a_name_is_asked_about_under_every_caller_rule():
    referee, _, _ = make(preset="pressman-calza")  # anyone but the bidder and the next player
    say(referee, "three fives")
    assert say(referee, "calza", confidence=0.3) == "Did you say Cleo calza?"  # only Cleo may
    assert referee.game.phase is Phase.BIDDING
    assert say(referee, "yes", confidence=0.9).startswith("Calza from Cleo on Ana's three fives!")


def test_the_hand_that_settles_a_challenge_is_asked_about_and_an_impossible_one_is_refused():
    referee, _, _ = make("Ana Ben")
    say(referee, "three fives", "dudo", "Ben 2 2 2 2 2")
    assert say(referee, "Ana 5 5", confidence=0.6) == "Ana has five dice, not two."  # no question
    assert say(referee, "Ana 5 5 5 5 5", confidence=0.9) == "Did you say Ana five five five five five?"
    assert referee.game.phase is Phase.REVEAL
    assert "Five counted" in say(referee, "yes", confidence=0.9)


def test_a_faint_hand_is_read_back_and_taken_on_a_yes():
    referee, _, _ = make()
    say(referee, "three fives", "dudo")
    assert say(referee, "Ben 4 4 4 2 6", confidence=0.35) == "Did you say Ben four four four two six?"
    assert say(referee, "no", confidence=0.9) == "Not taken. Say the count, or your name and dice."
    assert say(referee, "Ben 4 4 4 2 6", confidence=0.1) == ""  # too faint even for a hand: chatter
    assert say(referee, "Ben 4 4 4 2 6", confidence=0.35) == "Did you say Ben four four four two six?"
    assert say(referee, "yes", confidence=0.9).startswith("Got Ben's dice: four, four, four, two, six.")
    assert referee.game.phase is Phase.REVEAL


def test_after_a_no_the_same_mishearing_is_not_asked_about_again_at_once():
    referee, _, _ = make()
    assert say(referee, "five fives", confidence=0.6, alternatives=("two fives",)) == "Did you say five fives?"
    assert say(referee, "no", confidence=0.9) == "Not taken. If you called, say it again."
    # said again and heard the same way: the other reading is asked about instead
    assert say(referee, "five fives", confidence=0.6, alternatives=("two fives",)) == "Did you say two fives?"
    assert say(referee, "no", confidence=0.9) == "Not taken. If you called, say it again."
    assert say(referee, "two fives", confidence=0.6) == "Sorry, say again?"  # no other reading: not asked again
    assert say(referee, "two fives", confidence=0.6) == "Did you say two fives?"  # but only once
    assert "Ana: two fives" in say(referee, "yes", confidence=0.9)


def test_a_doubtful_calza_that_several_may_call_asks_who_at_once():
    referee, _, _ = make("Ana Ben Cleo Dan")
    say(referee, "three fives")
    assert say(referee, "calza", confidence=0.3).startswith("Who calls calza?")  # not "Did you say calza?"
    assert referee.game.phase is Phase.BIDDING
    assert say(referee, "Cleo calza", confidence=0.9) == "Did you say Cleo calza?"  # read back, as every calza
    assert say(referee, "Cleo calza", confidence=0.9).startswith("Calza from Cleo")  # said again: yes


def test_a_calza_heard_without_its_name_twice_asks_about_each_who_may_call_it():
    # A voice whose name the recogniser loses before "calza" cannot answer "Who calls calza?"
    # by saying it again: each player who may call it is asked about in turn instead.
    referee, _, journal = make("Ana Ben Cleo Dan")
    say(referee, "three fives")
    assert say(referee, "calza", confidence=0.95).startswith("Who calls calza?")
    assert say(referee, "calza", confidence=0.95) == "Did you say Ben calza?"  # the player to move first
    say(referee, "no", confidence=0.9)
    assert say(referee, "calza", confidence=0.95) == "Did you say Cleo calza?"
    assert say(referee, "calza", confidence=0.95) == "Sorry, yes or no: did you say Cleo calza?"  # said again
    assert say(referee, "yes", confidence=0.9).startswith("Calza from Cleo on Ana's three fives!")
    assert [e.type for e in journal.events].count("challenge") == 1


def ben_said_no_to_his_calza(players):
    """Ana bids three fives; a bare calza twice, asked about as Ben's; "no"."""
    referee, _, _ = make(players)
    say(referee, "three fives")
    assert say(referee, "calza", confidence=0.95).startswith("Who calls calza?")
    assert say(referee, "calza", confidence=0.95) == "Did you say Ben calza?"
    say(referee, "no", confidence=0.9)
    return referee


def test_asking_round_the_table_for_a_calza_goes_round_again_and_starts_again_for_a_new_bid():
    referee = ben_said_no_to_his_calza("Ana Ben Cleo")
    assert say(referee, "calza", confidence=0.95) == "Did you say Cleo calza?"
    say(referee, "no", confidence=0.9)
    assert say(referee, "calza", confidence=0.95) == "Did you say Ben calza?"  # all declined: round again
    say(referee, "no", confidence=0.9)
    say(referee, "four fives")  # Ben bids instead: a calza now is on another bid
    assert referee.game.last_bid == Bid(4, 5)
    assert say(referee, "calza", confidence=0.95).startswith("Who calls calza?")


def test_a_count_declined_and_said_again_is_asked_about_as_a_one_die_hand():
    # "Dan two" with the name lost is "two": asked as the count in words its player answers
    # "no" to, then as the hand of a player on one die who has not said theirs.
    referee, _, journal = make("Ana Ben Cleo", starting_dice=2, max_dice=2)
    referee.game.dice["Cleo"] = 1
    say(referee, "two threes", "dudo")
    assert say(referee, "two", confidence=0.8) == "Did you say the count is two?"
    say(referee, "no", confidence=0.9)
    assert say(referee, "two", confidence=0.8) == "Did you say Cleo two?"
    assert say(referee, "yes", confidence=0.9) == "Got Cleo's die: two. Still need Ana and Ben."
    assert [e.type for e in journal.events][-1] == "hand"


def test_a_count_said_again_goes_round_the_players_on_one_die():
    referee, _, _ = make("Ana Ben Cleo Dan", starting_dice=2, max_dice=2)
    referee.game.dice.update({"Cleo": 1, "Dan": 1})
    say(referee, "two threes", "dudo")
    assert say(referee, "two", confidence=0.8) == "Did you say the count is two?"
    say(referee, "no", confidence=0.9)
    assert say(referee, "two", confidence=0.8) == "Did you say Cleo two?"
    say(referee, "no", confidence=0.9)
    assert say(referee, "two", confidence=0.8) == "Did you say Dan two?"  # the next on one die
    say(referee, "no", confidence=0.9)
    assert say(referee, "two", confidence=0.8) == "Did you say the count is two?"  # each offered: the count
    say(referee, "no", confidence=0.9)
    assert say(referee, "two", confidence=0.8) == "Did you say Cleo two?"  # and round again
    say(referee, "no", confidence=0.9)
    assert say(referee, "two", confidence=0.8) == "Did you say Dan two?"
    assert say(referee, "yes", confidence=0.9).startswith("Got Dan's die: two.")


def test_the_question_asked_first_says_a_count_is_the_count():
    referee, _, _ = make("Ana Ben Cleo", starting_dice=2, max_dice=2)
    say(referee, "two threes", "dudo")
    assert say(referee, "two", confidence=0.8) == "Did you say the count is two?"
    assert say(referee, "Ana 3 5", confidence=0.95) == "First: did you say the count is two? Yes or no."


def test_take_it_back_after_who_calls_calza_takes_back_the_calza_not_the_bid():
    referee, _, _ = make()
    say(referee, "three fives")
    assert say(referee, "calza", confidence=0.95).startswith("Who calls calza?")
    assert say(referee, "take it back", confidence=0.95).startswith("Not taken: calza. The bid is three fives by Ana.")
    assert referee.game.last_bid == Bid(3, 5)
    assert say(referee, "take it back", confidence=0.95) == "Did you say take it back?"  # then the bid
    assert say(referee, "take it back", confidence=0.95).startswith("Undone: Ana's three fives.")  # said again: yes


def test_a_table_whose_aces_word_the_engine_cannot_hear_is_told_what_to_say():
    speaker, journal = RecordingSpeaker(), RecordingJournal()
    referee = Referee(Game(["Ana", "Ben"], get_preset("leaflet")), speaker, journal,
                      settings=RefereeSettings(say_aces_as="ones"))
    referee.run(TextSource(["repeat"]))
    assert speaker.said[0].endswith("Ana opens. I cannot hear the word jokers: say ones instead, three ones "
                                    "for three jokers.")
    assert speaker.said[1].startswith("Again: New game: Ana and Ben.")  # the start, with the tip
    assert aces_to_say(True, "jokers") == "ones" and aces_to_say(False, "jokers") is None
    assert aces_to_say(True, "pacos") is None
    plain, _, _ = make(preset="leaflet")
    plain.run(TextSource([]))
    assert not any("cannot hear" in line for line in plain.speaker.said)


def test_who_calls_calza_still_waits_after_repeat_and_status():
    referee, _, _ = make()
    say(referee, "three fives", "calza")
    assert say(referee, "repeat").startswith("Again: Who calls calza?")
    assert say(referee, "status").endswith("Who calls calza? Say your name and calza, like Ben calza.")
    assert say(referee, "take it back").startswith("Not taken: calza.") and referee.game.last_bid == Bid(3, 5)


def test_repeat_twice_is_not_again_again():
    referee, _, _ = make()
    say(referee, "three fours")
    assert say(referee, "repeat") == "Again: Ana: three fours. Ben, your call."
    assert say(referee, "repeat") == "Again: Ana: three fours. Ben, your call."


def test_repeat_after_a_no_keeps_who_calls_calza_open():
    referee = ben_said_no_to_his_calza("Ana Ben Cleo Dan")
    # its example is the next player who may call it, not Ben, who just said no
    assert say(referee, "repeat", confidence=0.9).endswith("Who calls calza? Say your name and calza, like Cleo calza.")


def test_a_bid_taken_back_and_made_again_is_asked_about_afresh():
    referee = ben_said_no_to_his_calza("Ana Ben Cleo Dan")
    assert say(referee, "undo").startswith("Not taken: calza.")
    say(referee, "undo", "three fives")  # the bid taken back and made again: another moment
    assert say(referee, "calza", confidence=0.95).startswith("Who calls calza?")
    assert say(referee, "calza", confidence=0.95) == "Did you say Ben calza?"


def test_where_anyone_may_call_dudo_a_no_asks_about_the_next_player_at_the_next_bare_dudo():
    referee, _, journal = make("Ana Ben Cleo Dan", dudo_caller=DudoCaller.ANYONE)
    say(referee, "three fives")
    assert say(referee, "dudo", confidence=0.95) == "Did you say Ben dudo?"
    say(referee, "no", confidence=0.9)
    assert say(referee, "dudo", confidence=0.95) == "Did you say Cleo dudo?"  # not Ben's again
    say(referee, "no", confidence=0.9)
    assert say(referee, "dudo", confidence=0.95) == "Did you say Dan dudo?"
    assert say(referee, "yes", confidence=0.9).startswith("Dudo from Dan on Ana's three fives!")
    assert [e.type for e in journal.events].count("challenge") == 1


# --- another move while a question waits -----------------------------------------------------

def test_a_move_heard_while_a_question_waits_goes_nowhere_until_it_is_answered():
    referee, _, journal = make()
    say(referee, "three fours")
    assert say(referee, "four fours", confidence=0.6) == "Did you say four fours?"
    # Cleo doubts without waiting for Ben's "yes": not Ben's dudo on Ana's bid
    assert say(referee, "dudo", confidence=0.95) == "First: did you say four fours? Yes or no."
    assert say(referee, "five fours", confidence=0.95) == "First: did you say four fours? Yes or no."
    assert referee.game.last_bid == Bid(3, 4) and referee.game.turn == "Ben"
    assert [e.type for e in journal.events].count("bid") == 1
    assert say(referee, "yes", confidence=0.9) == "Ben: four fours. Cleo, your call."
    assert say(referee, "dudo", confidence=0.95) == "Did you say dudo?"
    assert say(referee, "yes", confidence=0.95).startswith("Dudo from Cleo on Ben's four fours!")


def test_a_dudo_heard_surely_is_still_asked_and_a_no_changes_nothing():
    # "dude, no" said by a neighbour reads as dudo at 0.98: the cups stay down until a "yes"
    referee, _, journal = make()
    say(referee, "three fours")
    assert say(referee, "dudo", confidence=0.98) == "Did you say dudo?"
    assert referee.game.phase is Phase.BIDDING
    assert say(referee, "no", confidence=0.9) == "Not taken. If you called, say it again."
    assert referee.game.phase is Phase.BIDDING and [e.type for e in journal.events].count("challenge") == 0
    # "oh dear" read as "take it back" at 0.98: asked, and the bid stands
    assert say(referee, "take it back", confidence=0.98) == "Did you say take it back?"
    assert say(referee, "no", confidence=0.9) == "Not taken. If you called, say it again."
    assert referee.game.last_bid == Bid(3, 4)
    # the dudo said again, clearly, while asked about: that is the yes
    assert say(referee, "dudo", confidence=0.97) == "Did you say dudo?"
    assert say(referee, "dudo", confidence=0.97).startswith("Dudo from Ben on Ana's three fours!")


def test_the_asked_challenge_said_again_with_or_without_the_only_callers_name_is_the_yes():
    referee, _, _ = make()
    say(referee, "three fours")
    assert say(referee, "dudo", confidence=0.95) == "Did you say dudo?"  # only Ben may call it
    assert say(referee, "Ben dudo", confidence=0.97).startswith("Dudo from Ben on Ana's three fours!")
    referee, _, _ = make()
    say(referee, "three fours")
    assert say(referee, "Ben dudo", confidence=0.95) == "Did you say Ben dudo?"
    # Ben's own name, said: the bare repeat is his dudo again (a calza named by the referee's
    # guess is not confirmed so: see test_a_calza_only_one_player_may_call_is_asked_about_by_name)
    assert say(referee, "dudo", confidence=0.97).startswith("Dudo from Ben on Ana's three fours!")
    referee, _, _ = make(preset="wikipedia")  # calza: only the player to move
    say(referee, "three fives")
    assert say(referee, "calza", confidence=0.95) == "Did you say calza?"
    assert say(referee, "Ben calza", confidence=0.97).startswith("Calza from Ben on Ana's three fives!")
    referee, _, _ = make(dudo_caller=DudoCaller.ANYONE)  # where others may call it, a name is another call
    say(referee, "three fours")
    assert say(referee, "dudo", confidence=0.95) == "Did you say Ben dudo?"
    assert say(referee, "Cleo dudo", confidence=0.97).startswith("First: did you say Ben dudo?")


def test_a_question_to_the_referee_heard_faintly_twice_is_answered_not_read_back():
    referee = on_speech(make()[0])
    say(referee, "three fours")
    assert say(referee, "repeat", confidence=0.3) == "Sorry, say again?"
    assert say(referee, "repeat", confidence=0.3) == "Again: Ana: three fours. Ben, your call."
    assert say(referee, "status", confidence=0.3) == "Sorry, say again?"
    assert say(referee, "status", confidence=0.3).startswith("The bid is three fours by Ana.")
    assert say(referee, "who is winning", confidence=0.07) == ""  # chatter, faintly "say again" twice
    assert say(referee, "say again", confidence=0.16) == "" and say(referee, "say again", confidence=0.16) == ""


def test_the_asked_challenge_said_again_does_not_let_the_question_lapse():
    referee = on_speech(make()[0])
    say(referee, "three fours")
    assert say(referee, "dudo", confidence=0.95) == "Did you say dudo?"
    for _ in range(4):  # unclear each time: asked again, never dropped as gone by
        assert say(referee, "Ben dudo", confidence=0.5) == "Sorry, yes or no: did you say dudo?"
    assert say(referee, "yes", confidence=0.9).startswith("Dudo from Ben")


def test_take_it_back_after_who_calls_calza_needs_no_clearer_hearing_than_after_a_question():
    referee = on_speech(make("Ana Ben Cleo Dan")[0])
    say(referee, "three fives")
    assert say(referee, "calza", confidence=0.95).startswith("Who calls calza?")
    assert say(referee, "take it back", confidence=0.5).startswith("Not taken: calza.")
    assert referee.game.last_bid == Bid(3, 5)
    assert say(referee, "calza", confidence=0.95).startswith("Who calls calza?")
    assert say(referee, "no", confidence=0.6).startswith("Not taken: calza.")  # spoken, as typed
    assert "Who calls calza?" not in say(referee, "status", confidence=0.95)


def test_a_clearly_heard_illegal_move_keeps_the_question():
    referee, _ = asking_four_fours()
    assert say(referee, "two threes", confidence=0.95) == "First: did you say four fours? Yes or no."
    assert say(referee, "Cleo dudo", confidence=0.95) == "First: did you say four fours? Yes or no."
    assert say(referee, "yes", confidence=0.9) == "Ben: four fours. Cleo, your call."


@pytest.mark.parametrize("confidence", [0.9, None], ids=["spoken", "typed"])
def test_wrong_answered_to_a_question_declines_it_as_no_does(confidence):
    referee, journal = asking_four_fours()
    before = len(journal.events)
    assert say(referee, "wrong", confidence=confidence) == "Not taken. If you called, say it again."
    assert referee.game.last_bid == Bid(3, 4) and referee.game.turn == "Ben" and len(journal.events) == before


def test_cancel_takes_back_the_bid_just_made_or_the_question_waiting():
    referee, _, journal = make()
    say(referee, "three fours", "four fours")
    assert say(referee, "cancel").startswith("Undone: Ben's four fours.")
    assert referee.game.last_bid == Bid(3, 4) and referee.game.turn == "Ben"
    referee, _ = asking_four_fours()
    before = len(referee.journal.events)
    assert say(referee, "cancel", confidence=0.9).startswith("Not taken: four fours.")
    assert referee.game.last_bid == Bid(3, 4) and len(referee.journal.events) == before


def test_the_asked_call_said_again_clearly_is_taken_as_a_yes():
    referee, _ = asking_four_fours()
    assert say(referee, "four fours", confidence=0.95) == "Ben: four fours. Cleo, your call."


def test_a_count_said_while_another_count_is_asked_about_replaces_it():
    referee, _, _ = make()
    say(referee, "three fours", "dudo")
    assert say(referee, "seven", confidence=0.95) == "Did you say the count is seven?"
    assert say(referee, "eight", confidence=0.95) == "Did you say the count is eight?"  # the count is one fact
    assert say(referee, "yes", confidence=0.9).startswith("Eight counted")


def test_another_players_dice_heard_while_a_hand_is_asked_about_wait_for_the_answer():
    referee, _, journal = make()
    say(referee, "three fours", "dudo")
    assert say(referee, "Cleo 5 5 3 1 2", confidence=0.5) == "Did you say Cleo five five three one two?"
    # Ben's dice, or a count, would leave Cleo's "yes" to them
    assert say(referee, "Ben 6 6 1 3 3", confidence=0.95) == \
        "First: did you say Cleo five five three one two? Yes or no."
    assert say(referee, "seven", confidence=0.95) == "First: did you say Cleo five five three one two? Yes or no."
    assert say(referee, "yes", confidence=0.9).startswith("Got Cleo's dice")
    assert [e.type for e in journal.events].count("hand") == 1
    # a player saying their own dice again replaces the question: that is their correction
    assert say(referee, "Ben 6 6 1 3 3", confidence=0.5) == "Did you say Ben six six one three three?"
    assert say(referee, "Ben 6 6 1 3 4", confidence=0.5) == "Did you say Ben six six one three four?"


def test_undoing_a_count_the_dice_made_takes_back_only_the_last_dice():
    referee, _, journal = make()
    say(referee, "three fives", "four fives", "dudo", "Ana 2 2 4 4 6", "Ben 6 6 1 3 3", "Cleo 5 5 3 1 2")
    assert referee.game.round_number == 2
    said = say(referee, "undo")  # only what the table needs to go on: no prompt, no holdings
    assert said == ("Undone: the count of four. Cleo called dudo on Ben's four fives. "
                    "Got Ana's dice: two, two, four, four, six; Ben's: six, six, one, three, three. Still need Cleo.")
    undo = journal.events[-1]  # the two that stand, in the undo's own line: no power cut parts them
    assert undo.type == "undo" and undo.hands == {"Ana": (2, 2, 4, 4, 6), "Ben": (6, 6, 1, 3, 3)}
    assert say(referee, "Cleo 5 5 3 1 5").startswith("Got Cleo's dice: five, five, three, one, five. Five counted")


def four_fours_asked_about():
    """Ana bids three fours; Ben's four fours, heard faintly, is asked about."""
    referee, _, _ = make()
    say(referee, "three fours")
    assert say(referee, "four fours", confidence=0.6) == "Did you say four fours?"
    return referee


def test_repeat_after_a_no_says_where_the_game_stands_not_the_question_declined():
    referee = four_fours_asked_about()
    assert say(referee, "no", confidence=0.9) == "Not taken. If you called, say it again."
    assert say(referee, "repeat", confidence=0.9).startswith("The bid is three fours by Ana. Ben, your call.")


def test_asking_about_palifico_while_a_question_waits_says_the_question_again():
    referee, _ = asking_four_fours()
    said = say(referee, "palifico", confidence=0.9)
    assert said.startswith("This is not a palifico round") and said.endswith("Did you say four fours?")
    assert say(referee, "yes", confidence=0.9) == "Ben: four fours. Cleo, your call."


def test_a_bid_named_for_a_player_who_is_out_says_so():
    referee, _, _ = make(starting_dice=1, max_dice=1)
    say(referee, "one three", "dudo", "0")  # Ana's only die goes; Ben opens round two
    assert say(referee, "Ana two fours") == "Ana is out of the game; it is Ben's turn."


def test_status_with_hidden_dice_still_says_who_is_out():
    # pressman hides how many dice each holds, not who is still playing
    referee, _, _ = make(preset="pressman", starting_dice=1, max_dice=1)
    say(referee, "one three", "dudo", "0")  # Ana's bid was wrong: her only die goes
    said = say(referee, "status")
    assert said.endswith("Ana is out.") and "dice" not in said
    referee, _, _ = make(preset="pressman")
    assert "out" not in say(referee, "status")


def test_status_while_a_question_waits_says_the_question_again():
    referee = four_fours_asked_about()
    assert say(referee, "status", confidence=0.95).endswith("fifteen dice in play. Did you say four fours?")
    assert "Ben: four fours." in say(referee, "yes", confidence=0.9)


def test_take_it_back_while_a_question_waits_takes_back_the_question_only():
    referee, _ = asking_four_fours()
    assert say(referee, "take it back", confidence=0.95).startswith(
        "Not taken: four fours. The bid is three fours by Ana. Ben, your call.")
    assert referee.game.last_bid == Bid(3, 4)
    assert say(referee, "yes", confidence=0.9) == ""  # nothing asked any more
    say(referee, "three fours", "dudo")
    assert say(referee, "seven", confidence=0.95) == "Did you say the count is seven?"
    assert say(referee, "take it back", confidence=0.95).startswith("Not taken: a count of seven.")
    assert referee.game.phase is Phase.REVEAL  # the dudo stands


def test_take_it_back_after_a_hand_takes_back_that_hand_not_the_challenge():
    referee, _, journal = make()
    say(referee, "three fours", "dudo", "Ana 4 4 3 1 2", "Ben 1 1 1 1 1")
    assert say(referee, "undo") == "Took back Ben's dice. Still need Ben and Cleo."
    assert referee.game.phase is Phase.REVEAL and journal.events[-1].type == "hand_taken_back"
    assert say(referee, "undo") == "Took back Ana's dice. Still need Ana, Ben and Cleo."
    assert say(referee, "undo").startswith("Undone: Ben's dudo.")  # no hand left: the dudo goes


def test_a_hand_said_again_is_the_last_said():
    referee, _, _ = make()
    say(referee, "three fours", "dudo", "Ana 4 4 3 1 2", "Ben 1 1 1 1 1")
    # said aloud, so a hand put under the wrong name shows
    assert say(referee, "Ana 4 4 3 1 3").startswith(
        "Got Ana's dice: four, four, three, one, three (in place of four, four, three, one, two).")
    assert "in place of" not in say(referee, "Ana 4 4 3 1 3")  # the same dice again replace nothing
    assert say(referee, "undo") == "Took back Ana's dice. Still need Ana and Cleo."


def test_repeat_and_status_do_not_talk_past_a_question():
    referee, _, _ = make()
    say(referee, "three fours", confidence=0.6)
    for line in ("repeat", "status", "repeat", "repeat"):
        say(referee, line, confidence=0.9)
    assert say(referee, "yes", confidence=0.9) == "Ana: three fours. Ben, your call."


def test_a_question_that_lapses_says_the_call_was_not_taken():
    referee, _, _ = make()
    say(referee, "three fours", confidence=0.6)
    said = [say(referee, chatter, confidence=0.1) for chatter in ("nice try", "two fives", "my turn")]
    assert said[:2] == ["", ""] and said[2].startswith("Not taken: three fours. Round one, no bid yet.")


def test_a_calza_only_one_player_may_call_is_asked_about_by_name():
    referee, _, _ = make(preset="pressman-calza")  # anyone but the bidder and the next player
    say(referee, "three fives")
    # Ben said "Ben calza" and his name went unheard: Cleo is not charged with it
    assert say(referee, "calza", confidence=0.99) == "Did you say Cleo calza?"
    assert say(referee, "no", confidence=0.9) == "Not taken. If you called, say it again."
    assert referee.game.phase is Phase.BIDDING
    assert say(referee, "calza", confidence=0.99) == "Sorry, say again?"  # the same, just declined
    assert "Ben" in say(referee, "Ben calza", confidence=0.99)  # refused: Ben is to move
    assert referee.game.phase is Phase.BIDDING
    assert say(referee, "calza", confidence=0.99) == "Did you say Cleo calza?"
    assert say(referee, "calza", confidence=0.99) == "Sorry, yes or no: did you say Cleo calza?"  # still unnamed
    assert say(referee, "yes", confidence=0.9).startswith("Calza from Cleo on Ana's three fives!")
    referee, _, _ = make(preset="pressman-calza")
    # typed, a bare calza is the one player's who may call it: a script never stalls on it
    assert say(referee, "three fives", "calza").startswith("Ana: three fives. Ben, your call. Calza from Cleo")


def test_take_it_back_with_a_question_waiting_is_never_itself_asked_about():
    referee, _, journal = make()
    say(referee, "three fours", "dudo")
    assert say(referee, "seven", confidence=0.95) == "Did you say the count is seven?"
    assert say(referee, "take it back", confidence=0.6).startswith("Not taken: a count of seven.")
    assert referee.game.phase is Phase.REVEAL and [e.type for e in journal.events][-1] == "challenge"


def test_moves_held_back_by_a_question_do_not_let_it_lapse():
    referee, _ = asking_four_fours()
    for _ in range(4):
        assert say(referee, "dudo", confidence=0.95) == "First: did you say four fours? Yes or no."
    assert say(referee, "yes", confidence=0.9) == "Ben: four fours. Cleo, your call."


def test_chatter_faintly_heard_as_moves_lets_a_question_lapse():
    # "whose go is it", "who's next" read as a dudo at 0.6 to 0.8: chatter past the question,
    # which must not hold it open for ever ("First: did you say ...?" each time)
    referee, journal = asking_four_fours()
    assert say(referee, "dudo", confidence=0.62) == "First: did you say four fours? Yes or no."
    assert say(referee, "dudo", confidence=0.65) == "First: did you say four fours? Yes or no."
    lapsed = say(referee, "dudo", confidence=0.62)
    # short, for a loud table: whose call it is, not the dice held (nothing of them changed)
    assert lapsed == "Not taken: four fours. The bid is three fours by Ana. Ben, your call."
    assert [e.type for e in journal.events].count("bid") == 1 and referee.game.turn == "Ben"


def test_hands_held_at_a_reveal_do_not_let_the_hand_asked_about_lapse():
    # With speech's lines a right hand is still read back (0.8 is under "confirm"): other
    # players' dice said meanwhile are the reveal going on, not chatter past the question.
    from companion.hearing import HearingPolicy

    game = Game("Ana Ben Cleo".split())
    referee = Referee(game, RecordingSpeaker(), RecordingJournal(), None,
                      RefereeSettings(HearingPolicy.for_speech()))
    say(referee, "three fours", "dudo")
    assert say(referee, "Ana 4 4 3 2 1", confidence=0.8) == "Did you say Ana four four three two one?"
    for line in ("Ben 4 4 4 1 6", "Cleo 4 4 4 1 6", "Ben 4 4 4 1 6"):
        assert say(referee, line, confidence=0.8).startswith("First: did you say Ana four four three two one?")
    assert say(referee, "yes", confidence=0.95).startswith("Got Ana's dice")
    assert list(referee._hands) == ["Ana"]


def test_answers_heard_as_nothing_are_chatter_and_let_the_question_lapse():
    # "did you see the match last night" over babble, read as a "no" at 0.00, four times:
    # a "yes" after that is long past the question
    referee, _, _ = make()
    say(referee, "three fours")
    assert say(referee, "four fours", confidence=0.6) == "Did you say four fours?"
    for _ in range(2):  # each asked again, as a "yes" that faint would be
        assert say(referee, "no", confidence=0.0) == "Sorry, yes or no: did you say four fours?"
    assert say(referee, "no", confidence=0.0) == "Not taken: four fours. The bid is three fours by Ana. Ben, your call."
    assert say(referee, "yes", confidence=0.95) == ""
    assert referee.game.last_bid == Bid(3, 4)


def test_a_bid_heard_unsure_that_cannot_stand_is_said_again_before_it_is_refused():
    # "four sixes" over babble heard as "fourteen sixes" at 0.7: a refusal would answer a bid
    # nobody made; the same heard again is refused, and why
    referee, _, _ = make()
    say(referee, "three fours")
    assert say(referee, "sixteen fours", confidence=0.6) == "Sorry, say again?"
    assert say(referee, "sixteen fours", confidence=0.6).startswith("Sixteen fours is not allowed")
    assert say(referee, "two fours", confidence=0.95).startswith("Two fours does not raise")  # heard surely


def test_a_count_question_waits_through_a_clear_move_that_cannot_be_taken():
    referee, _, _ = make()
    say(referee, "three fours", "dudo")
    assert say(referee, "seven", confidence=0.95) == "Did you say the count is seven?"
    assert say(referee, "five fours", confidence=0.95).startswith("The cups are up")
    assert say(referee, "Cleo calza", confidence=0.95) != ""
    assert say(referee, "yes", confidence=0.9).startswith("Seven counted")


def test_a_bare_dudo_anyone_may_call_is_asked_about_by_the_name_of_the_player_to_move():
    referee, _, _ = make(dudo_caller=DudoCaller.ANYONE)
    say(referee, "three fives")
    # Cleo said "Cleo dudo" and her name went unheard: Ben would lose the die if it were his
    assert say(referee, "dudo", confidence=0.99) == "Did you say Ben dudo?"
    assert say(referee, "no", confidence=0.9) == "Not taken. If you called, say it again."
    assert say(referee, "Cleo dudo", confidence=0.99) == "Did you say Cleo dudo?"
    assert say(referee, "yes", confidence=0.99).startswith("Dudo from Cleo on Ana's three fives!")
    referee, _, _ = make(dudo_caller=DudoCaller.ANYONE)
    assert "Dudo from Ben on Ana's three fives!" in say(referee, "three fives", "dudo")  # typed: as ever
    assert referee.game.challenge.player == "Ben"
    referee, _, _ = make()  # only the next player may: a bare dudo is theirs, asked as any dudo
    say(referee, "three fives")
    assert say(referee, "dudo", confidence=0.99) == "Did you say dudo?"
    assert say(referee, "yes", confidence=0.99).startswith("Dudo from Ben")


def test_say_again_at_a_reveal_says_what_to_say():
    # asked "Did you say the count is two?", players say "the count is three", heard far
    # worse than the number alone
    referee, _, _ = make()
    assert say(referee, "three fours", confidence=0.3) == "Sorry, say again?"
    say(referee, "three fours", "dudo")
    assert say(referee, "seven", confidence=0.3) == "Sorry, say again: just the number, or your name and dice."


def on_speech(referee):
    """The referee hearing on the speech lines (HearingPolicy.for_speech)."""
    referee.settings = replace(referee.settings, hearing=HearingPolicy.for_speech())
    return referee


def spoken_referee():
    """A referee on the speech lines, Ana's three fours standing."""
    referee, _, journal = make()
    on_speech(referee)
    say(referee, "three fours")
    return referee, journal


def spoken_reveal():
    """spoken_referee's, at the reveal of Ben's dudo (asked about and confirmed)."""
    referee, journal = spoken_referee()
    say(referee, "dudo", confidence=0.95)
    say(referee, "yes", confidence=0.95)
    return referee, journal


def dev_yet_to_say_his_one_die(players="Ana Ben Dev"):
    """A referee on the speech lines at a reveal of threes: Ana's and Ben's dice said, six
    threes shown, so four and five cannot be the count; Dev holds one die, not yet said."""
    referee, _, _ = make(players, starting_dice=3, max_dice=3)
    on_speech(referee)
    referee.game.dice["Dev"] = 1
    say(referee, "two threes", "dudo", "Ana 3 3 3", "Ben 3 3 1")
    return referee


def test_the_asked_challenge_said_again_as_surely_as_a_yes_is_the_yes():
    referee, journal = spoken_referee()
    assert say(referee, "dudo", confidence=0.95) == "Did you say dudo?"
    # "dudo!" again, unclear: not the same question word for word, but yes or no
    assert say(referee, "dudo", confidence=0.5) == "Sorry, yes or no: did you say dudo?"
    assert referee.game.phase is Phase.BIDDING
    assert say(referee, "dudo", confidence=0.75).startswith("Dudo from Ben on Ana's three fours!")


def test_a_faint_take_it_back_is_no_yes_to_the_question_about_it():
    referee, journal = spoken_referee()
    assert say(referee, "take it back", confidence=0.98) == "Did you say take it back?"  # "oh dear"
    assert say(referee, "take it back", confidence=0.45) == "Sorry, yes or no: did you say take it back?"
    assert referee.game.last_bid == Bid(3, 4)
    assert say(referee, "take it back", confidence=0.8).startswith("Undone: Ana's three fours.")


def test_after_a_no_to_a_dudo_nobody_called_the_real_one_is_asked_about():
    # laughter read as dudo, declined; then the player to move calls it
    referee, journal = spoken_referee()
    assert say(referee, "dudo", confidence=0.95) == "Did you say dudo?"
    assert say(referee, "no", confidence=0.9) == "Not taken. If you called, say it again."
    assert say(referee, "dudo", confidence=0.97) == "Did you say dudo?"
    assert say(referee, "yes", confidence=0.9).startswith("Dudo from Ben")


def test_take_it_back_with_nothing_to_take_back_is_not_asked_about():
    referee = on_speech(make()[0])
    assert say(referee, "take it back", confidence=0.98) == "There is nothing to undo."


def test_a_take_it_back_question_that_lapses_says_what_it_was():
    referee, journal = spoken_referee()
    say(referee, "take it back", confidence=0.98)
    said = [say(referee, "whose go is it", confidence=0.0) for _ in range(3)]
    assert said[-1].startswith("Not taken: take it back.")


def test_a_count_or_dice_said_again_while_asked_is_asked_again_never_taken():
    # the same voice is misheard the same way twice ("twenty" as "twenty eight"): only a yes settles
    referee, journal = spoken_reveal()
    assert say(referee, "twelve", confidence=0.8) == "Did you say the count is twelve?"
    assert say(referee, "twelve", confidence=0.85) == "Did you say the count is twelve?"
    assert referee.game.phase is Phase.REVEAL
    assert say(referee, "no", confidence=0.9) == "Not taken. Say the count, or your name and dice."


def test_a_number_that_cannot_be_the_count_is_asked_about_as_a_one_die_hand():
    # "Dev five" with the name lost, where the dice said already rule five out as the count
    referee, _, _ = make("Ana Ben Dev", starting_dice=3, max_dice=3)
    referee.game.dice["Dev"] = 1
    say(referee, "two threes", "dudo")
    say(referee, "Ana 3 3 3", "Ben 3 3 1")  # six threes at least: five cannot be the count
    assert say(referee, "five", confidence=0.5) == "Did you say Dev five?"
    assert say(referee, "yes", confidence=0.9).startswith("Got Dev's die: five. Six counted")


def test_an_unsure_call_that_cannot_stand_while_asked_gets_the_question_again():
    # "yes, dudo" heard as "Dev dudo" at 0.54: not "Only Ben may call dudo now."
    referee, journal = spoken_referee()
    assert say(referee, "dudo", confidence=0.95) == "Did you say dudo?"
    assert say(referee, "Cleo dudo", confidence=0.54) == "Sorry, yes or no: did you say dudo?"
    assert say(referee, "yes", confidence=0.9).startswith("Dudo from Ben")


def test_a_clearly_heard_impossible_count_while_asked_is_refused_with_why():
    referee = on_speech(make("Ana Ben Cleo", starting_dice=3, max_dice=3)[0])
    say(referee, "two threes", "dudo", "Ben 3 3 1")
    assert say(referee, "Ana 3 3 3", confidence=0.5) == "Did you say Ana three three three?"
    assert "not one" in say(referee, "one", confidence=0.95)  # why, and the question still waits
    assert say(referee, "yes", confidence=0.9).startswith("Got Ana's dice")


def test_chatter_heard_as_a_number_while_a_hand_is_asked_lets_the_question_lapse():
    referee = dev_yet_to_say_his_one_die("Ana Ben Cleo Dev")
    assert say(referee, "Cleo 2 2 2", confidence=0.5) == "Did you say Cleo two two two?"
    said = [say(referee, "five", confidence=0.4) for _ in range(3)]
    assert said[-1].startswith("Not taken: Cleo two two two.")


def test_a_count_heard_as_a_hand_and_declined_is_asked_as_the_count_next():
    # every player on one die: "the count is two" heard as "Ben two", declined; said again as "two"
    referee, _, _ = make("Ana Ben Dev", starting_dice=2, max_dice=2)
    referee.game.dice.update({"Ana": 1, "Ben": 1, "Dev": 1})
    say(referee, "one three", "dudo")
    assert say(referee, "Ben two", confidence=0.5) == "Did you say Ben two?"
    say(referee, "no", confidence=0.9)
    assert say(referee, "two", confidence=0.8) == "Did you say the count is two?"
    say(referee, "no", confidence=0.9)
    # then round the one-die players from the player to move, Ben (who said no) left out
    assert say(referee, "two", confidence=0.8) == "Did you say Dev two?"
    say(referee, "no", confidence=0.9)
    assert say(referee, "two", confidence=0.8) == "Did you say Ana two?"


def test_a_dudo_after_a_no_to_one_is_not_swapped_for_another_reading():
    referee, _ = spoken_referee()
    say(referee, "dudo", confidence=0.95)
    say(referee, "no", confidence=0.9)
    assert say(referee, "dudo", confidence=0.97, alternatives=("four fours",)) == "Did you say dudo?"


def test_a_move_while_take_it_back_is_asked_waits_unless_the_table_plays_on_clearly():
    referee, _ = spoken_referee()
    assert say(referee, "take it back", confidence=0.98) == "Did you say take it back?"
    assert say(referee, "four fours", confidence=0.8) == "First: did you say take it back? Yes or no."
    assert referee.game.last_bid == Bid(3, 4)
    # heard clearly, the table has played on: the question is dropped, said aloud
    assert say(referee, "four fours", confidence=0.95) == ("Not taken: take it back. The bid is three fours "
                                                           "by Ana. Ben, your call. Ben: four fours. Cleo, your call.")


def test_one_die_hands_are_offered_number_by_number_and_round_again():
    referee = dev_yet_to_say_his_one_die()
    assert say(referee, "five", confidence=0.5) == "Did you say Dev five?"
    say(referee, "no", confidence=0.9)
    assert say(referee, "four", confidence=0.5) == "Did you say Dev four?"  # another number: offered
    say(referee, "no", confidence=0.9)
    # with nobody left to offer it to, it is refused as the count, with the count's range,
    # then offered round again
    assert "between six and seven, not four" in say(referee, "four", confidence=0.95)
    assert say(referee, "four", confidence=0.95) == "Did you say Dev four?"


def test_take_it_back_at_a_reveal_gets_the_words_for_take_it_back():
    referee, _ = spoken_reveal()
    assert say(referee, "take it back", confidence=0.3) == "Sorry, say again?"
    assert say(referee, "take it back", confidence=0.98) == "Did you say take it back?"
    assert say(referee, "no", confidence=0.9) == "Not taken. If you called, say it again."


def test_a_refused_move_leaves_the_take_it_back_question_waiting():
    referee, _ = spoken_referee()
    say(referee, "take it back", confidence=0.98)
    assert say(referee, "Ana four fours", confidence=0.98) == "First: did you say take it back? Yes or no."
    assert say(referee, "yes", confidence=0.9).startswith("Undone: Ana's three fours.")


def test_a_faint_number_nobody_holds_is_offered_round_again_after_a_say_again():
    referee = dev_yet_to_say_his_one_die()
    assert say(referee, "four", confidence=0.5) == "Did you say Dev four?"
    say(referee, "no", confidence=0.9)
    assert say(referee, "four", confidence=0.5).startswith("Sorry, say again")
    assert say(referee, "four", confidence=0.5) == "Did you say Dev four?"


def test_a_call_by_a_player_already_out_is_refused_in_words_no_event_uses():
    """"Tess is out of the game." is what the table hears as she goes out: a refusal worded
    so would sound like that happening again."""
    referee, _, _ = make("Ana Ben Tess", starting_dice=1)
    say(referee, "one five", "two fives", "dudo", "two", "one five")
    assert "Tess is out of the game." in " ".join(referee.speaker.said)
    assert "Tess is already out of the game and cannot call calza." in say(referee, "Tess calza")
