#!/usr/bin/env python3
"""hog_threads.py — 1 thread against 2 threads, with and without a CPU hog
(issue 10, "threads that hold up on a shared machine"). For each model, four
systems alternate round by round in one process: libmopt at 1 and 2 threads,
ONNX Runtime at 1 and 2 threads; first on the machine as it is, then with a
busy loop pinned by taskset to the last CPU (realmodels.py's hog).

    export MOPT_LIBRARY=$PWD/build/libmopt.so
    python3 bench/hog_threads.py --only silero --only "rec" --only "ResNet-18-like b8"
    python3 bench/hog_threads.py --only resnet --budget 20 --phase hog
    python3 bench/hog_threads.py --only rec --ort-spin   # ORT's default spinning

ONNX Runtime runs with its workers' spinning off unless --ort-spin: in the
alternation a spinning ORT pool takes a core from the next system's run
(PP-OCRv4 rec, libmopt 2t/1t p50 under the hog: 1.74 beside spinning ORT,
1.08-1.12 beside non-spinning ORT), and ORT itself is faster under the hog
without spinning, so its p99 is the stricter reference.

Models and feeds are realmodels.py's (the wheels cache, bench/genmodels.py).
Output: a markdown table (p50/p99 per system and phase; mopt 2t/1t p50 and
mopt 2t p99 / ORT 2t p99) printed and written to OUT/hog_threads.md, all
figures to OUT/hog_threads.json (OUT: build/bench-realmodels).
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import realmodels as R  # noqa: E402  (models, feeds, the hog)

compare = R.compare


def systems_for(path, feeds):
    systems = []
    for t in (1, 2):
        for s in compare.make_mopt_systems(path, [{}], t):
            s.label = "mopt %dt" % t
            systems.append(s)
    names = [o.name for o in systems[0].model.outputs]
    for t in (1, 2):
        o = compare.add_other_systems([], path, t, names, feeds, ort=True)
        for s in o:
            s.label = "ort %dt" % t
            systems.append(s)
    return systems


def one_phase(path, feeds, args):
    systems = systems_for(path, feeds)
    compare.measure(systems, feeds, args.warmup, None, args.budget, False,
                    min_iterations=args.min_rounds, hard_limit=args.hard_limit,
                    settle_ms=args.settle)
    out = {}
    for s in systems:
        if s.error or not s.samples_ms:
            out[s.label] = {"error": s.error or "no samples"}
        else:
            x = np.asarray(s.samples_ms)
            out[s.label] = {"p50": float(np.percentile(x, 50)), "p99": float(np.percentile(x, 99)),
                            "runs": int(x.size)}
        s.close()
    return out


def fmt(v):
    return "-" if v is None else "%.3f" % v


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", action="append", default=[],
                    help="models whose label contains this (repeatable; default: silero-vad, "
                         "PP-OCRv4 rec, ResNet-18-like b8)")
    ap.add_argument("--phase", action="append", choices=["quiet", "hog"], default=[],
                    help="phases to run (default both)")
    ap.add_argument("--budget", type=float, default=8.0, help="seconds of timed rounds per phase")
    ap.add_argument("--min-rounds", type=int, default=10)
    ap.add_argument("--hard-limit", type=float, default=40.0)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--out", default=str(R.REPO / "build" / "bench-realmodels"))
    ap.add_argument("--ort-spin", action="store_true",
                    help="ONNX Runtime's pool threads spin after each run, as by its default "
                         "(without this flag they do not: spinning, they take a core from the "
                         "next system's run in the alternation)")
    ap.add_argument("--settle", type=float, default=0.0, metavar="MS",
                    help="an untimed sleep after every timed run, whatever the system")
    args = ap.parse_args(argv)
    compare.ORT_NO_SPIN = not args.ort_spin
    only = args.only or ["silero", "PP-OCRv4 rec", "ResNet-18-like b8"]
    phases = args.phase or ["quiet", "hog"]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    entries = [e for e in R.SUITE if any(o.lower() in e.label.lower() for o in only)]
    members = sorted({e.member for e in entries if e.member})
    files, missing = R.wheel_files(members) if members else ({}, [])
    for m in missing:
        R.log("not downloaded: " + m)
    import onnxruntime as ort
    rows = []
    for e in entries:
        path = (R.genmodels.ensure(out / "models", e.generated) if e.generated
                else files.get(e.member))
        if path is None:
            continue
        names = [i.name for i in ort.InferenceSession(
            str(path), providers=["CPUExecutionProvider"]).get_inputs()]
        feeds = {k: np.require(v, requirements="C")
                 for k, v in e.feeds(R.RR.Context(files, ort, names)).items()}
        for phase in phases:
            hog = None
            if phase == "hog":
                hog, where = R.start_hog()
                if hog is None:
                    R.log("hog not started: %s" % where)
                    continue
            load = os.getloadavg()[0]
            t0 = time.time()
            try:
                res = one_phase(path, feeds, args)
            finally:
                if hog is not None:
                    R.stop_hog(hog)
            rows.append({"model": e.label, "shape": R.shape_text(feeds), "phase": phase,
                         "load1": load, "systems": res})
            R.log("%-26s %-5s %.1f s" % (e.label, phase, time.time() - t0))
    head = ["model", "phase", "load", "rounds", "mopt 1t p50", "mopt 1t p99", "mopt 2t p50",
            "mopt 2t p99", "ORT 1t p50", "ORT 1t p99", "ORT 2t p50", "ORT 2t p99",
            "mopt 2t/1t p50", "mopt 2t p99 / ORT 2t p99"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        s = r["systems"]
        g = {k: s.get(k, {}) for k in ("mopt 1t", "mopt 2t", "ort 1t", "ort 2t")}
        m1, m2 = g["mopt 1t"].get("p50"), g["mopt 2t"].get("p50")
        m2p99, o2p99 = g["mopt 2t"].get("p99"), g["ort 2t"].get("p99")
        lines.append("| " + " | ".join(
            [r["model"], r["phase"], "%.1f" % r["load1"], str(g["mopt 1t"].get("runs", "-"))] +
            [fmt(g[k].get(q)) for k in ("mopt 1t", "mopt 2t", "ort 1t", "ort 2t")
             for q in ("p50", "p99")] +
            ["%.2f" % (m2 / m1) if m1 and m2 else "-",
             "%.2f" % (m2p99 / o2p99) if m2p99 and o2p99 else "-"]) + " |")
    text = ("libmopt %s (%s), onnxruntime %s (spinning %s, %.1f ms settle after each run); "
            "latencies in ms; load = 1-min load average at the start of the phase.\n\n" % (
                compare.mopt.version(), compare.mopt.library_path, ort.__version__,
                "on" if args.ort_spin else "off", args.settle)) + "\n".join(lines) + "\n"
    (out / "hog_threads.md").write_text(text)
    with open(out / "hog_threads.json", "w") as fh:
        json.dump(rows, fh, indent=1)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
