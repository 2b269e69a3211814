"""Speech call sources: WAV files (listed, or named one at a time on standard input) and,
in `microphone.py`, the microphone, through one decode path.

All feed 16 kHz int16 audio in 0.1 s chunks to the same `Listener` (endpointer + engine),
so recorded games replay exactly as they would have been heard live.

Long: the one decode path (the Listener, and decoding a span) stays beside the recordings that
share it with the microphone.
"""

from __future__ import annotations

import math
import sys
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence, TextIO

import numpy as np

from companion.listen import ENGINES
from companion.listen.audio import SAMPLE_RATE, check_wav, read_wav, read_wav_blocks, recorded_nothing, wav_length
from companion.listen.endpoint import (DROPPED_TALK_S, UTTERANCE_GAP_S, EndpointSettings, Endpointer, Segment, spanning,
                                      utterances)
from companion.listen.engine import Engine, Recognition, decode_in_chunks
from companion.listen.errors import AudioFormatError, ModelError
from companion.listen.pauses import PauseShortener, shorten_pauses
from companion.listen.voice_activity import CHUNK as VOICE_CHUNK
from companion.listen.voice_activity import peak as voice_peak
from companion.listen.voice_activity import voice_activity_problem
from companion.sources import Expect, Utterance, files_in

CHUNK = 1600  # 0.1 s
# Quiet that a name said before the game may hold without ending: as much as parts two
# utterances in a short recording (endpoint.utterances).
NAME_PAUSE_S = 0.5
# Quiet a hand said at a reveal may hold without ending: a player reading out their dice
# stops between them ("Ana ... five, five, three"). Where a hand is due, a count (or a yes)
# said in a quiet room is acted on up to this much later; at 0.5 s every espeak-ng hand of
# the development set with half-second pauses was heard as several calls (python -m
# training.hand_pauses_dev).
HAND_PAUSE_S = 0.8


def pause_allowed(what: Expect, hand_sizes: frozenset[int]) -> float | None:
    """The quiet an utterance may hold, where the referee expects `what` (None: as the
    endpoint settings say): a hand is due at a reveal."""
    return HAND_PAUSE_S if what is Expect.COUNT and hand_sizes else None


def make_engine(engine: str = "auto", model: str | Path | None = None,
                players: Sequence[str] = (), announce=None, max_count: int | None = None) -> Engine:
    """Pick and load an engine: Vosk when a Vosk model is given or installed, otherwise the
    bundled call recogniser (speech embedding + call network). `max_count`: the largest
    count to listen for (default: thirty, six players' dice)."""
    from companion.listen.vocabulary import LARGEST_COUNT, MAX_COUNT

    max_count = max_count or MAX_COUNT
    from companion.listen.vosk_engine import VoskEngine, find_model, models_dirs

    if engine not in ENGINES:
        raise ModelError(f"unknown engine {engine!r}: use {', '.join(ENGINES)}")
    model_dir = Path(model) if model else None
    if model_dir is not None and not model_dir.exists():  # a typo: say so, not what else to pass
        raise ModelError(f"--model {model_dir}: no such file or folder (give a Vosk model folder, or a "
                         "network .npz for the bundled recogniser)")
    # A .npz file is a network for the bundled recogniser (one trained by training/),
    # anything else a Vosk model folder.
    network = model_dir if model_dir is not None and model_dir.suffix.lower() == ".npz" else None
    if engine == "bundled" and model_dir is not None and network is None:
        raise ModelError(f"--model {model_dir}: the bundled recogniser takes a network file (.npz, as "
                         "training.train writes one); a Vosk model folder needs --engine vosk or auto")
    if network is not None:
        model_dir = None
        if engine == "vosk":
            raise ModelError(f"{network} is a network for the bundled recogniser, not a Vosk "
                             "model folder")
    if engine == "vosk" or (engine == "auto" and network is None and (model_dir or find_model())):
        model_dir = model_dir or find_model()
        if model_dir is None:
            raise ModelError(f"no Vosk model in {' or '.join(map(str, models_dirs()))}: run 'companion models download' "
                             "or pass --model PATH (or use the bundled engine: --engine bundled)")
        largest = LARGEST_COUNT
        chosen: Engine = VoskEngine(model_dir, players, min(max_count, largest))
        what = f"vosk ({model_dir})"
    else:
        from companion.listen.recogniser import CallRecogniser, RecogniserSettings
        from companion.listen.tokens import LARGEST_TOKEN_NUMBER

        largest = LARGEST_TOKEN_NUMBER  # its network spells numbers only so far
        heard = min(max_count, largest)
        settings = (RecogniserSettings.for_network(network, max_count=heard) if network is not None
                    else RecogniserSettings(max_count=heard))
        chosen = CallRecogniser(players, settings)
        what = "bundled call recogniser (speech embedding + call network" + (
            f" {network})" if network is not None else ")")
    if max_count > largest:  # the table is told how a bigger count is given
        what += (f"; it hears bids and counts up to {largest}: for a bigger count say each "
                 f"player's dice, or let the camera count")
    if announce:
        announce(f"companion: speech engine: {what}")
        deaf = voice_activity_problem()
        if deaf:
            announce(f"companion: warning: {deaf}")
    return chosen


