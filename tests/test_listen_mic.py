"""The microphone source with a stand-in stream: half-duplex and a microphone that goes away."""

import queue
import re
import types
import threading
import time

import numpy as np

from companion.listen.engine import Recognition
from companion.listen.errors import MicrophoneError
from companion.listen.microphone import MicSource
from companion.listen.sources import CHUNK
from companion.sources import Expect


class HeardEngine:
    """Stands in for a recogniser: hears whatever it was fed as the loudest block's label."""

    name = "fake"

    def __init__(self):
        self.fed = []

    def expect(self, what, hand_sizes=frozenset()):
        pass

    def start(self):
        self.fed = []

    def feed(self, samples):
        self.fed.append(np.asarray(samples))

    def peek(self):
        return None  # only the endpointer ends an utterance here

    def finish(self):
        audio = np.concatenate(self.fed) if self.fed else np.zeros(0)
        loudest = int(np.abs(audio).max()) if len(audio) else 0
        return Recognition(f"level {loudest}", confidence=0.9)


class LearningEngine(HeardEngine):
    def learn_name(self, player, phrase):
        return True


class Stream:
    closed = False

    def abort(self):
        pass

    def close(self):
        self.closed = True


class UnpluggedStream:
    def abort(self):
        raise Exception("Error stopping stream: Unanticipated host error")  # as PortAudio says it

    close = abort


def blocks(level, seconds, rng):
    """0.1 s blocks of a room (level 0) or a call (a tone of that level)."""
    out = []
    for _ in range(int(seconds * 10)):
        room = rng.normal(0, 20, CHUNK)
        tone = level * np.sin(np.arange(CHUNK) * 2 * np.pi * 300 / 16000)
        out.append(np.clip(room + tone, -32768, 32767).astype(np.int16))
    return out


def mic(engine, stream_class=Stream, **kw):
    # No PortAudio: the test hands the blocks in, as the device's callback would.
    source = MicSource(engine, open_stream=lambda receive: stream_class(), **kw)
    source.open()
    return source


def put(source, audio, start):
    for i, block in enumerate(audio):
        source.receive(start + 0.1 * i, block)


def test_what_is_heard_while_speaking_and_just_after_is_thrown_away():
    rng = np.random.default_rng(0)
    source = mic(HeardEngine())
    source.mute()  # the companion speaks; its own voice reaches the microphone
    put(source, blocks(9000, 0.5, rng), time.monotonic())
    time.sleep(0.5)
    source.unmute()  # ... and what came meanwhile is dropped, with a tail of 0.3 s
    now = time.monotonic()
    put(source, blocks(7000, 0.2, rng), now)  # the echo, inside the tail
    put(source, blocks(0, 1.0, rng) + blocks(3000, 0.6, rng) + blocks(0, 1.0, rng), now + 0.4)
    heard = source.next_utterance()
    # Only the player's call (level 3000) was heard: neither the voice nor its echo.
    assert heard.text.startswith("level ") and 2900 < int(heard.text.split()[1]) < 3200
    assert heard.origin == "mic"


