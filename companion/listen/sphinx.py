"""The bundled engine: pocketsphinx with a call grammar, measured against a phone loop.

A grammar-only decoder forces every sound into some call, so a second decoder runs a free
phone loop over the same audio. Real calls are explained almost as well by the grammar as
by the phone loop; chatter forced into a call is explained much worse, and lasts far longer
than the call's phones would take. Those numbers, and where the call's words sit against
what the phone loop voiced, and how far the phone loop's own phones are from the call's, make
the confidence (0..1), with how clearly a bid or count beat the same words with another
count or face (a third decoder, held to each in turn): a small network fitted on a corpus of its own
(SphinxSettings, confidence_features, companion/listen/confidence.py).
(A garbage phone loop inside the grammar was tried first: it was 10x slower and won even
on real calls.)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from companion.calls import FACE_WORDS, NUMBER_WORDS, BidCall, NumberCall, parse_call_or_none
from companion.listen.confidence import ConfidenceModel, ConfidenceModelError
from companion.listen.engine import Recognition
from companion.listen.errors import ModelError
from companion.listen.vocabulary import (
    FACE_TERMS, MAX_COUNT, SPANISH_PRONUNCIATIONS, VocabularyError, count_words, grammar_words, jsgf,
    letter_to_sound, normalise_name)
from companion.sources import Expect

ALLPHONE_LM = "en-us-phone.lm.bin"
CONFIDENCE_MODEL = Path(__file__).with_name("sphinx_confidence.json")
PHONE_FILLERS = ("SIL", "+NSN+", "+SPN+")  # what the phone loop hears that is not speech


@dataclass(frozen=True)
class SphinxSettings:
    # The confidence is a small network (companion/listen/confidence.py) over the
    # measurements in confidence_features (FEATURES), chiefly:
    #  - margin: how much worse (nats per frame of speech) the best call explains the audio
    #    than a free phone loop does; near zero or positive for real calls;
    #  - cover / fill_inside: how much of what the phone loop voiced between the call's first
    #    and last word the words themselves explain; chatter forced into a call leaves most
    #    of itself to fillers, while babble before or after a real call costs nothing;
    #  - stretch / squeeze: the words' span against how long the call's phones should take;
    #  - phone_err: how far the phone loop's phones inside the call are from the words' own;
    #  - word_ac, and each word's path probability (its acoustic times language score, as
    #    pocketsphinx reports it: not a lattice posterior, whose lattice takes 0.2 to 2 s
    #    to build, far over the latency budget);
    #  - level_peak / level_mid: how far loud and middle frames stand above the quietest
    #    (a rough signal-to-noise figure: the same fit means more in a quiet room);
    #  - rival_margin: how much better a bid or count explains its audio than its rivals
    #    (see `rivals` below).
    # Fitted by `companion bench speech --fit-confidence` on a training corpus of its own
    # (other voices, chatter and babble than the benchmark's), which places 0.5
    # (ENGINE_THRESHOLD) where silent errors there stay under 0.5% and 0.7 (ENGINE_CONFIRM)
    # under 0.15%.
    confidence_model: str | None = None  # a model JSON; None = the one shipped here
    # Decode and measure only, every confidence 0: how rows are gathered to fit a new
    # confidence, when the shipped one may not match the measurements any more.
    measure_only: bool = False
    nbest: int = 0  # n-best paths as alternatives; costly (A* over the lattice), rarely new
    leads: tuple[str, ...] = ("i bid", "um")  # optional words before a call
    hands: bool = True  # "Ana one five five three two"
    max_count: int = MAX_COUNT  # the largest count listened for: the most dice at the table
    # Noise and silence fillers must be cheap, or babble between words becomes words. A
    # wider word beam than pocketsphinx's 7e-29 keeps the right word alive in noise (raw
    # accuracy on a quarter of the training corpus: babble 12 dB 41 -> 44 of 87 calls, at
    # about the same real-time factor).
    options: tuple[tuple[str, object], ...] = (("fillprob", 0.1), ("silprob", 0.1), ("wbeam", 1e-40))
    # Score a heard bid or count against its rivals (the same words with another count, or
    # another face): the call's stretch of audio is decoded once held to the heard call and
    # once to its rivals, and the difference per frame (rival_margin) is a confidence input.
    # A fit in noise is poor for every call, and this asks only whether the call beat its
    # neighbours. With it the refitted confidence passed 6 to 8 points more of the noisy
    # calls at the same silent error rate. About 45 ms a call.
    rivals: bool = True
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
            self._rival = pocketsphinx.Decoder(hmm=hmm, dict=dictionary, lm=None,
                                               loglevel="FATAL", bestpath=False,
                                               **dict(settings.options)) if settings.rivals else None
        except (RuntimeError, ValueError, OSError) as err:
            raise ModelError(f"cannot load the pocketsphinx model from {hmm}: {err}") from None
        self._add_pronunciations(self._decoder)
        if self._rival is not None:
            self._add_pronunciations(self._rival)
            try:  # the rival decoder rests on this search between calls
                self._rival.add_jsgf_string("idle", "#JSGF V1.0;\ngrammar idle;\npublic <idle> = dudo;\n")
                self._rival.activate_search("idle")
            except (RuntimeError, ValueError) as err:
                raise ModelError(f"the rival grammar was refused by pocketsphinx: {err}") from None
        # One search per moment of the game; switching between them costs nothing.
        try:
            for what in Expect:
                self._decoder.add_jsgf_string(what.value, self.grammar(what))
        except (RuntimeError, ValueError) as err:
            raise ModelError(f"the call grammar was refused by pocketsphinx: {err}") from None
        self._expect = Expect.ANY
        self._decoder.activate_search(Expect.ANY.value)
        self._confidence: ConfidenceModel | None = None
        if not settings.measure_only:
            try:
                self._confidence = ConfidenceModel.load(
                    settings.confidence_model or CONFIDENCE_MODEL, FEATURES)
            except ConfidenceModelError as err:
                raise ModelError(str(err)) from None
        self._cpu = 0.0
        self._samples = 0
        self._levels = FrameLevels()
        self._audio: list[bytes] = []  # this utterance's samples, for the rival scoring

    # --- set-up ------------------------------------------------------------------------
    @staticmethod
    def _add(d, word: str, phones: str) -> None:
        """Add a pronunciation, as an alternative if the word is already known."""
        name, k = word, 1
        while d.lookup_word(name) is not None:
            if d.lookup_word(name) == phones:
                return
            k += 1
            name = f"{word}({k})"
        d.add_word(name, phones, False)

    def _add_pronunciations(self, d) -> None:
        for word, prons in SPANISH_PRONUNCIATIONS.items():
            for phones in prons:
                self._add(d, word, phones)
        for player in self.players:
            word = normalise_name(player)
            if d.lookup_word(word) is None:
                self._add(d, word, letter_to_sound(word))
        missing = sorted(w for w in grammar_words(self.players, self.settings.max_count)
                         if d.lookup_word(w) is None)
        if missing:
            raise VocabularyError(f"no pronunciation for: {', '.join(missing)}")

    def grammar(self, expect: Expect = Expect.ANY) -> str:
        return jsgf(self.players, self.settings.leads, self.settings.hands, expect,
                    self.settings.max_count)

    # --- decoding ----------------------------------------------------------------------
    def expect(self, what: Expect) -> None:
        """Listen for these calls from the next utterance on."""
        self._expect = what

    def start(self) -> None:
        if self._decoder.current_search() != self._expect.value:
            self._decoder.activate_search(self._expect.value)
        self._decoder.start_utt()
        self._phones.start_utt()
        self._cpu = 0.0
        self._samples = 0
        self._levels = FrameLevels()
        self._audio = []

    def feed(self, samples: np.ndarray) -> None:
        t = time.perf_counter()
        data = np.asarray(samples, dtype=np.int16).tobytes()
        self._decoder.process_raw(data, False, False)
        self._phones.process_raw(data, False, False)
        self._levels.add(samples)
        self._audio.append(data)
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
        words, phones = list(d.seg() or ()), list(p.seg() or ())
        # Per frame of speech, not of the whole recording: silence costs both decoders the
        # same, and dividing by it would make short calls in long files look better.
        speech = sum(seg.end_frame - seg.start_frame + 1 for seg in words
                     if not seg.word.startswith(("<", "[", "+")))
        margin = (_log_score(hyp) - _log_score(phone_hyp)) / max(10, speech or frames)
        # How long the phone loop heard speech for, against how long the call should take.
        voiced = sum(seg.end_frame - seg.start_frame + 1 for seg in phones
                     if seg.word not in PHONE_FILLERS)
        n_phones = sum(len((d.lookup_word(w) or "").split()) for w in best.split())
        extra = _span_features(words, phones, frames)
        extra.update(_agreement_features(words, phones, d.lookup_word))
        extra.update(self._levels.contrast())
        extra.update(self._rival_features(best, words))
        details = {"raw": hyp.hypstr if hyp else "", "margin": round(margin, 4),
                   "voiced": voiced, "speech": speech, "frames": frames, "n_phones": n_phones,
                   "nbest": paths, "phones": phone_hyp.hypstr if phone_hyp else "", **extra}
        text, alternatives, confidence = self._judge(best, paths, details)
        finish = time.perf_counter() - t
        return Recognition(text, alternatives, confidence, self._samples / 16000,
                           self._cpu + finish, finish, details)

    def _rival_features(self, best: str, words) -> dict:
        """How much better the heard bid or count explains its stretch of audio than the best
        of its rivals (nats per frame), as {"rivalled": 1, "rival_margin": m}; NOT_RIVALLED for
        other calls, or when the rival decoder cannot score it."""
        grammars = rival_grammars(best, self.players, self.settings.max_count)
        spans = _call_words(words)
        if self._rival is None or grammars is None or not spans:
            return dict(NOT_RIVALLED)
        # the call's words with a little room either side (half a second of babble before a
        # call would otherwise weigh as much as the call)
        first = max(0, spans[0].start_frame - RIVAL_ROOM)
        last = spans[-1].end_frame + RIVAL_ROOM
        audio = b"".join(self._audio)[first * 320:(last + 1) * 320]
        d = self._rival
        scores = []
        try:
            for name, grammar in zip(("heard", "rivals"), grammars):
                d.add_jsgf_string(name, grammar)
                d.activate_search(name)
                d.reinit_feat()  # the same audio must score the same: no normalisation carried over
                d.start_utt()
                try:
                    d.process_raw(audio, False, True)
                finally:
                    d.end_utt()
                hyp = d.hyp()
                if hyp is None:
                    return dict(NOT_RIVALLED)
                scores.append(_log_score(hyp))
        except (RuntimeError, ValueError):
            return dict(NOT_RIVALLED)  # a call it cannot score is judged without this measure
        finally:
            # searches are replaced by name on the next call: never the active one
            d.activate_search("idle")
        n = max(10, len(audio) // 320)
        return {"rivalled": 1, "rival_margin": round(max(-5.0, min(5.0, (scores[0] - scores[1]) / n)), 4)}

    def decode(self, samples: np.ndarray) -> Recognition:
        self.start()
        self.feed(samples)
        return self.finish()

    def _judge(self, best: str, paths: list[str], details: dict
               ) -> tuple[str, tuple[str, ...], float]:
        if not best:
            return "", (), 0.0
        if self._confidence is None:
            return best, tuple(p for p in paths if p != best), 0.0
        confidence = self._confidence.confidence(confidence_features(details))
        # Other n-best paths that mean a different call make the best one less certain.
        mine = parse_call_or_none(best, self.players)
        others = [parse_call_or_none(p, self.players) for p in paths[1:]]
        if any(c is not None and c != mine for c in others):
            confidence *= 0.9
        alternatives = tuple(p for p in paths if p != best)
        return best, alternatives, max(0.0, min(1.0, confidence))


RIVAL_ROOM = 20  # frames of audio kept either side of a call's words for its rival scoring
NOT_RIVALLED = {"rivalled": 0, "rival_margin": 0.0}


def rival_grammars(text: str, players: Sequence[str] = (), max_count: int = MAX_COUNT
                   ) -> tuple[str, str] | None:
    """For a heard bid or bare count, two JSGF grammars over the same words: the heard call
    alone, and its rivals (the same words with any other count, or with any other face).
    None for other calls."""
    call = parse_call_or_none(text, players)
    words = text.split()
    counts = list(zip(count_words(max_count), range(1, max_count + 1))) + [("zero", 0)]
    if isinstance(call, BidCall):
        j = max((i for i, w in enumerate(words) if w in FACE_WORDS), default=None)
        if j is None:
            return None
        i = j
        while i > 0 and (words[i - 1] in NUMBER_WORDS):
            i -= 1
        if i == j:
            return None
        before, said, face, after = words[:i], words[i:j], words[j], words[j + 1:]
        value = FACE_WORDS[face]
        other_counts = [c for c, n in counts if 1 <= n != call.bid.count]
        other_faces = [f for f in FACE_TERMS if FACE_WORDS[f] != value]
        heard = " ".join(said + [face])
        rivals = (f"({' | '.join(other_counts)}) {face} | "
                  f"{' '.join(said)} ({' | '.join(other_faces)})")
    elif isinstance(call, NumberCall):
        i = next((k for k, w in enumerate(words) if w in NUMBER_WORDS), None)
        if i is None:
            return None
        k = i
        while k < len(words) and words[k] in NUMBER_WORDS:
            k += 1
        before, said, after = words[:i], words[i:k], words[k:]
        heard = " ".join(said)
        rivals = " | ".join(c for c, n in counts if n != call.value)
    else:
        return None
    pre, post = " ".join(before), " ".join(after)

    def grammar(body: str) -> str:
        return f"#JSGF V1.0;\ngrammar rival;\npublic <call> = {pre} ({body}) {post};\n"
    return grammar(heard), grammar(rivals)


FEATURES = ("margin", "short_cover", "over_cover", "fill_inside", "noise_outside", "stretch",
            "squeeze", "word_ac", "log_phones", "old_cover", "old_stretch", "margin_below_0",
            "lead", "trail", "log_span", "phone_err", "word_prob_min", "word_prob_mean",
            "word_fit_min", "word_margin_min", "level_peak", "level_mid", "rivalled",
            "rival_margin")


def confidence_features(details: dict) -> list[float]:
    """The numbers the confidence is a function of (names in FEATURES), from a
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
            int(details.get("trail", 0)) / frames, math.log(span),
            float(details.get("phone_err", 1.0)), float(details.get("word_prob_min", 0.0)),
            float(details.get("word_prob_mean", 0.0)),
            max(-50.0, float(details.get("word_fit_min", -50.0))) / 10,
            max(-50.0, float(details.get("word_margin_min", -50.0))) / 10,
            float(details.get("level_peak", 0.0)) / 10, float(details.get("level_mid", 0.0)) / 10,
            float(details.get("rivalled", 0)), float(details.get("rival_margin", 0.0))]


