#!/usr/bin/env python3
"""gen_conv_patterns.py — writes two pattern models under tests/passes/data,
reference outputs from ONNX Runtime (run by hand; the outputs are committed):
  conv_swish: Conv + SiLU written as Sigmoid and Mul (as YOLOv8 exports it),
    in both Mul input orders, after a residual Add, and one Conv whose output
    has a third reader (must stay a Conv);
  conv_affine_hswish: Conv -> Mul/Add by per-channel and scalar constants
    (folded into W and B) -> HardSwish spelled x * Clip(x + 3, 0, 6) / 6 or
    * (1/6) (paddle2onnx's PP-OCR), and a Mul by a constant that varies along
    the width (must stay)."""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from pattern_case import write_case

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


def affine_hswish():
    rng = np.random.default_rng(4321)
    inits, nodes = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name))
        return name

    def hswish(x, name, div=True):
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

if __name__ == "__main__":
    main()
