"""Whole scripted games through the real command line: `companion play --input text`."""

import json
import os
import signal
import subprocess
import sys
import time
import wave
from pathlib import Path

import numpy as np
import pytest

from companion.journal import load_game
from companion.rules import Bid
from conftest import ROOT, run_companion

# A three-player game to the end, with an illegal bid, an undo, a hand count and a calza.
GAME = """\
# round one: Ana opens
three fours
two fours
four fours
dudo
two
# Ben lost a die and opens round two
five sixes
undo
two sixes
three sixes
Ben calza
status
Ana 6 6 1 2 3
Cleo 4 4 4 4 4
Ben 2 2 3 3
"""


def play(tmp_path, script, *extra, players=("Ana", "Ben", "Cleo")):
    journal = tmp_path / "game.jsonl"
    result = run_companion("play", "--players", *players, "--input", "text", "--mute",
                           "--journal", journal, *extra, input_text=script)
    return result, journal


def test_scripted_game_announcements_and_final_state(tmp_path):
    result, journal = play(tmp_path, GAME)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Round one. Ana opens. Fifteen dice in play." in out
    assert "Two fours does not raise three fours. The smallest raises: " \
           "three fives, three sixes, four of any face, or two pacos." in out
    assert "Dudo from Cleo on Ben's four fours!" in out
    assert "Ben loses a die and has four dice left." in out
    assert "Undone: Ben's five sixes." in out
    assert "Calza from Ben on Cleo's three sixes!" in out
    assert "Got Ana's dice: six, six, one, two, three. Still need Ben and Cleo." in out
    assert "Three counted" in out and "Ben is exactly right and wins back a die, and now has five dice." in out
    game = load_game(journal)
    assert game.dice == {"Ana": 5, "Ben": 5, "Cleo": 5}
    assert game.round_number == 3 and game.turn == "Ben"  # Ben lost a die last (asmodee)
    types = [json.loads(line)["type"] for line in journal.read_text().splitlines()]
    assert types.count("undo") == 1 and types.count("challenge") == 2


def test_game_to_the_winner(tmp_path):
    script = "\n".join(["one three", "dudo", "0", "one three", "dudo", "0"]) + "\n"
    result, journal = play(tmp_path, script, "--dice", "1", "--first", "Ben", players=("Ana", "Ben", "Cleo"))
    assert result.returncode == 0, result.stderr
    assert "Ben is out of the game." in result.stdout
    assert "Round two. Cleo opens." in result.stdout  # the next player after the eliminated one
    assert "Cleo is out of the game." in result.stdout
    assert result.stdout.strip().endswith("Ana wins the game!")
    game = load_game(journal)
    assert game.winner == "Ana" and game.active_players == ("Ana",)


def test_a_won_game_resumed_can_undo_its_last_count(tmp_path):
    result, journal = play(tmp_path, "one three\ndudo\n0\n", "--dice", "1", players=("Ana", "Ben"))
    assert result.stdout.strip().endswith("Ben wins the game!")
    result = run_companion("play", "--resume", journal, "--input", "text", "--mute", input_text="undo\n")
    assert result.returncode == 0, result.stderr
    assert "Resuming the game. The game is over: Ben won. Say 'take it back' to undo the last count." in result.stdout
    assert "Undone: the count of zero." in result.stdout
    assert "continue it with: companion play --resume" in result.stderr  # a game again, paused
    game = load_game(journal)
    assert game.winner is None and game.dice == {"Ana": 1, "Ben": 1}


def test_repeat_after_resuming_says_where_the_game_stands_not_a_second_resume(tmp_path):
    _, journal = play(tmp_path, "three fours\n", players=("Ana", "Ben"))
    result = run_companion("play", "--resume", journal, "--input", "text", "--mute", input_text="repeat\n")
    resumed, again = result.stdout.strip().splitlines()[-2:]
    assert resumed.startswith("Resuming the game. The bid is three fours by Ana. Ben, your call.")
    assert again == "Again: " + resumed.removeprefix("Resuming the game. ")


def test_a_call_typed_at_a_terminal_can_be_edited_and_recalled(tmp_path):
    # a line typed at the terminal is edited as in a shell: Ctrl-A goes to its start, the up
    # arrow brings back the last call (without line editing both are control characters,
    # refused as "not text")
    import pty
    import select

    journal = tmp_path / "game.jsonl"
    pid, terminal = pty.fork()
    if pid == 0:  # the child: the real command line, at a terminal
        os.environ["PYTHONPATH"] = str(ROOT)
        os.chdir(ROOT)
        os.execv(sys.executable, [sys.executable, "-m", "companion", "play", "--input", "text", "--mute",
                                  "--players", "Ana", "Ben", "--journal", str(journal)])
    shown = b""

    def wait_for(text: bytes) -> None:
        nonlocal shown
        end = time.monotonic() + 60
        while text not in shown and time.monotonic() < end:
            if select.select([terminal], [], [], 0.5)[0]:
                try:
                    shown += os.read(terminal, 4096)
                except OSError:  # the child has gone
                    break
        assert text in shown, shown.decode(errors="replace")
        # what came after it in the same read is kept (on a busy machine the next prompt does)
        shown = shown[shown.index(text) + len(text):]

    try:
        wait_for(b"> ")
        os.write(terminal, b"wo fours\x01t\r")  # "two fours", its first letter put in last
        wait_for(b"Ben, your call.")
        wait_for(b"> ")
        os.write(terminal, b"\x1b[A" + b"\x7f" * 5 + b"fives\r")  # up: "two fours", edited to "two fives"
        wait_for(b"Ana, your call.")
        os.write(terminal, b"quit\r")
        wait_for(b"continue it with")
    finally:
        os.close(terminal)
        os.waitpid(pid, 0)
    game = load_game(journal)
    assert game.last_bid == Bid(2, 5) and game.last_bidder == "Ben"


def test_new_game_at_a_won_game_plays_again_in_a_journal_of_its_own(tmp_path):
    script = "one three\nnew game\ndudo\n0\nnew game\ntwo fours\n"  # Ben opens, Ana calls dudo
    result, journal = play(tmp_path, script, "--dice", "1", "--rules", "pressman", "--first", "ben",
                           players=("Ana", "Ben"))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    # before the win it is refused, and the game goes on
    assert "This game is not over. The bid is one three by Ben. Ana, your call. A new game can start" in out
    assert "Ana wins the game!\nNew game: Ana and Ben. One die each, pressman rules. Round one. Ben opens." in out
    assert "Ana won; type new game to play again with the same players" in result.stderr
    journals = sorted(tmp_path.glob("*.jsonl"))
    assert len(journals) == 2 and journal in journals  # the next game beside the first
    again = next(j for j in journals if j != journal)
    assert load_game(journal).winner == "Ana"  # the won game, as it was
    second = load_game(again)
    assert second.rules.name == "pressman" and second.dice == {"Ana": 1, "Ben": 1}
    assert second.last_bid is not None and second.turn == "Ana"  # Ben (who opened the last) bid two fours
    assert f"companion play --resume {again}" in result.stderr.splitlines()[-1]


_NEXT_GAME_UNSAVABLE = """
import sys
from pathlib import Path
from companion import cli, journal

journal.new_session_path = lambda folder: Path(sys.argv[1]) / "game.jsonl"  # under a file: no journal there
sys.exit(cli.main(["play", "--players", "Ana", "Ben", "--input", "text", "--mute", "--dice", "1",
                   "--journal", sys.argv[2]]))
"""