def to_utterance(result: Recognition, origin: str, ended_at: float | None = None) -> Utterance:
    return Utterance(result.text, result.alternatives, result.confidence, origin,
                     result.alternative_scores, result.voiced, ended_at)


@dataclass
class DecodedSpan:
    """One decoded utterance and where it was in the stream (for latency figures)."""

    result: Recognition
    start: int
    end: int
    detected_at: int
    ended_on_call: bool = False  # ended by the call heard in it, not by the endpointer


class Listener:
    """Endpointer + engine over a stream: decodes while speech is going on, so the call is
    known almost as soon as the endpointer says speech has ended. Where the end cannot be
    found (babble through the call, or talk straight after it), an engine that can read the
    utterance so far ends it once the same sure call has been heard a few looks in a row."""

    def __init__(self, engine: Engine, settings: EndpointSettings = EndpointSettings()) -> None:
        self.engine = engine
        self.settings = settings
        self.endpointer = Endpointer(settings)
        self._buffer = np.zeros(0, dtype=np.int16)
        self._buffer_start = 0
        self._fed_to = 0
        self._open = False
        self._heard = 0  # samples of the open utterance the engine has heard (pauses cut short)
        self._looked_at = 0  # ... when it last read the call so far
        self._heard_so_far: list[str] = []
        self._hand_due = False
        self._shortener: PauseShortener | None = None  # of the open utterance

    def allow_pause(self, seconds: float | None, hand: bool = False) -> None:
        """From now on, end an utterance only after `seconds` of quiet (None: as the settings
        say): a player saying their name may pause after it ("Ana ... calza"), and say the
        word after the pause louder than the name, which is no other voice starting.
        `hand`: the pause is a hand's, between the dice: the engine hears it cut short (see
        pauses.PauseShortener), and a sure reading of a call that cannot go on (a count, a
        "yes", a whole hand) still ends the utterance; a name's is never ended so, as a
        reading of the name alone can be sure."""
        self._hand_due = hand and seconds is not None
        if seconds is None:
            self.endpointer.s = self.settings
            return
        voice_hangover = math.ceil(seconds * SAMPLE_RATE / VOICE_CHUNK)
        if hand:
            # Only the voice activity model waits the pause out, in a quiet room: where
            # loudness judges (the room talks) a pause cannot be told from the talk in it, and
            # the louder voice still cuts the talk a count is said over. A pause is quiet, so
            # loudness still ends the call soon where the table talks on after it.
            self.endpointer.s = replace(self.settings, voice_hangover_chunks=voice_hangover,
                                        voice_held_over_quiet=False)
        else:
            # A name may be followed by a louder word ("Ana ... CALZA"), which must not cut it.
            self.endpointer.s = replace(self.settings, hangover=seconds, louder_talker_db=None,
                                        voice_hangover_chunks=voice_hangover,
                                        voice_held_hangover=max(seconds, self.settings.voice_held_hangover),
                                        end_on_call_by_voice=False)

    def reset(self) -> None:
        self.endpointer.reset()
        self._buffer = np.zeros(0, dtype=np.int16)
        self._buffer_start = 0
        self._fed_to = 0
        self._abandon()

    def gap(self, missing: float | None = None) -> None:
        """Sound is missing from here (`missing` seconds of it, where known: skipped when
        hearing fell behind, or the companion spoke): an open utterance, which the gap would
        cut in two, is dropped, and after a gap shorter than a call its rest too; nothing
        before it leads on; the room's level is kept (learnt afresh, it would be learnt from
        the call said next)."""
        if self.endpointer.in_speech:
            self.endpointer.drop(rest_may_follow=missing is not None and missing < DROPPED_TALK_S)
            self._abandon()  # its reading of half a call is not wanted
        else:
            self.endpointer.gap()

    def feed(self, samples: np.ndarray) -> list[DecodedSpan]:
        samples = np.asarray(samples, dtype=np.int16)
        self._buffer = np.concatenate([self._buffer, samples])
        segments = self.endpointer.feed(samples)
        out = []
        for seg in segments:
            if seg.room_talk:  # not heard (see Segment.room_talk)
                self._abandon()
            else:
                out.append(self._close(seg))
        if self.endpointer.in_speech:
            self._stream(self.endpointer.speech_start, self._buffer_start + len(self._buffer))
            if self._call_is_over():
                out.append(replace(self._close(self.endpointer.cut()), ended_on_call=True))
        elif not self._open:
            keep = int(1.0 * SAMPLE_RATE)  # enough history for the pre-roll
            if len(self._buffer) > keep:
                drop = len(self._buffer) - keep
                self._buffer = self._buffer[drop:]
                self._buffer_start += drop
        return out

    def flush(self) -> list[DecodedSpan]:
        return [self._close(s) for s in self.endpointer.flush()]

    def recording(self, samples: np.ndarray | Iterable[np.ndarray]) -> Iterator[DecodedSpan]:
        """Every utterance of a whole recording (its samples, or its blocks of any length as
        `read_wav_blocks` gives them), fed in 0.1 s blocks as the microphone would, then
        closed at its end; each is decoded only when it is asked for."""
        blocks = [samples] if isinstance(samples, np.ndarray) else samples
        carry = np.zeros(0, np.int16)
        for block in blocks:
            data = np.concatenate([carry, block]) if len(carry) else block
            whole = len(data) - len(data) % CHUNK
            for i in range(0, whole, CHUNK):
                yield from self.feed(data[i:i + CHUNK])
            carry = data[whole:]
        if len(carry):
            yield from self.feed(carry)
        yield from self.flush()

    def _call_is_over(self) -> bool:
        """Read the utterance so far every `call_look` seconds (where the voice activity
        model judges its end too, unless `end_on_call_by_voice` is off): the call is over once
        the last readings agree on a sure call."""
        s = self.endpointer.s  # (as allow_pause left them)
        if not (s.end_on_call and self.endpointer.in_speech
                and (self.endpointer.judged_by_loudness or s.end_on_call_by_voice)):
            self._heard_so_far = []
            return False
        # (looks are spaced by what the engine heard: a pause cut short adds none)
        if self._heard - self._looked_at < s.call_look * SAMPLE_RATE:
            return False
        result = self.engine.peek()
        if result is None:
            return False
        self._looked_at = self._heard
        if self._hand_due and result.may_go_on:  # a hand of fewer dice: more may follow a pause
            result = replace(result, text="")
        sure = result.text if result.text and result.confidence >= s.call_sure else ""
        self._heard_so_far.append(sure)
        looks = s.call_looks_open if result.may_go_on else s.call_looks
        recent = self._heard_so_far[-looks:]
        return bool(sure) and len(recent) == looks and len(set(recent)) == 1

    def _stream(self, start: int, upto: int) -> None:
        if not self._open:
            self.engine.start()
            self._open = True
            self._fed_to = max(start, self._buffer_start)
            self._heard = self._looked_at = 0
            self._heard_so_far = []
            # (where the room talks, a pause is no quiet: what is under its level is its talk)
            quiet_room = not self.endpointer.room_talks()
            self._shortener = (PauseShortener(self.endpointer.floor_db, band=self.settings.band)
                               if self._hand_due and quiet_room else None)
        if upto > self._fed_to:
            a, b = self._fed_to - self._buffer_start, upto - self._buffer_start
            samples = self._buffer[a:b]
            if self._shortener is not None:
                samples = self._shortener(samples)
            if len(samples):
                self.engine.feed(samples)
                self._heard += len(samples)
            self._fed_to = upto

    def _abandon(self) -> None:
        """End the engine's open utterance, unread."""
        if self._open:
            self.engine.finish()
            self._open = False

    def _close(self, seg: Segment) -> DecodedSpan:
        # Feed up to a little after the judged end: the decoder wants trailing silence.
        self._stream(seg.start, min(seg.detected_at, self._buffer_start + len(self._buffer)))
        if self._shortener is not None and len(rest := self._shortener.rest()):
            self.engine.feed(rest)
        result = with_voice(self.engine.finish(), seg, self.settings)
        self._open = False
        return DecodedSpan(result, seg.start, seg.end, seg.detected_at)


