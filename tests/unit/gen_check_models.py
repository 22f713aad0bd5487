"""gen_check_models.py — writes tests/unit/data/check_three_problems.onnx for
test_model_check.c: one graph with two unsupported operators (NoSuchOp and OtherOp of a domain
libmopt never registers: LSTM and then Einsum served here until they became supported),
one type error (Add of f32 and i64) and one good node (Relu)."""
import os

import onnx
from onnx import TensorProto as T
from onnx import helper

nodes = [helper.make_node("OtherOp", ["a", "a"], ["e"], domain="test.unsupported"),
         helper.make_node("Add", ["a", "i"], ["bad"]),
         helper.make_node("NoSuchOp", ["x", "w", "r"], ["y"], domain="test.unsupported"),
         helper.make_node("Relu", ["a"], ["ok"])]
inputs = [helper.make_tensor_value_info("a", T.FLOAT, [2, 2]),
          helper.make_tensor_value_info("i", T.INT64, [2, 2]),
          helper.make_tensor_value_info("x", T.FLOAT, [1, 1, 2]),
          helper.make_tensor_value_info("w", T.FLOAT, [1, 4, 2]),
          helper.make_tensor_value_info("r", T.FLOAT, [1, 4, 1])]
outputs = [helper.make_tensor_value_info(n, T.FLOAT, None) for n in ["e", "bad", "y", "ok"]]
g = helper.make_graph(nodes, "g", inputs, outputs)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                              helper.make_opsetid("test.unsupported", 1)])
onnx.save(m, os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                          "check_three_problems.onnx"))
