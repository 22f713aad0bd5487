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

import chains

KINDS = {"identity": "Identity", "relu": "Relu", "add": "Add"}


def write_chain(path, kind, n_nodes):
    import numpy as np

    op = KINDS[kind]
    consts = {"Add": ("c", np.full((1, 8), 0.5, np.float32))}
    chains.write_chain(path, n_nodes, [op], consts, f"{kind}{n_nodes}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    chains.add_bench_args(ap, "load_time")
    ap.add_argument("--nodes", default="1000,10000,100000,1000000")
    ap.add_argument("--kinds", default="identity,relu,add")
    ap.add_argument("--opt-levels", default="0,1,2,3")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per measurement")
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args()
    if not chains.have_onnx("load_time.py"):
        return 77
    bench = chains.find_bench(args, "load_time", "load_time.py")
    sizes = chains.ints(args.nodes)
    kinds = args.kinds.split(",")
    for k in kinds:
        if k not in KINDS:
            sys.exit(f"load_time.py: unknown chain kind '{k}' (known: {', '.join(KINDS)})")
    levels = chains.ints(args.opt_levels)
    rows = []
    print(f"load + session + first run: wall seconds (process CPU seconds), 1 thread; "
          f"{chains.cpu_model()}; load average {os.getloadavg()[0]:.1f}")
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
            json.dump({"cpu": chains.cpu_model(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
