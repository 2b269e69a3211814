"""Where calls come from: the small interface every input source implements, and `Heard`,
the one value every input becomes.

The referee pulls one `Utterance` at a time. A keyboard line, a pipe, a WAV file and the
microphone all produce the same thing: text (plus, for speech, the recogniser's other
guesses, their scores and its confidence). At the referee's door it is parsed once, with the
players' names, into `Heard`; nothing after that reads text again.
"""

from __future__ import annotations

import os
import queue
import re
import sys
import threading
import time
import unicodedata
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Iterable, Iterator, Protocol, Sequence, TextIO

from companion.calls import FILLERS, QUIT_WORDS, Call, UnparsableCall, parse_call, parse_call_or_none


@dataclass(frozen=True)
class Utterance:
    text: str  # the best transcript or the typed line ("" when nothing was understood)
    alternatives: tuple[str, ...] = ()  # other transcripts, best first (speech only)
    confidence: float | None = None  # 0..1 from the recogniser; None for typed text
    origin: str = "text"  # "text", "mic", or the WAV file it came from
    # How likely each alternative is beside the best transcript (1.0: as likely), where the
    # recogniser can tell; empty otherwise.
    alternative_scores: tuple[float, ...] = ()
    voiced: bool | None = None  # speech only: did it hold a voice (None: not known)
    # At a microphone: when it ended (time.monotonic(): when the sound that ended it came),
    # which may be before the companion last spoke, heard after it; None where not known.
    ended_at: float | None = None

    @property
    def typed(self) -> bool:
        return self.confidence is None


@dataclass(frozen=True)
class Guess:
    """One call an utterance may be, and how likely it is beside the best guess (1.0 for
    the best itself; None where the recogniser cannot tell)."""

    call: Call
    score: float | None = None


@dataclass(frozen=True)
class Heard:
    """One utterance, parsed once: the calls it may be, best first. Typed lines and speech
    become this same value, so they cannot drift apart."""

    guesses: tuple[Guess, ...]  # the transcripts that are calls, best first
    confidence: float | None = None  # the recogniser's, for the best transcript; None when typed
    origin: str = "text"
    text: str = ""  # the typed line or the best transcript, for logs and "I did not understand"
    unparsable: str | None = None  # why `text` is no call (UnparsableCall.why), when it is not
    # A typed line that would be a call with a player's name in place of this word
    # ("Dave calza" at a table without Dave).
    unknown_player: str | None = None
    # Speech only: False when the voice activity model heard no voice in it (a beep, a
    # tune), so what the recogniser made of it is no call; None: not known.
    voiced: bool | None = None
    ended_at: float | None = None  # see Utterance

    @property
    def typed(self) -> bool:
        return self.confidence is None

    @property
    def spoken(self) -> bool:
        """Speech someone said: words heard, in a voice (not a typed line, silence or a beep)."""
        return not self.typed and bool(self.text.strip()) and self.voiced is not False

    @property
    def best(self) -> Call | None:
        """The call in the typed line or the best transcript; None when that is no call."""
        return self.guesses[0].call if self.unparsable is None else None

    @classmethod
    def from_text(cls, text: str, players: Sequence[str] = (), origin: str = "text") -> "Heard":
        """A typed line: one call, or why it is none."""
        try:
            return cls((Guess(parse_call(text, players)),), None, origin, text)
        except UnparsableCall as error:
            return cls((), None, origin, text, error.why, _unknown_player(text, players))

    @classmethod
    def from_speech(cls, text: str, alternatives: Sequence[str] = (), confidence: float = 0.0,
                    players: Sequence[str] = (), origin: str = "mic",
                    alternative_scores: Sequence[float] = (), voiced: bool | None = None,
                    ended_at: float | None = None) -> "Heard":
        """A recogniser's transcripts, best first: those that are calls become guesses."""
        guesses, unparsable = [], None
        try:
            guesses.append(Guess(parse_call(text, players), 1.0 if alternative_scores else None))
        except UnparsableCall as error:
            unparsable = error.why
        scores = tuple(alternative_scores) + (None,) * (len(alternatives) - len(alternative_scores))
        for transcript, score in zip(alternatives, scores):
            call = parse_call_or_none(transcript, players)
            if call is not None:
                guesses.append(Guess(call, score))
        return cls(tuple(guesses), confidence, origin, text, unparsable, voiced=voiced,
                   ended_at=ended_at)

    @classmethod
    def from_utterance(cls, utterance: Utterance, players: Sequence[str] = ()) -> "Heard":
        if utterance.typed:
            return cls.from_text(utterance.text, players, utterance.origin)
        return cls.from_speech(utterance.text, utterance.alternatives, utterance.confidence,
                               players, utterance.origin, utterance.alternative_scores,
                               utterance.voiced, utterance.ended_at)


