"""Training the dice detector (companion.vision.detect), run by `python -m training.vision`.

Each training image is a synthetic scene or a training photo scaled so its longest side is the
detector's INPUT, with its dice as (cx, cy, side, angle, angle known) at that scale, in OpenCV's pixel
coordinates (pixel centres at whole numbers) through every resize, turn and mirror. Photos are
labelled with upright boxes only, so their dice teach the centre and, roughly, the size (a turned
die's box is up to 1.4 times its side), but not the turn.
Training looks at random 160 px windows, scaled, turned, mirrored and recoloured, with CenterNet's
targets: a Gaussian bump per die centre on the heatmap (penalty-reduced focal loss) and the
offset, size and turn at the centre's cell (L1).
"""
from __future__ import annotations

import functools
import multiprocessing
import pathlib
import time

import cv2
import numpy as np

from companion.vision.detect import INPUT, LAYERS, OUTPUTS, STRIDE, Detector, network_input, rescale, resized
from companion.vision.model import im2col_weights
from companion.vision.scenes import DICE_STYLES, generate_scene

WINDOW = 160  # input pixels a side of each training window
SIZES = ((720, 1280), (720, 1280), (640, 640), (480, 640))  # frame shapes of the synthetic scenes


def to_input_scale(img: np.ndarray) -> tuple[np.ndarray, tuple[float, float]]:
    return resized(img, INPUT / max(img.shape[:2]))


def top_face(corners) -> tuple[float, float, float, float]:
    """(cx, cy, side, angle in degrees mod 90) of a die's top from its four corners."""
    c = np.asarray(corners, np.float64)
    edges = np.roll(c, -1, 0) - c
    return (float(c[:, 0].mean()), float(c[:, 1].mean()), float(np.linalg.norm(edges, axis=1).mean()),
            float(np.degrees(np.arctan2(edges[0, 1], edges[0, 0])) % 90.0))


# A real reveal has cups, chips, coins and hands in view, and dice of every finish: this share
# of the training scenes (detector and face model alike) show things that are not dice, and
# this share dice of one finish (dark, transparent, marbled, metallic, coloured pips).
WITH_OBJECTS = 0.5
STYLED = 0.3


def scene_options(seed: int) -> dict:
    """The objects and dice finish of training scene `seed`: drawn from the seed alone (its own
    stream), so each scene is the same whichever process makes it."""
    rng = np.random.default_rng([seed, 24])
    style = str(rng.choice(DICE_STYLES[1:])) if rng.random() < STYLED else None
    return {"objects": WITH_OBJECTS, "dice_style": style}


def scene_example(seed: int, **options) -> tuple[np.ndarray, np.ndarray]:
    """One synthetic scene at the detector's scale and its dice (cx, cy, side, angle, 1);
    `options` change those the seed draws (scene_options)."""
    sc = generate_scene(seed, size=SIZES[seed % len(SIZES)], **(scene_options(seed) | options))
    img, scale = to_input_scale(sc.image)
    dice = [(*rescale(cx, cy, scale), side * scale[0], a, 1.0) for cx, cy, side, a in (top_face(d.corners) for d in sc.dice)]
    return img, np.array(dice, np.float32).reshape(-1, 5)


def synthetic_examples(first_seed: int, n: int, processes: int = 2) -> list[tuple[np.ndarray, np.ndarray]]:
    """Scenes first_seed .. first_seed + n - 1 (each made from its own seed alone, so the number of
    processes cannot change them)."""
    return per_scene(scene_example, range(first_seed, first_seed + n), processes)


# Dark marbled dice are the finish the detector reads worst: a swirl or a bright pip on a dark
# body gets a peak of its own, a small "die" on the die, and the die's own peak may be missed or
# measured small. These scenes, all dark marbled, can come besides the mixed ones (where about
# one scene in twenty is dark marbled). The shipped detector has none: trained with 600 and read
# with the face model of the detector before, it misread fewer dark marbled dice and more real
# ones (docs/benchmark-notes.md, vision); its crops want a face model trained on them.
FINISH_SCENES = 0
FINISH_STYLE = "dark_marbled"


def finish_examples(first_seed: int, n: int, processes: int = 2) -> list[tuple[np.ndarray, np.ndarray]]:
    """Scenes first_seed .. first_seed + n - 1 with every die in FINISH_STYLE."""
    return per_scene(functools.partial(scene_example, dice_style=FINISH_STYLE), range(first_seed, first_seed + n),
                     processes)


def per_scene(make, seeds, processes: int) -> list:
    """`make` of each scene seed, in order, in `processes` forked processes (what `make` needs
    beyond the seed is shared by the fork); no processes are forked for no seeds (a set of 0 scenes)."""
    if processes <= 1 or not seeds:
        return [make(s) for s in seeds]
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        return pool.map(make, seeds, chunksize=16)


