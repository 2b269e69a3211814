"""Endpointing: where speech starts and ends in a continuous stream.

Two ways of telling speech from the room, chosen by what the room sounds like:
- Loudness against an adaptive noise floor, in 10 ms frames. It copes with a table of
  people talking (the caller is louder than the chatter around), but steady noise (a fan,
  pink noise) swings its 10 ms levels by several dB and hides quiet syllables.
- A voice activity model (Silero), in 32 ms chunks. It hears a voice through steady noise,
  but background talk is speech to it too, so an utterance would never end in chatter.
While the room between calls does not sound like speech to the model, utterances start and
end by the model; once it does (babble), by loudness. Speech ends after `hangover` of quiet;
that hangover is most of the latency from the end of speech to a known call, so it is kept
short (calls have no long pauses inside). The model, having heard a call, hears talk after
it as the same voice, so loudness far under the call ends an utterance the model judges too.
A voice far louder than the talk that opened an utterance (a call said over a table that
talks on) ends that utterance (unheard, where the room is known to talk) and opens its own.

Long: the two ways, the room's level and the gaps in the sound share one frame loop, which
split would have to pass every frame's state between its parts.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from companion.listen.voice_activity import CHUNK, VoiceActivity, default_voice_activity

FRAME = 160  # 10 ms at 16 kHz
# Chunks before an utterance's start that count as its onset for its voice peak: the
# pre-roll and the lead back to the first loud part (about 0.35 s).
ONSET_CHUNKS = 12


@dataclass(frozen=True)
class EndpointSettings:
    start_db: float = 7.0  # above the noise floor to count as speech
    stop_db: float = 4.0  # below this above the floor counts as quiet again
    start_frames: int = 4  # loud frames (of the last 6) needed to start an utterance
    hangover: float = 0.2  # seconds of quiet that end an utterance
    preroll: float = 0.25  # seconds kept before the detected start (soft onsets)
    # Shorter bursts (a die hitting the table) are dropped. In babble a short word ("one",
    # "six") stands over the room's level for little longer than that: at 0.15 s the
    # development set (python -m training.endpoint_dev) missed 31% of its calls at 6 dB and
    # 3% at 12 dB, at 0.05 s 15% and none. A click kept is heard as no call (voice_heard).
    min_speech: float = 0.05
    max_utterance: float = 8.0  # force an end: nobody says a call for this long
    floor_db: float = 30.0  # initial guess of the noise floor (dB re 1 LSB)
    floor_fall: float = 0.05  # how fast the floor follows quieter frames (per 10 ms frame)
    floor_rise: float = 0.05  # ... and louder ones, outside speech: the mean noise level,
    # not its minimum, or babble peaks keep an utterance open long after the call
    # Measure loudness only in this band (Hz), e.g. (300, 3400)? Off: it steadies pink
    # noise's level less well than the voice activity model hears through it, and it keeps
    # utterances open in babble.
    band: tuple[float, float] | None = None
    voice_on: float = 0.7  # chunk speech probability that counts as voiced
    voice_off: float = 0.6  # ... and below which a chunk counts as quiet
    voice_start_chunks: int = 2  # voiced chunks (of the last 3) that start an utterance
    voice_hangover_chunks: int = 4  # quiet chunks (32 ms each) that end one
    # Having heard a call, the model hears talk that follows it as the caller going on, even
    # talk it took for no voice before the call: the utterance would run on to the talk's
    # next pause. So loudness ends one the model judges too, once it has stayed
    # `voice_held_below_peak_db` under the utterance's loudest level held for 50 ms (a slam
    # is not it) for `voice_held_hangover` seconds (longer than the pauses inside the
    # development set's calls; None: never). On the development set (`python -m
    # training.endpoint_dev`) it found the end of 97% of calls in 18 dB babble where 77% were
    # found without it, and cut no more calls short, clean or in noise: at 0.2 s it cut long
    # calls at a pause, and 12 dB cut more calls short clean and in pink noise.
    voice_held_below_peak_db: float | None = 14.0
    voice_held_hangover: float = 0.3
    # Quiet (under the floor + stop_db) neither ends nor resets that run: where a player may
    # pause inside a call (a hand read out), the allowed pause judges the quiet, and only
    # quieter sound (the table's talk) ends the call by loudness.
    voice_held_over_quiet: bool = True
    room_talking: float = 0.3  # mean speech probability between calls above which the room
    # counts as talking, and loudness takes over (babble reads as speech to the model)
    room_learn_chunks: int = 10  # chunks at the start of a stream that give the first mean
    room_rise: float = 0.3  # how fast that mean follows talk in the room (per chunk):
    room_fall: float = 0.03  # quickly up, slowly down, so a lull in the chatter is not quiet
    room_delay_chunks: int = 8  # chunks a probability waits before it counts for the room,
    # so the onset of a call is not taken for the room talking before the call has started
    # Where loudness judges the end, a frame also counts as quiet `stop_below_peak_db` under
    # the utterance's loudest: babble's peaks keep rising `stop_db` over its mean (the
    # floor), but a caller stands far above them. On calls in training voices with the
    # training babble (`python -m training.endpoint_dev`) it found the end of 99% of calls
    # at 24 dB (91% without) and 82% at 18 dB (72%), cutting no more calls short; 15 dB cut
    # 4 to 7 points more short.
    stop_below_peak_db: float | None = 20.0
    # An utterance the room's talk opened runs on into a call said over it (a talking room
    # is rarely quiet long enough to end it), and the recogniser, hearing the talk before
    # the call, hears no call at all. So once an utterance has gone on for
    # `louder_talker_after` seconds, a voice that starts `louder_talker_db` over its loudest
    # so far (the caller, nearer than the room) ends it there, as the room's talk, not heard,
    # where the room is known to talk, and opens an utterance of its own, which loudness
    # judges (None: never).
    louder_talker_db: float | None = 8.0
    louder_talker_after: float = 1.0
    use_voice_activity: bool = True  # False: loudness alone
    # Where loudness judges the end (the room talking), the recogniser's reading of the
    # utterance so far may end it first (see sources.Listener): every `call_look` seconds
    # of speech it is read as if it ended there, and once `call_looks` readings in a row
    # hear the same call at `call_sure` or more, the call is over. A call that a longer one
    # begins with ("twenty" of "twenty four") needs `call_looks_open` readings.
    call_look: float = 0.1
    call_looks: int = 3
    call_looks_open: int = 5
    call_sure: float = 0.8
    end_on_call: bool = True
    # ... and where the voice activity model judges the end: having heard a call, it hears
    # the table's talk straight after it ("dudo!", and everyone talks) as the caller going
    # on, and the call would be heard with that talk, as no call, seconds later.
    end_on_call_by_voice: bool = True
    # An utterance no 32 ms chunk of which the voice activity model gives this chance of
    # speech held no voice: a beep, a clatter, a tone loud enough to open an utterance. The
    # recogniser still hears a call in it (a pure tone can read as "four" at 0.95), so it is
    # no call (hearing.decide). The benchmark's calls peak at 0.78 or more, clean or in
    # noise, and 1,497 of the 1,500 real digits of speech-real-dev at 0.5 or more; tones from
    # 440 Hz up peak under 0.5, but one at a voice's pitch (220 Hz) can read as a voice.
    voice_heard: float = 0.5


@dataclass(frozen=True)
class Segment:
    start: int  # sample index (including pre-roll)
    end: int  # sample index where speech was judged to end (before the hangover)
    detected_at: int  # sample index at which the end was known (end + hangover)
    # The highest chance of speech the voice activity model gave a chunk of it, its onset
    # included (None: no model).
    voice_peak: float | None = None
    # The room's talk, ended where a louder voice began (EndpointSettings.louder_talker_db):
    # not heard, as no call is in it; a room's talk, heard alone, can read as a call.
    room_talk: bool = False

    def voiced(self, settings: EndpointSettings) -> bool | None:
        """Did it hold a voice (None: not known, without the voice activity model)?"""
        return None if self.voice_peak is None else self.voice_peak >= settings.voice_heard


RECENT_FRAMES = 6  # the frames an utterance starts on (start_frames of them loud)
SUSTAINED_FRAMES = 5  # a level held this long is a voice's, not a die or a cup hitting the table
LOUD_LEAD_FRAMES = 5  # frames before those that found it loud, back to its first loud part
FLOOR_FRAMES = 10  # the frames a stream's start gives the room's level from
# After an utterance dropped for a short gap in it, the most of its rest waited out before an
# utterance may open again (the end of a call cut by a short "Sorry, say again?" is no call;
# after a longer gap the talk is most likely over, and a call said then must be heard)
DROPPED_TALK_S = 1.0
STARTS_ON_A_WORD_DB = 20.0  # a recording's start this far over its quietest tenth is a word (before_recording)


def frame_db(samples: np.ndarray, band: tuple[float, float] | None = None) -> np.ndarray:
    """Level of each 10 ms frame in dB; with `band` (Hz), only of that band (speech lives
    in 300-3400 Hz, while rumble, pink noise and hum put most of their energy lower)."""
    n = len(samples) // FRAME
    frames = np.asarray(samples[: n * FRAME], dtype=np.float64).reshape(n, FRAME)
    if band is None or n == 0:
        return 10 * np.log10(np.mean(frames ** 2, axis=1) + 1.0)
    spectrum = np.abs(np.fft.rfft(frames * _WINDOW, axis=1)) ** 2
    lo, hi = (int(round(f * FRAME / 16000)) for f in band)
    # In the units of the full-band level: white noise reads 10 log10(3100/8000) = 4 dB less.
    power = np.sum(spectrum[:, lo:hi + 1], axis=1) * 2 / (FRAME * np.sum(_WINDOW ** 2))
    return 10 * np.log10(power + 1.0)


_WINDOW = np.hanning(FRAME)


class Endpointer:
    """Feed samples in any chunk size; collect finished segments from `feed`'s return."""

    def __init__(self, settings: EndpointSettings = EndpointSettings(),
                 voice_activity: VoiceActivity | None = None) -> None:
        self.s = settings
        if voice_activity is None and settings.use_voice_activity:
            voice_activity = default_voice_activity()
        self.voice_activity = voice_activity
        self.reset()

    def reset(self) -> None:
        if self.voice_activity is not None:
            self.voice_activity.reset()
        self._vad_pending = np.zeros(0, dtype=np.int16)
        self._chunks: deque[tuple[int, float]] = deque()  # (end sample, speech probability)
        self._chunk_pos = 0
        self._voice = 0.0  # probability of the latest chunk
        self._voiced_recent: list[bool] = []
        self._onset_voice: deque[float] = deque(maxlen=ONSET_CHUNKS)  # the latest chunks' chances
        self._voice_peak = 0.0  # the open utterance's highest chance of speech
        self._room: float | None = None  # mean speech probability between utterances
        self._room_first: list[float] = []
        self._room_queue: deque[float] = deque()
        self._by_voice = False  # the open utterance is judged by the model
        self._loudness_only = False  # ... and never: it began over the room's talk
        self._quiet_chunks = 0
        self._floor = self.s.floor_db
        self._pending = np.zeros(0, dtype=np.int16)
        self._pos = 0  # samples consumed into frames
        self._recent: list[bool] = []
        self._utterance_peak = 0.0  # loudest level (dB) of the open utterance
        self._sustained_peak = 0.0  # ... held for SUSTAINED_FRAMES (a slam or knock is not it)
        self._utterance_dbs: list[float] = []  # its frames' levels
        self._peak_before_recent = 0.0  # its loudest before the latest RECENT_FRAMES
        self._in_speech = False
        self._start = 0
        self._last_loud = 0
        self._held_loud = 0  # where loudness last heard the utterance the model judges
        self._quiet = 0
        self._first: list[float] = []
        self._floor_given = False  # the room's level is known beforehand (before_recording)
        self._cut_at = 0  # where the recogniser last ended an utterance (see cut)
        self._gap_at = 0  # where sound was last skipped (see gap)
        self._onset = 0  # where the open utterance would start, were nothing skipped before it
        self._dropped_at: int | None = None  # where an utterance was dropped, its rest unheard (see drop)
        self._quiet_since_drop = 0

    def before_recording(self, samples: np.ndarray) -> None:
        """Before feeding a whole short recording: one that starts loud (cut right at its
        first word) gives the room's level from its quiet parts. Learnt from the first word,
        the floor made that word too quiet to open an utterance ("nine fives" heard as
        "five"). Loud means far above the quiet parts, as a voice is over a room's hum: noise
        that comes and goes (babble) is often `start_db` above its own quietest tenth, and the
        floor would then open an utterance at the first sample."""
        levels = frame_db(np.asarray(samples, np.int16), self.s.band)
        if len(levels) > FLOOR_FRAMES:
            quiet = float(np.percentile(levels, 10))
            if float(np.median(levels[:FLOOR_FRAMES])) > quiet + STARTS_ON_A_WORD_DB:
                self._floor, self._floor_given = quiet, True

    @property
    def in_speech(self) -> bool:
        return self._in_speech

    @property
    def floor_db(self) -> float:
        """The room's level (kept still inside an utterance)."""
        return self._floor

    @property
    def speech_start(self) -> int:
        return self._start

    @property
    def judged_by_loudness(self) -> bool:
        """An utterance is open and loudness, not the voice activity model, will end it."""
        return self._in_speech and not self._by_voice

    def gap(self) -> None:
        """Sound is missing from here (skipped when hearing fell behind): nothing before it
        is the onset or pre-roll of what comes after it. The room's level is kept: learnt
        afresh, it would be learnt from a call said just after."""
        if self.voice_activity is not None:
            self.voice_activity.reset()
        # the samples not yet in a frame, or in a chunk the model judged, are from before it:
        # passed over, the positions kept in step with the samples fed
        self._pos += len(self._pending)
        self._pending = np.zeros(0, dtype=np.int16)
        self._chunk_pos += len(self._vad_pending)
        self._vad_pending = np.zeros(0, dtype=np.int16)
        self._chunks.clear()
        self._voice = 0.0
        self._recent = []
        self._voiced_recent = []
        self._onset_voice.clear()
        self._gap_at = self._pos

    def drop(self, rest_may_follow: bool = False) -> None:
        """Sound is missing inside the open utterance (the companion spoke over it, or it was
        skipped): it is dropped unheard, for half a call must not be read. `rest_may_follow`
        (a short gap: the talk may go on after it): so is its rest, as no utterance opens
        until the room has been quiet for a hangover, or for DROPPED_TALK_S at most (a room
        that never falls quiet). The room's level is kept."""
        self._in_speech = False
        self.gap()
        self._dropped_at = self._pos if rest_may_follow else None
        self._quiet_since_drop = 0

    def cut(self) -> Segment:
        """End the open utterance here (the call in it is over, whatever the room does).
        The next one starts no earlier: its pre-roll would be this one's end."""
        self._in_speech = False
        self._recent = []
        self._voiced_recent = []
        self._cut_at = self._pos
        return Segment(self._start, self._pos, self._pos, self._peak())

    def feed(self, samples: np.ndarray) -> list[Segment]:
        s = self.s
        samples = np.asarray(samples, dtype=np.int16)
        self._judge_chunks(samples)
        data = np.concatenate([self._pending, samples])
        n = len(data) // FRAME
        self._pending = data[n * FRAME:]
        out: list[Segment] = []
        hang = int(s.hangover * 100)
        for db in frame_db(data[: n * FRAME], s.band) if n else []:
            frame_start = self._pos
            self._pos += FRAME
            new_chunk = self._take_chunks(self._pos)
            if self._pos <= FLOOR_FRAMES * FRAME and not self._floor_given:
                # A stream starts with room noise, not speech: learn the floor from it.
                self._first.append(db)
                self._floor = float(np.median(self._first))
            loud = db > self._floor + s.start_db
            # Outside speech the floor follows the room's level, so steady noise (a fan,
            # distant babble) becomes the new floor. Inside speech it stays put: letting it
            # sink to the noise's dips made the noise's mean level count as loud, so in pink
            # noise an utterance stayed open up to a second after the call.
            if not self._in_speech:
                rate = s.floor_fall if db < self._floor else s.floor_rise
                self._floor += rate * (db - self._floor)
                if new_chunk:
                    self._hear_room(self._voice)
            self._recent = (self._recent + [loud])[-RECENT_FRAMES:]
            room_quiet = self._room is not None and self._room < s.room_talking
            voiced = room_quiet and new_chunk and sum(self._voiced_recent) >= s.voice_start_chunks
            if self._dropped_at is not None and not self._in_speech:
                # the rest of a dropped utterance: nothing opens until it is over
                self._quiet_since_drop = 0 if loud else self._quiet_since_drop + 1
                if self._quiet_since_drop < hang and self._pos - self._dropped_at < DROPPED_TALK_S * 16000:
                    continue
                self._dropped_at = None
            if not self._in_speech:
                if voiced or sum(self._recent) >= s.start_frames:
                    lead = 3 * CHUNK if voiced else LOUD_LEAD_FRAMES * FRAME  # back to the first loud part
                    self._begin(frame_start - lead, [db], by_voice=voiced, loudness_only=False)
                    self._room_queue.clear()  # the call's onset is not the room
                continue
            self._utterance_peak = max(self._utterance_peak, db)
            self._utterance_dbs.append(db)
            if len(self._utterance_dbs) >= SUSTAINED_FRAMES:
                self._sustained_peak = max(self._sustained_peak, min(self._utterance_dbs[-SUSTAINED_FRAMES:]))
            if len(self._utterance_dbs) > RECENT_FRAMES:
                self._peak_before_recent = max(self._peak_before_recent, self._utterance_dbs[-RECENT_FRAMES - 1])
            if self._louder_talker_starts():
                out.append(self._restart(frame_start))
                continue
            if voiced and not self._by_voice and not self._loudness_only:
                # Started by loudness, and now the model hears a voice: it judges the end.
                # (Some synthetic voices never sound like speech to it; loudness ends those.)
                self._by_voice = True
                self._quiet_chunks = self._quiet = 0
                self._held_loud = self._last_loud
            if self._by_voice:
                if new_chunk:
                    if self._voice >= s.voice_off:
                        self._last_loud = self._pos
                        self._quiet_chunks = 0
                    else:
                        self._quiet_chunks += 1
                ended = self._quiet_chunks >= s.voice_hangover_chunks or self._held_voice_over(db)
            else:
                quiet_below = self._floor + s.stop_db
                if s.stop_below_peak_db is not None:
                    quiet_below = max(quiet_below, self._utterance_peak - s.stop_below_peak_db)
                if db > quiet_below:
                    self._last_loud = self._pos
                    self._quiet = 0
                else:
                    self._quiet += 1
                ended = self._quiet >= hang
            too_long = self._pos - self._start > s.max_utterance * 16000
            if too_long and not self._by_voice:
                # As long as no call lasts, and never a voice in it: the room got louder (a fan,
                # a heater, rain), and the floor, kept still in speech, is learnt again from
                # it. Else utterances of hiss opened back to back, each read by the recogniser.
                self._floor = float(np.median(self._utterance_dbs))
            if ended or too_long:
                self._in_speech = False
                self._recent = []
                self._voiced_recent = []
                # (from the onset: a call said just after a gap has lost its pre-roll, not its length)
                if (self._last_loud - self._onset) / 16000 >= s.min_speech + s.preroll:
                    out.append(Segment(self._start, self._last_loud, self._pos, self._peak()))
        return out

    def _held_voice_over(self, db: float) -> bool:
        """In an utterance the model judges: has loudness been far under its loudest for
        long enough to end it, though the model still hears a voice (see
        `voice_held_below_peak_db`)? If so, it ended at loudness's last loud frame."""
        s = self.s
        if s.voice_held_below_peak_db is None:
            return False
        if db > self._sustained_peak - s.voice_held_below_peak_db:
            self._held_loud = self._pos
            self._quiet = 0
            return False
        if not s.voice_held_over_quiet and db <= self._floor + s.stop_db:
            return False
        self._quiet += 1
        if self._quiet < round(s.voice_held_hangover * 100):
            return False
        self._last_loud = min(self._last_loud, self._held_loud)
        return True

    def _louder_talker_starts(self) -> bool:
        """Most of the latest frames stand `louder_talker_db` over all the open utterance
        had before them, and it has gone on long enough to be the room's talk."""
        s = self.s
        if s.louder_talker_db is None or len(self._utterance_dbs) * FRAME < s.louder_talker_after * 16000:
            return False
        line = self._peak_before_recent + s.louder_talker_db
        return sum(db > line for db in self._utterance_dbs[-RECENT_FRAMES:]) >= s.start_frames

    def _restart(self, frame_start: int) -> Segment:
        """End the open utterance where a louder voice began, and open one from there
        (with the usual lead and pre-roll, which may reach back into the ended one). Where
        the room is known to talk, what ended is its talk; in a quiet room it may be a call
        (a bid, and a nearer player's "dudo!" over its end), and is heard."""
        rise = frame_start - (RECENT_FRAMES - 1) * FRAME  # the first of the latest frames
        ended = Segment(self._start, min(self._last_loud, rise), self._pos, self._peak(),
                        room_talk=self.room_talks())
        # (by loudness: where the room talks on, the model would hear it as this voice)
        self._begin(rise - LOUD_LEAD_FRAMES * FRAME, self._utterance_dbs[-RECENT_FRAMES:],
                    by_voice=False, loudness_only=True)
        return ended

    def _begin(self, first_loud: int, levels: list[float], by_voice: bool, loudness_only: bool) -> None:
        """Open an utterance whose first loud part starts at sample `first_loud` (its
        pre-roll reaching back before it), its frames' levels so far `levels`."""
        self._in_speech = True
        self._by_voice, self._loudness_only = by_voice, loudness_only
        self._onset = max(self._cut_at, first_loud - int(self.s.preroll * 16000))
        self._start = max(self._onset, self._gap_at)
        self._last_loud = self._held_loud = self._pos
        self._quiet = self._quiet_chunks = 0
        self._voice_peak = max(self._onset_voice, default=0.0)
        self._utterance_dbs = levels
        self._utterance_peak = max(levels)
        self._sustained_peak = -np.inf
        self._peak_before_recent = -np.inf

    def room_talks(self) -> bool:
        """Is the room known to talk (by the voice activity model between utterances, or
        a louder voice already cut its talk)?"""
        return self._loudness_only or (self._room is not None and self._room >= self.s.room_talking)

    def _judge_chunks(self, samples: np.ndarray) -> None:
        """Run the voice activity model over every whole 32 ms chunk of new audio."""
        if self.voice_activity is None:
            return
        data = np.concatenate([self._vad_pending, samples])
        n = len(data) // CHUNK
        for i in range(n):
            self._chunk_pos += CHUNK
            p = self.voice_activity.probability(data[i * CHUNK:(i + 1) * CHUNK])
            self._chunks.append((self._chunk_pos, p))
        self._vad_pending = data[n * CHUNK:]

    def _hear_room(self, p: float) -> None:
        """Follow how much the room between calls sounds like speech."""
        s = self.s
        if self._room is None:
            self._room_first.append(p)
            if len(self._room_first) >= s.room_learn_chunks:
                self._room = float(np.mean(self._room_first))
            return
        self._room_queue.append(p)
        if len(self._room_queue) > s.room_delay_chunks:
            p = self._room_queue.popleft()
            rate = s.room_rise if p > self._room else s.room_fall
            self._room += rate * (p - self._room)

    def _take_chunks(self, upto: int) -> bool:
        """Move the chunks that end by sample `upto` into the state; True if any did."""
        taken = False
        while self._chunks and self._chunks[0][0] <= upto:
            _, self._voice = self._chunks.popleft()
            self._voiced_recent = (self._voiced_recent + [self._voice > self.s.voice_on])[-3:]
            self._onset_voice.append(self._voice)
            if self._in_speech:
                self._voice_peak = max(self._voice_peak, self._voice)
            taken = True
        return taken

    def flush(self) -> list[Segment]:
        """End of input: close an utterance still open."""
        if self._in_speech:
            self._in_speech = False
            return [Segment(self._start, self._last_loud, self._pos, self._peak())]
        return []

    def _peak(self) -> float | None:
        return None if self.voice_activity is None else self._voice_peak


