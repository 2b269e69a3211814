"""Grammar building, the Vosk vocabulary check (fake model), model download."""

import argparse

import pytest

from companion.calls import (
    BidCall, CalzaCall, CommandCall, DudoCall, HandCall, NumberCall, PalificoCall, face_words, number_words,
    parse_call)
from companion.errors import CompanionError
from companion.listen import vosk_engine
from companion.listen.commands import add_models_arguments, run_models
from companion.listen.errors import ModelError
from companion.listen.vocabulary import (
    ACE_WORDS_HEARD, COMMANDS, DIE_WORDS, VocabularyError, grammar_words, normalise_name, phrase_list)
from companion.listen.vosk_engine import checked_phrases, find_model, vosk_result
from companion.sources import Expect


class FakeModel:
    """Stands in for vosk.Model: knows an English word list, not the Spanish words."""

    def __init__(self, missing=("dudo", "calza", "calzo", "pacos", "palifico", "kalza",
                                "kalso", "doodoo", "pakos", "packos", "palafico", "zoltan")):
        self.missing = set(missing)
        self.asked = []

    def find_word(self, word):
        self.asked.append(word)
        return -1 if word in self.missing else 7


# What each challenge phrase the grammar says means, by its words.
CHALLENGES_MEANT = {"dudo": DudoCall, "i doubt it": DudoCall, "liar": DudoCall, "calza": CalzaCall,
                    "calzo": CalzaCall, "spot on": CalzaCall, "exactly": CalzaCall, "palifico": PalificoCall}


def test_every_grammar_phrase_parses_to_the_call_it_says():
    # The grammar is all a recogniser can hear, so a phrase read as another call than its
    # words say would be a call nobody made. Each is checked by its own words: a name and a
    # challenge, a name and a die (a hand), a number alone, a command, or a count and a face.
    players = ("Ana", "Ben", "Cleo")
    names = {p.lower(): p for p in players}
    numbers = {number_words(n): n for n in range(31)}
    for phrase in phrase_list(players):
        call = parse_call(phrase, players)  # raises if the grammar could say a non-call
        words = phrase.split()
        speaker = names.get(words[0]) or names.get(words[-1])
        rest = [w for w in words if w not in names]
        if phrase in COMMANDS:
            assert isinstance(call, CommandCall), phrase
        elif " ".join(rest) in CHALLENGES_MEANT:
            assert call == CHALLENGES_MEANT[" ".join(rest)](speaker), phrase
        elif speaker is not None:  # a name and its first die
            assert isinstance(call, HandCall) and call.player == speaker, phrase
            assert [number_words(d) for d in call.dice] == rest, phrase
        elif phrase in numbers:
            assert call == NumberCall(numbers[phrase]), phrase
        else:  # "[i bid] COUNT FACE": the count said, and the face in either number under any ace word
            if rest[:2] == ["i", "bid"]:
                rest = rest[2:]
            assert isinstance(call, BidCall) and call.speaker is None, phrase
            count, face = " ".join(rest[:-1]), rest[-1]
            assert count == number_words(call.bid.count) or (count == "a" and call.bid.count == 1), phrase
            assert face in {face_words(call.bid.face, n, w) for n in (1, 2) for w in ACE_WORDS_HEARD}, phrase


def test_a_bigger_table_is_listened_to_up_to_its_most_dice():
    players = ("Ana", "Ben", "Cleo")
    assert "thirty" in grammar_words(players) and "forty" not in grammar_words(players)
    assert "thirty one" not in phrase_list(players, Expect.COUNT)
    assert {"forty", "forty five"} <= set(phrase_list(players, Expect.COUNT, max_count=45))
    assert "forty two fives" in phrase_list(players, Expect.CALLS, max_count=45)
    assert "forty" in grammar_words(players, max_count=45)
    for phrase in phrase_list(players, max_count=99):
        parse_call(phrase, players)  # the text parser reads every count the grammar says
    assert "ninety nine" in phrase_list(players, Expect.COUNT, max_count=99)
    with pytest.raises(VocabularyError, match="at most 99"):
        phrase_list(players, max_count=100)


# What each moment of the game can hear: the parsed kinds of every phrase of its grammar.
MOMENTS = {Expect.CALLS: {"bid", "dudo", "calza", "palifico", "command"},
           Expect.COUNT: {"number", "hand", "command"},
           Expect.ANY: {"bid", "dudo", "calza", "palifico", "command", "number", "hand"}}


@pytest.mark.parametrize("expect", list(Expect), ids=lambda e: e.value)
def test_each_moment_of_the_game_has_only_its_calls(expect):
    players = ("Ana", "Ben", "Cleo")
    kinds = {}
    for phrase in phrase_list(players, expect):
        kinds.setdefault(parse_call(phrase, players).to_json()["kind"], []).append(phrase)
    if expect is Expect.COUNT:
        # Vosk strings hands together from a name and a die, then pairs of dice words; a
        # pair alone reads as a bid ("five five"), which the referee refuses at the count.
        assert all(len(p.split()) == 2 and p.split()[0] in DIE_WORDS for p in kinds.pop("bid"))
    assert set(kinds) == MOMENTS[expect]