# A labelled box holds the die's top and a little of its sides: its top's side is a bit smaller.
BOX_TO_SIDE = 0.92


def photo_top(box) -> tuple[float, float, float]:
    """(cx, cy, side) of a labelled photo die's top from its upright box [x, y, w, h]. The side is
    only roughly right: a die turned 45 degrees fills a box 1.4 times its side."""
    x, y, w, h = box
    return x + w / 2, y + h / 2, min(w, h) * BOX_TO_SIDE


def photo_examples(records: list[dict], root: pathlib.Path) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for r in records:
        img = cv2.imread(str(root / r["file"]))
        if img is None:
            continue
        img, scale = to_input_scale(img)
        dice = [(*rescale(cx, cy, scale), side * scale[0], 0.0, 0.0)
                for cx, cy, side in (photo_top(d["box"]) for d in r["dice"])]
        out.append((img, np.array(dice, np.float32).reshape(-1, 5)))
    return out


def targets(dice: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Heatmap (g, g), regression targets (5, g, g) and their masks (2, g, g: a centre; its turn
    known) for a size x size window's dice."""
    g = size // STRIDE
    heat = np.zeros((g, g), np.float32)
    reg = np.zeros((5, g, g), np.float32)
    mask = np.zeros((2, g, g), np.float32)
    yy, xx = np.mgrid[0:g, 0:g]
    for cx, cy, side, angle, known in dice:
        u, v = cx / STRIDE, cy / STRIDE
        iu, iv = int(np.floor(u)), int(np.floor(v))
        if not (0 <= iu < g and 0 <= iv < g):
            continue
        sigma = max(0.5, side / STRIDE / 6)
        heat = np.maximum(heat, np.exp(-((xx - iu) ** 2 + (yy - iv) ** 2) / (2 * sigma * sigma)))
        heat[iv, iu] = 1.0
        a = np.deg2rad(angle) * 4
        reg[:, iv, iu] = (u - iu, v - iv, np.log(max(side, 2.0) / STRIDE), np.cos(a), np.sin(a))
        mask[:, iv, iu] = (1.0, known)
    return heat, reg, mask


# How much training windows are scaled: dice 8 to 33 px at the input. (A quarter of the windows
# also scaled 0.3-0.7x and a tenth 1.4-2.2x, to measure tiny and huge dice truly, cost exact
# counts on the development scenes, 99.0 -> 96.3%, and tripled false positives on photos.)
SCALES = (0.7, 1.4)


def photometric(rng, image: np.ndarray) -> np.ndarray:
    """Camera-like changes of an image or patch: contrast, brightness, colour cast, focus blur,
    noise. Why: the training photos share one phone and one light; the networks should not learn
    them."""
    p = image.astype(np.float32)
    mean = p.mean()
    p = (p - mean) * rng.uniform(0.7, 1.3) + mean + rng.uniform(-30, 30)
    p *= rng.uniform(0.92, 1.08, 3).astype(np.float32)
    if rng.random() < 0.5:
        p = cv2.GaussianBlur(p, (0, 0), rng.uniform(0.4, 1.1))
    if rng.random() < 0.5:
        p += rng.normal(0, rng.uniform(1, 6), p.shape).astype(np.float32)
    return np.clip(p, 0, 255).astype(np.uint8)


def augment(rng: np.random.Generator, img: np.ndarray, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A random WINDOW x WINDOW view: scaled (see SCALES), turned by quarter turns, perhaps
    mirrored, recoloured (see photometric), with its dice's labels moved the same way."""
    d = dice.copy()
    img, scale = resized(img, rng.uniform(*SCALES))
    d[:, 0], d[:, 1] = rescale(d[:, 0], d[:, 1], scale)
    d[:, 2] *= scale[0]
    h, w = img.shape[:2]
    if h < WINDOW or w < WINDOW:
        # a flat pad of the table's colour (a mirrored pad would hold unlabelled dice)
        table = [float(v) for v in np.median(img.reshape(-1, 3), axis=0)]
        img = cv2.copyMakeBorder(img, 0, max(0, WINDOW - h), 0, max(0, WINDOW - w), cv2.BORDER_CONSTANT, value=table)
        h, w = img.shape[:2]
    y0, x0 = int(rng.integers(0, h - WINDOW + 1)), int(rng.integers(0, w - WINDOW + 1))
    img = img[y0:y0 + WINDOW, x0:x0 + WINDOW]
    d[:, 0] -= x0
    d[:, 1] -= y0
    last = WINDOW - 1  # the last pixel's coordinate
    for _ in range(int(rng.integers(4))):  # a quarter turn (np.rot90): (x, y) -> (y, last - x); turns stay
        img = np.rot90(img)
        d[:, 0], d[:, 1] = d[:, 1].copy(), last - d[:, 0]
    if rng.random() < 0.5:
        img = img[:, ::-1]
        d[:, 0] = last - d[:, 0]
        d[:, 3] = (-d[:, 3]) % 90.0
    return photometric(rng, np.ascontiguousarray(img)), d


def network(layers=LAYERS):
    """The detector in torch, layer for layer the one detect.Detector runs."""
    import torch
    from torch import nn

    mods, cin = [], 3
    for i, (out, k, stride, dilation) in enumerate(layers):
        mods.append(nn.Conv2d(cin, out, k, stride, dilation * (k // 2), dilation=dilation))
        if i < len(layers) - 1:
            mods.append(nn.ReLU())
        cin = out
    net = nn.Sequential(*mods)
    with torch.no_grad():
        net[-1].bias[0] = -2.2  # few centres at the start (CenterNet's prior of 0.1)
    return net


def export(net) -> tuple[np.ndarray, ...]:
    """Torch weights -> the detector's: im2col matrices ((dy, dx, channel) rows) and biases."""
    from torch import nn

    out: list[np.ndarray] = []
    for c in (m for m in net if isinstance(m, nn.Conv2d)):
        w = c.weight.detach()
        out += [im2col_weights(w.numpy()), c.bias.detach().numpy().copy()]
    return tuple(out)


def _focal(logits, heat):
    """CenterNet's focal loss: peaks pull the heat up, the rest down, less so near a peak."""
    import torch

    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = heat.eq(1).float()
    loss = -(torch.log(p) * (1 - p) ** 2 * pos + torch.log(1 - p) * p ** 2 * (1 - heat) ** 4 * (1 - pos))
    return loss.sum() / pos.sum().clamp(min=1)


def start_torch(seed: int, threads: int):
    """torch, seeded, on `threads` threads, with its deterministic algorithms (both trainers)."""
    try:
        import torch
    except ImportError:
        raise SystemExit("training needs torch: pip install -e '.[train]'") from None
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    return torch


def fit_detector(examples: list[tuple[np.ndarray, np.ndarray]], *, epochs: int = 30, batch: int = 32,
                 lr: float = 3e-3, seed: int = 1, threads: int = 2, log=print) -> Detector:
    """Train on the examples (one random window of each per epoch). Needs torch."""
    torch = start_torch(seed, threads)
    rng = np.random.default_rng(seed)
    net = network()
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    per_epoch = (len(examples) + batch - 1) // batch
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=epochs * per_epoch, pct_start=0.1)
    for ep in range(epochs):
        t0 = time.time()
        order = rng.permutation(len(examples))
        sums = np.zeros(4)
        for i in range(0, len(order), batch):
            xs, hs, rs, ms = [], [], [], []
            for k in order[i:i + batch]:
                img, dice = augment(rng, *examples[k])
                heat, reg, mask = targets(dice, WINDOW)
                xs.append(network_input(img)[0])
                hs.append(heat)
                rs.append(reg)
                ms.append(mask)
            x, heat, reg, mask = (torch.from_numpy(np.stack(a)) for a in (xs, hs, rs, ms))
            out = net(x)
            n = mask[:, 0].sum().clamp(min=1)
            n_turn = mask[:, 1].sum().clamp(min=1)
            # (photo dice teach the size too: without it the size of real dice came out small
            # enough for the detector to look again at most photos, and recall fell 100 -> 98.8%)
            losses = (_focal(out[:, 0], heat),
                      (torch.abs(out[:, 1:3] - reg[:, 0:2]) * mask[:, :1]).sum() / n,
                      (torch.abs(out[:, 3] - reg[:, 2]) * mask[:, 0]).sum() / n,
                      (torch.abs(out[:, 4:6] - reg[:, 3:5]) * mask[:, 1:2]).sum() / n_turn)
            loss = losses[0] + losses[1] + 0.5 * losses[2] + 0.5 * losses[3]
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            sums += [float(v.detach()) for v in losses]
        h, o, s, a = sums / per_epoch
        log(f"detector epoch {ep + 1}/{epochs}: heat {h:.3f} offset {o:.3f} size {s:.3f} turn {a:.3f} "
            f"({time.time() - t0:.0f}s)", flush=True)
    assert OUTPUTS == net[-1].out_channels
    return Detector(weights=export(net))


def save_detector(detector: Detector, path: pathlib.Path) -> None:
    np.savez_compressed(path, **{f"w{i}": w.astype(np.float32) for i, w in enumerate(detector.weights)})