def _unknown_player(text: str, players: Sequence[str]) -> str | None:
    """A capitalised word nobody is called, first or last in a line that a player's name in
    its place would make a call ("Dave calza", "calza Dave", "Dave 1 2 3 4 5")."""
    words = text.strip().split()
    known = {p.lower() for p in players}
    for i in (0, len(words) - 1) if len(words) > 1 and players else ():
        word = words[i].strip(".,!?")
        rest = words[1:] if i == 0 else words[:-1]
        with_name = [players[0], *rest] if i == 0 else [*rest, players[0]]
        if (word[:1].isupper() and word.isalpha() and word.lower() not in known
                and parse_call_or_none(word) is None and word.lower() not in FILLERS
                and parse_call_or_none(" ".join(with_name), players) is not None):
            return word
    return None


class Expect(Enum):
    """What can sensibly be said next. A recogniser that knows it listens only for those
    calls: while bidding a bare "seven" or a player's dice mean nothing, and after a
    challenge only the count (and commands) do, so noise has fewer calls to turn into."""

    CALLS = "calls"  # bids, challenges, palifico and commands: the bidding
    COUNT = "count"  # a number or a player's dice, and commands: after a challenge
    ANY = "any"  # everything (no game to go by, as in `companion hear`)


# What each player says before the game, after their name, so that a speech engine learns
# how they say it ("Ana calza", "Ana one two three"), and what to listen for meanwhile. A
# name is told apart best by a recording of it before the same kind of words: the speech
# embedding's windows hold what follows the name too.
NAME_PHRASES: tuple[tuple[str, Expect], ...] = (("calza", Expect.CALLS), ("one two three", Expect.COUNT))


class CallSource(Protocol):
    def expect(self, what: Expect, hand_sizes: frozenset[int] = frozenset()) -> None:
        """What the next utterance should be; speech sources listen for just that.
        `hand_sizes`: at a reveal, how many dice a hand said now can hold (as many as a
        player in the game has); empty when no hand is due or any size will do."""

    def next_utterance(self) -> Utterance | None:
        """Block until something is said or typed; None when the input has ended."""

    def learn_name(self, player: str, phrase: str) -> bool:
        """The next utterance is `player` saying their name before `phrase` (one of
        NAME_PHRASES): learn how they say it, and give it back as that call when it was
        learnt. False when this source has nothing to learn from (typed input, or an engine
        that does not tell players apart by how they sound)."""

    def mute(self) -> None:
        """Stop hearing: the companion is about to speak (half-duplex)."""

    def unmute(self) -> None:
        """Hear again, after the companion's own voice (and its echo) has ended."""


class TextSource:
    """One call per line from the keyboard or a pipe; "quit" ends it."""

    def __init__(self, lines: Iterable[str] | TextIO | None = None, prompt: str = "> ") -> None:
        self._stream = lines if lines is not None else sys.stdin
        self._interactive = lines is None and sys.stdin.isatty()
        if self._interactive:
            try:  # input() then edits the line (arrows, Ctrl-A) and recalls earlier calls (up arrow)
                import readline
            except ImportError:  # a Python built without it: plain lines, as a pipe gives
                pass
            else:
                readline.set_completer(lambda text, state: None)  # Tab: no file names
        self._prompt = prompt
        self._lines: Iterator[str] = iter(self._stream)

    def next_utterance(self) -> Utterance | None:
        while True:
            if self._interactive:
                try:
                    line = input(self._prompt)
                except EOFError:
                    return None
            else:
                line = next(self._lines, None)
                if line is None:
                    return None
            typed = read_typed(line)
            if typed is QUIT:
                return None  # the input ends here: the game pauses, saved
            if typed is not None:
                return typed

    def expect(self, what: Expect, hand_sizes: frozenset[int] = frozenset()) -> None:
        pass  # a typed line is read as it is, whatever the moment

    def learn_name(self, player: str, phrase: str) -> bool:
        return False  # a typed name is the name

    def mute(self) -> None:
        pass

    def unmute(self) -> None:
        pass


