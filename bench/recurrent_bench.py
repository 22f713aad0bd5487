#!/usr/bin/env python3
"""recurrent_bench.py — LSTM/GRU latency: libmopt's reference kernels, its cpu
fast path (backend auto) and ONNX Runtime, one thread each.

Shapes are those of streaming speech models (silero-vad: an LSTM of hidden
64/128 over 64 features, batch 1), for sequence lengths 1..64, plus a GRU.
Models are written with onnx.helper into memory (never committed). libmopt
is timed by the session's own last_run_ns (median over the runs, so Python's
binding cost is left out); ORT from Python around InferenceSession.run
(median), which includes its binding's few-us fixed cost: its seq=1 figures
are upper bounds. Prints one line per case and the CPU model.

usage: MOPT_LIBRARY=build/libmopt.so python3 bench/recurrent_bench.py [--runs N]
"""
import argparse
import os
import sys
import time

import numpy as np
import onnx
from onnx import helper, TensorProto

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                                "python"))
import mopt  # noqa: E402


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def model(cell, I, H, seq):
    g = np.random.default_rng(7)
    G = {"LSTM": 4, "GRU": 3}[cell]
    W = (g.standard_normal((1, G * H, I)) * 0.1).astype(np.float32)
    R = (g.standard_normal((1, G * H, H)) * 0.1).astype(np.float32)
    B = (g.standard_normal((1, 2 * G * H)) * 0.1).astype(np.float32)
    inits = [onnx.numpy_helper.from_array(a, n) for a, n in ((W, "W"), (R, "R"), (B, "B"))]
    vi = helper.make_tensor_value_info
    ins = [vi("x", TensorProto.FLOAT, [seq, 1, I]), vi("h0", TensorProto.FLOAT, [1, 1, H])]
    outs = [vi("y", TensorProto.FLOAT, None), vi("hn", TensorProto.FLOAT, None)]
    node_in, node_out = ["x", "W", "R", "B", "", "h0"], ["y", "hn"]
    kw = {}
    if cell == "LSTM":
        ins.append(vi("c0", TensorProto.FLOAT, [1, 1, H]))
        outs.append(vi("cn", TensorProto.FLOAT, None))
        node_in.append("c0")
        node_out.append("cn")
    else:
        kw["linear_before_reset"] = 1  # what torch exports
    graph = helper.make_graph([helper.make_node(cell, node_in, node_out, hidden_size=H, **kw)],
                              "bench", ins, outs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    feeds = {"x": g.standard_normal((seq, 1, I)).astype(np.float32),
             "h0": np.zeros((1, 1, H), np.float32)}
    if cell == "LSTM":
        feeds["c0"] = np.zeros((1, 1, H), np.float32)
    return m.SerializeToString(), feeds


def time_mopt(data, feeds, backend, runs):
    with mopt.Model(data, backend=backend, threads=1) as m, m.session(threads=1) as s:
        out = s.run(feeds)
        ns = []
        for _ in range(runs):
            s.run(feeds)
            ns.append(s.stats()["last_run_ns"])
        return float(np.median(ns)) / 1e3, out


def time_ort(data, feeds, runs):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    s = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    out = s.run(None, feeds)
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        s.run(None, feeds)
        ts.append(time.perf_counter_ns() - t0)
    return float(np.median(ts)) / 1e3, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    a = ap.parse_args()
    print("CPU:", cpu_model())
    print(f"{'case':28s} {'ref us':>9s} {'fast us':>9s} {'ORT us':>9s} {'ref/fast':>9s} "
          f"{'ORT/fast':>9s} {'max|fast-ORT|':>14s}")
    cases = [("LSTM", 64, 64, s) for s in (1, 8, 64)] + \
            [("LSTM", 64, 128, s) for s in (1, 8, 64)] + \
            [("GRU", 64, 128, s) for s in (1, 64)]
    for cell, I, H, seq in cases:
        data, feeds = model(cell, I, H, seq)
        runs = a.runs if seq < 64 else max(a.runs // 4, 10)
        t_ref, _ = time_mopt(data, feeds, "ref", max(runs // 4, 10))
        t_fast, out = time_mopt(data, feeds, "auto", runs)
        t_ort, oo = time_ort(data, feeds, runs)
        err = max(float(np.abs(out[k] - v).max()) for k, v in zip(out, oo))
        print(f"{cell} I{I} H{H} seq{seq:<3d} b1{'':7s} {t_ref:9.1f} {t_fast:9.1f} {t_ort:9.1f} "
              f"{t_ref / t_fast:9.1f} {t_ort / t_fast:9.2f} {err:14.2e}")


if __name__ == "__main__":
    main()
