"""The speech embedding: 16 kHz audio -> one 96-number vector every 80 ms.

Google's speech-embedding model, as shipped (TFLite, with its runtime library) inside the
`pyopen-wakeword` wheel. It was trained on a large amount of real speech, so a small network
on top of it, trained on synthetic voices only, still hears real people: openWakeWord builds
its wake words that way. Each vector covers the last 775 ms of audio.

The wheel's own streaming class pre-fills 8 s of silence after every reset (about 400 ms of
work per utterance); this one runs the two models on a whole utterance at once instead,
resizing their inputs to fit it. Whole, not in pieces: the mel model floors each input at
80 dB below that input's loudest frame, so the quiet frames of a piece depend on the piece,
and the network was trained on whole utterances.
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
MELS_PER_EMBEDDING = 76  # 775 ms
MEL_STEP = 8  # mel frames between embeddings
NUM_MELS = 32
FEATURES = 96
# Audio before the first word that the first vectors need to see a whole 775 ms window.
LEAD_IN_SAMPLES = MELS_PER_EMBEDDING * MEL_HOP + MEL_WINDOW


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
        audio = _as_int16_scale(samples)
        if len(audio) < MEL_WINDOW:
            return np.zeros((0, NUM_MELS), dtype=np.float32)
        out = self._mel.run(audio[None, :])
        return out.reshape(-1, NUM_MELS) / 10.0 + 2.0

    def embed(self, samples: np.ndarray) -> np.ndarray:
        """(T, 96) vectors for a whole stretch of audio, one per 80 ms from the first full
        775 ms window on. Give it about LEAD_IN_SAMPLES of audio before the speech."""
        return self.embed_mels(self.mels(samples))

    def embed_mels(self, mels: np.ndarray) -> np.ndarray:
        """`embed` from mel frames already made (training warps them first)."""
        count = (len(mels) - MELS_PER_EMBEDDING) // MEL_STEP + 1
        if count <= 0:
            return np.zeros((0, FEATURES), dtype=np.float32)
        index = np.arange(MELS_PER_EMBEDDING)[None, :] + MEL_STEP * np.arange(count)[:, None]
        windows = mels[index][..., None]  # (count, 76, 32, 1)
        return self._emb.run(windows).reshape(count, FEATURES)

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


def _as_int16_scale(samples: np.ndarray) -> np.ndarray:
    """The models were trained on int16 values as floats; float audio in -1..1 is scaled up."""
    samples = np.asarray(samples)
    if samples.dtype == np.int16:
        return samples.astype(np.float32)
    return (np.clip(samples, -1.0, 1.0) * 32767.0).astype(np.float32)
