"""The bundled engine: pocketsphinx with a call grammar, measured against a phone loop.

A grammar-only decoder forces every sound into some call, so a second decoder runs a free
phone loop over the same audio. Real calls are explained almost as well by the grammar as
by the phone loop; chatter forced into a call is explained much worse, and lasts far longer
than the call's phones would take. Those numbers, and where the call's words sit against
what the phone loop voiced, make the confidence (0..1): a logistic model fitted on part of
the benchmark corpus (SphinxSettings, confidence_features).
(A garbage phone loop inside the grammar was tried first: it was 10x slower and won even
on real calls.)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from companion.calls import parse_call_or_none
from companion.listen.engine import Recognition
from companion.listen.errors import ModelError
from companion.listen.vocabulary import (
    SPANISH_PRONUNCIATIONS, VocabularyError, grammar_words, jsgf, letter_to_sound,
    normalise_name)

ALLPHONE_LM = "en-us-phone.lm.bin"


@dataclass(frozen=True)
class SphinxSettings:
    # The confidence is a logistic model of "the call heard is the call said" over the
    # measurements in confidence_features (FEATURES), chiefly:
    #  - margin: how much worse (nats per frame of speech) the best call explains the audio
    #    than a free phone loop does; near zero or positive for real calls;
    #  - cover / fill_inside: how much of what the phone loop voiced between the call's first
    #    and last word the words themselves explain; chatter forced into a call leaves most
    #    of itself to fillers, while babble before or after a real call costs nothing;
    #  - stretch / squeeze: the words' span against how long the call's phones should take;
    #  - word_ac: the words' acoustic score per frame.
    # Fitted by `companion bench speech --fit-confidence` on four of the seven benchmark
    # voices (the other three are held out); centre and slope put 0.5 (ENGINE_THRESHOLD)
    # where silent errors on those voices stay under 1%, and 0.7 (ENGINE_CONFIRM) under 0.15%.
    weights: tuple[float, ...] = (0.4615, 3.1928, -4.3346, -9.864, 0.1989, -0.4641, 4.8635,
                                  12.0944, -0.5013, 1.4952, -2.6478, 0.1915, 1.1816, -1.8007,
                                  -0.1448)
    bias: float = 7.2661
    centre: float = 1.4174
    slope: float = 0.429
    nbest: int = 0  # n-best paths as alternatives; costly (A* over the lattice), rarely new
    leads: tuple[str, ...] = ("i bid", "um")  # optional words before a call
    hands: bool = True  # "Ana one five five three two"
    # Noise and silence fillers must be cheap, or babble between words becomes words.
    options: tuple[tuple[str, object], ...] = (("fillprob", 0.1), ("silprob", 0.1))
    hmm: str | None = None  # acoustic model folder; None = the one bundled with pocketsphinx
    dict: str | None = None


def _model_paths(settings: SphinxSettings) -> tuple[str, str, str]:
    try:
        import pocketsphinx
    except ImportError as err:  # a dependency, but say so plainly if it is broken
        raise ModelError(f"pocketsphinx is not installed ({err}); pip install pocketsphinx") from None
    base = pocketsphinx.get_model_path()
    return (settings.hmm or f"{base}/en-us/en-us",
            settings.dict or f"{base}/en-us/cmudict-en-us.dict", f"{base}/en-us/{ALLPHONE_LM}")


class SphinxEngine:
    """Two decoders over the same audio: the call grammar, and a phone loop as a yardstick."""

    name = "pocketsphinx"

    def __init__(self, players: Sequence[str] = (), settings: SphinxSettings = SphinxSettings()):
        import pocketsphinx

        self.settings = settings
        self.players = tuple(players)
        hmm, dictionary, phone_lm = _model_paths(settings)
        try:
            self._decoder = pocketsphinx.Decoder(hmm=hmm, dict=dictionary, lm=None,
                                                 loglevel="FATAL", bestpath=False,
                                                 **dict(settings.options))
            self._phones = pocketsphinx.Decoder(hmm=hmm, dict=dictionary, lm=None,
                                                allphone=phone_lm, loglevel="FATAL")
        except (RuntimeError, ValueError, OSError) as err:
            raise ModelError(f"cannot load the pocketsphinx model from {hmm}: {err}") from None
        self._add_pronunciations()
        try:
            self._decoder.add_jsgf_string("calls", self.grammar())
        except (RuntimeError, ValueError) as err:
            raise ModelError(f"the call grammar was refused by pocketsphinx: {err}") from None
        self._decoder.activate_search("calls")
        self._cpu = 0.0
        self._samples = 0

    # --- set-up ------------------------------------------------------------------------
    def _add(self, word: str, phones: str) -> None:
        """Add a pronunciation, as an alternative if the word is already known."""
        d = self._decoder
        name, k = word, 1
        while d.lookup_word(name) is not None:
            if d.lookup_word(name) == phones:
                return
            k += 1
            name = f"{word}({k})"
        d.add_word(name, phones, False)

    def _add_pronunciations(self) -> None:
        for word, prons in SPANISH_PRONUNCIATIONS.items():
            for phones in prons:
                self._add(word, phones)
        for player in self.players:
            word = normalise_name(player)
            if self._decoder.lookup_word(word) is None:
                self._add(word, letter_to_sound(word))
        missing = sorted(w for w in grammar_words(self.players)
                         if self._decoder.lookup_word(w) is None)
        if missing:
            raise VocabularyError(f"no pronunciation for: {', '.join(missing)}")

    def grammar(self) -> str:
        return jsgf(self.players, self.settings.leads, self.settings.hands)

    # --- decoding ----------------------------------------------------------------------
    def start(self) -> None:
        self._decoder.start_utt()
        self._phones.start_utt()
        self._cpu = 0.0
        self._samples = 0

    def feed(self, samples: np.ndarray) -> None:
        t = time.perf_counter()
        data = np.asarray(samples, dtype=np.int16).tobytes()
        self._decoder.process_raw(data, False, False)
        self._phones.process_raw(data, False, False)
        self._samples += len(samples)
        self._cpu += time.perf_counter() - t

    def finish(self) -> Recognition:
        t = time.perf_counter()
        d, p = self._decoder, self._phones
        d.end_utt()
        p.end_utt()
        hyp, phone_hyp = d.hyp(), p.hyp()
        frames = max(1, d.n_frames())
        best = _clean(hyp.hypstr) if hyp is not None else ""
        paths: list[str] = []
        if best and self.settings.nbest:
            for i, h in enumerate(d.nbest()):
                if i >= self.settings.nbest:
                    break
                text = _clean(h.hypstr) if h is not None else ""
                if text and text not in paths:
                    paths.append(text)
        # Per frame of speech, not of the whole recording: silence costs both decoders the
        # same, and dividing by it would make short calls in long files look better.
        speech = sum(seg.end_frame - seg.start_frame + 1 for seg in (d.seg() or ())
                     if not seg.word.startswith(("<", "[", "+")))
        margin = (_log_score(hyp) - _log_score(phone_hyp)) / max(10, speech or frames)
        # How long the phone loop heard speech for, against how long the call should take.
        voiced = sum(seg.end_frame - seg.start_frame + 1 for seg in (p.seg() or ())
                     if seg.word not in ("SIL", "+NSN+", "+SPN+"))
        n_phones = sum(len((d.lookup_word(w) or "").split()) for w in best.split())
        extra = _span_features(d.seg() or (), p.seg() or (), frames)
        details = {"raw": hyp.hypstr if hyp else "", "margin": round(margin, 4),
                   "voiced": voiced, "speech": speech, "frames": frames, "n_phones": n_phones,
                   "nbest": paths, "phones": phone_hyp.hypstr if phone_hyp else "", **extra}
        text, alternatives, confidence = self._judge(best, paths, details)
        finish = time.perf_counter() - t
        return Recognition(text, alternatives, confidence, self._samples / 16000,
                           self._cpu + finish, finish, details)

    def decode(self, samples: np.ndarray) -> Recognition:
        self.start()
        self.feed(samples)
        return self.finish()

    def _judge(self, best: str, paths: list[str], details: dict
               ) -> tuple[str, tuple[str, ...], float]:
        if not best:
            return "", (), 0.0
        s = self.settings
        logit = sum(w * f for w, f in zip(s.weights, confidence_features(details))) + s.bias
        confidence = 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, s.slope * (logit - s.centre)))))
        # Other n-best paths that mean a different call make the best one less certain.
        mine = parse_call_or_none(best, self.players)
        others = [parse_call_or_none(p, self.players) for p in paths[1:]]
        if any(c is not None and c != mine for c in others):
            confidence *= 0.9
        alternatives = tuple(p for p in paths if p != best)
        return best, alternatives, max(0.0, min(1.0, confidence))


FEATURES = ("margin", "short_cover", "over_cover", "fill_inside", "noise_outside", "stretch",
            "squeeze", "word_ac", "log_phones", "old_cover", "old_stretch", "margin_below_0",
            "lead", "trail", "log_span")


def confidence_features(details: dict) -> list[float]:
    """The numbers the confidence is a logistic function of (names in FEATURES), from a
    Recognition's details. Shared by the engine and the fitting script in the benchmark."""
    margin = float(details.get("margin", 0.0))
    n_phones = max(1, int(details.get("n_phones", 1)))
    span = max(1, int(details.get("span", 0)))
    word_frames = int(details.get("word_frames", 0))
    voiced_in = max(1, int(details.get("voiced_in", 0)))
    frames = max(1, int(details.get("frames", 1)))
    cover = word_frames / voiced_in  # the words' frames against what the phone loop voiced
    expected = n_phones * 0.075 + 0.1
    stretch = math.log(span / 100 / expected)
    old_cover = int(details.get("speech", 0)) / max(1, int(details.get("voiced", 0)))
    old_stretch = math.log(max(1, int(details.get("voiced", 0))) / 100 / expected)
    return [margin, min(0.0, cover - 1.0), max(0.0, min(1.0, cover - 1.0)),
            (span - word_frames) / span, int(details.get("voiced_out", 0)) / frames,
            max(0.0, stretch), min(0.0, stretch), float(details.get("word_ac", 0.0)) / 10,
            math.log(n_phones), min(0.0, old_cover - 0.95), max(0.0, old_stretch - 0.7),
            min(0.0, margin), int(details.get("lead", 0)) / frames,
            int(details.get("trail", 0)) / frames, math.log(span)]


