"""The dice detector: decoding its maps, the training targets it must agree with, its second look at
dice of unusual size, and scenes that were hard to read (each kept as a regression case)."""
import cv2
import numpy as np
import pytest

from companion.vision.detect import (CLOSE_UP_SCALES, INPUT, OUTPUTS, STRIDE, Candidate, Detector, crop, decode,
                                     load_detector, same_die, scaled_input)
from companion.vision.reader import DiceReader, _one_per_die, _typical_side
from companion.vision.scenes import draw_face, generate_paco_closeup, generate_scene
from companion.vision.types import Die
from training.dice_photos import match
from training.vision_detector import augment, targets, top_face


@pytest.fixture(scope="module")
def reader():
    return DiceReader()


def _maps_for(dice, size, heights=None):
    """Output maps a perfect network would give for these dice (cx, cy, side, angle, exact) in a
    size x size input: the training targets, with the heat as logits (peaks scaled to `heights`)."""
    heat, reg, _ = targets(np.array(dice, np.float32), size)
    if heights is not None:
        for (cx, cy, *_), top in zip(dice, heights):
            heat[int(cy // STRIDE), int(cx // STRIDE)] = top
    maps = np.zeros((OUTPUTS, size // STRIDE, size // STRIDE), np.float32)
    maps[0] = np.log(np.clip(heat, 1e-6, 1 - 1e-6) / (1 - np.clip(heat, 1e-6, 1 - 1e-6)))
    maps[1:] = reg
    return maps


def test_the_training_targets_decode_back_to_the_dice():
    """The trainer's encoding and the detector's decoding must be one convention: centre, side and
    turn come back through the input's scale (a mismatch of half a cell or a swapped axis fails
    here), surest first."""
    dice = [(30.5, 41.25, 18.0, 17.0, 1), (61.0, 42.0, 17.0, 80.0, 1), (100.2, 120.7, 22.0, 45.0, 1)]
    scale = (0.5, 0.4)
    found = decode(_maps_for(dice, 160, heights=(0.7, 0.9, 0.8)), scale)
    assert len(found) == 3
    assert [round(c.score, 3) for c in found] == [0.9, 0.8, 0.7]
    for cx, cy, side, angle, _ in dice:
        c = min(found, key=lambda c: np.hypot(c.cx - (cx + 0.5) / 0.5, c.cy - (cy + 0.5) / 0.4))
        assert c.cx == pytest.approx((cx + 0.5) / 0.5 - 0.5, abs=1e-3) and c.cy == pytest.approx((cy + 0.5) / 0.4 - 0.5, abs=1e-3)
        assert c.w == pytest.approx(side / 0.45, rel=1e-4)
        assert min(abs(c.angle - angle), 90 - abs(c.angle - angle)) < 0.01


def test_decode_keeps_peaks_over_the_threshold_only():
    maps = _maps_for([(40, 40, 18, 0, 1)], 80)
    maps[0, 2, 2] = 0.0  # a lone weak bump (heat 0.5) far from the die
    assert len(decode(maps, (1.0, 1.0), threshold=0.3)) == 2
    assert len(decode(maps, (1.0, 1.0), threshold=0.6)) == 1
    assert decode(np.full((OUTPUTS, 10, 10), -9.0, np.float32), (1.0, 1.0)) == []


def test_a_turned_die_is_cut_upright():
    """The turn top_face measures (and the detector learns) is the one crop undoes: a square drawn
    turned comes out of the crop with level edges, whichever way it was turned."""
    for turn in (10.0, 30.0, 65.0):
        img = np.full((200, 200, 3), 60, np.uint8)
        corners = cv2.boxPoints(((100.0, 100.0), (80.0, 80.0), turn))
        cv2.fillConvexPoly(img, np.round(corners * 16).astype(np.int32), (230, 230, 230), cv2.LINE_AA, shift=4)
        cx, cy, side, angle = top_face(corners)
        patch = crop(img, Candidate(cx=cx, cy=cy, w=side, h=side, angle=angle), 64, 1.25)
        mask = (patch[..., 0] > 145).astype(np.uint8)
        level = cv2.minAreaRect(cv2.findNonZero(mask))[2] % 90
        assert min(level, 90 - level) < 2, (turn, angle, level)
        wrong = crop(img, Candidate(cx=cx, cy=cy, w=side, h=side, angle=90 - angle), 64, 1.25)
        skew = cv2.minAreaRect(cv2.findNonZero((wrong[..., 0] > 145).astype(np.uint8)))[2] % 90
        assert min(skew, 90 - skew) > 8  # (so the test tells the directions apart)


def test_augmented_windows_keep_each_die_where_its_label_says():
    """Scaling, quarter turns and mirroring move labels with the pixels: each die, painted as a
    turned square of its own colour, still has its centroid on its label's centre (to a tenth of
    a die's side: a one-pixel slip fails) and its edges at its label's turn."""
    img = np.full((180, 320, 3), 128, np.uint8)
    colours = ((40, 40, 230), (230, 40, 40), (40, 230, 40))
    dice = np.array([(60.3, 50.7, 22, 20, 1), (200.5, 120.2, 22, 70, 1), (150, 90, 22, 35, 1)], np.float32)
    for (cx, cy, side, angle, _), colour in zip(dice, colours):
        pts = cv2.boxPoints(((float(cx), float(cy)), (float(side), float(side)), float(angle)))
        cv2.fillConvexPoly(img, np.round(pts * 16).astype(np.int32), colour, cv2.LINE_AA, shift=4)
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(40):
        out, d = augment(rng, img, dice)
        assert out.shape == (160, 160, 3) and (0 <= d[:, 3]).all() and (d[:, 3] < 90).all()
        lab = out.astype(np.float32)
        for k, (cx, cy, side, angle, _) in enumerate(d):
            if not (side < cx < 159 - side and side < cy < 159 - side):
                continue  # (partly out of the window)
            ch = (2, 0, 1)[k]  # the square's own colour channel over the others'
            mask = ((lab[..., ch] - lab[..., [c for c in range(3) if c != ch]].max(2)) > 60).astype(np.uint8)
            m = cv2.moments(mask, binaryImage=True)
            assert abs(m["m10"] / m["m00"] - cx) < 0.35 and abs(m["m01"] / m["m00"] - cy) < 0.35, (k, cx, cy)
            turn = cv2.minAreaRect(cv2.findNonZero(mask))[2] % 90
            assert min(abs(turn - angle), 90 - abs(turn - angle)) < 4, (k, turn, angle)
            checked += 1
    assert checked >= 40


def test_scaled_input_is_whole_cells_with_its_true_scales():
    x, (sx, sy) = scaled_input(np.zeros((721, 1283, 3), np.uint8), INPUT / 1283)
    assert x.shape[0] % STRIDE == 0 and x.shape[1] % STRIDE == 0 and x.shape[1] >= INPUT
    assert (sx, sy) == (320 / 1283, 180 / 721)


def test_top_face_from_corners():
    cx, cy, side, angle = top_face([(10, 10), (30, 10), (30, 30), (10, 30)])
    assert (cx, cy, side, angle) == pytest.approx((20, 20, 20, 0))
    assert top_face(cv2.boxPoints(((50, 60), (20, 20), 30.0)))[2] == pytest.approx(20, rel=1e-3)


def test_same_die_is_about_overlapping_tops():
    a = Candidate(cx=100, cy=100, w=40, h=40, angle=0)
    assert same_die(a, Candidate(cx=115, cy=100, w=40, h=40, angle=0))
    assert not same_die(a, Candidate(cx=140, cy=100, w=40, h=40, angle=0))  # touching dice
    # a small spot inside a big die's top is that die (a swirl read as a die), either way round
    spot = Candidate(cx=118, cy=100, w=20, h=20, angle=0)
    assert same_die(a, spot) and same_die(spot, a)
    # a smaller die touching a big one is not (seen further from the camera)
    assert not same_die(a, Candidate(cx=131, cy=100, w=22, h=22, angle=0))


def _kept(*candidates):
    read = [(c, Die(face=1, box=c.box, confidence=1.0)) for c in candidates]
    return [c for c, _ in _one_per_die(read, _typical_side(list(candidates)))]


def test_a_small_candidate_in_a_bigger_die_s_top_is_a_spot_on_it_however_sure():
    die = Candidate(cx=100, cy=100, w=40, h=40, angle=0, score=0.6)
    spot = Candidate(cx=121, cy=121, w=20, h=20, angle=0, score=0.9)  # by a corner, 0.74 of a side out
    small_die = Candidate(cx=100, cy=131, w=22, h=22, angle=0, score=0.9)  # touching the die, further off
    elsewhere = [Candidate(cx=300 + 60 * k, cy=300, w=40, h=40, angle=0, score=0.8) for k in range(3)]
    kept = _kept(spot, die, small_die, *elsewhere)
    assert die in kept and small_die in kept and spot not in kept
    assert not same_die(spot, die)  # a centre that far out is no spot by the detector's rule alone
    # a spot the detector is surer of than of its die, near its centre: the die keeps its own read
    assert set(_kept(Candidate(cx=108, cy=100, w=20, h=20, angle=0, score=0.9), die, *elsewhere)) == {die, *elsewhere}


def test_a_lone_die_s_spots_are_spots_too():
    # The frame's typical die is measured without the spots: one die with one or two spots on
    # it is a die of its own side (an endgame's last die or two).
    die = Candidate(cx=100, cy=100, w=40, h=40, angle=0, score=0.6)
    corner = Candidate(cx=120, cy=120, w=28, h=28, angle=0, score=0.9)
    edge = Candidate(cx=100, cy=74, w=24, h=24, angle=0, score=0.8)
    assert _typical_side([die, corner, edge]) == 40
    assert _kept(die, corner) == [die] and _kept(die, corner, edge) == [die]


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


@pytest.fixture
def looks(monkeypatch):
    """The scales the detector looked at, in order."""
    seen: list[float] = []
    plain = Detector._find_at

    def spy(self, img, f, threshold):
        seen.append(f)
        return plain(self, img, f, threshold)

    monkeypatch.setattr(Detector, "_find_at", spy)
    return seen


@pytest.mark.parametrize("die_scale", [1.6, 2.6, 3.2])
def test_dice_held_close_are_found_in_close_up(looks, die_scale):
    """The Paco face held to the camera: dice two to four times the usual size, whose pips look
    like dice of the usual size at the usual scale."""
    sc = generate_scene(31, size=(480, 640), n_dice=2, faces=(1,), paco_fraction=1.0, die_scale=die_scale,
                        touching=0.0, angle=0.3, hard=0.5)
    gt = [(d.face, d.box, d.paco) for d in sc.dice]
    assert len(match(load_detector().find(sc.image, close_up=True), gt)) == len(gt)
    held = DiceReader(close_up=True).read(sc.image)
    assert held.total == held.counts[1] == len(gt)  # (a weaker second peak on a big die is the same die)
    if die_scale > 2:  # (the usual scale finds pips as dice there)
        assert DiceReader().read(sc.image).counts != held.counts


def test_a_close_up_takes_the_coarsest_scale_the_next_one_agrees_with(monkeypatch):
    """A scale at which one of two big dice is missed is not taken because it comes first."""
    die = lambda x, side: Candidate(cx=x, cy=50.0, w=side, h=side, angle=0.0, score=0.9)  # noqa: E731
    f = INPUT / 640
    # input px a die's side measures at each scale: 18 reads well, 10 does not
    by_scale = {CLOSE_UP_SCALES[0]: [die(100, 18 / (f * CLOSE_UP_SCALES[0]))],  # one missed
                CLOSE_UP_SCALES[1]: [die(100, 10 / (f * CLOSE_UP_SCALES[1]))] * 2,  # measured badly
                CLOSE_UP_SCALES[2]: [die(100, 18 / (f * CLOSE_UP_SCALES[2])), die(300, 18 / (f * CLOSE_UP_SCALES[2]))],
                CLOSE_UP_SCALES[3]: [die(100, 20 / (f * CLOSE_UP_SCALES[3])), die(300, 20 / (f * CLOSE_UP_SCALES[3]))]}
    looked = []

    def find_at(self, img, scale, threshold):
        k = min(by_scale, key=lambda k: abs(f * k - scale))
        looked.append(k)
        return by_scale.get(k, []) if abs(f * k - scale) < 1e-9 else []

    monkeypatch.setattr(Detector, "_find_at", find_at)
    found = load_detector().find(np.zeros((480, 640, 3), np.uint8), close_up=True)
    assert [c.cx for c in found] == [100, 300] and found[0].w == by_scale[CLOSE_UP_SCALES[2]][0].w
    assert looked == list(CLOSE_UP_SCALES[:4])


def _far_frame(seed, width=3840):
    """A scene as one corner of a bigger frame of its table (4K: dice a third of the usual size)."""
    sc = generate_scene(seed, n_dice=12)
    table = np.median(sc.image.reshape(-1, 3), axis=0)
    big = np.clip(table + np.random.default_rng(0).normal(0, 3, (width * 9 // 16, width, 3)), 0, 255).astype(np.uint8)
    big[:720, :1280] = sc.image
    return sc, big, [(d.face, d.box, d.paco) for d in sc.dice]


def test_small_dice_far_away_are_found_at_closer_looks(looks):
    sc, big, gt = _far_frame(9400002)
    found = load_detector().find(big)
    assert len(match(found, gt)) == len(gt) == len(found)
    assert len(looks) >= 2 and looks[-1] > looks[0]


def test_a_known_die_size_sets_the_one_scale_looked_at(looks):
    sc, big, gt = _far_frame(9400005, 2560)
    side = float(np.median([top_face(d.corners)[2] for d in sc.dice]))
    found = load_detector().find(big, die_size=side)
    assert looks == [pytest.approx(18.0 / side)]
    assert len(match(found, gt)) == len(gt)
    for c in found:
        assert c.w == pytest.approx(side, rel=0.25)


def test_an_empty_table_is_looked_at_once_and_has_no_dice(looks):
    # (an empty frame once got a look at a third of the scale, where whole-table blotches read as dice)
    for seed in range(3100000, 3100012):
        looks.clear()
        assert load_detector().find(generate_scene(seed, n_dice=0).image) == []
        assert len(looks) == 1


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
# die of them, and nothing else. The dark marbled ones are of the development seeds: a bright swirl
# or pip got a peak of its own, whose crop, one round spot, read as a sure one (the last two are
# read again at the frame's die size).
HARD_SCENES = {
    (2024016, "plain"): "a die at the frame's edge (the generator once mirrored dice there, unlabelled)",
    (2024083, "plain"): "a lamp's reflection beside two touching dice",
    (7000036, "plain"): "dark dice on grained wood",
    (7000224, "plain"): "one die cut in two by the old detector",
    (7000183, "plain"): "a die joined to a stripe of wood grain",
    (7000009, "plain"): "touching dice whose halves read as dice",
    (7000041, "plain"): "a cluster of smaller dice than the lone ones",
    (7000351, "plain"): "a box straddling two dice of a cluster",
    (7000043, "plain"): "strong perspective: side faces as big as tops",
    (7000008, "plain"): "glare joined to a cluster",
    (7000291, "plain"): "boxes holding a die and part of the next",
    (9750064, "dark_marbled"): "a swirl at a die's edge read as a one beside it",
    (9750076, "dark_marbled"): "a die read as a one from a spot on it, its own crop left out",
    (9750008, "dark_marbled"): "a swirl by a die, too big to count as its spot, read as a one",
    (9750077, "dark_marbled"): "a die found only as spots, each read as a one",
}


@pytest.mark.parametrize("scene", list(HARD_SCENES), ids=[f"{finish}-{seed}" for seed, finish in HARD_SCENES])
def test_hard_scenes_are_read_die_for_die(reader, scene):
    seed, finish = scene
    sc = generate_scene(seed, dice_style=finish)
    r = reader.read(sc.image)
    gt = [(d.face, d.box, d.paco) for d in sc.dice]
    pairs = match(r.dice, gt)
    assert len(pairs) == len(gt) == len(r.dice), HARD_SCENES[scene]
    assert all(r.dice[i].face == gt[j][0] for i, j in pairs), HARD_SCENES[scene]
