"""The recap of a game: its figures checked against the game as played, its page and charts
written, and files that are not journals refused with one line and nothing written."""

import json
import random
import sys
from pathlib import Path

import pytest

from companion.errors import CompanionError
from companion.journal import Journal, JournalError, load_game, read_events, replay
from companion.recap import (
    INSTALL_PLOTTING, RecapError, default_out_dir, read_recap, recap_of, recap_journal, write_recap,
)
from companion.rules import CALZA, DUDO, Bid, Game, Phase, get_preset
from companion.rules.events import BidMade, ChallengeCalled, DieLost, DieRegained, Undone
from conftest import run_companion

PLAYERS = ("Ana", "Ben", "Cleo")
# Typed as at the table (Ana opens; asmodee rules). Ben's three fives is taken back and
# three sixes said instead; three challenges follow, and the game is paused in round four.
SCRIPT = """\
two fives
three fives
take it back
three sixes
four sixes
dudo
three
two threes
three threes
Cleo calza
three
status
two fours
three fours
dudo
five
"""


def typed_game(tmp_path, script=SCRIPT, players=PLAYERS):
    """A journal written by the real `companion play`, typed line by line."""
    path = tmp_path / "typed.jsonl"
    result = run_companion("play", "--players", *players, "--input", "text", "--mute", "--journal", path,
                           input_text=script)
    assert result.returncode == 0, result.stderr
    return path


def test_the_recap_of_a_typed_game_matches_what_was_played(tmp_path):
    path = typed_game(tmp_path)
    recap, torn = read_recap(path)
    assert not torn and recap.players == PLAYERS and recap.rules_name == "asmodee" and recap.winner is None

    assert [[(b.player, b.count, b.face) for b in r.bids] for r in recap.rounds] == [
        [("Ana", 2, 5), ("Ben", 3, 6), ("Cleo", 4, 6)],
        [("Cleo", 2, 3), ("Ana", 3, 3)],
        [("Cleo", 2, 4), ("Ana", 3, 4)],
        [],
    ]
    # The journal still holds the bid taken back; the recap does not.
    raw = [json.loads(line) for line in path.read_text().splitlines()]
    assert {"type": "bid", "player": "Ben", "count": 3, "face": 5, "next_player": "Cleo"} in raw
    assert any(line["type"] == "undo" for line in raw)

    challenges = [(n, c.kind, c.caller, c.bidder, c.bid.count, c.bid.face, c.counted, c.correct, c.loser, c.regained)
                  for n, c in recap.challenges]
    assert challenges == [
        (1, DUDO, "Ana", "Cleo", 4, 6, 3, False, "Cleo", 0),
        (2, CALZA, "Cleo", "Ana", 3, 3, 3, True, None, 1),
        (3, DUDO, "Ben", "Ana", 3, 4, 5, True, "Ben", 0),
    ]
    # Each die lost is the one the journal's replayed game says was lost, challenge by challenge.
    events, _ = read_events(path)
    game, _ = replay(events, path)
    losers = [e.player for e in game.events if isinstance(e, (DieLost, DieRegained))]
    assert [c.loser or c.caller for _, c in recap.challenges] == losers
    assert len(recap.challenges) == sum(isinstance(e, ChallengeCalled) for e in game.events)

    stats = {s.player: s for s in recap.stats}
    assert (stats["Ana"].bids, stats["Ben"].bids, stats["Cleo"].bids) == (3, 1, 3)
    assert (stats["Ana"].dudos, stats["Ana"].dudos_right) == (1, 1)
    assert (stats["Ben"].dudos, stats["Ben"].dudos_right) == (1, 0)
    assert (stats["Cleo"].calzas, stats["Cleo"].calzas_right, stats["Cleo"].dudos) == (1, 1, 0)
    assert (stats["Cleo"].bids_challenged, stats["Cleo"].bluffs_caught, stats["Cleo"].bids_held) == (1, 1, 0)
    assert (stats["Ana"].bids_challenged, stats["Ana"].bluffs_caught, stats["Ana"].bids_held) == (1, 0, 1)

    assert [dict(r.dice_at_start) for r in recap.rounds] == [
        {"Ana": 5, "Ben": 5, "Cleo": 5}, {"Ana": 5, "Ben": 5, "Cleo": 4},
        {"Ana": 5, "Ben": 5, "Cleo": 5}, {"Ana": 5, "Ben": 4, "Cleo": 5}]
    assert recap.dice_series("Cleo") == [5, 4, 5, 5, 5]
    assert dict(recap.final_dice) == load_game(path).dice == {"Ana": 5, "Ben": 4, "Cleo": 5}


