"""Which player was named: each player's name, as the speech embedding hears it, kept as
templates and compared with the stretch of a call the network spells `<name>`.

The network hears any name as `<name>` (names change every game), so telling Ana from Ben
is left to templates: each name said by espeak-ng's voices at start-up, and said by the
players themselves before the game, where they are asked to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from companion.listen.decoder import CompiledGraph, Decoded, Graph
from companion.listen.embedding import SpeechEmbedding, padded
from companion.listen.engine import Recognition
from companion.listen.errors import ModelError
from companion.listen.network import CallNetwork
from companion.listen.tokens import NAME
from companion.rules.names import for_espeak


@dataclass
class NameMatcher:
    """Which player's name was said. At start-up each name is said in a call ("Ana calza")
    and before dice ("Ana five five three") by several espeak-ng voices; the frames the
    network spells `<name>` there are the name's templates. Players who say their name before
    the game (`learn`) add templates in their own voice: a name said by its owner is told
    apart far better than by espeak-ng's. A heard name's frames are
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
    own: dict[str, dict[str, list[np.ndarray]]] = field(default_factory=dict)  # phrase -> player -> the player's own
    own_calls: dict[str, dict[str, list[np.ndarray]]] = field(default_factory=dict)  # the same, name to call's end
    _aligners: dict[str, CompiledGraph] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for player in self.players:
            self.templates[player] = []
        for carrier in self.carriers:
            for player in self.players:
                for voice in self.voices:
                    audio = _espeak(f"{player} {' '.join(carrier)}", voice)
                    if audio is not None:
                        feats = self.embedding.embed(padded(audio))
                        aligned = self.align(" ".join(carrier), self.network.log_probs(feats))
                        template = self._template(aligned, feats)
                        if template is not None:
                            self.templates[player].append(template)

    def learn(self, player: str, phrase: str, feats: np.ndarray, log_probs: np.ndarray,
              least_score: float = -np.inf) -> bool:
        """Keep the name in `feats` (the network's `log_probs` of it), the player saying
        "<player> <phrase>", as one of their templates. False when the network finds no name
        there, or reads the utterance so only with a log-likelihood under `least_score`."""
        aligned = self.align(phrase, log_probs)
        template = self._template(aligned, feats, least_score)
        if template is None:
            return False
        self.templates[player].append(template)
        self.own.setdefault(phrase, {}).setdefault(player, []).append(template)
        if phrase == "calza":  # what a calza is spotted by (spot)
            whole = self._template(aligned, feats, whole=True)
            if whole is not None:
                self.own_calls.setdefault(phrase, {}).setdefault(player, []).append(whole)
        return True

    def spot(self, feats: np.ndarray, log_probs: np.ndarray) -> str | None:
        """The player whose own "<name> calza" (`learn`) this utterance sounds just like, if
        one does, whatever the network made of it (`log_probs`): the name nearest theirs and
        far from the others', and the whole call near their calza. The name's frames alone
        are the player's own "Jo" whatever follows it ("Jo three fives" as near as "Jo
        calza"); what follows is the same "calza" for every player, so the whole call cannot
        tell the players apart."""
        if len(self.own.get("calza", {})) < 2:
            return None  # one recording, or none, has nothing to be told apart from
        aligned = self.align("calza", log_probs)
        costs = self.own_calza_costs(feats, aligned)
        if len(costs) < 2:
            return None
        (best, player), (second, _) = costs[0], costs[1]
        if best > SPOT_COST or second - best < NAME_GAP:
            return None
        return player if self.own_call_cost(feats, aligned, player) <= SPOT_COST else None

    def own_calza_costs(self, feats: np.ndarray, aligned: Decoded) -> list[tuple[float, str]]:
        """How far the name in the utterance, read as "<name> calza" (`align`), is from the name
        in each player's own "<name> calza" (mean cosine distance per step), nearest first."""
        own = self.own.get("calza", {})
        segment = self._template(aligned, feats) if own else None
        if segment is None:
            return []
        return sorted((min(_dtw(segment, t) for t in ts), p) for p, ts in own.items())

    def own_call_cost(self, feats: np.ndarray, aligned: Decoded, player: str) -> float:
        """How far the utterance, read as "<name> calza" (`align`) from the name to the call's
        end, is from the player's own "<name> calza" (mean cosine distance per step); inf with
        nothing to compare."""
        own = self.own_calls.get("calza", {}).get(player, [])
        segment = self._template(aligned, feats, whole=True) if own else None
        return np.inf if segment is None else min(_dtw(segment, t) for t in own)

    def align(self, phrase: str, log_probs: np.ndarray) -> Decoded:
        """The network's `log_probs` of an utterance read as "<name> <phrase>", whatever was said."""
        if phrase not in self._aligners:
            said = Graph()
            said.add_phrase([NAME, *phrase.split()], "{name} " + phrase)
            self._aligners[phrase] = CompiledGraph(said)
        return self._aligners[phrase].decode(log_probs)

    @staticmethod
    def _template(aligned: Decoded, feats: np.ndarray, least_score: float = -np.inf,
                  whole: bool = False) -> np.ndarray | None:
        """The frames of `feats` where `aligned` (an utterance read as "<name> <phrase>", see
        `align`) puts the name (`whole`: from the name to the phrase's end)."""
        if aligned.name_frames is None or not aligned.calls or aligned.calls[0][1] < least_score:
            return None
        if whole:
            end = max(aligned.name_frames[0] + NAME_FRAMES, aligned.last_word_frame + CALL_TAIL)
            return _unit(feats[aligned.name_frames[0]:min(end, len(feats))])
        return _unit(feats[_widen(aligned.name_frames, len(feats))])

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
# How close (mean cosine distance per step) an utterance must come to a player's own "<name>
# calza" to be spotted as it, by the name and by the whole call (CALL_TAIL). Chosen by the
# name alone on Kokoro voices heard by a network trained without them (training.names_dev):
# their own calzas came within 0.045 (9 in 10) and bare other calls said by the same voice no
# nearer than 0.113; with NAME_GAP as well, 79 of 80 calzas were spotted, none as the wrong
# player, and none of 120 other calls. The whole call is held to the same line: own calzas
# came within 0.059, other calls, after a name or not, no nearer than 0.172.
SPOT_COST = 0.1


