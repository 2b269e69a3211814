"""Choose the confidence's form on voices it never saw: leave-one-family-out within the fit.

    python -m training.confidence_dev --models build/lofo
    python -m training.confidence_dev --models build/lofo40 --fit-models build/lofo --form base

Each voice family's clips are decoded once by the network trained without that family (as
`training.confidence` does) and cached under build/. Then for each family in turn, every
candidate form is fitted on the other families (and the noise clips) and scored on that one
at about the lines the referee acts by (0.7; 0.4 for a short call, 0.3 for a hand).
`--fit-models` fits on other networks' hearing than the scored family's: which networks'
mistakes the confidence should learn from. Festival is never decoded here, and the held-out
real speaker is never scored: both are the benchmark's, and a form chosen by how it hears
them would make their figures tuning figures.
"""

from __future__ import annotations

import argparse
import pickle
from pathlib import Path

import numpy as np

from training.confidence import decode_unheard, fit

BASE = ("margin_free", "margin_free_per_frame", "margin_second", "posterior", "unknown_peak",
        "frames", "weakest_word", "unknown_mass")


def family(row: dict) -> str:
    return row["voice"] if row["voice"].startswith("real:") else row["voice"].split(":")[0]


SHORT = {"dudo", "calza", "{name} calza", "palifico", "status", "repeat"}


def policy_line(got: str) -> float:
    """Roughly the referee's line for acting (asking or applying) on a heard call."""
    if got in SHORT:
        return 0.4
    if got.startswith("{name} ") and len(got.split()) > 2:
        return 0.3
    return 0.7


_LINES: dict[int, np.ndarray] = {}


def lines_of(rows: list[dict]) -> np.ndarray:
    if id(rows) not in _LINES:
        _LINES[id(rows)] = np.array([policy_line(r["got"]) for r in rows])
    return _LINES[id(rows)]


def score(rows: list[dict], conf: np.ndarray, shift: float = 0.0) -> tuple[float, float, float]:
    calls = np.array([r["want"] is not None for r in rows])
    right = np.array([r["right"] for r in rows])
    acted = conf >= lines_of(rows) + shift
    return (float((acted & right & calls).sum() / max(calls.sum(), 1)),
            float((acted & ~right & calls).sum() / max(calls.sum(), 1)),
            float((acted & ~calls).sum() / max((~calls).sum(), 1)))


def extra(row: dict) -> dict[str, float]:
    got = row["got"]
    words = got.split()
    m = dict(row["measures"])
    m["words"] = len(words)
    m["one_word"] = float(len(words) == 1)
    m["hand"] = float(got.startswith("{name} ") and len(words) > 2)
    m["short"] = float(got in SHORT)
    m["named"] = float("{name}" in got)
    m["margin_per_word"] = m["margin_free"] / max(len(words), 1)
    return m


def design(rows, names):
    return np.array([[extra(r)[n] for n in names] for r in rows])


def weights_of(rows):
    fam = [family(r) for r in rows]
    counts = {f: fam.count(f) for f in set(fam)}
    return np.array([len(rows) / (len(counts) * counts[f]) for f in fam])


class MLP:
    def __init__(self, names, hidden=16, l2=1e-3, steps=3000, seed=0):
        self.names, self.hidden, self.l2, self.steps, self.seed = names, hidden, l2, steps, seed

    def fit(self, rows):
        x = design(rows, self.names)
        y = np.array([r["right"] for r in rows], float)
        wt = weights_of(rows)
        self.mu, self.sd = x.mean(0), x.std(0) + 1e-6
        z = (x - self.mu) / self.sd
        rng = np.random.default_rng(self.seed)
        params = [rng.normal(0, 1 / np.sqrt(z.shape[1]), (z.shape[1], self.hidden)), np.zeros(self.hidden),
                  rng.normal(0, 1 / np.sqrt(self.hidden), self.hidden), np.zeros(1)]
        m = [np.zeros_like(p) for p in params]; v = [np.zeros_like(p) for p in params]
        for t in range(1, self.steps + 1):
            W1, b1, w2, b2 = params
            h = np.tanh(z @ W1 + b1)
            p = 1 / (1 + np.exp(-(h @ w2 + b2)))
            g = wt * (p - y) / len(y)
            gw2 = h.T @ g + self.l2 * w2
            gb2 = np.array([g.sum()])
            gh = np.outer(g, w2) * (1 - h ** 2)
            gW1 = z.T @ gh + self.l2 * W1
            gb1 = gh.sum(0)
            for i, gr in enumerate((gW1, gb1, gw2, gb2)):
                m[i] = 0.9 * m[i] + 0.1 * gr
                v[i] = 0.999 * v[i] + 0.001 * gr ** 2
                params[i] = params[i] - 0.01 * (m[i] / (1 - 0.9 ** t)) / (np.sqrt(v[i] / (1 - 0.999 ** t)) + 1e-8)
        self.params = params
        return self

    def predict(self, rows):
        z = (design(rows, self.names) - self.mu) / self.sd
        W1, b1, w2, b2 = self.params
        return 1 / (1 + np.exp(-(np.tanh(z @ W1 + b1) @ w2 + b2)))