def test_grammar_words_have_players_and_every_word():
    words = grammar_words(["Ana", "Ben"])
    assert {"ana", "ben", "dudo", "calza", "calzo", "palifico", "pacos", "twenty", "thirty",
            "sixes"} <= words


def test_names_must_be_one_word_of_letters():
    assert normalise_name(" Cleo ") == "cleo"
    assert normalise_name("José") == "jose" and normalise_name("Jean-Luc") == "jeanluc"
    with pytest.raises(VocabularyError, match="letters only"):
        normalise_name("R2-D2")
    assert isinstance(VocabularyError("x"), CompanionError)


def test_vosk_vocabulary_check_substitutes_sound_alikes():
    model = FakeModel()
    phrases, subs = checked_phrases(model, ["Ana", "Ben"])
    assert subs["dudo"] == "do do" and subs["calza"] == "cal za"
    assert subs["pacos"] == "paco's" and subs["palifico"] == "pally fico"
    words = {w for p in phrases for w in p.split()}
    assert not words & model.missing  # nothing Vosk would silently drop
    assert "do do" in phrases and "ben do do" in phrases and "four paco's" in phrases
    for phrase in phrases:
        parse_call(phrase, ["Ana", "Ben"])  # the sound-alikes still mean the same calls


def test_vosk_vocabulary_check_uses_words_txt_when_present():
    known = {w for p in phrase_list(["Ana"]) for w in p.split()} - {"dudo"}
    known |= {"do", "doodoo"}
    phrases, subs = checked_phrases(FakeModel(missing=()), ["Ana"], words=known)
    assert subs == {"dudo": "doodoo"}


def test_vosk_unknown_player_name_is_a_clear_error():
    with pytest.raises(VocabularyError, match="Zoltan"):
        checked_phrases(FakeModel(), ["Ana", "Zoltan"])


def test_vosk_result_confidence():
    result = {"result": [{"word": "nine", "conf": 0.9}, {"word": "fives", "conf": 0.7}],
              "text": "nine fives"}
    assert vosk_result(result) == ("nine fives", 0.7)
    assert vosk_result({"text": ""}) == ("", 0.0)


def test_find_model(tmp_path):
    assert find_model(tmp_path) is None
    (tmp_path / "vosk-model-x" / "am").mkdir(parents=True)
    assert find_model(tmp_path) == tmp_path / "vosk-model-x"


def test_models_are_found_in_the_users_data_folder_and_downloaded_there(tmp_path, monkeypatch):
    # A pip-installed companion has no checkout: its models live in the user's data folder.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setattr(vosk_engine, "CHECKOUT_MODELS_DIR", tmp_path / "no-checkout")
    assert vosk_engine.user_models_dir() == tmp_path / "data" / "companion" / "models"
    assert find_model() is None
    url = _model_zip(tmp_path / "m.zip", "vosk-model-tiny")
    path = vosk_engine.download("vosk-model-tiny", url=url)
    assert path.parent == vosk_engine.user_models_dir() and find_model() == path


def test_download_offline_is_a_clean_error(tmp_path):
    with pytest.raises(ModelError, match="cannot download .*copy an unzipped Vosk model"):
        vosk_engine.download("vosk-model-small-en-us-0.15", tmp_path,
                             url="http://127.0.0.1:9/model.zip")
    assert not any(tmp_path.iterdir())


def test_a_download_refused_for_a_clock_not_yet_set_says_so(tmp_path, monkeypatch):
    # a Pi with no clock of its own, not yet set from the network: no certificate is valid yet
    import ssl
    import time
    import urllib.error
    import urllib.request

    def refused(code, why):
        def urlopen(url, timeout):
            error = ssl.SSLCertVerificationError(1, why)
            error.verify_code = code
            raise urllib.error.URLError(error)
        return urlopen

    # a clock at 1970, or months behind (a Pi unplugged since the summer): not yet valid
    monkeypatch.setattr(urllib.request, "urlopen", refused(9, "certificate is not yet valid"))
    monkeypatch.setattr(time, "localtime", lambda *seconds: time.struct_time((1970, 1, 1, 0, 1, 0, 3, 1, 0)))
    with pytest.raises(ModelError, match="clock says 1970-01-01, and the site's certificate is not valid by it; set"):
        vosk_engine.download("vosk-model-tiny", tmp_path / "models")
    monkeypatch.undo()
    monkeypatch.setattr(urllib.request, "urlopen", refused(9, "certificate is not yet valid"))
    with pytest.raises(ModelError, match="clock says 20.*not valid by it; set the date"):
        vosk_engine.download("vosk-model-tiny", tmp_path / "models")
    # with the clock right, another fault of the certificate: as any other failure
    monkeypatch.setattr(urllib.request, "urlopen", refused(10, "certificate has expired"))
    with pytest.raises(ModelError, match="cannot download .*certificate has expired.*copy an unzipped"):
        vosk_engine.download("vosk-model-tiny", tmp_path / "models")


