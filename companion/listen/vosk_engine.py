"""Vosk, when a model is installed: a grammar-constrained Kaldi recogniser.

Vosk silently drops grammar words its model does not know, so every word is checked at
start-up; Spanish words the model lacks are replaced by sound-alike spellings that the
parser maps back (see vocabulary.SOUND_ALIKES and calls.py's tables).
"""

from __future__ import annotations

import json
import ssl
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from companion.listen.engine import Recognition
from companion.listen.errors import ModelError
from companion.listen.vocabulary import (DIE_WORDS, MAX_COUNT, SOUND_ALIKES, VocabularyError,
                                         normalise_name, phrase_list)
from companion.sources import Expect

_CHECKOUT = Path(__file__).resolve().parents[2]
# the repository's models/ folder; an installed package has no checkout around it
CHECKOUT_MODELS_DIR = _CHECKOUT / "models" if (_CHECKOUT / "pyproject.toml").is_file() else None
DEFAULT_MODEL = "vosk-model-small-en-us-0.15"
MODEL_URL = "https://alphacephei.com/vosk/models/{name}.zip"
# A certificate "not yet valid" (OpenSSL's X509_V_ERR_CERT_NOT_YET_VALID), or a clock before
# this year, is this machine's clock behind: a Pi not yet set from the network (it starts
# from its last shutdown, months ago, or 1970).
CERTIFICATE_NOT_YET_VALID = 9
CLOCK_SET_AFTER = 2026


def user_models_dir() -> Path:
    """Where downloaded models go: the user's data directory, which outlives upgrades and
    works for a pip install as well as a checkout."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("companion", appauthor=False)) / "models"


def models_dirs() -> list[Path]:
    """Where models are looked for, in order: the user's data directory, then the source
    checkout's models/ folder."""
    return [user_models_dir(), *([CHECKOUT_MODELS_DIR] if CHECKOUT_MODELS_DIR else [])]


def find_model(models_dir: Path | None = None) -> Path | None:
    """The first Vosk model folder (one with an am/ or conf/ folder) in `models_dir`, or
    else in `models_dirs()`."""
    for folder in [models_dir] if models_dir is not None else models_dirs():
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.is_dir() and ((path / "am").is_dir() or (path / "conf").is_dir()):
                return path
    return None


def model_words(model_dir: Path) -> set[str] | None:
    """The model's vocabulary from graph/words.txt, when the model ships it."""
    for candidate in (model_dir / "graph" / "words.txt", model_dir / "words.txt"):
        if candidate.is_file():
            return {line.split()[0] for line in candidate.read_text(errors="replace").splitlines()
                    if line.strip()}
    return None


def knows(model, words: set[str] | None, word: str) -> bool:
    if words is not None:
        return word in words
    # Vosk's own lookup, -1 when the word is missing: vosk.Model calls it
    # vosk_model_find_word (0.3.45); find_word is kept for stand-ins of the model.
    find = getattr(model, "vosk_model_find_word", None) or model.find_word
    return find(word) != -1


# The words every bid is made of: a model without them cannot hear a game (it is not an
# English model), and Vosk would silently drop them from the grammar.
CALL_WORDS = DIE_WORDS + ["ones", "twos", "threes", "fours", "fives", "sixes"]


def missing_call_words(model, words: set[str] | None = None) -> list[str]:
    """The CALL_WORDS the model does not know (none, for an English model)."""
    return [w for w in CALL_WORDS if not knows(model, words, w)]


def load_model(model_dir: str | Path):
    """The vosk.Model in a model folder, or a ModelError that says what is wrong."""
    try:
        import vosk
    except ImportError as err:
        raise ModelError(f"vosk is not installed ({err}); pip install vosk") from None
    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        raise ModelError(f"no Vosk model at {model_dir}: run 'companion models download' "
                         "or pass --model PATH")
    vosk.SetLogLevel(-1)
    try:
        return vosk.Model(str(model_dir))
    except Exception as err:  # vosk raises a bare Exception for a broken model folder
        raise ModelError(f"the Vosk model at {model_dir} cannot be loaded ({err}); "
                         "download it again") from None


