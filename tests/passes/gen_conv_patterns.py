#!/usr/bin/env python3
"""gen_conv_patterns.py — writes two pattern models under tests/passes/data,
reference outputs from ONNX Runtime (run by hand; the outputs are committed):
  conv_swish: Conv + SiLU written as Sigmoid and Mul (as YOLOv8 exports it),
    in both Mul input orders, after a residual Add, and one Conv whose output
    has a third reader (must stay a Conv);
  conv_affine_hswish: Conv -> Mul/Add by per-channel and scalar constants
    (folded into W and B) -> HardSwish spelled x * Clip(x + 3, 0, 6) / 6 or
    * (1/6) (paddle2onnx's PP-OCR), and a Mul by a constant that varies along
    the width (must stay);
  conv_post_affine: Conv -> activation -> Mul and/or Add by scalar
    constants (PP-LCNet's learnable affine after HardSwish, paddle2onnx's
    PP-OCRv4): the scalars become FusedConv's post_scale/post_shift; on a
    64 -> 64 3x3 Conv (Winograd at opt_level 3), a 1x1, after a residual
    Add and Relu; a per-channel Mul after the activation and a Mul whose
    output has two readers' Add stay;
  convtranspose_affine: ConvTranspose -> Add(per-channel bias) ->
    BatchNormalization (PP-OCR det's head), grouped with a bias ->
    Mul(per-channel), all folded into W and B; a BatchNormalization on a
    ConvTranspose output with a second reader stays;
  se_residual: x + x * HardSigmoid(SE(x)) (PP-OCRv4 det's RSE blocks), both
    operand orders, becomes Mul(x, s + 1); an Add whose Mul has a second
    reader, and one whose scale has x's full shape, stay."""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from pattern_case import GraphBuilder, write_case

DATA_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def save(name, nodes, inits, x, out_shape, expect):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch"] + list(x.shape[1:]))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch"] + out_shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    write_case(os.path.join(DATA_ROOT, name), model, [x], [sess.run(None, {"x": x})[0]], expect)


