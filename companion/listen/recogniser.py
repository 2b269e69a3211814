"""The bundled call recogniser: speech embedding -> call network -> grammar decoder.

Speech-to-intent in the manner of Picovoice Rhino: the audio of one utterance becomes a
sequence of speech-embedding vectors (a model trained on real speech), a small network
spells it in call tokens, and the decoder finds the calls the grammar allows that explain
it best. How sure that is comes from a small calibration fitted on voices the network never
trained on. Player names change every game, so the network hears any name as `<name>`; which
player it was is settled by comparing that stretch with each name said by espeak-ng's
voices at start-up.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

import numpy as np

from companion.listen.decoder import CompiledGraph, Decoded, Graph
from companion.listen.embedding import (LEAD_IN_SAMPLES, SAMPLE_RATE, EmbeddingStream,
                                         SpeechEmbedding)
from companion.listen.engine import Recognition
from companion.listen.errors import ModelError
from companion.listen.network import MODEL_PATH, CallNetwork
from companion.listen.tokens import NAME, number_tokens
from companion.listen.vocabulary import COMMANDS as SPOKEN_COMMANDS
from companion.listen.vocabulary import normalise_name
from companion.sources import Expect

TAIL_SAMPLES = 3200  # 0.2 s of quiet after the utterance, as in training
ALTERNATIVE_REACH = 3.0  # log-likelihood below the best call that still counts as a guess
HAND_SIZES = frozenset(range(1, 6))  # a player holds one to five dice
# Frames (80 ms each) of audio after the one where a call's last word is spelt before the
# call counts as said, while the utterance is still open (peek).
SAID_BEFORE = 1
CONFIDENCE_PATH = Path(__file__).with_name("call_confidence.json")

PLURAL = {1: ("ones", "aces", "pacos"), 2: ("twos",), 3: ("threes",), 4: ("fours",),
          5: ("fives",), 6: ("sixes",)}
SINGULAR = {1: ("one", "ace", "paco"), 2: ("two",), 3: ("three",), 4: ("four",),
            5: ("five",), 6: ("six",)}
# The commands the network has tokens for (a subset of vocabulary.COMMANDS).
COMMANDS = ("undo", "take it back", "repeat", "say again", "status", "whats the bid", "yes", "no")
assert all(c in SPOKEN_COMMANDS for c in COMMANDS)


def padded(audio: np.ndarray) -> np.ndarray:
    """An utterance as the network hears it, in training and in play: quiet before it (the
    first embedding windows need 775 ms of sound) and a short quiet tail after it."""
    return np.concatenate([np.zeros(LEAD_IN_SAMPLES, audio.dtype), audio,
                           np.zeros(TAIL_SAMPLES, audio.dtype)])


def call_graph(expect: Expect, max_count: int, named: bool,
               hand_sizes: frozenset[int] = frozenset()) -> Graph:
    """Every call that can be said at this moment, as a token graph. `named`: whether
    "<name> calza" and hands can be said (only when there are players to name);
    `hand_sizes`: how many dice a hand can hold now (empty: one to five). A hand of the
    wrong size is no reading at all: "four four four" run together is heard as three fours
    when a hand must hold five, not as one four of a hand of three."""
    graph = Graph()
    bidding, counting = expect is not Expect.COUNT, expect is not Expect.CALLS
    if bidding:
        for n in range(1, max_count + 1):
            for face in range(1, 7):
                for word in PLURAL[face]:
                    graph.add_phrase(number_tokens(n) + [word], f"{' '.join(number_tokens(n))} {word}")
        for face in range(1, 7):
            for word in SINGULAR[face]:
                graph.add_phrase(["a", word], f"a {word}")
                graph.add_phrase(["one", word], f"one {word}")
        for word in ("dudo", "calza", "palifico"):
            graph.add_phrase([word], word)
        if named:
            graph.add_phrase(["<name>", "calza"], "{name} calza")
            graph.add_phrase(["<name>", "dudo"], "{name} dudo")
    if counting:
        for n in range(0, max_count + 1):
            graph.add_phrase(number_tokens(n), " ".join(number_tokens(n)))
        if named:
            graph.add_hand(hand_sizes or HAND_SIZES)
    for command in COMMANDS:
        graph.add_phrase(command.split(), command)
    graph.add_fillers()
    return graph


@dataclass(frozen=True)
class Calibration:
    """Logistic calibration of the decoder's measures into a 0..1 confidence."""

    weights: tuple[float, ...]
    bias: float
    names: tuple[str, ...] = ("margin_free", "margin_free_per_frame", "margin_second",
                              "posterior", "unknown_peak", "frames", "weakest_word",
                              "unknown_mass")

    @classmethod
    def load(cls, path: Path = CONFIDENCE_PATH) -> "Calibration":
        try:
            data = json.loads(path.read_text())
            return cls(tuple(data["weights"]), float(data["bias"]), tuple(data["features"]))
        except FileNotFoundError:
            raise ModelError(f"the call recogniser's calibration is missing: {path}") from None
        except (ValueError, KeyError, TypeError) as err:
            raise ModelError(f"the call recogniser's calibration {path} is unreadable: {err}") from None

    def confidence(self, measures: dict[str, float]) -> float:
        z = self.bias + sum(w * measures[n] for w, n in zip(self.weights, self.names))
        return float(1.0 / (1.0 + np.exp(-np.clip(z, -30, 30))))