class Logistic:
    def __init__(self, names):
        self.names = names

    def fit(self, rows):
        x = design(rows, self.names)
        self.cal = fit([dict(r, measures=dict(zip(self.names, xi))) for r, xi in zip(rows, x)], self.names)
        return self

    def predict(self, rows):
        x = design(rows, self.names)
        return np.array([self.cal.confidence(dict(zip(self.names, xi))) for xi in x])


EXTRA = BASE + ("words", "one_word", "hand", "short", "named", "margin_per_word")
FORMS = {"base": lambda: Logistic(BASE), "base+kind": lambda: Logistic(EXTRA),
         "mlp": lambda: MLP(BASE), "mlp+kind": lambda: MLP(EXTRA),
         "mlp8": lambda: MLP(BASE, hidden=8), "mlp32": lambda: MLP(BASE, hidden=32, l2=1e-2)}


def rows_of(models: Path, data: Path, shipped: Path) -> list[dict]:
    """Every row decoded with the networks in `models`, cached beside them."""
    cache = Path("build") / f"confidence-rows-{models.name}.pkl"
    if not cache.exists():
        networks = [p for p in sorted(models.glob("*.npz")) if p.stem != "festival"]
        rows, checks = decode_unheard(data, networks, shipped)
        cache.write_bytes(pickle.dumps(rows + checks))
    return [r for r in pickle.loads(cache.read_bytes()) if r["measures"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("build/speech"))
    parser.add_argument("--models", type=Path, default=Path("build/lofo"),
                        help="networks, one a family left out, that hear the family scored")
    parser.add_argument("--fit-models", type=Path,
                        help="networks whose hearing of the other families is fitted on "
                             "(default: --models)")
    parser.add_argument("--shipped", type=Path, default=Path("companion/listen/call_model.npz"))
    parser.add_argument("--form", action="append", choices=list(FORMS))
    args = parser.parse_args()
    rows = rows_of(args.models, args.data, args.shipped)
    fit_rows = rows_of(args.fit_models, args.data, args.shipped) if args.fit_models else rows
    families = sorted({family(r) for r in rows if ":" in r["voice"] and family(r) != "noise"
                       and not family(r).startswith("real:")})
    forms = args.form or ["base", "base+kind", "mlp", "mlp+kind"]
    print(f"fitted on {args.fit_models or args.models}, scored on {args.models}")
    print(f"{'held out':10} {'form':10} {'right':>7} {'wrong':>7} {'chatter':>8}   at wrong <= first form's: right")
    for held in families:
        train_rows = [r for r in fit_rows if family(r) != held and not family(r).startswith("real:")]
        test_rows = [r for r in rows if family(r) == held]
        first_wrong = None
        for name in forms:
            conf = FORMS[name]().fit(train_rows).predict(test_rows)
            right, wrong, chat = score(test_rows, conf)
            if first_wrong is None:
                first_wrong = wrong
            # The same form with its lines moved until it acts on no more wrong calls than
            # the first form: how well it ranks, apart from where its scale sits.
            matched = max((score(test_rows, conf, s) for s in np.linspace(-0.3, 0.29, 60)
                           if score(test_rows, conf, s)[1] <= first_wrong), default=(0, 0, 0))
            print(f"{held:10} {name:10} {right:7.2%} {wrong:7.2%} {chat:8.2%}   {matched[0]:7.2%} "
                  f"({matched[1]:.2%} wrong, {matched[2]:.2%} chatter)", flush=True)


if __name__ == "__main__":
    main()
