"""Where calls come from: the small interface every input source implements.

The referee pulls one `Utterance` at a time. A keyboard line, a pipe, a WAV file and the
microphone all produce the same thing: text (plus, for speech, the recogniser's other
guesses and its confidence), which the referee reads with the one parser in `calls`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Iterable, Iterator, Protocol, Sequence, TextIO


@dataclass(frozen=True)
class Utterance:
    text: str  # the best transcript or the typed line ("" when nothing was understood)
    alternatives: tuple[str, ...] = ()  # other transcripts, best first (speech only)
    confidence: float | None = None  # 0..1 from the recogniser; None for typed text
    origin: str = "text"  # "text", "mic", or the WAV file it came from

    @property
    def typed(self) -> bool:
        return self.confidence is None


class Expect(Enum):
    """What can sensibly be said next. A recogniser that knows it listens only for those
    calls: while bidding a bare "seven" or a player's dice mean nothing, and after a
    challenge only the count (and commands) do, so noise has fewer calls to turn into."""

    CALLS = "calls"  # bids, challenges, palifico and commands: the bidding
    COUNT = "count"  # a number or a player's dice, and commands: after a challenge
    ANY = "any"  # everything (no game to go by, as in `companion hear`)


class CallSource(Protocol):
    def expect(self, what: Expect) -> None:
        """What the next utterance should be; speech sources listen for just that."""

    def next_utterance(self) -> Utterance | None:
        """Block until something is said or typed; None when the input has ended."""

    def mute(self) -> None:
        """Stop hearing: the companion is about to speak (half-duplex)."""

    def unmute(self) -> None:
        """Hear again, after the companion's own voice (and its echo) has ended."""


class TextSource:
    """One call per line from the keyboard or a pipe."""

    def __init__(self, lines: Iterable[str] | TextIO | None = None, prompt: str = "> ") -> None:
        self._stream = lines if lines is not None else sys.stdin
        self._interactive = lines is None and sys.stdin.isatty()
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
            line = line.strip()
            if line and not line.startswith("#"):  # comments let scripted games explain themselves
                return Utterance(line)

    def expect(self, what: Expect) -> None:
        pass  # a typed line is read as it is, whatever the moment

    def mute(self) -> None:
        pass

    def unmute(self) -> None:
        pass


def names_and_files(names: Sequence[str] | None, files: Sequence[str | Path]
                    ) -> tuple[list[str], list[str | Path]]:
    """Give back the recordings that argparse took for player names.

    `--players Ana Ben game.wav` reads every word up to the next option as a name. A name
    is letters only, so a trailing word ending in .wav, or holding a path separator, is a
    recording; so is a folder of WAV files (a folder "Ana" of recordings would be odd).
    """
    names = list(names or ())
    taken: list[str | Path] = []
    while names and _is_recording(names[-1]):
        taken.insert(0, names.pop())
    return names, taken + list(files)


def _is_recording(word: str) -> bool:
    path = Path(word)
    return (word.lower().endswith(".wav") or "/" in word or "\\" in word
            or (path.is_dir() and any(p.suffix.lower() == ".wav" for p in path.iterdir())))