def measures(decoded: Decoded) -> dict[str, float]:
    """What the calibration reads: how much worse than free spelling the best call explains
    the audio, how far ahead of the next call it is, and signs of other words."""
    if not decoded.calls:
        return {}
    best = decoded.calls[0][1]
    second = decoded.calls[1][1] if len(decoded.calls) > 1 else best - 30.0
    scores = np.array([s for _, s in decoded.calls])
    posterior = float(1.0 / np.exp(scores - best).sum())
    gap = decoded.free_score - best
    return {"margin_free": -gap, "margin_free_per_frame": -gap / max(decoded.frames, 1),
            "margin_second": min(best - second, 30.0), "posterior": posterior,
            "unknown_peak": decoded.unknown_peak, "frames": decoded.frames / 25.0,
            "weakest_word": max(decoded.weakest_word, -10.0),
            "unknown_mass": min(decoded.unknown_mass, 10.0)}


@dataclass(frozen=True)
class RecogniserSettings:
    max_count: int = 30
    model: Path = MODEL_PATH
    calibration: Path = CONFIDENCE_PATH


class CallRecogniser:
    """The Engine the game listens with by default (see engine.Engine)."""

    name = "bundled call recogniser"

    def __init__(self, players: Sequence[str] = (), settings: RecogniserSettings = RecogniserSettings(),
                 names: "NameMatcher | None" = None) -> None:
        self.settings = settings
        self.players = tuple(players)
        for p in self.players:
            normalise_name(p)  # letters only, as for every engine
        self.network = CallNetwork.load(settings.model)
        self.calibration = Calibration.load(settings.calibration)
        self.embedding = SpeechEmbedding()
        self.names = names if names is not None else (
            NameMatcher(self.players, self.embedding, self.network) if self.players else None)
        self._graphs: dict[tuple[Expect, frozenset[int]], CompiledGraph] = {}
        self._expect = Expect.ANY
        self._hand_sizes: frozenset[int] = frozenset()
        self.start()

    def graph(self, expect: Expect, hand_sizes: frozenset[int] = frozenset()) -> CompiledGraph:
        key = (expect, hand_sizes)
        if key not in self._graphs:
            self._graphs[key] = CompiledGraph(call_graph(expect, self.settings.max_count,
                                                         bool(self.players), hand_sizes))
        return self._graphs[key]

    def expect(self, what: Expect, hand_sizes: frozenset[int] = frozenset()) -> None:
        self._expect, self._hand_sizes = what, frozenset(hand_sizes)

    def start(self) -> None:
        self._stream = None
        self._fed = 0
        self._spent = 0.0

    def _utterance(self) -> EmbeddingStream:
        if self._stream is None:
            self._stream = self.embedding.stream()
            self._stream.add(np.zeros(LEAD_IN_SAMPLES, np.int16))
        return self._stream

    def feed(self, samples: np.ndarray) -> None:
        """The embedding is made as the audio comes, so little is left to do at the end."""
        began = time.process_time()
        samples = np.asarray(samples, dtype=np.int16)
        self._utterance().add(samples)
        self._fed += len(samples)
        self._spent += time.process_time() - began

    def peek(self) -> Recognition:
        """The call the utterance so far already holds: heard as if it ended now, but empty
        while the call's last word is spelt only at the very end of the audio (it may be
        the first part of a longer word, "four" of "fourteen")."""
        stream = self._utterance()
        heard = self._heard(stream.vectors(TAIL_SAMPLES))
        decoded = heard.details.get("decoded")
        if decoded is not None and decoded.last_word_frame > stream.windows - 1 - SAID_BEFORE:
            return Recognition("", details=heard.details)
        return heard

    def finish(self) -> Recognition:
        began = time.process_time()
        result = self._heard(self._utterance().vectors(TAIL_SAMPLES))
        finished = time.process_time() - began
        heard = replace(result, audio_seconds=self._fed / SAMPLE_RATE,
                        decode_seconds=self._spent + finished, finish_seconds=finished)
        self.start()
        return heard

    def decode(self, samples: np.ndarray) -> Recognition:
        self.start()
        self.feed(samples)
        return self.finish()

    def features(self, audio: np.ndarray) -> np.ndarray:
        return self.embedding.embed(padded(np.asarray(audio, np.int16)))

    def hear(self, audio: np.ndarray) -> Recognition:
        """One utterance heard as the calls expected now."""
        return self._heard(self.features(audio))

    def _heard(self, feats: np.ndarray) -> Recognition:
        log_probs = self.network.log_probs(feats)
        decoded = self.graph(self._expect).decode(log_probs)
        if not decoded.calls:
            return Recognition("", confidence=0.0, details={"decoded": decoded})
        found = measures(decoded)
        confidence = self.calibration.confidence(found)
        if self._hand_sizes:
            # A hand is read at a size the game allows, as sure as the grammar the confidence
            # was fitted on found the utterance: fewer readings to choose from would only
            # make a wrong one look surer.
            decoded = self.graph(self._expect, self._hand_sizes).decode(log_probs)
        best = decoded.calls[0][1]
        # Alternatives the audio explains nearly as well (within a factor of e^3): others
        # are no real second guess, and a referee that prefers a guess that makes sense
        # must not reach that far.
        calls = [(text, score) for text, score in decoded.calls if score > best - ALTERNATIVE_REACH]
        texts = [text for text, _ in calls]
        likelihood = {text: float(np.exp(score - best)) for text, score in calls}
        if any("{name}" in t for t in texts):
            who = self.names.match(feats, decoded.name_frames) if self.names else None
            if who is None:  # a name call with no one to name cannot be a call
                texts = [t for t in texts if "{name}" not in t]
            else:
                player, name_confidence = who
                if "{name}" in texts[0]:
                    confidence *= name_confidence
                named = {t: t.replace("{name}", player.lower()) for t in texts}
                likelihood = {named[t]: v for t, v in likelihood.items()}
                texts = [named[t] for t in texts]
        scores = [likelihood.get(t, 0.0) for t in texts]
        if not texts:
            return Recognition("", confidence=0.0, details={"decoded": decoded, "measures": found})
        return Recognition(texts[0], tuple(texts[1:]), confidence,
                           alternative_scores=tuple(scores[1:]),
                           details={"decoded": decoded, "measures": found},
                           may_go_on=decoded.goes_on)