class FrameLevels:
    """Loudness of each 10 ms frame fed to the engine, for a rough signal-to-noise figure.

    Why: in a quiet room a call the grammar fits is almost always the call said, while in
    noise the same fit is far less telling; the confidence needs to know which room it is
    in. The quietest frames (pauses, the lead-in) stand for the noise floor."""

    FRAME = 160

    def __init__(self) -> None:
        self._rest = np.zeros(0, np.float64)
        self._db: list[np.ndarray] = []

    def add(self, samples: np.ndarray) -> None:
        x = np.concatenate([self._rest, np.asarray(samples, np.float64)])
        n = len(x) // self.FRAME
        frames = x[:n * self.FRAME].reshape(n, self.FRAME)
        self._db.append(10 * np.log10(np.mean(frames ** 2, axis=1) + 1.0))
        self._rest = x[n * self.FRAME:]

    def contrast(self) -> dict:
        """dB of the loud (95th percentile) and middle frames above the quiet (10th)."""
        db = np.concatenate(self._db) if self._db else np.zeros(0)
        if len(db) < 10:
            return {"level_peak": 0.0, "level_mid": 0.0}
        floor = np.percentile(db, 10)
        return {"level_peak": round(float(np.percentile(db, 95) - floor), 3),
                "level_mid": round(float(np.percentile(db, 50) - floor), 3)}


