#!/usr/bin/env python3
"""gen_layout_cases.py — writes the layout pass's cases under
tests/passes/layout_data (run by hand; the files are committed), each a
model.onnx with inputs of unknown height and width, two input sets
(test_data_set_0/1: different batch and sizes) with ONNX Runtime's outputs,
and `expect`: the layout pass's report at opt_level 3 ("values N",
"convs N", "se N", "pools N", "affine N", "flex N"; absent: 0), checked by
test_layout.c.
  chain: Conv(stride 2)+Relu -> depthwise Conv -> Add(the Relu's output)
    -> Mul by a scalar -> 1x1 Conv, read by GlobalAveragePool and a last
    Conv (graph output): 5 values channels-last (the Relu's output, the
    depthwise Conv's, the Add's, the Mul's, the 1x1's), 4 convolutions, 1
    GlobalAveragePool reading channels-last;
  se: squeeze-excitation: Conv -> GlobalAveragePool -> Conv+Relu ->
    Conv+HardSigmoid -> Mul(scale, the Conv's output) -> Conv(stride 2):
    3 values (the first Conv's output, the Mul's, and the 1x1 one between
    the two excitation Convs), 4 convolutions, 2 squeeze-excitation ops;
  pools: Conv -> MaxPool(3, stride 2, pads 1) -> Conv -> AveragePool(2,
    stride 2, ceil_mode) -> Conv: 4 values, 3 convolutions, 2 pools;
  affine: Conv+Relu -> BatchNormalization -> LeakyRelu -> Max(scalar) ->
    Min(scalar) -> Conv (an openWakeWord embedding block): 5 values, 2
    convolutions, the BatchNormalization as 1 mopt.ChannelsLastAffine;
  flex: Conv+Relu -> Split(6, 10) -> Conv on the 10 channels -> Concat(the
    6, that Conv's output, the graph input x) -> 1x1 Conv, with the 6 also a
    graph output: 4 values (the first Conv's output, the 10, the middle
    Conv's, the Concat's), 3 convolutions, the Split (one output plain, one
    channels-last) and the Concat (plain and channels-last inputs) as
    mopt.ChannelsLastSplit/Concat;
  boundary: a Conv whose output is also a graph output (stays plain), and a
    Conv read by a Concat with the graph input: that Conv's output and the
    Concat's stay channels-last (2 values, 2 convolutions, 1 flex);
  blocked: known 56x60 sizes (at least 56x56: oneDNN's blocked layout for
    channel counts that are multiples of 16): Conv(3 -> 16)+HardSwish
    (plain X, blocked Y) -> depthwise Conv+Relu -> 1x1 Conv + Add(the
    HardSwish's output: a blocked residual) -> Mul by a scalar -> 1x1
    16 -> 48 + Relu -> depthwise 5x5 (blocked X; its Y is read by an SE
    block's GlobalAveragePool, so channels-last: a chain edge) -> SE scale
    -> 1x1 48 -> 24 (24 channels: channels-last) -> 1x1 24 -> 32 (blocked
    Y: an edge the other way) -> depthwise stride 2 (28x30: channels-last
    Y) -> 1x1 32 -> 8: 11 values, 11 convolutions (7 of them with a
    blocked X or Y), 2 squeeze-excitation ops."""
import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layout_data")