def test_what_the_table_said_before_the_companion_spoke_is_still_heard_after_it():
    """Hearing runs a little behind the table: a call said just before the companion began to
    speak (answering the call before it) is still waiting to be heard when it stops, and is
    heard then, where it used to be thrown away with the companion's own voice."""
    rng = np.random.default_rng(8)
    source = mic(HeardEngine())
    said = time.monotonic() - 1.7  # arrived, not yet heard
    put(source, blocks(0, 0.5, rng) + blocks(3000, 0.6, rng) + blocks(0, 0.6, rng), said)
    spoke = time.monotonic()
    source.mute()
    put(source, blocks(9000, 0.4, rng), time.monotonic())  # the companion's voice
    time.sleep(0.4)
    source.unmute()
    heard = source.next_utterance()
    assert heard.text.startswith("level ") and 2900 < int(heard.text.split()[1]) < 3200
    assert heard.ended_at < spoke  # so it answers no question the companion asked
    # neither the voice nor a call a short answer cut in two is heard: the end of the call
    # after the voice is no call, and is not joined to what was said before it
    time.sleep(1.4)  # (the blocks below arrived a second ago: after the voice above, and its echo)
    put(source, blocks(0, 0.5, rng) + blocks(4500, 0.5, rng), time.monotonic() - 1.0)  # begun before ...
    source.mute()
    put(source, blocks(9000, 0.3, rng), time.monotonic())
    time.sleep(0.3)
    source.unmute()
    listening = time.monotonic()
    put(source, blocks(4000, 0.3, rng) + blocks(0, 1.0, rng) + blocks(5000, 0.6, rng) + blocks(0, 1.0, rng),
        time.monotonic() + source.tail_seconds)  # ... and its end after the voice; then a call
    after = source.next_utterance()
    assert 4900 < int(after.text.split()[1]) < 5300 and after.ended_at > listening  # the call after, and only it


def test_a_long_announcement_is_not_taken_for_hearing_behind_the_table():
    """The sound that waited through an announcement is behind only by the wait before it:
    a call said just before a 4 s announcement is heard after it, with no skip."""
    rng = np.random.default_rng(11)
    warnings = []
    source = mic(HeardEngine(), warn=warnings.append)
    put(source, blocks(0, 0.5, rng) + blocks(3000, 0.6, rng) + blocks(0, 0.6, rng), time.monotonic() - 1.7)
    source.mute()
    time.sleep(4.0)  # "Dudo from Ben on Ana's four fives! Lift the cups and count ..."
    source.unmute()
    assert 2900 < int(source.next_utterance().text.split()[1]) < 3200 and not warnings


def test_a_camera_look_between_two_sentences_is_not_taken_for_hearing_behind():
    """"Lift the cups", the camera looks for 3.5 s, then the count: the companion was answering
    all along. Nothing from then is heard (as before: talk over the camera's look), and the
    wait is not hearing behind the table (it skipped, saying this machine was slow)."""
    rng = np.random.default_rng(13)
    warnings = []
    source = mic(HeardEngine(), warn=warnings.append)
    put(source, blocks(0, 0.5, rng), time.monotonic() - 0.5)
    source.mute()
    source.unmute()  # "Lift the cups ..."
    started = time.monotonic()
    put(source, blocks(0, 1.0, rng) + blocks(7000, 0.5, rng) + blocks(0, 2.0, rng), started)  # talk over the look
    time.sleep(3.5)
    source.mute()
    source.unmute()  # "I see three fours ..."
    put(source, blocks(0, 0.5, rng) + blocks(3000, 0.6, rng) + blocks(0, 1.0, rng),
        time.monotonic() + source.tail_seconds)
    assert 2900 < int(next_within(source).text.split()[1]) < 3200 and not warnings


def test_the_room_is_not_learnt_afresh_from_a_call_said_as_the_companion_stops():
    """A call begun as the echo dies away, while the table was still talking when the companion
    began: the talk cut in two is dropped, the room's level kept, so the call is heard."""
    rng = np.random.default_rng(12)
    source = mic(HeardEngine())
    for block in blocks(0, 2.0, rng):  # the room, heard in time
        source.listener.feed(block)
    put(source, blocks(2500, 0.4, rng), time.monotonic() - 0.35)  # talk, not yet heard
    source.mute()
    put(source, blocks(9000, 1.2, rng), time.monotonic())  # the companion's voice
    time.sleep(1.2)
    source.unmute()
    put(source, blocks(3000, 0.6, rng) + blocks(0, 1.0, rng), time.monotonic() + source.tail_seconds + 0.05)
    heard = next_within(source)
    assert heard is not None and 2900 < int(heard.text.split()[1]) < 3200


