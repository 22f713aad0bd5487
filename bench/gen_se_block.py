#!/usr/bin/env python3
"""gen_se_block.py — writes a small squeeze-excitation block as ONNX, for
bench/compare.py: x[N,C,H,W] -> GlobalAveragePool -> Conv 1x1 (C -> C/4) ->
Relu -> Conv 1x1 (C/4 -> C) -> HardSigmoid -> Mul(x, s) (the per-channel
[N,C,1,1] broadcast), then Add of a [1,C,1,1] bias, Sub of a [1,1,H,W]
plane and Div by a [1,C,1,1] scale: the broadcast binaries CNNs emit.

    python3 bench/gen_se_block.py OUT.onnx [--c 96] [--hw 40]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--c", type=int, default=96)
    ap.add_argument("--hw", type=int, default=40)
    a = ap.parse_args()
    c, hw, r = a.c, a.hw, max(a.c // 4, 1)
    rng = np.random.default_rng(0)

    def init(name, shape, lo=-0.5, hi=0.5):
        return numpy_helper.from_array(rng.uniform(lo, hi, shape).astype(np.float32), name)

    inits = [init("w1", (r, c, 1, 1)), init("b1", (r,)), init("w2", (c, r, 1, 1)),
             init("b2", (c,)), init("bias", (1, c, 1, 1)), init("plane", (1, 1, hw, hw)),
             init("scale", (1, c, 1, 1), 0.5, 2.0)]
    nodes = [
        helper.make_node("GlobalAveragePool", ["x"], ["g"]),
        helper.make_node("Conv", ["g", "w1", "b1"], ["c1"]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"]),
        helper.make_node("HardSigmoid", ["c2"], ["s"], alpha=0.2, beta=0.5),
        helper.make_node("Mul", ["x", "s"], ["m"]),
        helper.make_node("Add", ["m", "bias"], ["a"]),
        helper.make_node("Sub", ["a", "plane"], ["d"]),
        helper.make_node("Div", ["d", "scale"], ["y"]),
    ]
    g = helper.make_graph(nodes, "se_block",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", c, hw, hw])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", c, hw, hw])],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, a.out)


if __name__ == "__main__":
    main()
