"""gen_leniency_models.py — writes the small models of test_shape_leniency.c
into tests/unit/data, shaped like what exporters really emit:

- lenient_unknown_dims.onnx: x: [-1, 3, "?", "?"] (paddle2onnx's spelling of
  unknown dims, as in the PP-OCR classifier) and e: ["", 4] (an empty
  dim_param), each through a Relu. Every "?" is its own unknown, so a
  non-square x must run.
- lenient_declared_shapes.onnx: declared shapes that inference contradicts
  (ONNX Runtime warns and runs such models): output y is declared
  [1, "seqlen"] but computes to [3, 2] (another rank, as in ddddocr's OCR
  model), output z is declared [2, 5] but computes to [2, 3], and the
  value_info of mid is declared [7, 7] but computes to [2, 3].
"""
import os

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def unknown_dims():
    x = helper.make_tensor_value_info("x", T.FLOAT, [-1, 3, "?", "?"])
    e = helper.make_tensor_value_info("e", T.FLOAT, ["", 4])
    y = helper.make_tensor_value_info("y", T.FLOAT, [-1, 3, "?", "?"])
    f = helper.make_tensor_value_info("f", T.FLOAT, ["", 4])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu_x"),
                           helper.make_node("Relu", ["e"], ["f"], name="relu_e")],
                          "unknown_dims", [x, e], [y, f])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def declared_shapes():
    x = helper.make_tensor_value_info("x", T.FLOAT, [2, 3])
    shape = numpy_helper.from_array(np.array([3, 2], np.int64), "shape")
    nodes = [helper.make_node("Relu", ["x"], ["mid"], name="relu"),
             helper.make_node("Reshape", ["mid", "shape"], ["y"], name="reshape"),
             helper.make_node("Neg", ["mid"], ["z"], name="neg")]
    outs = [helper.make_tensor_value_info("y", T.FLOAT, [1, "seqlen"]),
            helper.make_tensor_value_info("z", T.FLOAT, [2, 5])]
    vi = [helper.make_tensor_value_info("mid", T.FLOAT, [7, 7])]
    g = helper.make_graph(nodes, "declared_shapes", [x], outs, [shape], value_info=vi)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


if __name__ == "__main__":
    onnx.save(unknown_dims(), os.path.join(DATA, "lenient_unknown_dims.onnx"))
    onnx.save(declared_shapes(), os.path.join(DATA, "lenient_declared_shapes.onnx"))