def test_hearing_that_falls_behind_the_table_skips_to_now():
    # A slow machine in a talking room: sound waits longer and longer to be heard. Past a few
    # seconds behind, what waits is dropped (said on stderr) and the next call is heard at once.
    rng = np.random.default_rng(4)
    warnings = []
    source = mic(HeardEngine(), warn=warnings.append)
    now = time.monotonic()
    put(source, blocks(0, 0.5, rng) + blocks(5000, 0.6, rng) + blocks(0, 1.0, rng), now - 10)  # long ago
    put(source, blocks(0, 1.0, rng) + blocks(3000, 0.6, rng) + blocks(0, 1.0, rng), now)
    heard = source.next_utterance()
    assert heard.text.startswith("level ") and 2900 < int(heard.text.split()[1]) < 3200  # not the old 5000
    assert len(warnings) == 1 and "fell 10 s behind the table" in warnings[0]
    now = time.monotonic()  # behind again at once: skipped again, but said at most once a minute
    put(source, blocks(0, 0.5, rng), now - 8)
    put(source, blocks(0, 1.0, rng) + blocks(4000, 0.6, rng) + blocks(0, 1.0, rng), now)
    assert 3900 < int(source.next_utterance().text.split()[1]) < 4200 and len(warnings) == 1
    # Only what is older than the last two seconds goes: a call said just now is heard whole.
    warnings.clear()
    source = mic(HeardEngine(), warn=warnings.append)
    for block in blocks(0, 2.0, rng):  # the room heard before it fell behind
        source.listener.feed(block)
    now = time.monotonic()
    put(source, blocks(0, 1.2, rng) + blocks(5000, 0.6, rng) + blocks(0, 1.3, rng), now - 3.1)
    heard = source.next_utterance()
    assert heard.text.startswith("level ") and 4900 < int(heard.text.split()[1]) < 5200
    assert len(warnings) == 1 and "fell 3 s behind" in warnings[0]
    # Nothing from before the gap leads into a call said just after it (a die hitting the table).
    source = mic(HeardEngine(), warn=warnings.append)
    for block in blocks(0, 2.0, rng):
        source.listener.feed(block)
    click = blocks(0, 0.1, rng)[0]
    click[-16:] = 9000
    source.listener.feed(click)
    now = time.monotonic()
    put(source, blocks(0, 1.2, rng), now - 3.3)
    put(source, blocks(3000, 0.6, rng) + blocks(0, 1.0, rng), now - 1.99)
    heard = source.next_utterance()
    assert heard.text.startswith("level ") and 2900 < int(heard.text.split()[1]) < 3200  # not the click's 9000
    # A short call said right after the gap is as long as ever: it lost only its pre-roll.
    source = mic(HeardEngine(), warn=warnings.append)
    for block in blocks(0, 2.0, rng):
        source.listener.feed(block)
    now = time.monotonic()
    put(source, blocks(0, 1.2, rng), now - 3.3)
    put(source, blocks(3000, 0.2, rng) + blocks(0, 1.0, rng), now - 1.99)
    assert 2900 < int(source.next_utterance().text.split()[1]) < 3200


def test_a_call_being_heard_when_hearing_falls_behind_is_heard_to_its_end():
    """Speech costs more to hear than a quiet room, so a slow machine falls behind during a
    call: the call is not skipped (which lost every call on a machine a little too slow), and
    the quiet after it is worked off; a call 8 s behind is let go."""
    rng = np.random.default_rng(9)
    warnings = []
    source = mic(HeardEngine(), warn=warnings.append)
    for block in blocks(0, 2.0, rng):  # the room heard before
        source.listener.feed(block)
    for block in blocks(5000, 0.3, rng):  # a call begun, heard in time
        source.listener.feed(block)
    assert source.listener.endpointer.in_speech
    put(source, blocks(5000, 0.4, rng) + blocks(0, 1.0, rng), time.monotonic() - 4.0)  # its rest, 4 s late
    heard = source.next_utterance()
    assert 4900 < int(heard.text.split()[1]) < 5200 and not warnings
    source = mic(HeardEngine(), warn=warnings.append)
    for block in blocks(0, 2.0, rng) + blocks(5000, 0.3, rng):
        source.listener.feed(block)
    put(source, blocks(5000, 0.4, rng) + blocks(0, 1.0, rng), time.monotonic() - 8.5)  # too late
    put(source, blocks(0, 1.0, rng) + blocks(3000, 0.6, rng) + blocks(0, 1.0, rng), time.monotonic())
    assert 2900 < int(source.next_utterance().text.split()[1]) < 3200 and "fell 9 s behind" in warnings[0]


