"""A whole game replayed from recorded speech: `companion play --input wav DIR`."""

import json
import shutil

import pytest

from conftest import run_companion
from test_listen_decode import speak

pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None or shutil.which("sox") is None,
                                reason="espeak-ng and sox make the recorded game")

# Like a player at a noisy table, every call is said twice, each time followed by "yes":
# the referee asks "Did you say ...?" about calls it is only fairly sure of (a "yes" with
# nothing asked is passed over), says "say again" to ones it is unsure of, and a call
# heard twice is refused the second time (a bid that does not raise, a count out of turn).
SCRIPT = ["two threes", "three threes", "Ana doodoe", "zero",  # Ben's bid was wrong: he loses a die
          "two fives", "Ana doodoe", "zero"]  # Ben bid again and lost his last die


def test_recorded_game_to_the_winner(tmp_path):
    folder = tmp_path / "game"
    folder.mkdir()
    n = 0
    for phrase in SCRIPT:
        for text in (phrase, "yes", phrase, "yes"):
            n += 1
            speak(text, "en-us+klatt", folder / f"{n:02d}.wav")
    journal = tmp_path / "game.jsonl"
    result = run_companion("play", "--players", "Ana", "Ben", "--dice", "2", "--first", "Ana",
                           "--input", "wav", folder, "--mute", "--journal", journal,
                           "--engine", "bundled", timeout=180)
    assert result.returncode == 0, result.stderr
    assert "speech engine: bundled call recogniser" in result.stderr
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    assert events[-1] == {"type": "game_over", "winner": "Ana"}, result.stdout
    assert "Ana wins the game!" in result.stdout


def test_a_table_of_nine_can_bid_forty(tmp_path):
    # Nine players hold 45 dice: the grammar listens for counts that far, which the
    # rulebooks' six players (30 dice) never need.
    folder = tmp_path / "big"
    folder.mkdir()
    for n, text in enumerate(["forty fives", "yes"]):
        speak(text, "en-gb", folder / f"{n:02d}.wav")
    players = ["Ana", "Ben", "Cleo", "Dan", "Eve", "Fay", "Gus", "Hal", "Ivy"]
    result = run_companion("play", "--players", *players, "--input", "wav", folder, "--mute",
                           "--journal", tmp_path / "big.jsonl", "--engine", "bundled")
    assert result.returncode == 0, result.stderr
    assert "Ana: forty fives. Ben, your call." in result.stdout, result.stdout


def test_a_recorded_game_can_begin_with_the_players_names(tmp_path):
    folder = tmp_path / "named"
    folder.mkdir()
    said = ["Ana calza", "Ana one two three", "Ben calza", "Ben one two three", "three fours"]
    for n, text in enumerate(said):
        speak(text, "en-gb-scotland", folder / f"{n:02d}.wav")
    journal = tmp_path / "named.jsonl"
    result = run_companion("play", "--players", "Ana", "Ben", "--input", "wav", folder, "--mute",
                           "--journal", journal, "--engine", "bundled", "--learn-names")
    assert result.returncode == 0, result.stderr
    assert result.stdout.index("Thanks, Ben.") < result.stdout.index("New game"), result.stdout
    assert "Ana: three fours. Ben, your call." in result.stdout, result.stdout
    # The names were no calls: the journal holds the game and Ana's bid only.
    events = [json.loads(line)["type"] for line in journal.read_text().splitlines()]
    assert events.count("bid") == 1 and "calza" not in " ".join(events), events
