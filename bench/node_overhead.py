#!/usr/bin/env python3
"""node_overhead.py — the executor's per-node overhead, next to ONNX Runtime's.

Writes (with the onnx package, into a temporary folder, never committed) a
chain of N tiny elementwise nodes, Add -> Relu -> Mul -> Add -> ... on a
float [1, 8] tensor (Add and Mul take a [1, 8] initializer), runs it with
build/bench/node_overhead (median over many runs of the calling thread's CPU
time per run, one thread) at opt_level 0 (every node kept) and 3 (the node count
after load is printed: the figure is per node that actually ran), and with
ONNX Runtime on the same file (one thread, sequential execution; graph
optimizations off and on), and prints ns per node = median run / nodes.

Two chain lengths (default 1000 and 1) separate the fixed per-run cost from
the per-node one: "marginal" = (t(1000) - t(1)) / 999.
ORT is timed from Python (InferenceSession.run, the calling thread's CPU
time), so its figure includes the binding's fixed per-run cost (a few us),
which the 1-node chain shows; its marginal figure does not.

usage: node_overhead.py [--bench PATH | --build DIR] [--lib-dir DIR]... [--nodes 1000,1]
                        [--iterations N] [--opt-levels 0,3] [--no-ort] [--json FILE]
--lib-dir runs the same program with another build's libmopt.so (it uses only
the public ABI); given twice (before, after), the two run back to back for each
configuration, so that both see the same machine load.
Needs onnx (and onnxruntime unless --no-ort); exits 77 (skipped) without onnx.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import chains

OPS = ["Add", "Relu", "Mul"]


def write_chain(path, n_nodes):
    """A chain of n_nodes ops cycling through OPS on a float [1, 8] tensor."""
    import numpy as np

    consts = {"Add": ("a", np.linspace(-0.25, 0.3, 8, dtype=np.float32).reshape(1, 8)),
              "Mul": ("m", np.linspace(0.6, 1.1, 8, dtype=np.float32).reshape(1, 8))}
    chains.write_chain(path, n_nodes, OPS, consts, f"chain{n_nodes}")


def run_mopt(bench, model, opt_level, iterations, lib_dir):
    cmd = [bench, model, "--opt-level", str(opt_level), "--threads", "1",
           "--iterations", str(iterations), "--warmup", str(max(10, iterations // 20)), "--json"]
    env = dict(os.environ)
    if lib_dir:  # the program's RUNPATH gives way to LD_LIBRARY_PATH
        env["LD_LIBRARY_PATH"] = os.path.abspath(lib_dir) + (
            ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"node_overhead.py: {' '.join(cmd)} failed:\n{r.stderr}")
    res = json.loads(r.stdout)
    return {"nodes": res["nodes"], "run_ns": res["run_cpu_ns"]["p50"],
            "wall_ns": res["run_wall_ns_p50"], "batch": res["batch"], "cmd": " ".join(cmd)}


def run_ort(model, optimize, iterations, n_nodes, tmp):
    import numpy as np
    import onnx
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimize
                                   else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    nodes = n_nodes
    if optimize:  # count the nodes ORT actually runs after its rewrites
        so.optimized_model_filepath = os.path.join(tmp, "ort_optimized.onnx")
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    if optimize:
        nodes = len(onnx.load(so.optimized_model_filepath).graph.node)
    feed = {"x": np.random.default_rng(0).uniform(-1, 1, (1, 8)).astype(np.float32)}
    sess.run(None, feed)
    w0 = time.perf_counter_ns()
    sess.run(None, feed)
    batch = max(1, int(1e5 / max(1, time.perf_counter_ns() - w0)) + 1)  # >= ~100 us a sample
    cpu, wall = [], []
    for k in range(max(10, iterations // 20) + iterations):
        c0, w0 = time.thread_time_ns(), time.perf_counter_ns()
        for _ in range(batch):
            sess.run(None, feed)
        w1, c1 = time.perf_counter_ns(), time.thread_time_ns()
        if k >= max(10, iterations // 20):
            cpu.append((c1 - c0) / batch)
            wall.append((w1 - w0) / batch)
    cpu.sort()
    wall.sort()
    return {"nodes": nodes, "run_ns": cpu[len(cpu) // 2], "wall_ns": wall[len(wall) // 2],
            "batch": batch, "ort_version": ort.__version__}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    chains.add_bench_args(ap, "node_overhead")
    ap.add_argument("--lib-dir", action="append", default=[],
                    help="run node_overhead with the libmopt.so of this folder (another build: "
                    "the program uses only the public ABI); repeat it to compare builds")
    ap.add_argument("--nodes", default="1000,1")
    ap.add_argument("--iterations", type=int, default=2000,
                    help="timed samples (each a batch of runs lasting >= ~100 us)")
    ap.add_argument("--opt-levels", default="0,3")
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    if not chains.have_onnx("node_overhead.py"):
        return 77
    bench = chains.find_bench(args, "node_overhead", "node_overhead.py")
    sizes, levels = chains.ints(args.nodes), chains.ints(args.opt_levels)
    libs = args.lib_dir or [None]
    rows = []
    with tempfile.TemporaryDirectory(prefix="mopt-node-overhead-") as tmp:
        for n in sizes:
            model = os.path.join(tmp, f"chain{n}.onnx")
            write_chain(model, n)
            for lvl in levels:
                for k, lib in enumerate(libs):  # builds back to back: the same machine load
                    r = run_mopt(bench, model, lvl, args.iterations, lib)
                    name = "libmopt" if len(libs) == 1 else f"libmopt[{k}]"
                    rows.append(dict(r, runtime=name, lib_dir=lib, config=f"opt_level {lvl}",
                                     chain=n))
            if not args.no_ort:
                for opt in (False, True):
                    r = run_ort(model, opt, args.iterations, n, tmp)
                    rows.append(dict(r, runtime="onnxruntime", chain=n,
                                     config="all optimizations" if opt else "no optimizations"))
    big, small = max(sizes), min(sizes)
    print(f"chain of Add/Relu/Mul on float [1, 8], 1 thread, median of {args.iterations} samples "
          f"of the calling thread's CPU time per run; {chains.cpu_model()}")
    if len(libs) > 1:
        for k, lib in enumerate(libs):
            print(f"libmopt[{k}] = {os.path.abspath(lib)}")
    print(f"{'runtime':12} {'config':18} {'chain':>6} {'nodes run':>9} {'median run':>12} "
          f"{'ns/node':>9} {'marginal ns/node':>17}")
    for r in rows:
        r["ns_per_node"] = r["run_ns"] / r["nodes"] if r["nodes"] else float("nan")
        r["marginal_ns_per_node"] = None
        if r["chain"] == big and big != small:
            s = next(x for x in rows if x["runtime"] == r["runtime"] and x["config"] == r["config"]
                     and x["chain"] == small)
            if r["nodes"] != s["nodes"]:
                r["marginal_ns_per_node"] = (r["run_ns"] - s["run_ns"]) / (r["nodes"] - s["nodes"])
    for r in rows:
        m = r["marginal_ns_per_node"]
        print(f"{r['runtime']:12} {r['config']:18} {r['chain']:>6} {r['nodes']:>9} "
              f"{r['run_ns'] / 1000:>9.2f} us {r['ns_per_node']:>9.1f} "
              f"{'' if m is None else f'{m:.1f}':>17}")
    print(f"command: {sys.executable} {' '.join(sys.argv)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu_model": chains.cpu_model(), "iterations": args.iterations,
                       "rows": rows}, f, indent=1)
    bad = [r for r in rows if r["runtime"].startswith("libmopt") and r["config"] == "opt_level 0"
           and r["nodes"] != r["chain"]]
    if bad:  # at opt_level 0 the chain must run as written, or the figure means nothing
        print(f"node_overhead.py: opt_level 0 ran {bad[0]['nodes']} nodes of a "
              f"{bad[0]['chain']}-node chain", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
