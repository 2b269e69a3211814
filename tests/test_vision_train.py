"""The training script's helpers: splits, augmentation and labelling of crops (no training here)."""
import numpy as np

from companion.vision.detect import Candidate
from companion.vision.model import NOT_DIE, SEVERAL
from companion.vision.train import label_candidates, photometric, real_split, validation_split


def _recs(n):
    return [{"file": f"images/{i:03d}.jpg"} for i in range(n)]


def test_validation_photos_come_from_the_training_split_only():
    train, held = real_split(_recs(200))
    assert len(held) == 40
    kept, val = validation_split(train, 8)
    assert len(val) == 20 and len(kept) == 140
    assert not {r["file"] for r in val} & {r["file"] for r in held}
    assert validation_split(train, 0) == (train, [])


def test_photometric_augmentation_is_seeded_and_keeps_the_patch_shape():
    patch = np.random.default_rng(0).integers(0, 256, (32, 32, 3)).astype(np.uint8)
    a = photometric(np.random.default_rng(5), patch)
    b = photometric(np.random.default_rng(5), patch)
    assert a.shape == patch.shape and a.dtype == np.uint8
    assert np.array_equal(a, b)


def test_crops_are_labelled_from_the_ground_truth():
    gts = [(3, (100, 100, 40, 40)), (5, (141, 100, 40, 40))]
    on_die = Candidate(cx=120, cy=120, w=40, h=40, angle=0)
    both = Candidate(cx=141, cy=120, w=82, h=40, angle=0)
    table = Candidate(cx=400, cy=400, w=40, h=40, angle=0)
    assert label_candidates([on_die, both, table], gts) == [3, SEVERAL, NOT_DIE]