def _widen(span: tuple[int, int], frames: int) -> slice:
    """The frames whose 775 ms windows hold the name: CTC marks a word in a frame or two
    as it begins, when a window still holds mostly what came before."""
    return slice(span[0], min(span[0] + NAME_FRAMES, frames))


NAME_FRAMES = 8
# The whole of a player's own calza runs from the name to this many frames past where the
# network spells the call's last word (NameMatcher.spot). With it, on the development set
# (training.names_dev, Kokoro voices, 8 voices x 10 players; heard by the shipped network,
# which trained on Kokoro: a check of the rule, not a figure), every one of 80 own calzas
# was still spotted as its player, and none of 72 other calls after a player's name ("Dave
# three fives"), where the name alone spotted 59 of them as that player's calza.
CALL_TAIL = 4


def sound_alikes(players: Sequence[str]) -> list[tuple[str, str]]:
    """Pairs of players whose names espeak-ng says with the same sounds (Jon and John, Sean
    and Shaun): no ear, the recogniser's included, can tell which of them was named. Empty
    without espeak-ng (nothing to compare with)."""
    said: dict[str, str] = {}
    pairs = []
    for player, key in zip(players, _sounds(players, "en")):
        if key in said:
            pairs.append((said[key], player))
        else:
            said[key] = player
    return pairs


# The words a call is made of alone, or an answer: a name said like one of them ("Know",
# "Sixx", "Wun") turns chatter that names the player ("come on, Know") into that word.
CALL_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
              "eleven", "twelve", "twenty", "thirty", "forty", "ones", "aces", "ace", "pacos", "paco",
              "twos", "threes", "fours", "fives", "sixes", "dudo", "calza", "palifico", "undo", "repeat",
              "status", "again", "yes", "yeah", "no", "nope", "right", "wrong")


def sounds_like_calls(players: Sequence[str]) -> list[tuple[str, str]]:
    """(player, word) for each name espeak-ng says with the sounds of a call word, in British
    or American English. Empty without espeak-ng."""
    alike: dict[str, str] = {}
    for accent in ("en", "en-us"):
        words = dict(zip(_sounds(CALL_WORDS, accent), CALL_WORDS))
        for player, key in zip(players, _sounds(players, accent)):
            if key in words:
                alike.setdefault(player, words[key])
    return list(alike.items())


def heard_as_yes(players: Sequence[str], hear: Callable[[np.ndarray], Recognition],
                 voices: Sequence[str] = NameMatcher.voices, sure: float = 0.5) -> list[str]:
    """The players whose name, said alone by most of `voices`, `hear` (a recogniser) takes
    for a sure "yes": talk naming them while a question waits would
    confirm a call nobody made (Jess, Les). Spelling and sounds do not tell these apart from
    names that pass; only the recogniser's ear does. Heard as "no", a name declines at
    worst, which loses nothing the caller cannot say again."""
    found = []
    for player in players:
        said = [audio for voice in voices if (audio := _espeak(player, voice)) is not None]
        yes = sum(1 for audio in said if (heard := hear(audio)).text == "yes" and heard.confidence >= sure)
        if said and 2 * yes > len(said):
            found.append(player)
    return found


def _sounds(words: Sequence[str], accent: str) -> list[str]:
    """The phonemes espeak-ng says each word with in `accent`, stress and spacing aside ("Yess"
    ends in a voiced "sz" that is heard as the "s" of "yes"); empty without espeak-ng."""
    import subprocess

    def phonemes(text: str) -> list[str]:
        said = subprocess.run(["espeak-ng", "-v", accent, "-q", "-x", text], check=True, capture_output=True,
                              text=True, timeout=10).stdout
        return ["".join(c for c in line if c.isalnum() or c in "@:&").replace("sz", "s")
                for line in said.splitlines() if line.strip()]

    try:
        # One run for them all, each its own sentence (one line of sounds each): words run
        # together would be linked ("Hannah Eve" takes an r), and a name's sounds would hang
        # on its neighbour in the seating.
        keys = phonemes(" ".join(f"{for_espeak(word)}." for word in words))
        if len(keys) != len(words):
            keys = ["".join(phonemes(for_espeak(word))) for word in words]
    except (OSError, subprocess.SubprocessError):
        return []
    return keys


def _espeak(text: str, voice: str) -> np.ndarray | None:
    """`text` said by espeak-ng as 16 kHz int16, or None where it fails for that voice.
    Without espeak-ng no name could be heard (a hand, a named calza: never a word back), so
    that is a ModelError at start-up."""
    import subprocess
    import tempfile

    from companion.listen.audio import read_wav

    with tempfile.NamedTemporaryFile(suffix=".wav") as out:
        try:
            subprocess.run(["espeak-ng", "-v", voice, "-w", out.name, for_espeak(text)], check=True,
                           capture_output=True, timeout=10)
        except FileNotFoundError:
            raise ModelError("the players' names are learnt from espeak-ng saying them, and espeak-ng is "
                             "not installed; on Debian or Ubuntu: apt-get install espeak-ng") from None
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
