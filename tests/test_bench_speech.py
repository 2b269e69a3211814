"""The speech benchmark's pure parts: its scoring and its corpus (the scripted games are
tested in test_bench_games.py).

Nothing here synthesises speech or decodes audio (`companion bench speech --quick` does)."""

import io
import sys

import numpy as np
import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT))  # benchmarks/ sits beside the package

from benchmarks import speech, speech_audio, speech_corpus  # noqa: E402
from companion.calls import call_to_json, parse_call, parse_call_or_none  # noqa: E402


def row(text, confidence, truth_text, kind="bid", condition="clean", set_="festival"):
    return {"set": set_, "condition": condition, "kind": kind, "text": text,
            "confidence": confidence, "truth": speech_corpus.truth_of(truth_text),
            "call": call_to_json(parse_call_or_none(text, speech_corpus.PLAYERS)),
            "endpoint_delay": 0.2, "finish": 0.05, "audio": 1.0, "cpu": 0.1}


# The lines `play` uses, so the rows fall on either side of them whatever they are.
LINES = speech.hearing_policy()
APPLIED = (LINES.confirm_below + 1) / 2
ASKED = (LINES.reject_below + LINES.confirm_below) / 2
SAY_AGAIN = (LINES.ignore_below + LINES.reject_below) / 2
SHORT = (max(LINES.short_calls_from, LINES.ignore_below) + LINES.reject_below) / 2


def test_a_wrong_call_acted_on_is_a_silent_error():
    rows = [row("five fives", APPLIED, "four fives"),  # wrong, applied at once
            row("four fives", APPLIED, "four fives"),  # right, applied
            row("four fives", ASKED, "four fives"),  # right, asked about: still acted on
            row("four fives", SAY_AGAIN, "four fives"),  # right but "say again": not acted on
            row("", 0.0, "four fives")]  # nothing heard
    m = speech.metrics(rows)
    assert m["n_calls"] == 5
    assert m["silent_errors"] == pytest.approx(1 / 5)
    assert m["wrong_moves"] == pytest.approx(1 / 5)
    assert m["accuracy"] == pytest.approx(2 / 5)
    assert m["raw_accuracy"] == pytest.approx(3 / 5)
    assert m["again"] == pytest.approx(2 / 5)
    assert m["accuracy"] + m["silent_errors"] + m["again"] == pytest.approx(1)
    assert m["latency_median"] == pytest.approx(0.25)


def test_a_wrong_call_that_changes_nothing_is_a_silent_error_but_moves_nothing():
    rows = [row("status", APPLIED, "four fives"),  # a question to the referee, answered
            row("no", APPLIED, "four fives"),  # an answer with no question waiting: passed over
            row("five fives", ASKED, "four fives"),  # asked about first: a "no" undoes it
            row("five fives", APPLIED, "four fives")]  # applied at once: the game moved
    m = speech.metrics(rows)
    assert m["silent_errors"] == pytest.approx(3 / 4)
    assert m["wrong_moves"] == pytest.approx(1 / 4)
    assert m["again"] == pytest.approx(1 / 4)


def test_a_yes_or_no_is_heard_as_an_answer_and_chatter_as_talk_with_nothing_asked():
    answers = [row("no", APPLIED, "no"), row("yes", APPLIED, "yes")]
    assert speech.metrics(answers)["accuracy"] == pytest.approx(1.0)
    talk = [row("no", APPLIED, None, "chatter"), row("three twos", APPLIED, None, "chatter")]
    m = speech.metrics(talk)
    assert m["chatter_accepted"] == pytest.approx(1 / 2)  # the bid; the "no" answers nothing
    assert m["chatter_when_asked"] == pytest.approx(2 / 2)  # with a question waiting it declines it


def test_chatter_acted_on_counts_as_accepted():
    rows = [row("dudo", SHORT, None, "chatter"),  # a short call is asked about from its line
            row("three twos", LINES.ignore_below / 2, None, "chatter"),  # passed over in silence
            row("three twos", APPLIED, None, "chatter"),  # applied
            row("", 0.0, None, "chatter"),
            row("three twos", (LINES.ignore_below + LINES.reject_below) / 2, None, "chatter")]  # "say again?"
    m = speech.metrics(rows)
    assert m["n_chatter"] == 5 and m["n_calls"] == 0
    assert m["chatter_accepted"] == pytest.approx(2 / 5)
    assert m["chatter_moves"] == pytest.approx(1 / 5)  # the applied bid; the dudo was asked about
    assert m["chatter_answered"] == pytest.approx(3 / 5)  # and the "Sorry, say again?"
    assert m["accuracy"] != m["accuracy"]  # no calls: nan, not a made-up 0


