"""Before the game each player says their name ("Ana calza", "Ana one two three"): the
referee asks for it, and the bundled recogniser learns the name by the player's own voice."""

from pathlib import Path

import numpy as np
import pytest
from test_listen_recogniser import say as said_by_espeak
from test_referee import RecordingSpeaker

from companion.listen.engine import ENGINE_CONFIRM, ENGINE_THRESHOLD
from companion.listen.recogniser import SPOTTED_CONFIDENCE, CallRecogniser
from companion.referee import NAME_TRIES, Referee
from companion.rules import Bid, BidAction, ChallengeAction, CountAction, Game
from companion.sources import NAME_PHRASES, Expect, TextSource, Utterance

PLAYERS = ("Ana", "Ben", "Cleo")


# --- the referee asks -------------------------------------------------------------------------

class LearningSource(TextSource):
    """Heard lines from a list, as a speech source that can learn names would give them."""

    def __init__(self, lines, can_learn=True):
        super().__init__(lines)
        self.can_learn = can_learn
        self.asked: list[tuple[str, str, Expect, frozenset]] = []
        self._expecting = (Expect.ANY, frozenset())

    def expect(self, what, hand_sizes=frozenset()):
        self._expecting = (what, hand_sizes)

    def learn_name(self, player, phrase):
        if self.can_learn:
            self.asked.append((player, phrase, *self._expecting))
        return self.can_learn

    def next_utterance(self):
        utterance = super().next_utterance()  # heard, not typed: it goes through the policy
        return None if utterance is None else Utterance(utterance.text, confidence=1.0, origin="test")


def names_said(players=PLAYERS):
    return [f"{p} {phrase}" for p in players for phrase, _ in NAME_PHRASES]


def test_each_player_is_asked_for_their_name_before_the_game_and_nothing_is_a_call():
    speaker, game = RecordingSpeaker(), Game(list(PLAYERS))
    source = LearningSource(names_said() + ["three fours"])
    Referee(game, speaker).run(source)
    assert [(p, phrase) for p, phrase, *_ in source.asked] == [
        (p, phrase) for p in PLAYERS for phrase, _ in NAME_PHRASES]
    # Each phrase is listened for as what it is: a calza while bidding, three dice as a hand.
    assert {(phrase, what, sizes) for _, phrase, what, sizes in source.asked} == {
        ("calza", Expect.CALLS, frozenset()), ("one two three", Expect.COUNT, frozenset({3}))}
    said = " ".join(speaker.said)
    assert said.startswith("Before we play, I will learn how each of you says your name. "
                           "Ana, say: Ana calza. Ana, say: Ana one two three. Thanks, Ana. "
                           "Ben, say: Ben calza.")
    assert "Thanks, Cleo. New game: Ana, Ben and Cleo." in said
    # "Ana calza" and Ana's dice were no calls; the first call of the game is Ana's bid.
    assert [type(a).__name__ for a in game.actions] == ["BidAction"]
    assert said.endswith("Ana: three fours. Ben, your call.")


def test_a_name_not_heard_is_asked_again_and_given_up_after_a_few_tries():
    speaker, game = RecordingSpeaker(), Game(["Ana", "Ben"])
    wrong = ["two fives"] * NAME_TRIES  # Ana's calza, never heard so
    source = LearningSource([*wrong, "Ana one two three", "Ben calza", "Ben one two three", "dudo"])
    Referee(game, speaker).run(source)
    said = " ".join(speaker.said)
    assert said.count("Sorry, say again: Ana calza.") == NAME_TRIES - 1
    assert "Ana, say: Ana one two three. Thanks, Ana." in said  # one of two is enough
    assert game.actions == ()  # "two fives" was no bid, the "dudo" has no bid to challenge


def test_repeat_while_names_are_learnt_says_the_words_again_without_using_a_try():
    speaker = RecordingSpeaker()
    source = LearningSource(["repeat"] * (NAME_TRIES + 1) + names_said(["Ana", "Ben"]))
    Referee(Game(["Ana", "Ben"]), speaker).run(source)
    said = " ".join(speaker.said)
    assert said.count("Ana, say: Ana calza.") == NAME_TRIES + 2 and "Sorry, say again" not in said
    assert "Thanks, Ana." in said and "Thanks, Ben." in said and "could not catch" not in said


def test_only_a_repeat_heard_as_the_game_would_answer_it_keeps_the_try():
    class Heard(LearningSource):
        def __init__(self, lines, confidences):
            super().__init__(lines)
            self.confidences = iter(confidences)

        def next_utterance(self):
            utterance = super().next_utterance()
            return None if utterance is None else Utterance(utterance.text, confidence=next(self.confidences, 1.0),
                                                            origin="test")

    speaker = RecordingSpeaker()  # coughs faintly read as "repeat" (0.05), and two clear ones (0.5)
    source = Heard(["repeat"] * 4 + names_said(["Ana", "Ben"]), [0.05, 0.5, 0.5, 0.05])
    Referee(Game(["Ana", "Ben"]), speaker).run(source)
    # two tries used by the coughs, none by the clear repeats: Ana's calza is heard at the third
    asked_ana = [phrase for player, phrase, *_ in source.asked if player == "Ana"]
    assert asked_ana == ["calza"] * 5 + ["one two three"]
    assert speaker.said[0].startswith("Before we play") and "Thanks, Ana." in " ".join(speaker.said)


