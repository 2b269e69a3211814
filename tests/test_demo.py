"""`companion demo`: a scripted game said by synthetic players through the real pipeline
(pyttsx3's espeak-ng voices, the bundled recogniser, the referee, the journal), which must end
as the same game typed."""

import json
import subprocess
import sys
import wave
from pathlib import Path

import pytest

from companion.demo import PLAYERS, STARTING_DICE, script_lines

ROOT = Path(__file__).resolve().parents[1]


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_the_demo_game_is_heard_and_refereed_as_the_typed_game(tmp_path):
    journal, said = tmp_path / "demo.jsonl", tmp_path / "said.wav"
    demo = subprocess.run([sys.executable, "-m", "companion", "demo", "--mute", "--wav-out", str(said),
                           "--journal", str(journal)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-2000:]
    assert "the spoken game is the typed game" in demo.stdout
    assert "Cleo wins the game!" in demo.stdout
    # Typed by hand, without the demo's own comparison: the same events.
    typed = tmp_path / "typed.jsonl"
    subprocess.run([sys.executable, "-m", "companion", "play", "--players", *PLAYERS, "--dice",
                    str(STARTING_DICE), "--input", "text", "--mute", "--journal", str(typed)],
                   input="\n".join(line.text for line in script_lines()) + "\n", capture_output=True,
                   text=True, cwd=ROOT, timeout=60, check=True)
    assert events(journal) == events(typed)
    # Every player spoke in their own voice, and the referee's words were recorded.
    for player in PLAYERS:
        assert f"{player} (gmw/" in demo.stdout
    with wave.open(str(said)) as recording:
        assert recording.getnframes() / recording.getframerate() > 30  # a whole game of sentences


def test_a_demo_that_cannot_speak_where_asked_leaves_no_journal(tmp_path):
    journal = tmp_path / "demo.jsonl"
    demo = subprocess.run([sys.executable, "-m", "companion", "demo", "--mute", "--wav-out", str(tmp_path),
                           "--journal", str(journal)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert demo.returncode != 0 and "it is a folder" in demo.stderr and "Traceback" not in demo.stderr
    assert not journal.exists()  # the next run can use the same path


def test_a_demo_refuses_a_bad_port_or_a_journal_that_holds_a_game_before_it_starts(tmp_path):
    kept, notes = tmp_path / "kept.jsonl", tmp_path / "notes.txt"
    subprocess.run([sys.executable, "-m", "companion", "play", "--players", "Ana", "Ben", "--input", "text",
                    "--mute", "--journal", str(kept)], input="", capture_output=True, text=True, cwd=ROOT, timeout=120)
    game = kept.read_text()
    notes.write_text("shopping list\n")
    for args, says in ((["--display", "--display-port", "70000"], "--display-port must be a port number"),
                       (["--journal", str(kept)], "already holds a game; the demo keeps its journal in a new file"),
                       (["--journal", str(notes)], "is not empty and holds no game"),
                       (["--journal", str(tmp_path)], "is a folder: name a journal file")):
        demo = subprocess.run([sys.executable, "-m", "companion", "demo", "--mute", *args],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert demo.returncode == 2 and says in demo.stderr and "--resume" not in demo.stderr, demo.stderr
    assert kept.read_text() == game and notes.read_text() == "shopping list\n"


def test_a_scripted_player_answers_a_question_asked_again_and_repeats_a_line_let_go():
    from companion.demo import Cost, say_line

    players = ("Ana", "Ben", "Cleo")
    player = say_line("four fours", players, Cost())
    assert next(player) == ("four fours", 0)
    assert player.send("Did you say four fours?") == ("yes", 0)
    # the referee held another move back and asked again: the player still answers it
    assert player.send("First: did you say four fours? Yes or no.") == ("yes", 1)
    assert player.send("Not taken: four fours. The bid is three fours by Ana.") == ("four fours", 1)
    player = say_line("four fours", players, Cost())
    next(player)
    assert player.send("Not taken: four fours. The bid is three fours by Ana.") == ("four fours", 1)


def test_the_scripted_players_know_the_referees_words_for_what_took_nothing():
    """The demo's players react to the referee's sentences (a question, "say again", a call
    refused or let go): each pattern they listen for matches the words the referee says, so a
    reworded announcement fails here rather than leaving the demo's players deaf to it."""
    from companion.calls import BidCall, CommandCall, Command, DudoCall
    from companion.demo import ASKED, NOT_TAKEN, asked_about
    from companion.rules import Bid, BidAction, Game
    from companion.rules.errors import IllegalBid
    from companion.voice import announcements as announce

    game = Game(["Ana", "Ben", "Cleo"])
    said = lambda *announcements: " ".join(announce.sentences(list(announcements), game.rules))  # noqa: E731
    status = announce.Status.of(game)
    assert asked_about(said(announce.AskToConfirm(BidCall(Bid(4, 5))))) == "four fives"
    assert asked_about(said(announce.AskedAgain(DudoCall("Ben")))) is not None
    assert ASKED.search(said(announce.AskToConfirm(CommandCall(Command.UNDO))))
    for taking_nothing in (announce.WhoCallsCalza("Ben"), announce.NumberWhileBidding(7, "Ana"),
                           announce.QuestionDropped(BidCall(Bid(4, 5)), status)):
        assert NOT_TAKEN.search(said(taking_nothing)), said(taking_nothing)
    game.apply(BidAction("Ana", Bid(3, 4)))
    for lower in (Bid(2, 4), Bid(1, 1)):  # not a raise; pacos below half the bid
        with pytest.raises(IllegalBid) as refused:
            game.apply(BidAction("Ben", lower))
        assert NOT_TAKEN.search(said(announce.Refused(refused.value))), said(announce.Refused(refused.value))
    assert "say again" in said(announce.SayAgain()).lower()
    assert "say again" in said(announce.SayAgain(at_reveal=True)).lower()
    assert "say it again" in said(announce.Declined()).lower()
    assert not NOT_TAKEN.search(said(announce.SayAgain())) and asked_about(said(announce.Declined())) is None