def checked_phrases(model, players: Sequence[str] = (), words: set[str] | None = None,
                    expect: Expect = Expect.ANY, max_count: int = MAX_COUNT
                    ) -> tuple[list[str], dict[str, str]]:
    """The grammar phrases (for what is expected) with every word known to the model.

    Returns (phrases, substitutions): Spanish words swapped for sound-alikes the model has;
    a player's name the model cannot say is a VocabularyError with the name in it.
    """
    substitutions: dict[str, str] = {}
    for word, options in SOUND_ALIKES.items():
        if knows(model, words, word):
            continue
        for option in options:
            if all(knows(model, words, w) for w in option.split()):
                substitutions[word] = option
                break
    phrases, dropped = [], set()
    for phrase in phrase_list(players, expect, max_count):
        out = " ".join(substitutions.get(w, w) for w in phrase.split())
        missing = [w for w in out.split() if not knows(model, words, w)]
        if missing:
            dropped.update(missing)
            continue
        phrases.append(out)
    unsaid = [p for p in players if normalise_name(p) in dropped]
    if unsaid:
        raise VocabularyError(
            f"the speech model does not know the name(s) {', '.join(unsaid)}; "
            "use a nickname it knows (a common English word or name)")
    return sorted(set(phrases)), substitutions


class VoskEngine:
    name = "vosk"

    def __init__(self, model_dir: str | Path, players: Sequence[str] = (),
                 max_count: int = MAX_COUNT) -> None:
        model_dir = Path(model_dir)
        self._model = load_model(model_dir)
        import vosk

        self.players = tuple(players)
        words = model_words(model_dir)
        missing = missing_call_words(self._model, words)
        if missing:
            raise VocabularyError(
                f"the Vosk model at {model_dir} does not know the call words "
                f"{', '.join(missing)} ({len(missing)} of {len(CALL_WORDS)} missing): it is not "
                "an English model. Pass --model with an English Vosk model folder (e.g. "
                f"{DEFAULT_MODEL}, from 'companion models download'), or leave out "
                "--engine vosk and --model to use the bundled call recogniser")
        self.phrases, self.substitutions = checked_phrases(self._model, players, words,
                                                           max_count=max_count)
        # One grammar per moment of the game (companion.sources.Expect), "[unk]" in each so
        # that speech outside it has somewhere to go.
        self._grammars = {what: json.dumps(checked_phrases(self._model, players, words, what,
                                                           max_count)[0] + ["[unk]"])
                          for what in Expect}
        self._expect = Expect.ANY
        self._vosk = vosk
        self._rec = None
        self._samples = 0
        self._cpu = 0.0

    def expect(self, what: Expect, hand_sizes: frozenset[int] = frozenset()) -> None:
        self._expect = what  # hands stay runs of dice words (vocabulary.phrase_list): any size

    def learn_name(self, player: str, phrase: str) -> bool:
        return False  # names are words of Vosk's own vocabulary

    def start(self) -> None:
        rec = self._vosk.KaldiRecognizer(self._model, 16000, self._grammars[self._expect])
        rec.SetWords(True)
        rec.SetMaxAlternatives(0)
        self._rec = rec
        self._samples = 0
        self._cpu = 0.0

    def feed(self, samples: np.ndarray) -> None:
        t = time.perf_counter()
        self._rec.AcceptWaveform(np.asarray(samples, dtype=np.int16).tobytes())
        self._samples += len(samples)
        self._cpu += time.perf_counter() - t

    def peek(self) -> None:
        return None  # a grammar's partial result has no confidence to end an utterance on

    def finish(self) -> Recognition:
        t = time.perf_counter()
        result = json.loads(self._rec.FinalResult())
        text, confidence = vosk_result(result)
        finish = time.perf_counter() - t
        return Recognition(text, (), confidence, self._samples / 16000, self._cpu + finish,
                           finish, details={"raw": result})

    def decode(self, samples: np.ndarray) -> Recognition:
        self.start()
        self.feed(samples)
        return self.finish()