def _call_words(words) -> list:
    """The grammar decoder's segments that are words of the call (not silence, fillers or
    empty lattice nodes), in order."""
    return [w for w in words if w.start_frame >= 0 and not w.word.startswith(("<", "[", "+", "("))]


def _span_features(words, phones, frames: int) -> dict:
    """Where the call's words sit, and what the phone loop heard inside and outside them.

    Noise around a call (babble before or after it) is voiced to the phone loop but has
    nothing to do with the call; noise and silence absorbed between the words does."""
    spans = [(w.start_frame, w.end_frame, w.ascore) for w in _call_words(words)]
    if not spans:
        return {"span": 0, "word_frames": 0, "voiced_in": 0, "voiced_out": 0, "word_ac": 0.0}
    first, last = min(a for a, _, _ in spans), max(b for _, b, _ in spans)
    word_frames = sum(b - a + 1 for a, b, _ in spans)
    voiced_in = voiced_out = 0
    for seg in phones:
        if seg.word in PHONE_FILLERS or seg.start_frame < 0:
            continue
        inside = max(0, min(seg.end_frame, last) - max(seg.start_frame, first) + 1)
        voiced_in += inside
        voiced_out += seg.end_frame - seg.start_frame + 1 - inside
    ac = sum(math.log(c) * 1024.0 if c > 0 else -50.0 * (b - a + 1) for a, b, c in spans)
    return {"span": last - first + 1, "word_frames": word_frames, "voiced_in": voiced_in,
            "voiced_out": voiced_out, "word_ac": round(ac / max(1, word_frames), 4),
            "lead": first, "trail": frames - 1 - last}


