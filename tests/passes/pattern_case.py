"""pattern_case.py — writes one case folder of tests/passes/data as
test_fusions reads it: model.onnx, test_data_set_0/input_K.npy and
output_K.npy, the fusion rules in `expect` and the tolerance "1e-4 1e-4".
Shared by the generators of pattern models (export_patterns.py,
gen_conv_patterns.py), with GraphBuilder, the nodes and constants of a
model being written (also gen_layout_cases.py's)."""
import os
import shutil

import numpy as np
import onnx
from onnx import helper, numpy_helper


def write_case(folder, proto, inputs, outputs, rules):
    """Replaces folder with the case: the model proto, its inputs and
    reference outputs (lists of arrays) and the lines of `expect`."""
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(os.path.join(folder, "test_data_set_0"))
    onnx.save(proto, os.path.join(folder, "model.onnx"))
    for prefix, arrays in (("input", inputs), ("output", outputs)):
        for k, a in enumerate(arrays):
            np.save(os.path.join(folder, "test_data_set_0", "%s_%d.npy" % (prefix, k)), a)
    with open(os.path.join(folder, "expect"), "w") as f:
        f.write("\n".join(rules) + "\n")
    with open(os.path.join(folder, "tolerance"), "w") as f:
        f.write("1e-4 1e-4\n")


class GraphBuilder:
    """The nodes and initializers of a model being written, and the random
    generator (seeded) its constants are drawn from."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.inits, self.nodes = [], []

    def const(self, name, arr):
        """An f32 initializer `name` holding arr; returns name."""
        self.inits.append(numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name))
        return name

    def node(self, op, ins, y, **attrs):
        """A node of op with inputs ins and the one output y; returns y."""
        self.nodes.append(helper.make_node(op, ins, [y], **attrs))
        return y
