"""The dice detector: decoding its maps, the training targets it must agree with, its second look at
dice of unusual size, and scenes that were hard to read (each kept as a regression case)."""
import cv2
import numpy as np
import pytest

from companion.bench.vision import match
from companion.vision.detect import (INPUT, OUTPUTS, STRIDE, Candidate, decode, load_detector, same_die,
                                     scaled_input)
from companion.vision.reader import DiceReader
from companion.vision.scenes import draw_face, generate_paco_closeup, generate_scene
from companion.vision.train_detector import augment, targets, top_face


@pytest.fixture(scope="module")
def reader():
    return DiceReader()


def _maps_for(dice, size):
    """Output maps a perfect network would give for these dice (cx, cy, side, angle, known) in a
    size x size input: the training targets, with the heat as logits."""
    heat, reg, _ = targets(np.array(dice, np.float32), size)
    maps = np.zeros((OUTPUTS, size // STRIDE, size // STRIDE), np.float32)
    maps[0] = np.log(np.clip(heat, 1e-6, 1 - 1e-6) / (1 - np.clip(heat, 1e-6, 1 - 1e-6)))
    maps[1:] = reg
    return maps


def test_the_training_targets_decode_back_to_the_dice():
    """The trainer's encoding and the detector's decoding must be one convention: centre, side and
    turn come back (a mismatch of half a cell or a swapped axis fails here)."""
    dice = [(30.5, 41.25, 18.0, 17.0, 1), (61.0, 42.0, 17.0, 80.0, 1), (100.2, 120.7, 22.0, 45.0, 1)]
    found = decode(_maps_for(dice, 160), f=0.5)
    assert len(found) == 3
    for cx, cy, side, angle, _ in dice:
        c = min(found, key=lambda c: np.hypot(c.cx - cx / 0.5, c.cy - cy / 0.5))
        assert c.cx == pytest.approx(cx / 0.5, abs=1e-3) and c.cy == pytest.approx(cy / 0.5, abs=1e-3)
        assert c.w == pytest.approx(side / 0.5, rel=1e-4)
        assert min(abs(c.angle - angle), 90 - abs(c.angle - angle)) < 0.01
    assert [c.score for c in found] == sorted((c.score for c in found), reverse=True)


def test_decode_keeps_peaks_over_the_threshold_only():
    maps = _maps_for([(40, 40, 18, 0, 1)], 80)
    maps[0, 2, 2] = 0.0  # a lone weak bump (heat 0.5) far from the die
    assert len(decode(maps, 1.0, threshold=0.3)) == 2
    assert len(decode(maps, 1.0, threshold=0.6)) == 1
    assert decode(np.full((OUTPUTS, 10, 10), -9.0, np.float32), 1.0) == []


def test_augmented_windows_keep_each_die_where_its_label_says():
    """Scaling, quarter turns and mirroring move labels with the pixels: a coloured dot painted at
    each die's centre is still under its label afterwards, and the turn follows a mirror."""
    img = np.full((180, 320, 3), 90, np.uint8)
    dice = np.array([(60, 50, 16, 20, 1), (200, 120, 16, 70, 1), (150, 90, 16, 5, 1)], np.float32)
    for k, (cx, cy, *_) in enumerate(dice):
        cv2.circle(img, (int(cx), int(cy)), 3, (0, 0, 255) if k == 0 else (255, 0, 0), -1)
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(30):
        out, d = augment(rng, img, dice)
        assert out.shape == (160, 160, 3)
        for k, (cx, cy, side, angle, _) in enumerate(d):
            if 2 <= cx < 158 and 2 <= cy < 158:
                b, g, r = out[int(cy), int(cx)].astype(int)
                assert (r - b if k == 0 else b - r) > 40, (k, cx, cy)
                checked += 1
            assert 0 <= angle < 90
    assert checked >= 20


def test_scaled_input_is_whole_cells():
    x = scaled_input(np.zeros((721, 1283, 3), np.uint8), INPUT / 1283)
    assert x.shape[0] % STRIDE == 0 and x.shape[1] % STRIDE == 0 and x.shape[1] >= INPUT


def test_top_face_from_corners():
    cx, cy, side, angle = top_face([(10, 10), (30, 10), (30, 30), (10, 30)])
    assert (cx, cy, side, angle) == pytest.approx((20, 20, 20, 0))
    turned = cv2.boxPoints(((50, 60), (20, 20), 30.0))
    assert top_face(turned)[2] == pytest.approx(20, rel=1e-3)
    assert top_face(turned)[3] % 90 in (pytest.approx(30, abs=0.01), pytest.approx(60, abs=0.01))


def test_same_die_is_about_overlapping_tops():
    a = Candidate(cx=100, cy=100, w=40, h=40, angle=0)
    assert same_die(a, Candidate(cx=115, cy=100, w=40, h=40, angle=0))
    assert not same_die(a, Candidate(cx=140, cy=100, w=40, h=40, angle=0))  # touching dice


def test_finds_the_dice_of_a_scene_with_their_size_and_turn():
    sc = generate_scene(9400001)
    found = load_detector().find(sc.image)
    pairs = match(found, [(d.face, d.box, d.paco) for d in sc.dice])
    assert len(pairs) >= len(sc.dice) - 1 and len(found) <= len(sc.dice) + 1
    for i, j in pairs:
        _, _, side, angle = top_face(sc.dice[j].corners)
        assert found[i].w == pytest.approx(side, rel=0.2)
        turn = abs(found[i].angle - angle) % 90
        assert min(turn, 90 - turn) < 12


def test_a_close_up_die_is_found_at_a_second_look():
    """The Paco face held to the camera is several times the size of a die on the table."""
    det = load_detector()
    for seed in (11, 12, 13):
        sc = generate_paco_closeup(seed)
        found = det.find(sc.image)
        assert len(match(found, [(d.face, d.box, d.paco) for d in sc.dice])) == len(sc.dice), seed


def test_small_dice_far_away_are_found_at_a_second_look():
    """A camera high above a big table: the dice are a third of the usual size in the frame."""
    sc = generate_scene(9400002, n_dice=12)
    table = np.median(sc.image.reshape(-1, 3), axis=0)
    big = np.clip(table + np.random.default_rng(0).normal(0, 3, (2160, 3840, 3)), 0, 255).astype(np.uint8)
    big[:720, :1280] = sc.image  # the scene is a corner of a 4K frame
    found = load_detector().find(big)
    gt = [(d.face, d.box, d.paco) for d in sc.dice]
    assert len(match(found, gt)) >= len(gt) - 1


def test_a_known_die_size_sets_the_scale():
    sc = generate_scene(9400003)
    side = float(np.median([top_face(d.corners)[2] for d in sc.dice]))
    found = load_detector().find(sc.image, die_size=side)
    assert len(match(found, [(d.face, d.box, d.paco) for d in sc.dice])) >= len(sc.dice) - 1


def _paste(img, rng, face, body, pip, x, y, s):
    top, mask = draw_face(rng, face, body, pip)
    top = cv2.resize(top, (s, s), interpolation=cv2.INTER_AREA)
    a = cv2.resize(mask, (s, s), interpolation=cv2.INTER_AREA).astype(np.float32)[..., None] / 255
    img[y:y + s, x:x + s] = img[y:y + s, x:x + s] * (1 - a) + top * a


def test_pale_dice_on_a_pale_tray(reader):
    rng = np.random.default_rng(5)
    img = np.full((480, 640, 3), 232.0) + rng.normal(0, 1.5, (480, 640, 1))
    _paste(img, rng, 4, (30, 30, 190), (245, 245, 245), 80, 80, 44)
    for face, (x, y) in zip((6, 5, 3), ((300, 120), (420, 300), (160, 330))):
        _paste(img, rng, face, (238, 238, 238), (25, 25, 25), x, y, 44)
    img = np.clip(img, 0, 255).astype(np.uint8)
    assert sorted(d.face for d in reader.read(img).dice) == [3, 4, 5, 6]


# Scenes that were hard to read, each with what went wrong there once. The reader must read every
# die of them, and nothing else.
HARD_SCENES = {
    2024016: "a die at the frame's edge (the generator once mirrored dice there, unlabelled)",
    2024083: "a lamp's reflection beside two touching dice",
    7000036: "dark dice on grained wood",
    7000224: "one die cut in two by the old detector",
    7000183: "a die joined to a stripe of wood grain",
    7000009: "touching dice whose halves read as dice",
    7000041: "a cluster of smaller dice than the lone ones",
    7000351: "a box straddling two dice of a cluster",
    7000043: "strong perspective: side faces as big as tops",
    7000008: "glare joined to a cluster",
    7000291: "boxes holding a die and part of the next",
}


@pytest.mark.parametrize("seed", sorted(HARD_SCENES), ids=[f"{s}-{HARD_SCENES[s][:30]}" for s in sorted(HARD_SCENES)])
def test_hard_scenes_are_read_die_for_die(reader, seed):
    sc = generate_scene(seed)
    r = reader.read(sc.image)
    gt = [(d.face, d.box, d.paco) for d in sc.dice]
    pairs = match(r.dice, gt)
    assert len(pairs) == len(gt) == len(r.dice), HARD_SCENES[seed]
    assert all(r.dice[i].face == gt[j][0] for i, j in pairs), HARD_SCENES[seed]
