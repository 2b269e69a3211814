"""Training the face model (companion.vision.model) on the crops the dice detector gives, run by
`python -m training.vision`.

Crops come from synthetic scenes and the training photos: the detector's own peaks (weak ones
too, so the model learns to judge them) labelled from the ground truth, jittered copies of every
true die, and off-centre crops that are no die. Needs torch (pip install -e '.[train]').
"""
from __future__ import annotations

import pathlib
import time
from collections.abc import Sequence

import cv2
import numpy as np

from companion.vision.detect import Candidate, Detector, crop
from companion.vision.model import (CHANNELS, N_CLASSES, NOT_DIE, PACO, PATCH, SEVERAL, FaceModel, dihedral,
                                    features, im2col_weights)
from companion.vision.scenes import DICE_STYLES, generate_scene
from training import vision_detector

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
SCENE_SIZES = ((720, 1280), (480, 640), (640, 640), (1080, 1920))  # frames of the webcams people own


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
            detector: Detector, augment: bool = False, side_jit: float = 0.1, close_up: bool = False):
    """Labelled patches of one image: the detector's own crops (and jittered copies) matched to the
    ground truth, jittered crops of every true die, and off-centre crops that are no die.
    `close_up`: the detector looks as calibration does at dice held to the camera."""
    patches, labels = [], []
    aug = (lambda p: vision_detector.photometric(rng, p)) if augment else (lambda p: p)
    # every peak the detector offers, weak ones too, so the model learns to judge them
    cands = detector.find(image, threshold=CANDIDATE_HEAT, close_up=close_up)
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
    scenes = (_labelled_scene(seed * 100_000 + i, rough=rough) for i in range(n_scenes))
    return _scene_patches(scenes, np.random.default_rng(seed), jitter, detector)


# Scenes all of one finish besides the mixed ones (seeds of their own): the mixed scenes hold
# few marbled, dark or transparent dice. With 400 of them, a face model trained with the
# validation photos set aside misread 11 dice of 1621 in 100 marbled scenes of seeds of
# their own, against 18 without; on the validation photos 5 dice of 241 against 4. With
# dark marbled dice as a sixth finish, 480 keep 80 scenes a finish; on 100 scenes of each
# finish of seeds of their own (benchmarks.vision --seed 9000), dark marbled dice were
# misread or missed 30 times in 1553 instead of 69, the other finishes and things in view
# 12 times instead of 15.
FINISH_SCENES = 480
FINISH_SCENES_FROM = 7_000_000


def finish_data(n_scenes: int, seed: int, detector: Detector, jitter: int = 2):
    """Patches of `n_scenes` scenes each drawn in one dice finish, the finishes taken in turn."""
    styles = [s for s in DICE_STYLES if s != "plain"]
    scenes = (_labelled_scene(FINISH_SCENES_FROM * seed + i, dice_style=styles[i % len(styles)])
              for i in range(n_scenes))
    return _scene_patches(scenes, np.random.default_rng([seed, 7]), jitter, detector)


def _scene_patches(scenes, rng, jitter: int, detector: Detector, close_up: bool = False):
    """`collect`'s patches and labels of labelled scenes, each die's crop taken from its true top."""
    P, Y = [], []
    for sc, gts in scenes:
        gcs = [Candidate(cx=cx, cy=cy, w=side, h=side, angle=a)
               for cx, cy, side, a in (vision_detector.top_face(d.corners) for d in sc.dice)]
        p, y = collect(sc.image, gts, gcs, rng, jitter, detector, close_up=close_up)
        P += p
        Y += y
    return P, Y


# Dice held to the camera, as calibration reads a player's Paco face (companion.vision.calibrate):
# one to four dice at 1.2 to 3.2 times the usual size, every other scene all toucans, found at the
# detector's close-up scales. Pictures of no dice (below) teach "not a die" from big, detailed
# shapes; these keep a big toucan a die (without them a toucan at 1.6 times was refused).
CLOSE_UP_SCENES = 400
CLOSE_UP_JITTER = 4
CLOSE_UP_SCENES_FROM = 12_000_000


def close_up_data(n_scenes: int, seed: int, detector: Detector, jitter: int = CLOSE_UP_JITTER):
    """Patches of `n_scenes` close-ups of big dice (seeds of their own), found as calibration finds them."""
    def scene(scene_seed: int):
        rng = np.random.default_rng([scene_seed, 12])
        return _labelled_scene(scene_seed, n_dice=int(rng.integers(1, 5)), faces=(1,) if scene_seed % 2 else None,
                               paco_fraction=1.0, touching=0.0, die_scale=float(rng.uniform(1.2, 3.2)), angle=0.3,
                               hard=0.5, objects=0.0)

    scenes = (scene(CLOSE_UP_SCENES_FROM * seed + i) for i in range(n_scenes))
    return _scene_patches(scenes, np.random.default_rng([seed, 12]), jitter, detector, close_up=True)


def _labelled_scene(scene_seed: int, **options):
    """Training scene `scene_seed` (its options from the seed, changed by `options`) and its
    dice as (class, box)."""
    sc = generate_scene(scene_seed, size=SCENE_SIZES[scene_seed % len(SCENE_SIZES)],
                        **({"paco_fraction": 0.5} | vision_detector.scene_options(scene_seed) | options))
    return sc, [(PACO if d.paco else d.face, d.box) for d in sc.dice]