def test_sound_the_device_lost_is_a_gap_nothing_is_joined_across():
    rng = np.random.default_rng(10)
    source = mic(HeardEngine())
    now = time.monotonic()
    put(source, blocks(0, 1.0, rng) + blocks(5000, 0.3, rng), now - 2.0)  # a call's start ...
    source.receive(now - 0.7, blocks(0, 0.1, rng)[0], lost_before=True)  # ... and sound lost after it
    put(source, blocks(0, 0.5, rng) + blocks(3000, 0.6, rng) + blocks(0, 1.0, rng), now - 0.6)
    assert 2900 < int(source.next_utterance().text.split()[1]) < 3200  # the cut call is not heard


def test_a_name_said_before_the_game_may_hold_a_pause_and_the_game_may_not():
    rng = np.random.default_rng(1)

    def name_with_a_pause():  # "Ana" (level 3000), 0.3 s of quiet, "calza" (level 5000)
        return blocks(3000, 0.4, rng) + blocks(0, 0.3, rng) + blocks(5000, 0.4, rng) + blocks(0, 1.0, rng)

    def levels(source):
        return int(source.next_utterance().text.split()[1])

    source = mic(LearningEngine())
    put(source, blocks(0, 1.0, rng) + name_with_a_pause() + name_with_a_pause(), time.monotonic())
    assert source.learn_name("Ana", "calza")
    assert levels(source) > 4900  # one utterance: the name and what followed the pause
    # After it, a pause ends an utterance again.
    assert levels(source) < 3300 and levels(source) > 4900


def test_a_name_nobody_says_is_a_try_with_nothing_heard_after_a_wait():
    # A player away from the table must not keep the game from starting.
    rng = np.random.default_rng(2)
    source = mic(LearningEngine(), name_wait=0.4)
    put(source, blocks(0, 1.0, rng), time.monotonic() - 1.0)  # the room's sound before the question
    assert source.learn_name("Ana", "calza")
    started = time.monotonic()
    heard = source.next_utterance()
    assert heard.text == "" and heard.voiced is False and time.monotonic() - started >= 0.4
    assert not heard.typed  # a try heard as nothing, never a line trusted as typed
    # In the game, the room's quiet is waited through as long as it lasts.
    source.expect(Expect.CALLS)
    put(source, blocks(0, 1.0, rng) + blocks(3000, 0.6, rng) + blocks(0, 1.0, rng), time.monotonic())
    assert source.next_utterance().text.startswith("level ")


def test_a_microphone_that_stops_sending_sound_is_a_clear_error():
    source = mic(HeardEngine(), stalled_after=0.6)
    outcome = []

    def listen():
        try:
            source.next_utterance()
        except MicrophoneError as err:
            outcome.append(err)

    # In a thread, so a broken watchdog fails the test instead of hanging the suite.
    listening = threading.Thread(target=listen, daemon=True)
    listening.start()
    listening.join(timeout=5.0)
    assert not listening.is_alive(), "no error 5 s after the sound stopped"
    assert len(outcome) == 1 and re.search("stopped sending sound .*still plugged in", str(outcome[0]))


def test_a_stopped_process_is_not_a_microphone_that_stopped():
    # Ctrl-Z for longer than the stall line, then fg: the wait in progress ends long after its
    # timeout, with the device's next block still to come. That is one wait, not a silence.
    source = mic(HeardEngine(), stalled_after=1.2)
    stopped_then_called(source, np.random.default_rng(4), quiet_before=0.5)
    assert source.next_utterance().text.startswith("level ")


