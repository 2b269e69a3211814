"""The training script: splits, augmentation and labelling of crops; with torch, the export to the
shipped format and a tiny training."""
import cv2
import numpy as np
import pytest

from companion.vision.detect import Candidate
from companion.vision.model import NOT_DIE, PACO, SEVERAL
from training.dice_photos import real_split, validation_split
from training.vision_detector import photometric
from training.vision_faces import label_candidates


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


def test_the_trained_network_exports_to_the_forward_pass_the_reader_runs():
    """im2col row order and NHWC flattening: the exported weights must give the torch network's own
    logits, in numpy and in OpenCV's DNN module."""
    torch = pytest.importorskip("torch", reason="training needs torch: pip install -e '.[train]'")
    from companion.vision.model import CHANNELS, PATCH, FaceModel, features
    from training.vision_faces import _network, export

    torch.manual_seed(0)
    net = _network((4, 8, 6), 16)
    patches = np.random.default_rng(1).integers(0, 256, (40, PATCH, PATCH, 3)).astype(np.uint8)
    f = features(patches)
    with torch.no_grad():
        want = net(torch.from_numpy(f.reshape(-1, CHANNELS, PATCH, PATCH))).numpy()
    for use_dnn in (False, True):
        model = FaceModel(weights=export(net), mean=f.mean(0), std=f.std(0) + 0.1, use_dnn=use_dnn)
        assert np.allclose(model.logits(f), want, atol=1e-4)


def test_training_learns_faces_and_gives_a_model_the_reader_can_save_and_load(tmp_path):
    pytest.importorskip("torch", reason="training needs torch: pip install -e '.[train]'")
    import cv2

    from companion.vision.model import PATCH, load_model
    from companion.vision.scenes import draw_face
    from training.vision_faces import fit

    rng = np.random.default_rng(3)
    patches, labels = [], []
    for i in range(240):
        face = (2, 5)[i % 2]
        top, _ = draw_face(rng, face, (40, 40, 200), (240, 240, 240))
        patches.append(cv2.resize(top, (PATCH, PATCH), interpolation=cv2.INTER_AREA))
        labels.append(face)
    X, y = np.stack(patches), np.array(labels)
    model = fit(X, y, epochs=12, chans=(4, 8, 8), dense=16, batch=16, lr=1e-2, threads=1, log=lambda *a, **k: None)
    model.save(tmp_path / "m.npz")
    again = load_model(tmp_path / "m.npz")
    assert (again.predict(X).argmax(1) == y).mean() > 0.95


def test_the_trained_detector_exports_to_the_forward_pass_the_reader_runs():
    """Convolution weights as im2col matrices, strides and dilations: the exported detector must
    give the torch network's own maps, in numpy and in OpenCV's DNN module."""
    torch = pytest.importorskip("torch", reason="training needs torch: pip install -e '.[train]'")
    from companion.vision.detect import Detector
    from training.vision_detector import export, network

    torch.manual_seed(0)
    net = network().eval()
    x = np.random.default_rng(2).normal(0, 1, (1, 3, 72, 96)).astype(np.float32)
    with torch.no_grad():
        want = net(torch.from_numpy(x))[0].numpy()
    for use_dnn in (False, True):
        got = Detector(weights=export(net), use_dnn=use_dnn).maps(x)
        assert got.shape == want.shape == (6, 18, 24)
        assert np.allclose(got, want, atol=1e-4)


def test_detector_training_lowers_its_box_losses_and_saves_a_detector_that_loads(tmp_path):
    """A short run: the offset and size losses fall (the heat's focal loss only starts to fall
    after a hundred-odd steps of the full run; where the dice are is pinned by the target and
    augmentation tests), and the saved weights are the same network."""
    pytest.importorskip("torch", reason="training needs torch: pip install -e '.[train]'")
    import re

    from companion.vision.detect import load_detector, network_input, scaled_input
    from companion.vision.scenes import generate_scene
    from training.vision_detector import fit_detector, save_detector, synthetic_examples

    examples = synthetic_examples(9300000, 16, processes=1)
    lines: list[str] = []
    det = fit_detector(examples * 8, epochs=4, batch=16, threads=1, log=lambda line, **k: lines.append(line))
    losses = [[float(v) for v in re.findall(r"(?:heat|offset|size|turn) ([0-9.]+)", line)] for line in lines]
    assert len(losses) == 4 and all(len(row) == 4 for row in losses)
    (heat0, offset0, size0, _), (heat, offset, size, turn) = losses[0], losses[-1]
    assert offset < 0.8 * offset0 and size < 0.8 * size0, losses
    assert np.isfinite([heat, turn]).all() and heat < 1.2 * heat0, losses
    save_detector(det, tmp_path / "d.npz")
    x = network_input(scaled_input(generate_scene(9300100, size=(480, 640)).image, 0.5)[0])
    np.testing.assert_array_equal(load_detector(tmp_path / "d.npz").maps(x), det.maps(x))


def test_detector_training_is_reproducible():
    """The same seed gives the same weights bit for bit, and the scenes do not depend on how many
    processes make them: the shipped detector is what `python -m training.vision` makes."""
    pytest.importorskip("torch", reason="training needs torch: pip install -e '.[train]'")
    from training.vision_detector import fit_detector, synthetic_examples

    examples = synthetic_examples(9300000, 6, processes=2)
    again = synthetic_examples(9300000, 6, processes=1)
    assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(examples, again))
    runs = [fit_detector(examples * 4, epochs=1, batch=8, threads=1, log=lambda *a, **k: None).weights for _ in range(2)]
    assert all(np.array_equal(a, b) for a, b in zip(*runs))


