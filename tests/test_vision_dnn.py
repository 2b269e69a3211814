"""The networks run by onnxruntime and by OpenCV's DNN module must give what their numpy references give."""
import sys
import warnings
from dataclasses import replace

import numpy as np
import pytest

from companion.vision.detect import LAYERS, crop, load_detector, network_input, scaled_input
from companion.vision import dnn
from companion.vision.dnn import RUNTIMES, DnnForward, detector_onnx, load_onnx, onnx_bytes
from companion.vision.model import CHANNELS, PATCH, features, load_model
from companion.vision.scenes import generate_scene


@pytest.fixture(scope="module")
def patches():
    sc = generate_scene(7400, size=(540, 960))
    found = np.stack([crop(sc.image, c) for c in load_detector().find(sc.image)])
    assert len(found) >= 5
    return found


def test_the_shipped_runtime_and_numpy_give_the_same_probabilities(patches):
    model = load_model()
    assert model.use_dnn
    fast = model.predict(patches)
    assert "_dnn" in vars(model) and model._dnn is not None  # a runtime did load the network
    slow = replace(model, use_dnn=False).predict(patches)
    np.testing.assert_allclose(fast, slow, atol=1e-4)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_each_runtime_gives_the_numpy_logits(runtime, patches):
    model = load_model()
    forward = DnnForward.build(model.weights, CHANNELS, PATCH, runtimes=(runtime,))
    assert forward is not None, f"{runtime} did not load the face model"
    f = features(patches)
    np.testing.assert_allclose(forward(f), model.logits_from_features(f), atol=1e-3)


def test_the_onnx_bytes_are_one_model_with_every_weight():
    model = load_model()
    data = onnx_bytes(model.weights, CHANNELS, PATCH)
    assert data.startswith(b"\x08\x07")  # ir_version 7
    assert len(data) > sum(w.nbytes for w in model.weights)
    # A first layer with 4 filters but 16 biases: well-formed bytes that both runtimes refuse
    # (onnxruntime only when it first runs them).
    broken = (model.weights[0][:, :4].copy(),) + model.weights[1:]
    with pytest.warns(RuntimeWarning, match="runs in numpy: neither onnxruntime nor OpenCV can load it"):
        assert DnnForward.build(broken, CHANNELS, PATCH) is None


def test_a_runtime_that_refuses_the_network_is_named_and_the_next_one_runs_it(monkeypatch):
    def refusing(data):
        raise RuntimeError("[ONNXRuntimeError] : 10 : INVALID_GRAPH : a made-up refusal\nsecond line")

    monkeypatch.setitem(dnn._OPENERS, "onnxruntime", refusing)
    model = load_model()
    with pytest.warns(RuntimeWarning, match=r"face model runs by opencv: onnxruntime \(RuntimeError: .*made-up refusal\)"):
        forward = load_onnx(onnx_bytes(model.weights, CHANNELS, PATCH), "face model", (1, CHANNELS, PATCH, PATCH))
    x = np.zeros((2, CHANNELS, PATCH, PATCH), np.float32)
    np.testing.assert_allclose(forward(x), model.logits_from_features(x.reshape(2, -1)), atol=1e-3)


def test_a_refusal_without_words_is_named_too(monkeypatch):
    def refusing(data):
        raise MemoryError()

    monkeypatch.setitem(dnn._OPENERS, "onnxruntime", refusing)
    model = load_model()
    with pytest.warns(RuntimeWarning, match=r"runs by opencv: onnxruntime \(MemoryError\) refused it"):
        assert load_onnx(onnx_bytes(model.weights, CHANNELS, PATCH), "face model", (1, CHANNELS, PATCH, PATCH))


def test_a_missing_runtime_is_passed_over(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # `import onnxruntime` raises ImportError
    model = load_model()
    data = onnx_bytes(model.weights, CHANNELS, PATCH)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # OpenCV's, without a warning
        forward = load_onnx(data, "face model", (1, CHANNELS, PATCH, PATCH))
    assert forward is not None
    x = np.zeros((3, CHANNELS, PATCH, PATCH), np.float32)
    np.testing.assert_allclose(forward(x), model.logits_from_features(x.reshape(3, -1)), atol=1e-3)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_the_detector_in_each_runtime_and_numpy_gives_the_same_maps_at_every_scale(runtime):
    det = load_detector()
    sc = generate_scene(7401, size=(480, 640))
    forward = load_onnx(detector_onnx(det.weights, LAYERS, 3), "dice detector", (1, 3, 16, 16), (runtime,))
    assert forward is not None, f"{runtime} did not load the detector"
    for scale in (0.5, 0.37):  # one network, two input shapes
        x = network_input(scaled_input(sc.image, scale)[0])
        fast = forward(x)[0]
        np.testing.assert_allclose(fast, det.maps_numpy(x), atol=2e-3)
        assert fast.shape == (6, x.shape[2] // 4, x.shape[3] // 4)
        np.testing.assert_allclose(det.maps(x), fast, atol=1e-4)  # the shipped path runs one of them
    assert "_forward" in vars(det) and det._forward is not None
