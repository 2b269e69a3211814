"""`companion play --input wav -`: recordings named one at a time on standard input, each
read when the referee waits for the next call, so a program can play the table's part."""

import io
import json
import shutil

import pytest

from conftest import run_companion
from test_listen_decode import speak

from companion.listen.errors import AudioFormatError
from companion.listen.inputs import SpeechSettings, open_source
from companion.listen.sources import PROMPT, PromptedWavSource, make_engine

pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None or shutil.which("sox") is None,
                                reason="espeak-ng and sox make the recordings")

PLAYERS = ("Ana", "Ben", "Cleo")


@pytest.fixture(scope="module")
def calls(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stdin-calls")
    return {text: speak(text, "en-us", folder / f"{text.replace(' ', '-')}.wav")
            for text in ("two fives", "three fives")}


def test_each_path_is_read_after_a_prompt_and_bad_ones_are_skipped(calls, tmp_path):
    junk = tmp_path / "junk.wav"
    junk.write_text("not audio")
    too_long = tmp_path / ("a" * 300 + ".wav")  # the system refuses to look such a name up
    lines = io.StringIO("".join(f"{p}\n" for p in (calls["two fives"], tmp_path / "missing.wav",
                                                    junk, "", too_long, calls["three fives"])))
    out, warnings = io.StringIO(), []
    source = PromptedWavSource(make_engine("bundled", None, PLAYERS), lines, out, warnings.append)
    first = source.next_utterance()
    assert (first.text, first.origin) == ("two fives", str(calls["two fives"]))
    assert out.getvalue() == PROMPT + "\n"  # nothing read ahead: the next path may depend on the answer
    assert source.next_utterance().text == "three fives"
    assert out.getvalue() == (PROMPT + "\n") * 6  # asked again after each bad or blank line
    assert "missing.wav: no such file" in warnings[0]
    assert "junk.wav: not a readable WAV" in warnings[1]
    assert warnings[2].endswith(".wav: File name too long") and len(warnings) == 3
    assert source.next_utterance() is None  # end of input ends the game


def test_standard_input_is_not_mixed_with_files(calls):
    with pytest.raises(AudioFormatError, match="standard input"):
        open_source("wav", paths=["-", calls["two fives"]], settings=SpeechSettings(engine="bundled"))


def test_play_hears_recordings_named_on_stdin_and_goes_on_past_a_bad_path(calls, tmp_path):
    journal = tmp_path / "game.jsonl"
    paths = [calls["two fives"], tmp_path / "missing.wav", calls["three fives"]]
    result = run_companion("play", "--players", *PLAYERS, "--mute", "--engine", "bundled",
                           "--journal", journal, "--input", "wav", "-",
                           input_text="".join(f"{p}\n" for p in paths), timeout=180)
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert out[0].startswith("New game") and out[1:] == [
        PROMPT, "Ana: two fives. Ben, your call.",
        PROMPT, PROMPT, "Ben: three fives. Cleo, your call.",
        PROMPT], result.stdout
    assert "missing.wav: no such file" in result.stderr
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [(e["player"], e["count"], e["face"]) for e in events if e["type"] == "bid"] == [
        ("Ana", 2, 5), ("Ben", 3, 5)]


def test_a_recording_whose_name_is_not_in_the_terminals_encoding_is_still_found(calls, tmp_path):
    # A Latin-1 file name read from a UTF-8 standard input: kept as Python keeps such names,
    # so the path still names the file (typed lines holding such bytes are never calls).
    import os
    import subprocess
    import sys

    from conftest import ROOT

    latin = tmp_path / os.fsdecode(b"caf\xe9.wav")
    latin.write_bytes(calls["two fives"].read_bytes())
    journal = tmp_path / "game.jsonl"
    result = subprocess.run([sys.executable, "-m", "companion", "play", "--players", *PLAYERS, "--mute",
                             "--engine", "bundled", "--journal", str(journal), "--input", "wav", "-"],
                            input=os.fsencode(str(latin)) + b"\n", capture_output=True, timeout=180, cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8"))
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [(e["player"], e["count"], e["face"]) for e in events if e["type"] == "bid"] == [("Ana", 2, 5)]


def test_play_help_tells_how_to_drive_it():
    result = run_companion("play", "--help")
    assert "--input wav -" in result.stdout and PROMPT in result.stdout
