"""Speakers: turn the referee's sentences into printed lines, a voice, or a WAV file.

pyttsx3 (espeak-ng on Linux) is imported only here. Each speaker has one method, `say`,
which returns once the sentence has been delivered, so the referee can keep the microphone
muted exactly while the companion talks.

Long: every speaker and the synthesis they share stay with the one import of pyttsx3.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import wave
from pathlib import Path
from typing import Callable, Protocol, Sequence, TextIO

from companion.errors import CompanionError
from companion.rules.names import for_espeak


class VoiceUnavailable(CompanionError):
    """No text-to-speech voice could be started (no espeak-ng, no audio device...)."""


class SpeakerSilent(VoiceUnavailable):
    """The audio output refused a sentence (a speaker unplugged, a sound card gone): the
    next sentence tries again, as a speaker plugged back in plays again."""


class PrintedLinesLost(VoiceUnavailable):
    """The announcements can no longer be printed: standard output's reader went away (a
    `| tee` killed) or its disk is full."""


class Speaker(Protocol):
    def say(self, text: str) -> None: ...


class PrintSpeaker:
    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream

    def say(self, text: str) -> None:
        stream = self._stream or sys.stdout
        try:
            print(text, file=stream, flush=True)
        except OSError as error:
            if stream is sys.stdout:  # what is still buffered would fail again at every flush
                with contextlib.suppress(OSError, ValueError):
                    gone = os.fstat(sys.stdout.fileno())
                    null = os.open(os.devnull, os.O_WRONLY)
                    os.dup2(null, sys.stdout.fileno())
                    if os.path.samestat(gone, os.fstat(sys.stderr.fileno())):  # `2>&1 | tee`: both went
                        os.dup2(null, sys.stderr.fileno())
                    os.close(null)
            raise PrintedLinesLost(f"the announcements cannot be printed ({error.strerror or error})") from None


class _WithoutDriverChatter:
    """Standard output without the "Audio saved to ..." lines pyttsx3's espeak driver prints
    from its own thread once a file is written, often after runAndWait has returned and any
    redirect around it has ended: they would land among the announcements."""

    CHATTER = "Audio saved to "

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._dropped = False  # print() writes the line's end apart from the line

    def write(self, text: str) -> int:
        dropped, self._dropped = self._dropped, False
        if text.startswith(self.CHATTER):
            self._dropped = True
        elif not (dropped and text == "\n"):
            self.out.write(text)
        return len(text)

    def flush(self) -> None:
        self.out.flush()

    def __getattr__(self, name: str):
        return getattr(self.out, name)


def _start_pyttsx3(rate: int | None):
    if sys.stdout is not None and not isinstance(sys.stdout, _WithoutDriverChatter):  # None: closed
        sys.stdout = _WithoutDriverChatter(sys.stdout)
    try:
        import pyttsx3
    except ImportError as exc:
        raise VoiceUnavailable(f"no text-to-speech voice could be started ({exc}); "
                               "install it with: pip install pyttsx3") from None
    try:
        # pyttsx3's espeak driver prints as it works; keep the referee's output clean.
        with contextlib.redirect_stdout(io.StringIO()):
            engine = pyttsx3.init()
            if rate:
                engine.setProperty("rate", rate)
    except Exception as exc:  # pyttsx3 raises bare errors of many kinds from its drivers
        raise VoiceUnavailable(f"no text-to-speech voice could be started ({type(exc).__name__}: {exc}); "
                               "on Debian or Ubuntu install it with: apt-get install espeak-ng") from None
    return engine


def no_audio_output() -> str | None:
    """Why nothing said aloud could be heard (no speaker or sound card), or None when there
    is an output or it cannot be told. PortAudio lists the same ALSA, PulseAudio or PipeWire
    outputs that the voice plays on."""
    try:
        import sounddevice

        devices = sounddevice.query_devices()
    except Exception:  # no PortAudio (OSError) or it failed: cannot tell, so try the voice
        return None
    if any(d.get("max_output_channels", 0) > 0 for d in devices):
        return None
    return "no audio output (speaker or sound card) was found"


def audio_player() -> list[str] | None:
    """The command that plays a WAV file on the default audio output: aplay on Linux (the
    player pyttsx3's espeak driver uses, which ignores its failure); None elsewhere, where
    pyttsx3's own driver plays and reports what fails."""
    if not sys.platform.startswith("linux"):
        return None
    if shutil.which("aplay") is None:
        raise VoiceUnavailable("there is no aplay to play the voice on; on Debian or Ubuntu install it "
                               "with: apt-get install alsa-utils")
    return ["aplay", "-q"]


class VoiceSpeaker:
    """Speaks aloud on the default audio output. On Linux pyttsx3 says each sentence into a
    WAV file and the player plays it, so a speaker unplugged mid-game is noticed (and
    Speakers says so) rather than the table left in silence."""

    # Past a sentence's own length, how long a player may take before it counts as stuck (the
    # microphone stays muted meanwhile, so not long).
    PLAYER_GRACE = 3.0
    # The player is watched in slices of this; a slice that took more than twice as long was
    # this process stopped (Ctrl-Z, then fg), which the sentence did not play through.
    PLAYER_POLL_S = 0.25

    def __init__(self, rate: int | None = None, player: Sequence[str] | None = None) -> None:
        self._engine = _start_pyttsx3(rate)
        # Without an output the voice's player fails on every sentence, loudly, on stderr.
        missing = no_audio_output()
        if missing:
            raise VoiceUnavailable(missing)
        self._player = list(player) if player is not None else audio_player()
        self._tmp = _scratch("say-")
        self._count = 0

    def say(self, text: str) -> None:
        if self._player is None:
            self._say_through_driver(text)
            return
        self._count += 1
        stem = self._tmp / f"sentence-{self._count}"
        params, frames = _synthesise(self._engine, text, stem)
        wav = stem.with_suffix(".wav")
        _write_wav(wav, params, frames)
        seconds = len(frames) / (params.framerate * params.sampwidth * params.nchannels)
        try:
            returncode, errors = self._play(wav, seconds + self.PLAYER_GRACE)
        except OSError as exc:
            raise VoiceUnavailable(f"the voice's player cannot be run ({exc.strerror or exc})") from None
        finally:
            wav.unlink(missing_ok=True)
        if returncode != 0:
            lines = [line for line in errors.splitlines() if line.strip()]
            why = lines[-1].strip() if lines else f"the player stopped with code {returncode}"
            raise SpeakerSilent(f"the speaker cannot be played on: {why}")

    def _play(self, wav: Path, patience: float) -> tuple[int, str]:
        """Play `wav`, giving up after `patience` seconds of playing (an output that hangs, a
        Bluetooth speaker gone, rather than fails): its return code and what it said on stderr."""
        player = subprocess.Popen([*self._player, str(wav)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
        played_for = 0.0
        try:
            while True:
                began = time.monotonic()
                try:
                    _, errors = player.communicate(timeout=self.PLAYER_POLL_S)
                    return player.returncode, errors
                except subprocess.TimeoutExpired:
                    waited = time.monotonic() - began
                    played_for += waited if waited <= 2 * self.PLAYER_POLL_S else 0.0
                    if played_for > patience:
                        raise SpeakerSilent("the speaker stopped playing mid-sentence") from None
        except BaseException:  # given up on, or the game stopped mid-sentence: no player left behind
            player.kill()
            player.wait()  # not what it wrote: a child of it may hold its stderr open
            player.stderr.close()
            raise

    def _say_through_driver(self, text: str) -> None:
        # pyttsx3 shares one engine per process and its espeak driver keeps the last
        # save_to_file target, which would swallow this sentence into a WAV file.
        driver = getattr(getattr(self._engine, "proxy", None), "_driver", None)
        if getattr(driver, "_save_file", None):
            driver._save_file = None
        with contextlib.redirect_stdout(io.StringIO()):
            self._engine.say(for_espeak(text))
            self._engine.runAndWait()


class WavRecorder:
    """Writes every announcement, in order, into one WAV file (real synthesised speech).

    Each sentence is appended and the header's sizes mended after it, so the file is a
    valid WAV whenever the process stops, and a game's evening costs each sentence's bytes
    once (rewritten whole each time, one normal game wrote 5 GB to make 48 MB). `keep`: a
    resumed game's announcements go on in the file it was writing; else it starts afresh.
    """

    def __init__(self, path: Path, rate: int | None = None, gap_seconds: float = 0.3,
                 keep: bool = False, warn: Callable[[str], None] = lambda line: None) -> None:
        self.path = Path(path)
        self._warn = warn
        self._engine = _start_pyttsx3(rate)
        self._params: wave._wave_params | None = None
        self._gap = gap_seconds
        self._count = 0
        self._keep = keep
        self._tmp = _scratch("wav-")
        if self.path.is_dir():  # touch() would pass it, and the first announcement fail
            raise VoiceUnavailable(f"cannot write announcements to {self.path}: it is a folder; "
                                   "give a file name, like announcements.wav")
        if self.path.exists() and not self.path.is_file():  # /dev/null, a pipe: nothing to add to
            raise VoiceUnavailable(f"cannot write announcements to {self.path}: it is not a file but a device "
                                   "or a pipe; give a file name, like announcements.wav")
        if not _empty_or_wav(self.path):  # an earlier game's announcements are fine to replace
            raise VoiceUnavailable(f"cannot write announcements to {self.path}: it holds something other than "
                                   "a WAV file (a journal?), which would be lost; give a new file name")
        not_folder = next((p for p in self.path.parents if p.exists() and not p.is_dir()), None)
        if not_folder is not None:  # mkdir would say "File exists"
            raise VoiceUnavailable(f"cannot write announcements to {self.path}: {not_folder} is a file, not a folder")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.touch()
        except OSError as exc:
            raise VoiceUnavailable(f"cannot write announcements to {self.path}: {exc.strerror or exc}") from None

    def say(self, text: str) -> None:
        self._count += 1
        params, frames = _synthesise(self._engine, text, self._tmp / f"part-{self._count}")
        if self._params is not None and (params.nchannels, params.sampwidth, params.framerate) != (
                self._params.nchannels, self._params.sampwidth, self._params.framerate):
            raise VoiceUnavailable("the voice changed its audio format mid-game")
        silence = bytes(int(self._gap * params.framerate) * params.sampwidth * params.nchannels)
        try:
            if self._params is None or not _ours(self.path, params):
                # first, or deleted, emptied or saved by another program mid-game: what it
                # holds of this game is kept
                _start_wav(self.path, params, self._keep or self._params is not None, self._warn)
                self._params = params
            _append_wav(self.path, frames + silence)
        except OSError as exc:  # a full disk, a removed folder: Speakers drops this file, with a warning
            raise VoiceUnavailable(f"cannot write announcements to {self.path}: {exc.strerror or exc}") from None


# the header `wave` writes for PCM: RIFF, WAVE, a 16-byte fmt chunk and data, 44 bytes
_WAV_HEADER = struct.Struct("<4sI4s4sIHHIIHH4sI")


def _ours(path: Path, params) -> bool:
    """Is the file a WAV of `params`' format whose frames run from byte 44 to its end (one
    this recorder writes, and can add to)? Frames past the size its header gives are a
    sentence a crash stopped before the header was mended (kept: `_append_wav` counts to the
    end); a chunk there (an editor's tags) is not, and frames added after it would turn it
    into sound."""
    try:
        with open(path, "rb") as f:
            head = f.read(_WAV_HEADER.size)
            size = f.seek(0, 2)
            riff, _, form, fmt, fmt_size, tag, channels, rate, _, align, bits, data, data_size = (
                _WAV_HEADER.unpack(head))
            f.seek(_WAV_HEADER.size + data_size + data_size % 2)
            after = f.read(8)
    except (OSError, struct.error):
        return False
    frame = params.nchannels * params.sampwidth
    # a chunk id is four letters, digits or spaces (its size may be wrong: a damaged file)
    ident = after[:4]
    chunk_after = len(after) == 8 and ident.isascii() and all(chr(c).isalnum() or c == 32 for c in ident)
    return (riff, form, fmt, fmt_size, tag, data) == (b"RIFF", b"WAVE", b"fmt ", 16, 1, b"data") and (
        channels, rate, bits, align) == (params.nchannels, params.framerate, 8 * params.sampwidth, frame) and (
        size >= _WAV_HEADER.size + data_size) and not chunk_after


def _start_wav(path: Path, params, keep: bool, warn: Callable[[str], None]) -> None:
    """The file ready for `params`' frames. With `keep` (a resumed game), what it holds is
    kept: as it is when this recorder wrote it, rewritten once in that form when another
    program saved it (an editor's extra chunks), and begun afresh, said, when it is audio
    of another format."""
    if keep and _ours(path, params):
        return
    frames = b""
    if keep and path.exists() and path.stat().st_size:
        try:
            with wave.open(str(path), "rb") as w:
                same = (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (
                    params.nchannels, params.sampwidth, params.framerate)
                frames = w.readframes(w.getnframes()) if same else b""
        except (wave.Error, EOFError, OSError):
            same = False
        if not same:
            warn(f"warning: {path} holds audio that is not this voice's; the announcements start it afresh")
    _write_wav(path, params, frames)


def _append_wav(path: Path, frames: bytes) -> None:
    """Frames added at the end of the file's data (a file `_ours` says is one), then its
    sizes mended."""
    with open(path, "r+b", buffering=0) as f:  # unbuffered: a failed write is known before truncate
        frame = _WAV_HEADER.unpack(f.read(_WAV_HEADER.size))[9]  # its block align
        end = f.seek(0, 2)
        end -= (end - _WAV_HEADER.size) % frame  # a frame cut off by a crash mid-write is dropped
        f.seek(end)
        try:
            view = memoryview(frames)
            while view:
                view = view[f.write(view):]
        except OSError:  # a full disk: the sentence begun is cut off, not left to starve the journal
            with contextlib.suppress(OSError):
                f.truncate(end)
            raise
        f.truncate()
        data_size = end + len(frames) - _WAV_HEADER.size
        f.seek(4)
        f.write(struct.pack("<I", 36 + data_size))
        f.seek(40)
        f.write(struct.pack("<I", data_size))


_scratch_root: Path | None = None


def _scratch(prefix: str) -> Path:
    """A speaker's own folder for its sentences' files, in one the process removes as it exits.
    espeak's driver may finish writing after runAndWait returns, so the folder outlives the
    speaker: a late write never lands in a deleted one (and a TemporaryDirectory left to the
    garbage collector warns at exit)."""
    global _scratch_root
    if _scratch_root is None or not _scratch_root.is_dir():
        _scratch_root = Path(tempfile.mkdtemp(prefix="companion-voice-"))
        atexit.register(shutil.rmtree, _scratch_root, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=_scratch_root))


def _synthesise(engine, text: str, stem: Path, voice: str | None = None):
    """`text` said by the pyttsx3 engine (in `voice`, then back to the engine's own) as WAV
    parameters and frames, through files named after `stem`."""
    previous = engine.getProperty("voice") if voice else None
    try:
        if voice:
            engine.setProperty("voice", voice)
        # espeak's pyttsx3 driver now and then closes an utterance before its samples
        # arrive (an empty file); synthesising again is cheap and always gets them.
        for attempt in range(3):
            part = stem.with_name(f"{stem.name}-{attempt}.wav")
            with contextlib.redirect_stdout(io.StringIO()):
                engine.save_to_file(for_espeak(text), str(part))
                engine.runAndWait()
            try:
                return _read_part(part, text, timeout=3.0 * (attempt + 1))
            except VoiceUnavailable:
                if attempt == 2:
                    raise
            finally:
                part.unlink(missing_ok=True)
    finally:
        if previous:
            engine.setProperty("voice", previous)
    raise AssertionError("unreachable")


def _write_wav(path: Path, params, frames: bytes) -> None:
    # the file opened first: a path that cannot be written fails before a half-made Wave_write
    with open(path, "wb") as file, wave.open(file, "wb") as out:
        out.setnchannels(params.nchannels)
        out.setsampwidth(params.sampwidth)
        out.setframerate(params.framerate)
        out.writeframes(frames)


def _read_part(part: Path, text: str, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            with wave.open(str(part), "rb") as w:
                params, frames = w.getparams(), w.readframes(w.getnframes())
            if frames:
                return params, frames
        except (OSError, wave.Error, EOFError) as exc:
            error = exc
        else:
            error = "no samples"
        if time.monotonic() > deadline:
            raise VoiceUnavailable(f"the voice produced no audio for {text!r}: {error}")
        time.sleep(0.02)


class PlayerVoice:
    """A synthetic player: one of espeak-ng's voices (through pyttsx3, as the referee
    speaks), saying lines into WAV files for the companion to hear (`companion demo`)."""

    def __init__(self, voice: str, rate: int | None = None) -> None:
        self.voice = voice
        self._engine = _start_pyttsx3(rate)
        self._tmp = _scratch("player-")
        self._count = 0

    def record(self, text: str, path: Path) -> Path:
        """Say `text` into the WAV file `path`."""
        self._count += 1
        params, frames = _synthesise(self._engine, text, self._tmp / f"line-{self._count}",
                                     self.voice)
        _write_wav(path, params, frames)
        return Path(path)


class Speakers:
    """Several speakers at once: the printed line, the voice, the WAV file. A voice or a WAV
    file that fails mid-game (the speech engine crashing, the file's folder removed) is
    dropped with one warning: the game goes on, printed, and the journal keeps every call.
    A speaker that cannot be played on is warned of once and tried again on each sentence,
    with a word when it plays again."""

    def __init__(self, speakers: Sequence[Speaker], warn: Callable[[str], None] = lambda line: None) -> None:
        self.speakers = tuple(speakers)
        self._warn = warn
        self._silent: list[Speaker] = []

    def say(self, text: str) -> None:
        for speaker in self.speakers:
            if isinstance(speaker, Speakers):  # a set with its own warnings
                speaker.say(text)
                continue
            if isinstance(speaker, PrintSpeaker):
                try:
                    speaker.say(text)
                except PrintedLinesLost as error:
                    self.speakers = tuple(s for s in self.speakers if s is not speaker)
                    if not self.aloud():  # nothing else tells the table: the game stops, saved
                        raise
                    self._warn(f"warning: {error}; the game goes on aloud.")
                continue
            try:
                speaker.say(text)
            except SpeakerSilent as error:
                if speaker not in self._silent:
                    self._silent.append(speaker)
                    self._warn(f"warning: {error}; announcements are printed until it plays again.")
                continue
            except Exception as error:  # pyttsx3's drivers raise bare errors of many kinds
                self.speakers = tuple(s for s in self.speakers if s is not speaker)
                what = "the voice" if isinstance(speaker, VoiceSpeaker) else "the announcements' WAV file"
                self._warn(f"warning: {what} failed ({error}); the game goes on without it.")
                continue
            if speaker in self._silent:
                self._silent.remove(speaker)
                self._warn("the speaker plays again.")

    def aloud(self) -> bool:
        """Whether a voice still says the announcements."""
        return any(isinstance(s, VoiceSpeaker) or (isinstance(s, Speakers) and s.aloud()) for s in self.speakers)


def check_wav_out(wav_out: Path | None, kept: Sequence[Path]) -> None:
    """Refuse a `--wav-out` that is one of the files (or inside one of the folders) the game
    reads or keeps: the journal, the recordings played, the photos."""
    if wav_out is None:
        return
    target = Path(os.path.realpath(wav_out))  # through links, a dangling one's target included
    for path in kept:
        path = Path(os.path.realpath(path))
        if target == path or path in target.parents:
            raise VoiceUnavailable(f"--wav-out {wav_out} would write the announcements over {path}, "
                                   "which the game reads or keeps; give another file name")


def _empty_or_wav(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(12)
    except OSError:
        return True  # missing, or unreadable: touch() says why it cannot be written, if it cannot
    return head == b"" or (head[:4] == b"RIFF" and head[8:12] == b"WAVE")  # not a WebP photo, an AVI


def announcer(mute: bool = False, wav_out: Path | None = None,
              warn: Callable[[str], None] = lambda line: None, resuming: bool = False,
              when_voiced: Callable[[], None] | None = None) -> Speakers:
    """Printed lines, plus the voice unless muted, plus a WAV file if asked for (a resumed
    game's goes on in the file). Without a working voice the announcements are still
    printed, with one warning. `when_voiced`: a check for a game a voice will say, made
    before the WAV file is begun (so a refusal leaves no file behind)."""
    speakers: list[Speaker] = [PrintSpeaker()]
    if not mute:
        try:
            speakers.append(VoiceSpeaker())
        except VoiceUnavailable as error:
            warn(f"warning: {error}; announcements will be printed only.")
    if when_voiced is not None and Speakers(speakers).aloud():
        when_voiced()
    if wav_out:
        speakers.append(WavRecorder(wav_out, keep=resuming, warn=warn))
    return Speakers(speakers, warn)
