"""Speakers and announcements: real synthesis, and a clear fallback when there is no voice."""

import io
import os
import sys
import unicodedata
import wave

import numpy as np
import pytest

from companion.calls import check_player_names
from companion.cli import build_parser, make_speaker
from companion.play_settings import PlaySettings
from companion.rules import (
    BadCount, BadSetup, Bid, BidRefusal, CallNotAllowed, ChallengeRefusal, CountRefusal, IllegalBid,
    PhaseRefusal, WrongPhase, get_preset)
from companion.rules.events import BidMade, ChallengeCalled, DieLost, RoundStarted
from companion.rules.presets import FaceChange
from companion.voice.announcements import CountPrompt
from companion.voice.phrases import describe_event, smallest_raises_phrase
from companion.voice.refusals import (
    ACES_OPENINGS, CHALLENGE_REFUSALS, COUNT_REFUSALS, PHASE_REFUSALS, refusal)
from companion.voice.speakers import PrintSpeaker, Speakers, VoiceSpeaker, VoiceUnavailable, WavRecorder, announcer


def test_wav_recorder_writes_each_announcement_as_real_speech(tmp_path):
    path = tmp_path / "out" / "said.wav"
    recorder = WavRecorder(path)
    recorder.say("Dudo!")
    with wave.open(str(path)) as w:
        short = w.getnframes()
    recorder.say("Ben loses a die and has four dice left.")
    with wave.open(str(path)) as w:
        frames = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
        rate = w.getframerate()
    assert len(frames) > short + rate  # the second sentence added more than a second
    assert np.sqrt(np.mean(frames.astype(float) ** 2)) > 300


def test_a_name_of_letters_past_latin_1_is_said_not_spelt_out(tmp_path):
    # espeak-ng spells out a code point it does not know ("Nguyễn": "N G U Y letter one E C
    # five N"); given as the letter and its marks, it says the name as long as "Nguyen"
    lengths = {}
    for name in ("Nguyen", "Nguyễn", "Quynh", "Quỳnh"):
        path = tmp_path / f"{name}.wav"
        WavRecorder(path).say(f"{name}, your call.")
        with wave.open(str(path)) as w:
            lengths[name] = w.getnframes()
    assert lengths["Nguyễn"] < 1.2 * lengths["Nguyen"] and lengths["Quỳnh"] < 1.2 * lengths["Quynh"], lengths


def test_letters_espeak_says_composed_are_given_it_so():
    # decomposed, espeak-ng says José as "Jose" in English and loses Zoë's last vowel
    from companion.rules.names import for_espeak

    assert for_espeak("José, Zoë, Siobhán, Łukasz, Søren") == "José, Zoë, Siobhán, Łukasz, Søren"
    assert for_espeak("Nguyễn") == unicodedata.normalize("NFD", "Nguyễn") != "Nguyễn"
    assert for_espeak(unicodedata.normalize("NFD", "José")) == "José"  # typed decomposed, as some keyboards do


def test_no_voice_gives_one_warning_and_printing(monkeypatch, capsys):
    import pyttsx3

    def broken(*args, **kwargs):
        raise RuntimeError("no espeak here")

    monkeypatch.setattr(pyttsx3, "init", broken)
    args = build_parser().parse_args(["play", "--players", "A", "B", "--input", "text"])
    speaker = make_speaker(PlaySettings.from_args(args))
    err = capsys.readouterr().err
    assert err.count("warning") == 1 and "no text-to-speech voice" in err and "espeak-ng" in err
    speaker.say("Ana: three fours.")
    assert capsys.readouterr().out == "Ana: three fours.\n"


@pytest.mark.parametrize("outputs, voiced", [(0, False), (2, True)])
def test_without_a_speaker_the_voice_is_left_out_with_one_warning(monkeypatch, capsys, outputs, voiced):
    import sounddevice

    monkeypatch.setattr(sounddevice, "query_devices",
                        lambda: [{"name": "mic", "max_input_channels": 1, "max_output_channels": outputs}])
    speakers = announcer(mute=False, warn=lambda line: print(line, file=sys.stderr))
    err = capsys.readouterr().err
    assert any(isinstance(s, VoiceSpeaker) for s in speakers.speakers) is voiced
    if not voiced:
        assert err.count("warning") == 1 and "no audio output (speaker or sound card)" in err


