"""The speech embedding: 16 kHz audio -> one 96-number vector every 80 ms.

Google's speech-embedding model, as shipped (TFLite, with its runtime library) inside the
`pyopen-wakeword` wheel. It was trained on a large amount of real speech, so a small network
on top of it, trained on synthetic voices only, still hears real people: openWakeWord builds
its wake words that way. Each vector covers the last 775 ms of audio.

The wheel's own streaming class pre-fills 8 s of silence after every reset (about 400 ms of
work per utterance); this one runs the two models on a whole utterance at once instead,
resizing their inputs to fit it. `EmbeddingStream` grows an utterance's vectors as its audio
arrives and gives the very vectors of the whole: the mel model floors each input at 80 dB
below that input's loudest frame, so a piece's quiet frames are floored again at the whole's
level, and the vectors whose windows hold such frames are made again when that level rises.
"""

from __future__ import annotations

import ctypes as C
import threading
from pathlib import Path

import numpy as np

from companion.listen.errors import ModelError

SAMPLE_RATE = 16000
HOP_SAMPLES = 1280  # one embedding every 80 ms
MEL_WINDOW = 400  # 25 ms frames ...
MEL_HOP = 160  # ... every 10 ms
MEL_SPAN = 512  # samples the mel model reads for one frame (its FFT); fewer crash it
MEL_FLOOR = 8.0  # 80 dB in the scaled units of `mels`: the floor below the loudest frame
MELS_PER_EMBEDDING = 76  # 775 ms
MEL_STEP = 8  # mel frames between embeddings
NUM_MELS = 32
FEATURES = 96
# Audio before the first word that the first vectors need to see a whole 775 ms window.
LEAD_IN_SAMPLES = MELS_PER_EMBEDDING * MEL_HOP + MEL_WINDOW
TAIL_SAMPLES = 3200  # 0.2 s of quiet after the utterance, as in training


def padded(audio: np.ndarray) -> np.ndarray:
    """An utterance as the network hears it, in training and in play: quiet before it (the
    first embedding windows need 775 ms of sound) and a short quiet tail after it."""
    return np.concatenate([np.zeros(LEAD_IN_SAMPLES, audio.dtype), audio,
                           np.zeros(TAIL_SAMPLES, audio.dtype)])


class _Interpreter:
    """One TFLite model whose input is resized to each call's shape."""

    def __init__(self, lib, path: Path) -> None:
        self.lib = lib
        self.model = lib.TfLiteModelCreateFromFile(str(path).encode())
        if not self.model:
            raise ModelError(f"cannot load the speech embedding model {path}")
        self.interpreter = lib.TfLiteInterpreterCreate(self.model, None)
        self.shape: tuple[int, ...] = ()

    def run(self, data: np.ndarray) -> np.ndarray:
        lib = self.lib
        data = np.ascontiguousarray(data, dtype=np.float32)
        if data.shape != self.shape:
            dims = (C.c_int32 * data.ndim)(*data.shape)
            lib.TfLiteInterpreterResizeInputTensor(self.interpreter, 0, dims, data.ndim)
            if lib.TfLiteInterpreterAllocateTensors(self.interpreter) != 0:
                raise ModelError(f"the speech embedding model refused an input of {data.shape}")
            self.shape = data.shape
        tensor_in = lib.TfLiteInterpreterGetInputTensor(self.interpreter, 0)
        lib.TfLiteTensorCopyFromBuffer(tensor_in, data.ctypes.data_as(C.c_void_p), data.nbytes)
        if lib.TfLiteInterpreterInvoke(self.interpreter) != 0:
            raise ModelError("the speech embedding model failed to run")
        tensor_out = lib.TfLiteInterpreterGetOutputTensor(self.interpreter, 0)
        dims = [lib.TfLiteTensorDim(tensor_out, i) for i in range(lib.TfLiteTensorNumDims(tensor_out))]
        out = np.empty(dims, dtype=np.float32)
        lib.TfLiteTensorCopyToBuffer(tensor_out, out.ctypes.data_as(C.c_void_p), out.nbytes)
        return out

    def close(self) -> None:
        if self.interpreter:
            self.lib.TfLiteInterpreterDelete(self.interpreter)
            self.interpreter = None
        if self.model:
            self.lib.TfLiteModelDelete(self.model)
            self.model = None


