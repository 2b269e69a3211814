"""Detection corner cases: pale dice on a pale tray, glare, and honest synthetic labels at the border."""
import cv2
import numpy as np
import pytest

from companion.bench.vision import match
from companion.vision.detect import find_regions
from companion.vision.reader import DiceReader
from companion.vision.scenes import draw_face, generate_scene


@pytest.fixture(scope="module")
def reader():
    return DiceReader()


def _read_scene(reader, seed):
    """A generated scene, the reader's reading of it, its labels and the reading's matches to them."""
    sc = generate_scene(seed)
    r = reader.read(sc.image)
    gt = [(d.face, d.box, d.paco) for d in sc.dice]
    return sc, r, gt, match(r.dice, gt)


def _paste(img, rng, face, body, pip, x, y, s):
    top, mask = draw_face(rng, face, body, pip)
    top = cv2.resize(top, (s, s), interpolation=cv2.INTER_AREA)
    a = cv2.resize(mask, (s, s), interpolation=cv2.INTER_AREA).astype(np.float32)[..., None] / 255
    img[y:y + s, x:x + s] = img[y:y + s, x:x + s] * (1 - a) + top * a


def test_pale_dice_on_a_pale_tray_are_found_by_their_pips(reader):
    rng = np.random.default_rng(5)
    img = np.full((480, 640, 3), 232.0) + rng.normal(0, 1.5, (480, 640, 1))
    _paste(img, rng, 4, (30, 30, 190), (245, 245, 245), 80, 80, 44)  # a red die gives the die size
    for face, (x, y) in zip((6, 5, 3), ((300, 120), (420, 300), (160, 330))):
        _paste(img, rng, face, (238, 238, 238), (25, 25, 25), x, y, 44)
    img = np.clip(img, 0, 255).astype(np.uint8)
    faces = sorted(d.face for d in reader.read(img).dice)
    assert faces == [3, 4, 5, 6]


def test_scene_border_has_no_unlabelled_mirror_dice(reader):
    # these scenes used to mirror dice at the frame edge (labels without them): read as false positives
    for seed in (2024016, 2024029, 2024038):
        sc = generate_scene(seed)
        r = reader.read(sc.image)
        gt = [(d.face, d.box, d.paco) for d in sc.dice]
        assert len(r.dice) - len(match(r.dice, gt)) == 0, seed


def test_glare_does_not_set_the_die_size():
    # a lamp reflection near two touching dice once made the detector think dice were 3x bigger
    sc = generate_scene(2024083)
    n = sum(len(opts[0]) for opts in find_regions(sc.image))
    assert n >= len(sc.dice)


@pytest.mark.parametrize("seed", [9100051, 9100144])
def test_square_clusters_do_not_set_the_die_size(reader, seed):
    # a square cluster of touching dice (or dice joined by wood grain) once outvoted a dozen lone
    # dice, and most dice of the scene were then missed
    sc = generate_scene(seed)
    r = reader.read(sc.image)
    gt = [(d.face, d.box, d.paco) for d in sc.dice]
    assert len(match(r.dice, gt)) >= len(gt) - 2


@pytest.mark.parametrize("seed", [3000081, 3000097])
def test_the_face_model_settles_which_squares_are_single_dice(reader, seed):
    # blurred lone dice looked like discs and were passed over, while square clusters of four
    # dice looked like dice twice the size: nearly every die of these scenes was missed
    sc = generate_scene(seed)
    gt = [(d.face, d.box, d.paco) for d in sc.dice]
    assert len(match(reader.read(sc.image).dice, gt)) >= len(gt) - 1
    unjudged = sum(len(opts[0]) for opts in find_regions(sc.image))  # the size alone, as before
    assert unjudged < len(gt) - 1  # (so the scene still tests the judge)


def test_dark_dice_on_wood_are_found(reader):
    # (dev seed) wood grain widens the table's spread on the bright side only; the one line it set
    # for all pixels lay above three dark dice, which were lost
    sc, r, gt, pairs = _read_scene(reader, 7000036)
    assert sc.background == "wood"
    assert len(pairs) == len(gt)


