#!/usr/bin/env python3
"""gen_api_v2_models.py — writes the models of tests/unit/test_api_v2.c and
test_alloc_hooks.c into tests/unit/data (committed; rerun by hand when they
must change):

- metadata.onnx: x f32 [batch, 4] -> y = Reshape(x, Concat(Shape(x)[0:1], [2, 2])) + 1,
  shape [batch, 2, 2]. Its Shape/Slice/Concat chain folds away only when
  'batch' is fixed (dim.batch), so the node count tells whether the graph was
  optimized for the fixed size. It carries every metadata field libmopt
  reads: producer name/version, domain, model_version, doc_string, the
  graph's name and doc_string and two metadata_props.
- chain.onnx: x f32 [256, 256] -> 400 chained Add/Mul nodes (y = ((x+1)*1)+1...),
  slow enough (~50 ms) that another thread can cancel a run in its middle;
  y = x + 200.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def metadata_model():
    nodes = [
        helper.make_node("Shape", ["x"], ["shp"], name="shape"),
        helper.make_node("Slice", ["shp", "zero", "one"], ["batch_dim"], name="slice"),
        helper.make_node("Concat", ["batch_dim", "tail"], ["new_shape"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "new_shape"], ["r"], name="reshape"),
        helper.make_node("Add", ["r", "c1"], ["y"], name="add"),
    ]
    inits = [numpy_helper.from_array(np.array([0], np.int64), "zero"),
             numpy_helper.from_array(np.array([1], np.int64), "one"),
             numpy_helper.from_array(np.array([2, 2], np.int64), "tail"),
             numpy_helper.from_array(np.array(1.0, np.float32), "c1")]
    g = helper.make_graph(
        nodes, "meta_graph",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2, 2])],
        inits, doc_string="graph doc")
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="gen_api_v2", producer_version="1.2.3",
                          domain="ai.mopt.test", model_version=42,
                          doc_string="a model that describes itself")
    helper.set_model_props(m, {"author": "libmopt tests", "license": "MIT"})
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(DATA, "metadata.onnx"))


def chain_model(n=400):
    nodes, prev = [], "x"
    for i in range(n):
        op = "Add" if i % 2 == 0 else "Mul"
        nodes.append(helper.make_node(op, [prev, "one"], ["v%d" % i], name="n%d" % i))
        prev = "v%d" % i
    nodes[-1].output[0] = "y"
    g = helper.make_graph(
        nodes, "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [256, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [256, 256])],
        [numpy_helper.from_array(np.array(1.0, np.float32), "one")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(DATA, "chain.onnx"))


if __name__ == "__main__":
    os.makedirs(DATA, exist_ok=True)
    metadata_model()
    chain_model()
