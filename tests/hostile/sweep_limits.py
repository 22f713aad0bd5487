#!/usr/bin/env python3
"""sweep_limits.py — a generated sweep of Conv, MaxPool/AveragePool, MatMul
and Gemm problems with extreme pads, strides, dilations, kernel sizes and
dims (1, 2^31 - 1, 2^31, 2^32, 2^62, 2^63 - 1; fixed and symbolic inputs),
each loaded and run by the mopt CLI with the oneDNN backend (fp32 and bf16,
memory_limit 1 GiB) and checked by `mopt check` (issue 17).

Asserted for every case: no crash (no signal, no timeout), exit status 0 or
1, and on 1 a "mopt: <status>: <message>" line naming a clean status (LIMIT,
INVALID_MODEL, SHAPE, out of memory), never "internal error". A run is
skipped only when its input alone would exceed 64 MiB (then load and check
still run); the counts of loads and runs are printed and must be non-zero.

usage: sweep_limits.py MOPT_CLI   (needs numpy and onnx)
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

VALUES = [1, (1 << 31) - 1, 1 << 31, 1 << 32, 1 << 62, (1 << 63) - 1]
CLEAN = ("limit exceeded", "invalid model", "shape error", "out of memory", "unsupported",
         "type error")


def model(path, nodes, x_shape, inits, x_name="x"):
    g = h.make_graph(nodes, "sweep", [h.make_tensor_value_info(x_name, T.FLOAT, x_shape)],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


def weights(name, shape):
    return nh.from_array(np.full(shape, 0.25, np.float32), name)


def cases():
    """(name, nodes, declared x shape, initializers, run shape or None)"""
    for S in (1, 2, 3):
        sp = [6] * S
        w = weights("w", [2, 2] + [3] * S)
        for sym in (False, True):
            x = ["N", 2] + ["D%d" % i for i in range(S)] if sym else [1, 2] + sp
            run = [1, 2] + sp
            tag = "sym" if sym else "fix"
            for v in VALUES:
                for attr, val in (("pads", [v] * (2 * S)), ("pads", [0] * S + [v] * S),
                                  ("strides", [v] * S), ("dilations", [v] * S)):
                    kind = attr + ("_asym" if attr == "pads" and val[0] == 0 else "")
                    conv = h.make_node("Conv", ["x", "w"], ["y"], **{attr: val})
                    yield ("conv%dd_%s_%s_%d" % (S, tag, kind, v), [conv], x, [w], run)
                    if S == 2 and attr == "pads":
                        nodes = [h.make_node("Conv", ["x", "w"], ["c"], **{attr: val}),
                                 h.make_node("Relu", ["c"], ["y"])]
                        yield ("convrelu_%s_%s_%d" % (tag, kind, v), nodes, x, [w], run)
    for op in ("MaxPool", "AveragePool"):
        for v in VALUES:
            for attr, val in (("kernel_shape", [v, v]), ("pads", [v] * 4), ("strides", [v, v])):
                attrs = {"kernel_shape": [2, 2]}
                attrs[attr] = val
                for sym in (False, True):
                    x = ["N", 1, "H", "W"] if sym else [1, 1, 8, 8]
                    node = h.make_node(op, ["x"], ["y"], **attrs)
                    yield ("%s_%s_%s_%d" % (op, "sym" if sym else "fix", attr, v), [node], x, [],
                           [1, 1, 8, 8])
    for v in VALUES:
        b = weights("b", [2, 4])
        yield ("matmul_rows_%d" % v, [h.make_node("MatMul", ["x", "b"], ["y"])], [v, 2], [b],
               [v, 2])
        yield ("matmul_batch_%d" % v, [h.make_node("MatMul", ["x", "b"], ["y"])], [v, 3, 2], [b],
               [v, 3, 2])
        yield ("gemm_rows_%d" % v, [h.make_node("Gemm", ["x", "b"], ["y"])], [v, 2], [b], [v, 2])
    yield ("matmul_sym", [h.make_node("MatMul", ["x", "b"], ["y"])], ["M", 2],
           [weights("b", [2, 4])], [3, 2])


def clean(rc, err):
    if rc == 0:
        return True
    if rc != 1 or "internal error" in err:
        return False
    return any(c in err for c in CLEAN)


def main():
    cli = sys.argv[1]
    failures, loads, runs, n = [], 0, 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        yml = os.path.join(tmp, "opts.yaml")
        with open(yml, "w") as f:
            f.write("memory_limit: 1073741824\n")
        for name, nodes, x, inits, run in cases():
            n += 1
            path = os.path.join(tmp, name + ".onnx")
            model(path, nodes, x, inits)
            cmds = [[cli, "check", path]]
            small = int(np.prod([float(d) for d in run])) * 4 <= (64 << 20)
            for prec in ("fp32", "bf16"):
                if small:
                    cmds.append([cli, "run", path, "--backend", "onednn", "--precision", prec,
                                 "--options", yml, "--output-dir", tmp, "--shape",
                                 "x=" + ",".join(str(d) for d in run)])
                else:
                    cmds.append([cli, "info", path, "--opt-level", "3"])
            for cmd in cmds:
                try:
                    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
                except subprocess.TimeoutExpired:
                    failures.append("%s: %s timed out" % (name, cmd[1]))
                    continue
                if r.returncode < 0 or not clean(r.returncode, r.stderr):
                    failures.append("%s: %s exit %d: %s" % (name, " ".join(cmd[1:2] + cmd[3:7]),
                                                           r.returncode, r.stderr.strip()[-300:]))
                elif cmd[1] == "run":
                    runs += 1
                elif cmd[1] == "info":
                    loads += 1
    print("%d cases: %d runs, %d load-only, %d failures" % (n, runs, loads, len(failures)))
    for f in failures:
        print("FAIL", f)
    return 1 if failures or runs == 0 or loads == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
