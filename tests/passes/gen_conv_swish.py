#!/usr/bin/env python3
"""gen_conv_swish.py — writes tests/passes/data/conv_swish: Conv + SiLU written
as Sigmoid and Mul (as YOLOv8 exports it), in both Mul input orders, after a
residual Add, and one Conv whose output has a third reader (must stay a Conv).
Reference outputs from ONNX Runtime. Run by hand; the outputs are committed."""
import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "conv_swish")


def main():
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
    graph = helper.make_graph(
        nodes, "conv_swish",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 9, 11])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4, 9, 11])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    shutil.rmtree(DATA, ignore_errors=True)
    os.makedirs(os.path.join(DATA, "test_data_set_0"))
    onnx.save(model, os.path.join(DATA, "model.onnx"))
    x = rng.standard_normal((2, 3, 9, 11)).astype(np.float32)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.save(os.path.join(DATA, "test_data_set_0", "input_0.npy"), x)
    np.save(os.path.join(DATA, "test_data_set_0", "output_0.npy"), sess.run(None, {"x": x})[0])
    with open(os.path.join(DATA, "expect"), "w") as f:
        f.write("count FusedConv 3\ncount Conv 1\ncount Sigmoid 1\ncount Mul 1\n")
    with open(os.path.join(DATA, "tolerance"), "w") as f:
        f.write("1e-4 1e-4\n")


if __name__ == "__main__":
    main()