def test_a_die_is_not_cut_in_two(reader):
    # (dev seed) a cut putting two parts on one die scored as well as the right one, and the die
    # was read twice; two dice's tops cannot overlap, so the cut with room for its dice wins
    sc, r, gt, pairs = _read_scene(reader, 7000224)
    assert len(r.dice) == len(pairs) == len(gt)


@pytest.mark.parametrize("seed", [7000183, 7000227, 7000272])
def test_a_die_touching_wood_grain_is_measured_as_a_die(reader, seed):
    # (dev seeds) one die on grained wood, joined to a stripe of grain: with no lone square left,
    # the die size came from the stripes' width, and the die's pips were read as small dice
    sc, r, gt, pairs = _read_scene(reader, seed)
    assert sc.background == "wood"
    assert len(r.dice) == len(pairs) == len(gt)
    assert all(r.dice[i].face == gt[j][0] for i, j in pairs)


@pytest.mark.parametrize("seed", [7000009, 7000052])
def test_two_halves_of_a_die_are_read_as_one_die(reader, seed):
    # (dev seeds) two touching dice cut in three: the model read both halves of one die as that
    # die, and it was counted twice; the square the halves make is read instead
    sc, r, gt, pairs = _read_scene(reader, seed)
    assert len(r.dice) == len(pairs) == len(gt)


def test_a_cluster_of_several_is_cut_again_for_smaller_dice(reader):
    # (dev seed) the die size, measured on lone dice with their side faces, came out 1.4 times
    # too big for a cluster: every part of every cut held several dice, and a die was lost
    sc, r, gt, pairs = _read_scene(reader, 7000041)
    assert len(pairs) == len(gt) and len(r.dice) == len(pairs)


@pytest.mark.parametrize("seed", [7000351, 7000433])
def test_a_cluster_is_cut_again_around_its_sure_dice(reader, seed):
    # (dev seeds) one box straddled two dice of a cluster and one of them was lost; keeping the
    # dice read surely and cutting the rest again around them finds it
    sc, r, gt, pairs = _read_scene(reader, seed)
    assert len(pairs) == len(gt) == len(r.dice)


def test_a_near_tied_cut_that_adds_a_sure_die_wins(reader):
    # (as on a dev scene) two cuts of a cluster score within the near-tie margin; the first left
    # a die out that the other reads surely along with every die of the first, in the same places
    from companion.vision.detect import Candidate, Region

    a, b, c = (Candidate(cx=x, cy=100, w=50, h=50, angle=0) for x in (100, 155, 210))
    opts = Region([[a, b], [a, b, c]], points=np.zeros((1, 2), np.float32), side=50)
    probs = np.zeros((5, 9), np.float32)
    for row, (face, p) in enumerate([(3, 0.99), (5, 0.99), (3, 0.99), (5, 0.99), (2, 0.96)]):
        probs[row, face], probs[row, 0] = p, 1 - p
    assert reader._best_cut(opts, probs, None)[0] == 1
    probs[4, 2], probs[4, 0] = 0.9, 0.1  # the new die not sure: the first cut stays
    assert reader._best_cut(opts, probs, None)[0] == 0


def test_a_die_side_face_is_not_added_as_a_die(reader):
    # (dev seed) strong perspective: a cut putting a second box on each die's side face read the
    # same faces surely; a die a near-tied cut adds needs a whole die's room
    sc, r, gt, pairs = _read_scene(reader, 7000043)
    assert len(pairs) == len(gt) == len(r.dice)


def test_a_die_joined_to_glare_is_found_by_a_sliding_window(reader):
    # (dev seed) glare or table joined to a cluster: no cut of what was left around the sure dice
    # fell on the last die; a die-sized window slid over it finds it
    sc, r, gt, pairs = _read_scene(reader, 7000008)
    assert len(pairs) == len(gt) == len(r.dice)


@pytest.mark.parametrize("seed", [7000291, 7000378])
def test_a_box_holding_a_die_and_part_of_the_next_is_cut_again(reader, seed):
    # (dev seeds) a cluster cut with boxes 1.2 die sides across: each held a die and part of its
    # neighbour, was read surely as the one die, and a die was lost between them
    sc, r, gt, pairs = _read_scene(reader, seed)
    assert len(pairs) == len(gt) == len(r.dice)