def vosk_result(result: dict) -> tuple[str, float]:
    """Transcript and confidence (the lowest word confidence) of a Vosk final result."""
    words = [w for w in result.get("result", []) if w.get("word") != "[unk]"]
    text = " ".join(w["word"] for w in words)
    if not words or "[unk]" in result.get("text", ""):
        return ("", 0.0) if not words else (text, 0.3)
    return text, float(min(w.get("conf", 0.0) for w in words))


def download(name: str = DEFAULT_MODEL, models_dir: Path | None = None, url: str | None = None,
             progress=None) -> Path:
    """Fetch and unzip a Vosk model into `models_dir` (default: the user's data folder); ModelError with a plain reason offline.

    The archive is streamed to a file (the large English model is 1.8 GB: too much to hold in
    a Raspberry Pi's memory) and unpacked into a hidden folder that becomes models_dir/NAME only
    once it holds the model, so an interrupted download never looks like an installed model."""
    import shutil
    import tempfile
    import urllib.error
    import urllib.request
    import zipfile

    url = url or MODEL_URL.format(name=name)
    models_dir = models_dir if models_dir is not None else user_models_dir()
    target = models_dir / name
    if target.is_dir():
        return target
    try:
        models_dir.mkdir(parents=True, exist_ok=True)
        for stale in models_dir.glob(f".{name}-*"):  # left by a download that was killed
            shutil.rmtree(stale, ignore_errors=True)
        work = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=models_dir))
    except OSError as err:
        raise ModelError(f"cannot write to {models_dir}: {err.strerror or err}") from None
    try:
        archive = work / "model.zip"
        try:
            with urllib.request.urlopen(url, timeout=20) as response, open(archive, "wb") as out:
                total = int(response.headers.get("Content-Length") or 0)
                done = 0
                while chunk := response.read(1 << 16):
                    out.write(chunk)
                    done += len(chunk)
                    if progress:
                        progress(done, total)
        except (urllib.error.URLError, OSError, ValueError) as err:
            reason = getattr(err, "reason", err)
            now = time.localtime()
            if isinstance(reason, ssl.SSLCertVerificationError) and (
                    reason.verify_code == CERTIFICATE_NOT_YET_VALID or now.tm_year < CLOCK_SET_AFTER):
                # a Raspberry Pi has no clock of its own: before the network sets it, no
                # certificate is valid yet, which is no fault of the network
                raise ModelError(f"cannot download {name}: this machine's clock says "
                                 f"{time.strftime('%Y-%m-%d', now)}, and the site's certificate is not valid "
                                 "by it; set the date (or let it set itself from the network) and try "
                                 "again") from None
            raise ModelError(f"cannot download {name} from {url}: {reason}. Without internet, "
                             f"copy an unzipped Vosk model folder into {models_dir}/ by hand "
                             "(the bundled call recogniser works without one)") from None
        try:
            with zipfile.ZipFile(archive) as zipped:
                zipped.extractall(work / "unpacked")
        except (zipfile.BadZipFile, OSError) as err:
            raise ModelError(f"the download from {url} is not a usable zip archive ({err})") from None
        unpacked = work / "unpacked" / name
        if find_model(work / "unpacked") != unpacked:
            found = sorted(p.name for p in (work / "unpacked").iterdir())
            raise ModelError(f"the archive from {url} does not hold the model folder {name}/ "
                             f"(it holds: {', '.join(found) or 'nothing'})")
        try:
            unpacked.rename(target)
        except OSError as err:
            raise ModelError(f"cannot install the model as {target}: {err.strerror or err}") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target