# The reader's own near misses on scenes full of things that are not dice (cards' clubs, buttons,
# chip spots): crops of no die that the face model being replaced (or an earlier one mined with
# it) gives less than this chance of being no die, added back with jittered copies so the next
# model learns them.
MINED_SCENES_FROM = 6_000_000
MINED_SCENES = 6000
MINED_BELOW = 0.5
MINED_JITTER = 8


def mined_negatives(n_scenes: int, seed: int, detector: Detector, models: Sequence[FaceModel], *,
                    jitter: int = MINED_JITTER, processes: int = 2, log=print):
    """Hard "not a die" patches from `n_scenes` object-laden scenes (seeds of their own): every
    detector peak on no die that any of `models` takes for a die or cannot tell, and jittered
    copies. Mining with the earlier models too keeps the near misses they were trained away from,
    which the newest model no longer makes and so would not hand on."""
    scenes = range(MINED_SCENES_FROM * seed, MINED_SCENES_FROM * seed + n_scenes)
    P = _mined(_mine_scene, scenes, (seed, detector, tuple(models), jitter), processes)
    log(f"mined {len(P) // (jitter + 1)} near misses in {n_scenes} scenes with things beside the dice", flush=True)
    return P, [NOT_DIE] * len(P)


def _mined(mine, seeds, shared: tuple, processes: int) -> list[np.ndarray]:
    """`mine` of every seed, in forked processes that share `shared` (seed, detector, models, jitter)."""
    global _MINING
    _MINING = shared
    return [p for patches in vision_detector.per_scene(mine, seeds, processes) for p in patches]


_MINING: tuple = ()  # what the mining processes share (set before they fork)


def _mine_scene(scene_seed: int) -> list[np.ndarray]:
    seed, detector, models, jitter = _MINING
    rng = np.random.default_rng([seed, scene_seed])  # per scene, so the processes cannot change it
    sc, gts = _labelled_scene(scene_seed, objects=1.0)
    cands = detector.find(sc.image, threshold=CANDIDATE_HEAT)
    misses = [c for c, y in zip(cands, label_candidates(cands, gts)) if y == NOT_DIE]
    return _near_misses(sc.image, misses, models, rng, jitter)


def _near_misses(image: np.ndarray, misses: list[Candidate], models, rng, jitter: int,
                 most: int | None = None) -> list[np.ndarray]:
    """The crops of `misses` (detector peaks on no die) that any of `models` gives less than
    MINED_BELOW of being no die, each followed by `jitter` jittered copies; with `most`, only that
    many, the surest taken for dice first."""
    if not misses:
        return []
    patches = np.stack([crop(image, c) for c in misses])
    p_not = np.min([m.predict(patches)[:, NOT_DIE] for m in models], axis=0)
    near = [i for i in range(len(misses)) if p_not[i] < MINED_BELOW]
    if most is not None:
        near = sorted(near, key=lambda i: p_not[i])[:most]
    return [patch for i in near
            for patch in [patches[i], *(crop(image, cj) for cj in _jittered(rng, misses[i], jitter))]]


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
               for cx, cy, side in (vision_detector.photo_top(box) for _, box in gts)]
        p, y = collect(img, gts, gcs, rng, jitter, detector, augment=True, side_jit=0.15)
        P += p
        Y += y
    return P, Y


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
    torch = vision_detector.start_torch(seed, threads)
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


# Pictures of something else entirely (training/vision_pictures.py: pages, screens, charts,
# diagrams, circuit boards), where every detector peak is no die: the face model's near misses
# there, at most PICTURE_MOST a picture (the surest first, so one page of text cannot crowd out
# the rest), go back into training as "not a die" with jittered copies.
PICTURES_FROM = 11_000_000
PICTURES = 800
PICTURE_MOST = 6
PICTURE_JITTER = 4


def picture_negatives(n_pictures: int, seed: int, detector: Detector, models: Sequence[FaceModel], *,
                      processes: int = 2, log=print):
    """Hard "not a die" patches from `n_pictures` pictures with no dice in them (seeds of their own)."""
    pictures = range(PICTURES_FROM * seed, PICTURES_FROM * seed + n_pictures)
    P = _mined(_mine_picture, pictures, (seed, detector, tuple(models), PICTURE_JITTER), processes)
    log(f"mined {len(P) // (PICTURE_JITTER + 1)} near misses in {n_pictures} pictures of no dice", flush=True)
    return P, [NOT_DIE] * len(P)


def _mine_picture(picture_seed: int) -> list[np.ndarray]:
    from training.vision_pictures import generate_picture

    seed, detector, models, jitter = _MINING
    rng = np.random.default_rng([seed, picture_seed])
    image = generate_picture(picture_seed, size=SCENE_SIZES[picture_seed % len(SCENE_SIZES)])
    # every peak on a picture of no dice is a miss
    return _near_misses(image, detector.find(image, threshold=CANDIDATE_HEAT), models, rng, jitter, PICTURE_MOST)
