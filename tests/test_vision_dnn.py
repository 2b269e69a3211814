"""The networks run by OpenCV's DNN module must give what their numpy references give."""
from dataclasses import replace

import numpy as np
import pytest

from companion.vision.detect import crop, load_detector, network_input, scaled_input
from companion.vision.dnn import DnnForward, onnx_bytes
from companion.vision.model import CHANNELS, PATCH, features, load_model
from companion.vision.scenes import generate_scene


def test_opencv_and_numpy_give_the_same_probabilities():
    model = load_model()
    assert model.use_dnn
    sc = generate_scene(7400, size=(540, 960))
    patches = np.stack([crop(sc.image, c) for c in load_detector().find(sc.image)])
    assert len(patches) >= 5
    fast = model.predict(patches)
    assert model._dnn and model._dnn[0] is not None  # OpenCV did load the network
    slow = replace(model, use_dnn=False).predict(patches)
    np.testing.assert_allclose(fast, slow, atol=1e-4)
    f = features(patches)
    np.testing.assert_allclose(model._dnn[0](f), model.logits_from_features(f), atol=1e-3)


def test_the_onnx_bytes_are_one_model_with_every_weight():
    model = load_model()
    data = onnx_bytes(model.weights, CHANNELS, PATCH)
    assert data.startswith(b"\x08\x07")  # ir_version 7
    assert len(data) > sum(w.nbytes for w in model.weights)
    # A first layer with 4 filters but 16 biases: well-formed bytes that OpenCV refuses.
    broken = (model.weights[0][:, :4].copy(),) + model.weights[1:]
    with pytest.warns(RuntimeWarning, match="runs in numpy: OpenCV cannot load it"):
        assert DnnForward.build(broken, CHANNELS, PATCH) is None


def test_the_detector_in_opencv_and_numpy_gives_the_same_maps():
    det = load_detector()
    sc = generate_scene(7401, size=(480, 640))
    x = network_input(scaled_input(sc.image, 0.5)[0])
    fast = det.maps(x)
    assert det._nets[x.shape] is not None  # OpenCV did load the network
    np.testing.assert_allclose(fast, det.maps_numpy(x), atol=2e-3)
    assert fast.shape == (6, x.shape[2] // 4, x.shape[3] // 4)