def test_a_player_heard_in_neither_phrase_is_told_so():
    speaker = RecordingSpeaker()
    source = LearningSource(["status"] * (2 * NAME_TRIES) + names_said(["Ben"]))
    Referee(Game(["Ana", "Ben"]), speaker).run(source)
    assert "I could not catch it, Ana; I will go by how your name usually sounds." in " ".join(speaker.said)
    assert "Thanks, Ben." in " ".join(speaker.said)


def test_input_ending_while_names_are_learnt_ends_the_run_before_the_game():
    speaker = RecordingSpeaker()
    Referee(Game(list(PLAYERS)), speaker).run(LearningSource(["Ana calza"]))
    assert "New game" not in " ".join(speaker.said)


def test_a_source_that_cannot_learn_goes_straight_to_the_game():
    speaker = RecordingSpeaker()
    source = LearningSource(["three fours"], can_learn=False)
    game = Referee(Game(list(PLAYERS)), speaker).run(source)
    assert speaker.said[0].startswith("New game") and len(game.actions) == 1


def test_typed_games_are_not_asked_for_names():
    speaker = RecordingSpeaker()
    Referee(Game(list(PLAYERS)), speaker).run(TextSource(["three fours"]))
    assert speaker.said[0].startswith("New game")


def test_players_out_of_the_game_are_not_asked(tmp_path):
    game = Game(["Ana", "Ben", "Cleo"], first="Ana")
    game.dice["Ben"] = 0  # as a resumed game where Ben is out
    source = LearningSource(names_said(["Ana", "Cleo"]))
    Referee(game, RecordingSpeaker()).run(source, resumed=True)
    assert {p for p, *_ in source.asked} == {"Ana", "Cleo"}


def test_a_finished_game_resumed_also_asks_the_last_player_out():
    # A won game is resumed to take back its last count, which brings that player back.
    game = Game(["Ana", "Ben", "Cleo"], first="Ana")
    game.dice.update({"Ana": 1, "Ben": 0, "Cleo": 1})
    game.apply(BidAction("Ana", Bid(1, 3)))
    game.apply(ChallengeAction("dudo", "Cleo"))
    game.apply(CountAction(1))  # Cleo loses her last die: Ana wins
    assert game.winner == "Ana"
    source = LearningSource(names_said(["Ana", "Cleo"]))
    Referee(game, RecordingSpeaker()).run(source, resumed=True)
    assert [p for p, *_ in source.asked][::2] == ["Ana", "Cleo"]  # not Ben, out long before


# --- the recogniser learns ---------------------------------------------------------------------

VOICE = "en-gb-scotland"  # not one of the start-up template voices


def say(text: str, tmp_path: Path, rate: int = 160) -> np.ndarray:
    return said_by_espeak(text, tmp_path, VOICE, rate)


def learn(recogniser: CallRecogniser, player: str, phrase: str, audio: np.ndarray):
    expect = dict(NAME_PHRASES)[phrase]
    recogniser.expect(expect, frozenset({3}) if expect is Expect.COUNT else frozenset())
    assert recogniser.learn_name(player, phrase)
    return recogniser.decode(audio)


@pytest.fixture(scope="module")
def learnt(tmp_path_factory):
    """A recogniser that has heard each player say both phrases, at the table's pace."""
    tmp = tmp_path_factory.mktemp("names")
    recogniser = CallRecogniser(PLAYERS)
    recogniser.espeak_templates = {p: len(t) for p, t in recogniser.names.templates.items()}
    recogniser.learnt = [learn(recogniser, p, phrase, say(f"{p} {phrase}", tmp, rate=150))
                         for p in PLAYERS for phrase, _ in NAME_PHRASES]
    return recogniser


def test_a_name_said_when_asked_is_learnt_and_given_back_as_that_call(learnt):
    assert [(r.text, r.confidence) for r in learnt.learnt] == [
        (f"{p.lower()} {phrase}", 1.0) for p in PLAYERS for phrase, _ in NAME_PHRASES]
    names = learnt.names
    assert {p: len(t) - learnt.espeak_templates[p] for p, t in names.templates.items()} == {
        p: len(NAME_PHRASES) for p in PLAYERS}
    assert {phrase: sorted(own) for phrase, own in names.own.items()} == {
        phrase: sorted(PLAYERS) for phrase, _ in NAME_PHRASES}


def test_other_words_said_when_asked_are_heard_as_usual_and_not_learnt(tmp_path):
    recogniser = CallRecogniser(PLAYERS)
    result = learn(recogniser, "Ana", "calza", say("three fives", tmp_path))
    assert result.text == "three fives" and result.confidence < 1.0
    assert recogniser.names.own == {}
    # The learning was for that one utterance: Ana's calza heard later is a calza, not a lesson.
    recogniser.expect(Expect.CALLS)
    assert recogniser.decode(say("Ana calza", tmp_path)).confidence < 1.0
    assert recogniser.names.own == {}


