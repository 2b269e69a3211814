"""Reading patches in as many symmetries as each needs (model.Views)."""
from dataclasses import dataclass, field

import numpy as np
import pytest

from companion.vision.detect import crop, load_detector
from companion.vision.model import N_CLASSES, NOT_DIE, PATCH, FaceModel, Views, dihedral, face_probabilities, features, load_model
from companion.vision.reader import DiceReader
from companion.vision.scenes import generate_scene
from companion.vision.settings import CameraSettings


@dataclass(frozen=True, eq=False)
class CountingModel(FaceModel):
    """The shipped model, counting the patch views it reads."""

    read: list = field(default_factory=lambda: [0])

    def logits(self, f):
        self.read[0] += len(f)
        return super().logits(f)


def counting_model() -> CountingModel:
    m = load_model()
    return CountingModel(weights=m.weights, mean=m.mean, std=m.std)


def reference(model, patches, symmetries):
    """Probabilities the plain way: every patch turned, its features, logits averaged."""
    z = np.mean([model.logits(features(dihedral(patches, k))) for k in symmetries], axis=0)
    e = np.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


@pytest.fixture(scope="module")
def patches():
    img = generate_scene(7500, size=(540, 960)).image
    cands = load_detector().find(img, threshold=0.05)  # weak peaks too: unsure patches
    assert len(cands) >= 10
    return np.stack([crop(img, c, PATCH) for c in cands])


def test_views_added_later_give_the_probabilities_of_all_of_them(patches):
    model = load_model()
    views = Views(model, patches)
    views.look(views.everyone, (0,))
    some = views.everyone[::3]
    views.look(some, (0, 5))  # view 0 is not read again, view 5 is added
    p = views.probabilities()
    assert p.shape == (len(patches), N_CLASSES)
    np.testing.assert_allclose(p[some], reference(model, patches[some], (0, 5)), atol=1e-4)
    rest = np.setdiff1d(views.everyone, some)
    np.testing.assert_allclose(p[rest], reference(model, patches[rest], (0,)), atol=1e-4)
    np.testing.assert_allclose(model.predict_sym(patches, (0, 5)), reference(model, patches, (0, 5)), atol=1e-4)


def test_each_view_of_a_patch_is_read_once(patches):
    counting = counting_model()
    views = Views(counting, patches)
    views.look(views.everyone, (0, 5))
    views.look(views.everyone, (0, 5))
    assert counting.read[0] == 2 * len(patches)
    # a line between the surest patch and the rest, whatever the model's sureness
    unsure = views.unsure(views.everyone, float(views.probabilities().max()))
    assert 0 < len(unsure) < len(patches)
    views.look(unsure, tuple(range(8)))
    assert counting.read[0] == 2 * len(patches) + 6 * len(unsure)
    assert len(Views(counting, patches[:0]).probabilities()) == 0


def test_checked_reads_give_predicts_probabilities_and_the_share_of_views_that_agree(patches):
    model = load_model()
    noise = np.random.default_rng(0).integers(0, 256, (8,) + patches.shape[1:]).astype(patches.dtype)
    patches = np.concatenate([patches, noise])  # (noise reads differently turned: views disagree)
    probs, agreement = model.predict_checked(patches)
    np.testing.assert_allclose(probs, model.predict(patches), atol=1e-6)  # the check changes no probability
    faces = face_probabilities(probs).argmax(1)
    own = np.stack([face_probabilities(reference(model, patches, (k,))).argmax(1) for k in range(8)], 1)
    np.testing.assert_allclose(agreement, (own == faces[:, None]).mean(1))
    assert agreement.min() < 1.0 and agreement[:-8].max() == 1.0


def test_a_die_whose_views_disagree_is_doubtful(monkeypatch):
    sc = generate_scene(7100 + 5, size=(480, 640), n_dice=1, faces=(5,), paco_fraction=0.0, hard=0.3)
    reader, reveal = DiceReader(), CameraSettings()
    sure = reader.read(sc.image)
    assert sure.total == 1 and sure.dice[0].face == 5 and not reveal.doubtful(sure)
    plain = FaceModel.predict_checked

    def views_agreeing(share):
        """predict_checked with the model's probabilities but `share` of every patch's views agreeing."""
        return lambda self, p, *a, **k: (plain(self, p, *a, **k)[0], np.full(len(p), share))

    monkeypatch.setattr(FaceModel, "predict_checked", views_agreeing(6 / 8))
    doubted = reader.read(sc.image)
    assert doubted.total == 1 and doubted.dice[0].face == 5 and doubted.dice[0].confidence == pytest.approx(6 / 8)
    assert reveal.doubtful(doubted) == 1
    monkeypatch.setattr(FaceModel, "predict_checked", views_agreeing(7 / 8))
    assert not reveal.doubtful(reader.read(sc.image))  # one dissent of eight is allowed


class _Detector:
    def __init__(self, found):
        self.found = found

    def find(self, img, **_):
        return list(self.found)


class _SecondLookModel:
    """A sure 2, an unsure 3 (at 0.6, 5 next) and a thing that is likely no die (0.7) from the
    detector's crops; any later crops read as a sure 5. Keeps what it was shown."""

    mean = std = None

    def __init__(self):
        self.shown = []

    def predict_checked(self, patches):
        self.shown.append(patches)
        p = np.zeros((len(patches), N_CLASSES), np.float32)
        if len(self.shown) == 1:
            p[0, 2] = 1.0
            p[1, 3], p[1, 5] = 0.6, 0.4
            p[2, NOT_DIE], p[2, 4] = 0.7, 0.3
        else:
            p[:, 5] = 0.95
            p[:, 3] = 0.05
        return p, np.ones(len(patches))


def test_an_unsure_die_is_read_again_from_crops_moved_each_way():
    from companion.vision.detect import Candidate
    from companion.vision.reader import SECOND_LOOK_SHIFT

    # brighter to the right and down, by `slope` a pixel: a crop moved right or down is brighter
    slope = 0.2
    ramp = np.add.outer(np.arange(480), np.arange(640)) * slope
    frame = np.repeat(ramp[:, :, None], 3, axis=2).astype(np.uint8)
    sure, unsure = Candidate(150, 150, 100, 100, 0.0), Candidate(400, 300, 100, 100, 0.0)
    no_die = Candidate(550, 100, 60, 60, 0.0)
    model = _SecondLookModel()
    reading = DiceReader(model=model, detector=_Detector([sure, unsure, no_die])).read(frame)
    assert len(model.shown) == 2 and len(model.shown[1]) == 4  # neither the sure die nor the no die again
    right, left, down, up = (float(p.mean()) for p in model.shown[1])
    first = float(model.shown[0][1].mean())
    moved = SECOND_LOOK_SHIFT * 100 * slope  # the brightness a move by the shift adds
    for more, less in ((right, left), (down, up)):
        assert more - first == pytest.approx(moved, rel=0.3)
        assert first - less == pytest.approx(moved, rel=0.3)
    faces = {d.box[0] // 100: d.face for d in reading.dice}
    assert faces == {1: 2, 3: 5}  # five looks, four of them at a 5, outvote the 3