def stopped_then_called(source, rng, quiet_before):
    """The process stopped for 2 s in its first wait for sound (Ctrl-Z, then fg), after which
    the device sends the room and a call."""
    real_get = source._queue.get
    stopped = []

    def get(timeout=None):
        if not stopped:
            stopped.append(True)
            time.sleep(2.0)  # the process was stopped here
            put(source, blocks(0, quiet_before, rng) + blocks(3000, 0.6, rng) + blocks(0, 1.0, rng), time.monotonic())
            raise queue.Empty
        return real_get(timeout=timeout)

    source._queue.get = get


def test_a_name_said_after_a_stop_is_heard_as_the_name():
    # Ctrl-Z while a player was asked their name, longer than the wait for it, then fg: the
    # time stopped was no time to say it in
    source = mic(LearningEngine(), name_wait=1.0)
    assert source.learn_name("Ana", "calza")
    stopped_then_called(source, np.random.default_rng(5), quiet_before=0.3)
    heard = source.next_utterance()
    assert heard.text.startswith("level ") and heard.voiced is not False


def test_a_name_said_after_a_stop_while_a_block_was_heard_is_heard_as_the_name():
    # the stop can land while a block of the room is being heard (the voice check on it), not
    # only in a wait for the next block: that time was no time to say the name in either
    rng = np.random.default_rng(5)
    source = mic(LearningEngine(), name_wait=1.0)
    assert source.learn_name("Ana", "calza")
    endpointer = source.listener.endpointer
    real_feed, stopped = endpointer.feed, []

    def feed(samples):
        if not stopped:
            stopped.append(True)
            time.sleep(2.0)  # the process was stopped here
            put(source, blocks(0, 0.3, rng) + blocks(3000, 0.6, rng) + blocks(0, 1.0, rng), time.monotonic())
        return real_feed(samples)

    endpointer.feed = feed
    put(source, blocks(0, 0.1, rng), time.monotonic())  # the room's block heard when it stopped
    heard = source.next_utterance()
    assert heard.text.startswith("level ") and heard.voiced is not False


def test_closing_an_unplugged_microphone_is_quiet():
    opened = []
    source = MicSource(HeardEngine(), open_stream=lambda receive: opened.append(Stream()) or opened[-1])
    source.open()
    source.close()
    assert opened[0].closed
    source.open()  # closed means closed: opening again opens a new stream
    assert len(opened) == 2
    source = mic(HeardEngine(), stream_class=UnpluggedStream)
    source.close()  # PortAudio complains about the vanished device: nothing to tell the players
    source.close()


def test_no_microphone_is_said_before_the_engine_spends_seconds_learning_names(monkeypatch):
    import pytest

    from companion.listen import inputs, microphone

    built = []
    monkeypatch.setattr(microphone, "list_microphones", lambda: [])
    monkeypatch.setattr(inputs, "make_engine", lambda *args: built.append(args))
    with pytest.raises(MicrophoneError, match="no microphone found: plug one in, or use --input wav/text"):
        inputs.open_source("mic", players=["Ana", "Ben"])
    # a --mic that names none of them is said so plainly, listing them, before the engine too
    monkeypatch.setattr(microphone, "list_microphones", lambda: [(1, "USB PnP Sound Device: Audio (hw:1,0)"),
                                                                  (4, "default")])

    def query_devices(device=None, kind=None):  # as sounddevice matches a name
        matches = [n for n in ("USB PnP Sound Device: Audio (hw:1,0), ALSA", "default, ALSA")
                   if all(w.lower() in n.lower() for w in str(device).split())]
        if len(matches) != 1:
            raise ValueError(f"{'Multiple' if matches else 'No'} input devices found for {device!r}")
        return {"name": matches[0]}

    monkeypatch.setattr(microphone, "_sounddevice", lambda: types.SimpleNamespace(query_devices=query_devices))
    microphone.check_microphone("USB PnP Sound Device: Audio (hw:1,0), ALSA")  # its name and host API, whole
    for device, message in (("9", "there is no microphone number 9 (the microphones: 1: USB PnP"),
                            ("0", "there is no microphone number 0"),  # an output, say
                            ("Blue Yeti", "no microphone is named 'Blue Yeti' (the microphones: "),
                            ("ALSA", "more than one microphone is named 'ALSA': give more of its name")):
        with pytest.raises(MicrophoneError, match=re.escape(message)):
            inputs.open_source("mic", players=["Ana", "Ben"], settings=inputs.SpeechSettings(device=device))
    assert not built