@pytest.fixture
def a_speaker(monkeypatch):
    """A machine with an audio output (this one has none)."""
    import sounddevice

    monkeypatch.setattr(sounddevice, "query_devices",
                        lambda: [{"name": "speaker", "max_input_channels": 0, "max_output_channels": 2}])


def _player(tmp_path, unplugged):
    """A stand-in for aplay that keeps what it is given to play, or fails as aplay does
    without its device while `unplugged` exists."""
    script = tmp_path / "player"
    script.write_text(f"""#!/bin/sh
if [ -e {unplugged} ]; then echo "aplay: main:850: audio open error: No such device" >&2; exit 1; fi
n=$(ls {tmp_path} | grep -c '^played-')
cp "$1" {tmp_path}/played-$n.wav
""")
    script.chmod(0o755)
    return [str(script)]


def test_the_voice_plays_each_sentence_as_real_speech(tmp_path, a_speaker):
    VoiceSpeaker(player=_player(tmp_path, tmp_path / "unplugged")).say("Ben loses a die and has four dice left.")
    with wave.open(str(tmp_path / "played-0.wav")) as w:
        frames = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
        seconds = w.getnframes() / w.getframerate()
    assert seconds > 1.0 and np.sqrt(np.mean(frames.astype(float) ** 2)) > 300


def test_a_speaker_unplugged_mid_game_is_said_once_and_plays_again_when_back(tmp_path, a_speaker):
    unplugged = tmp_path / "unplugged"
    out, warnings = io.StringIO(), []
    speakers = Speakers([PrintSpeaker(out), VoiceSpeaker(player=_player(tmp_path, unplugged))], warnings.append)
    speakers.say("Ana opens.")
    unplugged.touch()
    speakers.say("Ben, your call.")
    speakers.say("Cleo, your call.")
    assert warnings == ["warning: the speaker cannot be played on: aplay: main:850: audio open error: "
                        "No such device; announcements are printed until it plays again."]
    unplugged.unlink()  # plugged back in
    speakers.say("Dudo!")
    assert warnings[-1] == "the speaker plays again." and len(warnings) == 2
    assert out.getvalue() == "Ana opens.\nBen, your call.\nCleo, your call.\nDudo!\n"
    assert sorted(p.name for p in tmp_path.glob("played-*.wav")) == ["played-0.wav", "played-1.wav"]


class _ReaderGone(io.StringIO):
    """Standard output whose reader went away (a `| tee` killed)."""

    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")


def test_printed_lines_lost_leave_the_voice_saying_the_game(tmp_path, a_speaker):
    warnings = []
    speakers = Speakers([PrintSpeaker(_ReaderGone()), VoiceSpeaker(player=_player(tmp_path, tmp_path / "unplugged"))],
                        warnings.append)
    speakers.say("Ana opens.")
    speakers.say("Ben, your call.")
    assert warnings == ["warning: the announcements cannot be printed (Broken pipe); the game goes on aloud."]
    assert sorted(p.name for p in tmp_path.glob("played-*.wav")) == ["played-0.wav", "played-1.wav"]


def test_printed_lines_lost_with_no_voice_stop_the_game():
    from companion.errors import CompanionError

    speakers = Speakers([PrintSpeaker(_ReaderGone())])  # --mute: the printed lines were all the table had
    with pytest.raises(CompanionError, match="cannot be printed"):
        speakers.say("Ana opens.")


def test_without_aplay_the_voice_is_left_out_with_one_warning(monkeypatch, capsys, tmp_path, a_speaker):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing to play a sound with
    speakers = announcer(mute=False, warn=lambda line: print(line, file=sys.stderr))
    err = capsys.readouterr().err
    assert not any(isinstance(s, VoiceSpeaker) for s in speakers.speakers)
    assert err.count("warning") == 1 and "apt-get install alsa-utils" in err


