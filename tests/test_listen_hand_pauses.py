"""A hand read out with pauses between the dice ("Ana ... six, six, one") is heard whole."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from companion.listen.audio import write_wav
from companion.listen.endpoint import EndpointSettings
from companion.listen.pauses import KEEP_S, PauseShortener, shorten_pauses
from companion.listen.recogniser import CallRecogniser
from companion.listen.sources import HAND_PAUSE_S, Listener, WavSource
from companion.sources import Expect
from tests.test_listen_call_end import ScriptedEngine, TalkingRoom, at_rms, say, talking_on
from tests.test_listen_mic import HeardEngine, blocks, mic, put

needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng says the hand")
RATE = 16000


def tone(level: float, seconds: float) -> np.ndarray:
    return level * np.sin(np.arange(int(seconds * RATE)) * 2 * np.pi * 300 / RATE)


def in_room(*parts: np.ndarray, seed: int = 0) -> np.ndarray:
    audio = np.concatenate(parts)
    audio = audio + np.random.default_rng(seed).normal(0, 20, len(audio))
    return np.clip(audio, -32768, 32767).astype(np.int16)


def test_a_pause_is_cut_to_a_tenth_of_a_second_and_the_words_are_kept_whole():
    quiet = np.zeros(int(0.5 * RATE))
    audio = in_room(quiet, tone(3000, 0.3), quiet, tone(6000, 0.3), quiet)
    whole = PauseShortener(floor_db=26.0)(audio)
    # the pause between the tones and the quiet after them cut to KEEP_S; the quiet before
    # the first word (what a name is heard after) and the tones' frames all kept
    assert len(whole) == len(audio) - 2 * int((0.5 - KEEP_S) * RATE)
    assert np.array_equal(whole[:int(0.8 * RATE)], audio[:int(0.8 * RATE)])
    loud = np.abs(whole) > 1000
    assert np.sum(loud) == np.sum(np.abs(audio) > 1000)
    # fed in blocks of any size, the same samples come out
    shortener = PauseShortener(floor_db=26.0)
    pieces = [shortener(audio[i:i + 777]) for i in range(0, len(audio), 777)] + [shortener.rest()]
    assert np.array_equal(np.concatenate(pieces), np.concatenate([whole, audio[len(audio) // 160 * 160:]]))


def test_a_recording_cut_tight_around_its_words_keeps_its_quiet_parts():
    # No room in it: its quietest tenth is a quiet part of a word (20 dB under the rest),
    # which is no pause, however long.
    words = np.concatenate([tone(6000, 0.4), tone(600, 0.3), tone(6000, 0.4)]).astype(np.int16)
    assert len(shorten_pauses(words)) == len(words)
    with_room = in_room(np.zeros(8000), tone(6000, 0.4), np.zeros(8000), tone(6000, 0.4), np.zeros(8000))
    assert len(shorten_pauses(with_room)) == len(with_room) - 2 * int((0.5 - KEEP_S) * RATE)


class VoiceDuring:
    """Stands in for the voice activity model in a quiet room: a voice in the chunks inside
    any of the (start, stop) sample spans, none elsewhere (none in a pause)."""

    def __init__(self, *spans: tuple[int, int]) -> None:
        self.spans, self.at = spans, 0

    def reset(self) -> None:
        self.at = 0

    def probability(self, chunk: np.ndarray) -> float:
        self.at += len(chunk)
        return 0.9 if any(a < self.at <= b for a, b in self.spans) else 0.02


def test_where_a_hand_is_due_the_microphone_waits_out_a_pause_and_hears_it_cut_short():
    def first_heard(expect, sizes):
        engine = HeardEngine()
        source = mic(engine)
        # a quiet room: the model hears the two words, and not the pause between them
        source.listener.endpointer.voice_activity = VoiceDuring((RATE, int(1.4 * RATE)),
                                                                (int(1.9 * RATE), int(2.3 * RATE)))
        source.expect(expect, sizes)
        rng = np.random.default_rng(4)
        put(source, blocks(0, 1.0, rng) + blocks(3000, 0.4, rng) + blocks(0, 0.5, rng)
            + blocks(6000, 0.4, rng) + blocks(0, 1.5, rng), time.monotonic())
        heard = source.next_utterance()
        source.close()
        return heard.text, sum(len(f) for f in engine.fed) / RATE

    # Bidding: the pause ends the first call.
    text, _ = first_heard(Expect.CALLS, frozenset())
    assert text.startswith("level 3")
    # At a reveal where a hand may be said: one utterance, the quiet in it after the first
    # word (the pause, the wait for its end) heard as a tenth of a second each.
    text, fed = first_heard(Expect.COUNT, frozenset({5}))
    assert text.startswith("level 6")
    assert abs(fed - (EndpointSettings().preroll + 0.4 + 0.4 + 2 * KEEP_S)) < 0.06
    # A count said where no hand can be (only a count is due) is ended as in bidding.
    text, _ = first_heard(Expect.COUNT, frozenset())
    assert text.startswith("level 3")


def test_a_recorded_hand_with_pauses_is_one_utterance_where_a_hand_is_due(tmp_path):
    quiet = np.zeros(int(0.6 * RATE))
    write_wav(tmp_path / "hand.wav", in_room(quiet, tone(3000, 0.4), quiet, tone(6000, 0.4), quiet))

    def heard(expect, sizes):
        engine = HeardEngine()
        source = WavSource([tmp_path / "hand.wav"], engine)
        source.expect(expect, sizes)
        return source.next_utterance().text

    assert heard(Expect.CALLS, frozenset()).startswith("level 3")
    assert heard(Expect.COUNT, frozenset({2})).startswith("level 6")


def test_a_recorded_hand_in_a_noisy_room_is_heard_with_its_pause_cut_short(tmp_path):
    # The room only 23 dB under the words: its level is taken from the recording around the
    # hand, as the microphone learns it before a call, so the pause is still found.
    quiet = np.zeros(int(0.6 * RATE))
    room = np.random.default_rng(5).normal(0, 150, int(2.6 * RATE))
    said = np.concatenate([quiet, tone(3000, 0.4), quiet, tone(3000, 0.4), quiet]) + room
    write_wav(tmp_path / "hand.wav", np.clip(said, -32768, 32767).astype(np.int16))
    engine = HeardEngine()
    source = WavSource([tmp_path / "hand.wav"], engine)
    source.expect(Expect.COUNT, frozenset({2}))
    source.next_utterance()
    heard = sum(len(f) for f in engine.fed) / RATE
    assert heard < EndpointSettings().preroll + 0.4 + 0.4 + 3 * KEEP_S  # as said: 0.6 s between the words


def said_word_by_word(text: str, pause: float, tmp_path: Path) -> np.ndarray:
    parts = [np.zeros(9600)]
    for word in text.split():
        x = say(word, tmp_path)
        voiced = np.flatnonzero(np.abs(x) > 0.02 * np.abs(x).max())
        parts += [x[voiced[0]:voiced[-1] + 1] * (12000 / np.abs(x).max()), np.zeros(int(pause * RATE))]
    return in_room(*parts, np.zeros(16000))


@needs_espeak
def test_a_hand_read_out_with_pauses_is_heard_right(tmp_path):
    # The real recogniser and voice activity model: "Ana six six one two three" with half a
    # second between the words. By the endpoint settings alone each word ends an utterance,
    # and the dice are heard as counts ("six", sure); waited out but heard with its pauses,
    # the hand is heard as another player's.
    recogniser = CallRecogniser(("Ana", "Ben", "Cleo"))
    audio = said_word_by_word("Ana six six one two three", 0.5, tmp_path)
    recogniser.expect(Expect.COUNT, frozenset({5}))

    def heard(allow: float | None, shorten: bool):
        listener = Listener(recogniser, EndpointSettings())
        listener.allow_pause(allow, hand=shorten)
        return [s.result for s in listener.recording(audio) if s.result.text]

    calls = heard(HAND_PAUSE_S, True)
    assert [c.text for c in calls] == ["ana six six one two three"] and calls[0].confidence >= 0.2
    assert [c.text for c in heard(HAND_PAUSE_S, False)] != ["ana six six one two three"]
    assert len(heard(None, False)) > 1


@needs_espeak
def test_a_count_the_table_talks_straight_after_is_still_heard_when_it_ends(tmp_path):
    # Where a hand may be said, a sure reading of a call that cannot go on still ends the
    # utterance: a count said at a reveal in a quiet room, a neighbour talking as loud from
    # its end, is not held for the talk's next pause (as with a name's pause, which is).
    recogniser = CallRecogniser(("Ana", "Ben", "Cleo"))
    count = at_rms(say("nine", tmp_path), 4000)
    voiced = np.flatnonzero(np.abs(count) > 0.02 * np.abs(count).max())
    start, end = 32000, 32000 + int(voiced[-1])
    neighbour = at_rms(say("so I was telling him about the weekend and he laughed at the whole story",
                           tmp_path, "en-gb+m3", 170), 4000)
    audio = np.random.default_rng(2).normal(0, 20, end + len(neighbour) + 16000)
    audio[start:start + len(count)] += count
    audio[end:end + len(neighbour)] += neighbour
    audio = np.clip(audio, -32768, 32767).astype(np.int16)
    recogniser.expect(Expect.COUNT, frozenset({5}))

    def first_heard(hand: bool):
        listener = Listener(recogniser, EndpointSettings())
        listener.allow_pause(HAND_PAUSE_S, hand=hand)
        return next(listener.recording(audio))

    heard = first_heard(hand=True)
    assert heard.result.text == "nine" and heard.result.confidence >= 0.7
    assert heard.detected_at <= end + int(0.6 * RATE)
    assert first_heard(hand=False).detected_at > end + RATE


def test_where_a_hand_is_due_a_reading_that_may_go_on_never_ends_the_utterance():
    # "Ana six" read as a sure call that may go on (a hand of fewer dice than the player
    # holds): more dice may follow a pause. While bidding, five such looks end it.
    def first(allow: float | None, hand: bool):
        engine = ScriptedEngine([("", 0.0, False)] * 2 + [("ana six", 0.9, True)] * 40)
        listener = Listener(engine, EndpointSettings())
        listener.endpointer.voice_activity = TalkingRoom()  # loudness judges; the call is read
        listener.allow_pause(allow, hand=hand)
        audio = talking_on()
        return next(listener.recording(audio)), len(audio)

    heard, length = first(HAND_PAUSE_S, True)
    assert heard.detected_at >= length - 1600 and not heard.ended_on_call
    heard, length = first(None, False)
    assert heard.ended_on_call and heard.detected_at < length - RATE


@needs_espeak
def test_a_hand_the_game_s_sizes_read_as_a_count_may_go_on(tmp_path):
    # "Ben four four" from a player holding five: read at the game's size it is a count
    # ("four"), but the whole grammar heard a hand so far, so more may follow.
    recogniser = CallRecogniser(("Ana", "Ben", "Cleo"))
    recogniser.expect(Expect.COUNT, frozenset({5}))
    heard = recogniser.hear(say("Ben four four", tmp_path).astype(np.int16))
    assert heard.text != "ben four four" and heard.may_go_on
    recogniser.expect(Expect.COUNT, frozenset({5}))
    assert not recogniser.hear(say("seven", tmp_path).astype(np.int16)).may_go_on


def test_at_a_reveal_a_count_said_over_the_table_s_talk_still_gets_an_utterance_of_its_own():
    # The table talks for three seconds, then a count far louder than it: where a hand may be
    # said, the louder voice still ends the talk's utterance (as while bidding, unlike a
    # name's pause), and the talk's quieter stretches are not cut as pauses.
    rng = np.random.default_rng(6)
    audio = rng.normal(0, 20, 6 * RATE)
    talk = slice(8000, 4 * RATE + 12800)
    audio[talk] += rng.standard_normal(talk.stop - talk.start) * np.where(
        (np.arange(talk.stop - talk.start) // 1200) % 4 == 3, 100.0, 600.0)
    audio[4 * RATE:4 * RATE + 12800] += tone(12000, 0.8)
    audio = np.clip(audio, -32768, 32767).astype(np.int16)

    def heard(allow: float | None, hand: bool):
        engine = HeardEngine()
        listener = Listener(engine, EndpointSettings())
        listener.endpointer.voice_activity = TalkingRoom()
        listener.allow_pause(allow, hand=hand)
        return [(s.start, s.detected_at) for s in listener.recording(audio)], engine

    spans, engine = heard(HAND_PAUSE_S, True)
    assert len(spans) == 1 and 4 * RATE - 0.6 * RATE <= spans[0][0] <= 4 * RATE
    start, detected_at = spans[0]
    assert sum(len(f) for f in engine.fed) == min(detected_at, len(audio)) - start  # nothing cut
    assert heard(HAND_PAUSE_S, False)[0][0][0] < 4 * RATE - RATE  # a name's pause: one utterance from the talk