def test_a_new_game_that_cannot_be_saved_is_said_not_to_start(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    journal = tmp_path / "won.jsonl"
    result = subprocess.run([sys.executable, "-c", _NEXT_GAME_UNSAVABLE, str(blocked), str(journal)],
                            input="one three\ndudo\n0\nnew game\n", capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stdout.rstrip().endswith("I cannot start the game: I cannot save a game there. The screen says why.")
    assert "I have to stop" not in result.stdout  # said once, and not as a game cut short
    assert load_game(journal).winner == "Ben"  # the won game, as it was


def test_names_the_voice_says_alike_are_refused_where_it_says_them(tmp_path):
    (tmp_path / "aplay").write_text("#!/bin/sh\nexit 0\n")  # a speaker to say the game on
    (tmp_path / "aplay").chmod(0o755)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PATH=f"{tmp_path}:{os.environ['PATH']}")

    def play_as(*options, journal):
        return subprocess.run([sys.executable, "-c", _WITH_A_SPEAKER, "play", "--players", "Jon", "John",
                               "--input", "text", *options, "--journal", str(journal)],
                              input="", capture_output=True, text=True, timeout=120, env=env)

    said = play_as("--wav-out", str(tmp_path / "said.wav"), journal=tmp_path / "said.jsonl")
    assert said.returncode == 2 and "Jon and John sound the same when I say them" in said.stderr
    assert "or play on the screen alone with --mute" in said.stderr
    assert not (tmp_path / "said.jsonl").exists() and not (tmp_path / "said.wav").exists()  # nothing left behind
    printed = play_as("--mute", journal=tmp_path / "printed.jsonl")
    assert printed.returncode == 0, printed.stderr  # on the screen they are two names
    # where no voice can speak (no sound card), the announcements are printed: two names again
    unvoiced = subprocess.run([sys.executable, "-c", _WITH_A_SPEAKER.replace("max_output_channels\": 2",
                                                                             "max_output_channels\": 0"),
                               "play", "--players", "Jon", "John", "--input", "text", "--journal",
                               str(tmp_path / "unvoiced.jsonl")], input="", capture_output=True, text=True,
                              timeout=120, env=env)
    assert unvoiced.returncode == 0 and "printed only" in unvoiced.stderr, unvoiced.stderr


def test_a_command_typed_from_memory_is_told_what_to_do():
    names = run_companion("play", "Ana", "Ben", "Cleo", "--input", "text")
    assert names.returncode == 2
    assert "Ana Ben Cleo look like the players' names: companion play --players Ana Ben Cleo" in names.stderr
    dash = run_companion("play", "-")  # recordings' paths from standard input, without --input wav
    assert dash.returncode == 2 and "add --input wav to read the recordings' paths" in dash.stderr
    typo = run_companion("play", "--playerz", "Ana", "Ben")
    assert typo.returncode == 2 and "unrecognized arguments: --playerz (see: companion play --help)" in typo.stderr
    bare = run_companion()
    assert bare.returncode == 2 and "play" in bare.stderr and "recap" in bare.stderr  # the commands, listed
    empty = run_companion("rules", "")
    assert empty.returncode == 2 and "unknown rules preset ''" in empty.stderr  # not the list of all
    nameless = run_companion("play", "--players", "Ana", "Ben", "--rules", "", "--input", "text", "--mute")
    assert nameless.returncode == 2 and "--rules needs a preset's name" in nameless.stderr  # not asmodee, unasked
    version = run_companion("--version")
    assert version.returncode == 0 and version.stdout.startswith("companion ")


def test_rules_preset_changes_the_announcements(tmp_path):
    result, _ = play(tmp_path, "three fours\nfour aces\n", "--rules", "pressman")
    assert "four aces" in result.stdout and "in play" not in result.stdout


def test_house_rules_from_toml(tmp_path):
    toml = tmp_path / "house.toml"
    toml.write_text('preset = "leaflet"\nstarting_dice = 3\ndudo_caller = "anyone"\n')
    result, journal = play(tmp_path, "two fours\nCleo dudo\n1\n", "--house-rules", toml)
    assert result.returncode == 0, result.stderr
    game = load_game(journal)
    assert game.rules.starting_dice == 3 and game.dice["Ana"] == 2
    assert "Dudo from Cleo" in result.stdout and "jokers included" in result.stdout


@pytest.mark.parametrize("args, message", [
    (["--players", "Ana", "ana", "--input", "text"], "different name (names are heard without case or accents): 'Ana' and 'ana'"),
    (["--players", "Ana", "Ben", "--rules", "nonsense", "--input", "text"], "unknown rules preset 'nonsense'"),
    (["--players", "Ana", "Ben", "--first", "Zed", "--input", "text"], "no player called 'Zed'"),
    (["--input", "text"], "name the players"),
    (["--players", "Ana", "Ben", "--dice", "0", "--input", "text"], "--dice must be 1 to 10 (as many as a cup holds), not 0"),
    (["--players", "Ana", "Ben", "--dice", "1000000", "--input", "text"], "--dice must be 1 to 10"),
    (["--resume", "--players", "Dan", "Eve", "--input", "text"], "keeps its own players and rules: leave out --players"),
    (["--resume", "--rules", "pressman", "--dice", "3", "--input", "text"], "leave out --rules, --dice"),
    (["--resume", "old.jsonl", "--input", "text"], "use either --resume old.jsonl or --journal"),
    (["--players", "Ana", "Ben", "--input", "text", "--learn-names"], "--learn-names learns how players say their names"),
    (["--players", "Ana", "Ben", "--input", "text", "--model", "m.npz", "--engine", "bundled"],
     "--engine and --model only apply to speech (how calls are heard): use them with --input mic or --input wav"),
    (["--players", "Ana", "Ben", "--input", "text", "--model", "m.npz"],
     "--model applies only to speech (how calls are heard): use it with --input mic or --input wav"),
    (["--players", "Ana", "Ben", "--input", "wav", "a.wav", "--mic", "3"], "--mic 3 is the microphone to listen to"),
])
def test_bad_setups_get_a_clear_message(tmp_path, args, message):
    result = run_companion("play", *args, "--mute", "--journal", tmp_path / "j.jsonl", input_text="")
    assert result.returncode == 2 and message in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_house_rules_get_a_clear_message(tmp_path):
    toml = tmp_path / "house.toml"
    toml.write_text('starting_dice = "lots"\n')
    result, _ = play(tmp_path, "", "--house-rules", toml)
    assert result.returncode == 2 and "bad value 'lots' for rules field 'starting_dice' (a whole number)" in result.stderr
    toml.write_text('calza = "yes"\n')
    result, _ = play(tmp_path, "", "--house-rules", toml)
    assert "bad value 'yes' for rules field 'calza' (true or false, without quotes)" in result.stderr
    for line, message in (("starting_dice = 99999999999", "a player holds at most 10 dice"),
                          ("calza_min_players = -5", "calza_min_players cannot be below 0")):
        toml.write_text(line + "\n")
        result, _ = play(tmp_path, "", "--house-rules", toml)
        assert result.returncode == 2 and message in result.stderr, result.stderr
    toml.write_text('wild_sixes = true\n')
    result, _ = play(tmp_path, "", "--house-rules", toml)
    assert "unknown rules field 'wild_sixes'" in result.stderr
    toml.write_text('preset = "nosuch"\n')  # named with its file: it is no --rules mistake
    result, _ = play(tmp_path, "", "--house-rules", toml)
    assert result.returncode == 2 and f"house rules {toml}: unknown rules preset 'nosuch'" in result.stderr
    toml.write_text('rules = "pressman"\n')
    result, _ = play(tmp_path, "", "--house-rules", toml)
    assert result.returncode == 2 and "'rules' must be a table of fields" in result.stderr
    assert 'write preset = "pressman"' in result.stderr
    assert "Traceback" not in result.stderr


def test_a_winning_count_the_journal_could_not_write_does_not_end_the_game(tmp_path):
    import resource

    script = "one four\ndudo\nzero\n"
    whole, journal = play(tmp_path, script, "--dice", "1", players=("Ana", "Ben"))
    assert "the game is over" in whole.stderr
    lines = journal.read_bytes().splitlines(keepends=True)
    before_count = sum(map(len, lines[:4]))  # the start (two lines), the bid, the dudo
    limited = tmp_path / "limited.jsonl"

    def small_disk():  # the journal can grow no further than the dudo
        resource.setrlimit(resource.RLIMIT_FSIZE, (before_count + 10, before_count + 10))

    result = subprocess.run([sys.executable, "-m", "companion", "play", "--players", "Ana", "Ben", "--dice", "1",
                             "--input", "text", "--mute", "--journal", str(limited)], input=script,
                            capture_output=True, text=True, timeout=120, preexec_fn=small_disk)
    assert "cannot write the journal" in result.stderr
    assert "the game is paused; continue it with" in result.stderr and "the game is over" not in result.stderr


def test_output_to_a_full_disk_is_one_line_not_a_traceback():
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full to fill")
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "companion", "rules"], stdout=full, stderr=subprocess.PIPE,
                                text=True, timeout=60)
    assert result.returncode == 2 and result.stderr.strip() == "companion: cannot write the output: No space left on device", result.stderr


