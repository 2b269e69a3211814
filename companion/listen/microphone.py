"""The microphone, half-duplex, behind a small device interface (PortAudio through
sounddevice by default), feeding the same `Listener` as recordings."""

from __future__ import annotations

import math
import queue
import time
from collections import deque
from typing import Callable

import numpy as np

from companion.listen.resampling import SAMPLE_RATE, BlockResampler
from companion.listen.endpoint import EndpointSettings
from companion.listen.engine import Engine
from companion.listen.errors import MicrophoneError
from companion.listen.sources import CHUNK, NAME_PAUSE_S, Listener, pause_allowed, say_on_stderr, to_utterance
from companion.sources import Expect, TypedBeside, Utterance


def _sounddevice():
    try:
        import sounddevice
    except OSError as err:  # PortAudio library missing
        raise MicrophoneError(f"audio input is unavailable: {err} "
                              "(install PortAudio, e.g. apt-get install libportaudio2)") from None
    except ImportError as err:
        raise MicrophoneError(f"sounddevice is not installed ({err})") from None
    return sounddevice


def list_microphones() -> list[tuple[int, str]]:
    sd = _sounddevice()
    try:
        devices = sd.query_devices()
    except Exception as err:  # PortAudio errors are plain Exceptions
        raise MicrophoneError(f"cannot list audio devices: {err}") from None
    return [(i, d["name"]) for i, d in enumerate(devices) if d.get("max_input_channels", 0) > 0]


def check_microphone(device: int | str | None) -> None:
    """MicrophoneError, in plain words and before the speech engine's seconds of loading,
    unless there is a microphone, and `device` (an index or part of a name) names one."""
    found = list_microphones()
    if not found:
        raise MicrophoneError("no microphone found: plug one in, or use --input wav/text")
    listed = "; ".join(f"{i}: {name}" for i, name in found)
    if isinstance(device, int) and device not in {i for i, _ in found}:
        raise MicrophoneError(f"there is no microphone number {device} (the microphones: {listed})")
    if isinstance(device, str):
        try:  # sounddevice's own matching (parts of "name, host API", in order)
            _sounddevice().query_devices(device, "input")
        except ValueError as err:  # none, or several
            several = "ultiple" in str(err)
            raise MicrophoneError(f"{'more than one' if several else 'no'} microphone is named {device!r}"
                                  f"{': give more of its name, or its number' if several else ''} "
                                  f"(the microphones: {listed})") from None
        except Exception:  # PortAudio's own errors: opening the stream will say them
            pass


# How long a player asked for their name has to start saying it before the try counts as
# not heard (the referee asks again, then moves on to the next player)
NAME_WAIT_S = 12.0

# A slow machine (a Raspberry Pi at a table that talks without a break) can hear more slowly
# than the table speaks, and fall further behind for as long as the talk goes on. Once the
# sound being heard is this old, what waits is skipped up to the last KEPT_WHEN_BEHIND_S: a
# call heard later still would answer a moment the table has left, and one said in those last
# seconds is still heard whole. Speech costs several times what a quiet room does to hear, so
# the backlog grows during a call and shrinks after it: a call being heard is skipped only
# once it is SKIPPED_IN_A_CALL_S behind (a skip in it loses it; after it, the backlog of quiet
# is soon worked off).
BEHIND_AT_MOST_S = 3.0
KEPT_WHEN_BEHIND_S = 2.0
SKIPPED_IN_A_CALL_S = 8.0
SKIPS_SAID_EVERY_S = 60.0  # at most one line on stderr a minute about it

BLOCK_WAIT_S = 0.5  # how long one wait for the device's next block lasts before typing is looked at again


