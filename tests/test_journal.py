"""The journal: append, replay, resume, undo, and refusing files it cannot trust."""

import json
import os
from pathlib import Path

import pytest

from companion.journal import Damage, Journal, JournalError, load_game, read_events, resume
from companion.rules import Bid, Game, Rules, RulesError, get_preset, undone_event
from companion.rules.presets import RULES_ADDED_LATER
from companion.rules.events import (EVENT_TYPES, Event, GameOver, HandShown, HandTakenBack, PlayerEliminated,
                                    Undone)


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
    seen = {e.type for e in game.events} | {Undone.type, HandShown.type, HandTakenBack.type}
    extra = [Undone({"kind": "bid", "player": "Ana", "count": 1, "face": 2}), HandShown("Ana", (1, 6)),
             HandTakenBack("Ana"), PlayerEliminated("Ana"), GameOver("Ben")]
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


@pytest.mark.parametrize("field", sorted(RULES_ADDED_LATER))
def test_a_journal_from_before_a_rules_field_was_added_still_resumes(tmp_path, field):
    game, journal, path = started(tmp_path, preset="leaflet")
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    journal.close()
    lines = path.read_text().splitlines()
    start = json.loads(lines[0])
    del start["rules"][field]  # written by a version without the field
    path.write_text("\n".join([json.dumps(start)] + lines[1:]) + "\n")
    again = load_game(path)
    assert again.last_bid == Bid(3, 4)
    # what that version did: the field's default (the leaflet differs from it in two of them)
    assert getattr(again.rules, field) == getattr(Rules(), field)
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
    journal.append([undone_event(game.undo())])
    journal.close()
    again = load_game(path)
    assert again.bids == [("Ana", Bid(3, 4))] and again.turn == "Ben"


def test_an_undo_line_naming_another_call_than_the_last_is_caught(tmp_path):
    game, journal, path = started(tmp_path)
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    act(game, journal, game.bid, "Ben", Bid(4, 4))
    journal.append([Undone({"kind": "bid", "player": "Ana", "count": 3, "face": 4})])  # not the last
    journal.close()
    resumed = resume(path)
    resumed.journal.close()
    assert "takes back another call than the last" in resumed.dropped.first.why
    assert resumed.game.bids == [("Ana", Bid(3, 4)), ("Ben", Bid(4, 4))]


def test_a_line_cut_off_by_a_kill_is_dropped_and_repaired(tmp_path):
    game, journal, path = started(tmp_path)
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    journal.close()
    with open(path, "a") as f:
        f.write('{"type":"bid","player":"Ben","cou')  # killed mid-write
    resumed = resume(path)
    resumed.journal.close()
    assert resumed.game.bids == [("Ana", Bid(3, 4))] and resumed.notes and resumed.dropped is None
    assert not list(tmp_path.glob("*.corrupt-*"))  # a torn tail is no damage: no backup
    assert read_events(path)[1] is False  # the file is whole again


def test_a_whole_last_event_without_its_line_end_is_kept(tmp_path):
    """An editor or a copy that drops the file's last newline: the call the table heard
    stands, and the line end is put back (the next event would be written onto the line)."""
    game, journal, path = started(tmp_path)
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    act(game, journal, game.bid, "Ben", Bid(4, 4))
    journal.close()
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    assert read_events(path)[0][-1].to_dict()["count"] == 4
    resumed = resume(path)
    assert resumed.game.bids == [("Ana", Bid(3, 4)), ("Ben", Bid(4, 4))]
    assert resumed.notes == ["the journal's last line had no line end; it was added"]
    act(resumed.game, resumed.journal, resumed.game.bid, "Cleo", Bid(5, 4))
    resumed.journal.close()
    assert [e.count for e in read_events(path)[0] if e.type == "bid"] == [3, 4, 5]


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
    resumed = resume(path)
    resumed.journal.close()
    again = resumed.game
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
    with pytest.raises(JournalError, match="is a folder: name a journal file"):
        Journal.start(tmp_path, game)
    cut = tmp_path / "cut.jsonl"  # a game start cut off: resume refuses it, so must this
    cut.write_bytes(path.read_bytes()[:40])
    with pytest.raises(JournalError, match="holds no game to resume; a new game never overwrites"):
        Journal.start(cut, game)


def two_round_journal(tmp_path):
    """Ten lines: one_round_journal's round (lines 1-7), then three bids of round two."""
    game, journal, path = started(tmp_path)
    for fn, *args in ((game.bid, "Ana", Bid(3, 4)), (game.dudo, "Ben"), (game.reveal, 0),
                      (game.bid, "Ana", Bid(2, 6)), (game.bid, "Ben", Bid(3, 6)), (game.bid, "Cleo", Bid(4, 6))):
        act(game, journal, fn, *args)
    journal.close()
    assert len(path.read_text().splitlines()) == 10
    return path


