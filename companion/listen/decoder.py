"""Decode the call network's output against the call grammar (CTC, Viterbi).

The grammar is a small word graph: a tree of the calls that can be said now (bids, counts,
challenges, commands), a chain for a player's dice, filler words looping before a call and
"please" after it. Each graph arc is one token; CTC lets a token last several frames and
puts optional blanks between tokens (a blank is needed between two equal tokens, as in "five
fives"... which the network spells "five", blank, "fives", so only true repeats need it).

The decoder scores every call in the grammar at once, so its alternatives come with scores,
and it also measures how well the best unconstrained spelling explains the audio: a call the
grammar explains nearly as well as anything could is confidently heard; chatter is not.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

import numpy as np

from companion.listen.tokens import BLANK, FILLERS, INDEX, NAME, UNKNOWN

NEG = -1e30


@dataclass
class Graph:
    """Nodes are ints; arcs are (source, target, token). `finals` names each node where a
    call may end with its text (text with "{name}" where a player's name goes, "{dice}"
    where the dice of a hand go)."""

    arcs: list[tuple[int, int, int]] = field(default_factory=list)
    finals: dict[int, str] = field(default_factory=dict)
    nodes: int = 1  # node 0 is the start
    _tree: dict[tuple[int, int], int] = field(default_factory=dict)  # (node, token) -> child

    def node(self) -> int:
        self.nodes += 1
        return self.nodes - 1

    def add_phrase(self, tokens: list[str], text: str) -> int:
        """Add a token path from the start, sharing the arcs the tree already has."""
        at = 0
        for token in tokens:
            key = (at, INDEX[token])
            if key not in self._tree:
                self._tree[key] = self.node()
                self.arcs.append((at, self._tree[key], INDEX[token]))
            at = self._tree[key]
        self.finals.setdefault(at, text)
        return at

    def add_hand(self, sizes: Collection[int]) -> None:
        """A name then as many dice faces as one of `sizes`: a chain, not a tree (6^5 hands)."""
        at = self.node()  # not in the tree: "<name> calza" has a path of its own
        self.arcs.append((0, at, INDEX[NAME]))
        faces = [INDEX[w] for w in ("one", "two", "three", "four", "five", "six")]
        for size in range(1, max(sizes) + 1):
            nxt = self.node()
            self.arcs.extend((at, nxt, f) for f in faces)
            if size in sizes:
                self.finals[nxt] = "{name} {dice}"
            at = nxt

    def add_fillers(self) -> None:
        """Filler words may loop before a call and "please" after one."""
        self.arcs.extend((0, 0, f) for f in sorted(FILLERS))
        please = INDEX["please"]
        self.arcs.extend((f, f, please) for f in self.finals)


@dataclass(frozen=True)
class Decoded:
    """The decoder's view of one utterance: every call's score, best first."""

    calls: list[tuple[str, float]]  # (text, log score) for the best few distinct calls
    free_score: float  # the best unconstrained spelling's log score
    frames: int
    name_frames: tuple[int, int] | None  # frames of the <name> token in the best call
    unknown_peak: float  # the largest <unk> probability of any frame
    weakest_word: float = 0.0  # the log-probability of the best call's least clear word, at its peak
    unknown_mass: float = 0.0  # <unk> probability summed over frames: about how many other words
    goes_on: bool = False  # the best call begins a longer one ("twenty" of "twenty four")
    last_word_frame: int = -1  # the frame where the best call's last word is last spelt

    @property
    def best(self) -> str:
        return self.calls[0][0] if self.calls else ""


class CompiledGraph:
    """A graph turned into CTC states with padded predecessor lists, ready for Viterbi."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        arcs = graph.arcs
        n_nodes = graph.nodes
        # State s < n_nodes: the blank state of node s; n_nodes + i: arc i's token state.
        self.tokens = np.array([INDEX[BLANK]] * n_nodes + [t for _, _, t in arcs])
        into: dict[int, list[int]] = {}
        for i, (_, b, _) in enumerate(arcs):
            into.setdefault(b, []).append(i)
        preds: list[list[int]] = [[s] for s in range(n_nodes)]
        for node in range(n_nodes):
            preds[node] += [n_nodes + i for i in into.get(node, [])]
        for i, (a, _, token) in enumerate(arcs):
            p = [n_nodes + i, a]  # itself (the token goes on) and the node's blank
            p += [n_nodes + j for j in into.get(a, []) if arcs[j][2] != token]
            preds.append(p)
        width = max(len(p) for p in preds)
        self.preds = np.full((len(preds), width), -1, dtype=np.int64)
        for s, p in enumerate(preds):
            self.preds[s, :len(p)] = p
        self.valid = self.preds >= 0
        self.preds[~self.valid] = 0
        self.initial = np.full(len(preds), False)
        self.initial[0] = True
        self.initial[[n_nodes + i for i, (a, _, _) in enumerate(arcs) if a == 0]] = True
        self.n_nodes = n_nodes
        # Where each final node's calls end: its blank state or an arc into it.
        self.final_states = {f: [f] + [n_nodes + i for i in into.get(f, [])]
                             for f in graph.finals}
        self.going_on = frozenset(a for a, b, _ in arcs if a != b)  # nodes with words after

    def viterbi(self, log_probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        T = len(log_probs)
        emit = log_probs[:, self.tokens]  # (T, S)
        score = np.where(self.initial, emit[0], NEG)
        back = np.zeros((T, len(self.tokens)), dtype=np.int32)
        rows = np.arange(len(self.tokens))
        for t in range(1, T):
            cand = np.where(self.valid, score[self.preds], NEG)
            best = cand.argmax(axis=1)
            back[t] = self.preds[rows, best]
            score = cand[rows, best] + emit[t]
        return score, back

    def path(self, back: np.ndarray, state: int) -> list[int]:
        states = [state]
        for t in range(len(back) - 1, 0, -1):
            state = back[t, state]
            states.append(state)
        return states[::-1]

    def decode(self, log_probs: np.ndarray, top: int = 5) -> Decoded:
        free = float(log_probs.max(axis=1).sum())
        unknown = np.exp(log_probs[:, INDEX[UNKNOWN]])
        unknown_peak = float(unknown.max()) if len(log_probs) else 0.0
        if len(log_probs) == 0:
            return Decoded([], free, 0, None, unknown_peak)
        score, back = self.viterbi(log_probs)
        ends = []
        for node, states in self.final_states.items():
            s = max(states, key=lambda x: score[x])
            if score[s] > NEG / 2:
                ends.append((float(score[s]), s, node))
        ends.sort(reverse=True)
        calls: list[tuple[str, float]] = []
        name_frames = None
        weakest = 0.0
        goes_on = bool(ends) and ends[0][2] in self.going_on
        last_word = -1
        for value, state, node in ends:
            text = self.graph.finals[node]
            if "{" in text or not calls:
                states = self.path(back, state)
                tokens = self._tokens(states)
                if not calls:
                    name_frames = self._name_frames(states)
                    weakest = self._weakest_word(states, log_probs)
                    last_word = self._last_word_frame(states)
                if "{dice}" in text:
                    dice = [t for t in tokens if t in _DIE_TOKENS]
                    text = text.replace("{dice}", " ".join(_TOKEN_WORD[t] for t in dice))
            if text not in (c for c, _ in calls):
                calls.append((text, value))
            if len(calls) >= top:
                break
        return Decoded(calls, free, len(log_probs), name_frames, unknown_peak, weakest,
                       float(unknown.sum()), goes_on, last_word)

    def _weakest_word(self, states: list[int], log_probs: np.ndarray) -> float:
        """Each word of the path scores the peak probability of its token over the frames
        it spans; a call is as clear as its least clear word."""
        peaks, last = [], -1
        for t, s in enumerate(states):
            if s >= self.n_nodes:
                value = log_probs[t, self.tokens[s]]
                if s != last:
                    peaks.append(value)
                else:
                    peaks[-1] = max(peaks[-1], value)
            last = s if s >= self.n_nodes else -1
        return float(min(peaks)) if peaks else 0.0

    def _last_word_frame(self, states: list[int]) -> int:
        words = [t for t, s in enumerate(states) if s >= self.n_nodes and self.tokens[s] != _PLEASE]
        return words[-1] if words else -1

    def _tokens(self, states: list[int]) -> list[int]:
        tokens, last = [], -1
        for s in states:
            if s >= self.n_nodes and s != last:
                tokens.append(int(self.tokens[s]))
            last = s if s >= self.n_nodes else -1
        return tokens

    def _name_frames(self, states: list[int]) -> tuple[int, int] | None:
        frames = [t for t, s in enumerate(states) if self.tokens[s] == INDEX[NAME] and s >= self.n_nodes]
        return (frames[0], frames[-1]) if frames else None


_PLEASE = INDEX["please"]
_TOKEN_WORD = {INDEX[w]: w for w in ("one", "two", "three", "four", "five", "six")}
_DIE_TOKENS = frozenset(_TOKEN_WORD)
