"""The synthetic scene generator: deterministic, sane ground truth, all the variety asked for."""
import numpy as np
import pytest

from companion.vision.scenes import generate_paco_closeup, generate_scene


def test_same_seed_same_scene():
    a = generate_scene(11, size=(360, 640))
    b = generate_scene(11, size=(360, 640))
    assert np.array_equal(a.image, b.image)
    assert a.dice == b.dice


def test_different_seeds_differ():
    assert not np.array_equal(generate_scene(1, size=(360, 640)).image, generate_scene(2, size=(360, 640)).image)


@pytest.mark.parametrize("n", [1, 7, 30])
def test_requested_number_of_dice_with_boxes_inside(n):
    sc = generate_scene(100 + n, size=(720, 1280), n_dice=n)
    assert sc.image.shape == (720, 1280, 3) and sc.image.dtype == np.uint8
    assert len(sc.dice) == n
    for d in sc.dice:
        x, y, w, h = d.box
        assert 1 <= d.face <= 6
        assert w > 10 and h > 10
        assert -2 <= x and -2 <= y and x + w <= 1282 and y + h <= 722
        assert not d.paco or d.face == 1  # a Paco face counts as a 1
    assert sum(sc.counts.values()) == n


def test_variety_over_seeds():
    kinds, pacos, faces = set(), 0, set()
    for s in range(12):
        sc = generate_scene(s, size=(240, 320))
        kinds.add(sc.background)
        pacos += sum(d.paco for d in sc.dice)
        faces |= {d.face for d in sc.dice}
        assert 1 <= len(sc.dice) <= 30
    assert kinds == {"felt", "wood", "cloth"}
    assert pacos > 0 and faces == {1, 2, 3, 4, 5, 6}


def test_table_seed_keeps_the_table():
    empty = generate_scene(5, size=(240, 320), n_dice=0, table_seed=77)
    other = generate_scene(6, size=(240, 320), n_dice=0, table_seed=77)
    assert empty.dice == ()
    # same table, light and camera: only sensor noise differs
    assert np.abs(empty.image.astype(int) - other.image.astype(int)).mean() < 12


def test_paco_closeup_shows_toucans():
    sc = generate_paco_closeup(3)
    assert sc.dice and all(d.paco and d.face == 1 for d in sc.dice)