QUIT = Utterance("quit")  # what `read_typed` makes of "quit": the input ends


def read_typed(line: str) -> Utterance | None:
    """A typed line as an utterance; QUIT for "quit" or "exit"; None for a line with nothing
    to read (blank, a comment, or not text, said on stderr)."""
    if _not_text(line.rstrip("\r\n")):  # another encoding, or binary: its words cannot be trusted
        print(f"companion: a line that is not text was passed over: {line.strip()[:60]!r}",
              file=sys.stderr)  # (checked before strip(), which takes a form feed for a space)
        return None
    line = line.strip()
    if line.lower().rstrip("!.") in QUIT_WORDS:
        return QUIT
    if line and not line.startswith("#"):  # comments let scripted games explain themselves
        return Utterance(line)
    return None


class TypedBeside:
    """Calls typed at the terminal while the microphone listens. In a room too loud for a
    call to be heard, a player types it, and it is taken as surely as in a typed game. The
    terminal is read on a thread of its own; the microphone's loop picks up what it gives
    (`take`), never waiting for it. "quit", or Ctrl-D, ends the game, paused and saved, as
    Ctrl-C does and as they do in a typed game."""

    def __init__(self, stream: TextIO, retry_after: float = 1.0) -> None:
        self._stream = stream
        self._retry_after = retry_after
        try:  # a terminal an earlier program left non-blocking reads as ended at once
            os.set_blocking(stream.fileno(), True)
        except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is both of the first two
            pass
        self._lines: queue.Queue[Utterance] = queue.Queue()
        self.quit = False  # "quit" was typed, and every line before it taken
        self._thread = threading.Thread(target=self._read, name="typed calls", daemon=True)
        self._thread.start()

    def take(self) -> Utterance | None:
        """The next line typed and not yet taken; None when there is none (or after "quit")."""
        try:
            typed = self._lines.get_nowait()
        except queue.Empty:
            return None
        if typed is QUIT:
            self.quit = True
            return None
        return typed

    def _read(self) -> None:
        while True:
            try:
                line = self._stream.readline()
            except OSError:
                # a terminal read from the background (Ctrl-Z, bg) fails while it is there
                # (SIGTTIN ignored): read again once it may be in front again
                time.sleep(self._retry_after)
                continue
            except ValueError:  # the stream was closed
                return
            typed = read_typed(line) if line else QUIT  # Ctrl-D: as in a typed game
            if typed is not None:
                self._lines.put(typed)
            if typed is QUIT:
                return


def _not_text(line: str) -> bool:
    """A line holding bytes its encoding has no letter for (kept as surrogates, or read as
    U+FFFD) or control characters (in Latin-1 every byte is a letter or one): "9]\\x83,5"
    must not be taken for "nine fives"."""
    return any(c == "\ufffd" or (unicodedata.category(c) in ("Cc", "Cs") and c != "\t") for c in line)


def names_and_files(names: Sequence[str] | None, files: Sequence[str | Path]
                    ) -> tuple[list[str], list[str | Path]]:
    """Give back the recordings that argparse took for player names.

    `--players Ana Ben game.wav` reads every word up to the next option as a name. A name
    is letters only, so a trailing word ending in .wav, or holding a path separator, is a
    recording, and so is "-" (paths from standard input); so is a folder of WAV files (a
    folder "Ana" of recordings would be odd).
    """
    names = list(names or ())
    taken: list[str | Path] = []
    while names and _is_recording(names[-1]):
        taken.insert(0, names.pop())
    return names, taken + list(files)


def _is_recording(word: str) -> bool:
    path = Path(word)
    if word == "-" or word.lower().endswith(".wav") or "/" in word or "\\" in word:
        return True
    try:
        return path.is_dir() and bool(files_in(path, (".wav",)))
    except OSError:  # a folder that cannot be listed is not known to hold recordings
        return False


def files_in(folder: Path, suffixes: Sequence[str]) -> list[Path]:
    """A folder's files with one of these suffixes (any case), in name order with numbers by
    value: call2.wav before call10.wav, as a recorder or a camera that does not pad its
    numbers means them. An OSError if the folder cannot be listed."""
    return sorted((p for p in folder.iterdir() if p.suffix.lower() in suffixes and p.is_file()), key=_natural_key)


def _natural_key(path: Path) -> list:
    return [(0, int(part), "") if part.isdigit() else (1, 0, part.lower())
            for part in re.split(r"(\d+)", path.name) if part]
