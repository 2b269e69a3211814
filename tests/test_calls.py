"""The one parser shared by typed lines and speech transcripts."""

import pytest

from companion.calls import (
    NOTHING_SAID, BidCall, CalzaCall, Command, CommandCall, DudoCall, HandCall, NumberCall, PalificoCall,
    UnparsableCall, bid_words, call_to_json, describe_call, number_words, parse_call, parse_call_or_none)
from companion.listen.vocabulary import SOUND_ALIKES
from companion.rules import Bid

PLAYERS = ("Ana", "Ben", "Cleo")
PLURAL = {1: ["aces", "pacos", "ones"], 2: ["twos"], 3: ["threes"], 4: ["fours"], 5: ["fives"],
          6: ["sixes"]}
SINGULAR = {1: ["ace", "paco", "one"], 2: ["two"], 3: ["three"], 4: ["four"], 5: ["five"],
            6: ["six"]}


@pytest.mark.parametrize("count", [*range(1, 31), 40, 45, 50, 59, 60, 69])
@pytest.mark.parametrize("face", range(1, 7))
def test_every_bid_in_words_and_digits(count, face):
    # Past 30 too: the referee itself says "forty five dice in play" in a big game.
    words = PLURAL[face] if count > 1 else SINGULAR[face]
    for word in words:
        assert parse_call(f"{number_words(count)} {word}") == BidCall(Bid(count, face))
        assert parse_call(f"{count} {word}") == BidCall(Bid(count, face))


@pytest.mark.parametrize("bid, said", [
    (Bid(9, 5), "nine fives"), (Bid(1, 6), "one six"), (Bid(4, 1), "four pacos"),
    (Bid(1, 1), "one paco"), (Bid(21, 2), "twenty one twos"), (Bid(30, 3), "thirty threes"),
])
def test_bids_in_words_read_back(bid, said):
    assert bid_words(bid) == said
    assert parse_call(said) == BidCall(bid)


def test_the_word_for_aces_follows_the_rules():
    assert bid_words(Bid(4, 1), "aces") == "four aces"
    assert bid_words(Bid(1, 1), "jokers") == "one joker"


def test_a_and_an_count_one():
    assert parse_call("a six") == BidCall(Bid(1, 6))
    assert parse_call("an ace") == BidCall(Bid(1, 1))


@pytest.mark.parametrize("text", ["I bid nine fives", "um, nine fives please", "9 fives",
                                  "nine fives", "9fives", "Nine Fives!"])
def test_fillers_and_punctuation(text):
    assert parse_call(text) == BidCall(Bid(9, 5))


@pytest.mark.parametrize("text, bid", [
    ("five 2s", Bid(5, 2)), ("13 2s", Bid(13, 2)), ("twelve 4's", Bid(12, 4)), ("four 3", Bid(4, 3)),
    ("3 1s", Bid(3, 1)), ("make it eight sixes", Bid(8, 6)), ("I'll go four fours", Bid(4, 4)),
])
def test_bids_typed_as_rulebooks_and_players_write_them(text, bid):
    assert parse_call(text) == BidCall(bid)


@pytest.mark.parametrize("text, name", [
    ("take it back please", "undo"), ("um take it back", "undo"), ("ok, take it back", "undo"),
    ("whose turn is it please", "status"), ("ok whose turn is it", "status"), ("the bid please", "status"),
])
def test_commands_holding_filler_words_are_read_with_fillers_around_them(text, name):
    assert parse_call(text) == CommandCall(Command(name))


@pytest.mark.parametrize("text", ["make it", "um", "the", "please"])
def test_only_words_said_around_a_call_is_no_call_and_not_a_name_said_alone(text):
    with pytest.raises(UnparsableCall) as caught:
        parse_call(text, ("Ana", "Ben"))
    assert caught.value.why != NOTHING_SAID  # which the referee answers as a name alone


@pytest.mark.parametrize("text", ["four 7", "2s", "four 0"])
def test_a_digit_that_is_no_face_is_no_bid(text):
    with pytest.raises(UnparsableCall):
        parse_call(text)


@pytest.mark.parametrize("text", ["dudo", "Dudo!", "I doubt it", "liar", "doodoo", "do do"])
def test_dudo(text):
    assert parse_call(text) == DudoCall()


@pytest.mark.parametrize("text", ["calza", "calzo", "spot on", "kalza", "calls a", "cal so"])
def test_calza(text):
    assert parse_call(text) == CalzaCall()


def test_palifico_and_speakers():
    assert parse_call("palifico") == PalificoCall()
    assert parse_call("Ben calza", PLAYERS) == CalzaCall("Ben")
    assert parse_call("dudo, Cleo", PLAYERS) == DudoCall("Cleo")
    assert parse_call("ana five fives", PLAYERS) == BidCall(Bid(5, 5), "Ana")