class Graph(GraphBuilder):
    """GraphBuilder with the convolutions and HardSwish these patterns use."""

    def conv(self, name, x, cin, cout, k, w_scale):
        """A k x k Conv with 'same' pads: weights normal * w_scale, bias normal * 0.1."""
        w = self.const(name + "_w", self.rng.standard_normal((cout, cin, k, k)) * w_scale)
        b = self.const(name + "_b", self.rng.standard_normal(cout) * 0.1)
        self.nodes.append(helper.make_node("Conv", [x, w, b], [name], pads=[k // 2] * 4))
        return name

    def hswish(self, x, name, div=True):
        """HardSwish spelled x * Clip(x + 3, 0, 6) / 6, or * (1/6) unless div."""
        const, nodes = self.const, self.nodes
        nodes.append(helper.make_node("Add", [x, const(name + "_3", 3.0)], [name + "_a"]))
        nodes.append(helper.make_node("Clip", [name + "_a", const(name + "_lo", 0.0),
                                               const(name + "_hi", 6.0)], [name + "_c"]))
        nodes.append(helper.make_node("Mul", [x, name + "_c"], [name + "_m"]))
        if div:
            nodes.append(helper.make_node("Div", [name + "_m", const(name + "_6", 6.0)], [name]))
        else:
            nodes.append(helper.make_node("Mul", [const(name + "_6", 1.0 / 6.0), name + "_m"],
                                          [name]))
        return name


def affine_hswish():
    g = Graph(4321)
    rng, inits, nodes, const, hswish = g.rng, g.inits, g.nodes, g.const, g.hswish

    w0 = const("w0", rng.standard_normal((8, 3, 3, 3)) * 0.4)
    nodes.append(helper.make_node("Conv", ["x", w0, const("b0", rng.standard_normal(8))], ["c0"],
                                  pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Mul", ["c0", const("s0", rng.uniform(0.5, 2, (1, 8, 1, 1)))],
                                  ["m0"]))
    nodes.append(helper.make_node("Add", [const("t0", rng.standard_normal((8, 1, 1))), "m0"],
                                  ["a0"]))
    h0 = hswish("a0", "h0")
    w1 = const("w1", rng.standard_normal((8, 1, 3, 3)) * 0.4)  # depthwise, no bias
    nodes.append(helper.make_node("Conv", [h0, w1], ["c1"], pads=[1, 1, 1, 1], group=8))
    nodes.append(helper.make_node("Mul", [const("s1", [1.7]), "c1"], ["m1"]))
    nodes.append(helper.make_node("Add", ["m1", const("t1", 0.25)], ["a1"]))
    h1 = hswish("a1", "h1", div=False)
    w2 = const("w2", rng.standard_normal((4, 8, 1, 1)) * 0.4)
    nodes.append(helper.make_node("Conv", [h1, w2], ["c2"]))
    nodes.append(helper.make_node("Mul", ["c2", const("s2", rng.standard_normal((1, 1, 1, 11)))],
                                  ["y"]))  # varies along the width: stays a Mul
    x = (rng.standard_normal((2, 3, 9, 11)) * 2).astype(np.float32)
    save("conv_affine_hswish", nodes, inits, x, [4, 9, 11],
         ["count FusedConv 2", "count Conv 1", "count Mul 1", "absent Add", "absent Clip",
          "absent Div"])


def post_affine():
    g = Graph(777)
    rng, inits, nodes, const, hswish = g.rng, g.inits, g.nodes, g.const, g.hswish

    def conv(name, x, cin, cout, k):
        return g.conv(name, x, cin, cout, k, 0.6 / np.sqrt(cin * k))

    def lab(x, name, scale=None, shift=None):
        if scale is not None:
            nodes.append(helper.make_node("Mul", [const(name + "_s", [scale]), x], [name + "_m"]))
            x = name + "_m"
        if shift is not None:
            nodes.append(helper.make_node("Add", [x, const(name + "_t", shift)], [name]))
            x = name
        return x

    a = lab(hswish(conv("c0", "x", 3, 64, 3), "h0"), "l0", 1.25, -0.125)   # Mul + Add
    b = lab(hswish(conv("c1", a, 64, 64, 3), "h1"), "l1", 0.8, 0.3)       # Winograd at O3
    c = lab(hswish(conv("c2", b, 64, 64, 1), "h2"), "l2", shift=0.5)      # Add only
    r = conv("c3", c, 64, 64, 3)
    nodes.append(helper.make_node("Add", [r, b], ["r_sum"]))              # residual
    nodes.append(helper.make_node("Relu", ["r_sum"], ["r_act"]))
    d = lab("r_act", "l3", scale=-0.7)                                    # Mul only
    e = hswish(conv("c4", d, 64, 8, 1), "h4")
    nodes.append(helper.make_node("Mul", [e, const("pc", rng.uniform(0.5, 1.5, (1, 8, 1, 1)))],
                                  ["e_pc"]))                               # per channel: stays
    f = hswish(conv("c5", "e_pc", 8, 8, 3), "h5")
    nodes.append(helper.make_node("Mul", [f, const("s5", 2.0)], ["f_m"]))  # fused, two readers:
    nodes.append(helper.make_node("Add", ["f_m", const("t5", 1.0)], ["f_a"]))  # Add stays
    nodes.append(helper.make_node("Sub", ["f_a", "f_m"], ["y"]))
    x = (rng.standard_normal((2, 3, 10, 12)) * 2).astype(np.float32)
    save("conv_post_affine", nodes, inits, x, [8, 10, 12],
         ["count FusedConv 6", "absent Conv", "count Mul 1", "count Add 1", "absent Clip",
          "absent Div", "absent Relu"])


def convtranspose_affine():
    g = Graph(99)
    rng, inits, nodes, const = g.rng, g.inits, g.nodes, g.const

    def bn(x, name, c):
        nodes.append(helper.make_node(
            "BatchNormalization",
            [x, const(name + "_g", rng.uniform(0.5, 1.5, c)), const(name + "_b", rng.standard_normal(c)),
             const(name + "_m", rng.standard_normal(c) * 0.1), const(name + "_v", rng.uniform(0.5, 2, c))],
            [name], epsilon=1e-5))
        return name

    nodes.append(helper.make_node("ConvTranspose", ["x", const("w0", rng.standard_normal((4, 6, 2, 2)) * 0.5)],
                                  ["t0"], kernel_shape=[2, 2], strides=[2, 2]))
    nodes.append(helper.make_node("Add", ["t0", const("b0", rng.standard_normal((6, 1, 1)))], ["a0"]))
    nodes.append(helper.make_node("Relu", [bn("a0", "bn0", 6)], ["r0"]))
    # grouped (2 groups of 3 -> 2), bias, kernel 3 stride 2 with pads
    nodes.append(helper.make_node("ConvTranspose", ["r0", const("w1", rng.standard_normal((6, 2, 3, 3)) * 0.4),
                                                    const("b1", rng.standard_normal(4))],
                                  ["t1"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], group=2))
    nodes.append(helper.make_node("Mul", [const("s1", rng.uniform(0.5, 2, (1, 4, 1, 1))), "t1"], ["m1"]))
    nodes.append(helper.make_node("ConvTranspose", ["m1", const("w2", rng.standard_normal((4, 3, 1, 1)) * 0.5)],
                                  ["t2"]))
    b2 = bn("t2", "bn2", 3)                                                 # t2 has two readers:
    nodes.append(helper.make_node("Add", [b2, "t2"], ["y"]))               # the BN stays
    x = rng.standard_normal((2, 4, 5, 6)).astype(np.float32)
    save("convtranspose_affine", nodes, inits, x, [3, 19, 23],
         ["count ConvTranspose 3", "count BatchNormalization 1", "count Mul 0", "count Add 1"])


def se_residual():
    g = Graph(5)
    rng, inits, nodes = g.rng, g.inits, g.nodes

    def conv(name, x, cin, cout, k):
        return g.conv(name, x, cin, cout, k, 0.4)

    def se(x, name, c):
        nodes.append(helper.make_node("GlobalAveragePool", [x], [name + "_p"]))
        r = conv(name + "_c1", name + "_p", c, c // 2, 1)
        nodes.append(helper.make_node("Relu", [r], [name + "_r"]))
        s = conv(name + "_c2", name + "_r", c // 2, c, 1)
        nodes.append(helper.make_node("HardSigmoid", [s], [name + "_s"], alpha=0.2, beta=0.5))
        return name + "_s"

    x0 = conv("c0", "x", 3, 8, 3)
    nodes.append(helper.make_node("Mul", [x0, se(x0, "se0", 8)], ["m0"]))
    nodes.append(helper.make_node("Add", [x0, "m0"], ["a0"]))            # Add(x, Mul(x, s))
    x1 = conv("c1", "a0", 8, 8, 1)
    nodes.append(helper.make_node("Mul", [se(x1, "se1", 8), x1], ["m1"]))
    nodes.append(helper.make_node("Add", ["m1", x1], ["a1"]))            # Add(Mul(s, x), x)
    x2 = conv("c2", "a1", 8, 8, 1)
    nodes.append(helper.make_node("Mul", [x2, se(x2, "se2", 8)], ["m2"]))
    nodes.append(helper.make_node("Add", [x2, "m2"], ["a2"]))            # m2 read twice: stays
    nodes.append(helper.make_node("Sub", ["a2", "m2"], ["d2"]))
    nodes.append(helper.make_node("Sigmoid", ["d2"], ["g2"]))
    nodes.append(helper.make_node("Mul", ["d2", "g2"], ["m3"]))          # full-shape scale: stays
    nodes.append(helper.make_node("Add", ["d2", "m3"], ["y"]))
    x = rng.standard_normal((2, 3, 9, 10)).astype(np.float32)
    save("se_residual", nodes, inits, x, [8, 9, 10],
         ["count Add 2", "count Mul 4", "count Sub 1", "count FusedConv 6"])


def swish():
    rng = np.random.default_rng(1234)
    inits, nodes = [], []

    def conv(name, x, cin, cout, k=3):
        w = numpy_helper.from_array(rng.standard_normal((cout, cin, k, k)).astype(np.float32) * 0.3,
                                    name + "_w")
        b = numpy_helper.from_array(rng.standard_normal(cout).astype(np.float32), name + "_b")
        inits.extend([w, b])
        nodes.append(helper.make_node("Conv", [x, w.name, b.name], [name], name=name,
                                      pads=[k // 2] * 4))
        return name

    def silu(x, name, swap=False):
        nodes.append(helper.make_node("Sigmoid", [x], [name + "_s"], name=name + "_sig"))
        ins = [name + "_s", x] if swap else [x, name + "_s"]
        nodes.append(helper.make_node("Mul", ins, [name], name=name + "_mul"))
        return name

    a = silu(conv("c0", "x", 3, 8), "a")                      # Conv -> SiLU
    b = silu(conv("c1", a, 8, 8), "b", swap=True)              # Mul(s, y)
    c2 = conv("c2", b, 8, 8)
    nodes.append(helper.make_node("Add", [c2, a], ["r"], name="res"))
    c = silu("r", "c")                                         # Conv -> Add -> SiLU
    c3 = conv("c3", c, 8, 4)
    d = silu(c3, "d")
    nodes.append(helper.make_node("Neg", [c3], ["n"], name="third_reader"))  # c3 stays a Conv
    nodes.append(helper.make_node("Add", [d, "n"], ["y"], name="out"))
    x = rng.standard_normal((2, 3, 9, 11)).astype(np.float32)
    save("conv_swish", nodes, inits, x, [4, 9, 11],
         ["count FusedConv 3", "count Conv 1", "count Sigmoid 1", "count Mul 1"])


def main():
    swish()
    affine_hswish()
    post_affine()
    convtranspose_affine()
    se_residual()

if __name__ == "__main__":
    main()