def test_an_end_found_only_at_the_end_of_the_recording_is_no_end_found():
    from companion.listen.endpoint import Segment

    said_until, samples = 16000, 16000 + 9600
    assert speech.endpoint_delay([Segment(0, 15000, 19200)], said_until, samples) == pytest.approx(0.2)
    # the endpointer was still in the utterance when the file ran out: flushed at its end
    assert speech.endpoint_delay([Segment(0, 15000, samples)], said_until, samples) is None
    # a burst that ended before the call did is not the call's end
    assert speech.endpoint_delay([Segment(0, 8000, 9000)], said_until, samples) is None


def test_the_first_utterance_the_referee_does_not_pass_over_is_the_one_scored():
    from companion.listen.engine import Recognition

    assert not speech._not_passed_over(Recognition(""))
    assert not speech._not_passed_over(Recognition("three twos", confidence=LINES.ignore_below / 2))
    assert speech._not_passed_over(Recognition("three twos", confidence=SAY_AGAIN))
    assert speech._not_passed_over(Recognition("three twos", confidence=APPLIED))
    rows = [dict(row("four fives", APPLIED, "four fives"), ended_on_call=True),
            row("four fives", APPLIED, "four fives")]
    assert speech.metrics(rows)["ended_on_call"] == pytest.approx(1 / 2)


def test_phrases_and_speakers_are_scored_as_calls():
    rows = [row("nine fives", 0.9, "nine fives", "phrase"),
            row("eight fives", 0.9, "nine fives", "phrase"),
            row("ben calza", 0.9, "Ben calza", "named"),
            row("ana calza", 0.9, "Ben calza", "named")]  # the wrong caller is a wrong call
    m = speech.metrics(rows)
    assert m["phrase_accuracy"] == pytest.approx(1 / 2)
    assert m["silent_errors"] == pytest.approx(2 / 4)


def test_summary_groups_by_set_and_condition_and_reads_in_one_line():
    rows = [row("four fives", 0.9, "four fives"), row("four fives", 0.9, "four fives", condition="babble6"),
            row("five fives", 0.95, "four fives", condition="babble6"),
            row("two", 0.9, "two", "digit", set_="real:lucas"), row("three twos", 0.9, None, "chatter")]
    summary = speech.summarise(rows)
    assert list(summary) == ["festival", "real:lucas"]
    assert list(summary["festival"]) == ["clean", "babble6"]
    top = speech.overall(rows, summary, "festival", "real:lucas")
    assert top["clean_accuracy"] == 1.0 and top["babble6_accuracy"] == 0.5
    assert top["real_clean_accuracy"] == 1.0  # a count is asked about, so acted on
    assert top["chatter_accepted"] == pytest.approx(1.0)
    assert top["chatter_moves"] == pytest.approx(1.0)  # a bid heard that surely is applied
    line = speech.summary_line(top, 0.012, 1.9, {"clean": 3, "babble12": 1, "total": 4})
    assert line.startswith("speech: clean 100.0%")
    assert "CPU on silence 1.20%" in line and "model 1.90 MB" in line
    # of every call in babble 6 dB one of two was wrong and acted on; of the calls acted on, too
    assert "silent errors max 50.0% of calls (festival babble6), 50.0% of calls acted on (festival babble6; moves made unasked max 50.0%)" in line
    assert "latency p90 250 ms" in line
    assert line.endswith("games refereed right: clean 3/4, babble 12 dB 1/4")
    out = io.StringIO()
    speech.print_table(summary, out)
    assert len(out.getvalue().splitlines()) == 4


def test_a_call_whose_end_was_never_found_counts_as_the_slowest_in_the_latency():
    # dropping them would leave out exactly the slowest calls
    rows = [row("four fives", 0.9, "four fives") for _ in range(10)]
    for r, delay in zip(rows, (0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2, None)):
        r["endpoint_delay"] = delay
    figures = speech.metrics(rows)
    assert figures["latency_p90"] == pytest.approx(0.25) and figures["latency_median"] == pytest.approx(0.15)
    rows[8]["endpoint_delay"] = None  # two of ten never ended: the p90 is among them
    figures = speech.metrics(rows)
    assert figures["latency_p90"] == float("inf") and figures["latency_p90_ended"] == pytest.approx(0.15)
    assert figures["endpoint_missed"] == pytest.approx(0.2)
    out = io.StringIO()
    speech.print_table(speech.summarise(rows), out)
    assert " never " in out.getvalue()
    top = speech.overall(rows, speech.summarise(rows), "festival", None)
    assert "latency p90 never (150 ms over the calls whose end was found" in speech.summary_line(top, None, 1.0, None)


