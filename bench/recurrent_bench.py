#!/usr/bin/env python3
"""recurrent_bench.py — LSTM/GRU/RNN cost: libmopt's reference kernels, its cpu
fast path (backend auto) and ONNX Runtime, one thread each.

Shapes: the ddddocr CRNN's bidirectional LSTM (input = hidden = 512, 20
steps), streaming speech models (hidden 64/128 over 64 features, batch 1),
a GRU as torch exports it (linear_before_reset=1), a bidirectional RNN and a
batch-8 LSTM. Models are written with onnx.helper into memory (never
committed). Each run is timed by the process CPU time around it (median;
the machine is shared and wall time swings with the load), libmopt and ORT
alternating in one process on the same inputs, so both include their Python
binding's fixed cost. Prints one line per case and the CPU model.

usage: python3 bench/recurrent_bench.py [--runs N] [--only SUBSTRING]
       MOPT_LIBRARY=/other/libmopt.so python3 bench/recurrent_bench.py   # A/B between builds
"""
import argparse
import os
import sys
import time

import numpy as np
import onnx
from onnx import helper, TensorProto

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings",
                                "python"))
import mopt  # noqa: E402

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def model(cell, I, H, seq, direction="forward", batch=1):
    g = np.random.default_rng(7)
    G, D = GATES[cell], 2 if direction == "bidirectional" else 1
    W = (g.standard_normal((D, G * H, I)) * 0.1).astype(np.float32)
    R = (g.standard_normal((D, G * H, H)) * 0.1).astype(np.float32)
    B = (g.standard_normal((D, 2 * G * H)) * 0.1).astype(np.float32)
    inits = [onnx.numpy_helper.from_array(a, n) for a, n in ((W, "W"), (R, "R"), (B, "B"))]
    vi = helper.make_tensor_value_info
    ins = [vi("x", TensorProto.FLOAT, [seq, batch, I]), vi("h0", TensorProto.FLOAT, [D, batch, H])]
    outs = [vi("y", TensorProto.FLOAT, None), vi("hn", TensorProto.FLOAT, None)]
    node_in, node_out = ["x", "W", "R", "B", "", "h0"], ["y", "hn"]
    kw = {"direction": direction}
    if cell == "LSTM":
        ins.append(vi("c0", TensorProto.FLOAT, [D, batch, H]))
        outs.append(vi("cn", TensorProto.FLOAT, None))
        node_in.append("c0")
        node_out.append("cn")
    elif cell == "GRU":
        kw["linear_before_reset"] = 1  # what torch exports
    graph = helper.make_graph([helper.make_node(cell, node_in, node_out, hidden_size=H, **kw)],
                              "bench", ins, outs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    feeds = {"x": g.standard_normal((seq, batch, I)).astype(np.float32),
             "h0": (g.standard_normal((D, batch, H)) * 0.5).astype(np.float32)}
    if cell == "LSTM":
        feeds["c0"] = (g.standard_normal((D, batch, H)) * 0.5).astype(np.float32)
    return m.SerializeToString(), feeds


def cpu_ms(fn):
    c0 = time.process_time()
    fn()
    return (time.process_time() - c0) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100, help="alternating rounds per case (100)")
    ap.add_argument("--only", default="", help="cases whose name contains this")
    a = ap.parse_args()
    import onnxruntime as ort
    print("CPU:", cpu_model())
    print(f"{'case':36s} {'ref ms':>9s} {'fast ms':>9s} {'ORT ms':>9s} {'ref/fast':>9s} "
          f"{'fast/ORT':>9s} {'max|fast-ORT|':>14s}")
    cases = [("LSTM", 512, 512, 20, "bidirectional", 1),  # ddddocr CRNN
             ("LSTM", 64, 64, 64, "forward", 1), ("LSTM", 64, 128, 64, "forward", 1),
             ("LSTM", 64, 128, 1, "forward", 1), ("LSTM", 128, 256, 32, "forward", 8),
             ("GRU", 64, 128, 64, "forward", 1), ("GRU", 256, 256, 50, "reverse", 1),
             ("RNN", 128, 300, 40, "bidirectional", 1)]
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    for cell, I, H, seq, direction, batch in cases:
        name = f"{cell} I{I} H{H} T{seq} {direction[:5]} b{batch}"
        if a.only not in name:
            continue
        data, feeds = model(cell, I, H, seq, direction, batch)
        o = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        with mopt.Model(data, backend="ref", threads=1) as mr, mr.session(threads=1) as sr, \
                mopt.Model(data, threads=1) as mf, mf.session(threads=1) as sf:
            out, oo = sf.run(feeds), o.run(None, feeds)
            sr.run(feeds)
            err = max(float(np.abs(np.asarray(out[k]) - v).max()) for k, v in zip(out, oo))
            t = {"ref": [], "fast": [], "ort": []}
            for i in range(a.runs):
                if i % 4 == 0:  # the reference is slow: every 4th round
                    t["ref"].append(cpu_ms(lambda: sr.run(feeds)))
                t["fast"].append(cpu_ms(lambda: sf.run(feeds)))
                t["ort"].append(cpu_ms(lambda: o.run(None, feeds)))
        m = {k: float(np.median(v)) for k, v in t.items()}
        print(f"{name:36s} {m['ref']:9.3f} {m['fast']:9.3f} {m['ort']:9.3f} "
              f"{m['ref'] / m['fast']:9.1f} {m['fast'] / m['ort']:9.2f} {err:14.2e}", flush=True)


if __name__ == "__main__":
    main()
