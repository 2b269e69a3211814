"""The scripted-games benchmark: its games, its journal comparison, and the player who says
each line until the referee takes it ("say again", "Did you say ...?").

The player is tested against a scripted referee; one short game goes through the real
`companion play --input wav -` with espeak-ng recordings (`python -m benchmarks.games`
plays the whole benchmark)."""

import io
import json
import shutil
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT))  # benchmarks/ sits beside the package

from benchmarks import games  # noqa: E402
from companion.calls import parse_call  # noqa: E402
from companion.listen.sources import PROMPT  # noqa: E402

BID = "Ana: two fives. Ben, your call."


def test_games_are_short_complete_and_every_line_is_a_call():
    for name, script in games.GAMES.items():
        lines = games.script_lines(script)
        assert 8 <= len(lines) <= 25, name
        said = " | ".join(lines)
        assert "dudo" in said and "calza" in said and "take it back" in said, name
        for line in lines:
            parse_call(line, games.PLAYERS)
        texts = games.spoken_texts(script)
        assert set(texts) == set(lines) | set(games.NAME_LINES) | {"yes", "no"}
        takes = range(games.NAME_TAKES + games.TAKES)  # a game's own takes, then the names'
        names = {games.take_name(text, take) for text in texts for take in takes}
        assert len(names) == len(texts) * len(takes), name  # no take overwrites another
    assert games.NAME_LINES == ("Ana calza", "Ana one two three", "Ben calza", "Ben one two three",
                                "Cleo calza", "Cleo one two three")


def test_every_game_is_accepted_when_typed(tmp_path, monkeypatch, capsys):
    from companion import cli

    for name, script in games.GAMES.items():
        journal = tmp_path / f"{name}.jsonl"
        monkeypatch.setattr(sys, "stdin", io.StringIO(script))
        assert cli.main(["play", "--players", *games.PLAYERS, "--input", "text", "--mute",
                         "--journal", str(journal)]) == 0
        out = capsys.readouterr().out
        assert "not allowed" not in out and "Sorry" not in out and "Who calls" not in out, out
        events = games.journal_events(journal)
        kinds = [e["type"] for e in events]
        assert "undo" in kinds and "count" in kinds, name
        assert {e["kind"] for e in events if e["type"] == "challenge"} == {"dudo", "calza"}, name


def test_games_compare_events_and_say_where_they_part():
    typed = [{"type": "bid", "player": "Ana", "count": 2, "face": 5}, {"type": "undo"}]
    assert games.compare(typed, [dict(e) for e in typed]) == (True, "2 events as typed")
    ok, note = games.compare(typed, typed[:1])
    assert not ok and note.startswith("event 2: typed") and note.endswith("heard nothing")
    ok, note = games.compare(typed, [dict(typed[0], count=3), typed[1]])
    assert not ok and note.startswith("event 1:")