@dataclass
class NameMatcher:
    """Which player's name was said. At start-up each name is said in a call ("Ana calza")
    and before dice ("Ana five five three") by several espeak-ng voices; the frames the
    network spells `<name>` there are the name's templates. A heard name's frames are
    compared with each player's templates by dynamic time warping over the embedding vectors
    (cosine distance)."""

    players: tuple[str, ...]
    embedding: SpeechEmbedding
    network: CallNetwork
    voices: tuple[str, ...] = ("en-us", "en", "en-us+f3", "en-gb-x-rp+m3", "en-029+m1", "en-us+f5")
    # What each name is said before. The 775 ms windows that hold a name hold what follows it
    # too, so a name before dice is matched best by a template before dice. With a network
    # that places names loosely (one trained on a third of the corpus), calza templates alone
    # named the right player 31 times in 61 for piper's voices and 18 in 45 for espeak-ng's;
    # with "five five three" too, 49 and 32 ("five five three one two": 43 and 32, and
    # slower). The shipped network named them right either way. It doubles the start-up.
    carriers: tuple[tuple[str, ...], ...] = (("calza",), ("five", "five", "three"))
    templates: dict[str, list[np.ndarray]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for player in self.players:
            self.templates[player] = []
        for carrier in self.carriers:
            said = Graph()
            said.add_phrase([NAME, *carrier], "{name} " + " ".join(carrier))
            align = CompiledGraph(said)  # where the name is in what we know was said
            for player in self.players:
                for voice in self.voices:
                    audio = _espeak(f"{player} {' '.join(carrier)}", voice)
                    if audio is None:
                        continue
                    feats = self.embedding.embed(padded(audio))
                    span = align.decode(self.network.log_probs(feats)).name_frames
                    if span is not None:
                        self.templates[player].append(_unit(feats[_widen(span, len(feats))]))

    def match(self, feats: np.ndarray, span: tuple[int, int] | None) -> tuple[str, float] | None:
        """The player named, and how sure (0.5 to 1) from how much closer it is than the next."""
        if not self.players:
            return None
        if len(self.players) == 1:
            return self.players[0], 1.0
        if span is None or not any(self.templates.values()):
            return None
        segment = _unit(feats[_widen(span, len(feats))])
        costs = {p: min((_dtw(segment, t) for t in ts), default=np.inf)
                 for p, ts in self.templates.items()}
        ranked = sorted(costs, key=costs.get)
        best, second = costs[ranked[0]], costs[ranked[1]]
        sureness = float(np.clip((second - best) / NAME_GAP, 0, 1))
        return ranked[0], 0.5 + 0.5 * sureness


# How much closer (in mean cosine distance per step) the best name must be than the next
# for the name to count as sure.
NAME_GAP = 0.05


def _widen(span: tuple[int, int], frames: int) -> slice:
    """The frames whose 775 ms windows hold the name: CTC marks a word in a frame or two
    as it begins, when a window still holds mostly what came before."""
    return slice(span[0], min(span[0] + NAME_FRAMES, frames))


NAME_FRAMES = 8


def _espeak(text: str, voice: str) -> np.ndarray | None:
    """`text` said by espeak-ng as 16 kHz int16, or None without espeak-ng."""
    import subprocess
    import tempfile

    from companion.listen.audio import read_wav

    with tempfile.NamedTemporaryFile(suffix=".wav") as out:
        try:
            subprocess.run(["espeak-ng", "-v", voice, "-w", out.name, text], check=True,
                           capture_output=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return read_wav(out.name)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / (np.linalg.norm(x, axis=1, keepdims=True) + 1e-9)


def _dtw(a: np.ndarray, b: np.ndarray) -> float:
    """Dynamic time warping of two unit-vector sequences: mean cosine distance per step."""
    cost = 1.0 - a @ b.T  # (len a, len b)
    acc = np.full((len(a) + 1, len(b) + 1), np.inf)
    steps = np.zeros((len(a) + 1, len(b) + 1))
    acc[0, 0] = 0.0
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            moves = ((acc[i - 1, j - 1], steps[i - 1, j - 1]), (acc[i - 1, j], steps[i - 1, j]),
                     (acc[i, j - 1], steps[i, j - 1]))
            best, n = min(moves, key=lambda m: m[0])
            acc[i, j], steps[i, j] = best + cost[i - 1, j - 1], n + 1
    return float(acc[-1, -1] / steps[-1, -1])
