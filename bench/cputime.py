#!/usr/bin/env python3
"""cputime.py — the real-model suite (bench/realmodels.py's models and inputs)
timed by per-run CPU time instead of wall time: libmopt against ONNX Runtime
(and OpenVINO f32 with --openvino), 1 thread, alternating in one process.

On the shared 2-core machine, wall-clock p50s swing with the load (a model
that takes 6.5 ms of CPU can take 17-23 ms of wall time at load 15), and
both engines are descheduled at random. The process CPU time of one run
(time.process_time around run()) is what the run itself cost, so ratios of
its medians are stable to a few percent at any load. It does not see lost
parallelism, so use it for 1-thread comparisons only.

    python3 bench/cputime.py                     # every model, ORT column
    python3 bench/cputime.py det crnn --rounds 30
    MOPT_LIBRARY=/path/to/other/libmopt.so python3 bench/cputime.py   # A/B between builds
    python3 bench/cputime.py --encoders h256 --mopt-config precision=fp32 \
        --mopt-config precision=bf16 --mopt-config precision=int8 --openvino-default \
        --openvino-int8

--encoders times the BERT-like encoders of issue 11 (bench/genmodels.py
bert256 / bert768) instead of the suite. With several --mopt-config columns
(or --openvino-default) every column is printed with its ratio to ORT and
the cosine of its output against the first libmopt column.

--openvino-int8 adds OpenVINO on the same model quantized by ONNX Runtime's
quantize_static (QDQ, u8 activations, s8 per-channel weights, calibrated on
the benchmark's own inputs; written to OUT/qdq): OpenVINO's low-precision
transformations run it as int8, which the executable graph must confirm for
the weight-bearing layers (else the column is refused; MOPT_VERBOSE=1 lists
every such layer with its runtime precision). Its cosine is against the
first libmopt column too: give precision=fp32 first.

OpenVINO's worker threads spin after its runs and their CPU time lands on the
next run in the process: with --openvino every other column is inflated
(silero-vad 0.15 -> 0.5 ms), so compare against ORT without it.
"""
import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent / "tests" / "realmodels"))

import compare  # noqa: E402
import genmodels  # noqa: E402
import realmodels as R  # noqa: E402


