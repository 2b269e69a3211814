"""Train the shipped networks: python -m training.vision [--only detector|faces] [--real DIR].

First the dice detector (detector_model.npz, see training/vision_detector.py), then the face
model (face_model.npz) on the crops that detector gives, and on the near misses of the face model
it replaces, and of any earlier ones (--mine-with, repeatable), on scenes full of things that are
not dice and on pictures of something else entirely (pages, screens, charts, diagrams, circuit
boards: training/vision_pictures.py). Reproducible: fixed seeds for the synthetic
scenes, the jitter and the weight start, OpenCV on one thread and torch's deterministic algorithms
(the same --threads gives the same networks). Real photos are optional; when present, only the
training split (see training.dice_photos.real_split) is used, never the held-out part. Needs
torch (pip install -e '.[train]'); the networks it writes run without it.
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import time

import cv2
import numpy as np

from companion.vision.detect import MODEL_PATH as DETECTOR_PATH
from companion.vision.detect import Detector, load_detector
from companion.vision.model import MODEL_PATH, N_CLASSES, FaceModel, load_model
from companion.vision.reader import DiceReader
from training import vision_detector, vision_faces
from training.dice_photos import PHOTOS, Tally, labels_of, load_labels, real_split, score, validation_split

# The detector's synthetic scenes start at this seed (times --seed): apart from the face model's
# (100000+), the benchmark's (2024000+) and the development sets (3000000+, 7000000+, 9000000+).
DETECTOR_SCENES_FROM = 5_000_000
DETECTOR_FINISH_SCENES_FROM = 8_000_000  # its scenes of one finish (--detector-finish-scenes): apart again


def evaluate(model: FaceModel, detector: Detector, records: list[dict], root: pathlib.Path) -> dict:
    """Per-die accuracy of the whole reader (detector + face model) on labelled photos, as the bench
    counts it."""
    reader = DiceReader(model=model, detector=detector)
    t = Tally("photos")
    for r in records:
        img = cv2.imread(str(root / r["file"]))
        if img is not None:
            score(t, reader.read(img), labels_of(r))
    return {"photos": t.images, "dice": t.gt, "per_die": t.right / max(1, t.gt),
            "face_acc": t.right / max(1, t.found), "recall": t.found / max(1, t.gt)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.vision", description=__doc__)
    ap.add_argument("--only", choices=("detector", "faces"), help="train one network (faces: on the shipped detector)")
    ap.add_argument("--detector-scenes", type=int, default=3000, help="synthetic scenes the detector learns from")
    ap.add_argument("--detector-finish-scenes", type=int, default=vision_detector.FINISH_SCENES,
                    help=f"more scenes the detector learns from, every die {vision_detector.FINISH_STYLE}")
    ap.add_argument("--detector-epochs", type=int, default=30)
    ap.add_argument("--photo-repeat", type=int, default=6, help="times each training photo is seen per detector epoch")
    ap.add_argument("--scenes", type=int, default=vision_faces.FACE_SCENES, help="synthetic scenes the face model learns from")
    ap.add_argument("--finish-scenes", type=int, default=vision_faces.FINISH_SCENES,
                    help="more synthetic scenes for the face model, each all in one dice finish (dark, "
                         "transparent, marbled, metallic, coloured pips in turn)")
    ap.add_argument("--rough", type=float, default=vision_faces.ROUGH,
                    help="share of the face model's synthetic dice drawn with real dice's rougher looks (marbled, "
                         "pips of little contrast, glare streaks)")
    ap.add_argument("--close-up-scenes", type=int, default=vision_faces.CLOSE_UP_SCENES,
                    help="synthetic close-ups of big dice held to the camera, read as calibration reads them")
    ap.add_argument("--real", type=pathlib.Path, default=PHOTOS, help="labelled photos (training split only)")
    ap.add_argument("--no-real", action="store_true", help="synthetic data only")
    ap.add_argument("--epochs", type=int, default=30, help="face model epochs")
    ap.add_argument("--chans", type=str, default=",".join(map(str, vision_faces.CHANS)), help="face model conv channels per stage")
    ap.add_argument("--dense", type=int, default=vision_faces.DENSE)
    ap.add_argument("--real-jitter", type=int, default=vision_faces.REAL_JITTER, help="jittered, camera-augmented copies per real die crop")
    ap.add_argument("--mine-scenes", type=int, default=vision_faces.MINED_SCENES,
                    help="scenes full of things that are not dice, searched for the reader's near misses")
    ap.add_argument("--mine-with", type=pathlib.Path, action="append",
                    help="a face model whose near misses are mined; repeat it to mine with each of several "
                         "(default: the shipped one, before it is replaced)")
    ap.add_argument("--pictures", type=int, default=vision_faces.PICTURES,
                    help="pictures of no dice (pages, screens, charts, diagrams, circuit boards) searched for the "
                         "reader's near misses")
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
        examples = vision_detector.synthetic_examples(DETECTOR_SCENES_FROM * a.seed, a.detector_scenes, a.threads)
        examples += vision_detector.finish_examples(DETECTOR_FINISH_SCENES_FROM * a.seed, a.detector_finish_scenes,
                                                    a.threads)
        photos = vision_detector.photo_examples(train, a.real) if use_real else []
        print(f"detector: {len(examples)} scenes and {len(photos)} photos x {a.photo_repeat} "
              f"({time.time() - t0:.0f}s)", flush=True)
        detector = vision_detector.fit_detector(examples + photos * a.photo_repeat, epochs=a.detector_epochs,
                                                seed=a.seed, threads=a.threads)
        vision_detector.save_detector(detector, a.detector_out)
        print(f"saved {a.detector_out} ({a.detector_out.stat().st_size / 1e6:.2f} MB) in {time.time() - t0:.0f}s",
              flush=True)
        if a.only == "detector":
            return 0
    if a.cache is not None and a.cache.exists():
        with np.load(a.cache) as z:
            X, y = z["X"], z["y"]
        print(f"patches from cache {a.cache}: {len(y)}", flush=True)
    else:
        P, Y = vision_faces.synthetic_data(a.scenes, a.seed, detector, rough=a.rough)
        print(f"faces: {len(Y)} patches from {a.scenes} scenes ({time.time() - t0:.0f}s)", flush=True)
        for count, make, what in ((a.finish_scenes, vision_faces.finish_data, "scenes of one dice finish each"),
                                  (a.close_up_scenes, vision_faces.close_up_data, "close-ups of big dice")):
            if count:
                p, yy = make(count, a.seed, detector)
                P += p
                Y += yy
                print(f"faces: {len(yy)} patches from {count} {what} ({time.time() - t0:.0f}s)", flush=True)
        if use_real:
            p, yy = vision_faces.real_data(train, a.real, a.seed, detector, a.real_jitter)
            P += p
            Y += yy
            print(f"faces: {len(yy)} patches from {len(train)} training photos ({len(val)} set aside for "
                  f"validation, {len(held)} held out; both unused)", flush=True)
        miners = [load_model(m) for m in a.mine_with or [MODEL_PATH]] if a.mine_scenes or a.pictures else []
        for count, mine in ((a.mine_scenes, vision_faces.mined_negatives),
                            (a.pictures, vision_faces.picture_negatives)):
            if count:
                p, yy = mine(count, a.seed, detector, miners, processes=a.threads)
                P += p
                Y += yy
        X = np.stack(P).astype(np.uint8)
        y = np.array(Y, np.int64)
        if a.cache is not None:
            np.savez_compressed(a.cache, X=X, y=y)
    print("class counts:", np.bincount(y, minlength=N_CLASSES).tolist(), flush=True)
    chans = tuple(int(c) for c in a.chans.split(","))
    model = vision_faces.fit(X, y, seed=a.seed, epochs=a.epochs, chans=chans, dense=a.dense,
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
