"""Stage 3: fit the recogniser's confidence on voices its network never heard, and report.

    python -m training.confidence --data build/speech --models build/lofo \
        --out companion/listen/call_confidence.json
    python -m training.confidence --data build/speech --models build/lofo \
        --leave-out festival --out build/lofo-shipped/festival.confidence.json

For each voice family, a network trained without that family (`training.train
--leave-out FAMILY --out build/lofo/FAMILY.npz`) decodes that family's clips. The decoder's measures on all those clips,
and whether the best call was right, fit a logistic calibration. Fitting it on voices the
networks did know would make it trust every voice like its training voices. The held-out
real speaker only checks it.

The second command is for the network the benchmark hears festival with, trained without
festival: its confidence is fitted without festival's clips too, and saved beside it
(`NAME.confidence.json` beside `NAME.npz`), where the recogniser looks for it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from companion.listen.network import CallNetwork
from companion.listen.recogniser import Calibration, call_graph, measures
from companion.listen.decoder import CompiledGraph
from companion.listen.tokens import FILLERS, INDEX, NAME, TOKENS
from companion.sources import Expect
from training.build import load

PLEASE = INDEX["please"]


def truth(labels: np.ndarray, kind: str) -> str | None:
    """The call text a clip's label should decode to (None for chatter)."""
    if kind in ("chatter", "noise"):
        return None
    tokens = list(labels)
    while tokens and tokens[0] in FILLERS and kind != "command":
        tokens.pop(0)
    while tokens and tokens[-1] == PLEASE:
        tokens.pop()
    if kind == "command" and tokens[:1] == [INDEX["okay"]]:
        tokens.pop(0)
    words = ["{name}" if t == INDEX[NAME] else TOKENS[t] for t in tokens]
    if kind == "hand":
        return "{name} {dice}".replace("{dice}", " ".join(words[1:]))
    if kind == "command" and words == ["no", "no"]:
        return "no"
    return " ".join(words)


def expect_for(kind: str, index: int) -> Expect:
    if kind in ("bid", "challenge", "named"):
        return Expect.CALLS
    if kind in ("number", "hand"):
        return Expect.COUNT
    return (Expect.CALLS, Expect.COUNT)[index % 2]  # commands and chatter: both moments


def decode_shard(network: CallNetwork, shard: dict, keep, max_count: int = 40) -> list[dict]:
    graphs = {e: CompiledGraph(call_graph(e, max_count, True)) for e in (Expect.CALLS, Expect.COUNT)}
    rows = []
    for i, (f, labels, kind, voice, note) in enumerate(zip(
            shard["features"], shard["labels"], shard["kinds"], shard["voices"], shard["notes"])):
        if not keep(voice, i):
            continue
        decoded = graphs[expect_for(kind, i)].decode(network.log_probs(f))
        want = truth(labels, kind)
        rows.append({"voice": voice, "kind": kind, "note": note, "want": want,
                     "got": decoded.best, "right": want is not None and decoded.best == want,
                     "measures": measures(decoded)})
    return rows


def fit(rows: list[dict], names: tuple[str, ...], steps: int = 3000) -> Calibration:
    """Logistic regression by gradient descent (numpy only), standardised inputs. Each
    voice family weighs the same, so the family with the most clips does not decide alone
    how far an unknown voice is trusted."""
    rows = [r for r in rows if r["measures"]]
    x = np.array([[r["measures"][n] for n in names] for r in rows])
    y = np.array([r["right"] for r in rows], dtype=float)
    family = [r["voice"].split(":")[0] for r in rows]
    counts = {f: family.count(f) for f in set(family)}
    weight = np.array([len(rows) / (len(counts) * counts[f]) for f in family])
    mu, sd = x.mean(0), x.std(0) + 1e-6
    z = (x - mu) / sd
    w, b = np.zeros(len(names)), 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(z @ w + b)))
        w -= 0.5 * (z.T @ (weight * (p - y)) / len(y) + 1e-3 * w)
        b -= 0.5 * np.mean(weight * (p - y))
    return Calibration(tuple(float(v) for v in w / sd), float(b - np.sum(w * mu / sd)), names)