def test_the_recap_is_made_from_the_events_that_stand_not_the_journal_lines(tmp_path):
    path = typed_game(tmp_path)
    events, _ = read_events(path)
    game, kept = replay(events, path)
    assert any(isinstance(e, Undone) for e in kept)  # what replay keeps still holds the undo ...
    undone = BidMade("Ben", 3, 5, "Cleo")
    assert undone in kept and undone not in game.events  # ... and the game's own record does not
    with pytest.raises(ValueError, match="undone"):
        recap_of(kept)


def play(game, journal, fn, *args):
    journal.append(fn(*args))


def test_a_finished_game_has_its_winner_and_its_names_escaped_on_the_page(tmp_path):
    # names as an edited journal may hold them: markup, and "$", which charts read as a formula
    players = ("Ana <b>", "Ben & Co", "Cleo$\\frac$")
    game = Game(players, get_preset("asmodee").replace(starting_dice=1, max_dice=1))
    path = tmp_path / "finished.jsonl"
    journal = Journal.start(path, game)
    play(game, journal, game.bid, "Ana <b>", Bid(1, 5))
    play(game, journal, game.dudo, "Ben & Co")
    play(game, journal, game.reveal, 0)  # Ana is out: Ben opens
    play(game, journal, game.bid, "Ben & Co", Bid(1, 3))
    play(game, journal, game.dudo, "Cleo$\\frac$")
    play(game, journal, game.reveal, 1)  # the bid held: Cleo is out and Ben has won
    journal.close()
    assert game.phase is Phase.OVER

    recap, _ = read_recap(path)
    assert recap.winner == "Ben & Co" and len(recap.rounds) == 2
    assert dict(recap.final_dice) == game.dice == {"Ana <b>": 0, "Ben & Co": 1, "Cleo$\\frac$": 0}
    assert [recap.dice_series(p) for p in players] == [[1, 0, 0], [1, 1, 1], [1, 1, 0]]
    assert dict(recap.rounds[1].dice_at_start) == {"Ana <b>": 0, "Ben & Co": 1, "Cleo$\\frac$": 1}

    page = write_recap(recap, tmp_path / "out", "Recap")
    text = page.read_text()
    assert "Ana &lt;b&gt;" in text and "Ben &amp; Co" in text and "Ana <b>" not in text
    assert "Ben &amp; Co won after 2 rounds." in text
    assert "the bid was wrong: Ana &lt;b&gt; lost a die" in text
    assert "the bid was right: Cleo$\\frac$ lost a die" in text
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    with pytest.raises(RecapError, match="--out takes a folder .* is a file"):
        write_recap(recap, notes, "Recap")
    assert notes.read_text() == "mine"