def test_journal_comparison_ignores_volatile_fields(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text(json.dumps({"type": "undo", "action": {}, "time": 12.5}) + "\n")
    assert games.journal_events(path) == [{"type": "undo", "action": {}}]


# --- the player ------------------------------------------------------------------------------

def referee(*replies):
    """A scripted referee: answers each utterance with the next reply; keeps what was said."""
    said = []
    answers = iter(replies)

    def say(text, take):
        said.append((text, take))
        return next(answers)

    return say, said


def test_a_call_taken_at_once_costs_nothing():
    say, said = referee(BID)
    cost = games.Cost()
    assert games.say_line("two fives", say, cost) == "taken"
    assert said == [("two fives", 0)] and cost == games.Cost()


def test_say_again_and_silence_get_the_same_words_in_a_fresh_take():
    say, said = referee("Sorry, say again?", "", BID)
    cost = games.Cost()
    assert games.say_line("two fives", say, cost) == "taken"
    assert said == [("two fives", 0), ("two fives", 1), ("two fives", 2)]
    assert (cost.repeats, cost.questions) == (2, 0)


def test_the_right_call_read_back_is_answered_yes():
    # Compared as calls: "take it back" is read back as "undo".
    for line, asked in (("two fives", "two fives"), ("take it back", "undo"), ("a five", "one five")):
        say, said = referee(f"Did you say {asked}?", "Taken back.")
        cost = games.Cost()
        assert games.say_line(line, say, cost) == "taken"
        assert said == [(line, 0), ("yes", 0)] and cost.questions == 1


def test_a_wrong_call_read_back_is_answered_no_and_the_line_said_again():
    say, said = referee("Did you say nine fives?", "Not taken. If you called, say it again.", BID)
    cost = games.Cost()
    assert games.say_line("two fives", say, cost) == "taken"
    assert said == [("two fives", 0), ("no", 0), ("two fives", 1)]
    assert (cost.repeats, cost.questions) == (1, 1)


def test_an_answer_not_heard_is_said_again():
    say, said = referee("Did you say two fives?", "Sorry, say again?", "Not taken. If you called, say it again.",
                        "Did you say two fives?", BID)
    cost = games.Cost()
    assert games.say_line("two fives", say, cost) == "taken"
    # "yes" heard as "no": the referee drops the call, so the line comes again.
    assert said == [("two fives", 0), ("yes", 0), ("yes", 1), ("two fives", 1), ("yes", 0)]
    assert (cost.repeats, cost.questions) == (2, 2)


def test_a_line_misheard_as_something_the_referee_does_not_take_is_said_again():
    for line, reply in (("Ana calza", "Who calls calza? Say your name and calza, like Ana calza."),
                        ("five fives", "Five is not a call. Ben, bid or call dudo."),
                        ("five fives", "Four fives does not raise four fives. The smallest raises: "
                                       "five of any face, or two pacos."),
                        ("five fives", "One paco is not allowed: a round cannot open with pacos. To open: "
                                       "one of any face.")):
        say, said = referee(reply, BID)
        cost = games.Cost()
        assert games.say_line(line, say, cost) == "taken"
        assert said == [(line, 0), (line, 1)] and cost.repeats == 1


def test_the_same_question_again_gets_its_answer_in_a_fresh_take_and_three_tries_at_most():
    # A "no" heard as a call asked about again: the player answers it again, then gives up.
    say, said = referee(*["Did you say the count is eleven?"] * (1 + games.TRIES))
    cost = games.Cost()
    assert games.say_line("Ana six six one two three", say, cost) == "gave up"
    assert said == [("Ana six six one two three", 0)] + [("no", take) for take in range(games.TRIES)]
    assert cost.questions == 1 + games.TRIES


def test_a_new_question_gets_a_first_take_of_its_answer():
    say, said = referee("Did you say nine fives?", "Did you say two fives?", BID)
    cost = games.Cost()
    assert games.say_line("two fives", say, cost) == "taken"
    assert said == [("two fives", 0), ("no", 0), ("yes", 0)]


def test_the_player_gives_up_after_three_tries():
    say, said = referee(*["Sorry, say again?"] * games.TRIES)
    cost = games.Cost()
    assert games.say_line("two fives", say, cost) == "gave up"
    assert said == [("two fives", take) for take in range(games.TRIES)]
    assert cost.gave_up == "two fives"


def test_a_game_that_stops_listening_ends_the_line():
    say, said = referee(None)
    assert games.say_line("dudo", say, games.Cost()) == "ended"


def test_takes_vary_the_voice_a_little_and_the_same_way_every_run():
    from training import voices

    voice = voices.list_voices("festival", 1, seed=99)[0]
    assert games.take_voice(voice, "two fives", 0) == voice
    takes = [games.take_voice(voice, "two fives", take) for take in (1, 2)]
    assert takes == [games.take_voice(voice, "two fives", take) for take in (1, 2)]
    assert len({voice.name, *(t.name for t in takes)}) == 3
    for take in takes:
        assert abs(take.stretch / voice.stretch - 1) <= games.TAKE_STRETCH + 0.01
        assert abs(take.f0_mean - voice.f0_mean) <= games.TAKE_F0


@pytest.mark.skipif(shutil.which("espeak-ng") is None or shutil.which("sox") is None,
                    reason="espeak-ng and sox make the recordings")
def test_a_spoken_game_through_the_real_play(tmp_path):
    from test_listen_decode import speak

    from companion.listen.audio import write_wav
    import numpy as np

    script = "two fives\nthree fives\n"
    silence = tmp_path / "silence.wav"
    write_wav(silence, np.zeros(16000, np.int16))
    recordings = {text: speak(text, "en-us", tmp_path / f"{text.replace(' ', '-')}.wav")
                  for text in ("two fives", "three fives", "yes", "no", *games.NAME_LINES)}

    def takes(text, take):  # the first "three fives" is lost in the room: silence
        return silence if (text, take) == ("three fives", 0) else recordings[text]

    typed = tmp_path / "typed.jsonl"
    assert games.play_typed(script, typed).returncode == 0
    journal, log = tmp_path / "spoken.jsonl", tmp_path / "spoken.log"
    code, cost = games.play_spoken(script, takes, journal, log)
    transcript = log.read_text()
    assert code == 0, transcript
    assert cost.repeats >= 1 and cost.gave_up is None, transcript
    assert PROMPT in transcript and "(says 'three fives', take 2" in transcript
    # The players said their names first, as the referee asked, in takes of their own.
    assert transcript.index("Ana, say: Ana calza.") < transcript.index("New game")
    assert f"(says 'Cleo one two three', take {games.NAME_TAKES + 1}" in transcript
    assert "Thanks, Cleo." in transcript
    assert games.compare(games.journal_events(typed), games.journal_events(journal))[0], transcript