def report(rows: list[dict], cal: Calibration, line: float = 0.5) -> None:
    groups: dict[str, list] = defaultdict(list)
    for r in rows:
        family = r["voice"].split(":")[0] if not r["voice"].startswith("real:") else r["voice"]
        noisy = "noisy" if any(k in r["note"] for k in ("babble", "pink", "white", "brown", "clatter")) else "clean"
        groups[f"{family} {noisy}"].append(r)
    print(f"{'set':28} {'calls':>6} {'right':>7} {'acted':>7} {'wrong acted':>11} {'chatter acted':>13}")
    for key in sorted(groups):
        rs = groups[key]
        calls = [r for r in rs if r["want"] is not None]
        chat = [r for r in rs if r["want"] is None]
        acted = [r for r in calls if r["measures"] and cal.confidence(r["measures"]) >= line]
        right = sum(r["right"] for r in calls)
        print(f"{key:28} {len(calls):6d} {right / max(len(calls), 1):7.1%} "
              f"{sum(r['right'] for r in acted) / max(len(calls), 1):7.1%} "
              f"{sum(not r['right'] for r in acted) / max(len(calls), 1):11.2%} "
              f"{sum(bool(r['measures']) and cal.confidence(r['measures']) >= line for r in chat) / max(len(chat), 1):13.2%}")


def networks_to_fit(models: Path, leave_out: list[str]) -> list[Path]:
    """The networks in `models` (one a family, each trained without it) whose families the
    confidence is fitted on: all but those left out, each of which must be there."""
    networks = sorted(models.glob("*.npz"))
    unknown = sorted(set(leave_out) - {p.stem for p in networks})
    if unknown:
        raise SystemExit(f"--leave-out {', '.join(unknown)}: no such family in {models} "
                         f"({', '.join(p.stem for p in networks) or 'no networks'})")
    return [p for p in networks if p.stem not in leave_out]


def decode_unheard(data: Path, networks: list[Path], shipped: Path) -> tuple[list[dict], list[dict]]:
    """Rows to fit on: each network's family (`NAME.npz` is the network trained without
    family NAME) decoded by it, and the noise clips no network trained on (see
    training.train.split). Rows to check on: the held-out real speaker, by the shipped
    network."""
    rows: list[dict] = []
    for model_path in networks:
        family = model_path.stem
        rows += decode_shard(CallNetwork.load(model_path), load(data / f"{family}.npz"),
                             lambda v, i, f=family: v.startswith(f + ":"))
        print(f"decoded {family} with the network that never heard it", flush=True)
    network = CallNetwork.load(shipped)
    rows += decode_shard(network, load(data / "noise.npz"), lambda v, i: i % 5 == 0)
    speaker = network.card["held_out_speaker"]
    checks = decode_shard(network, load(data / "real.npz"), lambda v, i: v == f"real:{speaker}")
    return rows, checks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("build/speech"))
    parser.add_argument("--models", type=Path, default=Path("build/lofo"))
    parser.add_argument("--shipped", type=Path, default=Path("companion/listen/call_model.npz"))
    parser.add_argument("--out", type=Path, default=Path("companion/listen/call_confidence.json"))
    parser.add_argument("--leave-out", metavar="FAMILY", action="append", default=[],
                        help="fit without this family's clips: the confidence for a network "
                             "trained without it, so a benchmark on that family measures "
                             "hearing, not memory")
    args = parser.parse_args()
    networks = networks_to_fit(args.models, args.leave_out)
    if args.leave_out and args.out == Path(parser.get_default("out")):
        parser.error("--leave-out needs --out: the shipped confidence is fitted on every family")
    rows, checks = decode_unheard(args.data, networks, args.shipped)
    names = Calibration.__dataclass_fields__["names"].default
    cal = fit(rows, names)
    print(f"fitted on (each family decoded by the network that never heard it; left out: "
          f"{', '.join(args.leave_out) or 'none'}):")
    report(rows, cal)
    print("checked on (the shipped network, whatever network this confidence is for; never "
          "fitted or trained on):")
    report(checks, cal)
    print("lines on the fitted set: calls acted on right / wrong, chatter and noise acted on")
    calls = [r for r in rows if r["want"] is not None]
    other = [r for r in rows if r["want"] is None]
    for line in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95):
        sure = [r for r in calls if r["measures"] and cal.confidence(r["measures"]) >= line]
        loud = [r for r in other if r["measures"] and cal.confidence(r["measures"]) >= line]
        print(f"  {line:.2f}: {sum(r['right'] for r in sure) / len(calls):6.1%} right, "
              f"{sum(not r['right'] for r in sure) / len(calls):6.2%} wrong, "
              f"{len(loud) / max(len(other), 1):6.2%} chatter")
    args.out.write_text(json.dumps({"features": list(names), "weights": list(cal.weights),
                                    "bias": cal.bias, "fitted_on": len(rows),
                                    "left_out": args.leave_out,
                                    "command": " ".join(["python -m training.confidence", *sys.argv[1:]])},
                                   indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