def test_recap_journal_writes_the_page_and_charts_beside_the_journal(tmp_path, capsys):
    path = typed_game(tmp_path)
    assert recap_journal(path) == 0
    out = tmp_path / "typed-recap"
    assert default_out_dir(path) == out
    assert default_out_dir(tmp_path / "typed.jsonl.game-1") == tmp_path / "typed-game-1-recap"  # a copy kept aside
    assert capsys.readouterr().out.strip() == str(out / "index.html")
    for chart in ("bids.png", "dice.png", "success.png"):
        assert (out / chart).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (out / "index.html").read_text()
    for name in PLAYERS:
        assert f"<td>{name}</td>" in text
    assert all(f'src="{chart}"' in text for chart in ("bids.png", "dice.png", "success.png"))
    challenges_table = text.split("<h2>Challenges</h2>")[1].split("<h2>")[0]
    assert challenges_table.count("<tr>") == 1 + 3  # the header and one row a challenge
    assert "<td>calza</td><td>Cleo</td><td>3 threes by Ana</td><td>3</td>" in challenges_table
    assert "exactly the bid: Cleo won back a die" in challenges_table
    assert "the bid was right: Ben lost a die" in challenges_table
    assert "three fives" not in text and "3 fives" not in text  # the bid taken back
    assert "Paused in round 4." in text

    elsewhere = tmp_path / "elsewhere"
    assert recap_journal(path, elsewhere) == 0
    assert (elsewhere / "index.html").is_file()


def test_a_game_paused_with_the_cups_up_counts_no_outcome(tmp_path):
    path = typed_game(tmp_path, "two fives\ndudo\n")
    recap, _ = read_recap(path)
    (number, challenge), = recap.challenges
    assert number == 1 and not challenge.settled and challenge.caller_right is None
    assert all(s.dudos == 0 and s.bids_challenged == 0 for s in recap.stats)
    assert "not counted" in write_recap(recap, tmp_path / "out", "Recap").read_text()


def test_without_matplotlib_one_line_says_how_to_install_it_and_nothing_is_written(tmp_path, monkeypatch):
    path = typed_game(tmp_path)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(RecapError) as caught:
        recap_journal(path)
    assert isinstance(caught.value, CompanionError)
    message = str(caught.value)
    assert INSTALL_PLOTTING in message and "matplotlib" in message and "\n" not in message
    assert not default_out_dir(path).exists()


@pytest.mark.parametrize("content, says", [
    (None, "cannot read the journal"),
    (b"Ana bid two fives, Ben said dudo\n", "is not a companion journal"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "is not a companion journal"),
    ("corrupt", "is corrupt at line 4"),
    ("edited", "do not match"),
    ("edited past blank lines", "line 11 is followed by events that do not match"),  # by its line, not its place
])
def test_a_file_that_is_not_a_journal_is_one_clear_line_and_nothing_is_written(tmp_path, content, says):
    good = typed_game(tmp_path)
    path = tmp_path / "game.jsonl"
    lines = good.read_text().splitlines(keepends=True)
    if content == "corrupt":
        path.write_text("".join(lines[:3]) + "{not json\n" + "".join(lines[4:]))
    elif isinstance(content, str) and content.startswith("edited"):
        # Ana's dudo is counted wrong by Cleo's die lost going to Ben instead.
        lines = [line.replace('"die_lost","player":"Cleo"', '"die_lost","player":"Ben"') for line in lines]
        path.write_text("".join(lines[:2] + ["\n", "\n"] * ("blank" in content) + lines[2:]))
    elif content is not None:
        path.write_bytes(content)
    before = sorted(tmp_path.iterdir())
    with pytest.raises(JournalError) as caught:
        recap_journal(path)
    message = str(caught.value)
    assert isinstance(caught.value, CompanionError) and says in message and "\n" not in message
    assert str(path) in message
    assert sorted(tmp_path.iterdir()) == before
    assert ("--resume" in message) == (content in ("corrupt", "edited", "edited past blank lines"))  # what repairs it


def test_a_last_line_cut_off_mid_write_is_left_out_and_said(tmp_path, capsys):
    path = typed_game(tmp_path)
    with open(path, "a") as f:
        f.write('{"type":"bid","player":"Ben","cou')
    assert recap_journal(path) == 0
    assert "cut off" in capsys.readouterr().err
    assert read_recap(path)[0] == read_recap(typed_game(tmp_path / "whole"))[0]