def test_wav_recorder_appends_each_sentence_and_a_resumed_game_goes_on_in_its_file(tmp_path):
    # Each sentence is added at the end, never the file rewritten whole (an evening's
    # game wrote gigabytes so), and the header's sizes always say what is there.
    path = tmp_path / "said.wav"
    recorder = WavRecorder(path)
    recorder.say("Dudo!")
    first = path.read_bytes()
    written = []
    real_open = open

    def spying_open(file, mode="r", *args, **kwargs):
        if str(file) == str(path):
            written.append(mode)
        return real_open(file, mode, *args, **kwargs)

    import builtins
    builtins.open = spying_open
    try:
        recorder.say("Ben loses a die.")
    finally:
        builtins.open = real_open
    assert "wb" not in written and "r+b" in written  # appended in place, not written afresh
    after = path.read_bytes()
    assert after[44:len(first)] == first[44:]  # the first sentence's samples as they were
    with wave.open(str(path)) as w:
        assert w.getnframes() * 2 == len(after) - 44
    # A resumed game keeps what was said before the pause; a new game starts afresh.
    WavRecorder(path, keep=True).say("Resuming the game.")
    kept = path.read_bytes()
    assert kept[:len(after)][44:] == after[44:] and len(kept) > len(after)
    with path.open("ab") as f:  # a power cut after a sentence's frames, before the header was mended
        f.write(np.full(8000, 300, "<i2").tobytes() + b"\x01")  # (and half a frame)
    WavRecorder(path, keep=True).say("Ben, your call.")
    with wave.open(str(path)) as w:
        assert w.readframes(w.getnframes())[len(kept) - 44:].startswith(np.full(8000, 300, "<i2").tobytes())
    WavRecorder(path, keep=True).say("Ana opens.")
    with wave.open(str(path)) as w:
        assert w.getnframes() * 2 == path.stat().st_size - 44 and path.stat().st_size % 2 == 0
    WavRecorder(path).say("Ana opens.")
    assert path.stat().st_size < len(first) + 20000  # a new game's file holds only its own words


def test_a_resumed_game_does_not_append_to_a_wav_in_another_format(tmp_path):
    path = tmp_path / "said.wav"
    with wave.open(str(path), "wb") as w:  # someone's 8 kHz stereo recording
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(bytes(32000))
    warnings = []
    WavRecorder(path, keep=True, warn=warnings.append).say("Ana opens.")
    with wave.open(str(path)) as w:
        assert w.getnchannels() == 1 and w.getframerate() != 8000 and w.getnframes() > 0
    assert len(warnings) == 1 and "start it afresh" in warnings[0]


