"""pattern_case.py — writes one case folder of tests/passes/data as
test_fusions reads it: model.onnx, test_data_set_0/input_K.npy and
output_K.npy, the fusion rules in `expect` and the tolerance "1e-4 1e-4".
Shared by the generators of pattern models (export_patterns.py,
gen_conv_patterns.py)."""
import os
import shutil

import numpy as np
import onnx


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