def test_the_worst_shares_of_wrong_calls_are_each_said_where_they_are():
    # of all calls the worst is where most wrong calls are acted on; of the calls acted on,
    # where the recogniser acts on little but wrongly
    rows = ([row("five fives", 0.95, "four fives", condition="pink6")] * 2 + [row("four fives", 0.95, "four fives", condition="pink6")] * 2
            + [row("five fives", 0.95, "four fives", condition="babble6")] + [row("four fives", 0.1, "four fives", condition="babble6")] * 3)
    top = speech.overall(rows, speech.summarise(rows), "festival", None)
    line = speech.summary_line(top, None, 1.0, None)
    assert "silent errors max 50.0% of calls (festival pink6), 100.0% of calls acted on (festival babble6;" in line


def test_the_end_of_an_utterance_is_known_when_its_block_has_come():
    from companion.listen.sources import CHUNK

    class Span:
        def __init__(self, at):
            self.detected_at = at

    speech_end = 10 * CHUNK + 100
    # the frame that ends it lies 0.2 s after speech, inside a block that ends later
    at = speech_end + int(0.2 * speech.RATE)
    assert at % CHUNK != 0
    arrived = (at // CHUNK + 1) * CHUNK
    assert speech.endpoint_delay([Span(at)], speech_end, 100 * CHUNK) == pytest.approx((arrived - speech_end) / speech.RATE)
    assert speech.endpoint_delay([Span(99 * CHUNK + CHUNK - 10)], speech_end, 100 * CHUNK) is None  # at the file's end


@pytest.mark.parametrize("quick", [True, False])
def test_corpus_chatter_has_no_truth_and_every_call_parses(quick):
    spec = speech_corpus.SetSpec("festival", "festival", None, quick)
    items = speech_corpus.build_items(spec, ["v1", "v2", "v3"])
    assert items == speech_corpus.build_items(spec, ["v1", "v2", "v3"])  # the same every run
    assert len({i.key for i in items}) == len(items)
    chatter = [i for i in items if i.kind == "chatter"]
    calls = [i for i in items if i.kind != "chatter"]
    assert chatter and all(i.truth is None and i.truth_text is None for i in chatter)
    for i in calls:
        assert i.truth == call_to_json(parse_call(i.truth_text, speech_corpus.PLAYERS)), i
    for i in items:
        kind = i.truth["kind"] if i.truth else None
        assert i.expect == ("count" if kind in ("number", "hand") else "calls") or kind in (None, "command")
    assert {i.voice for i in items} == {"v1", "v2", "v3"}
    faces = {i.truth["face"] for i in calls if i.truth["kind"] == "bid"}
    assert faces == set(range(1, 7))
    if not quick:
        counts = {i.truth["value"] for i in calls if i.kind == "count"}
        assert counts == set(range(0, 31))
        bid_counts = {i.truth["count"] for i in calls if i.kind == "bid"}
        assert bid_counts == set(range(1, 31))
        said = {i.say for i in items}
        assert {"make it three aces", "I'll go four fours", "okay I bid nine fives please",
                "um, seven", "Ben calza", "palifico", "take it back", "what's the bid"} <= said
        assert {i.expect for i in chatter} == {"calls", "count"}


def test_chatter_is_new_and_is_never_a_call():
    from training import corpus

    lines = [line for line in speech_corpus.CHATTER.splitlines() if line.strip()]
    assert len(lines) >= 75 and len(set(lines)) == len(lines)
    assert not set(lines) & set(corpus.CHATTER_SENTENCES)
    assert [line for line in lines if parse_call_or_none(line, speech_corpus.PLAYERS)] == []


def test_mix_puts_noise_at_the_asked_snr_over_the_speech():
    from training.augment import speech_power

    rng = np.random.default_rng(0)
    t = np.arange(8000) / 16000
    speech_ = (0.3 * np.sin(2 * np.pi * 220 * t) * (t > 0.1)).astype(np.float32)
    noise = rng.standard_normal(16000 * 5).astype(np.float32)
    out = speech_audio.mix(speech_, noise, 6.0, np.random.default_rng(1))
    lead = int(speech_corpus.LEAD_S * 16000)
    assert out.dtype == np.int16 and len(out) == lead + len(speech_) + int(speech_corpus.TAIL_S * 16000)
    residual = out.astype(np.float64) / 32768
    residual[lead:lead + len(speech_)] -= speech_
    snr = 10 * np.log10(speech_power(speech_) / np.mean(residual ** 2))
    assert snr == pytest.approx(6.0, abs=0.3)
    assert speech_audio.speech_end(speech_) == len(speech_)


def test_real_only_with_no_real_recordings_is_a_clear_message_not_a_table_of_nothing(tmp_path, capsys):
    from benchmarks import speech

    status = speech.main(["--quick", "--real-only", "--real", str(tmp_path / "none"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr()
    assert status == 2 and "no real recordings to hear" in err.out + err.err