def random_game(seed, preset, path):
    """A random game with undos, journalled as played, and what it did read from the game
    itself (not its events): each count's dice before and after, each bid and call that stands."""
    rng = random.Random(seed)
    rules = get_preset(preset).replace(starting_dice=3, max_dice=3)
    game = Game(["P0", "P1", "P2", "P3", "P4"][: rng.randint(2, 5)], rules)
    journal = Journal.start(path, game)
    # One entry a standing action: ("bid", player), ("call", kind, caller, bidder) or
    # ("count", dice before, dice after, the next round's palifico player or "over").
    did = []
    for _ in range(400):
        if game.phase is Phase.OVER:
            break
        if did and rng.random() < 0.1:
            game.undo()
            did.pop()
            journal.append([Undone({})])
        elif game.phase is Phase.REVEAL:
            before = dict(game.dice)
            journal.append(game.reveal(rng.randint(0, game.dice_in_play)))
            did.append(("count", before, dict(game.dice),
                        "over" if game.phase is Phase.OVER else game.palifico_player))
        else:
            calls = [(kind, p) for kind in (DUDO, CALZA) for p in game.players
                     if game.challenge_problem(kind, p) is None]
            raises = game.smallest_raises()
            if calls and (not raises or rng.random() < 0.4):
                kind, caller = rng.choice(calls)
                did.append(("call", kind, caller, game.last_bidder))
                journal.append((game.dudo if kind == DUDO else game.calza)(caller))
            else:
                did.append(("bid", game.turn))
                journal.append(game.bid(game.turn, rng.choice(raises)))
    journal.close()
    return game, did


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("preset", ["asmodee", "wikipedia-difference"])
def test_random_games_recap_to_what_the_game_did(tmp_path, seed, preset):
    game, did = random_game(seed, preset, tmp_path / "random.jsonl")
    recap, _ = read_recap(tmp_path / "random.jsonl")
    counts = [entry[1:] for entry in did if entry[0] == "count"]
    calls = [entry[1:] for entry in did if entry[0] == "call"]

    assert [r.palifico for r in recap.rounds] == [None] + [after for _, _, after in counts if after != "over"]
    assert recap.winner == game.winner
    assert dict(recap.final_dice) == game.dice
    assert [recap.dice_series(p) for p in game.players] == [
        [game.rules.starting_dice] + [after[p] for _, after, _ in counts] + ([] if game.winner else [game.dice[p]])
        for p in game.players]
    assert [(c.kind, c.caller, c.bidder) for _, c in recap.challenges] == calls
    for (_, challenge), (before, after, _) in zip(recap.challenges, counts):
        lost = {p: before[p] - after[p] for p in before if after[p] < before[p]}
        assert lost == ({challenge.loser: challenge.lost} if challenge.loser else {})
        assert challenge.regained == (0 if lost else after[challenge.caller] - before[challenge.caller])

    settled = [(kind, caller, bidder, before, after) for (kind, caller, bidder), (before, after, _) in zip(calls, counts)]
    for stats in recap.stats:
        p = stats.player
        dudos = [(b[p], a[p]) for kind, caller, _, b, a in settled if kind == DUDO and caller == p]
        calzas = [(b[p], a[p]) for kind, caller, _, b, a in settled if kind == CALZA and caller == p]
        on_them = [(b[p], a[p]) for kind, _, bidder, b, a in settled if kind == DUDO and bidder == p]
        assert stats.bids == did.count(("bid", p))
        assert (stats.dudos, stats.dudos_right) == (len(dudos), sum(a == b for b, a in dudos))
        assert (stats.calzas, stats.calzas_right) == (len(calzas), sum(a >= b for b, a in calzas))
        assert (stats.bids_challenged, stats.bluffs_caught) == (len(on_them), sum(a < b for b, a in on_them))
        assert stats.bids_held == stats.bids_challenged - stats.bluffs_caught