def test_hands():
    assert parse_call("Ana 1 5 5 3 2", PLAYERS) == HandCall("Ana", (1, 5, 5, 3, 2), "Ana")
    assert parse_call("ben one five five", PLAYERS) == HandCall("Ben", (1, 5, 5), "Ben")
    assert parse_call("Cleo 15532", PLAYERS).dice == (1, 5, 5, 3, 2)


@pytest.mark.parametrize("said, count", [("seventy fours", 70), ("eighty eight fives", 88), ("ninety nine sixes", 99)])
def test_big_counts_in_words(said, count):
    assert parse_call(said).bid.count == count and number_words(count) == said.rsplit(" ", 1)[0]


@pytest.mark.parametrize("n", [*range(1, 31), 305])
def test_bare_numbers(n):
    assert parse_call(number_words(n)) == NumberCall(n)
    assert parse_call(str(n)) == NumberCall(n)


@pytest.mark.parametrize("text, name", [
    ("undo", Command.UNDO), ("repeat", Command.REPEAT), ("say again", Command.REPEAT),
    ("status", Command.STATUS), ("what's the bid", Command.STATUS),
    ("whats the bid", Command.STATUS), ("yes", Command.YES), ("no", Command.NO)])
def test_commands(text, name):
    assert parse_call(text) == CommandCall(name)


# What a player means by each command phrase, written from the words, not from the parser's
# table.
COMMANDS_MEANT = {
    Command.UNDO: ["undo", "take it back", "take that back", "cancel"],
    Command.REPEAT: ["repeat", "again", "say again", "say that again", "pardon", "what"],
    Command.STATUS: ["status", "what is the bid", "whats the bid", "what was the bid", "the bid", "score",
                     "how many dice", "whose turn", "whose turn is it"],
    Command.YES: ["yes", "yeah", "correct", "right"],
    Command.NO: ["no", "nope", "wrong"],
    Command.NEW_GAME: ["new game", "play again", "another game"],
}


@pytest.mark.parametrize("text, name", [(t, n) for n, texts in COMMANDS_MEANT.items() for t in texts])
def test_every_command_phrase_is_the_command_it_says(text, name):
    assert parse_call(text) == CommandCall(name)


@pytest.mark.parametrize("text, bid", [
    ("for fives", Bid(4, 5)), ("to sixes", Bid(2, 6)), ("too threes", Bid(2, 3)),
    ("sex fours", Bid(6, 4)), ("five sexes", Bid(5, 6)), ("ate twos", Bid(8, 2)),
    ("won six", Bid(1, 6)), ("tree pacos", Bid(3, 1)), ("three pakos", Bid(3, 1)),
    ("four paco's", Bid(4, 1)), ("twenty for fives", Bid(24, 5)),
    # singular faces, misheard as the numbers are
    ("one sex", Bid(1, 6)), ("nine sex", Bid(9, 6)), ("nine for", Bid(9, 4)),
    ("five to", Bid(5, 2)), ("seven tree", Bid(7, 3)), ("a sick", Bid(1, 6))])
def test_deliberate_mishearings(text, bid):
    assert parse_call(text) == BidCall(bid)


@pytest.mark.parametrize("text, bid", [
    ("four deuces", Bid(4, 2)), ("one deuce", Bid(1, 2)), ("a deuce", Bid(1, 2)),
    ("seven treys", Bid(7, 3)), ("one trey", Bid(1, 3)), ("a trey", Bid(1, 3))])
def test_deuces_and_treys_are_twos_and_threes(text, bid):
    # a card player's words for the two and the three
    assert parse_call(text) == BidCall(bid)


def test_vosk_sound_alikes_map_back():
    for word, options in SOUND_ALIKES.items():
        for option in options:
            if word == "dudo":
                assert parse_call(option) == DudoCall(), option
            elif word in ("calza", "calzo"):
                assert parse_call(option) == CalzaCall(), option
            elif word == "palifico":
                assert parse_call(option) == PalificoCall(), option
            else:
                assert parse_call(f"four {option}") == BidCall(Bid(4, 1)), option


@pytest.mark.parametrize("text", [
    "six of us played last night", "pass me the chips please", "she rolled three fives",
    "I lost two dice already", "who wants another drink", "five people came to the party",
    "", "   ", "fives", "nine fives and a six"])
def test_chatter_is_not_a_call(text):
    with pytest.raises(UnparsableCall):
        parse_call(text, PLAYERS)
    assert parse_call_or_none(text, PLAYERS) is None