def _agreement_features(words, phones, lookup) -> dict:
    """How well the phone loop's own phones inside the call agree with the phones of the
    words the grammar chose, and how well each word scored on the grammar's best path.

    A wrong call inside the grammar (nine heard for five) is scored against the same audio
    as the right one would be, so only the phones themselves tell them apart."""
    spans = _call_words(words)
    if not spans:
        return {"phone_err": 1.0, "word_prob_min": 0.0, "word_prob_mean": 0.0, "word_fit_min": -50.0,
                "word_margin_min": -50.0}
    first, last = spans[0].start_frame, spans[-1].end_frame
    expected = " ".join(lookup(w.word) or "" for w in spans).split()
    heard = [s.word for s in phones if s.word not in PHONE_FILLERS
             and min(s.end_frame, last) - max(s.start_frame, first) + 1
             > (s.end_frame - s.start_frame + 1) / 2]
    probs = [min(1.0, max(0.0, float(w.prob))) for w in spans]
    # Word by word: its acoustic score per frame (scores are relative to the best senone of
    # each frame, so 0 is a perfect fit), and how much worse that is than the phone loop's
    # over the same frames. One badly fitting word is a misheard word, however well the
    # rest of the call fits.
    fits, margins = [], []
    for w in spans:
        n = w.end_frame - w.start_frame + 1
        own = _nats(w.ascore)
        loop = 0.0
        for ph in phones:
            inside = min(ph.end_frame, w.end_frame) - max(ph.start_frame, w.start_frame) + 1
            if inside > 0 and ph.start_frame >= 0:
                loop += _nats(ph.ascore) * inside / (ph.end_frame - ph.start_frame + 1)
        fits.append(own / n)
        margins.append((own - loop) / n)
    return {"phone_err": round(_edit_distance(expected, heard) / max(1, len(expected)), 4),
            "word_prob_min": round(min(probs), 4),
            "word_prob_mean": round(sum(probs) / len(probs), 4),
            "word_fit_min": round(min(fits), 4), "word_margin_min": round(min(margins), 4)}


def _nats(score: float) -> float:
    """A segment's score from the Python API (exp of a log-1.0001 score shifted by 10 bits)
    in nats; the same conversion as _log_score, for segments."""
    return math.log(score) * 1024.0 if score > 0 else -1e4


def _edit_distance(a: list[str], b: list[str]) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def _log_score(hyp) -> float:
    """The path score in nats. The Python API hands it back as exp(score) in a log base
    of 1.0001 with senone scores shifted by 10 bits, so undo both."""
    if hyp is None or hyp.score <= 0.0:
        return -1e6
    return math.log(hyp.score) * 1024.0


def _clean(hypstr: str) -> str:
    """Drop fillers and alternative-pronunciation marks."""
    return " ".join(w.split("(")[0] for w in hypstr.split() if not w.startswith(("<", "[")))
