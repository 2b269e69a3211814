"""Ending an utterance on the call itself, where loudness cannot find its end (someone
talks on right after it), and the streamed embedding that makes reading it as it grows cheap."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from companion.listen.audio import read_wav
from companion.listen.decoder import CompiledGraph
from companion.listen.embedding import LEAD_IN_SAMPLES
from companion.listen.endpoint import EndpointSettings
from companion.listen.engine import Recognition
from companion.listen.recogniser import TAIL_SAMPLES, CallRecogniser, call_graph, padded
from companion.listen.sources import CHUNK, Listener
from companion.listen.tokens import BLANK, INDEX, TOKENS
from companion.sources import Expect

needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng says the calls")
PLAYERS = ("Ana", "Ben", "Cleo")


def say(text: str, tmp_path: Path, voice: str = "en-us", rate: int = 160) -> np.ndarray:
    wav = tmp_path / "said.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(rate), "-w", str(wav), text], check=True)
    return read_wav(wav).astype(np.float64)


def at_rms(audio: np.ndarray, level: float) -> np.ndarray:
    voiced = audio[np.abs(audio) > 0.05 * np.abs(audio).max()]
    return audio * (level / np.sqrt(np.mean(voiced ** 2)))


class TalkingRoom:
    """Stands in for the voice activity model at a table where people talk all the time:
    everything is speech to it, so loudness judges where an utterance ends."""

    def reset(self) -> None:
        pass

    def probability(self, chunk: np.ndarray) -> float:
        return 0.9


@pytest.fixture(scope="module")
def recogniser():
    return CallRecogniser(PLAYERS)


def listened(engine, audio: np.ndarray, settings: EndpointSettings):
    listener = Listener(engine, settings)
    listener.endpointer.voice_activity = TalkingRoom()
    return list(listener.recording(audio))


@needs_espeak
def test_the_streamed_embedding_is_the_embedding_of_the_whole(recogniser, tmp_path):
    audio = np.concatenate([np.zeros(3000), say("twenty one threes", tmp_path), np.zeros(2000)])
    audio = audio.astype(np.int16)
    stream = recogniser.embedding.stream()
    stream.add(np.zeros(LEAD_IN_SAMPLES, np.int16))
    for i in range(0, len(audio), CHUNK):
        stream.add(audio[i:i + CHUNK])
        whole = recogniser.embedding.embed(padded(audio[:i + CHUNK]))
        assert np.allclose(stream.vectors(TAIL_SAMPLES), whole, atol=1e-3)


@needs_espeak
def test_a_call_someone_talks_right_after_is_heard_when_it_ends(recogniser, tmp_path):
    # A talking room, a call well above it, and a neighbour talking on as soon as it ends:
    # loudness never sees the call end, so without reading the call the utterance runs on
    # through the neighbour's sentence and the call drowns in it.
    rng = np.random.default_rng(5)
    talk = np.concatenate([say("well that was close, who is next, pass me the chips", tmp_path,
                               "en-gb+f3", 190),
                           say("what time is it, we should order pizza tonight", tmp_path,
                               "en-us+m4", 200)])
    room = sum(np.roll(np.resize(talk, 7 * 16000), int(rng.integers(0, 7 * 16000)))
               for _ in range(6))
    audio = at_rms(room, 800)
    call = at_rms(say("nine fives", tmp_path), 6000)
    voiced = np.flatnonzero(np.abs(call) > 0.02 * np.abs(call).max())
    start, end = 16000, 16000 + int(voiced[-1])
    audio[start:start + len(call)] += call
    neighbour = at_rms(say("so I was telling him about the weekend and he laughed at the whole "
                           "story", tmp_path, "en-gb+m3", 170), 2500)
    audio[end:end + len(neighbour)] += neighbour[:len(audio) - end]
    audio = np.clip(audio, -32768, 32767).astype(np.int16)
    recogniser.expect(Expect.CALLS)

    first = listened(recogniser, audio, EndpointSettings())[0]
    assert first.result.text == "nine fives" and first.result.confidence >= 0.7
    assert end <= first.detected_at <= end + int(0.5 * 16000)

    waited = listened(recogniser, audio, EndpointSettings(end_on_call=False))[0]
    assert waited.detected_at > end + 16000  # the neighbour's sentence kept it open


@needs_espeak
def test_a_call_the_table_talks_straight_after_in_a_quiet_room_is_heard_when_it_ends(recogniser, tmp_path):
    # A quiet room, "nine fives", and a neighbour talking as loud from the moment it ends:
    # the voice activity model (the real one here), having heard the call, hears the talk as
    # the caller going on, and loudness cannot part them. Read as it goes, the call ends the
    # utterance; else the call was heard with the talk seconds later, as another call or none.
    call = at_rms(say("nine fives", tmp_path), 4000)
    voiced = np.flatnonzero(np.abs(call) > 0.02 * np.abs(call).max())
    start, end = 32000, 32000 + int(voiced[-1])
    neighbour = at_rms(say("so I was telling him about the weekend and he laughed at the whole "
                           "story", tmp_path, "en-gb+m3", 170), 4000)
    audio = np.random.default_rng(2).normal(0, 20, end + len(neighbour) + 16000)
    audio[start:start + len(call)] += call
    audio[end:end + len(neighbour)] += neighbour
    audio = np.clip(audio, -32768, 32767).astype(np.int16)
    recogniser.expect(Expect.CALLS)

    def first_heard(settings):
        return list(Listener(recogniser, settings).recording(audio))[0]

    heard = first_heard(EndpointSettings())
    assert heard.result.text == "nine fives" and heard.result.confidence >= 0.7
    assert end <= heard.detected_at <= end + int(0.6 * 16000)
    held = first_heard(EndpointSettings(end_on_call_by_voice=False))
    assert held.detected_at > end + 16000


@needs_espeak
def test_a_call_said_over_talk_that_opened_an_utterance_is_heard(recogniser, tmp_path):
    # Two neighbours have been talking for seconds when the call is said over them, and
    # their talk never pauses long enough to end the utterance it opened: heard with the
    # talk before it, the call was heard as no call at all (confidence 0.00).
    talk = [say(line, tmp_path, voice, 180) for line, voice in (
        ("did you see the match last night, it was unbelievable", "en-gb+f3"),
        ("my sister is moving to Leeds next month with the kids", "en-us+m4"))]
    audio = np.zeros(8 * 16000)
    for k, line in enumerate(talk):
        at = 4000 + 3000 * k
        while at < len(audio):
            piece = line[:len(audio) - at]
            audio[at:at + len(piece)] += at_rms(line, 700)[:len(piece)]
            at += len(line) + 2400
    call = at_rms(say("nine fives", tmp_path), 6000)
    start = 3 * 16000
    audio[start:start + len(call)] += call
    audio = np.clip(audio + np.random.default_rng(1).normal(0, 20, len(audio)), -32768, 32767).astype(np.int16)
    recogniser.expect(Expect.CALLS)

    def heard_right(settings):
        return [h for h in listened(recogniser, audio, settings)
                if h.start < start + len(call) and h.end > start
                and h.result.text == "nine fives" and h.result.confidence >= 0.7]

    assert heard_right(EndpointSettings())
    assert not heard_right(EndpointSettings(louder_talker_db=None))


class ScriptedEngine:
    """Reads the utterance so far as the next of a script of (text, confidence, goes on)."""

    name = "scripted"

    def __init__(self, script) -> None:
        self.script, self.looks, self.ended_after = list(script), 0, []

    def expect(self, what, hand_sizes=frozenset()):
        pass

    def start(self):
        self.looks = 0

    def feed(self, samples):
        pass

    def peek(self):
        text, confidence, goes_on = self.script[min(self.looks, len(self.script) - 1)]
        self.looks += 1
        return Recognition(text, confidence=confidence, may_go_on=goes_on)

    def finish(self):
        self.ended_after.append(self.looks)
        return Recognition("")


def talking_on(seconds: float = 4.0) -> np.ndarray:
    """A quiet second, then a voice that goes on: loud all the way to the end."""
    rng = np.random.default_rng(0)
    quiet = rng.normal(0, 30, 16000)
    t = np.arange(int(seconds * 16000))
    loud = 3000 * np.sin(t * 2 * np.pi * 220 / 16000) * (1 + 0.3 * np.sin(t / 900))
    return np.concatenate([quiet, loud + rng.normal(0, 30, len(t))]).astype(np.int16)


def test_the_room_s_talk_a_louder_call_ended_is_not_heard():
    # Talk for three seconds, then a call far louder than it: the talk's utterance ends where
    # the call begins, and is not given to the referee (the room's talk, heard alone, can
    # read as a call); the call's own utterance is.
    rng = np.random.default_rng(6)
    audio = rng.normal(0, 20, 6 * 16000)
    talk = slice(8000, 4 * 16000 + 12800)
    audio[talk] += rng.standard_normal(talk.stop - talk.start) * np.where(
        (np.arange(talk.stop - talk.start) // 1200) % 4 == 3, 100.0, 600.0)
    t = np.arange(12800)
    audio[4 * 16000:4 * 16000 + 12800] += 12000 * np.sin(t * 2 * np.pi * 220 / 16000)
    engine = ScriptedEngine([("", 0.0, False)])
    heard = listened(engine, np.clip(audio, -32768, 32767).astype(np.int16), EndpointSettings())
    assert len(engine.ended_after) == 2  # the talk's stream was ended, and the call's
    assert len(heard) == 1 and 4 * 16000 - 0.6 * 16000 <= heard[0].start <= 4 * 16000


def test_a_name_the_player_may_pause_after_is_not_cut_off_by_a_louder_word_after_the_pause():
    # "Ana ... CALZA": the name said softly, a pause the referee allows, a louder word
    audio = np.random.default_rng(7).normal(0, 20, 4 * 16000)
    t = np.arange(16000)
    audio[8000:19200] += 2000 * np.sin(t[:11200] * 2 * np.pi * 200 / 16000)
    audio[25600:33600] += 6000 * np.sin(t[:8000] * 2 * np.pi * 220 / 16000)
    audio = np.clip(audio, -32768, 32767).astype(np.int16)

    def heard(pause):  # (the louder word would cut the name off as the room's talk)
        engine = ScriptedEngine([("", 0.0, False)])
        listener = Listener(engine, EndpointSettings())
        listener.endpointer.voice_activity = TalkingRoom()
        listener.allow_pause(pause)
        return list(listener.recording(audio))

    assert [h.start < 8000 for h in heard(0.5)] == [True]  # one utterance, from the name on


class HeardBetween:
    """Stands in for the voice activity model in a quiet room: a voice in every chunk from
    sample `start` to `stop` (the model holds on over pauses), none elsewhere."""

    def __init__(self, start: int, stop: int) -> None:
        self.start, self.stop, self.at = start, stop, 0

    def reset(self) -> None:
        self.at = 0

    def probability(self, chunk: np.ndarray) -> float:
        self.at += len(chunk)
        return 0.9 if self.start < self.at <= self.stop else 0.02


def a_name_a_pause_and_a_word_heard(pause: float | None, reading: tuple[str, float]):
    """"Ana ... calza" in a quiet room, the model hearing a voice through the pause after the
    name, heard with `pause` allowed and every look reading the utterance so far as `reading`."""
    audio = np.random.default_rng(8).normal(0, 20, 4 * 16000)
    t = np.arange(16000)
    audio[8000:19200] += 4000 * np.sin(t[:11200] * 2 * np.pi * 200 / 16000)
    audio[25600:33600] += 4000 * np.sin(t[:8000] * 2 * np.pi * 220 / 16000)
    listener = Listener(ScriptedEngine([(*reading, False)]), EndpointSettings())
    listener.endpointer.voice_activity = HeardBetween(8000, 34000)
    listener.allow_pause(pause)
    return list(listener.recording(np.clip(audio, -32768, 32767).astype(np.int16)))


def test_a_name_s_allowed_pause_is_not_ended_by_loudness_while_the_model_hears_through_it():
    # The pause after the name is far under the name, but the referee allows it, so
    # loudness must not end the utterance there either.
    assert len(a_name_a_pause_and_a_word_heard(0.5, ("", 0.0))) == 1
    # a call's own hangover: the name and the word apart
    assert len(a_name_a_pause_and_a_word_heard(None, ("", 0.0))) == 2


def test_a_sure_reading_of_a_name_alone_does_not_end_it_during_its_allowed_pause():
    # A reading of the name alone as a sure call ("one") must not end the utterance before
    # the word after the pause.
    whole = a_name_a_pause_and_a_word_heard(0.5, ("one", 0.95))
    assert len(whole) == 1 and not whole[0].ended_on_call and whole[0].end >= 33000
    # a call's own utterance: the sure reading ends it
    assert a_name_a_pause_and_a_word_heard(None, ("one", 0.95))[0].ended_on_call


@pytest.mark.parametrize("script, looks, ended_after", [
    ([("nine fives", 0.9, False)] * 3, None, 3),
    ([("nine fives", 0.9, False)] * 9, 5, 5),
    # readings that disagree, or are unsure, never end it
    ([("nine fives", 0.9, False), ("nine sixes", 0.9, False)] * 30, None, None),
    ([("nine fives", 0.5, False)] * 60, None, None),
    # a count that a longer count begins with ("twenty" of "twenty four") needs more looks:
    # four of "twenty" do not end it, three of "twenty four" then do; five would have
    ([("twenty", 0.9, True)] * 4 + [("twenty four", 0.9, False)] * 3, None, 7),
    ([("twenty", 0.9, True)] * 9, None, 5),
])
def test_the_same_sure_call_a_few_looks_in_a_row_ends_the_utterance(script, looks, ended_after):
    settings = EndpointSettings(call_looks=looks or EndpointSettings.call_looks)
    engine = ScriptedEngine([("", 0.0, False)] * 2 + script)
    audio = talking_on()
    first = listened(engine, audio, settings)[0]
    if ended_after is None:
        assert first.detected_at >= len(audio) - CHUNK  # open to the end of the recording
    else:
        assert engine.ended_after[0] == 2 + ended_after
        assert first.detected_at < len(audio) - 16000


def test_a_count_a_longer_count_begins_with_may_go_on():
    graph = CompiledGraph(call_graph(Expect.COUNT, 30, named=False))

    def spelt(*words: str) -> np.ndarray:
        frames = []
        for word in words:
            frames += [INDEX[word], INDEX[BLANK]]
        probs = np.full((len(frames) + 2, len(TOKENS)), 1e-4)
        for t, token in enumerate([INDEX[BLANK]] + frames + [INDEX[BLANK]]):
            probs[t, token] = 1.0
        return np.log(probs / probs.sum(axis=1, keepdims=True))

    assert graph.decode(spelt("twenty")).best == "twenty"
    assert graph.decode(spelt("twenty")).goes_on
    assert not graph.decode(spelt("twenty", "four")).goes_on
    assert not graph.decode(spelt("seven")).goes_on


@pytest.mark.parametrize("spelt_at_end, heard", [(0, ""), (1, "seven"), (5, "seven")])
def test_a_call_whose_last_word_is_spelt_at_the_very_end_is_not_said_yet(recogniser, monkeypatch,
                                                                         spelt_at_end, heard):
    # "seven" spelt in the last frame may be the start of "seventeen": not a call yet; with
    # a frame of audio after it, it is.
    from companion.listen.decoder import Decoded

    recogniser.start()
    recogniser.feed(np.zeros(2 * 16000, np.int16))
    windows = recogniser._utterance().windows

    def heard_as_seven(feats):
        decoded = Decoded([("seven", 0.0)], 0.0, len(feats), None, 0.0,
                          last_word_frame=windows - 1 - spelt_at_end)
        return Recognition("seven", confidence=0.9, details={"decoded": decoded})

    monkeypatch.setattr(recogniser, "_heard", heard_as_seven)
    assert recogniser.peek().text == heard
    assert recogniser.finish().text == "seven"  # the end of the utterance settles it
