"""Does the best call's stability under noise on the embedding tell right from wrong? (python -m training.confidence_agree_dev 4 0.3)"""
import pickle, sys
from pathlib import Path
import numpy as np
from companion.listen.decoder import CompiledGraph
from companion.listen.network import CallNetwork
from companion.listen.recogniser import call_graph, measures
from companion.sources import Expect
from training.build import load
from training.confidence import truth, expect_for
from training import confidence_dev as cd

K = int(sys.argv[1]) if len(sys.argv) > 1 else 4
NOISE = float(sys.argv[2]) if len(sys.argv) > 2 else 0.3
graphs = {e: CompiledGraph(call_graph(e, 40, True)) for e in (Expect.CALLS, Expect.COUNT)}


def rows_for(net, shard, keep):
    out = []
    std = net.weights["std"]
    for i, (f, labels, kind, voice, note) in enumerate(zip(
            shard["features"], shard["labels"], shard["kinds"], shard["voices"], shard["notes"])):
        if not keep(voice, i):
            continue
        g = graphs[expect_for(kind, i)]
        d = g.decode(net.log_probs(f))
        m = measures(d)
        if not m:
            continue
        rng = np.random.default_rng(i)
        agree = 0
        for k in range(K):
            x = f + NOISE * std * rng.standard_normal(f.shape).astype(np.float32)
            agree += g.decode(net.log_probs(x)).best == d.best
        m["agree"] = agree / K
        want = truth(labels, kind)
        out.append({"voice": voice, "kind": kind, "note": note, "want": want, "got": d.best,
                    "right": want is not None and d.best == want, "measures": m})
    return out


cache = Path(f"build/confidence-rows-agree{K}-{NOISE:g}.pkl")
if not cache.exists():
    rows = []
    for fam in ("espeak", "kokoro", "piper"):
        rows += rows_for(CallNetwork.load(Path(f"build/lofo/{fam}.npz")), load(Path(f"build/speech/{fam}.npz")),
                         lambda v, i, f=fam: v.startswith(f + ":"))
        print("decoded", fam, flush=True)
    shipped = CallNetwork.load(Path("companion/listen/call_model.npz"))
    rows += rows_for(shipped, load(Path("build/speech/noise.npz")), lambda v, i: i % 5 == 0)
    rows += rows_for(shipped, load(Path("build/speech/real.npz")), lambda v, i: v == "real:lucas")
    cache.write_bytes(pickle.dumps(rows))
rows = pickle.loads(cache.read_bytes())
AG = cd.BASE + ("agree",)
cd.FORMS["base+agree"] = lambda: cd.Logistic(AG)
for held in ("espeak", "kokoro", "piper", "real"):
    train = [r for r in rows if cd.family(r) != held and not cd.family(r).startswith("real:")]
    test = [r for r in rows if cd.family(r) == held or (held == "real" and cd.family(r).startswith("real:"))]
    first = None
    for name in ("base", "base+agree"):
        conf = cd.FORMS[name]().fit(train).predict(test)
        right, wrong, chat = cd.score(test, conf)
        first = wrong if first is None else first
        matched = max((cd.score(test, conf, s) for s in np.linspace(-0.3, 0.29, 60)
                       if cd.score(test, conf, s)[1] <= first), default=(0, 0, 0))
        print(f"{held:8} {name:11} {right:7.2%} {wrong:7.2%} {chat:7.2%}  matched {matched[0]:7.2%} ({matched[1]:.2%}, {matched[2]:.2%})", flush=True)
