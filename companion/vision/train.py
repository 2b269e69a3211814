"""Train the shipped networks: python -m companion.vision.train [--only detector|faces] [--real DIR].

First the dice detector (detector_model.npz, see companion/vision/train_detector.py), then the face
model (face_model.npz) on the crops that detector gives. Reproducible: fixed seeds for the synthetic
scenes, the jitter and the weight start, OpenCV on one thread and torch's deterministic algorithms
(the same --threads gives the same networks). Real photos are optional; when present, only the
training split (see `real_split`) is used, never the held-out part. Needs torch (pip install -e
'.[train]'); the networks it writes run without it.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import cv2
import numpy as np

from companion.vision import train_detector
from companion.vision.detect import MODEL_PATH as DETECTOR_PATH
from companion.vision.detect import Candidate, Detector, crop, load_detector
from companion.vision.model import (CHANNELS, MODEL_PATH, N_CLASSES, NOT_DIE, PACO, PATCH, SEVERAL, FaceModel, dihedral,
                                    features, im2col_weights)
from companion.vision.scenes import generate_scene

REAL_DEFAULT = pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "data" / "dice-photos"
# The detector's synthetic scenes start at this seed (times --seed): apart from the face model's
# (100000+), the benchmark's (2024000+) and the development sets (3000000+, 7000000+, 9000000+).
DETECTOR_SCENES_FROM = 5_000_000
# The face model's shape and data, chosen on a validation split of the training photos (every 5th
# set aside, 241 dice): the narrow 16-32-48 / 128 network with 6 jittered copies per real die and
# plain synthetic dice read 95.44% of them; twice the channels 97.10%; that with 12 copies and 40%
# of synthetic dice drawn rough (marbled, low-contrast pips, glare) 97.93% (a second seed the
# same); with 600 synthetic scenes instead of 300 97.93% again, but far less over-sure (jittered
# crops' log loss 0.16 -> 0.07, surely wrong crops 36 -> 20 of 2892).
FACE_SCENES = 600
CHANS = (32, 64, 96)
DENSE = 192
REAL_JITTER = 12
ROUGH = 0.4


def load_labels(root: pathlib.Path) -> list[dict]:
    with open(root / "labels.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def real_split(records: list[dict]) -> tuple[list[dict], list[dict]]:
    """Fixed split: sorted by file name, every 5th photo is held out (40 of 200)."""
    recs = sorted(records, key=lambda r: r["file"])
    train = [r for i, r in enumerate(recs) if i % 5 != 0]
    held = [r for i, r in enumerate(recs) if i % 5 == 0]
    return train, held


def validation_split(train: list[dict], every: int) -> tuple[list[dict], list[dict]]:
    """For choosing training settings without touching the held-out photos: every `every`-th
    training photo is set aside (0 = none)."""
    if every <= 0:
        return train, []
    return [r for i, r in enumerate(train) if i % every != 3], [r for i, r in enumerate(train) if i % every == 3]


def label_candidates(cands: list[Candidate], gts: list[tuple[int, tuple]]) -> list[int | None]:
    """Class of each candidate from the ground truth; None when too ambiguous to teach anything.

    A face only when the crop is centred on that die and about its size; "several" when the crop
    covers two or more die centres; "not a die" when its centre is on no die.
    """
    out: list[int | None] = []
    for c in cands:
        bx, by, bw, bh = c.box
        covered = [cls for cls, (x, y, w, h) in gts if bx <= x + w / 2 <= bx + bw and by <= y + h / 2 <= by + bh]
        inside = [(cls, (x, y, w, h)) for cls, (x, y, w, h) in gts if x <= c.cx <= x + w and y <= c.cy <= y + h]
        face = None
        if len(inside) == 1:
            cls, (x, y, w, h) = inside[0]
            s = max(w, h)
            off = np.hypot(c.cx - (x + w / 2), c.cy - (y + h / 2))
            if off < 0.22 * s and 0.65 < max(c.w, c.h) / s < 1.7:
                face = cls
        if face is not None:
            out.append(face)
        elif len(covered) >= 2:
            out.append(SEVERAL)
        elif not inside:
            out.append(NOT_DIE)
        else:
            out.append(None)
    return out


def _jittered(rng, c: Candidate, n: int, side_jit=0.1) -> list[Candidate]:
    out = []
    for _ in range(n):
        s = max(c.w, c.h)
        out.append(Candidate(cx=c.cx + rng.normal(0, 0.06) * s, cy=c.cy + rng.normal(0, 0.06) * s,
                             w=c.w * rng.uniform(1 - side_jit, 1 + side_jit * 1.5), h=c.h * rng.uniform(1 - side_jit, 1 + side_jit * 1.5),
                             angle=c.angle + rng.uniform(-12, 12)))
    return out


# Heat from which the detector's peaks become training crops: the weak ones teach "not a die".
CANDIDATE_HEAT = 0.1


def collect(image: np.ndarray, gts: list[tuple[int, tuple]], gt_cands: list[Candidate], rng, jitter: int,
            detector: Detector, augment: bool = False, side_jit: float = 0.1):
    """Labelled patches of one image: the detector's own crops (and jittered copies) matched to the
    ground truth, jittered crops of every true die, and off-centre crops that are no die."""
    patches, labels = [], []
    aug = (lambda p: train_detector.photometric(rng, p)) if augment else (lambda p: p)
    # every peak the detector offers, weak ones too, so the model learns to judge them
    cands = detector.find(image, threshold=CANDIDATE_HEAT)
    for c, y in zip(cands, label_candidates(cands, gts)):
        if y is None:
            continue
        patches.append(crop(image, c))
        labels.append(y)
        for cj in _jittered(rng, c, jitter if y not in (NOT_DIE, SEVERAL) else 1, side_jit):
            patches.append(aug(crop(image, cj)))
            labels.append(y)
    for (cls, _), g in zip(gts, gt_cands):
        for cj in _jittered(rng, g, jitter, side_jit):
            patches.append(aug(crop(image, cj)))
            labels.append(cls)
    # off-centre crops (half a die away) teach the model to say "not a die" between two dice
    for (cls, _), g in zip(gts, gt_cands):
        s = max(g.w, g.h)
        a = rng.uniform(0, 2 * np.pi)
        off = Candidate(cx=g.cx + np.cos(a) * s * 0.55, cy=g.cy + np.sin(a) * s * 0.55, w=g.w, h=g.h, angle=g.angle)
        inside = label_candidates([off], gts)[0]
        if inside == NOT_DIE:
            patches.append(crop(image, off))
            labels.append(NOT_DIE)
    return patches, labels


def synthetic_data(n_scenes: int, seed: int, detector: Detector, jitter: int = 2, rough: float = ROUGH):
    rng = np.random.default_rng(seed)
    P, Y = [], []
    for i in range(n_scenes):
        size = [(720, 1280), (480, 640), (640, 640), (1080, 1920)][i % 4]
        sc = generate_scene(seed * 100_000 + i, size=size, paco_fraction=0.5, rough=rough)
        gts = [(PACO if d.paco else d.face, d.box) for d in sc.dice]
        gcs = [Candidate(cx=cx, cy=cy, w=side, h=side, angle=a)
               for cx, cy, side, a in (train_detector.top_face(d.corners) for d in sc.dice)]
        p, y = collect(sc.image, gts, gcs, rng, jitter, detector)
        P += p
        Y += y
    return P, Y


def real_data(records: list[dict], root: pathlib.Path, seed: int, detector: Detector, jitter: int = REAL_JITTER):
    """Patches of the real photos given (the training split only), with camera-like augmentation."""
    rng = np.random.default_rng(seed)
    P, Y = [], []
    for r in records:
        img = cv2.imread(str(root / r["file"]))
        if img is None:
            continue
        gts = [(d["face"], tuple(d["box"])) for d in r["dice"]]
        gcs = [Candidate(cx=cx, cy=cy, w=side, h=side, angle=0.0)
               for cx, cy, side in (train_detector.photo_top(box) for _, box in gts)]
        p, y = collect(img, gts, gcs, rng, jitter, detector, augment=True, side_jit=0.15)
        P += p
        Y += y
    return P, Y


def evaluate(model: FaceModel, detector: Detector, records: list[dict], root: pathlib.Path) -> dict:
    """Per-die accuracy of the whole reader (detector + face model) on labelled photos, as the bench
    counts it."""
    from companion.bench.vision import Tally, score
    from companion.vision.reader import DiceReader

    reader = DiceReader(model=model, detector=detector)
    t = Tally("photos")
    for r in records:
        img = cv2.imread(str(root / r["file"]))
        if img is not None:
            score(t, reader.read(img), [(d["face"], tuple(d["box"]), False) for d in r["dice"]])
    return {"photos": t.images, "dice": t.gt, "per_die": t.right / max(1, t.gt),
            "face_acc": t.right / max(1, t.found), "recall": t.found / max(1, t.gt)}


def _network(chans: tuple[int, ...], dense: int):
    """The face network in torch, layer for layer the one FaceModel runs: 3x3 'same' convolutions,
    ReLU, 2x2 max pool, then two dense layers over the NHWC-flattened maps. (Batch norm and dropout
    were tried: no better on the validation photos.)"""
    from torch import nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            layers: list = []
            cin = CHANNELS
            for c in chans:
                layers += [nn.Conv2d(cin, c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]
                cin = c
            self.body = nn.Sequential(*layers)
            self.head = nn.Sequential(nn.Linear((PATCH // 8) ** 2 * chans[-1], dense), nn.ReLU(),
                                      nn.Linear(dense, N_CLASSES))

        def forward(self, x):
            h = self.body(x).permute(0, 2, 3, 1)  # NHWC, the order FaceModel flattens in
            return self.head(h.reshape(len(x), -1))

    return Net()


def export(net) -> tuple[np.ndarray, ...]:
    """Torch weights -> FaceModel's: convolutions as im2col matrices ((dy, dx, channel) rows),
    dense layers as (in, out)."""
    from torch import nn

    weights: list[np.ndarray] = []
    for conv in (m for m in net.body if isinstance(m, nn.Conv2d)):
        w = conv.weight.detach()
        weights += [im2col_weights(w.numpy()), conv.bias.detach().numpy().copy()]
    for lin in (m for m in net.head if isinstance(m, nn.Linear)):
        weights += [lin.weight.detach().T.contiguous().numpy().copy(), lin.bias.detach().numpy().copy()]
    return tuple(weights)


def fit(X_patches: np.ndarray, y: np.ndarray, *, seed: int = 1, epochs: int = 30, chans=CHANS,
        dense: int = DENSE, lr: float = 2e-3, batch: int = 128, threads: int = 2,
        log=print) -> FaceModel:
    """Train with AdamW and a cosine schedule, class-balanced loss, a random square symmetry per
    batch. Needs torch (pip install -e '.[train]'); the shipped model then runs without it."""
    torch = train_detector.start_torch(seed, threads)
    import torch.nn.functional as F

    rng = np.random.default_rng(seed)
    n = len(y)
    # features commute with the square's symmetries (the body colour is a median of the centre),
    # so they are computed once (NHWC, as `dihedral` takes them) and the symmetries applied to them
    feats = features(X_patches)
    maps = feats.reshape(n, CHANNELS, PATCH, PATCH).transpose(0, 2, 3, 1)
    labels = torch.from_numpy(y.astype(np.int64))
    freq = np.bincount(y, minlength=N_CLASSES).astype(np.float32) + 1
    class_weight = torch.from_numpy(((freq.sum() / freq / N_CLASSES) ** 0.5).astype(np.float32))
    net = _network(tuple(chans), dense)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    per_epoch = (n + batch - 1) // batch
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: 0.5 * (1 + np.cos(np.pi * t / (epochs * per_epoch))))
    for ep in range(epochs):
        net.train()
        t0 = time.time()
        order = rng.permutation(n)
        sym = rng.integers(0, 8, per_epoch)
        loss_sum, correct = 0.0, 0
        for k, i in enumerate(range(0, n, batch)):
            idx = order[i:i + batch]
            x = torch.from_numpy(np.ascontiguousarray(dihedral(maps[idx], int(sym[k])).transpose(0, 3, 1, 2)))
            yb = labels[torch.from_numpy(idx)]
            out = net(x)
            loss = F.cross_entropy(out, yb, weight=class_weight)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            loss_sum += float(loss.detach()) * len(idx)
            correct += int((out.argmax(1) == yb).sum())
        log(f"epoch {ep + 1}/{epochs} loss {loss_sum / n:.4f} train acc {correct / n:.4f} ({time.time() - t0:.0f}s)",
            flush=True)
    f0 = feats[: min(n, 5000)]
    return FaceModel(weights=export(net), mean=f0.mean(0), std=f0.std(0) + 0.1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m companion.vision.train", description=__doc__)
    ap.add_argument("--only", choices=("detector", "faces"), help="train one network (faces: on the shipped detector)")
    ap.add_argument("--detector-scenes", type=int, default=3000, help="synthetic scenes the detector learns from")
    ap.add_argument("--detector-epochs", type=int, default=30)
    ap.add_argument("--photo-repeat", type=int, default=6, help="times each training photo is seen per detector epoch")
    ap.add_argument("--scenes", type=int, default=FACE_SCENES, help="synthetic scenes the face model learns from")
    ap.add_argument("--rough", type=float, default=ROUGH,
                    help="share of the face model's synthetic dice drawn with real dice's rougher looks (marbled, "
                         "pips of little contrast, glare streaks)")
    ap.add_argument("--real", type=pathlib.Path, default=REAL_DEFAULT, help="labelled photos (training split only)")
    ap.add_argument("--no-real", action="store_true", help="synthetic data only")
    ap.add_argument("--epochs", type=int, default=30, help="face model epochs")
    ap.add_argument("--chans", type=str, default=",".join(map(str, CHANS)), help="face model conv channels per stage")
    ap.add_argument("--dense", type=int, default=DENSE)
    ap.add_argument("--real-jitter", type=int, default=REAL_JITTER, help="jittered, camera-augmented copies per real die crop")
    ap.add_argument("--val-every", type=int, default=0,
                    help="set every N-th training photo aside to compare settings (0: train on all of them)")
    ap.add_argument("--cache", type=pathlib.Path, help="reuse/save the face model's extracted patches here (.npz)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2, help="torch threads (at most the free cores: more spin)")
    ap.add_argument("--detector-out", type=pathlib.Path, default=DETECTOR_PATH)
    ap.add_argument("--out", type=pathlib.Path, default=MODEL_PATH)
    a = ap.parse_args(argv)
    cv2.setRNGSeed(a.seed)
    cv2.setNumThreads(1)  # the same crops (and so the same networks) whatever the machine
    t0 = time.time()
    use_real = not a.no_real and (a.real / "labels.jsonl").exists()
    train, held, val = [], [], []
    if use_real:
        train, held = real_split(load_labels(a.real))
        train, val = validation_split(train, a.val_every)
    elif not a.no_real:
        print(f"real photos not found at {a.real}; synthetic only", flush=True)
    if a.only == "faces":
        detector = load_detector(a.detector_out)
    else:
        examples = train_detector.synthetic_examples(DETECTOR_SCENES_FROM * a.seed, a.detector_scenes, a.threads)
        photos = train_detector.photo_examples(train, a.real) if use_real else []
        print(f"detector: {len(examples)} scenes and {len(photos)} photos x {a.photo_repeat} "
              f"({time.time() - t0:.0f}s)", flush=True)
        detector = train_detector.fit_detector(examples + photos * a.photo_repeat, epochs=a.detector_epochs,
                                               seed=a.seed, threads=a.threads)
        train_detector.save_detector(detector, a.detector_out)
        print(f"saved {a.detector_out} ({a.detector_out.stat().st_size / 1e6:.2f} MB) in {time.time() - t0:.0f}s",
              flush=True)
        if a.only == "detector":
            return 0
    if a.cache is not None and a.cache.exists():
        with np.load(a.cache) as z:
            X, y = z["X"], z["y"]
        print(f"patches from cache {a.cache}: {len(y)}", flush=True)
    else:
        P, Y = synthetic_data(a.scenes, a.seed, detector, rough=a.rough)
        print(f"faces: {len(Y)} patches from {a.scenes} scenes ({time.time() - t0:.0f}s)", flush=True)
        if use_real:
            p, yy = real_data(train, a.real, a.seed, detector, a.real_jitter)
            P += p
            Y += yy
            print(f"faces: {len(yy)} patches from {len(train)} training photos ({len(val)} set aside for "
                  f"validation, {len(held)} held out; both unused)", flush=True)
        X = np.stack(P).astype(np.uint8)
        y = np.array(Y, np.int64)
        if a.cache is not None:
            np.savez_compressed(a.cache, X=X, y=y)
    print("class counts:", np.bincount(y, minlength=N_CLASSES).tolist(), flush=True)
    chans = tuple(int(c) for c in a.chans.split(","))
    model = fit(X, y, seed=a.seed, epochs=a.epochs, chans=chans, dense=a.dense,
                threads=a.threads)
    model.save(a.out)
    print(f"saved {a.out} ({a.out.stat().st_size / 1e6:.2f} MB) in {time.time() - t0:.0f}s", flush=True)
    # a check on photos the networks never saw: the validation photos while settings are being
    # compared, else the fixed held-out split (report it; never tune on it)
    for name, recs in (("validation", val), ("held-out", held if not val else [])):
        if recs:
            r = evaluate(model, detector, recs, a.real)
            print(f"{name} real photos: {r['photos']} photos, {r['dice']} dice: per-die {100 * r['per_die']:.2f}% "
                  f"face acc {100 * r['face_acc']:.2f}% recall {100 * r['recall']:.2f}%", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
