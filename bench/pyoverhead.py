#!/usr/bin/env python3
"""pyoverhead.py — the fixed per-run cost of the Python binding (Session.run)
on a tiny model, by process CPU time, next to ONNX Runtime's on the same model.

The model (built in memory with onnx.helper) is one Add of two [1, 16] float
inputs: the library's own work is well under a microsecond, so what is timed
is the binding's path (feeds -> tensors -> mopt_session_run_v2 -> numpy).

    MOPT_LIBRARY=$PWD/build/libmopt.so .venv/bin/python bench/pyoverhead.py
    .venv/bin/python bench/pyoverhead.py --runs 20000 --profile   # + cProfile
"""
import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bindings" / "python"))

import mopt  # noqa: E402


def tiny_model():
    """Bytes of an ONNX model: out = x + y, all float [1, 16]."""
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 16])
    graph = helper.make_graph([helper.make_node("Add", ["x", "y"], ["out"])], "tiny", [x, y],
                              [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def per_run_us(fn, runs, repeats):
    """Median over repeats of the process CPU time of `runs` calls, in µs per call."""
    best = []
    for _ in range(repeats):
        c0 = time.process_time()
        for _ in range(runs):
            fn()
        best.append((time.process_time() - c0) / runs * 1e6)
    return float(np.median(best))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=10000, help="calls per repeat (10000)")
    ap.add_argument("--repeats", type=int, default=5, help="repeats, median reported (5)")
    ap.add_argument("--no-ort", action="store_true", help="skip ONNX Runtime")
    ap.add_argument("--profile", action="store_true", help="print a cProfile of Session.run")
    args = ap.parse_args(argv)
    data = tiny_model()
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal((1, 16), dtype=np.float32),
             "y": rng.standard_normal((1, 16), dtype=np.float32)}
    model = mopt.Model(data)
    sess = mopt.Session(model, threads=1)
    got = sess.run(feeds)["out"]
    np.testing.assert_allclose(got, feeds["x"] + feeds["y"], rtol=1e-6)
    print("library: %s" % mopt.library_path)
    us = per_run_us(lambda: sess.run(feeds), args.runs, args.repeats)
    print("mopt Session.run        %7.2f us CPU per run (median of %d x %d)"
          % (us, args.repeats, args.runs))
    out = {"out": np.empty((1, 16), np.float32)}
    us = per_run_us(lambda: sess.run_into(feeds, out), args.runs, args.repeats)
    print("mopt Session.run_into   %7.2f us CPU per run" % us)
    if not args.no_ort:
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        osess = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        us = per_run_us(lambda: osess.run(["out"], feeds), args.runs, args.repeats)
        print("onnxruntime run         %7.2f us CPU per run" % us)
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.runs):
            sess.run(feeds)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    sess.close()
    model.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