def decode_span(engine: Engine, samples: np.ndarray,
                settings: EndpointSettings = EndpointSettings(),
                found: Sequence[Segment] | None = None, shorten: bool = False,
                room: np.ndarray | None = None) -> Recognition:
    """Decode one utterance from where the endpointer hears speech start to where it
    judges it ended, as the microphone path would: room noise around a call only gives
    the decoder something to mistake for words. `found`: the endpoint.utterances already
    found in `samples` (taken as one). `shorten`: its pauses cut short, as where a hand is
    due (Listener.allow_pause), the room's level taken from `room` (`around`)."""
    found = utterances(samples, settings) if found is None else found
    if not found:  # no start of speech found (it may start with the file): all of it
        whole = Segment(0, len(samples), len(samples), voice_peak(samples) if settings.use_voice_activity else None)
    else:
        whole = spanning(found)
    said = samples[whole.start:whole.detected_at]
    if shorten:
        said = shorten_pauses(said, room)
    return with_voice(decode_in_chunks(engine, said, CHUNK), whole, settings)


def around(samples: np.ndarray, found: Sequence[Segment]) -> np.ndarray | None:
    """A recording's sound outside the utterances found in it: its room (None: none found)."""
    if not found:
        return None
    outside = np.ones(len(samples), bool)
    for seg in found:
        outside[seg.start:seg.detected_at] = False
    return samples[outside]