@pytest.mark.parametrize("text", ["-3 fives", "-1", "three - 1", "Ana -1 2 3"])
def test_a_minus_sign_is_not_dropped(text):
    with pytest.raises(UnparsableCall, match="negative"):
        parse_call(text, PLAYERS)
    assert parse_call("twenty-one fives") == BidCall(Bid(21, 5))  # a hyphen between words is fine


@pytest.mark.parametrize("text", ["3.5", "count is 3.5", "2.0 fives"])
def test_a_decimal_point_is_not_dropped(text):
    with pytest.raises(UnparsableCall, match="whole number"):  # not "3 5", three fives
        parse_call(text, PLAYERS)
    for hand in ("Ana 5,5,3,1,2", "Ana 5.5.3.1.2"):  # commas or dots part a hand's dice
        assert parse_call(hand, PLAYERS) == HandCall("Ana", (5, 5, 3, 1, 2), "Ana")
    assert parse_call("Ben 6.6", PLAYERS) == HandCall("Ben", (6, 6), "Ben")


def test_json_and_description():
    assert parse_call("nine fives").to_json() == {"kind": "bid", "count": 9, "face": 5}
    assert parse_call("Ben calza", PLAYERS).to_json() == {"kind": "calza"}
    assert describe_call(parse_call("Ben calza", PLAYERS)) == "Ben calza"
    assert describe_call(parse_call("Ben 6 1", PLAYERS)) == "Ben six one"
    assert describe_call(parse_call("4 aces")) == "four pacos"


@pytest.mark.parametrize("text, call", [
    ("the count is seven", NumberCall(7)), ("a count of two", NumberCall(2)), ("count of 12", NumberCall(12)),
    ("make it a six", BidCall(Bid(1, 6))), ("it is a six", BidCall(Bid(1, 6))), ("is it five fives", BidCall(Bid(5, 5)))])
def test_a_count_said_as_the_count(text, call):
    assert parse_call(text) == call


def test_json_names_the_caller_where_one_was_said():
    assert call_to_json(parse_call("Ben calza", PLAYERS)) == {"kind": "calza", "caller": "Ben"}
    assert call_to_json(parse_call("calza, Cleo", PLAYERS)) == {"kind": "calza", "caller": "Cleo"}
    assert call_to_json(parse_call("calza", PLAYERS)) == {"kind": "calza"}
    assert call_to_json(parse_call("Ana dudo", PLAYERS)) == {"kind": "dudo", "caller": "Ana"}
    assert call_to_json(parse_call("Ana 5 5 3", PLAYERS)) == {  # a hand's player is its caller
        "kind": "hand", "player": "Ana", "dice": [5, 5, 3]}
    assert call_to_json(None) is None


@pytest.mark.parametrize("text, speaker", [
    ("José calza", "José"), ("jose calza", "José"), ("Jean-Luc dudo", "Jean-Luc"),
    ("jean luc dudo", "Jean-Luc"), ("calza, Jean-Luc", "Jean-Luc"), ("O'Neil calza", "O'Neil"),
    ("oneil calza", "O'Neil"), ("Zoe palifico", "Zoë"), ("ZOË calza", "Zoë"), ("aydin calza", "Aydın"),
    ("Yildiz dudo", "Yıldız"), ("nguyen calza", "Nguyễn"), ("hanna calza", "Ħanna")])
def test_names_with_accents_hyphens_and_apostrophes_are_read_typed_either_way(text, speaker):
    call = parse_call(text, ("José", "Jean-Luc", "O'Neil", "Zoë", "Aydın", "Yıldız", "Nguyễn", "Ħanna"))
    assert call.speaker == speaker


def test_a_hyphenated_name_gives_a_hand():
    call = parse_call("jean luc 3 3 1 2 2", ("Ana", "Jean-Luc"))
    assert call == HandCall("Jean-Luc", (3, 3, 1, 2, 2), "Jean-Luc")
    assert parse_call("one paco", ("Ana", "Jean-Luc")) == BidCall(Bid(1, 1))


def test_a_big_tables_bid_of_a_hundred_or_more_is_a_bid():
    assert parse_call("100 fives") == BidCall(Bid(100, 5))
    with pytest.raises(UnparsableCall, match="a count from one up"):
        parse_call("0 fives")


def test_a_name_is_matched_by_its_own_words_whoever_else_plays():
    # "spot on" is a calza and "ben to fives" Ben's bid, with a hyphenated name at the table too
    assert parse_call("spot on", ("Ana", "Ben", "Jean-Luc")) == CalzaCall()
    assert parse_call("ben to fives", ("Ben", "Bento", "Jean-Luc")) == BidCall(Bid(2, 5), "Ben")
    assert parse_call("anabel calza", ("Ana", "Anabel")) == CalzaCall("Anabel")
    assert parse_call("lukasz calza", ("Łukasz", "Ben")) == CalzaCall("Łukasz")