def save(name, nodes, inits, outputs, expect, sizes, hw=(None, None)):
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3] + list(hw))],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, [None] * 4) for o in outputs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    data = os.path.join(ROOT, name)
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(data)
    onnx.save(model, os.path.join(data, "model.onnx"))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(99)
    for k, shape in enumerate(sizes):
        d = os.path.join(data, "test_data_set_%d" % k)
        os.makedirs(d)
        x = rng.uniform(-1, 1, shape).astype(np.float32)
        np.save(os.path.join(d, "input_0.npy"), x)
        for i, y in enumerate(sess.run(None, {"x": x})):
            np.save(os.path.join(d, "output_%d.npy" % i), y)
    with open(os.path.join(data, "expect"), "w") as f:
        f.write("\n".join(expect) + "\n")


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.inits, self.nodes = [], []

    def const(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name))
        return name

    def conv(self, x, y, cin, cout, k, group=1, stride=1, pad=0, bias=True):
        w = self.const(y + "_w", self.rng.normal(0, 0.3, (cout, cin // group, k, k)))
        ins = [x, w] + ([self.const(y + "_b", self.rng.normal(0, 0.1, cout))] if bias else [])
        self.nodes.append(helper.make_node("Conv", ins, [y], group=group, strides=[stride] * 2,
                                           pads=[pad] * 4, kernel_shape=[k, k]))
        return y

    def node(self, op, ins, y, **attrs):
        self.nodes.append(helper.make_node(op, ins, [y], **attrs))
        return y


def chain():
    b = Builder(1)
    c1 = b.conv("x", "c1", 3, 16, 3, stride=2, pad=1)
    r1 = b.node("Relu", [c1], "r1")
    c2 = b.conv(r1, "c2", 16, 16, 3, group=16, pad=1)
    a = b.node("Add", [c2, r1], "a")
    m = b.node("Mul", [a, b.const("half", [0.5])], "m")
    c3 = b.conv(m, "c3", 16, 24, 1)
    b.node("GlobalAveragePool", [c3], "y1")
    b.conv(c3, "y2", 24, 8, 3, pad=1, bias=False)
    save("chain", b.nodes, b.inits, ["y1", "y2"], ["values 5", "convs 4", "se 1"],
         [(1, 3, 20, 24), (2, 3, 17, 13)])


def se():
    b = Builder(3)
    c1 = b.conv("x", "c1", 3, 16, 3, pad=1)
    g = b.node("GlobalAveragePool", [c1], "g")
    s1 = b.node("Relu", [b.conv(g, "s1", 16, 4, 1)], "s1r")
    s2 = b.node("HardSigmoid", [b.conv(s1, "s2", 4, 16, 1)], "s2h", alpha=1.0 / 6, beta=0.5)
    m = b.node("Mul", [s2, c1], "m")
    b.conv(m, "y", 16, 8, 3, stride=2, pad=1)
    save("se", b.nodes, b.inits, ["y"], ["values 3", "convs 4", "se 2"],
         [(1, 3, 12, 10), (2, 3, 9, 16)])


def pools():
    b = Builder(4)
    c1 = b.conv("x", "c1", 3, 16, 3, pad=1)
    mp = b.node("MaxPool", [c1], "mp", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c2 = b.conv(mp, "c2", 16, 16, 3, pad=1)
    ap = b.node("AveragePool", [c2], "ap", kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    b.conv(ap, "y", 16, 8, 1)
    save("pools", b.nodes, b.inits, ["y"], ["values 4", "convs 3", "se 0", "pools 2"],
         [(1, 3, 16, 20), (2, 3, 11, 9)])


def affine():
    b = Builder(5)
    r1 = b.node("Relu", [b.conv("x", "c1", 3, 16, 3, pad=1)], "r1")
    bn = b.node("BatchNormalization",
                [r1, b.const("bn_s", b.rng.uniform(0.5, 1.5, 16)),
                 b.const("bn_b", b.rng.normal(0, 0.2, 16)),
                 b.const("bn_m", b.rng.normal(0, 0.3, 16)),
                 b.const("bn_v", b.rng.uniform(0.2, 2.0, 16))], "bn", epsilon=1e-3)
    lr = b.node("LeakyRelu", [bn], "lr", alpha=0.2)
    mx = b.node("Max", [lr, b.const("lo", [[[[-0.4]]]])], "mx")
    mn = b.node("Min", [mx, b.const("hi", [1.5])], "mn")
    b.conv(mn, "y", 16, 8, 3, pad=1)
    save("affine", b.nodes, b.inits, ["y"], ["values 5", "convs 2", "se 0", "affine 1"],
         [(1, 3, 14, 10), (2, 3, 7, 12)])


def flex():
    b = Builder(6)
    r1 = b.node("Relu", [b.conv("x", "c1", 3, 16, 3, pad=1)], "r1")
    b.inits.append(numpy_helper.from_array(np.array([6, 10], dtype=np.int64), "sizes"))
    b.nodes.append(helper.make_node("Split", [r1, "sizes"], ["s0", "s1"], axis=1))
    c2 = b.conv("s1", "c2", 10, 10, 3, pad=1)
    cat = b.node("Concat", ["s0", c2, "x"], "cat", axis=1)
    b.conv(cat, "y", 19, 8, 1)
    save("flex", b.nodes, b.inits, ["y", "s0"],
         ["values 4", "convs 3", "se 0", "flex 2"], [(1, 3, 9, 13), (2, 3, 6, 5)])


def boundary():
    b = Builder(2)
    c1 = b.conv("x", "c1", 3, 8, 3, pad=1)
    b.conv(c1, "y2", 8, 8, 1)
    c3 = b.conv("x", "c3", 3, 8, 1)
    b.node("Concat", [c3, "x"], "cat", axis=1)
    b.conv("cat", "y3", 11, 4, 1)
    save("boundary", b.nodes, b.inits, ["c1", "y2", "y3"],
         ["values 2", "convs 2", "se 0", "flex 1"],
         [(1, 3, 9, 11), (3, 3, 6, 5)])


def blocked():
    b = Builder(7)
    h1 = b.node("HardSwish", [b.conv("x", "c1", 3, 16, 3, pad=1)], "h1")
    r2 = b.node("Relu", [b.conv(h1, "c2", 16, 16, 3, group=16, pad=1)], "r2")
    a3 = b.node("Add", [b.conv(r2, "c3", 16, 16, 1), h1], "a3")
    m3 = b.node("Mul", [a3, b.const("half", [0.5])], "m3")
    r4 = b.node("Relu", [b.conv(m3, "c4", 16, 48, 1)], "r4")
    c5 = b.conv(r4, "c5", 48, 48, 5, group=48, pad=2)
    g = b.node("GlobalAveragePool", [c5], "g")
    s1 = b.node("Relu", [b.conv(g, "s1", 48, 16, 1)], "s1r")
    s2 = b.node("HardSigmoid", [b.conv(s1, "s2", 16, 48, 1)], "s2h", alpha=1.0 / 6, beta=0.5)
    se = b.node("Mul", [c5, s2], "se")
    c7 = b.conv(b.conv(se, "c6", 48, 24, 1), "c7", 24, 32, 1)
    c8 = b.conv(c7, "c8", 32, 32, 3, group=32, stride=2, pad=1)
    b.conv(c8, "y", 32, 8, 1)
    save("blocked", b.nodes, b.inits, ["y"], ["values 11", "convs 11", "se 2", "blocked 7"],
         [(1, 3, 56, 60), (2, 3, 56, 60)], hw=(56, 60))


def fpn():
    b = Builder(8)
    r1 = b.node("Relu", [b.conv("x", "c1", 3, 16, 3, pad=1)], "r1")
    c2 = b.conv(r1, "c2", 16, 16, 3, stride=2, pad=1)
    sc = b.const("up_scales", [1.0, 1.0, 2.0, 2.0])
    up = b.node("Resize", [c2, "", sc], "up", mode="nearest")
    a = b.node("Add", [r1, up], "a")
    b.conv(a, "y", 16, 8, 3, pad=1)
    cat = b.node("Concat", [up, r1], "cat", axis=1)
    b.conv(cat, "y2", 32, 4, 1)
    save("fpn", b.nodes, b.inits, ["y", "y2"],
         ["values 5", "convs 4", "se 0", "flex 1", "resizes 1"],
         [(1, 3, 16, 20), (2, 3, 12, 10)])


if __name__ == "__main__":
    chain()
    se()
    pools()
    affine()
    flex()
    boundary()
    fpn()
    blocked()