def _model_zip(path, folder):
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{folder}/am/final.mdl", b"not really a model")
        z.writestr(f"{folder}/conf/model.conf", b"--sample-frequency=16000\n")
    return path.as_uri()


def test_download_unpacks_the_model_folder_with_progress(tmp_path):
    url = _model_zip(tmp_path / "m.zip", "vosk-model-tiny")
    seen = []
    killed = tmp_path / "models" / ".vosk-model-tiny-ab12"  # a download killed half-way
    (killed / "unpacked").mkdir(parents=True)
    path = vosk_engine.download("vosk-model-tiny", tmp_path / "models", url=url,
                                progress=lambda done, total: seen.append(done))
    assert path == tmp_path / "models" / "vosk-model-tiny" and (path / "am" / "final.mdl").is_file()
    assert seen and seen[-1] == (tmp_path / "m.zip").stat().st_size
    assert [p.name for p in (tmp_path / "models").iterdir()] == ["vosk-model-tiny"]  # no leftovers
    assert find_model(tmp_path / "models") == path


def test_download_of_the_wrong_archive_installs_nothing(tmp_path):
    url = _model_zip(tmp_path / "m.zip", "some-other-model")
    with pytest.raises(ModelError, match="does not hold the model folder vosk-model-tiny/ .*some-other-model"):
        vosk_engine.download("vosk-model-tiny", tmp_path / "models", url=url)
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    with pytest.raises(ModelError, match="not a usable zip"):
        vosk_engine.download("vosk-model-tiny", tmp_path / "models", url=(tmp_path / "junk.zip").as_uri())
    assert not any((tmp_path / "models").iterdir()) and find_model(tmp_path / "models") is None


def test_models_download_command_offline(capsys):
    parser = argparse.ArgumentParser()
    add_models_arguments(parser)
    code = run_models(parser.parse_args(["download", "no-such-model",
                                         "--url", "http://127.0.0.1:9/x.zip"]))
    err = capsys.readouterr().err
    assert code == 2 and "companion: cannot download no-such-model" in err
    assert "Traceback" not in err


def test_models_list_says_where_it_looked_when_it_finds_no_vosk_model(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setattr(vosk_engine, "CHECKOUT_MODELS_DIR", tmp_path / "no-checkout")
    parser = argparse.ArgumentParser()
    add_models_arguments(parser)
    assert run_models(parser.parse_args(["list"])) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "bundled call recogniser   (used by --engine auto)"
    assert "no Vosk model in" in err and str(tmp_path / "data" / "companion" / "models") in err


def test_broken_vosk_model_is_a_clean_error(tmp_path):
    (tmp_path / "am").mkdir()
    with pytest.raises(ModelError, match="cannot be loaded"):
        vosk_engine.VoskEngine(tmp_path)
    with pytest.raises(ModelError, match="no Vosk model"):
        vosk_engine.VoskEngine(tmp_path / "missing")


def test_every_face_word_the_engines_listen_for_is_read_as_that_face():
    """The face words are listed again for each engine (the network's tokens and grammar,
    Vosk's vocabulary); each must be a word of the network's tokens where it is one, and be
    read by the parser as the face it stands for, or a call heard right would be misread."""
    from companion.calls import BidCall, parse_call_or_none
    from companion.listen import recogniser, tokens, vocabulary, vosk_engine
    from companion.rules import Bid

    for table, count in ((recogniser.PLURAL, "three"), (recogniser.SINGULAR, "one")):
        for face, words in table.items():
            for word in words:
                assert word in tokens.TOKENS, word
                assert parse_call_or_none(f"{count} {word}") == BidCall(Bid(3 if count == "three" else 1, face)), word
    names = ["ones", "twos", "threes", "fours", "fives", "sixes"]
    face_of = {**{w: f for f, w in enumerate(names, 1)}, **{w: f for f, w in enumerate(vocabulary.DIE_WORDS, 1)},
               "aces": 1, "pacos": 1, "ace": 1, "paco": 1}
    listed = [*tokens.FACES_PLURAL, *(w for w in tokens.FACES_SINGULAR_EXTRA if w != "a"),  # "a six"
              *vocabulary.FACE_TERMS, *vosk_engine.CALL_WORDS]
    for word in listed:
        assert parse_call_or_none(f"three {word}") == BidCall(Bid(3, face_of[word])), word
    assert parse_call_or_none("a six") == BidCall(Bid(1, 6))
