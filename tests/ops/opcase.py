"""opcase.py — shared helper for the op-test generators (tests/ops/gen_*.py).

A case is a folder tests/ops/data/<name>/ holding model.onnx (one node, or a
few) and test_data_set_0/input_K.npy + output_K.npy, K in the model's input
and output order — the layout of the ONNX backend node tests, with .npy files
instead of .pb. Expected outputs come from numpy (an independent reference),
never from libmopt. An optional file `tolerance` holds "atol rtol".

Usage in a generator:

    from opcase import Case, rng
    c = Case("add_broadcast", opset=13)
    a = rng().standard_normal((2, 3, 4), dtype=np.float32)
    b = rng().standard_normal((4,), dtype=np.float32)
    c.node("Add", ["a", "b"], ["y"])
    c.save({"a": a, "b": b}, {"y": a + b})

Run a generator from the repo root: python3 tests/ops/gen_elementwise.py
"""
import os
import shutil

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")

_NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int16): TensorProto.INT16,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.uint16): TensorProto.UINT16,
    np.dtype(np.uint32): TensorProto.UINT32,
    np.dtype(np.uint64): TensorProto.UINT64,
    np.dtype(np.bool_): TensorProto.BOOL,
}


def rng(seed=1234):
    """A fresh, seeded generator: every case is reproducible."""
    return np.random.default_rng(seed)


def normal(gen, shape, dtype=np.float32, scale=1.0):
    """Standard-normal samples of `shape` from generator `gen`, times scale,
    as dtype (the generators' usual random input)."""
    return (gen.standard_normal(shape) * scale).astype(dtype)


def opt(convert, value):
    """convert(value), or None (an attribute Case.node leaves out) for None."""
    return None if value is None else convert(value)


def onnx_dtype(arr):
    return _NP_TO_ONNX[np.asarray(arr).dtype]


def _c_order(arr):
    """C-ordered copy that keeps 0-d arrays 0-d (np.ascontiguousarray makes them (1,))."""
    return np.array(arr, order="C")


class Case:
    def __init__(self, name, opset=17, domain_opsets=None, check=True):
        """check=False skips onnx.checker (needed for nodes of domain "mopt",
        which the checker does not know)."""
        self.name = name
        self.check = check
        self.opset = opset
        self.domain_opsets = domain_opsets or {}
        self.nodes = []
        self.initializers = []
        self.tolerance = None
        self.error = None

    def node(self, op_type, inputs, outputs, domain="", **attrs):
        """Adds a node. Attributes given as None are left out (as
        onnx.helper.make_node does), so optional ones can be passed through."""
        self.nodes.append(helper.make_node(op_type, inputs, outputs, domain=domain, **attrs))
        return self

    def initializer(self, name, array):
        """A weight baked into the model (not fed as an input)."""
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return self

    def expect_error(self, status, text):
        """Makes this an error case: loading the model (or running its data
        set) must fail with mopt_status number `status` and a message that
        contains `text`. The outputs given to save() only declare the
        graph's outputs then."""
        self.error = (status, text)
        return self

    def tol(self, atol, rtol):
        self.tolerance = (atol, rtol)
        return self

    def save_error(self, inputs, outputs, status, text, input_shapes=None):
        """A case the library must refuse, at load or when run on `inputs`:
        with the status mopt_status_string names (e.g. "shape error") and a
        message containing `text`. `outputs` gives the graph outputs' dtypes
        and ranks (their values are not written)."""
        out = self.save(inputs, outputs, input_shapes, write_outputs=False)
        with open(os.path.join(out, "expect_error"), "w") as f:
            f.write(f"{status}\n{text}\n")
        return out

    def save(self, inputs, outputs, input_shapes=None, write_outputs=True):
        """inputs/outputs: dicts name -> numpy array, in graph order.
        input_shapes: optional dict name -> list of dims/str to declare symbolic
        dims (e.g. ["batch", 3]); default is the concrete shape."""
        input_shapes = input_shapes or {}
        g_inputs = [
            helper.make_tensor_value_info(k, onnx_dtype(v), input_shapes.get(k, list(np.shape(v))))
            for k, v in inputs.items()
        ]
        # outputs declare their rank only (dims unknown): onnx >= 1.16's checker
        # rejects a value_info without a shape
        g_outputs = [helper.make_tensor_value_info(k, onnx_dtype(v), [None] * np.ndim(v))
                     for k, v in outputs.items()]
        graph = helper.make_graph(self.nodes, self.name, g_inputs, g_outputs, self.initializers)
        opsets = [helper.make_opsetid("", self.opset)]
        opsets += [helper.make_opsetid(d, v) for d, v in self.domain_opsets.items()]
        model = helper.make_model(graph, opset_imports=opsets, producer_name="mopt-tests")
        model.ir_version = 8
        if self.check:
            onnx.checker.check_model(model)
        out = os.path.join(DATA_DIR, self.name)
        shutil.rmtree(out, ignore_errors=True)
        ds = os.path.join(out, "test_data_set_0")
        os.makedirs(ds)
        onnx.save(model, os.path.join(out, "model.onnx"))
        for i, v in enumerate(inputs.values()):
            np.save(os.path.join(ds, f"input_{i}.npy"), _c_order(v))
        for i, v in enumerate(outputs.values() if write_outputs else []):
            np.save(os.path.join(ds, f"output_{i}.npy"), _c_order(v))
        if self.error:
            with open(os.path.join(out, "expect_error"), "w") as f:
                f.write(f"{self.error[0]} {self.error[1]}\n")
        if self.tolerance:
            with open(os.path.join(out, "tolerance"), "w") as f:
                f.write(f"{self.tolerance[0]} {self.tolerance[1]}\n")
        return out