def test_a_microphone_that_records_only_at_48_khz_is_opened_there_and_resampled(monkeypatch):
    import types

    from companion.listen import microphone
    from companion.listen.resampling import SAMPLE_RATE, resample
    from companion.listen.sources import CHUNK

    opened = []

    class InputStream:  # as PortAudio opens a USB microphone's bare ALSA device
        def __init__(self, samplerate, blocksize, callback, **kw):
            if samplerate != 48000:
                raise Exception("Error opening InputStream: Invalid sample rate [PaErrorCode -9997]")
            opened.append((samplerate, blocksize))
            self.callback = callback

        def start(self):
            pass

    fake = types.SimpleNamespace(
        InputStream=InputStream,
        query_devices=lambda device=None, kind=None: ({"default_samplerate": 48000.0} if kind else
                                                      [{"name": "USB PnP Sound Device", "max_input_channels": 1}]))
    monkeypatch.setattr(microphone, "_sounddevice", lambda: fake)
    source = MicSource(HeardEngine())
    source.open()
    assert opened == [(48000, 4800)]
    # a tone in 0.1 s blocks at 48 kHz comes out at 16 kHz, as the whole of it resampled, a block late
    t = np.arange(48000 * 6 // 10) / 48000
    tone = (8000 * np.sin(2 * np.pi * 440 * t)).astype(np.int16)
    blocks = [source._resampler(block) for block in tone.reshape(-1, 4800)]
    # each block's samples but the last few (their filter reaches 2 ms into the next block)
    assert CHUNK - 70 <= len(blocks[0]) < CHUNK and all(len(b) == CHUNK for b in blocks[1:])
    out, whole = np.concatenate(blocks), resample(tone, 48000, SAMPLE_RATE)
    assert np.max(np.abs(out.astype(np.float32) - whole[:len(out)])) <= 1.0  # as the whole, resampled at once
    # a quiet room's first 0.1 s is as loud as the rest: the endpointer learns the room from it
    from companion.listen.endpoint import frame_db

    source._resampler.reset()
    room = np.random.default_rng(3).normal(0, 30, 4800 * 5).astype(np.int16)
    heard = [source._resampler(block) for block in room.reshape(-1, 4800)]
    first, rest = np.median(frame_db(heard[0])), np.median(frame_db(np.concatenate(heard[1:])))
    assert abs(first - rest) < 1.5


# --- calls typed at the terminal while the microphone listens ----------------------------------

class Terminal:
    """A pipe standing in for the terminal: `type` writes a line as a player would."""

    def __init__(self):
        import os

        read, self._write = os.pipe()
        self.stream = open(read, encoding="utf-8", errors="surrogateescape")

    def type(self, line: str) -> None:
        import os

        os.write(self._write, line.encode("utf-8") + b"\n")

    def hang_up(self) -> None:  # Ctrl-D, or the terminal closed
        import os

        os.close(self._write)


def typed_beside(terminal, engine=None, **kw):
    from companion.sources import TypedBeside

    return mic(engine or HeardEngine(), typed=TypedBeside(terminal.stream, retry_after=0.05), **kw)


def next_within(source, seconds=5.0):
    """`source.next_utterance()`, failing the test rather than hanging the suite."""
    out = []
    listening = threading.Thread(target=lambda: out.append(source.next_utterance()), daemon=True)
    listening.start()
    listening.join(timeout=seconds)
    assert not listening.is_alive(), f"nothing came within {seconds} s"
    return out[0]


def test_a_call_typed_while_the_microphone_listens_is_taken_as_typed():
    rng = np.random.default_rng(4)
    terminal = Terminal()
    source = typed_beside(terminal)
    put(source, blocks(0, 1.0, rng) + blocks(3000, 0.6, rng) + blocks(0, 1.0, rng), time.monotonic())
    assert next_within(source).origin == "mic"  # the spoken call is heard as before
    terminal.type("  four fives ")
    typed = next_within(source)  # the room is quiet: the typed line comes without any sound
    assert typed.text == "four fives" and typed.typed and typed.confidence is None
    # a comment, a blank line and a line of bytes in no encoding are passed over, as in a typed game
    terminal.type("# Ana's turn")
    terminal.type("")
    import os

    os.write(terminal._write, b"9]\x83,5\n")
    terminal.type("dudo")
    assert next_within(source).text == "dudo"


def test_quit_or_ctrl_d_typed_at_the_microphone_ends_the_input_as_in_a_typed_game():
    rng = np.random.default_rng(5)
    terminal = Terminal()
    source = typed_beside(terminal)
    terminal.type("three twos")
    terminal.type("quit")
    assert next_within(source).text == "three twos"  # what was typed before it is taken first
    assert next_within(source) is None and next_within(source) is None  # the game pauses, saved
    # Ctrl-D (the terminal's end) stops the game too, as it does a typed one; until then the
    # microphone is heard
    terminal = Terminal()
    source = typed_beside(terminal)
    put(source, blocks(0, 1.0, rng) + blocks(3000, 0.6, rng) + blocks(0, 1.0, rng), time.monotonic())
    assert next_within(source).origin == "mic"
    terminal.type("four twos")
    terminal.hang_up()
    assert next_within(source).text == "four twos" and next_within(source) is None


def test_a_terminal_left_non_blocking_is_read_as_a_terminal():
    import os

    terminal = Terminal()
    os.set_blocking(terminal.stream.fileno(), False)  # as an earlier program may leave it
    source = typed_beside(terminal)
    time.sleep(0.2)  # (read non-blocking, its first read would be taken for Ctrl-D)
    terminal.type("five fives")
    assert next_within(source).text == "five fives"


def test_a_call_typed_while_a_name_is_learnt_is_passed_over_and_said_so():
    terminal = Terminal()
    warned = []
    source = typed_beside(terminal, LearningEngine(), name_wait=0.3, warn=warned.append)
    assert source.learn_name("Ana", "calza")
    terminal.type("four fives")
    time.sleep(0.1)
    heard = next_within(source)  # the wait for the name runs out with nothing taken
    assert heard.text == "" and heard.voiced is False
    assert len(warned) == 1 and "'four fives' was passed over" in warned[0]
    source.expect(Expect.CALLS)  # in the game, typing is taken again
    terminal.type("four sixes")
    assert next_within(source).text == "four sixes"


def test_a_game_at_the_microphone_goes_on_by_calls_typed_when_the_room_is_too_loud(tmp_path):
    from test_referee import RecordingSpeaker

    from companion.journal import Journal, resume
    from companion.hearing import HearingPolicy
    from companion.referee import Referee, RefereeSettings
    from companion.rules import Game

    class TooLoud(HeardEngine):
        """Hears every call unsurely, as in a loud room: the referee asks it to be said again."""

        def finish(self):
            return Recognition("two fours", confidence=0.3)

    rng = np.random.default_rng(7)
    terminal = Terminal()
    source = typed_beside(terminal, TooLoud(), learn_names=False)
    game = Game(["Ana", "Ben"])
    journal = Journal.start(tmp_path / "game.jsonl", game)
    speaker = RecordingSpeaker()

    class Speaking(RecordingSpeaker):  # Ana says her bid as the game starts, and types it after "say again"
        def say(self, text):
            speaker.say(text)
            if len(speaker.said) == 1:  # (once the referee hears again: what came while it spoke is dropped)
                threading.Timer(0.2, lambda: put(source, blocks(0, 1.0, rng) + blocks(3000, 0.6, rng) + blocks(
                    0, 1.0, rng), time.monotonic() + source.tail_seconds)).start()
            elif len(speaker.said) == 2:
                for line in ("two fours", "three fours", "dudo", "three", "quit"):
                    terminal.type(line)

    referee = Referee(game, Speaking(), journal, settings=RefereeSettings(HearingPolicy.for_speech()))
    listening = threading.Thread(target=lambda: referee.run(source), daemon=True)
    listening.start()
    listening.join(timeout=20)
    assert not listening.is_alive()
    journal.close()
    assert "say again" in speaker.said[1].lower()  # the spoken bid, heard too unsurely, changed nothing
    # the typed calls were taken as surely as in a typed game: Ana's two fours, Ben's three fours,
    # Ana's dudo, three counted: the bid stood and Ana lost a die
    assert resume(tmp_path / "game.jsonl").game.dice == {"Ana": 4, "Ben": 5}


FAKE_PORTAUDIO = '''"""sounddevice, standing in for PortAudio: one microphone sending a quiet room."""
import threading, time
import numpy as np

def query_devices(device=None, kind=None):
    mic = {"name": "Stand-in microphone", "max_input_channels": 1, "default_samplerate": 16000.0}
    return [mic] if device is None and kind is None else mic

class InputStream:
    def __init__(self, samplerate, channels, dtype, blocksize, device, callback):
        self.callback, self.blocksize, self.stopped = callback, blocksize, False

    def start(self):
        def room():
            noise = np.random.default_rng(0)
            while not self.stopped:
                self.callback(noise.normal(0, 30, (self.blocksize, 1)).astype(np.int16), self.blocksize, None, None)
                time.sleep(0.1)
        threading.Thread(target=room, daemon=True).start()

    def abort(self):
        self.stopped = True

    close = abort
'''


def test_companion_play_at_the_microphone_takes_calls_typed_at_its_terminal(tmp_path):
    """The command line, in a terminal (a pty), with a stand-in PortAudio: calls typed at the
    terminal are taken while the microphone listens, and "quit" stops the game, saved."""
    import os
    import pty
    import select
    import subprocess
    import sys

    from conftest import ROOT

    (tmp_path / "sounddevice.py").write_text(FAKE_PORTAUDIO)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    journal = tmp_path / "game.jsonl"
    terminal, its_end = pty.openpty()
    game = subprocess.Popen([sys.executable, "-m", "companion", "play", "--players", "Ana", "Ben", "--input", "mic",
                             "--no-learn-names", "--mute", "--journal", str(journal)],
                            stdin=its_end, stdout=its_end, stderr=its_end, env=env, cwd=ROOT, start_new_session=True)
    os.close(its_end)
    shown = b""

    def read_until(text: bytes, seconds: float = 90.0) -> None:
        nonlocal shown
        deadline = time.monotonic() + seconds
        while text not in shown:
            assert time.monotonic() < deadline, f"waited for {text!r}; the terminal shows:\n{shown.decode()}"
            if select.select([terminal], [], [], 0.2)[0]:
                try:
                    shown += os.read(terminal, 4096)
                except OSError:  # the game has ended and closed its side
                    break

    try:
        read_until(b"Ana opens")
        assert b"a call can also be typed here" in shown  # said once, as the game starts
        for line, then in ((b"two fours", b"Ben, your call"), (b"three fours", b"Ana, your call"),
                           (b"dudo", b"Lift the cups"), (b"three", b"Ana loses a die"),
                           (b"quit", b"the game is paused")):
            os.write(terminal, line + b"\n")
            read_until(then)
        assert game.wait(timeout=30) == 0
    finally:
        if game.poll() is None:
            game.kill()
        os.close(terminal)
    from companion.journal import load_game

    assert load_game(journal).dice == {"Ana": 4, "Ben": 5}
