"""The journal: append, replay, resume, undo, and refusing files it cannot trust."""

import json

import pytest

from companion.journal import Journal, JournalError, load_game, read_events, resume
from companion.rules import Bid, Game, get_preset
from companion.rules.events import EVENT_TYPES, Event, GameOver, HandShown, PlayerEliminated, Undone


def started(tmp_path, players=("Ana", "Ben", "Cleo"), preset="asmodee"):
    game = Game(players, get_preset(preset))
    path = tmp_path / "game.jsonl"
    return game, Journal.start(path, game), path


def act(game, journal, fn, *args):
    journal.append(fn(*args))


def test_every_event_type_round_trips_through_plain_data():
    game = Game(["Ana", "Ben", "Cleo"], get_preset("asmodee"))
    game.dice["Ana"] = 2
    game.bid("Ana", Bid(3, 2))
    game.dudo("Ben")
    game.reveal(0, {"Ana": (3, 3), "Ben": (4, 4, 4, 4, 4), "Cleo": (5, 5, 5, 5, 5)})
    game.bid("Ana", Bid(2, 2))  # Ana's palifico round
    game.dudo("Ben")
    game.reveal(2)
    game.bid("Ben", Bid(2, 2))
    game.calza("Cleo")
    game.reveal(2)
    seen = {e.type for e in game.events} | {Undone.type, HandShown.type}
    extra = [Undone({"kind": "bid", "player": "Ana", "count": 1, "face": 2}), HandShown("Ana", (1, 6)),
             PlayerEliminated("Ana"), GameOver("Ben")]
    for event in [*game.events, *extra]:
        data = json.loads(json.dumps(event.to_dict()))
        assert Event.from_dict(data) == event
    assert seen == set(EVENT_TYPES) - {"eliminated", "game_over"}


def test_resume_rebuilds_exactly_the_same_state(tmp_path):
    game, journal, path = started(tmp_path)
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    act(game, journal, game.bid, "Ben", Bid(4, 4))
    act(game, journal, game.dudo, "Cleo")
    act(game, journal, game.reveal, 2)
    act(game, journal, game.bid, "Ben", Bid(2, 6))
    journal.close()
    again = load_game(path)
    assert again.dice == game.dice and again.turn == game.turn and again.bids == game.bids
    assert [e.to_dict() for e in again.events] == [e.to_dict() for e in game.events]


def test_a_journal_from_before_a_rules_field_was_added_still_resumes(tmp_path):
    game, journal, path = started(tmp_path, preset="leaflet")
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    journal.close()
    lines = path.read_text().splitlines()
    start = json.loads(lines[0])
    del start["rules"]["palifico_opens_aces"]  # written by a version without the field
    path.write_text("\n".join([json.dumps(start)] + lines[1:]) + "\n")
    again = load_game(path)
    assert again.last_bid == Bid(3, 4)
    assert again.rules.palifico_opens_aces  # what that version did: the field's default
    start["rules"]["starting_dice"] = 3  # an edited start is still caught by what follows it
    path.write_text("\n".join([json.dumps(start)] + lines[1:]) + "\n")
    with pytest.raises(JournalError):
        load_game(path)
    start["rules"]["starting_dice"] = 5
    del start["rules"]["calza"]  # any other field missing: not this game's start
    path.write_text("\n".join([json.dumps(start)] + lines[1:]) + "\n")
    with pytest.raises(JournalError, match="does not match its own start"):
        load_game(path)


def test_undo_is_journalled_and_replayed(tmp_path):
    game, journal, path = started(tmp_path)
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    act(game, journal, game.bid, "Ben", Bid(4, 4))
    game.undo()
    journal.append([Undone({"kind": "bid"})])
    journal.close()
    again = load_game(path)
    assert again.bids == [("Ana", Bid(3, 4))] and again.turn == "Ben"


def test_a_line_cut_off_by_a_kill_is_dropped_and_repaired(tmp_path):
    game, journal, path = started(tmp_path)
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    journal.close()
    with open(path, "a") as f:
        f.write('{"type":"bid","player":"Ben","cou')  # killed mid-write
    again, journal2, notes, _ = resume(path)
    journal2.close()
    assert again.bids == [("Ana", Bid(3, 4))] and notes
    assert read_events(path)[1] is False  # the file is whole again


def one_round_journal(tmp_path):
    """A journal of one whole round: Ana bids three fours, Ben doubts, none are found."""
    game, journal, path = started(tmp_path)
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    act(game, journal, game.dudo, "Ben")
    act(game, journal, game.reveal, 0)
    journal.close()
    return path


def test_missing_derived_events_after_a_kill_are_rederived(tmp_path):
    path = one_round_journal(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-2]))  # the count line survived, its consequences did not
    again, journal2, _, _ = resume(path)
    journal2.close()
    assert again.dice["Ana"] == 4 and again.round_number == 2
    assert len(path.read_text().splitlines()) == len(lines)


@pytest.mark.parametrize("content, message", [
    (b"", "not a companion journal"),
    (b"hello world\n", "not a companion journal"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "not a companion journal"),
    (b'{"type": "bid", "player": "Ana", "count": 3, "face": 4, "next_player": "Ben"}\n', "does not start with a game"),
])
def test_foreign_files_are_refused(tmp_path, content, message):
    path = tmp_path / "j.jsonl"
    path.write_bytes(content)
    with pytest.raises(JournalError, match=message):
        resume(path)
    assert path.read_bytes() == content  # nothing changed


def test_edited_journals_are_caught(tmp_path):
    text = one_round_journal(tmp_path).read_text()
    tampered = tmp_path / "t.jsonl"
    tampered.write_text(text.replace('"remaining":4', '"remaining":5'))
    with pytest.raises(JournalError, match="do not match"):
        load_game(tampered)
    illegal = tmp_path / "i.jsonl"
    illegal.write_text(text.replace('"count":3,"face":4', '"count":3,"face":1'))
    with pytest.raises(JournalError, match="not allowed"):
        load_game(illegal)
    garbage = tmp_path / "g.jsonl"
    lines = text.splitlines()
    garbage.write_text("\n".join(lines[:2] + ["{not json"] + lines[2:]) + "\n")
    with pytest.raises(JournalError, match="corrupt at line 3"):
        load_game(garbage)


def test_a_new_game_never_overwrites_a_journal(tmp_path):
    game, journal, path = started(tmp_path)
    journal.close()
    with pytest.raises(JournalError, match="already holds a game"):
        Journal.start(path, game)