def with_voice(result: Recognition, heard: Segment, settings: EndpointSettings) -> Recognition:
    """The result, marked with whether its utterance held a voice (see EndpointSettings.voice_heard)."""
    return replace(result, voiced=heard.voiced(settings))


class WavSource:
    """Utterances from WAV files or folders of them (sorted by name).

    A short file (up to `whole_file_seconds`) is decoded as whole utterances, parted only
    by half a second of quiet (calls said one after another in one file are each heard), or
    a hand's pause where a hand is due (pause_allowed, its pauses cut short as live); a
    longer one is split by the endpointer, like the microphone stream. Either way each
    utterance is decoded only when it is asked for, after the referee has said what it
    expects next.
    """

    def __init__(self, paths: Sequence[str | Path], engine: Engine,
                 whole_file_seconds: float = 8.0,
                 endpoint: EndpointSettings = EndpointSettings(), learn_names: bool = False) -> None:
        self.engine = engine
        self.endpoint = endpoint
        # Recordings of a game are its calls; recordings that begin with the players saying
        # their names are asked for (`play --learn-names`).
        self.learn_names = learn_names
        self.files = expand_paths(paths)
        check_wavs(self.files)
        self.whole_file_seconds = whole_file_seconds
        self._pending: Iterator[Recognition] = iter(())
        self._origin = ""
        self._files = iter(self.files)
        self._learning = False  # the next file is a player saying their name
        self._pause: float | None = None  # the quiet an utterance may hold (pause_allowed)

    def results(self, path: Path) -> Iterator[Recognition]:
        """What was heard in one file, utterance by utterance (chatter included)."""
        if wav_length(path) > self.whole_file_seconds * SAMPLE_RATE:
            # a long recording (a whole evening) is read a block at a time, as the microphone
            # hears it: read whole, an hour at 48 kHz would take gigabytes
            listener = Listener(self.engine, self.endpoint)
            listener.allow_pause(self._pause, hand=True)
            for heard in listener.recording(read_wav_blocks(path)):
                yield heard.result
                listener.allow_pause(self._pause, hand=True)  # as the referee expects now
            return
        samples = read_wav(path)
        if recorded_nothing(samples):
            yield Recognition("", voiced=False)  # decoded, it would be the network's guess at nothing
            return
        if self._learning:
            # The recording of a player saying their name is all of it, a pause after
            # the name ("Ana ... calza") or speech from its first sample included.
            self._learning = False
            yield decode_span(self.engine, samples, self.endpoint, [])
            return
        found = utterances(samples, self.endpoint, max(UTTERANCE_GAP_S, self._pause or 0.0))
        shorten, room = self._pause is not None, around(samples, found)
        if len(found) <= 1:
            yield decode_span(self.engine, samples, self.endpoint, found, shorten, room)
            return
        for one in found:
            yield decode_span(self.engine, samples, self.endpoint, [one], shorten, room)

    def next_utterance(self) -> Utterance | None:
        while True:
            for result in self._pending:
                if result.text:  # chatter (nothing in the grammar) is skipped, as the mic does
                    return to_utterance(result, self._origin)
            path = self._next_file()
            if path is None:
                return None
            self._origin = str(path)
            self._pending = self.results(path)

    def _next_file(self) -> Path | None:
        """The recording to hear next; None when there are no more."""
        return next(self._files, None)

    def expect(self, what: Expect, hand_sizes: frozenset[int] = frozenset()) -> None:
        self.engine.expect(what, hand_sizes)
        self._learning = False
        self._pause = pause_allowed(what, hand_sizes)

    def learn_name(self, player: str, phrase: str) -> bool:
        self._learning = self.learn_names and self.engine.learn_name(player, phrase)
        return self._learning

    def mute(self) -> None:
        pass  # a recording cannot hear the companion speak

    def unmute(self) -> None:
        pass


