"""A small learned confidence: how likely the call a recogniser heard is the call that was said.

The recogniser hands over measurements of an utterance (how well its words fit the audio,
how well they agree with what a free phone decoder heard...); a one-hidden-layer network,
small enough to read as a table of numbers, turns them into a logit. A logistic line over
the same numbers was tried first: it could not express "short and well matched is fine,
long and well matched is suspicious", and left a third of the right calls in noise below
the line. The logit is then mapped to 0..1 so that 0.5 and 0.7 fall where the fitting data
said wrong calls become rare (see `place`).

Pure numpy, no I/O beyond reading and writing the model's JSON.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

import numpy as np


class ConfidenceModelError(ValueError):
    """A confidence model file that is missing, unreadable or does not fit its features."""


@dataclass(frozen=True)
class ConfidenceModel:
    features: tuple[str, ...]  # the measurements, in order (names for people and checks)
    mean: tuple[float, ...]  # standardisation of each feature
    scale: tuple[float, ...]
    hidden: tuple[tuple[float, ...], ...]  # one row per feature, one column per hidden unit
    hidden_bias: tuple[float, ...]
    out: tuple[float, ...]  # one weight per hidden unit
    out_bias: float
    centre: float = 0.0  # the logit that maps to 0.5
    slope: float = 1.0  # how fast confidence rises past it

    def __post_init__(self) -> None:
        n, h = len(self.features), len(self.hidden_bias)
        if (len(self.mean), len(self.scale), len(self.hidden), len(self.out)) != (n, n, n, h) \
                or any(len(row) != h for row in self.hidden):
            raise ConfidenceModelError("the confidence model's weights do not fit its features")

    def logit(self, x: Sequence[float]) -> float:
        return float(self.logits(np.asarray([x], dtype=np.float64))[0])

    def logits(self, x: np.ndarray) -> np.ndarray:
        z = (x - np.asarray(self.mean)) / np.asarray(self.scale)
        hidden = np.tanh(z @ np.asarray(self.hidden) + np.asarray(self.hidden_bias))
        return hidden @ np.asarray(self.out) + self.out_bias

    def confidence(self, x: Sequence[float]) -> float:
        t = max(-50.0, min(50.0, self.slope * (self.logit(x) - self.centre)))
        return 1.0 / (1.0 + math.exp(-t))

    # --- files -------------------------------------------------------------------------
    def to_json(self) -> str:
        data = {"features": list(self.features), "mean": _r(self.mean), "scale": _r(self.scale),
                "hidden": [_r(row) for row in self.hidden], "hidden_bias": _r(self.hidden_bias),
                "out": _r(self.out), "out_bias": round(self.out_bias, 6),
                "centre": round(self.centre, 6), "slope": round(self.slope, 6)}
        return json.dumps(data, indent=1)

    @classmethod
    def load(cls, path: str | Path, features: Sequence[str]) -> "ConfidenceModel":
        """Read a model and check it was fitted on exactly these measurements."""
        try:
            data = json.loads(Path(path).read_text())
            model = cls(features=tuple(data["features"]), mean=tuple(data["mean"]),
                        scale=tuple(data["scale"]),
                        hidden=tuple(tuple(row) for row in data["hidden"]),
                        hidden_bias=tuple(data["hidden_bias"]), out=tuple(data["out"]),
                        out_bias=float(data["out_bias"]), centre=float(data["centre"]),
                        slope=float(data["slope"]))
        except FileNotFoundError:
            raise ConfidenceModelError(f"{path}: no confidence model there") from None
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ConfidenceModelError(f"{path}: not a confidence model ({err})") from None
        if model.features != tuple(features):
            raise ConfidenceModelError(
                f"{path}: fitted on other measurements ({', '.join(model.features)}); "
                f"refit it with 'companion bench speech --fit-confidence'")
        return model


def _r(values) -> list[float]:
    return [round(float(v), 6) for v in values]


def fit(x: np.ndarray, y: np.ndarray, features: Sequence[str], hidden: int = 8,
        steps: int = 1500, l2: float = 1e-2, seed: int = 0) -> ConfidenceModel:
    """Fit the network to right (1) / wrong (0) labels by full-batch Adam on the log loss.
    Deterministic for a given seed; centre and slope are left for `place`."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    mean, scale = x.mean(0), x.std(0) + 1e-6
    z = (x - mean) / scale
    rng = np.random.default_rng(seed)
    params = [rng.normal(0, 1 / math.sqrt(z.shape[1]), (z.shape[1], hidden)), np.zeros(hidden),
              rng.normal(0, 1 / math.sqrt(hidden), hidden), np.zeros(1)]
    moments = [(np.zeros_like(p), np.zeros_like(p)) for p in params]
    rate, beta1, beta2 = 0.01, 0.9, 0.999
    for step in range(1, steps + 1):
        w1, b1, w2, b2 = params
        h = np.tanh(z @ w1 + b1)
        p = 1 / (1 + np.exp(-(h @ w2 + b2[0])))
        d = (p - y) / len(y)
        dh = np.outer(d, w2) * (1 - h ** 2)
        grads = [z.T @ dh + l2 * w1, dh.sum(0), h.T @ d + l2 * w2, np.array([d.sum()])]
        for i, (g, (m, v)) in enumerate(zip(grads, moments)):
            m[:] = beta1 * m + (1 - beta1) * g
            v[:] = beta2 * v + (1 - beta2) * g * g
            params[i] = params[i] - rate * (m / (1 - beta1 ** step)) / (
                np.sqrt(v / (1 - beta2 ** step)) + 1e-8)
    w1, b1, w2, b2 = params
    return ConfidenceModel(features=tuple(features), mean=tuple(mean), scale=tuple(scale),
                           hidden=tuple(tuple(row) for row in w1), hidden_bias=tuple(b1),
                           out=tuple(w2), out_bias=float(b2[0]))


def place(model: ConfidenceModel, accept_logit: float, confirm_logit: float) -> ConfidenceModel:
    """Map the logit so that `accept_logit` becomes 0.5 and `confirm_logit` 0.7."""
    confirm_logit = max(confirm_logit, accept_logit + 0.1)
    return replace(model, centre=accept_logit,
                   slope=math.log(0.7 / 0.3) / (confirm_logit - accept_logit))