def test_the_detectors_finish_scenes_are_its_scenes_with_every_die_dark_marbled():
    """The extra scenes keep each seed's layout and draw every die in FINISH_STYLE (dark bodies:
    the tops are darker than the same dice drawn plain), whatever the number of processes."""
    from training.vision_detector import FINISH_STYLE, finish_examples, scene_example

    assert FINISH_STYLE == "dark_marbled"
    examples = finish_examples(9300000, 4, processes=2)
    assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
               for a, b in zip(examples, finish_examples(9300000, 4, processes=1)))

    def tops_lightness(img, dice):
        grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        return [np.median(grey[int(cy - s / 4):int(cy + s / 4) + 1, int(cx - s / 4):int(cx + s / 4) + 1])
                for cx, cy, s, _, _ in dice]

    dark, plain = [], []
    for k, (img, dice) in enumerate(examples):
        plain_img, plain_dice = scene_example(9300000 + k, dice_style="plain")
        assert len(dice) and np.allclose(dice, plain_dice, atol=0.5)  # the same dice where they were
        dark += tops_lightness(img, dice)
        plain += tops_lightness(plain_img, plain_dice)
    assert np.median(dark) < 70 < 90 < np.median(plain)


class _Judges:
    """A face model stand-in that gives every crop the same chance of being no die."""

    def __init__(self, p_not):
        self.p_not = p_not

    def predict(self, patches):
        p = np.full((len(patches), 9), (1 - self.p_not) / 8)
        p[:, NOT_DIE] = self.p_not
        return p


def test_near_misses_are_mined_where_the_model_is_unsure_and_the_same_in_any_number_of_processes():
    from companion.vision.detect import load_detector
    from training.vision_faces import MINED_BELOW, mined_negatives

    detector, quiet = load_detector(), (lambda *a, **k: None)
    unsure, sure = _Judges(MINED_BELOW - 0.1), _Judges(MINED_BELOW + 0.1)
    one, labels = mined_negatives(8, 1, detector, [unsure], jitter=2, processes=1, log=quiet)
    two, _ = mined_negatives(8, 1, detector, [unsure], jitter=2, processes=2, log=quiet)
    assert one and len(one) % 3 == 0 and set(labels) == {NOT_DIE}
    assert all(p.shape == (32, 32, 3) for p in one)
    assert np.array_equal(np.stack(one), np.stack(two))
    assert mined_negatives(8, 1, detector, [sure], processes=1, log=quiet) == ([], [])
    # with several models, a crop any one of them is unsure of is mined (the older model's misses stay)
    either, _ = mined_negatives(8, 1, detector, [sure, unsure], jitter=2, processes=1, log=quiet)
    assert np.array_equal(np.stack(either), np.stack(one))


def test_finish_scenes_take_the_dice_finishes_in_turn_and_label_every_die(monkeypatch):
    from companion.vision import scenes
    from companion.vision.model import PATCH
    from training import vision_faces

    drawn = []

    def recording(seed, **options):
        drawn.append(options["dice_style"])
        return scenes.generate_scene(seed, **options)

    class NoPeaks:  # the detector's own peaks are not what this checks
        def find(self, image, *, threshold, close_up=False):
            return []

    monkeypatch.setattr(vision_faces, "generate_scene", recording)
    patches, labels = vision_faces.finish_data(7, seed=1, detector=NoPeaks())
    assert drawn == ["dark", "transparent", "marbled", "metallic", "coloured_pips", "dark_marbled", "dark"]
    assert patches and len(patches) == len(labels)
    assert all(p.shape[:2] == (PATCH, PATCH) for p in patches)
    assert set(labels) - {NOT_DIE, SEVERAL} <= set(range(1, 8))


def test_pictures_of_no_dice_are_seeded_sized_and_mined_as_not_a_die():
    from companion.vision.detect import load_detector
    from companion.vision.model import PATCH, load_model
    from training import vision_faces
    from training.vision_pictures import KINDS, generate_picture

    a, b = generate_picture(3, size=(240, 320)), generate_picture(3, size=(240, 320))
    assert a.shape == (240, 320, 3) and np.array_equal(a, b)
    assert not np.array_equal(a, generate_picture(4, size=(240, 320)))
    assert len({generate_picture(k, size=(120, 160)).tobytes() for k in range(len(KINDS))}) == len(KINDS)
    # a page of text: the shipped reader's near misses there come back as "not a die" patches,
    # at most PICTURE_MOST a picture with their jittered copies
    patches, labels = vision_faces.picture_negatives(2, 1, load_detector(), [load_model()], processes=1,
                                                     log=lambda *a, **k: None)
    assert len(patches) == len(labels) <= 2 * vision_faces.PICTURE_MOST * (1 + vision_faces.PICTURE_JITTER)
    assert set(labels) <= {NOT_DIE} and all(p.shape[:2] == (PATCH, PATCH) for p in patches)


def test_close_ups_of_big_dice_are_found_as_calibration_finds_them_and_labelled(monkeypatch):
    from companion.vision.detect import Detector, load_detector
    from companion.vision.model import PATCH
    from training import vision_faces

    looked_close = []
    find = Detector.find

    def spy(self, img, **kw):
        looked_close.append(kw.get("close_up", False))
        return find(self, img, **kw)

    monkeypatch.setattr(Detector, "find", spy)
    patches, labels = vision_faces.close_up_data(4, 1, load_detector(), jitter=1)
    assert looked_close == [True] * 4
    assert patches and len(patches) == len(labels) and all(p.shape[:2] == (PATCH, PATCH) for p in patches)
    assert labels.count(PACO) > len(labels) / 3  # toucans held to the camera are taught as dice
    again, _ = vision_faces.close_up_data(4, 1, load_detector(), jitter=1)
    assert all(np.array_equal(a, b) for a, b in zip(patches, again))