class SpeechEmbedding:
    """Audio to embedding vectors. Not thread-safe per instance; `shared()` gives one per
    thread. Load once: it takes about a tenth of a second."""

    def __init__(self) -> None:
        try:
            from pyopen_wakeword import openwakeword as oww
            from pyopen_wakeword.wakeword import TfLiteWakeWord
        except ImportError as err:
            import platform
            import sys

            # no wheel of it there, so not installed (32-bit Python on a 64-bit ARM kernel too)
            if platform.machine() in ("armv7l", "armv6l", "armv8l") or (
                    sys.maxsize < 2**32 and platform.machine().startswith(("arm", "aarch64"))):
                raise ModelError("the bundled recogniser cannot run on 32-bit ARM (its speech embedding has no "
                                 "build for it): use Vosk (companion models download, then --engine vosk) "
                                 "or a 64-bit OS") from None
            raise ModelError(f"the speech embedding needs the pyopen-wakeword package ({err}): "
                             "pip install pyopen-wakeword") from None
        models = Path(oww.__file__).parent / "models"
        try:
            lib = TfLiteWakeWord(oww._find_tensorflowlite_c()).lib  # sets the C signatures
        except (OSError, ValueError) as err:
            raise ModelError(f"cannot load the TFLite runtime of pyopen-wakeword: {err}") from None
        self._mel = _Interpreter(lib, models / "melspectrogram.tflite")
        self._emb = _Interpreter(lib, models / "embedding_model.tflite")

    def mels(self, samples: np.ndarray) -> np.ndarray:
        """(frames, 32) log-mel frames, scaled as the embedding model expects."""
        return self.mels_of_int16(_as_int16_scale(samples))

    def mels_of_int16(self, audio: np.ndarray) -> np.ndarray:
        """`mels` of audio already on the int16 scale (as EmbeddingStream keeps it)."""
        if len(audio) < MEL_SPAN:
            return np.zeros((0, NUM_MELS), dtype=np.float32)
        out = self._mel.run(audio[None, :])
        return out.reshape(-1, NUM_MELS) / 10.0 + 2.0

    def embed(self, samples: np.ndarray) -> np.ndarray:
        """(T, 96) vectors for a whole stretch of audio, one per 80 ms from the first full
        775 ms window on. Give it about LEAD_IN_SAMPLES of audio before the speech."""
        return self.embed_mels(self.mels(samples))

    def embed_mels(self, mels: np.ndarray) -> np.ndarray:
        """`embed` from mel frames already made (training warps them first)."""
        count = window_count(len(mels))
        if count == 0:
            return np.zeros((0, FEATURES), dtype=np.float32)
        index = np.arange(MELS_PER_EMBEDDING)[None, :] + MEL_STEP * np.arange(count)[:, None]
        return self.embed_windows(mels[index])

    def embed_windows(self, windows: np.ndarray) -> np.ndarray:
        """(count, 76, 32) windows of mel frames -> (count, 96) vectors."""
        return self._emb.run(windows[..., None]).reshape(len(windows), FEATURES)

    def stream(self) -> "EmbeddingStream":
        """An utterance's vectors, made as its audio arrives."""
        return EmbeddingStream(self)

    def close(self) -> None:
        self._mel.close()
        self._emb.close()

    _local = threading.local()

    @classmethod
    def shared(cls) -> "SpeechEmbedding":
        """One instance per thread, loaded on first use."""
        instance = getattr(cls._local, "instance", None)
        if instance is None:
            instance = cls._local.instance = cls()
        return instance


