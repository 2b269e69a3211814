"""Opening the speech input `companion play` asks for: recordings or the microphone, with
the engine and settings chosen once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence, TextIO

from companion.listen.endpoint import EndpointSettings
from companion.listen.errors import AudioFormatError, MicrophoneError, ModelError
from companion.listen.microphone import MicSource, check_microphone
from companion.listen.sources import (STDIN, PromptedWavSource, WavSource, check_wavs, expand_paths,
                                      make_engine, say_on_stderr)
from companion.sources import TypedBeside


@dataclass(frozen=True)
class SpeechSettings:
    """Everything `play --input wav|mic` needs to hear, in one place."""

    engine: str = "auto"  # auto | bundled | vosk
    model: str | Path | None = None  # a Vosk model folder, or a bundled network (.npz)
    device: int | str | None = None  # the microphone: an index, part of a name, or default
    max_count: int | None = None  # the largest count to listen for (default: thirty)
    endpoint: EndpointSettings = EndpointSettings()
    mic_tail_seconds: float = 0.3  # deaf after the companion speaks: its echo
    mic_stalled_after: float = 5.0  # no sound for this long: the microphone went away
    learn_names: bool = False  # each player says their name before the game (NAME_PHRASES)


def open_source(kind: str, *, paths: Sequence[str | Path] = (), players: Sequence[str] = (),
                settings: SpeechSettings = SpeechSettings(), typed_from: TextIO | None = None):
    """A CallSource for `play --input wav|mic`; says on stderr which engine it uses. The
    paths `-` alone: WAV paths read from standard input as the referee waits for each.
    `typed_from`: a terminal whose typed calls the microphone takes too (TypedBeside)."""
    if kind not in ("wav", "mic"):
        raise ModelError(f"unknown speech input {kind!r}: use wav or mic")
    from_stdin = kind == "wav" and [str(p) for p in paths] == [STDIN]
    if kind == "wav" and STDIN in map(str, paths) and not from_stdin:
        raise AudioFormatError(f"read the recordings either from standard input ({STDIN}) "
                               "or from files, not both")
    # A bad path, or no microphone at all, fails before the model loads (seconds: it learns
    # how each player's name sounds).
    files = expand_paths(paths) if kind == "wav" and not from_stdin else []
    check_wavs(files)
    device = settings.device
    if isinstance(device, str) and device.isdigit():
        device = int(device)  # `--mic 2` is a device index; other text matches a name
    if kind == "mic":
        check_microphone(device)
    say_on_stderr("companion: getting the speech engine ready for "
                  f"{', '.join(players) if players else 'the game'} (a few seconds)...")
    engine = make_engine(settings.engine, settings.model, players, say_on_stderr, settings.max_count)
    if from_stdin:
        return PromptedWavSource(engine, endpoint=settings.endpoint, learn_names=settings.learn_names)
    if kind == "wav":
        return WavSource(files, engine, endpoint=settings.endpoint, learn_names=settings.learn_names)
    source = MicSource(engine, device, settings.mic_tail_seconds, settings.endpoint,
                       settings.mic_stalled_after, learn_names=settings.learn_names)
    source.open()  # a missing microphone is reported before the game starts, not mid-game
    if typed_from is not None:
        source.typed = TypedBeside(typed_from)
    return source
