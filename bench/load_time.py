#!/usr/bin/env python3
"""load_time.py — how load time grows with the node count.

Writes (with the onnx package, into a temporary folder that is removed
afterwards; models are never committed) chains of N nodes on a float [1, 8]
tensor:
  identity  x -> Identity -> Identity -> ... -> y  (eliminated from opt_level 1)
  relu      x -> Relu -> Relu -> ... -> y          (every node kept)
  add       x -> Add(c) -> Add(c) -> ... -> y      (one shared [1, 8] constant)
and times, with build/bench/load_time (one process per measurement, one
thread), mopt_model_load + mopt_session_create + the first mopt_session_run
at every opt level. Prints a table of seconds per (chain, N, opt level), wall
and process CPU time (on a shared machine the CPU figure is the steadier),
and the CPU model; --json writes the rows too.

usage: load_time.py [--build DIR | --bench PATH] [--nodes 1000,10000,100000,1000000]
                    [--kinds identity,relu,add] [--opt-levels 0,1,2,3] [--json FILE]
Writing a 10^6-node chain with the onnx package takes ~20 s and ~40 MB.
Exits 77 (skipped) without the onnx package.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
KINDS = {"identity": "Identity", "relu": "Relu", "add": "Add"}


def write_chain(path, kind, n_nodes):
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper, save

    op = KINDS[kind]
    nodes = []
    prev = "x"
    for i in range(n_nodes):
        out = "y" if i == n_nodes - 1 else f"t{i}"
        ins = [prev, "c"] if op == "Add" else [prev]
        nodes.append(helper.make_node(op, ins, [out], name=f"n{i}"))
        prev = out
    inits = []
    if op == "Add":
        inits.append(numpy_helper.from_array(np.full((1, 8), 0.5, np.float32), "c"))
    graph = helper.make_graph(
        nodes, f"{kind}{n_nodes}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    save(model, path)


def find_bench(args):
    if args.bench:
        return args.bench
    for d in [args.build, os.path.join(REPO, "build")]:
        if d:
            p = os.path.join(d, "bench", "load_time")
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
    sys.exit("load_time.py: no load_time program (build it, or give --bench/--build)")


def cpu_model():
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break
                k, _, v = line.partition(":")
                info[k.strip()] = v.strip()
    except OSError:
        pass
    name = info.get("model name", "unknown")
    if "cpu family" in info and "model" in info:
        name += f" (family {info['cpu family']}, model {info['model']})"
    return name


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", help="the load_time program")
    ap.add_argument("--build", help="a build folder holding bench/load_time")
    ap.add_argument("--nodes", default="1000,10000,100000,1000000")
    ap.add_argument("--kinds", default="identity,relu,add")
    ap.add_argument("--opt-levels", default="0,1,2,3")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per measurement")
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args()
    try:
        import onnx  # noqa: F401
    except ImportError:
        print("load_time.py: the onnx package is not installed: skipped")
        return 77
    bench = find_bench(args)
    sizes = [int(n) for n in args.nodes.split(",")]
    kinds = args.kinds.split(",")
    for k in kinds:
        if k not in KINDS:
            sys.exit(f"load_time.py: unknown chain kind '{k}' (known: {', '.join(KINDS)})")
    levels = [int(v) for v in args.opt_levels.split(",")]
    rows = []
    print(f"load + session + first run: wall seconds (process CPU seconds), 1 thread; "
          f"{cpu_model()}; load average {os.getloadavg()[0]:.1f}")
    print(f"{'chain':9} {'nodes':>8} " + " ".join(f"{'O' + str(v):>15}" for v in levels)
          + "   nodes after O" + str(levels[-1]))
    with tempfile.TemporaryDirectory(prefix="mopt-load-time-") as tmp:
        for kind in kinds:
            for n in sizes:
                path = os.path.join(tmp, f"{kind}{n}.onnx")
                t0 = time.perf_counter()
                write_chain(path, kind, n)
                gen_s = time.perf_counter() - t0
                cells, after = [], None
                for lvl in levels:
                    cmd = [bench, path, "--opt-level", str(lvl), "--threads", "1"]
                    try:
                        r = subprocess.run(cmd, capture_output=True, text=True,
                                           timeout=args.timeout)
                    except subprocess.TimeoutExpired:
                        cells.append(f"{'>' + str(int(args.timeout)):>15}")
                        rows.append({"chain": kind, "nodes": n, "opt_level": lvl,
                                     "timeout_s": args.timeout})
                        continue
                    if r.returncode != 0:
                        sys.exit(f"load_time.py: {' '.join(cmd)} failed:\n{r.stderr}")
                    res = json.loads(r.stdout)
                    after = res["nodes_after"]
                    rows.append(dict(res, chain=kind, nodes=n, generate_s=gen_s))
                    cells.append(f"{res['total_s']:7.3f} ({res['total_cpu_s']:.3f})")
                print(f"{kind:9} {n:8d} " + " ".join(cells) + f"   {after}", flush=True)
                os.remove(path)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_model(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