def test_a_name_never_heard_is_not_learnt_from_the_first_call_of_the_game(tmp_path):
    # The tries at Ana's name ran out with nothing heard (a player away, a quiet room): the
    # game's first listening ends the lesson, so "Ana calza" then is a call, not her name.
    recogniser = CallRecogniser(PLAYERS)
    assert recogniser.learn_name("Ana", "calza")
    recogniser.expect(Expect.CALLS)
    assert recogniser.decode(say("Ana calza", tmp_path)).confidence < 1.0
    assert recogniser.names.own == {}


def test_a_players_own_calza_is_spotted_and_other_calls_are_not(learnt, tmp_path):
    names = learnt.names
    def spotted(text):
        feats = learnt.features(say(text, tmp_path, rate=175))
        return names.spot(feats, learnt.network.log_probs(feats))

    for player in PLAYERS:  # said a little faster than when learnt
        assert spotted(f"{player} calza") == player
    for other in ("three fives", "dudo", "two pacos", "take it back"):
        assert spotted(other) is None, other
    # A call after the player's own name is theirs, but no calza: the name's frames alone
    # are as near as in their calza, what follows them is not.
    for player in PLAYERS:
        for other in ("three fives", "palifico", "two pacos"):
            assert spotted(f"{player} {other}") is None, (player, other)


def test_a_named_call_is_not_taken_for_the_players_own_calza(learnt, tmp_path):
    # The frames of "Cleo" in "Cleo dudo" are Cleo's own "Cleo" as in her "Cleo calza": the
    # name heard, nothing was lost, and the dudo stands.
    learnt.expect(Expect.CALLS)
    for player in PLAYERS:
        heard = learnt.decode(say(f"{player} dudo", tmp_path))
        assert heard.text == f"{player.lower()} dudo", heard
        assert heard.details.get("spotted") is None


def test_a_spotted_calza_is_asked_about_never_applied_at_once(learnt, tmp_path, monkeypatch):
    # A network that missed the name heard only the bid; the player's own recording says Ben.
    monkeypatch.setattr(learnt.names, "spot", lambda feats, log_probs: "Ben")
    learnt.expect(Expect.CALLS)
    result = learnt.decode(say("three fives", tmp_path))
    assert result.text == "ben calza" and "three fives" in result.alternatives
    assert ENGINE_THRESHOLD <= result.confidence == SPOTTED_CONFIDENCE < ENGINE_CONFIRM
    learnt.expect(Expect.COUNT)  # after a challenge a calza is no call: nothing is spotted
    assert learnt.decode(say("three", tmp_path)).text == "three"
    learnt.expect(Expect.CALLS)  # a dudo heard (a short name lost: "Jo dudo") is no calza, however near
    assert learnt.decode(say("dudo", tmp_path)).text == "dudo"


def test_the_development_set_counts_calzas_spotted_by_player_and_other_calls_spotted():
    from training.names_dev import Spotting, spotting_counts

    rows = [Spotting("Ana calza", "Ana", "Ana", 0.02, 0.2),  # right
            Spotting("Ben calza", "Ben", "Ana", 0.05, 0.1),  # spotted, as the wrong player
            Spotting("Cleo calza", "Cleo", "Cleo", 0.2, 0.1),  # too far to be spotted
            Spotting("dudo", None, "Ana", 0.09, 0.06),  # another call spotted
            Spotting("status", None, "Ben", 0.05, 0.01)]  # near, but as near every player
    assert spotting_counts(rows, cost=0.1, gap=0.05) == {
        "calzas": 3, "others": 2, "right": 1, "wrong player": 1, "others spotted": 1}
    assert spotting_counts(rows, cost=0.3, gap=0.05)["right"] == 2


def test_the_hands_development_set_counts_what_a_read_back_line_lets_through():
    from training.hands_dev import at_line

    hands = [(0.95, True), (0.5, True), (0.35, False), (0.25, True), (0.05, False)]
    chatter = [0.0, 0.4, 0.1]
    assert at_line(hands, chatter, 0.3) == {"read back": 3, "right": 2, "right said again": 1, "chatter": 1}
    assert at_line(hands, chatter, 0.7) == {"read back": 1, "right": 1, "right said again": 2, "chatter": 0}


def test_a_new_game_of_the_evening_asks_only_the_names_not_asked_before():
    # Ana and Cleo said theirs before the first game; Ben, out by then in a resumed game, did not
    source = LearningSource(names_said(["Ben"]) + ["three fours"])
    referee = Referee(Game(list(PLAYERS)), RecordingSpeaker())
    game = referee.run(source, names_asked=frozenset({"Ana", "Cleo"}))
    assert [p for p, *_ in source.asked] == ["Ben", "Ben"] and len(game.actions) == 1
    assert referee.names_asked == {"Ana", "Ben", "Cleo"}  # passed on to the game after