def _span_features(words, phones, frames: int) -> dict:
    """Where the call's words sit, and what the phone loop heard inside and outside them.

    Noise around a call (babble before or after it) is voiced to the phone loop but has
    nothing to do with the call; noise and silence absorbed between the words does."""
    spans = [(w.start_frame, w.end_frame, w.ascore) for w in words
             if w.start_frame >= 0 and not w.word.startswith(("<", "[", "+", "("))]
    if not spans:
        return {"span": 0, "word_frames": 0, "voiced_in": 0, "voiced_out": 0, "word_ac": 0.0}
    first, last = min(a for a, _, _ in spans), max(b for _, b, _ in spans)
    word_frames = sum(b - a + 1 for a, b, _ in spans)
    voiced_in = voiced_out = 0
    for seg in phones:
        if seg.word in ("SIL", "+NSN+", "+SPN+") or seg.start_frame < 0:
            continue
        inside = max(0, min(seg.end_frame, last) - max(seg.start_frame, first) + 1)
        voiced_in += inside
        voiced_out += seg.end_frame - seg.start_frame + 1 - inside
    ac = sum(math.log(c) * 1024.0 if c > 0 else -50.0 * (b - a + 1) for a, b, c in spans)
    return {"span": last - first + 1, "word_frames": word_frames, "voiced_in": voiced_in,
            "voiced_out": voiced_out, "word_ac": round(ac / max(1, word_frames), 4),
            "lead": first, "trail": frames - 1 - last}


def _log_score(hyp) -> float:
    """The path score in nats. The Python API hands it back as exp(score) in a log base
    of 1.0001 with senone scores shifted by 10 bits, so undo both."""
    if hyp is None or hyp.score <= 0.0:
        return -1e6
    return math.log(hyp.score) * 1024.0


def _clean(hypstr: str) -> str:
    """Drop fillers and alternative-pronunciation marks."""
    return " ".join(w.split("(")[0] for w in hypstr.split() if not w.startswith(("<", "[")))
