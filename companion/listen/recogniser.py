"""The bundled call recogniser: speech embedding -> call network -> grammar decoder.

Speech-to-intent in the manner of Picovoice Rhino: the audio of one utterance becomes a
sequence of speech-embedding vectors (a model trained on real speech), a small network
spells it in call tokens, and the decoder finds the calls the grammar allows that explain
it best. How sure that is comes from a small calibration fitted on voices the network never
trained on. Player names change every game, so the network hears any name as `<name>`; which
player it was is settled by comparing that stretch with each name said by espeak-ng's
voices at start-up and, where the players said them before the game, by the players themselves.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from companion.calls import DudoCall, parse_call_or_none
from companion.listen.decoder import CompiledGraph, Decoded, Graph
from companion.listen.embedding import (LEAD_IN_SAMPLES, SAMPLE_RATE, TAIL_SAMPLES,
                                         EmbeddingStream, SpeechEmbedding, padded)
from companion.listen.engine import Recognition
from companion.listen.errors import ModelError
from companion.listen.names import NameMatcher, heard_as_yes, sound_alikes, sounds_like_calls
from companion.listen.network import MODEL_PATH, CallNetwork
from companion.listen.tokens import LARGEST_TOKEN_NUMBER, number_tokens
from companion.listen.vocabulary import COMMANDS as SPOKEN_COMMANDS
from companion.listen.vocabulary import MAX_COUNT
from companion.listen.vocabulary import VocabularyError, normalise_name
from companion.rules.presets import MOST_DICE
from companion.sources import Expect

ALTERNATIVE_REACH = 3.0  # log-likelihood below the best call that still counts as a guess
HAND_SIZES = frozenset(range(1, 6))  # a player holds one to five dice
# Frames (80 ms each) of audio after the one where a call's last word is spelt before the
# call counts as said, while the utterance is still open (peek).
SAID_BEFORE = 1
CONFIDENCE_PATH = Path(__file__).with_name("call_confidence.json")
# The confidence of a spotted calza: between ENGINE_THRESHOLD and ENGINE_CONFIRM, so the
# referee asks "Did you say Ana calza?" before it is applied.
SPOTTED_CONFIDENCE = 0.8
# The most a hand read at the game's sizes may be trusted where the whole grammar read another
# number of dice: under ENGINE_CONFIRM, so it is asked about (see CallRecogniser._heard).
RESIZED_CONFIDENCE = 0.8
# How far (log-likelihood) under the best reading "<name> <phrase>" may be and still be learnt,
# when the player was asked to say just that. On Kokoro voices heard by a network that never
# heard them (training.names_dev), it was at most 8.2 under the best for the phrase said, and
# 8.2 to 165 (median 48) for other calls said instead, 4 of 96 within 15; the demo's
# espeak-ng voice says "Ana calza" 13 under.
LEARN_REACH = 15.0

PLURAL = {1: ("ones", "aces", "pacos"), 2: ("twos",), 3: ("threes",), 4: ("fours",),
          5: ("fives",), 6: ("sixes",)}
SINGULAR = {1: ("one", "ace", "paco"), 2: ("two",), 3: ("three",), 4: ("four",),
            5: ("five",), 6: ("six",)}
# The commands the network has tokens for (a subset of vocabulary.COMMANDS).
COMMANDS = ("undo", "take it back", "repeat", "say again", "status", "whats the bid", "yes", "no")
assert all(c in SPOKEN_COMMANDS for c in COMMANDS)


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
        # a hand bigger than a new game allows (a journal's odd game) is said as a count: its
        # chain would grow with every die, and a million dice would fill the memory
        sayable = [n for n in hand_sizes or HAND_SIZES if n <= MOST_DICE]
        if named and sayable:
            graph.add_hand(sayable)
    for command in COMMANDS:
        graph.add_phrase(command.split(), command)
    graph.add_fillers()
    return graph


MEASURES = ("margin_free", "margin_free_per_frame", "margin_second", "posterior", "unknown_peak",
            "frames", "weakest_word", "unknown_mass")  # what `measures` gives


@dataclass(frozen=True)
class Calibration:
    """Logistic calibration of the decoder's measures into a 0..1 confidence."""

    weights: tuple[float, ...]
    bias: float
    names: tuple[str, ...] = MEASURES
    left_out: tuple[str, ...] = ()  # voice families whose clips it was not fitted on

    @classmethod
    def load(cls, path: Path = CONFIDENCE_PATH) -> "Calibration":
        try:
            data = json.loads(path.read_text())
            calibration = cls(tuple(data["weights"]), float(data["bias"]), tuple(data["features"]),
                              tuple(data.get("left_out", ())))
            problem = calibration.problem()
            if problem:
                raise ValueError(problem)
            return calibration
        except FileNotFoundError:
            raise ModelError(f"the call recogniser's calibration is missing: {path}") from None
        except OSError as err:  # a folder of that name, a file it may not read
            raise ModelError(f"cannot read the call recogniser's calibration {path}: {err.strerror or err}") from None
        except (ValueError, KeyError, TypeError) as err:
            raise ModelError(f"the call recogniser's calibration {path} is unreadable: {err}") from None

    def problem(self) -> str | None:
        """What makes it unusable (read mid-game, it would fail at the first call or weigh
        the wrong measures), or None."""
        unknown = [n for n in self.names if n not in MEASURES]
        if unknown:
            return f"it weighs measures the recogniser does not make: {', '.join(map(str, unknown))}"
        if len(self.weights) != len(self.names):
            return f"it has {len(self.weights)} weights for {len(self.names)} measures"
        numbers = (*self.weights, self.bias)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v) for v in numbers):
            return "its weights and bias must be finite numbers"
        return None

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
    max_count: int = MAX_COUNT
    model: Path = MODEL_PATH
    calibration: Path = CONFIDENCE_PATH

    @classmethod
    def for_network(cls, model: Path, max_count: int = MAX_COUNT) -> "RecogniserSettings":
        """Settings for another network: with the confidence fitted for it when there is one
        (`NAME.confidence.json` beside `NAME.npz`), else the shipped one. A network trained
        without a voice family is heard with a confidence fitted without that family too."""
        own = Path(model).with_suffix(".confidence.json")
        return cls(max_count=max_count, model=Path(model),
                   calibration=own if own.exists() else CONFIDENCE_PATH)

    def families_the_confidence_saw(self) -> list[str]:
        """The voice families the network never trained on whose clips its confidence was
        fitted on: figures on them measure the confidence's memory, not hearing."""
        left_out = CallNetwork.load(self.model).card.get("left_out", [])
        return [f for f in left_out if f not in Calibration.load(self.calibration).left_out]