def damage(path, number, line: bytes) -> tuple[bytes, list[bytes]]:
    """Put `line` in place of line `number`; returns the damaged bytes and the original lines."""
    lines = path.read_bytes().splitlines(keepends=True)
    damaged = b"".join(lines[:number - 1]) + line + b"\n" + b"".join(lines[number:])
    path.write_bytes(damaged)
    return damaged, lines


@pytest.mark.parametrize("garbage, why", [
    (b'{"type":"bid","player":"Ben","cou', "is not readable JSON"),  # a torn write the next one followed
    (b"\x00\x00\x00\x00", "is not readable JSON"),  # a block zeroed by a crash
    (b"\xff\xfe\xfa", "is not text"),
    (b'{"type":"bid","player":"Ben"}', "is not a journal event (event 'bid' has fields"),
    (b'{"type":"nonsense"}', "is not a journal event (unknown event type 'nonsense')"),
    (b"[" * 100000 + b"]" * 100000, "is not a journal event (nested too deep)"),
    (b'{"type":[1]}', "is not a journal event (an event needs a 'type')"),
    (b'{"type":"bid","count":' + b"9" * 5000 + b"}", "is not readable JSON (a number too long"),
])
def test_an_unreadable_line_mid_journal_is_dropped_with_the_lines_after_it(tmp_path, garbage, why):
    path = two_round_journal(tmp_path)
    damaged, lines = damage(path, 9, garbage)  # Ben's three sixes
    resumed = resume(path)
    dropped = resumed.dropped
    assert dropped.first.number == 9 and dropped.first.damage is Damage.UNREADABLE
    assert dropped.first.why.startswith(why)
    assert dropped.last_line == 10 and dropped.after == 1  # Cleo's four sixes went with it
    assert dropped.backup == tmp_path / "game.jsonl.corrupt-1" and dropped.backup.read_bytes() == damaged
    game = resumed.game
    assert game.bids == [("Ana", Bid(2, 6))] and game.turn == "Ben" and game.dice["Ana"] == 4
    assert path.read_bytes() == b"".join(lines[:8])  # the good lines, whole
    # The game goes on from there and the journal takes it cleanly.
    resumed.journal.append(game.bid("Ben", Bid(5, 6)))
    resumed.journal.close()
    again = load_game(path)
    assert again.bids == [("Ana", Bid(2, 6)), ("Ben", Bid(5, 6))] and again.turn == "Cleo"


def test_an_unreadable_consequence_is_derived_again(tmp_path):
    path = two_round_journal(tmp_path)
    _, lines = damage(path, 6, b"{garbage")  # the die Ana lost, after the count on line 5
    resumed = resume(path)
    resumed.journal.close()
    assert resumed.dropped.first.number == 6 and resumed.dropped.after == 4
    assert resumed.game.dice["Ana"] == 4 and resumed.game.round_number == 2 and not resumed.game.bids
    assert path.read_bytes() == b"".join(lines[:7])  # the count's consequences, written again


