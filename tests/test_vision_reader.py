"""Detection and face reading: generated scenes and real labelled photos, with firm thresholds."""
import dataclasses

import cv2
import pytest

from companion.rules import FACES, count_matching
from companion.vision import CameraSettings, DiceReading, Die
from companion.vision.reader import DiceReader
from companion.vision.scenes import generate_scene
from training.dice_photos import PHOTOS, Tally, labels_of, load_labels, match, real_split, score


@pytest.fixture(scope="module")
def reader():
    return DiceReader()


def test_reads_generated_scenes(reader):
    t = Tally("synthetic")
    for seed in range(7000, 7030):  # seeds the model never trained on
        sc = generate_scene(seed, size=(540, 960))
        score(t, reader.read(sc.image), [(d.face, d.box, d.paco) for d in sc.dice])
    assert t.gt > 300
    # the shipped networks read these per-die 1.0, recall 1.0, no FP, exact 1.0, Paco 1.0, and a
    # reveal would settle 29 of the 30 and none wrongly: the bounds leave room for retraining
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


@pytest.mark.skipif(not (PHOTOS / "labels.jsonl").exists(), reason=f"real dice photos not found at {PHOTOS}")
def test_real_photos_held_out(reader):
    _, held = real_split(load_labels(PHOTOS))
    t = Tally("real")
    for rec in held[:20]:
        img = cv2.imread(str(PHOTOS / rec["file"]))
        assert img is not None
        score(t, reader.read(img), labels_of(rec))
    assert t.gt > 100
    # measured 0.990 on these 20 held-out photos (the networks never trained on them)
    assert t.right / t.gt >= 0.92, f"per-die accuracy on held-out real photos {t.right / t.gt:.3f}"


@pytest.mark.skipif(not (PHOTOS / "labels.jsonl").exists(), reason=f"real dice photos not found at {PHOTOS}")
@pytest.mark.parametrize("name", ["100722", "100733", "100719", "112415"])
def test_a_white_die_on_a_pale_table_is_found(reader, name):
    # (training photos) a white die on a white table: a segmentation by colour found it only in
    # part (its shadow, a side face), and lost it
    recs = [r for r in load_labels(PHOTOS) if r["file"].endswith(f"_{name}.jpg")]
    assert len(recs) == 1, f"no single photo *_{name}.jpg in {PHOTOS}"
    rec = recs[0]
    img = cv2.imread(str(PHOTOS / rec["file"]))
    gt = labels_of(rec)
    r = reader.read(img)
    assert len(match(r.dice, gt)) == len(gt)


@pytest.mark.skipif(not (PHOTOS / "labels.jsonl").exists(), reason=f"real dice photos not found at {PHOTOS}")
def test_a_lone_die_with_its_side_face_is_read_once(reader):
    # (training photo) a lone die's top and big side face were once read as two dice
    rec = next((r for r in load_labels(PHOTOS) if r["file"].endswith("_112926.jpg")), None)
    assert rec is not None, f"no photo *_112926.jpg in {PHOTOS}"
    img = cv2.imread(str(PHOTOS / rec["file"]))
    gt = labels_of(rec)
    r = reader.read(img)
    assert len(r.dice) == len(match(r.dice, gt)) == len(gt)


@pytest.mark.skipif(not (PHOTOS / "labels.jsonl").exists(), reason=f"real dice photos not found at {PHOTOS}")
def test_a_real_photo_reads_as_dice_the_rules_count(reader):
    """A held-out photo of six dice: a frozen reading of dice, each a face in its box, read surely
    and as labelled, whose faces the rules count as they would the labelled ones."""
    rec = next((r for r in load_labels(PHOTOS) if r["file"].endswith("_111820.jpg")), None)
    assert rec is not None, f"no photo *_111820.jpg in {PHOTOS}"
    reading = reader.read(cv2.imread(str(PHOTOS / rec["file"])))
    labels = labels_of(rec)
    assert isinstance(reading, DiceReading) and all(isinstance(d, Die) for d in reading.dice)
    assert all(d.face in FACES and len(d.box) == 4 and 0 <= d.confidence <= 1 for d in reading.dice)
    assert len(match(reading.dice, labels)) == len(labels) == reading.total == 6
    assert sorted(reading.faces) == sorted(face for face, _, _ in labels)
    assert CameraSettings().accepts(reading, len(labels))  # a reveal would settle a challenge with it
    for face in FACES:
        for wild in (True, False):
            assert count_matching(reading.faces, face, wild) == count_matching([f for f, _, _ in labels], face, wild)
    with pytest.raises(dataclasses.FrozenInstanceError):
        reading.dice = ()