def test_typing_quit_pauses_the_game_there(tmp_path):
    result, journal = play(tmp_path, "two fives\nQuit\nthree fives\n")
    assert result.returncode == 0, result.stderr
    assert "the game is paused; continue it with" in result.stderr
    assert load_game(journal).bids == [("Ana", Bid(2, 5))]  # nothing after the quit


def test_output_cut_short_by_its_reader_ends_quietly():
    # `companion rules | head -1`: here the reader goes before anything is written
    rules = subprocess.Popen([sys.executable, "-m", "companion", "rules"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    rules.stdout.close()
    _, err = rules.communicate(timeout=60)
    assert "Traceback" not in err and "Error" not in err, err


@pytest.mark.parametrize("name", ["pressman", "wikipedia-difference", "leaflet"])
def test_what_companion_rules_prints_of_a_preset_is_a_house_rules_file_of_it(tmp_path, name):
    from companion.rules import get_preset
    from companion.play_settings import load_house_rules
    from companion.rules.presets import preset_lines

    toml = tmp_path / "copied.toml"
    toml.write_text("\n".join(preset_lines(name)) + "\n")
    copied = load_house_rules(toml, get_preset("asmodee"))
    assert copied.differences(get_preset(name)) == {}
    assert copied.name == name  # announced as the preset it is, not as asmodee's house rules


def test_companion_rules_marks_the_fields_a_preset_leaves_unused():
    from companion.rules.presets import preset_lines

    pressman = preset_lines("pressman")  # calza off: its fields are there for a house rule that turns it on
    calza_fields = [line for line in pressman if line.startswith("calza_")]
    assert calza_fields and all(line.endswith("# used only with calza = true") for line in calza_fields)
    assert not any("used only" in line for line in pressman if not line.startswith("calza_"))
    assert not any("used only" in line for line in preset_lines("asmodee"))  # calza and palifico on


def test_a_house_rules_preset_and_another_rules_preset_given_are_refused_together(tmp_path):
    from companion.rules import RulesFileError, get_preset
    from companion.play_settings import load_house_rules

    toml = tmp_path / "house.toml"
    toml.write_text('preset = "pressman"\nstarting_dice = 4\n')
    with pytest.raises(RulesFileError, match="start from the pressman preset, but the leaflet rules were chosen"):
        load_house_rules(toml, get_preset("leaflet"), preset_given=True)
    toml.write_text('preset = "pressman"\n[rules]\nstarting_dice = 4\n')  # the preset above a [rules] table
    with pytest.raises(RulesFileError, match="start from the pressman preset"):
        load_house_rules(toml, get_preset("leaflet"), preset_given=True)
    assert load_house_rules(toml, get_preset("asmodee")).ace_word == "aces"
    toml.write_text('preset = "pressman"\n[rules]\npreset = "pressman"\n')
    with pytest.raises(RulesFileError, match="both above \\[rules\\] and in it"):
        load_house_rules(toml, get_preset("asmodee"))
    toml.write_text('starting_dice = 3\n[rules]\ncalza = false\n')  # a field left above it
    with pytest.raises(RulesFileError, match="starting_dice must go under \\[rules\\]"):
        load_house_rules(toml, get_preset("asmodee"))
    toml.write_text('preset = "pressman"\nstarting_dice = 4\n')
    assert load_house_rules(toml, get_preset("pressman"), preset_given=True).ace_word == "aces"
    assert load_house_rules(toml, get_preset("asmodee")).name == "pressman+house"  # no --rules: the file's
    toml.write_text("calza = False\n")  # as Python writes it
    with pytest.raises(RulesFileError, match="not valid TOML.*true and false without") as caught:
        load_house_rules(toml, get_preset("asmodee"))
    example = str(caught.value).rsplit("without: ", 1)[1].rstrip(")")
    toml.write_text(example.replace(", ", "\n") + "\n")  # the hint's own example is taken
    assert load_house_rules(toml, get_preset("asmodee")).calza


def test_dice_set_on_the_command_line_keep_a_house_rule_that_hands_may_grow(tmp_path):
    toml = tmp_path / "house.toml"
    toml.write_text("max_dice = 6\n")
    result, journal = play(tmp_path, "", "--house-rules", toml, "--dice", "4")
    assert result.returncode == 0, result.stderr
    rules = load_game(journal).rules
    assert (rules.starting_dice, rules.max_dice) == (4, 6)
    result, journal = play(tmp_path / "plain", "", "--dice", "4")
    rules = load_game(journal).rules
    assert (rules.starting_dice, rules.max_dice) == (4, 4)


def test_a_house_rules_max_dice_is_checked_against_the_dice_given_on_the_command_line(tmp_path):
    from companion.rules import get_preset
    from companion.rules.errors import RulesFileError
    from companion.play_settings import load_house_rules

    toml = tmp_path / "house.toml"
    toml.write_text("max_dice = 4\n")  # below the preset's five, above --dice 3
    rules = load_house_rules(toml, get_preset("asmodee"), dice_given=3)
    assert (rules.starting_dice, rules.max_dice) == (3, 4)
    toml.write_text("max_dice = 6\n")
    with pytest.raises(RulesFileError, match=r"house rules .*house.toml: max_dice cannot be below starting_dice \(--dice 8\)"):
        load_house_rules(toml, get_preset("asmodee"), dice_given=8)
    toml.write_text('calza = "yes"\n')  # nothing to do with the dice: no word of --dice
    with pytest.raises(RulesFileError) as caught:
        load_house_rules(toml, get_preset("asmodee"), dice_given=3)
    assert "--dice" not in str(caught.value) and "bad value 'yes'" in str(caught.value)


@pytest.mark.parametrize("text, message", [
    ("starting-dice = 3\nstarting_dice = 4\n", "set starting_dice twice (starting-dice and starting_dice): keep one"),
    ("name = 7\n", "'name' is not a rule"),
    ("starting_dice = 0\n", "house.toml: starting_dice must be at least 1"),
])
def test_house_rules_that_say_a_thing_twice_or_name_themselves_are_refused_naming_the_file(tmp_path, text, message):
    from companion.rules import get_preset
    from companion.rules.errors import RulesFileError
    from companion.play_settings import load_house_rules

    toml = tmp_path / "house.toml"
    toml.write_text(text)
    with pytest.raises(RulesFileError) as caught:
        load_house_rules(toml, get_preset("asmodee"))
    assert message in str(caught.value) and str(toml) in str(caught.value)


def test_house_rules_saved_with_a_byte_order_mark_are_read(tmp_path):
    from companion.rules import get_preset
    from companion.play_settings import load_house_rules

    toml = tmp_path / "house.toml"
    toml.write_text("starting_dice = 3\n", encoding="utf-8-sig")
    assert load_house_rules(toml, get_preset("asmodee")).starting_dice == 3


def test_dice_on_the_command_line_and_other_starting_dice_in_house_rules_are_refused_together(tmp_path):
    toml = tmp_path / "house.toml"
    toml.write_text("starting_dice = 3\n")
    result, _ = play(tmp_path, "", "--house-rules", toml, "--dice", "2")
    assert result.returncode != 0
    assert "start with 3 dice each, but --dice 2 was given: keep one of the two" in result.stderr
    toml.write_text('starting_dice = "3"\n')  # a bad value is said as one, not as a clash
    result, _ = play(tmp_path / "quoted", "", "--house-rules", toml, "--dice", "3")
    assert result.returncode != 0 and "keep one of the two" not in result.stderr and "bad value '3'" in result.stderr
    toml.write_text("starting-dice = 3\n")  # the file's other spelling of the field clashes too
    result, _ = play(tmp_path / "hyphen", "", "--house-rules", toml, "--dice", "2")
    assert result.returncode != 0 and "keep one of the two" in result.stderr
    toml.write_text("starting_dice = 3\n")
    result, journal = play(tmp_path / "same", "", "--house-rules", toml, "--dice", "3")  # agreeing: fine
    assert result.returncode == 0 and load_game(journal).rules.starting_dice == 3


def test_resume_after_a_kill_loses_nothing(tmp_path):
    journal = tmp_path / "game.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "companion", "play", "--players", "Ana", "Ben", "Cleo",
                             "--input", "text", "--mute", "--journal", str(journal)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    proc.stdin.write("three fours\nfour fours\ndudo\n2\nfive sixes\n")
    proc.stdin.flush()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until the last call is journalled, then kill hard
        if journal.exists() and '"count":5,"face":6' in journal.read_text():
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    result = run_companion("play", "--resume", journal, "--input", "text", "--mute", input_text="dudo\n4\n")
    assert result.returncode == 0, result.stderr
    assert "Resuming the game. The bid is five sixes by Ben. Cleo, your call." in result.stdout
    game = load_game(journal)
    assert game.dice == {"Ana": 5, "Ben": 3, "Cleo": 5}


def test_a_game_resumed_at_a_reveal_asks_for_the_cups_again(tmp_path):
    """After a pause the cups may be back down: the players are asked to lift them before
    counting, as the camera's reveal asks; once dice are being said, the cups are up."""
    _, journal = play(tmp_path, "three fours\nfour fours\ndudo\n")
    result = run_companion("play", "--resume", journal, "--input", "text", "--mute", input_text="status\n")
    assert ("Resuming the game. Cleo called dudo on Ben's four fours. Lift the cups. How many fours, "
            "pacos included?") in result.stdout
    assert "Cleo called dudo on Ben's four fours. How many fours" in result.stdout  # status mid-reveal: no cups
    said = run_companion("play", "--resume", journal, "--input", "text", "--mute", input_text="Ana 4 4 1 2 3\n")
    again = run_companion("play", "--resume", journal, "--input", "text", "--mute", input_text="")
    assert said.returncode == 0 and "Resuming the game. Cleo called dudo on Ben's four fours. Got Ana's dice: four, four, " \
        in again.stdout and "Lift the cups" not in again.stdout


def test_a_game_resumed_at_a_rounds_start_says_how_the_last_round_ended(tmp_path):
    _, journal = play(tmp_path, "two fours\ndudo\n3\n")  # stopped as the count was said
    result = run_companion("play", "--resume", journal, "--input", "text", "--mute", input_text="")
    assert ("Resuming the game. Last round, Ben called dudo on Ana's two fours. Three counted: the bid was "
            "right. Ben loses a die and has four dice left. Round two, no bid yet. Ben opens.") in result.stdout
    bid = run_companion("play", "--resume", journal, "--input", "text", "--mute", input_text="two threes\n")
    again = run_companion("play", "--resume", journal, "--input", "text", "--mute", input_text="")
    assert bid.returncode == 0 and "Last round" not in again.stdout  # a round under way says its bid


def _ctrl_c_as_at_a_terminal():
    # A shell starts background jobs (a CI runner's, `nohup ... &`) with SIGINT ignored, and the
    # child would inherit that; at a terminal, Ctrl-C reaches the game.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _stop_midway(journal, script, last, stop, *args):
    """Play `script` in a child process, wait until `last` is journalled, then send `stop`."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "companion", "play", "--players", "Ana", "Ben",
                             "--input", "text", "--mute", "--journal", str(journal), *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=_ctrl_c_as_at_a_terminal)
    proc.stdin.write(script)
    proc.stdin.flush()  # stdin stays open: the game waits for the next call
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (journal.exists() and last in journal.read_text()):
        time.sleep(0.05)
    proc.send_signal(stop)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_stopped_game_says_how_to_resume_it(tmp_path, stop):
    journal = tmp_path / "game.jsonl"
    code, err = _stop_midway(journal, "three fours\n", '"count":3', stop)
    assert code == 128 + stop, err
    assert f"continue it with: companion play --resume {journal}" in err and "Traceback" not in err
    assert load_game(journal).last_bid == Bid(3, 4)
    # A won game stopped the same way is not "paused".
    won = tmp_path / "won.jsonl"
    code, err = _stop_midway(won, "one four\ndudo\nzero\n", "game_over", stop, "--dice", "1")
    assert code == 128 + stop and "stopped" in err and "--resume" not in err, err


_STOPPED_AS_IT_GETS_READY = """
import io, os, signal, sys
from companion import cli

class TerminalGone(io.StringIO):
    def write(self, text):
        raise OSError(5, "Input/output error")  # as a hung-up terminal's writes fail

def display(settings, game, hands=None):
    if sys.argv[1] == "HUP":
        sys.stderr = TerminalGone()  # the terminal went with the hang-up
    os.kill(os.getpid(), getattr(signal, "SIG" + sys.argv[1]))

cli._display = display
sys.exit(cli.main(["play", "--players", "Ana", "Ben", "--input", "text", "--mute", "--journal", sys.argv[2]]))
"""


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_while_the_game_gets_ready_is_a_stop_too(tmp_path, stop):
    # The display starting (a slow host lookup) comes after the journal: a service manager's
    # SIGTERM or a terminal hanging up there stops the game as mid-game does, saved and said.
    journal = tmp_path / "game.jsonl"
    result = subprocess.run([sys.executable, "-c", _STOPPED_AS_IT_GETS_READY, stop.name[3:], str(journal)],
                            capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 128 + stop, result.stderr
    assert load_game(journal).players == ("Ana", "Ben")
    if stop == signal.SIGTERM:
        assert f"continue it with: companion play --resume {journal}" in result.stderr


def _call_and_wait(proc, journal, call, timeout=120):
    """Type `call` (a bid of three) to a game in a child process, and wait until it is journalled."""
    proc.stdin.write(call + "\n")
    proc.stdin.flush()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not (journal.exists() and '"count":3' in journal.read_text()):
        time.sleep(0.05)


_WITH_A_SPEAKER = """
import sys, sounddevice
sounddevice.query_devices = lambda *a, **k: [{"name": "speaker", "max_input_channels": 0, "max_output_channels": 2}]
from companion import cli
sys.exit(cli.main(sys.argv[1:]))
"""


def test_a_voiced_game_goes_on_aloud_when_its_log_pipe_goes(tmp_path):
    # `companion play 2>&1 | tee log` with tee killed: announcements and warnings both lost,
    # the voice (a stand-in aplay that plays nothing) says the game on
    (tmp_path / "aplay").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "aplay").chmod(0o755)
    journal = tmp_path / "game.jsonl"
    read_end, write_end = os.pipe()
    proc = subprocess.Popen([sys.executable, "-c", _WITH_A_SPEAKER, "play", "--players", "Ana", "Ben", "Cleo",
                             "--input", "text", "--journal", str(journal)], stdin=subprocess.PIPE,
                            stdout=write_end, stderr=write_end, text=True,
                            env=dict(os.environ, PYTHONPATH=str(ROOT), PATH=f"{tmp_path}:{os.environ['PATH']}"))
    os.close(write_end)
    _call_and_wait(proc, journal, "three fours")
    os.close(read_end)  # tee goes
    proc.communicate("four fours\ndudo\n", timeout=120)
    assert proc.returncode == 0
    assert [e.type for e in load_game(journal).events][-1] == "challenge"  # every call after it was taken


def test_announcements_that_cannot_be_printed_stop_a_muted_game_saved(tmp_path):
    # `companion play --mute | tee log` with tee killed: the game stops and says so, saved.
    journal = tmp_path / "game.jsonl"
    read_end, write_end = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", "companion", "play", "--players", "Ana", "Ben",
                             "--input", "text", "--mute", "--journal", str(journal)], stdin=subprocess.PIPE,
                            stdout=write_end, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    os.close(write_end)
    _call_and_wait(proc, journal, "three fours")
    os.close(read_end)  # the reader goes
    _, err = proc.communicate("four fours\nAna dudo\n", timeout=60)
    assert proc.returncode == 2, err
    assert "the announcements cannot be printed (Broken pipe)" in err and "Traceback" not in err
    assert f"continue it with: companion play --resume {journal}" in err
    assert load_game(journal).last_bid == Bid(4, 4)  # taken, then stopped on saying it


def test_a_game_started_with_hangups_ignored_plays_on_through_one(tmp_path):
    # `nohup companion play`: the terminal going is no reason to stop
    journal = tmp_path / "game.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "companion", "play", "--players", "Ana", "Ben", "--input", "text",
                             "--mute", "--journal", str(journal)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    _call_and_wait(proc, journal, "three fours")
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate("four fours\n", timeout=60)
    assert proc.returncode == 0, err
    assert load_game(journal).last_bid == Bid(4, 4)


def test_dice_said_before_a_pause_are_kept(tmp_path):
    script = "three fours\ndudo\nAna 4 4 1 2 3\n"  # then the game stops: only Ana's dice said
    result, journal = play(tmp_path, script)
    assert result.stdout.strip().endswith("Got Ana's dice: four, four, one, two, three. Still need Ben and Cleo.")
    result = run_companion("play", "--resume", journal, "--input", "text", "--mute",
                           input_text="Ben 4 4 4 5 6\nCleo 1 2 2 2 2\n")
    assert result.returncode == 0, result.stderr
    assert "Got Ana's dice: four, four, one, two, three. Still need Ben and Cleo." in result.stdout  # said when resuming
    assert "Seven counted" in result.stdout  # Ana's 4 4 1, Ben's 4 4 4 and Cleo's 1
    game = load_game(journal)
    assert game.dice["Ben"] == 4 and game.round_number == 2  # Ben doubted a right bid


def test_a_journalled_hand_outside_a_reveal_is_dropped_and_said(tmp_path):
    result, journal = play(tmp_path, "three fours\n")
    with open(journal, "a") as f:
        f.write('{"type":"hand","player":"Ana","dice":[1,2,3,4,5]}\n')
    result = run_companion("play", "--resume", journal, "--input", "text", "--mute", input_text="")
    assert result.returncode == 0, result.stderr
    assert (f"companion: the journal was damaged: line 4 shows dice that cannot be shown: nobody had "
            f"challenged. The game goes on from the line before it; line 4 was dropped. The journal as "
            f"it was is kept in {journal}.corrupt-1\n") in result.stderr
    assert ("Resuming the game. Part of the saved game was damaged and is lost: it goes on from an earlier "
            "point, so check everyone's dice. The bid is three fours by Ana. Ben, your call.") in result.stdout


def test_a_damaged_journal_is_repaired_only_once_its_game_can_go_on(tmp_path):
    """A missing camera stops the resume before the game: the journal stays as it was, and
    the resume that goes on repairs it and says so."""
    result, journal = play(tmp_path, "three fours\n")
    with open(journal, "a") as f:
        f.write('{"type":"hand","player":"Ana","dice":[1,2,3,4,5]}\n')
    damaged = journal.read_bytes()
    stopped = run_companion("play", "--resume", journal, "--input", "text", "--mute", "--camera", "97", input_text="")
    assert stopped.returncode != 0 and "camera 97" in stopped.stderr and "was damaged" not in stopped.stderr
    assert journal.read_bytes() == damaged and not list(tmp_path.glob("*.corrupt-*"))
    goes_on = run_companion("play", "--resume", journal, "--input", "text", "--mute", input_text="")
    assert goes_on.returncode == 0 and "the journal was damaged: line 4" in goes_on.stderr
    assert journal.read_bytes() != damaged and (tmp_path / "game.jsonl.corrupt-1").read_bytes() == damaged


def test_a_corrupt_line_mid_journal_is_dropped_and_the_game_goes_on(tmp_path):
    result, journal = play(tmp_path, "three fours\nfour fours\nfive fours\nsix fours\n")
    lines = journal.read_text().splitlines(keepends=True)
    damaged = "".join(lines[:3]) + lines[3][:20] + "\x00" * 9 + "\n" + "".join(lines[4:])  # Ben's bid
    journal.write_text(damaged)
    result = run_companion("play", "--resume", journal, "--input", "text", "--mute",
                           input_text="five fours\ndudo\n4\n")
    assert result.returncode == 0, result.stderr
    assert ("line 4 is not readable JSON (Invalid control character at column 21). The game goes on from the "
            "line before it; lines 4 to 6 were dropped (line 4 and the 2 events after it). The journal as "
            f"it was is kept in {journal}.corrupt-1") in result.stderr
    assert "Resuming the game. Part of the saved game was damaged" in result.stdout  # said, not only shown
    assert (tmp_path / "game.jsonl.corrupt-1").read_text() == damaged
    game = load_game(journal)  # the calls after the resume went on from the good lines
    assert game.dice["Ben"] == 4 and game.round_number == 2


def run_on_a_small_disk(tmp_path, script, size):
    """`play` where no file may grow past `size` bytes, as on a full disk."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    env = dict(os.environ, PYTHONPATH=str(ROOT), XDG_DATA_HOME=str(tmp_path / "data"))
    return subprocess.run([sys.executable, "-m", "companion", "play", "--players", "Ana", "Ben", "Cleo",
                           "--input", "text", "--mute"], input=script, capture_output=True, text=True,
                          timeout=120, env=env, cwd=ROOT, preexec_fn=limit)


def test_a_journal_that_cannot_be_written_stops_the_game_aloud(tmp_path):
    result = run_on_a_small_disk(tmp_path, "three fours\nfour fours\nfive fours\nsix fours\n" * 3, 700)
    assert result.returncode == 2
    assert "cannot write the journal" in result.stderr and "the game is paused" in result.stderr
    assert result.stdout.rstrip().endswith("I have to stop: I cannot save any more calls. The game is saved up to "
                                           "the last call I answered; the screen says how to go on.")


def test_a_game_whose_start_cannot_be_written_leaves_no_journal_to_resume(tmp_path):
    earlier, _ = play(tmp_path, "three fours\n")  # a paused game, then a full disk
    sessions = tmp_path / "data" / "companion" / "sessions"
    sessions.mkdir(parents=True)
    (tmp_path / "game.jsonl").rename(sessions / "game-1.jsonl")
    result = run_on_a_small_disk(tmp_path, "three fours\n", 0)
    assert result.returncode == 2 and "cannot write the journal" in result.stderr
    # nothing was played, so nothing is said to be saved
    assert result.stdout.rstrip().endswith("I cannot start the game: I cannot save a game there. The screen says why.")
    assert [p.name for p in sessions.iterdir()] == ["game-1.jsonl"]
    resumed = run_companion("play", "--resume", "--input", "text", "--mute", input_text="",
                            env_extra={"XDG_DATA_HOME": str(tmp_path / "data")})
    assert "Resuming the game. The bid is three fours by Ana." in resumed.stdout, resumed.stderr


def test_resume_refuses_a_corrupt_journal(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("this is not a journal\n")
    result = run_companion("play", "--resume", bad, "--input", "text", "--mute", input_text="")
    assert result.returncode == 2 and "not a companion journal" in result.stderr
    assert bad.read_text() == "this is not a journal\n"


def test_rules_command_lists_every_preset():
    result = run_companion("rules")
    for name in ("asmodee (default)", "asmodee-own-round", "pressman", "pressman-calza", "leaflet", "web", "wikipedia",
                 "wikipedia-difference"):
        assert name in result.stdout
    assert 'dudo_loss = "difference"' in result.stdout


def test_announcements_written_to_a_real_non_silent_wav(tmp_path):
    wav = tmp_path / "said.wav"
    result, _ = play(tmp_path, "three fours\n", "--wav-out", wav)
    assert result.returncode == 0, result.stderr
    with wave.open(str(wav)) as w:
        assert w.getnchannels() == 1 and w.getsampwidth() == 2
        seconds = w.getnframes() / w.getframerate()
        samples = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(float)
    assert seconds > 3  # the opening announcement and a bid take seconds to say
    rms = np.sqrt(np.mean(samples ** 2))
    assert rms > 300 and np.abs(samples).max() > 5000


def test_names_typed_in_lower_case_start_their_sentences_with_a_capital(tmp_path):
    result, journal = play(tmp_path, "three fours\n", players=("ana", "jean-luc", "mcKay"))
    assert result.returncode == 0, result.stderr
    assert "New game: Ana, Jean-Luc and mcKay." in result.stdout  # typed with a capital: as typed
    assert "Jean-Luc, your call." in result.stdout and load_game(journal).players == ("Ana", "Jean-Luc", "mcKay")
    from companion.rules.names import as_written, name_key

    written = {n: as_written(n) for n in ("o'brien", "ja'marr", "hawai'i", "ßara", "ÉLODIE", "éva")}
    assert written == {"o'brien": "O'Brien", "ja'marr": "Ja'marr", "hawai'i": "Hawai'i", "ßara": "ßara",
                       "ÉLODIE": "ÉLODIE", "éva": "Éva"}
    assert all(name_key(n) == name_key(w) for n, w in written.items())  # heard as the name typed
    refused, _ = play(tmp_path / "x", "", players=("ana", "paco"))
    assert refused.returncode == 2 and "'paco' is a word of the calls" in refused.stderr  # as typed


def test_a_resumed_game_goes_on_writing_the_same_announcements_wav(tmp_path):
    wav = tmp_path / "said.wav"
    result, journal = play(tmp_path, "three fours\n", "--wav-out", wav)
    assert result.returncode == 0, result.stderr
    before = wav.read_bytes()
    resumed = run_companion("play", "--resume", journal, "--input", "text", "--mute", "--wav-out", wav,
                            input_text="four fours\n")
    assert resumed.returncode == 0, resumed.stderr
    after = wav.read_bytes()
    assert len(after) > len(before) and after[44:len(before)] == before[44:]  # the first evening kept
    with wave.open(str(wav)) as w:
        assert w.getnframes() * 2 == len(after) - 44


def test_announcements_are_never_written_over_the_journal_the_recordings_or_another_file(tmp_path):
    journal = tmp_path / "game.jsonl"
    result, _ = play(tmp_path, "three fours\n", "--wav-out", journal)  # the game's own journal
    assert result.returncode == 2 and "would write the announcements over" in result.stderr
    assert not journal.exists()  # refused before the game began
    kept = tmp_path / "last-week.jsonl"
    kept.write_text('{"type": "game_started"}\n')
    result, _ = play(tmp_path, "three fours\n", "--wav-out", kept)  # another game's journal
    assert result.returncode == 2 and "something other than a WAV file" in result.stderr
    assert kept.read_text() == '{"type": "game_started"}\n' and not journal.exists()
    recording = tmp_path / "calls" / "1.wav"
    recording.parent.mkdir()
    recording.write_bytes(b"RIFF")
    for out in (recording, tmp_path / "calls" / "said.wav"):  # a recording played, or beside them
        result = run_companion("play", "--players", "Ana", "Ben", "--input", "wav", recording.parent,
                               "--mute", "--wav-out", out, "--journal", journal)
        assert result.returncode == 2 and "which the game reads or keeps" in result.stderr, result.stderr
    assert recording.read_bytes() == b"RIFF" and not journal.exists()
    for link, to in (("said.wav", journal), ("out.wav", recording)):  # a link to the journal-to-be, to a recording
        (tmp_path / link).symlink_to(to)
        result = run_companion("play", "--players", "Ana", "Ben", "--input", "wav", recording.parent,
                               "--mute", "--wav-out", tmp_path / link, "--journal", journal)
        assert result.returncode == 2 and "which the game reads or keeps" in result.stderr, result.stderr
    (tmp_path / "linked-calls").symlink_to(recording.parent)  # the recordings' folder, by a link
    result = run_companion("play", "--players", "Ana", "Ben", "--input", "wav", tmp_path / "linked-calls",
                           "--mute", "--wav-out", recording.parent / "said.wav", "--journal", journal)
    assert result.returncode == 2 and "which the game reads or keeps" in result.stderr, result.stderr
    assert recording.read_bytes() == b"RIFF" and not journal.exists()


def test_taking_back_a_number_counted_before_a_stop_keeps_the_dice_said_before_it(tmp_path):
    result, journal = play(tmp_path, "three fours\ndudo\nAna 4 4 1 2 3\nnine\n")
    assert result.returncode == 0 and "Nine counted" in result.stdout, result.stderr
    resumed = run_companion("play", "--resume", "--journal", journal, "--input", "text", "--mute",
                            input_text="take it back\ntwo\n")
    assert resumed.returncode == 0, resumed.stderr
    assert "Still need Ben and Cleo" in resumed.stdout and "Ana's dice already count three" in resumed.stdout


def test_a_path_the_system_cannot_use_is_one_line_not_a_traceback(tmp_path):
    too_long = tmp_path / ("a" * 300 + ".jsonl")
    for args in (("play", "--players", "Ana", "Ben", "--input", "text", "--journal", too_long),
                 ("play", "--resume", too_long), ("recap", too_long)):
        result = run_companion(*args, input_text="")
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert result.stderr.strip().endswith("File name too long"), result.stderr


def test_recordings_after_the_player_names_are_recordings(tmp_path, monkeypatch):
    from companion.sources import names_and_files

    (tmp_path / "round-two").mkdir()
    (tmp_path / "round-two" / "01.wav").write_bytes(b"")
    names, files = names_and_files(["Ana", "Ben", "round-one.WAV", str(tmp_path / "round-two")], ["x.wav"])
    assert names == ["Ana", "Ben"] and files == ["round-one.WAV", str(tmp_path / "round-two"), "x.wav"]
    assert names_and_files(["Ana", "Ben"], []) == (["Ana", "Ben"], [])
    assert names_and_files(["Ana", "Ben", "-"], []) == (["Ana", "Ben"], ["-"])  # paths on stdin
    # A player whose name is also a folder (without recordings) stays a player.
    (tmp_path / "Ben").mkdir()
    monkeypatch.chdir(tmp_path)
    assert names_and_files(["Ana", "Ben"], []) == (["Ana", "Ben"], [])
    # Through the command line: the recording is read (and refused for its encoding), not named.
    (tmp_path / "phone.wav").write_bytes(_alaw_wav())
    result = run_companion("play", "--mute", "--journal", tmp_path / "j.jsonl", "--input", "wav",
                           "--players", "Ana", "Ben", tmp_path / "phone.wav", input_text="")
    assert result.returncode == 2 and "phone.wav: its audio is A-law" in result.stderr, result.stderr
    # An 8 kHz recording is converted to 16 kHz and played, not refused.
    from companion.listen.audio import write_wav

    write_wav(tmp_path / "phone8k.wav", np.zeros(8000, np.int16), rate=8000)
    result = run_companion("play", "--mute", "--journal", tmp_path / "j8k.jsonl", "--input", "wav",
                           "--players", "Ana", "Ben", tmp_path / "phone8k.wav", input_text="")
    assert result.returncode == 0 and "error" not in result.stderr, result.stderr


def _alaw_wav(seconds=0.5):
    """An 8 kHz A-law WAV (format tag 6): a real encoding read_wav does not decode."""
    import struct

    data = b"\xd5" * int(8000 * seconds)  # A-law silence
    fmt = struct.pack("<HHIIHH", 6, 1, 8000, 8000, 1, 8)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


def test_missing_devices_are_reported_before_a_game_is_journalled(tmp_path):
    from companion.listen.microphone import list_microphones

    import numpy as np

    from companion.listen.audio import write_wav

    journal = tmp_path / "j.jsonl"
    (tmp_path / "phone.wav").write_bytes(_alaw_wav())
    write_wav(tmp_path / "fine.wav", np.zeros(16000, np.int16))
    checks = [(["--camera", "7", "--input", "text"], "camera 7 cannot be opened"),
              (["--camera", "0", "--profile", tmp_path / "none", "--input", "text"], "profile"),
              (["--input", "wav", tmp_path / "missing.wav"], "missing.wav"),
              # a bad recording anywhere in the list is found before the game starts
              (["--input", "wav", tmp_path / "fine.wav", tmp_path / "phone.wav"], "phone.wav: its audio is A-law"),
              (["--input", "wav"], "name the recordings"),
              (["--input", "text", tmp_path / "fine.wav"], "add --input wav to play recordings"),
              (["--input", "text", tmp_path / "calls.txt"], "pipe it in: companion play --input text <"),
              (["--input", "text", "--camera-images", tmp_path / "nothing.png"], "nothing.png: no such file"),
              (["--input", "text", "--camera", "0", "--camera-images", tmp_path / "x.png"], "not both"),
              # recordings named after the photos would be taken for photos
              (["--input", "wav", "--camera-images", tmp_path / "x.png", tmp_path / "fine.wav"],
               "--camera-images takes every file after it as a photo: name the recordings before it")]
    try:
        microphones = list_microphones()
    except Exception:
        microphones = []
    if not microphones:  # on a machine with a microphone, the game would simply start
        checks.append(([], "no microphone found"))
    for args, message in checks:
        result = run_companion("play", "--players", "Ana", "Ben", "--mute", "--journal", journal, *args,
                               input_text="")
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
        assert not journal.exists()
    # every missing recording is named at once, each on a line of its own
    result = run_companion("play", "--players", "Ana", "Ben", "--mute", "--journal", journal, "--input", "wav",
                           tmp_path / "one.wav", tmp_path / "fine.wav", tmp_path / "two.wav", input_text="")
    assert result.returncode == 2 and result.stderr.splitlines() == [
        f"companion: {tmp_path / 'one.wav'}: no such file or folder",
        f"companion: {tmp_path / 'two.wav'}: no such file or folder"]


def test_a_resume_knows_whether_the_round_it_stands_in_was_counted(tmp_path):
    # which round's reveal the first photo given to a resumed game is of
    from companion.journal import resume

    _, journal = play(tmp_path / "new", "three fives\n")
    assert resume(journal).last_round_counted == 0
    _, journal = play(tmp_path / "paused", "three fives\ndudo\nfour\n")  # round two, not yet counted
    assert resume(journal).last_round_counted == 1
    _, journal = play(tmp_path / "taken", "three fives\ndudo\nfour\ntake it back\n")  # counted, then taken back
    assert resume(journal).last_round_counted == 1
    two_rounds = "three fives\ndudo\nfour\ntwo sixes\ndudo\nthree\n"
    _, journal = play(tmp_path / "back", two_rounds + "undo\n" * 5)  # back into round one's reveal
    resumed = resume(journal)
    assert resumed.game.round_number == 1 and resumed.last_round_counted == 2
    _, journal = play(tmp_path / "again", "three fives\ndudo\nfour\ntwo sixes\nundo\nundo\nfive\n")
    assert resume(journal).last_round_counted == 1  # round one counted again: round two still to come


def test_a_package_gone_while_the_options_are_read_is_one_line():
    """`companion devices` imports numpy as its options are built, before any command runs."""
    code = "import sys; sys.modules['numpy'] = None; from companion.cli import main; sys.exit(main(['devices']))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("companion: the Python package numpy cannot be loaded (")


def test_a_power_cut_never_parts_the_undo_of_a_count_from_the_dice_that_stand(tmp_path):
    """They are one line: cut inside it, the undo never happened (the count stands, to be
    taken back again); whole, the dice stand with it. A bare undo, as an older version wrote
    it (its undo of a count dropped every hand said), brings none back."""
    _, journal = play(tmp_path, "two threes\ndudo\nAna 1 2 3 4 5\nBen 3 3 4 4 5\nCleo 4 4 1 2 2\ntake it back\n")
    lines = journal.read_text().splitlines(keepends=True)
    undo = lines[-1]
    assert '"type":"undo"' in undo and '"hands"' in undo
    journal.write_text("".join(lines[:-1]) + undo[:len(undo) // 2])
    result = run_companion("play", "--resume", journal, "--input", "text", "--mute", input_text="")
    assert "cut off mid-write" in result.stderr and "Round two" in result.stdout, result.stdout
    journal.write_text("".join(lines))
    result = run_companion("play", "--resume", journal, "--input", "text", "--mute", input_text="")
    assert "Got Ana's dice: one, two, three, four, five; Ben's: three, three, four, four, five. Still need Cleo." in result.stdout, result.stdout
    start = json.loads(undo)
    del start["hands"]
    journal.write_text("".join(lines[:-1]) + json.dumps(start) + "\n")
    result = run_companion("play", "--resume", journal, "--input", "text", "--mute", input_text="")
    assert "Got" not in result.stdout and "How many threes" in result.stdout, result.stdout


def _play_in_shell(tmp_path, redirect: str, stdin: bytes = b"", env_extra=None, players="Ana Ben Cleo"):
    """`play` started by a shell with its standard streams as `redirect` leaves them."""
    journal = tmp_path / "j.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT), **(env_extra or {}))
    command = (f"exec {redirect} {sys.executable} -m companion play --players {players} --input text --mute "
               f"--journal {journal}")
    result = subprocess.run(["bash", "-c", command], input=stdin, capture_output=True, env=env, cwd=ROOT,
                            timeout=60)
    return result, journal


def test_a_line_in_another_encoding_is_passed_over_and_the_game_goes_on(tmp_path):
    # A Latin-1 terminal typing "José": not a crash that loses the lines piped before it, and
    # bytes that are no text are never taken for a call ("9]\x83,5" is no "nine fives").
    # (a form feed or U+0085 at a line's end is a control character too, not a space to strip;
    # a Windows script's carriage returns are line ends)
    script = (b"three fours\r\nJos\xe9 calza\n9]\x83\xac\x835,\nfour\x00fives\n\x0cfour fours\x1f\n"
              b"four fours\xc2\x85\nfive fours\r\n")
    for encoding in ("utf-8", "latin-1"):  # in Latin-1 every byte is a letter or a control character
        result, journal = _play_in_shell(tmp_path, "", script, {"PYTHONIOENCODING": encoding})
        err = result.stderr.decode(encoding)
        assert result.returncode == 0 and "Traceback" not in err, err
        assert err.count("a line that is not text was passed over") == (5 if encoding == "utf-8" else 4), err
        bids = [e for e in map(json.loads, journal.read_text().splitlines()) if e["type"] == "bid"]
        assert [(e["player"], e["count"], e["face"]) for e in bids] == [("Ana", 3, 4), ("Ben", 5, 4)]
        journal.unlink()


def test_a_name_the_outputs_encoding_lacks_is_written_escaped(tmp_path):
    result, journal = _play_in_shell(tmp_path, "", b"three fours\n", {"PYTHONIOENCODING": "latin-1"},
                                     players="Łukasz Ben")
    assert result.returncode == 0 and b"Traceback" not in result.stderr, result.stderr
    assert b"\\u0141ukasz: three fours" in result.stdout
    assert load_game(journal).last_bid == Bid(3, 4)


@pytest.mark.parametrize("redirect", ["0<&-", "1>&-", "2>&-"])
def test_a_closed_standard_stream_is_no_crash_and_never_the_journal(tmp_path, redirect):
    # Closed, its number would go to the first file opened: the journal, which would then
    # collect what is printed there.
    result, journal = _play_in_shell(tmp_path, redirect, b"three fours\n")
    assert result.returncode == 0 and b"Traceback" not in result.stderr + result.stdout, result.stderr
    events = [json.loads(line) for line in journal.read_text().splitlines()]  # every line an event
    assert events[0]["type"] == "game_started"
    if redirect != "0<&-":  # the input closed: nothing typed, nothing bid
        assert load_game(journal).last_bid == Bid(3, 4)


def test_a_named_pipe_nothing_writes_to_is_refused_not_waited_on(tmp_path):
    # Opening a FIFO waits for a writer: the game would hang with no word said. Read, it is
    # empty; written, it would wait for a reader.
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    for args, message in ((["--players", "Ana", "Ben", "--house-rules", pipe], "nothing was read from it"),
                          (["--resume", pipe], f"cannot read the journal {pipe}: it is a pipe"),
                          (["--resume", "--journal", pipe], f"cannot read the journal {pipe}: it is a pipe"),
                          (["--players", "Ana", "Ben", "--journal", pipe], f"cannot write the journal {pipe}: it is a pipe"),
                          (["--players", "Ana", "Ben", "--camera-images", pipe], f"{pipe}: the file is empty"),
                          (["--players", "Ana", "Ben", "--input", "wav", pipe], f"{pipe}: a pipe, a device or a socket")):
        result = run_companion("play", *args, "--mute", *(["--input", "text"] if "wav" not in args else []),
                               input_text="", timeout=60)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)


def test_house_rules_from_a_pipe_a_program_writes_are_read(tmp_path):
    # `--house-rules <(generate-rules)`: a pipe with its writer there reads as a file does
    read_end, write_end = os.pipe()
    os.write(write_end, b"starting_dice = 3\n")
    os.close(write_end)
    try:
        result = subprocess.run([sys.executable, "-m", "companion", "play", "--players", "Ana", "Ben", "--input", "text",
                                 "--mute", "--journal", str(tmp_path / "j.jsonl"), "--house-rules", f"/dev/fd/{read_end}"],
                                input="", capture_output=True, text=True, timeout=60, cwd=ROOT, pass_fds=(read_end,),
                                env=dict(os.environ, PYTHONPATH=str(ROOT)))
    finally:
        os.close(read_end)
    assert result.returncode == 0 and "Three dice each" in result.stdout, result.stderr


def test_take_backs_after_a_resume_say_what_they_say_in_one_sitting(tmp_path):
    # A count taken back, then more take-backs: the dice that stand again must come from the
    # right count (a resume once brought back Ben's dice of round two into round one).
    first = "two threes\ndudo\nAna 1 2 3 4 5\nfour\ntwo fives\ndudo\nBen 5 5 5 1\nnine\ntake it back\neight\ntake it back\n"
    then = "take it back\ntake it back\ntake it back\ntake it back\n"
    whole, _ = play(tmp_path / "whole", first + then)
    split, journal = play(tmp_path / "split", first)
    resumed = run_companion("play", "--resume", journal, "--input", "text", "--mute", input_text=then)
    assert resumed.stdout.splitlines()[-4:] == whole.stdout.splitlines()[-4:], resumed.stdout
    assert resumed.stdout.splitlines()[-1].endswith("Got Ana's dice: one, two, three, four, five. Still need Ben and Cleo.")
