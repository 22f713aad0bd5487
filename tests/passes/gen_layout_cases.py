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
    blocked X or Y), 2 squeeze-excitation ops;
  wino: a ResNet basic block at known 14x15 sizes (below the 56x56 of
    `blocked`): Conv(3 -> 64)+Relu -> MaxPool(3, stride 1, pads 1) -> 3x3
    64 -> 64 + Relu -> 3x3 64 -> 64 + Add(the MaxPool's output) + Relu ->
    3x3 stride 2 64 -> 32 -> 1x1 32 -> 8, and a GlobalAveragePool of the
    block's output (a graph output). Where the CPU has AVX-512 the 3x3
    stride-1 convs run on oneDNN's Winograd kernels, which take only the
    blocked layout, so the values they make or read stay blocked, with the
    MaxPool's input, the stride-2 conv and the GlobalAveragePool beside
    them: 5 values, 5 convolutions, 1 pool, se 1 (the GlobalAveragePool),
    "blocked_avx512 4" (the stem, the two Winograd convs, the stride-2
    one), "blocked 0" elsewhere (test_layout.c picks the rule);
  resize: YOLO's upsampling: Conv(stride 2)+Relu -> Resize nearest x2
    (asymmetric, floor) -> Concat with a Conv of x -> 1x1 Conv -> Resize
    nearest x2, x3 (half_pixel, round_prefer_ceil) -> Conv; the Conv of x
    is also read by a linear Resize (stays plain, and so does that Conv's
    output) -> Conv: 5 values, 3 convolutions, 1 flex, the 2 nearest
    Resizes as mopt.ChannelsLastResize;
  whole: channels-last parts of plain tensors (ChannelsLastConcat/Split
    transpose each such part per image): Concat(Conv(x) 3 -> 8, Conv(x)
    3 -> 16, x) as a graph output (plain), and Split(x, [1, 2]) whose
    outputs only Convs read: 4 values, 4 convolutions, 2 flex;
  fpn: an FPN's top-down step as in PP-OCR det: Conv+Relu -> strided Conv ->
    Resize nearest x2 (scales only) -> Add with the Relu's output (the Add
    gets mopt_same_shape: the Resize's size is not provably the Relu's) ->
    Conv, and a Concat of the Resize and the Relu -> 1x1 Conv: 5 values, 4
    convolutions, 1 flex, 1 resize (test_layout.c also refuses a
    broadcasting input on it)."""
import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from pattern_case import GraphBuilder

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


class Builder(GraphBuilder):
    def conv(self, x, y, cin, cout, k, group=1, stride=1, pad=0, bias=True, std=0.3):
        w = self.const(y + "_w", self.rng.normal(0, std, (cout, cin // group, k, k)))
        ins = [x, w] + ([self.const(y + "_b", self.rng.normal(0, 0.1, cout))] if bias else [])
        self.nodes.append(helper.make_node("Conv", ins, [y], group=group, strides=[stride] * 2,
                                           pads=[pad] * 4, kernel_shape=[k, k]))
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


def wino():
    b = Builder(8)
    r1 = b.node("Relu", [b.conv("x", "c1", 3, 64, 3, pad=1)], "r1")
    p = b.node("MaxPool", [r1], "p", kernel_shape=[3, 3], strides=[1, 1], pads=[1] * 4)
    r2 = b.node("Relu", [b.conv(p, "c2", 64, 64, 3, pad=1, std=0.05)], "r2")
    r3 = b.node("Relu", [b.node("Add", [b.conv(r2, "c3", 64, 64, 3, pad=1, std=0.05), p], "a3")],
                "r3")
    c4 = b.conv(r3, "c4", 64, 32, 3, stride=2, pad=1, std=0.05)
    b.conv(c4, "y", 32, 8, 1, std=0.1)
    b.node("GlobalAveragePool", [r3], "g")
    save("wino", b.nodes, b.inits, ["y", "g"],
         ["values 5", "convs 5", "pools 1", "se 1", "blocked 0", "blocked_avx512 4"],
         [(1, 3, 14, 15), (2, 3, 14, 15)], hw=(14, 15))


def resize():
    b = Builder(7)
    r1 = b.node("Relu", [b.conv("x", "c1", 3, 8, 3, stride=2, pad=1)], "r1")
    u = b.node("Resize", [r1, "", b.const("sc2", [1, 1, 2, 2])], "u", mode="nearest",
               coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    c2 = b.conv("x", "c2", 3, 8, 3, pad=1)
    cat = b.node("Concat", [u, c2], "cat", axis=1)
    c3 = b.conv(cat, "c3", 16, 8, 1)
    u2 = b.node("Resize", [c3, "", b.const("sc23", [1, 1, 2, 3])], "u2", mode="nearest",
                coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil")
    b.conv(u2, "y", 8, 4, 3, pad=1)
    lin = b.node("Resize", [c2, "", b.const("sc2l", [1, 1, 2, 2])], "lin", mode="linear")
    b.conv(lin, "y2", 8, 4, 1)
    save("resize", b.nodes, b.inits, ["y", "y2"],
         ["values 5", "convs 3", "se 0", "flex 1", "resizes 2"], [(1, 3, 16, 20), (2, 3, 10, 14)],
         hw=("height", "width"))


def whole():
    b = Builder(8)
    c1 = b.conv("x", "c1", 3, 8, 3, pad=1)
    c2 = b.conv("x", "c2", 3, 16, 1)
    b.node("Concat", [c1, c2, "x"], "cat", axis=1)
    b.inits.append(numpy_helper.from_array(np.array([1, 2], dtype=np.int64), "sizes"))
    b.nodes.append(helper.make_node("Split", ["x", "sizes"], ["s0", "s1"], axis=1))
    b.conv("s0", "y1", 1, 4, 3, pad=1)
    b.conv("s1", "y2", 2, 4, 1)
    save("whole", b.nodes, b.inits, ["cat", "y1", "y2"],
         ["values 4", "convs 4", "se 0", "flex 2"], [(1, 3, 13, 21), (2, 3, 8, 16)])


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
    wino()
    resize()
    whole()