def test_a_resumed_game_keeps_announcements_an_editor_saved_with_extra_chunks(tmp_path):
    import struct

    path = tmp_path / "said.wav"
    WavRecorder(path).say("Dudo!")
    with wave.open(str(path)) as w:
        params, frames = w.getparams(), w.readframes(w.getnframes())
    info = b"LIST" + struct.pack("<I", 12) + b"INFOISFT" + struct.pack("<I", 0)  # an editor's tag, first
    fmt = path.read_bytes()[12:36]
    body = b"WAVE" + info + fmt + b"data" + struct.pack("<I", len(frames)) + frames
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)
    warnings = []
    WavRecorder(path, keep=True, warn=warnings.append).say("Resuming the game.")
    with wave.open(str(path)) as w:
        assert w.getparams()[:3] == params[:3] and w.readframes(len(frames) // 2) == frames
    assert warnings == []


def test_a_wav_with_a_chunk_after_its_frames_or_resaved_mid_game_keeps_its_announcements(tmp_path):
    import struct

    path = tmp_path / "said.wav"
    recorder = WavRecorder(path)
    recorder.say("Dudo!")
    with wave.open(str(path)) as w:
        frames = w.readframes(w.getnframes())
    tag = b"LIST" + struct.pack("<I", 12) + b"INFOISFT" + struct.pack("<I", 0)
    raw = path.read_bytes() + tag  # an editor's tags after the frames, saved mid-game
    path.write_bytes(raw[:4] + struct.pack("<I", len(raw) - 8) + raw[8:])
    recorder.say("Ben loses a die.")
    with wave.open(str(path)) as w:
        n = w.getnframes()
        both = w.readframes(n)
    assert both.startswith(frames) and b"LIST" not in both and n * 2 == path.stat().st_size - 44
    with path.open("ab") as f:  # a damaged tag whose size runs past the end of the file
        f.write(b"LIST" + struct.pack("<I", 10 ** 6) + b"INFO")
    recorder.say("Cleo, your call.")
    with wave.open(str(path)) as w:
        assert b"LIST" not in w.readframes(w.getnframes())


def test_a_riff_file_that_is_no_wav_is_never_written_over(tmp_path):
    photo = tmp_path / "photo.webp"
    photo.write_bytes(b"RIFF" + bytes(4) + b"WEBPVP8 " + bytes(24))
    with pytest.raises(VoiceUnavailable, match="something other than a WAV"):
        WavRecorder(photo)


def test_a_wav_deleted_or_emptied_mid_game_is_begun_again(tmp_path):
    path = tmp_path / "said.wav"
    recorder = WavRecorder(path)
    recorder.say("Ana opens.")
    path.unlink()
    recorder.say("Ben, your call.")
    with wave.open(str(path)) as w:
        first = w.getnframes()
    assert first > 0
    path.write_bytes(b"")
    recorder.say("Cleo, your call.")
    with wave.open(str(path)) as w:
        assert 0 < w.getnframes() and w.getnframes() * 2 == path.stat().st_size - 44


def test_unwritable_wav_path_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(VoiceUnavailable, match="cannot write announcements.*file is a file, not a folder"):
        WavRecorder(blocker / "said.wav")


def test_a_folder_as_the_wav_path_is_refused_before_the_game(tmp_path):
    with pytest.raises(VoiceUnavailable, match="it is a folder"):
        WavRecorder(tmp_path)


def test_a_wav_write_that_fails_mid_game_is_a_clear_error(tmp_path):
    recorder = WavRecorder(tmp_path / "said.wav")
    recorder.say("Ana opens.")
    (tmp_path / "said.wav").unlink()
    (tmp_path / "said.wav").mkdir()  # the file replaced by a folder: every write now fails
    with pytest.raises(VoiceUnavailable, match="cannot write announcements"):
        recorder.say("Ben, your call.")


def test_print_speaker():
    out = io.StringIO()
    PrintSpeaker(out).say("hello")
    assert out.getvalue() == "hello\n"


@pytest.mark.parametrize("raises, said", [
    ([Bid(9, 6), Bid(10, 2), Bid(10, 3), Bid(10, 4), Bid(10, 5), Bid(5, 1)],
     "nine sixes, ten of any face, or five pacos"),
    ([Bid(3, 5), Bid(3, 6), Bid(4, 2), Bid(4, 3), Bid(4, 4), Bid(2, 1)],
     "three fives, three sixes, four of any face, or two pacos"),
    ([Bid(4, 2), Bid(4, 3), Bid(4, 4), Bid(4, 5), Bid(4, 6), Bid(2, 1)], "four of any face, or two pacos"),
    ([Bid(5, 3)], "five threes"),
    # pacos not wild (a palifico round): the lowest face, in with the others
    ([Bid(3, 4), Bid(3, 5), Bid(3, 6), Bid(4, 1), Bid(4, 2), Bid(4, 3)],
     "three fours, three fives, three sixes, or four of any face, pacos too"),
    ([Bid(15, 5), Bid(15, 6), Bid(8, 1)], "fifteen fives, fifteen sixes, or eight pacos"),  # at the top
    ([], ""),
])
def test_smallest_raises_in_words(raises, said):
    assert smallest_raises_phrase(raises, "pacos") == said


def test_the_count_prompt_asks_a_question_where_aces_are_not_wild():
    rules = get_preset("asmodee")
    assert CountPrompt(3, False, "Ana", 1).sentence(rules) == (
        "How many threes? Pacos are not wild. Say the number, or each player's dice, like Ana 5.")
    assert CountPrompt(3, True, "Ana", 2).sentence(rules) == (
        "How many threes, pacos included? Say the number, or each player's dice, like Ana 5 5.")


def test_event_sentences_use_the_presets_words():
    pressman, asmodee = get_preset("pressman"), get_preset("asmodee")
    assert describe_event(BidMade("Ana", 4, 1, "Ben"), pressman) == "Ana: four aces. Ben, your call."
    challenge = ChallengeCalled("dudo", "Ben", "Ana", 4, 3, False)
    assert "count the threes only, pacos are not wild" in describe_event(challenge, asmodee)
    start = RoundStarted(2, "Ana", {"Ana": 1, "Ben": 3}, "Ana")
    assert describe_event(start, pressman) == ("Round two. Ana opens. Palifico round: "
                                               "aces are not wild and the face stays, except for Ana "
                                               "and a player on one die who has been palifico before.")
    assert describe_event(start, asmodee).endswith(
        "the face stays, except for a player who has been palifico before.")
    assert describe_event(start, get_preset("asmodee-own-round")).endswith(
        "the face stays, except for Ana and a player who has been palifico before.")
    # Each preset's own rule for who may change the face is said, never a blanket "stays".
    assert describe_event(start, get_preset("leaflet")).endswith(
        "jokers are not wild and the face stays, except for Ana.")
    assert describe_event(start, get_preset("leaflet").replace(palifico_face_change=FaceChange.NOBODY)
                          ).endswith("jokers are not wild and the face stays.")
    assert describe_event(start, get_preset("wikipedia")).endswith("the face stays, except for a player on one die.")
    assert "Four dice in play" in describe_event(start, asmodee)
    assert describe_event(DieLost("Ben", 2, 0), asmodee) == "Ben loses two dice and has no dice left."


@pytest.mark.parametrize("error, preset, said", [
    (IllegalBid(Bid(2, 4), BidRefusal.FACE_STAYS, Bid(1, 3), [Bid(2, 3)]), "asmodee",
     "Two fours is not allowed: in a palifico round the face stays threes. After one three: two threes."),
    (IllegalBid(Bid(1, 1), BidRefusal.NO_ACES_OPENING, None, [Bid(1, 2), Bid(1, 3)]), "leaflet",
     "One joker is not allowed: a round cannot open with jokers. To open: one of any face."),
    (IllegalBid(Bid(16, 6), BidRefusal.MORE_THAN_IN_PLAY, Bid(15, 6), [], 15), "asmodee",
     "Sixteen sixes is not allowed: there are only fifteen dice in play. The only call left is dudo."),
    (IllegalBid(Bid(7, 1), BidRefusal.MORE_THAN_IN_PLAY, Bid(6, 1), [], 6, calza_open=True), "asmodee",
     "Seven pacos is not allowed: there are only six dice in play. The only calls left are dudo and calza."),
    (CallNotAllowed("calza", "Ben", ChallengeRefusal.CALZA_TOO_FEW_PLAYERS, players_left=2), "asmodee",
     "Calza is not allowed with two players left."),
    (CallNotAllowed("calza", "Ben", ChallengeRefusal.CALZA_NOT_PLAYED), "pressman",
     "Calza is not played under the pressman rules."),
    (BadCount(CountRefusal.WRONG_NUMBER_OF_DICE, player="Ben", said=2, actual=1), "asmodee",
     "Ben has one die, not two."),
    (BadCount(CountRefusal.HANDS_DISAGREE, said=3, actual=6), "asmodee", "Those dice make six, not three."),
    (WrongPhase(PhaseRefusal.GAME_OVER, "Cleo"), "asmodee", "The game is over; Cleo won."),
])
def test_refusals_are_worded_from_the_errors_data(error, preset, said):
    assert refusal(error, get_preset(preset)) == said


def test_every_refusal_reason_has_words():
    assert set(CHALLENGE_REFUSALS) == set(ChallengeRefusal)
    assert set(COUNT_REFUSALS) == set(CountRefusal)
    assert set(PHASE_REFUSALS) == set(PhaseRefusal)
    assert set(ACES_OPENINGS) | {BidRefusal.MORE_THAN_IN_PLAY, BidRefusal.MORE_THAN_THE_PLAYERS_HOLD,
                                 BidRefusal.NOT_A_RAISE, BidRefusal.FACE_STAYS} == set(BidRefusal)


@pytest.mark.parametrize("name", ["Five", "dudo", "Ana Maria", "calza", "42", "", "Paco", "Ace", "Joker", "Spot",
                                  "Spoton", "Doubtit", "Spot-On"])
def test_names_that_sound_like_calls_are_refused(name):
    with pytest.raises(BadSetup):
        check_player_names(["Ana", name])


@pytest.mark.parametrize("name", ["Help", "Quit", "exit", "Stop", "End", "Bye"])
def test_names_the_typed_input_answers_alone_are_refused(name):
    with pytest.raises(BadSetup, match="asks the referee for help or to stop"):
        check_player_names(["Ana", name])


def test_a_name_that_said_aloud_is_another_players_call_is_refused():
    with pytest.raises(BadSetup, match="'Ben-Calza' said aloud is a call \\('ben calza'\\)"):
        check_player_names(["Ana", "Ben", "Ben-Calza"])
    check_player_names(["Ana", "Bob", "Ben-Calza"])  # without a Ben it is only a name


def test_a_name_holding_another_players_name_is_refused():
    with pytest.raises(BadSetup, match="'Ana-Ben' holds another player's name, Ana"):
        check_player_names(["Ana", "Ben", "Ana-Ben"])  # "Ana Ben calza": whose?
    with pytest.raises(BadSetup, match="holds another player's name, Luc"):
        check_player_names(["Jean-Luc", "Luc"])
    check_player_names(["Ana", "Anabel", "Jean-Luc", "Jean-Marc"])  # words, not letters, count


def test_a_name_in_another_script_is_refused_with_what_is_allowed():
    with pytest.raises(BadSetup, match="Latin letters"):
        check_player_names(["Ana", "Иван"])


def test_ordinary_names_are_fine():
    check_player_names(["Ana", "Ben", "Cleo", "Jean-Luc", "O'Neil", "José", "Zoë", "Ji-Won", "So-Yeon",
                        "Łukasz", "Strauß"])


def test_the_voice_drivers_file_chatter_never_reaches_the_announcements():
    import io

    from companion.voice.speakers import _WithoutDriverChatter

    out = io.StringIO()
    filtered = _WithoutDriverChatter(out)
    print("Ana: three fours. Ben, your call.", file=filtered)
    print("Audio saved to /tmp/companion-voice-x/part-1-0.wav", file=filtered)  # from the driver's thread
    print("", file=filtered)
    print("Ben: four fours.", file=filtered)
    assert out.getvalue() == "Ana: three fours. Ben, your call.\n\nBen: four fours.\n"
    assert filtered.getvalue() == out.getvalue()  # the rest of the stream's interface is the stream's


def test_a_closed_standard_output_stays_closed_when_the_voice_starts(monkeypatch):
    import sys

    from companion.voice import speakers

    monkeypatch.setattr(sys, "stdout", None)  # started with stdout closed (>&-, pythonw)
    try:
        speakers._start_pyttsx3(None)
    except speakers.VoiceUnavailable:
        pass  # no voice here is fine: the point is what became of stdout
    assert sys.stdout is None


def test_a_voice_or_wav_file_failing_mid_game_is_dropped_with_one_warning(tmp_path, capsys):
    from companion.voice.speakers import Speakers

    class Failing:
        def __init__(self):
            self.said = 0

        def say(self, text):
            self.said += 1
            if self.said > 1:
                raise RuntimeError("espeak: Synth failed")  # as pyttsx3's driver raises it

    warnings, voice = [], Failing()
    speakers = Speakers([PrintSpeaker(), voice], warnings.append)
    for line in ("Ana opens.", "Ben, your call.", "Cleo, your call."):
        speakers.say(line)
    assert capsys.readouterr().out.splitlines() == ["Ana opens.", "Ben, your call.", "Cleo, your call."]
    assert voice.said == 2 and len(warnings) == 1 and "Synth failed" in warnings[0]
    assert "the game goes on without it" in warnings[0]


def test_without_pyttsx3_the_warning_says_to_install_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyttsx3", None)  # an import of it now fails
    speakers = announcer(mute=False, warn=lambda line: print(line, file=sys.stderr))
    err = capsys.readouterr().err
    assert len(speakers.speakers) == 1 and err.count("warning") == 1 and "pip install pyttsx3" in err


def test_a_sentence_the_companion_was_stopped_in_is_not_taken_for_a_speaker_that_hangs(tmp_path):
    # Ctrl-Z while the referee speaks, fg two seconds later: the time it was stopped is no
    # time the speaker hung (the sentence was cut off with "the speaker stopped playing")
    import subprocess

    from conftest import ROOT

    player = tmp_path / "player"  # stops the companion for 2 s, then plays on for half a second
    player.write_text(f"#!/bin/sh\n(sleep 2; kill -CONT $PPID) &\nkill -STOP $PPID\nsleep 2.5\n"
                      f"cp \"$1\" {tmp_path}/played.wav\n")
    player.chmod(0o755)
    game = ("import sys, sounddevice\n"
            "sounddevice.query_devices = lambda: [{'name': 'speaker', 'max_input_channels': 0, "
            "'max_output_channels': 2}]\n"
            "from companion.voice.speakers import Speakers, VoiceSpeaker\n"
            "VoiceSpeaker.PLAYER_GRACE = 0.5\n"
            "warnings = []\n"
            "Speakers([VoiceSpeaker(player=[sys.argv[1]])], warnings.append).say('Dudo!')\n"
            "print(warnings)\n")
    said = subprocess.run([sys.executable, "-c", game, str(player)], capture_output=True, text=True, cwd=ROOT,
                          timeout=60)
    assert said.stdout == "[]\n", said.stdout + said.stderr
    assert (tmp_path / "played.wav").exists()


def test_a_game_stopped_mid_sentence_leaves_no_player_behind(tmp_path, a_speaker):
    # a service manager's stop (SIGTERM: raised as KeyboardInterrupt by the game) while a
    # sentence plays: the player goes too, not left playing to an empty room
    import signal

    pid_file = tmp_path / "player.pid"
    player = tmp_path / "player"
    player.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 30\n")
    player.chmod(0o755)

    def stop(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            VoiceSpeaker(player=[str(player)]).say("Ben loses a die and has four dice left.")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_speaker_that_hangs_is_given_up_on_for_that_sentence_only(tmp_path, a_speaker, monkeypatch):
    hangs = tmp_path / "hangs"
    hangs.touch()
    script = tmp_path / "player"
    script.write_text(f"#!/bin/sh\nif [ -e {hangs} ]; then sleep 30; fi\ncp \"$1\" {tmp_path}/played.wav\n")
    script.chmod(0o755)
    monkeypatch.setattr(VoiceSpeaker, "PLAYER_GRACE", 0.5)
    warnings = []
    speakers = Speakers([VoiceSpeaker(player=[str(script)])], warnings.append)
    speakers.say("Dudo!")
    assert warnings == ["warning: the speaker stopped playing mid-sentence; announcements are printed "
                        "until it plays again."]
    hangs.unlink()
    speakers.say("Ben loses a die.")
    assert warnings[-1] == "the speaker plays again." and (tmp_path / "played.wav").exists()


def test_a_sentence_the_disk_has_no_room_for_is_cut_off_not_left_half_written(tmp_path):
    # A half-written sentence past the header's sizes would take the room the journal needs next.
    from conftest import disk_full_past

    from companion.voice.speakers import _append_wav

    path = tmp_path / "said.wav"
    WavRecorder(path).say("Dudo!")
    before = path.read_bytes()
    with disk_full_past(len(before) + 3000), pytest.raises(OSError):
        _append_wav(path, bytes(20000))  # a sentence of 20 kB
    assert path.read_bytes() == before  # as it was before the sentence: whole, and no bigger


@pytest.mark.parametrize("device", ["/dev/null", "/dev/full"])
def test_announcements_into_a_device_are_refused_at_once(device):
    with pytest.raises(VoiceUnavailable, match="not a file but a device or a pipe"):
        WavRecorder(device)


def test_speakers_leave_no_folder_to_the_garbage_collector(tmp_path):
    # Under `python -X dev` (or -W error), a TemporaryDirectory cleaned up at exit is an
    # "Exception ignored ... ResourceWarning" on the table's terminal.
    import subprocess

    script = ("import sys; from pathlib import Path; from companion.voice.speakers import WavRecorder, PlayerVoice; "
              "WavRecorder(Path(sys.argv[1])).say('Dudo!'); PlayerVoice('en-us').record('two fives', Path(sys.argv[2]))")
    result = subprocess.run([sys.executable, "-X", "dev", "-c", script, str(tmp_path / "said.wav"),
                             str(tmp_path / "call.wav")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "ResourceWarning" not in result.stderr, result.stderr
    assert (tmp_path / "said.wav").stat().st_size > 1000 and (tmp_path / "call.wav").stat().st_size > 1000