class CallRecogniser:
    """The Engine the game listens with by default (see engine.Engine)."""

    name = "bundled call recogniser"

    def __init__(self, players: Sequence[str] = (), settings: RecogniserSettings = RecogniserSettings(),
                 names: NameMatcher | None = None) -> None:
        self.settings = settings
        self.players = tuple(players)
        for p in self.players:
            normalise_name(p)  # letters only, as for every engine
        if not 1 <= settings.max_count <= LARGEST_TOKEN_NUMBER:
            raise VocabularyError(f"the bundled call recogniser hears counts up to {LARGEST_TOKEN_NUMBER}, "
                                  f"not {settings.max_count}")
        alike = sound_alikes(self.players) if names is None else []
        if alike:
            one, other = alike[0]
            others = [p for p in self.players if p != other]
            raise _another_name(f"{one} and {other} sound the same, so a call by name cannot tell "
                                f"them apart: one of you,", other,
                                lambda name: not any(name in pair for pair in sound_alikes([*others, name])),
                                "both")
        like_calls = sounds_like_calls(self.players) if names is None else []
        if like_calls:
            player, word = like_calls[0]
            raise _another_name(f"{player} sounds like \"{word}\", a word of the calls, so talk that names "
                                f"{player} would be heard as {word}:", player,
                                lambda name: not sounds_like_calls([name]))
        self.network = CallNetwork.load(settings.model)
        self.calibration = Calibration.load(settings.calibration)
        self.embedding = SpeechEmbedding()
        self.names = names if names is not None else (
            NameMatcher(self.players, self.embedding, self.network) if self.players else None)
        self._graphs: dict[tuple[Expect, frozenset[int]], CompiledGraph] = {}
        self._expect = Expect.ANY
        self._hand_sizes: frozenset[int] = frozenset()
        self._learning: tuple[str, str] | None = None  # (player, phrase) said next
        self.start()
        yes = heard_as_yes(self.players, self.hear) if names is None else []
        if yes:
            raise _another_name(f"{yes[0]} said alone is heard as \"yes\", so talk that names {yes[0]} "
                                f"while I ask a question would answer it:", yes[0],
                                lambda name: not heard_as_yes([name], self.hear))

    def graph(self, expect: Expect, hand_sizes: frozenset[int] = frozenset()) -> CompiledGraph:
        key = (expect, hand_sizes)
        if key not in self._graphs:
            self._graphs[key] = CompiledGraph(call_graph(expect, self.settings.max_count,
                                                         bool(self.players), hand_sizes))
        return self._graphs[key]

    def expect(self, what: Expect, hand_sizes: frozenset[int] = frozenset()) -> None:
        # A name asked for and never heard (its tries ran out) is not learnt from what is said next
        self._expect, self._hand_sizes, self._learning = what, frozenset(hand_sizes), None

    def learn_name(self, player: str, phrase: str) -> bool:
        if self.names is None or player not in self.names.players:
            return False
        self._learning = (player, phrase)
        return True

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
        feats = self._utterance().vectors(TAIL_SAMPLES)
        result = self._learnt(feats) if self._learning else self._heard(feats)
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
        feats = self.features(audio)
        return self._learnt(feats) if self._learning else self._heard(feats)

    def _learnt(self, feats: np.ndarray) -> Recognition:
        """An utterance that should be a player's name before a phrase, learnt as their name
        when it can be heard so: given back as that call, sure. Anything else is heard as
        usual (the referee asks again); an utterance that holds no call leaves the learning
        on, as chatter is passed over."""
        player, phrase = self._learning
        log_probs = self.network.log_probs(feats)
        heard = self._heard(feats, log_probs)
        decoded = heard.details.get("decoded")
        if decoded is None or not decoded.calls:
            return heard
        self._learning = None
        # The player was asked for these words, so the name need not be the best reading
        # (a network that never heard this voice may miss the name, or hear "Ben" as
        # "one"), only a near one: within LEARN_REACH of the best.
        if not self.names.learn(player, phrase, feats, log_probs, decoded.calls[0][1] - LEARN_REACH):
            return heard
        return Recognition(f"{player.lower()} {phrase}", confidence=1.0, details=heard.details)

    def _heard(self, feats: np.ndarray, log_probs: np.ndarray | None = None) -> Recognition:
        if log_probs is None:
            log_probs = self.network.log_probs(feats)
        decoded = self.graph(self._expect).decode(log_probs)
        if not decoded.calls:
            return Recognition("", confidence=0.0, details={"decoded": decoded})
        found = measures(decoded)
        confidence = self.calibration.confidence(found)
        goes_on = decoded.goes_on
        if self._hand_sizes:
            # A hand is read at a size the game allows, as sure as the grammar the confidence
            # was fitted on found the utterance: fewer readings to choose from would only
            # make a wrong one look surer.
            heard_as, heard_goes_on = decoded.calls[0][0], decoded.goes_on
            decoded = self.graph(self._expect, self._hand_sizes).decode(log_probs)
            resized = bool(decoded.calls) and decoded.calls[0][0] != heard_as
            if resized:
                # ... and where that is not what the whole grammar heard (a die dropped or
                # added to fit: "Cleo two four six" from a player the game thinks holds two),
                # the confidence was another reading's: asked about, never taken unasked.
                confidence = min(confidence, RESIZED_CONFIDENCE)
            # More may follow where the whole grammar's reading goes on: a hand said so far
            # ("Ana six", the rest after a pause) that the game's sizes read as a count.
            goes_on = decoded.goes_on or (resized and heard_goes_on)
        best = decoded.calls[0][1]
        # Alternatives the audio explains nearly as well (within a factor of e^3): others
        # are no real second guess, and a referee that prefers a guess that makes sense
        # must not reach that far.
        calls = [(text, score) for text, score in decoded.calls if score > best - ALTERNATIVE_REACH]
        texts = [text for text, _ in calls]
        likelihood = {text: float(np.exp(score - best)) for text, score in calls}
        details = {"decoded": decoded, "measures": found}
        if (self.names is not None and self._expect is not Expect.COUNT and "{name}" not in texts[0]
                and not isinstance(parse_call_or_none(texts[0]), DudoCall)):
            spotted = details["spotted"] = self.names.spot(feats, log_probs)
            if spotted is not None:
                # A calza the network heard without its name, or not at all, in a voice
                # whose own "<name> calza" it sounds just like: never applied unasked. Not
                # where the network heard a name, nor a dudo: the frames compared are the
                # name's, the player's own "Jo" whatever follows it, so "Jo dudo" (heard as
                # "{name} dudo", or as "dudo" with a short name lost) is as near as "Jo calza".
                texts = [f"{spotted.lower()} calza", *(t for t in texts if "{name}" not in t)]
                likelihood = {t: likelihood.get(t, 0.0) for t in texts}
                confidence = SPOTTED_CONFIDENCE
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
            return Recognition("", confidence=0.0, details=details)
        return Recognition(texts[0], tuple(texts[1:]), confidence,
                           alternative_scores=tuple(scores[1:]), details=details,
                           may_go_on=goes_on)


def _another_name(why: str, name: str, fits: Callable[[str], bool], kept: str = "it") -> VocabularyError:
    """A name the bundled recogniser cannot hear safely, refused with what to do instead: the
    first of Name-B, Name-C ... that passes the same check ("Jess-B" is still heard as "yes")."""
    like = next((f"{name}-{letter}" for letter in "BCDEFG" if fits(f"{name}-{letter}")), None)
    return VocabularyError(f"{why} please take another name ({f'like {like}' if like else 'a longer one'}); "
                           f"a game already started with {kept} goes on typed (--input text)")