def split(samples: np.ndarray, settings: EndpointSettings = EndpointSettings(),
          voice_activity: VoiceActivity | None = None) -> list[Segment]:
    ep = Endpointer(settings, voice_activity)
    ep.before_recording(samples)
    return [s for s in ep.feed(samples) + ep.flush() if not s.room_talk]


UTTERANCE_GAP_S = 0.5  # quiet that parts two utterances in a short recording


def utterances(samples: np.ndarray, settings: EndpointSettings = EndpointSettings(),
               gap: float = UTTERANCE_GAP_S) -> list[Segment]:
    """The separate utterances in a short recording, each up to where its end was known:
    bursts of speech go together unless `gap` seconds of quiet part them. Looser than the
    live hangover, so a recorded call with a short pause inside stays whole, while calls
    said one after another in one file are each heard."""
    return joined(split(samples, settings), settings, gap)


def spanning(segments: Sequence[Segment]) -> Segment:
    """One segment from the first's start to the last's end, as voiced as the most voiced."""
    peaks = [s.voice_peak for s in segments if s.voice_peak is not None]
    return Segment(segments[0].start, segments[-1].end, segments[-1].detected_at,
                   max(peaks) if peaks else None)


def joined(segments: list[Segment], settings: EndpointSettings = EndpointSettings(),
           gap: float = UTTERANCE_GAP_S) -> list[Segment]:
    """`utterances` from the segments `split` already found."""
    preroll = int(settings.preroll * 16000)
    out: list[Segment] = []
    last_end = None
    for seg in segments:
        if out and last_end is not None and seg.start + preroll - last_end < gap * 16000:
            out[-1] = spanning([out[-1], seg])
        else:
            out.append(seg)
        last_end = seg.end
    return out