class EmbeddingStream:
    """`embed` of an utterance that is still growing, without doing the work again: each mel
    frame is made once, and a vector is made again only when the floor moves under a frame
    of its window (in practice the quiet lead-in, while the speech gets louder). `vectors`
    equals `embed` of all the audio added so far."""

    def __init__(self, embedding: SpeechEmbedding) -> None:
        self.embedding = embedding
        self._audio = np.zeros(0, np.float32)  # from the first frame still to make on
        self._mels = np.zeros((0, NUM_MELS), np.float32)  # each batch floored by its own
        self._loudest = -np.inf
        self._vectors: list[np.ndarray | None] = []  # one per window of whole frames
        self._made_under: list[float] = []  # the floor each of those was made under
        self._lowest: list[float] = []  # the lowest unfloored value in each one's window

    @property
    def windows(self) -> int:
        """How many vectors the audio added so far makes, without silence after it."""
        return window_count(len(self._mels))

    def add(self, samples: np.ndarray) -> None:
        self._audio = np.concatenate([self._audio, _as_int16_scale(samples)])
        if len(self._audio) < MEL_SPAN:
            return
        count = (len(self._audio) - MEL_SPAN) // MEL_HOP + 1
        batch = self.embedding.mels_of_int16(self._audio[:MEL_HOP * (count - 1) + MEL_SPAN])
        self._mels = np.concatenate([self._mels, batch])
        self._loudest = max(self._loudest, float(batch.max()))
        self._audio = self._audio[MEL_HOP * count:]
        # the new windows now, so the end of the utterance finds them made
        self._make(self._mels, self._loudest - MEL_FLOOR, self.windows)

    def vectors(self, tail: int = 0) -> np.ndarray:
        """(T, 96): the vectors of everything added, followed by `tail` samples of silence
        (not kept: more audio may come)."""
        mels, loudest = self._mels, self._loudest
        if tail:
            ending = np.concatenate([self._audio, np.zeros(tail, np.float32)])
            extra = self.embedding.mels_of_int16(ending)
            if len(extra):
                mels = np.concatenate([mels, extra])
                loudest = max(loudest, float(extra.max()))
        count = window_count(len(mels))
        if count == 0:
            return np.zeros((0, FEATURES), dtype=np.float32)
        made = self._make(mels, loudest - MEL_FLOOR, count)
        return np.stack([made[k] if k in made else self._vectors[k] for k in range(count)])

    def _make(self, mels: np.ndarray, floor: float, count: int) -> dict[int, np.ndarray]:
        """Make the first `count` windows' vectors that are missing or stale under `floor`,
        keep those of frames made from real audio, and return all made now by window.
        Windows reaching into silence added for one answer are made for it only."""
        kept = self.windows
        for k in range(len(self._vectors), kept):
            self._vectors.append(None)
            self._made_under.append(np.nan)
            self._lowest.append(float(self._window(mels, k).min()))
        # A vector made under another floor is stale if a value of its window lies below
        # the higher of the two floors.
        todo = [k for k in range(kept) if self._vectors[k] is None or (
            self._made_under[k] != floor and self._lowest[k] < max(self._made_under[k], floor))]
        todo += range(kept, count)
        if not todo:
            return {}
        floored = np.maximum(mels, floor)
        made = self.embedding.embed_windows(np.stack([self._window(floored, k) for k in todo]))
        for k, vector in zip(todo, made):
            if k < kept:
                self._vectors[k], self._made_under[k] = vector, floor
        return dict(zip(todo, made))

    @staticmethod
    def _window(mels: np.ndarray, k: int) -> np.ndarray:
        return mels[MEL_STEP * k: MEL_STEP * k + MELS_PER_EMBEDDING]


def window_count(frames: int) -> int:
    """How many 775 ms windows, one every 80 ms, `frames` mel frames hold."""
    return max(0, (frames - MELS_PER_EMBEDDING) // MEL_STEP + 1)


def _as_int16_scale(samples: np.ndarray) -> np.ndarray:
    """The models were trained on int16 values as floats; float audio in -1..1 is scaled up."""
    samples = np.asarray(samples)
    if samples.dtype == np.int16:
        return samples.astype(np.float32)
    return (np.clip(samples, -1.0, 1.0) * 32767.0).astype(np.float32)
