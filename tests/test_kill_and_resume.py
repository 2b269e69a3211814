"""A game killed at any moment resumes to exactly the game played up to its last whole line.

One recorded game is cut after every journal line and in the middle of every line, as a
kill (or a power cut) can leave it; each cut is resumed, compared with the game as it was
when that line was written, and played on to the end, which must give the same journal as
the game played without a break. A real `companion play` process is also killed with
SIGKILL mid-game and resumed from the command line.
"""

import json
import os
import signal
import subprocess
import sys
import time
from typing import NamedTuple

import pytest

from companion.journal import Journal, JournalError, load_game, resume
from companion.referee import Referee
from companion.rules import Game, get_preset
from companion.rules.events import HandShown, HandTakenBack
from companion.sources import TextSource, Utterance
from conftest import ROOT, run_companion

PLAYERS = ("Ana", "Ben", "Cleo")
DICE = 2
# Every kind of line a journal holds: bids, an undo, a calza and dudos settled by a number
# and by every player's dice, hands said one at a time (a wrong one refused, one taken back
# and the dudo said again while the cups are up), palifico
# rounds, eliminations, a count undone after the game was won, and the win again.
SCRIPT = """\
two threes
two twos
three threes
undo
three fours
Ana calza
Ana 4 1
Ben 2 2
Cleo 4 5
two fives
dudo
1
one paco
one five
dudo
Ben 6 1
undo
dudo
Ben 6 1
Cleo 6 6
Ana 5 5
Ana 1
one four
dudo
two
three sixes
dudo
0
one three
dudo
0
undo
Ana 3
Ben 2
""".splitlines()
KILLED_AFTER = SCRIPT.index("Cleo 6 6")  # mid-reveal: Ben's dice said, Ana's and Cleo's to come


def rules():
    return get_preset("asmodee").replace(starting_dice=DICE, max_dice=DICE)


def state(game: Game) -> dict:
    """Everything a resumed game must get back."""
    return {"dice": dict(game.dice), "turn": game.turn, "phase": game.phase, "round": game.round_number,
            "bids": list(game.bids), "challenge": game.challenge, "palifico": game.palifico_player,
            "been palifico": set(game.been_palifico), "last loser": game.last_loser, "winner": game.winner,
            "actions": game.actions, "events": [e.to_dict() for e in game.events]}


class ListJournal:
    def __init__(self):
        self.events = []

    def append(self, events):
        self.events.extend(events)


class Silent:
    def say(self, text):
        pass


class Checkpoint(NamedTuple):
    lines: int  # the journal's length after this write
    state: dict  # the game then
    hands: dict  # the dice said at the reveal in progress
    script_line: int  # the line of the script that made the write (-1: the game's start)
    more_writes: bool = False  # that line wrote again after this (the last hand, then the count)


class CheckpointJournal(Journal):
    """A real journal that takes a checkpoint after each write."""

    def __init__(self, path, game):
        super().__init__(path)
        self.game = game
        self.hands: dict = {}
        self.script_line = -1
        self.checkpoints: list[Checkpoint] = []

    def append(self, events):
        super().append(events)
        if all(isinstance(e, HandShown) for e in events):
            for e in events:  # in the order last said, as the referee keeps them
                self.hands.pop(e.player, None)
                self.hands[e.player] = e.dice
        elif all(isinstance(e, HandTakenBack) for e in events):
            for e in events:
                del self.hands[e.player]
        else:
            self.hands = {}  # an action or an undo starts the reveal's hands afresh
        if self.checkpoints and self.checkpoints[-1].script_line == self.script_line:
            self.checkpoints[-1] = self.checkpoints[-1]._replace(more_writes=True)
        lines = (self.checkpoints[-1].lines if self.checkpoints else 0) + len(events)
        self.checkpoints.append(Checkpoint(lines, state(self.game), dict(self.hands), self.script_line))


def play_on(referee, lines):
    for line in lines:
        referee.hear(Utterance(line))


