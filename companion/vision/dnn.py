"""The vision networks (the face model and the dice detector) run from ONNX built in memory from
their numpy weights, by onnxruntime, or by OpenCV's DNN module where onnxruntime is missing.

Why: both runtimes' convolutions are several times faster than the numpy im2col ones, and
onnxruntime's about twice OpenCV's on these small networks (one thread, a reveal's batch of
patches and a frame's detector input alike). Each network is written as ONNX bytes here with a
minimal protobuf writer (no onnx package needed); the weights stay in face_model.npz and
detector_model.npz, and each network's numpy forward pass remains the reference (and the last
fallback).
"""
from __future__ import annotations

import warnings
from collections.abc import Callable

import cv2
import numpy as np


def oihw(w: np.ndarray, channels: int) -> np.ndarray:
    """An im2col weight matrix (the layout both networks keep their weights in, see
    companion.vision.model.conv) as the (out, in, k, k) array ONNX holds."""
    k = int(round(np.sqrt(w.shape[0] // channels)))
    return w.reshape(k, k, channels, w.shape[1]).transpose(3, 2, 0, 1)


# --- protobuf wire format: just what the ONNX messages below need ---------------------------


def _varint(n: int) -> bytes:
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(int(value))


def _bytes(field: int, data: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _str(field: int, text: str) -> bytes:
    return _bytes(field, text.encode())


# --- ONNX messages (field numbers from onnx.proto) -------------------------------------------

FLOAT = 1  # TensorProto.DataType


def _tensor(name: str, array: np.ndarray) -> bytes:  # TensorProto: dims, data_type, name, raw_data
    array = np.ascontiguousarray(array, "<f4")
    return b"".join(_int(1, d) for d in array.shape) + _int(2, FLOAT) + _str(8, name) + \
        _bytes(9, array.tobytes())


def _ints(name: str, values) -> bytes:  # AttributeProto of type INTS (7)
    return _str(1, name) + b"".join(_int(8, v) for v in values) + _int(20, 7)


def _one_int(name: str, value: int) -> bytes:  # AttributeProto of type INT (2)
    return _str(1, name) + _int(3, value) + _int(20, 2)


def _node(op: str, inputs, outputs, *attributes) -> bytes:  # NodeProto
    return b"".join(_str(1, i) for i in inputs) + b"".join(_str(2, o) for o in outputs) + \
        _str(4, op) + b"".join(_bytes(5, a) for a in attributes)


def _value(name: str, dims) -> bytes:  # ValueInfoProto of a float tensor; str dims are symbolic
    shape = b"".join(_bytes(1, _str(2, d) if isinstance(d, str) else _int(1, d)) for d in dims)
    return _str(1, name) + _bytes(2, _bytes(1, _int(1, FLOAT) + _bytes(2, shape)))


class Graph:
    """An ONNX graph written op by op: each method adds a node and returns its output's name."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._nodes: list[bytes] = []
        self._inits: list[bytes] = []
        self._n = 0

    def _out(self, op: str, inputs: list[str], *attributes: bytes) -> str:
        self._n += 1
        out = f"{op.lower()}{self._n}"
        self._nodes.append(_node(op, inputs, [out], *attributes))
        return out

    def constant(self, array: np.ndarray) -> str:
        name = f"k{len(self._inits)}"
        self._inits.append(_tensor(name, array))
        return name

    def conv(self, x: str, weight: np.ndarray, bias: np.ndarray, *, stride: int = 1, dilation: int = 1) -> str:
        """A 'same' convolution; `weight` is (out, in, k, k) as ONNX and torch hold it."""
        k = weight.shape[-1]
        pad = dilation * (k // 2)
        return self._out("Conv", [x, self.constant(weight), self.constant(bias)],
                         _ints("kernel_shape", [k, k]), _ints("pads", [pad] * 4),
                         _ints("strides", [stride, stride]), _ints("dilations", [dilation, dilation]))

    def relu(self, x: str) -> str:
        return self._out("Relu", [x])

    def max_pool2(self, x: str) -> str:
        return self._out("MaxPool", [x], _ints("kernel_shape", [2, 2]), _ints("strides", [2, 2]))

    def flatten(self, x: str) -> str:
        return self._out("Flatten", [x], _one_int("axis", 1))

    def dense(self, x: str, weight: np.ndarray, bias: np.ndarray) -> str:
        """x @ weight + bias, `weight` as (in, out)."""
        return self._out("Gemm", [x, self.constant(weight), self.constant(bias)])

    def model(self, input_dims, output: str, output_dims) -> bytes:
        """The ModelProto (ir_version 7, opset 13) with input "x"; str dims are symbolic."""
        graph = b"".join(_bytes(1, n) for n in self._nodes) + _str(2, self.name) + \
            b"".join(_bytes(5, t) for t in self._inits) + \
            _bytes(11, _value("x", input_dims)) + _bytes(12, _value(output, output_dims))
        return _int(1, 7) + _str(2, "companion") + _bytes(7, graph) + _bytes(8, _str(1, "") + _int(2, 13))


def onnx_bytes(weights: tuple[np.ndarray, ...], channels: int, patch: int) -> bytes:
    """The network of FaceModel (3 x [3x3 conv, ReLU, 2x2 max pool], dense, ReLU, dense) as an
    ONNX model: NCHW input (n, channels, patch, patch), logits out."""
    g = Graph("face")
    x = "x"
    for i in range(3):
        w = weights[2 * i]
        x = g.max_pool2(g.relu(g.conv(x, oihw(w, w.shape[0] // 9), weights[2 * i + 1])))
    side, last = patch // 8, weights[4].shape[1]
    # numpy flattens (h, w, c); ONNX's Flatten gives (c, h, w): reorder the dense rows to match
    dense = weights[6].reshape(side, side, last, -1).transpose(2, 0, 1, 3).reshape(last * side * side, -1)
    logits = g.dense(g.relu(g.dense(g.flatten(x), dense, weights[7])), weights[8], weights[9])
    return g.model(["n", channels, patch, patch], logits, ["n", weights[8].shape[1]])


def detector_onnx(weights: tuple[np.ndarray, ...], layers, channels: int) -> bytes:
    """The dice detector (companion.vision.detect: convolutions with `layers`' strides and
    dilations, ReLU after all but the last) as an ONNX model for one NCHW image of `channels`
    and any height and width (both runtimes take symbolic sizes, so one network serves every
    scale a frame is looked at)."""
    g = Graph("detector")
    x, cin = "x", channels
    for i, (out, _, stride, dilation) in enumerate(layers):
        x = g.conv(x, oihw(weights[2 * i], cin), weights[2 * i + 1], stride=stride, dilation=dilation)
        if i < len(layers) - 1:
            x = g.relu(x)
        cin = out
    return g.model([1, channels, "h", "w"], x, [1, cin, "cells_h", "cells_w"])


RUNTIMES = ("onnxruntime", "opencv")  # tried in this order


def load_onnx(data: bytes, what: str, input_shape, runtimes=RUNTIMES) -> Callable[[np.ndarray], np.ndarray] | None:
    """A network's forward pass (float32 NCHW in, its output out) from ONNX bytes, by the first of
    `runtimes` that loads it and runs it on a blank input of `input_shape`; or None (with a
    warning) where none does. A runtime that is installed but refuses the network is named in a
    warning too: the network then runs slower than it should, and that is a bug to see."""
    probe = np.zeros(input_shape, np.float32)
    refused = []
    for runtime in runtimes:
        try:
            forward = _OPENERS[runtime](data)
            forward(probe)  # some refusals (a layer's shapes that disagree) come only at the first run
        except ImportError:  # not installed: the next runtime, as designed
            continue
        except Exception as err:  # its own error on these bytes: the next runtime, said
            first_line = (str(err).strip().splitlines() or [""])[0][:200]
            refused.append(f"{runtime} ({type(err).__name__}: {first_line})" if first_line else
                           f"{runtime} ({type(err).__name__})")
            continue
        if refused:
            warnings.warn(f"the {what} runs by {runtime}: {', '.join(refused)} refused it", RuntimeWarning)
        return forward
    warnings.warn(f"the {what} runs in numpy: neither onnxruntime nor OpenCV can load it"
                  + (f" ({', '.join(refused)})" if refused else ""), RuntimeWarning)
    return None


def _onnxruntime(data: bytes) -> Callable[[np.ndarray], np.ndarray]:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    # as many threads as OpenCV is allowed, so cv2.setNumThreads(1) makes both networks one core's
    options.intra_op_num_threads = options.inter_op_num_threads = max(1, cv2.getNumThreads())
    # its threads wait for work without spinning: a live reveal leaves the listener the CPU
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    output = session.get_outputs()[0].name
    return lambda x: session.run([output], {"x": x})[0]


def _opencv(data: bytes) -> Callable[[np.ndarray], np.ndarray]:
    net = cv2.dnn.readNetFromONNX(np.frombuffer(data, np.uint8))

    def forward(x: np.ndarray) -> np.ndarray:
        net.setInput(x)
        return net.forward()
    return forward


_OPENERS = {"onnxruntime": _onnxruntime, "opencv": _opencv}


class DnnForward:
    """The face model's logits from features by a runtime; build() gives None where none loads it."""

    def __init__(self, forward: Callable[[np.ndarray], np.ndarray], channels: int, patch: int) -> None:
        self._forward, self._shape = forward, (channels, patch, patch)

    @classmethod
    def build(cls, weights: tuple[np.ndarray, ...], channels: int, patch: int,
              runtimes=RUNTIMES) -> "DnnForward | None":
        forward = load_onnx(onnx_bytes(weights, channels, patch), "face model", (1, channels, patch, patch), runtimes)
        return None if forward is None else cls(forward, channels, patch)

    def __call__(self, features: np.ndarray) -> np.ndarray:
        return self._forward(np.ascontiguousarray(features.reshape(len(features), *self._shape), np.float32))
