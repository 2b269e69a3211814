"""The call network, run with numpy: embedding vectors -> per-frame token log-probabilities.

A projection, residual dilated 1-D convolutions over time (about 2.5 s of context either
side) and a token layer. `training/train.py` trains the same shape with torch and writes
the weights with a card (tokens, settings, the command and seed that made it).
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from companion.listen.embedding import FEATURES
from companion.listen.errors import ModelError
from companion.listen.tokens import TOKENS

KERNEL = 3
DILATIONS = (1, 2, 4, 8)
MODEL_PATH = Path(__file__).with_name("call_model.npz")


@dataclass(frozen=True)
class CallNetwork:
    weights: dict[str, np.ndarray]
    card: dict

    @classmethod
    def load(cls, path: str | Path = MODEL_PATH) -> "CallNetwork":
        path = Path(path)
        unreadable = f"the call recogniser's model {path} is not a network as training.train writes it"
        try:
            with np.load(path, allow_pickle=False) as data:
                weights = {k: data[k] for k in data.files if k != "card"}
                card = json.loads(str(data["card"]))
        except FileNotFoundError:
            raise ModelError(f"the call recogniser's model is missing: {path}") from None
        except KeyError:
            raise ModelError(f"{unreadable} (it has no model card)") from None
        except (IsADirectoryError, PermissionError) as err:
            raise ModelError(f"cannot read the call recogniser's model {path}: {err.strerror}") from None
        except (OSError, ValueError, EOFError, zipfile.BadZipFile, AttributeError) as err:
            # numpy's own words for a file that is no .npz of arrays (one suggests loading
            # pickles, which a model file never needs) say less than what to do
            raise ModelError(f"{unreadable} ({type(err).__name__}); retrain it or leave out --model") from None
        if not isinstance(card, dict):
            raise ModelError(f"{unreadable} (its model card is not a table)")
        if tuple(card.get("tokens", ())) != TOKENS:
            raise ModelError(f"{path} was trained for other words than this version hears: "
                             "retrain it (python -m training.train)")
        problem = _shape_problem(weights)
        if problem:
            raise ModelError(f"{unreadable} ({problem}); retrain it or leave out --model")
        return cls(weights, card)

    def log_probs(self, features: np.ndarray) -> np.ndarray:
        """(T, 96) embedding vectors -> (T, tokens) log-probabilities."""
        w = self.weights
        x = ((features - w["mean"]) / w["std"]).astype(np.float32)
        h = np.maximum(x @ w["project.weight"][:, :, 0].T + w["project.bias"], 0)
        for i, d in enumerate(DILATIONS):
            kernel, bias = w[f"convs.{i}.weight"], w[f"convs.{i}.bias"]
            padded = np.pad(h, ((d, d), (0, 0)))
            y = bias + sum(padded[k * d: k * d + len(h)] @ kernel[:, :, k].T
                           for k in range(KERNEL))
            h = h + np.maximum(y, 0)
        logits = h @ w["out.weight"][:, :, 0].T + w["out.bias"]
        logits -= logits.max(axis=1, keepdims=True)
        return logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))


def _shape_problem(weights: dict[str, np.ndarray]) -> str | None:
    """What is missing from the arrays `log_probs` multiplies, or the wrong shape or not
    finite (it would fail, or hear nothing, at the first call instead of at start-up)."""
    if "project.weight" not in weights or weights["project.weight"].ndim != 3:
        return "its project.weight is missing or not a convolution"
    width = weights["project.weight"].shape[0]
    expected = {"mean": (FEATURES,), "std": (FEATURES,), "project.weight": (width, FEATURES, 1),
                "project.bias": (width,), "out.weight": (len(TOKENS), width, 1), "out.bias": (len(TOKENS),)}
    for i in range(len(DILATIONS)):
        expected[f"convs.{i}.weight"] = (width, width, KERNEL)
        expected[f"convs.{i}.bias"] = (width,)
    for name, shape in expected.items():
        array = weights.get(name)
        if array is None:
            return f"it has no {name}"
        if array.shape != shape:
            return f"its {name} is {array.shape}, not {shape}"
        if not np.issubdtype(array.dtype, np.floating) or not np.isfinite(array).all():
            return f"its {name} is not all finite numbers"
    return None