@pytest.fixture
def no_fsync(monkeypatch):
    """Thousands of in-process writes: the disk sync is what a real kill needs, not this test."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)


@pytest.fixture
def recorded(tmp_path, no_fsync):
    """The whole game played once, with a checkpoint at every journal write."""
    game = Game(PLAYERS, rules())
    journal = CheckpointJournal(tmp_path / "whole.jsonl", game)
    journal.append(game.events)
    referee = Referee(game, Silent(), journal)
    for number, line in enumerate(SCRIPT):
        journal.script_line = number
        referee.hear(Utterance(line))
    journal.close()
    checkpoints = journal.checkpoints
    assert game.winner == "Ana" and len(checkpoints) > 30  # the script played out
    assert sum(c.more_writes for c in checkpoints) == 3  # the three reveals settled by hands
    whole = journal.path.read_bytes()
    assert b'"type": "hand_taken_back"' in whole or b'"type":"hand_taken_back"' in whole
    return whole, checkpoints


def check_resumes_to(path, checkpoint: Checkpoint, whole: bytes):
    """Resume the cut journal: the game is as it was at the checkpoint, the repaired file is
    the journal as it was then, and playing the rest of the script gives the whole game."""
    resumed = resume(path)
    assert resumed.dropped is None  # a torn or short tail is no damage
    assert state(resumed.game) == checkpoint.state
    assert list(resumed.hands.items()) == list(checkpoint.hands.items())
    assert path.read_bytes() == b"".join(whole.splitlines(keepends=True)[:checkpoint.lines])
    referee = Referee(resumed.game, Silent(), resumed.journal, resumed=resumed)
    # Killed between the last hand of a reveal and the count it makes: resuming makes the
    # count, so the journal goes on as if nothing had stopped it.
    referee.run(TextSource(SCRIPT[checkpoint.script_line + 1:]), resumed=True)
    resumed.journal.close()
    assert path.read_bytes() == whole


def test_a_journal_cut_after_any_line_resumes_to_the_game_then(tmp_path, recorded):
    whole, checkpoints = recorded
    lines = whole.splitlines(keepends=True)
    path = tmp_path / "cut.jsonl"
    for kept in range(1, len(lines) + 1):
        path.write_bytes(b"".join(lines[:kept]))
        # The game as it was at the write holding this line: a write cut short is an
        # action whose consequences are re-derived.
        check_resumes_to(path, next(c for c in checkpoints if c.lines >= kept), whole)


def test_a_journal_torn_inside_any_line_resumes_to_the_line_before(tmp_path, recorded):
    whole, checkpoints = recorded
    lines = whole.splitlines(keepends=True)
    path = tmp_path / "torn.jsonl"
    for number, line in enumerate(lines, 1):
        torn = b"".join(lines[:number - 1]) + line[: len(line) // 2]
        path.write_bytes(torn)
        if number == 1:  # not even the game's start: nothing to resume, and nothing touched
            with pytest.raises(JournalError, match="does not start with a game"):
                resume(path)
            assert path.read_bytes() == torn
            continue
        check_resumes_to(path, next(c for c in checkpoints if c.lines >= number - 1), whole)


def journalled(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_game_killed_mid_reveal_resumes_to_the_same_journal(tmp_path):
    whole = tmp_path / "whole.jsonl"
    args = ["play", "--players", *PLAYERS, "--dice", str(DICE), "--input", "text", "--mute"]
    result = run_companion(*args, "--journal", whole, input_text="\n".join(SCRIPT) + "\n")
    assert result.returncode == 0, result.stderr
    assert load_game(whole).winner == "Ana"

    # How long the journal is once the first part is in: the same calls through the referee.
    first_part = ListJournal()
    play_on(Referee(Game(PLAYERS, rules()), Silent(), first_part), SCRIPT[:KILLED_AFTER])
    lines_then = len(first_part.events) + len(Game(PLAYERS, rules()).events)
    killed = tmp_path / "killed.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "companion", *args, "--journal", str(killed)],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            text=True, env=env, cwd=ROOT)
    try:
        proc.stdin.write("\n".join(SCRIPT[:KILLED_AFTER]) + "\n")
        proc.stdin.flush()  # stdin stays open: the game waits for the next call
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (killed.exists() and
                                                   killed.read_text().count("\n") >= lines_then):
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdin.close()
    assert proc.returncode == -signal.SIGKILL
    assert journalled(killed) == journalled(whole)[:lines_then]

    result = run_companion("play", "--resume", killed, "--input", "text", "--mute",
                           input_text="\n".join(SCRIPT[KILLED_AFTER:]) + "\n")
    assert result.returncode == 0, result.stderr
    assert "Got Ben's dice: six, one. Still need Ana and Cleo." in result.stdout  # the hand said before the kill
    assert result.stdout.strip().endswith("Ana wins the game!")
    assert journalled(killed) == journalled(whole)
