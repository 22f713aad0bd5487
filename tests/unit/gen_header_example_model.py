#!/usr/bin/env python3
"""gen_header_example_model.py — writes tests/unit/data/header_example.onnx,
a model with the signature the worked example in mopt.h expects (f32
[1,3,8,8] -> f32 [1,10]): scores = Flatten(pixels) @ W + b with
W[i, j] = 1 if i % 10 == j else 0 and b[j] = j, so that
    scores[j] = j + sum of pixels[i] over i % 10 == j,
which test_header_example.c recomputes by itself.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "header_example.onnx")

w = np.zeros((192, 10), np.float32)
w[np.arange(192), np.arange(192) % 10] = 1
b = np.arange(10, dtype=np.float32)
g = helper.make_graph(
    [helper.make_node("Flatten", ["pixels"], ["flat"], axis=1),
     helper.make_node("Gemm", ["flat", "W", "b"], ["scores"])],
    "header_example",
    [helper.make_tensor_value_info("pixels", TensorProto.FLOAT, [1, 3, 8, 8])],
    [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 10])],
    [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(m)
os.makedirs(os.path.dirname(OUT), exist_ok=True)
onnx.save(m, OUT)