STDIN = "-"  # `--input wav -`: the recordings' paths come from standard input
PROMPT = "listening>"  # printed when the referee waits for the next path


class PromptedWavSource(WavSource):
    """WAV paths from standard input, one a line, each read only when the referee waits for
    the next utterance, after a PROMPT line on stdout: a program playing the table's part
    reads what the referee said up to the prompt and answers with the recording that fits
    ("say again", "Did you say ...?"), as a fixed list of files cannot. A path that is not
    a readable WAV is reported and the next one read: one bad line does not end a game."""

    def __init__(self, engine: Engine, lines: TextIO | None = None, out: TextIO | None = None,
                 warn: Callable[[str], None] | None = None, whole_file_seconds: float = 8.0,
                 endpoint: EndpointSettings = EndpointSettings(), learn_names: bool = False) -> None:
        super().__init__((), engine, whole_file_seconds, endpoint, learn_names)
        self._lines = lines  # None: sys.stdin, looked up when read (tests swap it)
        self._out = out  # None: sys.stdout, where the referee's lines go too
        self._warn = warn or say_on_stderr
        self._queued: deque[Path] = deque()  # the files of a folder named on one line

    def _next_file(self) -> Path | None:
        while not self._queued:
            print(PROMPT, file=self._out or sys.stdout, flush=True)
            line = (self._lines or sys.stdin).readline()
            if not line:
                return None  # end of input ends the game, as the last file does
            if not line.strip():
                continue
            try:
                self._queued.extend(expand_paths([line.strip()]))
            except AudioFormatError as err:
                self._warn(f"companion: {err}")
        return self._queued.popleft()

    def results(self, path: Path) -> Iterator[Recognition]:
        try:
            yield from super().results(path)
        except AudioFormatError as err:  # read_wav checks the file as check_wav does
            self._warn(f"companion: {err}")



def check_wavs(files: Sequence[Path]) -> None:
    """Every file read_wav would refuse, reported at once from the headers: before the game
    (and before the engine's seconds of loading), not halfway through it."""
    problems = []
    for path in files:
        try:
            check_wav(path)
        except AudioFormatError as err:
            problems.append(str(err))
    if problems:
        raise AudioFormatError("\n".join(problems))


def expand_paths(paths: Sequence[str | Path]) -> list[Path]:
    """The WAV files named, a folder's in name order (numbers by value); every path that
    gives none is reported at once, one line each."""
    files: list[Path] = []
    problems = []
    for p in map(Path, paths):
        try:
            if p.is_dir():
                found = files_in(p, (".wav",))
                if not found:
                    problems.append(f"{p}: no .wav files in this folder")
                files += found
            elif p.is_file():
                files.append(p)
            elif p.exists():  # its header is read twice: a pipe's is gone after the first
                problems.append(f"{p}: a pipe, a device or a socket, not a WAV file")
            else:
                problems.append(f"{p}: no such file or folder")
        except OSError as exc:  # a name too long, a folder that cannot be listed
            problems.append(f"{p}: {exc.strerror or exc}")
    if problems:
        raise AudioFormatError("\n".join(problems))
    return files


def say_on_stderr(line: str) -> None:
    print(line, file=sys.stderr)