def print_wide(label, rounds, med, first):
    """Every column of one model: CPU ms, ratio to ORT, cosine vs the first
    libmopt column's output. A libmopt column of another precision that is
    slower than its precision=fp32 column is flagged (issue 11: no precision
    may be slower than FP32 where it applies)."""
    ref = next(k for k in med if k.startswith("mopt"))
    ort = med.get("onnxruntime")
    fp32 = next((v for k, v in med.items() if k.startswith("mopt") and "precision=fp32" in k), None)
    print("%s, %d rounds (CPU ms per run, median)" % (label, rounds))
    for k, v in med.items():
        cos = min(compare.difference(a, b)["cosine"] for a, b in zip(first[k], first[ref]))
        slower = (fp32 is not None and k.startswith("mopt") and "precision=" in k
                  and "precision=fp32" not in k and v > fp32)
        print("  %-34s %9.3f  x ORT %s  cosine vs %s %.6f%s"
              % (k, v, "%.3f" % (v / ort) if ort else "-", ref, cos,
                 "  SLOWER THAN FP32 (x%.2f)" % (v / fp32) if slower else ""), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("only", nargs="*", help="models whose label contains one of these")
    ap.add_argument("--rounds", type=int, default=15, help="minimum alternating rounds (15)")
    ap.add_argument("--budget", type=float, default=1.0,
                    help="seconds of rounds per model beyond the minimum (1, at most 200 rounds)")
    ap.add_argument("--openvino", action="store_true", help="add OpenVINO f32 (see above)")
    ap.add_argument("--openvino-default", action="store_true",
                    help="add OpenVINO at its default precision (bf16 on AVX512-BF16 CPUs)")
    ap.add_argument("--openvino-int8", action="store_true",
                    help="add OpenVINO on the model quantized by ORT's quantize_static (QDQ, "
                         "calibrated on the benchmark's inputs; compare.py qdq_quantize): its exec "
                         "graph must run the weight-bearing layers u8/i8, else it is refused")
    ap.add_argument("--mopt-config", action="append", default=[], metavar="K=V,K=V",
                    help="a libmopt column (repeatable; default one with no options)")
    ap.add_argument("--encoders", action="store_true",
                    help="the BERT-like encoders (realmodels.ENCODERS) instead of the suite")
    ap.add_argument("--out", default=str(BENCH.parent / "build" / "bench-realmodels"),
                    help="folder of the generated models (as realmodels.py)")
    args = ap.parse_args(argv)
    only = [o.lower() for o in args.only]
    configs = [compare.parse_kv_list(c, "--mopt-config") for c in args.mopt_config] or [{}]
    wide = len(configs) > 1 or args.openvino_default or args.openvino_int8
    entries = [e for e in (R.ENCODERS if args.encoders else R.SUITE) if not only or any(o in e.label.lower() for o in only)]
    files, missing = R.wheel_files(sorted({e.member for e in entries if e.member}))
    for m in missing:
        print("not downloaded: " + m)
    import onnxruntime as ort
    rows = []
    for e in entries:
        if e.generated:
            path = genmodels.ensure(Path(args.out) / "models", e.generated)
        elif e.member in files:
            path = files[e.member]
        else:
            continue
        names = [i.name for i in ort.InferenceSession(
            str(path), providers=["CPUExecutionProvider"]).get_inputs()]
        feeds = {k: np.require(v, requirements="C")
                 for k, v in e.feeds(R.RR.Context(files, ort, names)).items()}
        systems = compare.make_mopt_systems(path, configs, 1)
        if systems[0].error:
            print("%-28s libmopt failed: %s" % (e.label, systems[0].error))
            continue
        outs = [o.name for o in systems[0].model.outputs]
        systems = compare.add_other_systems(
            systems, path, 1, outs, feeds, ort=True,
            openvino=args.openvino or args.openvino_default,
            openvino_int8=Path(args.out) / "qdq" if args.openvino_int8 else None)
        for s in systems:
            if s.error is not None and s.kind == "openvino-int8":
                print("%-28s %s refused: %s" % (e.label, s.label, s.error))
        systems = [s for s in systems if s.error is None and (
            args.openvino or not s.label.startswith("openvino[f32")) and (
            args.openvino_default or not s.label.startswith("openvino[default"))]
        first = {}
        for s in systems:
            first[s.label] = s.run(feeds)
            s.run(feeds)
        cpu = {s.label: [] for s in systems}
        end, i = time.time() + args.budget, 0
        while i < args.rounds or (time.time() < end and i < 200):
            for s in systems:
                c0 = time.process_time()
                s.run(feeds)
                cpu[s.label].append((time.process_time() - c0) * 1e3)
            i += 1
        med = {k: float(np.median(v)) for k, v in cpu.items()}
        if wide:
            print_wide(e.label, i, med, first)
        m = next(k for k in med if k.startswith("mopt"))
        row = {"model": e.label, "mopt": med[m], "ort": med.get("onnxruntime"),
               "ov": med.get("openvino[f32]")}
        rows.append(row)
        print("%-28s %3d rounds, CPU ms per run (median): mopt %9.3f  ORT %9.3f%s  mopt/ORT %.2f%s"
              % (e.label, i, row["mopt"], row["ort"],
                 "  OV f32 %9.3f" % row["ov"] if row["ov"] else "", row["mopt"] / row["ort"],
                 "  mopt/OV %.2f" % (row["mopt"] / row["ov"]) if row["ov"] else ""), flush=True)
        for s in systems:
            s.close()
    if rows:
        g = math.exp(sum(math.log(r["mopt"] / r["ort"]) for r in rows) / len(rows))
        print("geometric mean mopt/ORT over %d models: %.3f" % (len(rows), g))
    return 0 if rows else 77


if __name__ == "__main__":
    sys.exit(main())
