#!/usr/bin/env python3
"""gen_large_model.py — writes a ~94 MB ONNX model for load-time measurements
(not a test input; do not commit its output): a stack of BERT-base-sized
feed-forward blocks, x[batch, seq, 768] -> (MatMul 768x3072, Add, Relu,
MatMul 3072x768, Add) x LAYERS, with random float32 weights.

usage: gen_large_model.py OUT.onnx [LAYERS (default 5)]
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    layers = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    rng = np.random.default_rng(0)
    d, ff = 768, 3072
    inits, nodes = [], []
    cur = "x"
    for i in range(layers):
        for name, shape in ((f"w1_{i}", (d, ff)), (f"b1_{i}", (ff,)), (f"w2_{i}", (ff, d)),
                            (f"b2_{i}", (d,))):
            inits.append(numpy_helper.from_array(
                (rng.standard_normal(shape) * 0.02).astype(np.float32), name))
        nodes += [
            helper.make_node("MatMul", [cur, f"w1_{i}"], [f"h{i}"], name=f"mm1_{i}"),
            helper.make_node("Add", [f"h{i}", f"b1_{i}"], [f"hb{i}"], name=f"add1_{i}"),
            helper.make_node("Relu", [f"hb{i}"], [f"r{i}"], name=f"relu_{i}"),
            helper.make_node("MatMul", [f"r{i}", f"w2_{i}"], [f"o{i}"], name=f"mm2_{i}"),
            helper.make_node("Add", [f"o{i}", f"b2_{i}"], [f"y{i}"], name=f"add2_{i}"),
        ]
        cur = f"y{i}"
    graph = helper.make_graph(
        nodes, "ffn_stack",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", d])],
        [helper.make_tensor_value_info(cur, TensorProto.FLOAT, ["batch", "seq", d])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, out)


if __name__ == "__main__":
    main()