def test_a_calza_by_a_player_with_the_most_dice_wins_nothing_back(tmp_path):
    game = Game(PLAYERS, get_preset("asmodee").replace(starting_dice=1, max_dice=1))
    path = tmp_path / "calza.jsonl"
    journal = Journal.start(path, game)
    play(game, journal, game.bid, "Ana", Bid(1, 5))
    play(game, journal, game.calza, "Cleo")
    play(game, journal, game.reveal, 1)
    journal.close()
    recap, _ = read_recap(path)
    (_, calza), = recap.challenges
    assert calza.correct and calza.caller_right and calza.regained == 0 and calza.loser is None
    assert recap.dice_series("Cleo") == [1, 1, 1]
    stats = {s.player: s for s in recap.stats}
    assert (stats["Cleo"].calzas, stats["Cleo"].calzas_right) == (1, 1)
    assert stats["Ana"].bids_challenged == 0  # a calza tests its caller, not the bid's maker
    text = write_recap(recap, tmp_path / "out", "Recap").read_text()
    assert "exactly the bid: Cleo already had the most dice" in text


def test_a_won_game_names_its_recap_command_and_recap_finds_a_session_by_name(tmp_path):
    data = tmp_path / "data"
    env = {"XDG_DATA_HOME": str(data)}
    result = run_companion("play", "--players", "Ana", "Ben", "--dice", "1", "--input", "text", "--mute",
                           input_text="one five\ndudo\n0\n", env_extra=env)
    assert result.returncode == 0 and "Ben wins" in result.stdout, result.stderr
    command = result.stderr.strip().splitlines()[-1]
    assert command.startswith("companion: the game is over; its recap page: companion recap ")
    journal = Path(command.rsplit(" ", 1)[1])
    assert journal.parent == data / "companion" / "sessions"
    for named in (journal.stem, ""):  # by its session name, as --resume takes it, and as the newest
        shown = run_companion("recap", *([named] if named else []), "--out", tmp_path / f"page{named}",
                              env_extra=env)
        assert shown.returncode == 0, shown.stderr
        assert (tmp_path / f"page{named}" / "index.html").exists()


def test_a_recap_the_disk_has_no_room_for_leaves_the_one_before_whole(tmp_path):
    # No chart is left cut off where the last recap's was.
    from conftest import disk_full_past

    path = typed_game(tmp_path)
    out = tmp_path / "typed-recap"
    assert recap_journal(path) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with disk_full_past(4000), pytest.raises(RecapError, match="cannot write the recap"):
        recap_journal(path)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_game_won_in_one_round_and_a_long_one_read_well(tmp_path):
    import struct

    # one die each: Ana's bluff costs her her only die, and Ben wins at once
    result = run_companion("play", "--players", "Ana", "Ben", "--dice", "1", "--input", "text", "--mute",
                           "--journal", tmp_path / "one.jsonl", input_text="one four\ndudo\n0\n")
    assert result.returncode == 0, result.stderr
    out = tmp_path / "one-recap"
    assert recap_journal(tmp_path / "one.jsonl", out) == 0
    text = (out / "index.html").read_text()
    assert "Ben won after 1 round." in text and "Dice at the end: Ana 0, Ben 1." in text
    assert '<meta name="viewport"' in text  # a phone lays it out at its own width
    # Forty rounds of eight players: the dice chart grows with the rounds, up to a width a page
    # can show, its round labels thinned to stay apart.
    rng = random.Random(8)
    players = [f"Player{chr(65 + i)}" for i in range(8)]
    game = Game(players, get_preset("asmodee"))
    path = tmp_path / "long.jsonl"
    journal = Journal.start(path, game)
    while game.phase is not Phase.OVER and game.round_number <= 40:
        journal.append(game.bid(game.current_player, Bid(1, rng.randint(2, 6))))
        journal.append(game.dudo(game.current_player))
        journal.append(game.reveal(rng.randint(0, 3)))
    journal.close()
    assert recap_journal(path, tmp_path / "long-recap") == 0
    width, height = struct.unpack(">II", (tmp_path / "long-recap" / "dice.png").read_bytes()[16:24])
    assert 1000 < width <= 1600 and height < 400