@pytest.mark.parametrize("number, old, new, damage, why", [
    # events that do not replay
    (5, b'"remaining":4', b'"remaining":5', Damage.DOES_NOT_REPLAY,  # checked on line 6
     "is followed by events that do not match"),
    (9, b'"count":3,"face":6', b'"count":1,"face":6', Damage.DOES_NOT_REPLAY, "is not allowed by the rules"),
    (9, b'"count":3,', b'"count":0,', Damage.DOES_NOT_REPLAY, "is not allowed by the rules"),
    (4, b'"kind":"dudo"', b'"kind":"maybe"', Damage.DOES_NOT_REPLAY, "is not allowed by the rules"),
    # fields of the wrong type, said as such
    (9, b'"count":3', b'"count":"three"', Damage.UNREADABLE,  # garbage in a field
     'count must be a whole number, not "three"'),
    (9, b'"count":3', b'"count":true', Damage.UNREADABLE,  # JSON's true is no 1
     "count must be a whole number, not true"),
    (9, b'"count":3', b'"count":3.0', Damage.UNREADABLE, "count must be a whole number, not 3.0"),
    (9, b'"player":"Ben"', b'"player":7', Damage.UNREADABLE, "player must be text, not 7"),
    (4, b'"aces_wild":true', b'"aces_wild":1', Damage.UNREADABLE, "aces_wild must be true or false, not 1"),
])
def test_a_damaged_event_is_dropped_with_the_lines_after_it(tmp_path, number, old, new, damage, why):
    # `old` replaced by `new` in the first line from `number` holding it
    path = two_round_journal(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    target = next(i for i, line in enumerate(lines) if old in line and i + 1 >= number)
    lines[target] = lines[target].replace(old, new)
    path.write_bytes(b"".join(lines))
    resumed = resume(path)
    resumed.journal.close()
    dropped = resumed.dropped
    assert dropped.first.number == number and dropped.first.damage is damage
    assert why in dropped.first.why and dropped.after == 10 - number and dropped.backup.exists()
    assert resumed.game.events == load_game(path).events  # the good lines, replayed
    assert len(path.read_text().splitlines()) == number - 1


def test_a_line_that_does_not_replay_before_an_unreadable_one_is_the_one_named(tmp_path):
    # The game goes on from before the first damage, so that is the line the note names.
    path = two_round_journal(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[3] = lines[3].replace(b'"kind":"dudo"', b'"kind":"maybe"')  # line 4, Ben's dudo
    path.write_bytes(b"".join(lines))
    damage(path, 8, b"{")  # Ana's two sixes, not JSON
    resumed = resume(path)
    resumed.journal.close()
    dropped = resumed.dropped
    assert (dropped.first.number, dropped.first.damage, dropped.after) == (4, Damage.DOES_NOT_REPLAY, 6)
    note = dropped.describe()
    assert note.startswith("the journal was damaged: line 4 is not allowed by the rules")
    assert "lines 4 to 10 were dropped (line 4 and the 6 events after it)" in note
    assert resumed.game.bids == [("Ana", Bid(3, 4))] and resumed.game.round_number == 1


def test_a_hand_or_an_undo_that_does_not_replay_is_dropped(tmp_path):
    path = two_round_journal(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    for line, why in (('{"type":"hand","player":"Ana","dice":[1,2,3,4]}', "shows dice that cannot be shown"),
                      ('{"type":"undo","action":{"kind":"bid"}}', "undoes nothing"),
                      ('{"type":"hand_taken_back","player":"Ana"}', "takes back a hand that was not said"),
                      ('{"type":"hand_taken_back","player":{"name":"Ana"}}', "player must be text"),
                      ('{"type":"hand","player":"Ana","dice":[true,true,true,true,true]}', "dice must be a list of whole")):
        path.write_text("".join(lines[:2] + [line + "\n"] + lines[2:]))
        resumed = resume(path)
        resumed.journal.close()
        assert resumed.dropped.first.number == 3 and why in resumed.dropped.first.why
        assert resumed.dropped.after == 8 and resumed.game.last_bid is None  # eleven lines


def test_a_journal_stopped_after_its_game_start_gets_its_opening_round_not_a_repair_note(tmp_path):
    path = two_round_journal(tmp_path)
    path.write_bytes(path.read_bytes().splitlines(keepends=True)[0])  # killed before round one was written
    resumed = resume(path)
    resumed.journal.close()
    assert resumed.notes == ["the journal stopped before what follows from its last line was written; that was added"]
    assert resumed.dropped is None and resumed.game.round_number == 1 and len(path.read_text().splitlines()) == 2


def test_a_line_that_does_not_replay_is_told_by_its_line_past_blank_ones(tmp_path):
    path = two_round_journal(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[9] = lines[9].replace(b'"count":4', b'"count":2')  # Cleo's four sixes, under Ben's three
    path.write_bytes(b"".join(lines[:2] + [b"\n", b"\n"] + lines[2:]))
    with pytest.raises(JournalError, match="line 12 is not allowed by the rules"):
        load_game(path)  # as recap reads it
    resumed = resume(path)
    resumed.journal.close()
    assert resumed.dropped.first.number == 12


def test_an_undo_of_a_count_with_no_dice_after_it_brings_none_back(tmp_path):
    # As an older version wrote it (its undo of a count dropped every hand said): dice brought
    # back that the players had dropped could settle the challenge with nobody asked.
    game, journal, path = started(tmp_path)
    for fn, *args in ((game.bid, "Ana", Bid(3, 4)), (game.dudo, "Ben")):
        act(game, journal, fn, *args)
    journal.append([HandShown("Ana", (4, 4, 1, 2, 3))])
    act(game, journal, game.reveal, 9)
    journal.close()
    with open(path, "a") as f:
        f.write('{"type":"undo","action":{}}\n')  # naming no action, and no hand lines after it
    resumed = resume(path)
    resumed.journal.close()
    assert resumed.game.phase.name == "REVEAL" and resumed.hands == {}


def test_a_journal_of_a_game_bigger_than_a_new_one_may_be_still_resumes(tmp_path):
    from companion.rules.presets import MOST_DICE

    path = tmp_path / "big.jsonl"
    game = Game(["Ana", "Ben"], get_preset("asmodee").replace(starting_dice=MOST_DICE + 2, max_dice=MOST_DICE + 2))
    Journal.start(path, game).close()
    resumed = resume(path)
    resumed.journal.close()
    assert resumed.game.dice == {"Ana": MOST_DICE + 2, "Ben": MOST_DICE + 2} and resumed.dropped is None


def test_blank_lines_and_a_byte_order_mark_are_no_damage(tmp_path):
    # an editor's touches: a blank line inside, whitespace at the end, a UTF-8 BOM in front
    path = two_round_journal(tmp_path)
    whole = load_game(path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"\xef\xbb\xbf" + b"".join(lines[:4] + [b"\n", b"  \n"] + lines[4:]) + b"\n  ")
    resumed = resume(path)
    resumed.journal.close()
    assert resumed.dropped is None and not list(tmp_path.glob("*.corrupt-*"))
    assert [e.to_dict() for e in resumed.game.events] == [e.to_dict() for e in whole.events]


def test_a_second_damage_never_overwrites_the_first_backup(tmp_path):
    path = two_round_journal(tmp_path)
    first, _ = damage(path, 10, b"{")
    resume(path).journal.close()
    second, _ = damage(path, 8, b"}")
    resumed = resume(path)
    resumed.journal.close()
    dropped = resumed.dropped
    assert dropped.backup.name == "game.jsonl.corrupt-2" and dropped.backup.read_bytes() == second
    assert (tmp_path / "game.jsonl.corrupt-1").read_bytes() == first


def test_damage_before_a_torn_last_line_counts_the_torn_line_as_dropped(tmp_path):
    path = two_round_journal(tmp_path)
    damage(path, 8, b"{")
    with open(path, "ab") as f:
        f.write(b'{"type":"bid","pla')
    resumed = resume(path)
    resumed.journal.close()
    assert (resumed.dropped.first.number, resumed.dropped.last_line, resumed.dropped.after) == (8, 11, 3)
    assert resumed.notes == []  # the torn line is in what was dropped, not said twice
    assert resumed.dropped.describe() == (
        "the journal was damaged: line 8 is not readable JSON (Expecting property name enclosed in double "
        "quotes at column 2). The game goes on from the line before it; lines 8 to 11 were dropped (line 8 and the "
        f"3 events after it). The journal as it was is kept in {tmp_path / 'game.jsonl.corrupt-1'}")


def test_damage_on_the_last_line_says_so_in_one_line(tmp_path):
    path = two_round_journal(tmp_path)
    damage(path, 10, b"{")
    resumed = resume(path)
    resumed.journal.close()
    assert resumed.dropped.after == 0
    assert "line 10 was dropped. The journal as it was is kept in" in resumed.dropped.describe()


@pytest.mark.parametrize("first_line, message", [
    (b'{"type":"game_started","players":["Ana"', "line 1 is not readable JSON"),
    (b"\xff\xfe", "line 1 is not text"),
    (b'{"type":"bid","player":"Ana","count":3,"face":4,"next_player":"Ben"}', "does not start with a game"),
    (b'{"type":"game_started","players":["Ana","Ben","Cleo"],"first":"Zed","rules":{}}', "cannot set up"),
])
def test_a_bad_game_start_is_one_clear_error_and_changes_nothing(tmp_path, first_line, message):
    path = two_round_journal(tmp_path)
    damaged, _ = damage(path, 1, first_line)
    with pytest.raises(JournalError, match=message):
        resume(path)
    assert path.read_bytes() == damaged
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game.jsonl"]  # no backup, no temporary file


def test_loading_a_damaged_journal_for_a_tool_still_refuses_it(tmp_path):
    path = two_round_journal(tmp_path)
    damaged, _ = damage(path, 9, b"{")
    with pytest.raises(JournalError, match="corrupt at line 9: it is not readable JSON"):
        load_game(path)
    assert path.read_bytes() == damaged


def test_two_referees_never_write_one_journal(tmp_path):
    game, journal, path = started(tmp_path)
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    with pytest.raises(JournalError, match="is in use: another companion is playing this game"):
        Journal(path)
    damaged = path.read_bytes() + b'{"type":"bid","pla'  # a line the first one is writing
    path.write_bytes(damaged)
    with pytest.raises(JournalError, match="is in use"):
        resume(path)
    assert path.read_bytes() == damaged and not list(tmp_path.glob("*.corrupt-*"))  # untouched
    journal.close()
    resumed = resume(path)  # once the first has stopped
    assert resumed.game.bids == [("Ana", Bid(3, 4))]
    with pytest.raises(JournalError, match="is in use"):  # the repaired file is held as well
        resume(path)
    resumed.journal.close()


def test_a_referee_that_locked_a_journal_a_repair_replaced_gives_way(tmp_path, monkeypatch):
    game, journal, path = started(tmp_path)
    journal.close()
    stale = open(path, "a")  # opened just before another referee's repair replaced the file
    replaced = tmp_path / "new.jsonl"
    replaced.write_bytes(path.read_bytes())
    os.replace(replaced, path)
    real_open = open
    monkeypatch.setattr("builtins.open", lambda *a, **k: stale if Path(a[0]) == path else real_open(*a, **k))
    with pytest.raises(JournalError, match="is in use"):
        Journal(path)  # it locks the old file, sees the name holds another, and stops


def test_a_file_system_without_locks_still_keeps_the_journal(tmp_path, monkeypatch):
    import errno
    import fcntl

    def no_locks(fd, how):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    game, journal, path = started(tmp_path)
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    journal.close()
    assert load_game(path).bids == [("Ana", Bid(3, 4))]


def test_a_journal_reached_by_a_link_is_repaired_in_its_own_file(tmp_path):
    game, journal, real = started(tmp_path)
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    journal.close()
    real.write_bytes(real.read_bytes() + b'{"type":"bid","pla')  # cut off by a kill
    link = tmp_path / "link.jsonl"
    link.symlink_to(real.name)
    resumed = resume(link)
    assert resumed.notes and resumed.game.bids == [("Ana", Bid(3, 4))]
    resumed.journal.append(resumed.game.bid("Ben", Bid(4, 4)))
    resumed.journal.close()
    assert link.is_symlink() and load_game(real).bids == [("Ana", Bid(3, 4)), ("Ben", Bid(4, 4))]


def test_a_damaged_journal_that_cannot_be_written_is_left_as_it_was(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes a read-only file")
    path = two_round_journal(tmp_path)
    damaged, _ = damage(path, 9, b"{")
    path.chmod(0o444)
    with pytest.raises(JournalError, match="cannot write the journal"):
        resume(path)
    assert path.read_bytes() == damaged and not list(tmp_path.glob("*.corrupt-*"))


def test_a_journal_that_cannot_be_written_mid_game_is_a_clear_error(tmp_path):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full to fill")
    journal = Journal(Path("/dev/full"))  # every write fails as on a full card
    with pytest.raises(JournalError, match="cannot write the journal /dev/full: No space left"):
        journal.append(Game(["Ana", "Ben"]).events)
    journal.close()  # the text it could not write is not tried again on the way out


@pytest.mark.parametrize("gone", ["deleted", "moved to the bin"])
def test_a_journal_gone_from_its_path_mid_game_is_written_again_whole_there(tmp_path, gone):
    game, journal, path = started(tmp_path)
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    if gone == "deleted":  # a tidy-up of the data folder mid-game
        path.unlink()
    else:  # still linked, but not where the game is resumed from
        path.rename(tmp_path / "in-the-bin.jsonl")
    act(game, journal, game.bid, "Ben", Bid(4, 4))
    journal.close()
    assert load_game(path).bids == [("Ana", Bid(3, 4)), ("Ben", Bid(4, 4))]


def test_a_resumed_journal_deleted_is_written_again_with_its_repair(tmp_path):
    game, journal, path = started(tmp_path)
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    journal.close()
    with open(path, "a") as f:
        f.write('{"type":"bid","pla')  # cut off by a kill: repaired on resuming
    resumed = resume(path)
    path.unlink()
    resumed.journal.append(resumed.game.bid("Ben", Bid(4, 4)))
    resumed.journal.close()
    assert load_game(path).bids == [("Ana", Bid(3, 4)), ("Ben", Bid(4, 4))]


def test_the_newest_saved_game_is_not_an_empty_file(tmp_path):
    from companion.journal import find_session

    game, journal, path = started(tmp_path)
    journal.close()
    empty = tmp_path / "game-2.jsonl"
    empty.touch()
    os.utime(path, (1, 1))  # the game is older than the empty file
    assert find_session(None, tmp_path) == path
    (tmp_path / "game-3.jsonl").write_bytes(path.read_bytes()[:40])  # its game start cut off by a kill
    assert find_session(None, tmp_path) == path


def two_games_in_sessions(tmp_path):
    """A sessions folder holding two journals of one game: game.jsonl and game-2.jsonl."""
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    _, journal, first = started(sessions)
    journal.close()
    second = sessions / "game-2.jsonl"
    second.write_bytes(first.read_bytes())
    return sessions, first, second


def test_the_game_played_last_is_found_whatever_the_clock_said(tmp_path):
    # A Raspberry Pi offline has no clock: after a power cut it starts from the time it last
    # saved, so the game just played can carry an older time than one played before.
    from companion.journal import LAST_PLAYED, find_session, mark_played

    sessions, old, played = two_games_in_sessions(tmp_path)
    os.utime(old, (2000, 2000))
    os.utime(played, (1000, 1000))  # written after, with the clock stepped back
    assert find_session(None, sessions) == old  # by the files' times alone: the wrong game
    mark_played(played, sessions)
    assert find_session(None, sessions) == played
    played.unlink()  # the game it names is gone: the newest there is
    assert find_session(None, sessions) == old
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(old.read_bytes())
    (sessions / LAST_PLAYED).write_text("../outside.jsonl\n")  # a game, but not in the folder
    assert find_session(None, sessions) == old
    mark_played(outside, sessions)  # played outside the folder: no hint kept
    assert (sessions / LAST_PLAYED).read_text() == "../outside.jsonl\n"
    # The hint cannot be written (a full disk): the game goes on, and the hint naming another
    # game goes, or a bare --resume would take that game up.
    from conftest import disk_full_past

    played.write_bytes(old.read_bytes())
    os.utime(played, (1000, 1000))
    (sessions / LAST_PLAYED).write_text(played.name + "\n")
    with disk_full_past(2):
        mark_played(old, sessions)
    assert not (sessions / LAST_PLAYED).exists() and find_session(None, sessions) == old
    assert not (sessions / "games-played").exists()  # nor the games before it, which lack the one played
    assert [p.name for p in sessions.iterdir() if p.name.startswith(".")] == []  # no spare left behind


def test_the_game_played_before_a_deleted_one_is_found_whatever_the_clock_said(tmp_path):
    # last night's game (the clock right), then tonight's after a power cut (the clock behind),
    # then a game begun by mistake and deleted: tonight's is the one to resume, though last
    # night's file is newer by the clock
    from companion.journal import GAMES_PLAYED, LAST_PLAYED, PLAYED_KEPT, find_session, mark_played

    sessions, last_night, tonight = two_games_in_sessions(tmp_path)
    os.utime(last_night, (2000, 2000))
    os.utime(tonight, (1000, 1000))
    mistake = sessions / "game-3.jsonl"
    mistake.write_bytes(tonight.read_bytes())
    for played in (last_night, tonight, mistake):
        mark_played(played, sessions)
    mistake.unlink()
    assert find_session(None, sessions) == tonight
    mark_played(last_night, sessions)  # played again: the newest
    assert find_session(None, sessions) == last_night
    # last-played names only the last, as an earlier companion sharing the folder reads it
    assert (sessions / LAST_PLAYED).read_text() == f"{last_night.name}\n"
    (sessions / LAST_PLAYED).write_bytes(b"game\0.jsonl\n")  # damaged: the games before it then
    assert find_session(None, sessions) == last_night
    for n in range(2 * PLAYED_KEPT):  # a long life of games: the hint stays short
        mark_played(sessions / f"game-x{n}.jsonl", sessions)
    assert len((sessions / GAMES_PLAYED).read_text().splitlines()) == PLAYED_KEPT


def test_two_referees_marking_the_game_they_play_at_once_keep_a_hint(tmp_path, monkeypatch):
    # Each writes a spare and moves it in: one's move must not find its spare taken by the
    # other's and drop the hint the other has just written.
    import companion.journal as journals
    from companion.journal import LAST_PLAYED, find_session, mark_played

    sessions, mine, theirs = two_games_in_sessions(tmp_path)
    replace = os.replace
    others = [theirs]

    def the_other_referee_first(src, dst):
        if others:
            mark_played(others.pop(), sessions)
        replace(src, dst)

    monkeypatch.setattr(journals.os, "replace", the_other_referee_first)
    mark_played(mine, sessions)
    assert (sessions / LAST_PLAYED).read_text().splitlines()[-1] == mine.name
    assert find_session(None, sessions) == mine


def test_a_journal_deleted_after_the_last_call_is_written_again_as_it_closes(tmp_path):
    game, journal, path = started(tmp_path)
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    path.unlink()
    journal.close()
    assert load_game(path).bids == [("Ana", Bid(3, 4))]


def test_a_journal_saved_over_by_another_file_is_never_written_into(tmp_path):
    game, journal, path = started(tmp_path)
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    saved = path.read_bytes()
    other = tmp_path / "editor.tmp"
    other.write_bytes(saved)
    other.replace(path)  # an editor's save: a new file at the path
    with pytest.raises(JournalError, match="was replaced by another file") as stopped:
        act(game, journal, game.bid, "Ben", Bid(4, 4))
    journal.close()
    assert path.read_bytes() == saved  # nothing appended to it, not twice the game
    # the game so far is kept beside it, to resume from
    assert stopped.value.resume_from == tmp_path / "game.jsonl.game-1"
    assert load_game(stopped.value.resume_from).bids == [("Ana", Bid(3, 4))]


def test_a_journal_path_that_cannot_be_looked_up_is_still_written(tmp_path, monkeypatch):
    # a network share's stale handle: the open file is written on, not the game stopped
    game, journal, path = started(tmp_path)
    real_stat = os.stat

    def stale(p, *args, **kwargs):
        if str(p) == str(path):
            raise OSError(116, "Stale file handle")
        return real_stat(p, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stale)
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    monkeypatch.undo()
    journal.close()
    assert load_game(path).bids == [("Ana", Bid(3, 4))]


def test_a_journal_saved_over_whose_copy_cannot_be_kept_says_so(tmp_path, monkeypatch):
    import companion.journal as journals

    game, journal, path = started(tmp_path)
    other = tmp_path / "editor.tmp"
    other.write_bytes(path.read_bytes())
    other.replace(path)

    def full(*args):
        raise JournalError("no space left")

    monkeypatch.setattr(journals, "_keep_copy", full)
    with pytest.raises(JournalError, match="was replaced by another file.*no space left") as stopped:
        act(game, journal, game.bid, "Ana", Bid(3, 4))
    assert not stopped.value.resumable and stopped.value.resume_from is None
    journal.close()


def test_a_write_that_fails_part_way_is_taken_off_again(tmp_path, monkeypatch):
    """A card filling up mid-line: the table is told the move is not saved, so the journal
    must not keep half of it (nor the half-line a resume would then play around)."""
    import errno
    import os

    from companion import journal as journals

    game, journal, path = started(tmp_path)
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    saved = path.read_bytes()
    real_write = os.write

    def card_fills(fd, data):
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(journals.os, "write", card_fills)
    ben = game.bid("Ben", Bid(4, 4))
    with pytest.raises(JournalError, match="No space left on device"):
        journal.append(ben)
    assert path.read_bytes() == saved
    monkeypatch.setattr(journals.os, "write", real_write)  # room again: the move said again is saved
    journal.append(ben)
    journal.close()
    assert [e.count for e in read_events(path)[0] if e.type == "bid"] == [3, 4]


def test_two_tables_starting_in_the_same_second_take_two_names(tmp_path, monkeypatch):
    import companion.journal as journals
    from companion.journal import new_session_path

    sessions = tmp_path / "sessions"
    first_game, second_game = Game(["Ana", "Ben"], get_preset("asmodee")), Game(["Dora", "Eli"], get_preset("asmodee"))
    name = new_session_path(sessions)
    first = Journal.start(name, first_game)  # the other table, still playing: its file locked
    second = Journal.start_in_sessions(name, second_game)
    assert second.path != name and load_game(second.path).players == ("Dora", "Eli")
    first.close()
    second.close()
    # ... and one that began its game between this one's check and its opening of the file
    check_new = journals.check_new
    name = new_session_path(sessions)

    def another_table_meanwhile(path):
        check_new(path)
        monkeypatch.setattr(journals, "check_new", check_new)  # once
        Journal.start(path, Game(["Fay", "Gus"], get_preset("asmodee"))).close()

    monkeypatch.setattr(journals, "check_new", another_table_meanwhile)
    third = Journal.start_in_sessions(name, second_game)
    third.close()
    assert third.path != name
    assert load_game(name).players == ("Fay", "Gus") and load_game(third.path).players == ("Dora", "Eli")


def test_a_sessions_folder_that_is_a_file_or_a_broken_link_is_named(tmp_path):
    game = Game(["Ana", "Ben"], get_preset("asmodee"))
    (tmp_path / "sessions").write_text("not a folder")
    with pytest.raises(JournalError, match="sessions is a file, not a folder"):
        Journal.start(tmp_path / "sessions" / "game.jsonl", game)
    (tmp_path / "moved").symlink_to(tmp_path / "gone")
    with pytest.raises(JournalError, match="moved is a link to nothing"):
        Journal.start(tmp_path / "moved" / "game.jsonl", game)


def test_an_older_versions_bid_above_what_the_players_could_hold_replays_as_played(tmp_path):
    # Before a hidden total capped bids at what the players still in could hold, pressman
    # games took any count: such a journal is no damage, and resumes (and recaps) as played.
    game = Game(["Ana", "Ben", "Cleo"], get_preset("pressman"))
    game.admit_older_bids = True  # as the older version played it
    path = tmp_path / "old.jsonl"
    journal = Journal.start(path, game)
    for fn, *args in ((game.bid, "Ana", Bid(3, 4)), (game.bid, "Ben", Bid(20, 5)), (game.dudo, "Cleo"),
                      (game.reveal, 3), (game.bid, "Ben", Bid(2, 6))):
        act(game, journal, fn, *args)
    journal.close()
    before = path.read_bytes()
    resumed = resume(path)
    resumed.journal.close()
    assert resumed.dropped is None and path.read_bytes() == before
    assert resumed.game.dice == game.dice and resumed.game.last_bid == Bid(2, 6) and resumed.game.turn == "Cleo"
    assert load_game(path).round_number == 2
    with pytest.raises(RulesError):  # what is played on after the pause is capped
        resumed.game.bid("Cleo", Bid(90, 6))
    resumed.game.undo()  # and the older version's bids, taken back and made again, still stand
    resumed.game.undo()
    resumed.game.undo()
    assert resumed.game.last_bid == Bid(20, 5)
    resumed.game.undo()  # taken back: only that very bid may be made again over the cap
    with pytest.raises(RulesError):
        resumed.game.bid("Ben", Bid(16, 6))
    resumed.game.bid("Ben", Bid(20, 5))
    # in its place only after that very game: the same bid after another opening is capped
    resumed.game.undo()
    resumed.game.undo()  # Ana's three fours: Ana opens round one again
    resumed.game.bid("Ana", Bid(4, 4))
    with pytest.raises(RulesError):
        resumed.game.bid("Ben", Bid(20, 5))
    # taken back before any action stands, the journal still resumes
    journal = Journal.start(tmp_path / "undone.jsonl", old := Game(["Ana", "Ben", "Cleo"], get_preset("pressman")))
    old.admit_older_bids = True
    act(old, journal, old.bid, "Ana", Bid(20, 5))
    act(old, journal, lambda: [undone_event(old.undo())])
    journal.close()
    again = resume(tmp_path / "undone.jsonl")
    again.journal.close()
    assert again.game.last_bid is None and again.dropped is None
    fresh = Game(["Ana", "Ben", "Cleo"], get_preset("pressman"))  # a new game still refuses it
    fresh.bid("Ana", Bid(3, 4))
    with pytest.raises(RulesError):
        fresh.bid("Ben", Bid(20, 5))


def test_rules_fields_a_later_version_dropped_do_not_refuse_a_journal(tmp_path):
    # Some versions wrote the words for calza and palifico among the rules (words only).
    game, journal, path = started(tmp_path)
    act(game, journal, game.bid, "Ana", Bid(3, 4))
    journal.close()
    lines = path.read_text().splitlines(keepends=True)
    start = json.loads(lines[0])
    start["rules"].update(calza_word="calza", palifico_word="palifico")
    path.write_text(json.dumps(start) + "\n" + "".join(lines[1:]))
    before = path.read_bytes()
    resumed = resume(path)
    resumed.journal.close()
    assert resumed.dropped is None and resumed.game.last_bid == Bid(3, 4) and path.read_bytes() == before


def test_the_dice_an_undo_leaves_standing_are_read_from_its_line_or_the_hand_lines_after_it(tmp_path):
    game, journal, path = started(tmp_path)
    for fn, *args in ((game.bid, "Ana", Bid(3, 4)), (game.dudo, "Ben")):
        act(game, journal, fn, *args)
    hands = {"Ana": (4, 4, 1, 2, 3), "Ben": (5, 5, 5, 2, 2), "Cleo": (4, 6, 6, 6, 6)}
    act(game, journal, game.reveal, 4, hands)
    journal.close()
    base = path.read_text()
    standing = {"Ana": [4, 4, 1, 2, 3], "Ben": [5, 5, 5, 2, 2]}
    for tail, expected in (
            (json.dumps({"type": "undo", "action": {}, "hands": standing}) + "\n", standing),
            # as versions before wrote them: hand lines after the undo
            ('{"type":"undo","action":{}}\n' + "".join(
                json.dumps({"type": "hand", "player": p, "dice": d}) + "\n" for p, d in standing.items()), standing)):
        path.write_text(base + tail)
        resumed = resume(path)
        resumed.journal.close()
        assert resumed.dropped is None and {p: list(d) for p, d in resumed.hands.items()} == expected
    # anything but the dice said before the last, written back as they were, is damage: other
    # dice, every player's (which would settle the count again), a name written otherwise
    for bad in ({"Ana": [4, 4, 1]}, {"Zed": [4, 4, 1, 2, 3]}, {"Ana": [6, 6, 6, 6, 6], "Ben": [5, 5, 5, 2, 2]},
                dict(standing, Cleo=[4, 6, 6, 6, 6]), {"ana": [4, 4, 1, 2, 3], "Ben": [5, 5, 5, 2, 2]}):
        path.write_text(base + json.dumps({"type": "undo", "action": {}, "hands": bad}) + "\n")
        resumed = resume(path)
        resumed.journal.close()
        assert resumed.dropped is not None and "not said before the count" in resumed.dropped.first.why, bad
