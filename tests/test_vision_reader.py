"""Detection and face reading: generated scenes and real labelled photos, with firm thresholds."""
import pathlib

import cv2
import numpy as np
import pytest

from companion.bench.vision import Tally, match, score
from companion.vision.reader import DiceReader
from companion.vision.scenes import generate_scene
from companion.vision.train import load_labels, real_split

REAL = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "data" / "dice-photos"


@pytest.fixture(scope="module")
def reader():
    return DiceReader()


def test_reads_generated_scenes(reader):
    t = Tally("synthetic")
    for seed in range(7000, 7030):  # seeds the model never trained on
        sc = generate_scene(seed, size=(540, 960))
        score(t, reader.read(sc.image), [(d.face, d.box, d.paco) for d in sc.dice])
    assert t.gt > 300
    # measured with the shipped networks (2026-11-24): per-die 1.0, recall 1.0, no FP, exact 1.0,
    # Paco 1.0; a reveal would settle 29 of the 30 and none wrongly (the stop-15 reader: 0.994 and 0.87)
    assert t.right / t.gt >= 0.96, f"per-die accuracy {t.right / t.gt:.3f}"
    assert t.found / t.gt >= 0.965, f"recall {t.found / t.gt:.3f}"
    assert t.fp / t.images <= 0.4
    assert t.exact / t.images >= 0.7
    assert t.paco_gt > 0 and t.paco_right / t.paco_gt >= 0.9
    assert t.accepted >= 20 and t.wrong_accepted <= 1, (t.accepted, t.wrong_accepted)


def test_one_die_each_face(reader):
    for face in range(1, 7):
        sc = generate_scene(7100 + face, size=(480, 640), n_dice=1, faces=(face,), paco_fraction=0.0, hard=0.3)
        r = reader.read(sc.image)
        assert r.total == 1 and r.dice[0].face == face


def test_empty_table_reads_no_dice(reader):
    for seed in range(3):
        sc = generate_scene(7200 + seed, size=(480, 640), n_dice=0)
        assert reader.read(sc.image).total == 0


def test_grey_and_bgra_frames(reader):
    sc = generate_scene(7300, size=(480, 640), n_dice=3)
    assert reader.read(cv2.cvtColor(sc.image, cv2.COLOR_BGR2BGRA)).total == reader.read(sc.image).total
    reader.read(cv2.cvtColor(sc.image, cv2.COLOR_BGR2GRAY))  # must not raise


@pytest.mark.skipif(not (REAL / "labels.jsonl").exists(), reason=f"real dice photos not found at {REAL}")
def test_real_photos_held_out(reader):
    _, held = real_split(load_labels(REAL))
    t = Tally("real")
    for rec in held[:20]:
        img = cv2.imread(str(REAL / rec["file"]))
        assert img is not None
        score(t, reader.read(img), [(d["face"], tuple(d["box"]), False) for d in rec["dice"]])
    assert t.gt > 100
    # measured 0.990 on these 20 held-out photos (the networks never trained on them)
    assert t.right / t.gt >= 0.92, f"per-die accuracy on held-out real photos {t.right / t.gt:.3f}"


@pytest.mark.skipif(not (REAL / "labels.jsonl").exists(), reason=f"real dice photos not found at {REAL}")
@pytest.mark.parametrize("name", ["100722", "100733", "100719", "112415"])
def test_a_white_die_on_a_pale_table_is_found(reader, name):
    # (training photos) a white die on a white table: a segmentation by colour found it only in
    # part (its shadow, a side face), and lost it
    recs = [r for r in load_labels(REAL) if r["file"].endswith(f"_{name}.jpg")]
    assert len(recs) == 1, f"no single photo *_{name}.jpg in {REAL}"
    rec = recs[0]
    img = cv2.imread(str(REAL / rec["file"]))
    gt = [(d["face"], tuple(d["box"]), False) for d in rec["dice"]]
    r = reader.read(img)
    assert len(match(r.dice, gt)) == len(gt)


@pytest.mark.skipif(not (REAL / "labels.jsonl").exists(), reason=f"real dice photos not found at {REAL}")
def test_a_lone_die_with_its_side_face_is_read_once(reader):
    # (training photo) a lone die's top and big side face were once read as two dice
    rec = next((r for r in load_labels(REAL) if r["file"].endswith("_112926.jpg")), None)
    assert rec is not None, f"no photo *_112926.jpg in {REAL}"
    img = cv2.imread(str(REAL / rec["file"]))
    gt = [(d["face"], tuple(d["box"]), False) for d in rec["dice"]]
    r = reader.read(img)
    assert len(r.dice) == len(match(r.dice, gt)) == len(gt)