class MicSource:
    """The microphone, half-duplex: while muted (the companion speaking) and for a short
    tail after, audio is thrown away so the companion never hears itself."""

    def __init__(self, engine: Engine, device: int | str | None = None,
                 tail_seconds: float = 0.3, settings: EndpointSettings = EndpointSettings(),
                 stalled_after: float = 5.0, open_stream: Callable | None = None,
                 learn_names: bool = True, name_wait: float = NAME_WAIT_S,
                 behind_at_most: float = BEHIND_AT_MOST_S, warn: Callable[[str], None] = say_on_stderr,
                 typed: TypedBeside | None = None):
        self.engine = engine
        self.typed = typed  # calls typed at the terminal meanwhile, taken as they come
        self.learn_names = learn_names  # each player says their name before the game
        self.device = device
        # (callback) -> a started stream with abort() and close(), calling back with each
        # block; PortAudio's by default, anything else in tests.
        self._open_stream = open_stream or self._portaudio_stream
        self.tail_seconds = tail_seconds
        # PortAudio sends a block every 0.1 s while the device is there, quiet room or not;
        # none for this long means the microphone went away (unplugged, taken by another app).
        self.stalled_after = stalled_after
        self.name_wait = name_wait
        self.behind_at_most = behind_at_most
        self._warn = warn
        self._skip_said = -SKIPS_SAID_EVERY_S  # when a skip was last said, and those since
        self._skips, self._skipped = 0, 0.0
        self._learning = False  # the next utterance is a player saying their name
        self.listener = Listener(engine, settings)
        # (arrived, block, sound lost before it, the companion's answering so far: see _behind)
        self._queue: queue.Queue = queue.Queue()
        # Each time the companion answered, [from, until): from its first word until it
        # listened again (its voice, a camera's look between two sentences) and the echo after,
        # never heard. What the table said before it, still waiting to be heard, is heard after.
        self._deaf: deque[list[float]] = deque()
        self._answering: list[float] | None = None  # the open one, while the companion answers
        self._unmuted_at = 0.0
        self._gap = False  # sound was dropped (or lost by the device) before the next block
        self._fed_arrived: float | None = None  # when the last block heard came
        # How long the companion has spent answering in all: a block that waited through an
        # answer is not behind the table by that wait (the table waited for the companion too)
        self._away = 0.0
        self._stream = None
        self._resampler: BlockResampler | None = None  # a device that records at another rate
        # Time spent waiting for a block that did not come, since the last one: a stopped process
        # (Ctrl-Z, a frozen machine) is not a silent microphone, so only the waits count.
        self._waited_for_sound = 0.0
        self.last_latency: float | None = None

    def open(self) -> None:
        if self._stream is not None:
            return
        self._stream = self._open_stream(self.receive)

    def receive(self, arrived: float, block: np.ndarray, lost_before: bool = False) -> None:
        """One block of int16 samples from the device, and when it arrived (monotonic);
        `lost_before`: the device lost sound before it (its buffer overflowed)."""
        self._queue.put((arrived, block, lost_before, self._away))

    def _portaudio_stream(self, receive: Callable[[float, np.ndarray, bool], None]):
        sd = _sounddevice()
        self._resampler = None  # (set again below if this device needs one)
        check_microphone(self.device)

        def callback(indata, frames, when, status):  # runs on PortAudio's thread
            receive(time.monotonic(), indata[:, 0].copy(), bool(getattr(status, "input_overflow", False)))

        def start(rate: int):
            stream = sd.InputStream(samplerate=rate, channels=1, dtype="int16", blocksize=CHUNK * rate // SAMPLE_RATE,
                                    device=self.device, callback=callback)
            stream.start()
            return stream

        try:
            return start(SAMPLE_RATE)
        except Exception as err:
            first = err
        if "-9997" not in str(first) and "sample rate" not in str(first).lower():  # busy, gone...: as it is
            raise MicrophoneError(f"cannot open the microphone {self._name()}: {first}") from None
        # Many USB microphones record only at 44.1 or 48 kHz, and PortAudio opens a bare ALSA
        # device at no other rate: open it at its own and resample to the recogniser's.
        try:
            rate = int(sd.query_devices(self.device, "input")["default_samplerate"])
        except Exception:  # PortAudio errors are plain Exceptions
            rate = SAMPLE_RATE
        if rate == SAMPLE_RATE:
            raise MicrophoneError(f"cannot open the microphone {self._name()}: {first}") from None
        try:
            stream = start(rate)
        except Exception as err:
            raise MicrophoneError(f"cannot open the microphone {self._name()}: {first} (and at its own "
                                  f"{rate} Hz: {err})") from None
        self._resampler = BlockResampler(rate)
        return stream

    def next_utterance(self) -> Utterance | None:
        self.open()
        self._listening_again()
        self._waited_for_sound = min(self._waited_for_sound, BLOCK_WAIT_S)  # the answer was no wait
        asked = time.monotonic()
        # The time a player asked their name has had to say it: the table's sound since, and
        # the waits for it, not the clock, which a stop of the process (Ctrl-Z, then fg) moves
        # on wherever it lands, hearing a block included.
        had_to_say_it = 0.0
        while True:
            typed = self._typed()
            if typed is not None or (self.typed is not None and self.typed.quit):
                return typed
            if (self._learning and not self.listener.endpointer.in_speech
                    and had_to_say_it > self.name_wait):
                # Nobody said the name asked for: a try with nothing heard, so a player away
                # from the table does not keep the game from starting.
                self._learning = False
                return Utterance("", confidence=0.0, origin="mic", voiced=False)  # heard, not typed
            waiting_since = time.monotonic()
            try:
                arrived, block, lost_before, away_before = self._queue.get(timeout=BLOCK_WAIT_S)
                got = True
            except queue.Empty:
                got = False
            waited = time.monotonic() - waiting_since
            # A wait far over its timeout was a stop of the whole process (Ctrl-Z, a freeze):
            # counted as one wait.
            stopped_for = waited - BLOCK_WAIT_S if waited > 2 * BLOCK_WAIT_S else 0.0
            if not got:
                had_to_say_it += waited - stopped_for
                self._waited_for_sound += waited - stopped_for
                if self._waited_for_sound > self.stalled_after:
                    raise MicrophoneError(
                        f"the microphone {self._name()} stopped sending sound for "
                        f"{self.stalled_after:.0f} s: is it still plugged in?") from None
                continue
            self._waited_for_sound = 0.0
            if self._while_speaking(arrived):
                self._gap = True
                continue
            if arrived >= asked:
                had_to_say_it += CHUNK / SAMPLE_RATE
            behind = self._behind(arrived, away_before)
            in_a_call = self.listener.endpointer.in_speech
            if behind > (SKIPPED_IN_A_CALL_S if in_a_call else self.behind_at_most):
                had_to_say_it += self._skip_to_now(behind)
                continue
            if self._gap or lost_before:  # nothing before the gap leads on into this block
                # (how much is missing, where known: the companion's answer, not the device's loss)
                missing = (arrived - self._fed_arrived - CHUNK / SAMPLE_RATE
                           if self._gap and not lost_before and self._fed_arrived is not None else None)
                self._gap = False
                self.listener.gap(missing)
                if self._resampler is not None:
                    self._resampler.reset()
            self._fed_arrived = arrived
            if self._resampler is not None:
                block = self._resampler(block)
                if not len(block):
                    continue
            for heard in self.listener.feed(block):
                self.last_latency = time.monotonic() - arrived
                if heard.result.text:  # nothing in the grammar heard: chatter, ignore it
                    # a name's or a hand's pause was for that utterance (expect sets the next)
                    self.listener.allow_pause(None)
                    self._learning = False
                    # when it ended: one that ended before a question was asked, and waited to
                    # be heard while it was said, is no answer to it (one still open when the
                    # companion began to speak was dropped by the gap its voice made)
                    return to_utterance(heard.result, "mic", ended_at=arrived)

    def _typed(self) -> Utterance | None:
        """A line typed meanwhile; while a name is learnt, none is taken (what is learnt is
        how the player sounds), and one typed is passed over, said on stderr."""
        while self.typed is not None and (typed := self.typed.take()) is not None:
            if not self._learning:
                return typed
            self._warn(f"companion: typed calls are taken once the names are learnt; {typed.text!r} "
                       "was passed over")
        return None

    def _behind(self, arrived: float, away_before: float) -> float:
        """How far behind the table a block is heard: its wait, less the companion's answering
        since it came."""
        return time.monotonic() - arrived - (self._away - away_before)

    def _listening_again(self) -> None:
        """The companion has answered: hearing starts again once the echo of its last word has
        died away."""
        if self._answering is None:
            return
        now = time.monotonic()
        self._away += now - self._answering[0]
        self._answering[1] = max(now, self._unmuted_at + self.tail_seconds)
        self._answering = None

    def _while_speaking(self, arrived: float) -> bool:
        """Did this block arrive while the companion answered, or in the echo after?"""
        while self._deaf and self._deaf[0][1] <= arrived:  # blocks come in order: those are past
            self._deaf.popleft()
        return bool(self._deaf) and self._deaf[0][0] <= arrived

    def _skip_to_now(self, behind: float) -> float:
        """Drop the sound waiting but its last KEPT_WHEN_BEHIND_S (see Listener.gap): the
        seconds of the table's sound dropped."""
        skipped = 0.0
        while not self._queue.empty():  # only this thread takes from the queue
            arrived, _, _, away_before = self._queue.queue[0]
            if self._behind(arrived, away_before) <= KEPT_WHEN_BEHIND_S:
                break
            self._queue.get_nowait()
            if not self._while_speaking(arrived):  # (the companion's own voice was never to be heard)
                skipped += CHUNK / SAMPLE_RATE
        self.listener.gap()
        if self._resampler is not None:
            self._resampler.reset()
        self._skips += 1
        self._skipped += skipped + CHUNK / SAMPLE_RATE
        now = time.monotonic()
        if now - self._skip_said >= SKIPS_SAID_EVERY_S:  # a slow machine falls behind again and again
            self._warn(f"companion: hearing fell {behind:.0f} s behind the table (this machine is slow for "
                       f"it); {self._skipped:.1f} s of sound skipped" + (
                           f" in {self._skips} skips" if self._skips > 1 else ""))
            self._skip_said, self._skips, self._skipped = now, 0, 0.0
        return skipped

    def _name(self) -> str:
        return "(default)" if self.device is None else str(self.device)  # device 0 is a real one

    def expect(self, what: Expect, hand_sizes: frozenset[int] = frozenset()) -> None:
        self.engine.expect(what, hand_sizes)
        self._learning = False
        self.listener.allow_pause(pause_allowed(what, hand_sizes), hand=True)

    def learn_name(self, player: str, phrase: str) -> bool:
        learning = self.learn_names and self.engine.learn_name(player, phrase)
        self.listener.allow_pause(NAME_PAUSE_S if learning else None)
        self._learning = learning
        return learning

    def mute(self) -> None:
        # What waits to be heard from before this moment is the table's, and is heard after
        # the companion has answered; what comes from now until it listens again, and its echo
        # has died away, is not (its voice, and talk during a camera's look between sentences)
        if self._answering is None:
            self._answering = [time.monotonic(), math.inf]
            self._deaf.append(self._answering)

    def unmute(self) -> None:
        self._unmuted_at = time.monotonic()

    def close(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            try:  # an unplugged device can refuse even this; the game is already journalled
                stream.abort()
                stream.close()
            except Exception:  # PortAudio errors are plain Exceptions
                pass
