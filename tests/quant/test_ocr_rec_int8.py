#!/usr/bin/env python3
"""test_ocr_rec_int8.py — static INT8 of the real PP-OCRv4 recognizer
(ch_PP-OCRv4_rec_infer.onnx from the rapidocr-onnxruntime wheel of the
real-model suite, cached outside the repository; issue 13's CNN target).

Two renderers draw the text lines: ocr_lines.py (sentences in a 5x7 font,
48 x 320: "A") and tests/realmodels/inputs.py (text-like strokes, the
real-model suite's rec input: "B"). Disjoint splits, every choice made on
the first two and judged on the last two:
  calibration  32 A lines + 32 B lines (one folder, `mopt calibrate`)
  selection    96 A + 96 B other lines (`mopt quantize-check`'s golden set;
               8-line sets alternating A and B, FP32 outputs stored)
  golden       200 other A lines
  held-out     48 other B lines (seeds 12..59; 12 is the real-model suite's)
The metric is the per-position argmax agreement with our FP32 (x 40
positions; ORT's FP32 agrees with ours at every position), FP32 computed
once per set. `mopt calibrate` writes a table per method and static INT8
(precision=int8, calibration=TABLE) runs it.
Issue 13's target is >= 99.5%; all-static misses it on the golden set: the
error builds up over the LCNet backbone's 38 convolutions, no single layer
breaks (`mopt compare --per-layer`; quantizing all but one node moves the
selection set's agreement by <= 0.5% each). The depthwise convolutions'
inputs get one scale per input channel (channel ranges spread 7-19x) and
the table's channel means (`mopt calibrate --bias-correction`) correct each
Conv's bias for the mean error of its s8 weights. Per-channel ranges fit the calibration lines: calibrated on
A lines alone, B lines have channels up to 11x past A's range, and
all-static agreement on the held-out B lines was 0.958 (0.960 with one
scale per tensor); calibrated on both renderers it is 0.994 (held-out) with
0.989 (golden; minmax; percentile 0.988 golden, 0.992 held-out;
since static INT8 takes the convs' post affine, 0.987 golden, 0.994 held-out;
since the 14 depthwise convs and the 3 -> 16 stem stay FP32 by default, their
int8 form being slower, 0.9915 golden, 0.9948 held-out). Asserted: >= 98.5% on
both sets (tools/mopt/README.md has the table of what was tried; the
same figures on an Intel Xeon with VNNI; GPTQ-rounded weights fix the
weights alone, 0.981 -> 0.997, but not all-static INT8, 0.988: the u8
activations' noise is what is left).
The quality budget then decides: `mopt quantize-check --rank cost` (each
of the 31 int8 nodes (46 before the depthwise convs stayed FP32) alone int8 on 64 of the selection lines, 32 of each
renderer (--rank-sets 8): the noise it puts on the output, divided by the microseconds int8
saves on it, profiled on one line; nodes int8 does not speed up by 10% fall
back first, then a bisection finds the fewest fallbacks) with argmax mean
>= 0.995 on the 192 selection lines less 1.645 standard errors over their
24 sets (--confidence: a one-sided 95% lower bound, ~0.001 below the mean
here) must
finish, its options must hold >= 99.5% on both sets and run at most 0.95x
of FP32's CPU time (one line, 1 thread, alternating in this process).
History: --rank output (noise alone, no times) kept 22 of 46 nodes int8,
0.9976 golden / 0.9969 held-out, at 0.97x of FP32; --rank cost without the
bound (argmax >= 0.996 on the selection lines) chose 12 or 14 nodes in two
runs as its batch-8 profile moved, and 12 missed (0.9949 / 0.9948). The
profiler times wall clock, and on the loaded machine every node longer than
a time slice was preempted in every run (p2o.Conv.28 >= 95 ms at batch 8
against ~14 ms of CPU), so the heaviest (and noisiest) convs looked like
the largest savings; one line keeps the nodes short enough for the minimum
of 20 runs to see clean runs. With the bound on 96 selection lines (48 +
48, 12 sets: ~0.0016 below the mean) the search kept only 4 nodes int8
(0.9975 golden / 0.9984 held-out, 0.89x of FP32, the same 4 in two runs);
192 lines halve the variance, and it keeps 20-21 (three runs: 0.9958-
0.9961 golden, 0.9964-0.9969 held-out, 0.77x of FP32; 622 s for the whole
test at load 3-4, quantize-check 465 s). With the depthwise convs FP32 by
default (31 candidates): 21 of 31 int8, 0.9961 golden / 0.9969 held-out,
0.769x of FP32, 240-300 s for the whole test.
tools/mopt/README.md has the table.
(--rank layers, one per-layer run of all-int8, ranked the depthwise
convolutions harmless: its subset held the selection set and not the
golden set.) The same options saved in
a .mopt file (int8_exclude and int8_fallback) must give the same outputs.
Also checked: every Conv out of INT8 (FALLBACK_OP; int8_fallback fp32 and
bf16; the MatMuls stay static INT8) >= 99.5% on both sets. Printed besides:
entropy, BF16 alone (99.59% golden, 99.53% held-out: the scale of the
target), dynamic INT8 (which leaves every Conv FP32 and quantizes only the
8 MatMuls), and with --ort ONNX Runtime's quantize_static (QDQ, per-channel
s8 weights, u8 activations, the same 64 calibration lines; MinMax and
Percentile) measured the same way against ORT's FP32 (slow: minutes per
method).
Skipped (77) when the wheel is neither cached nor downloadable, or without
onnxruntime.

    python3 tests/quant/test_ocr_rec_int8.py BUILD_DIR SOURCE_DIR [--keep DIR] [--ort]
"""
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BUILD, SRC = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
os.environ.setdefault("MOPT_LIBRARY", str(BUILD / "libmopt.so"))
sys.path.insert(0, str(SRC / "bindings" / "python"))
sys.path.insert(0, str(SRC / "tests" / "quant"))
sys.path.insert(0, str(SRC / "tests" / "realmodels"))
import mopt  # noqa: E402
import ocr_lines  # noqa: E402

MOPT = str(BUILD / "tools" / "mopt" / "mopt")
MEMBER = "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx"
SKIP, BATCH, N_CALIB, N_SEL, N_GOLD, N_HELD = 77, 8, 32, 96, 200, 48
# The per-layer fallback: the Convs (the LCNet backbone, 38 nodes) leave
# static INT8, the 8 MatMuls (the SVTR neck) keep it. No smaller set was
# found: a greedy search on 32 other lines (each node's exclusion ranked by
# the output error it removes) stayed at 0.983-0.991 up to 16 Convs; the
# error is spread over the backbone (`mopt compare --per-layer`: cosine
# falls step by step from the first block on).
FALLBACK_OP = "Conv"
# all-static floors on both sets (measured golden / held-out: minmax 0.989 /
# 0.994, percentile 0.988 / 0.992 with both renderers calibrated and bias
# correction; main before: 0.984 / 0.958 minmax)
FLOOR = {"minmax": 0.985, "percentile": 0.985}
# quantize-check on the selection lines: --rank cost (the speed-aware order),
# budget argmax mean >= 0.995 (the target) with --confidence Z: the mean over
# the selection sets less Z standard errors must meet it (a one-sided lower
# confidence bound, so that a subset holding 96 lines by chance does not pass)
RANK, CONFIDENCE, TARGET = "cost", "1.645", 0.995
# the speed gain the fallback must keep: CPU time of one line against FP32
# (1 thread, alternating in this process, medians of SPEED_ROUNDS)
SPEED_MAX, SPEED_ROUNDS = 0.95, 30
failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures.append(what)


def rec_model():
    """The cached (or downloaded) recognizer, or None and why."""
    import run_realmodels as R
    from models import WHEELS
    name, version, digest = next(w for w in WHEELS if w[0] == "rapidocr-onnxruntime")
    cache = R.cache_dir()
    whl, why = R.fetch_wheel(cache / "wheels", name, version, digest)
    if whl is None:
        return None, why
    return R.unpack(whl, cache / "models" / ("%s-%s" % (name, version)))[MEMBER], None


def batches(xs):
    return [np.stack(xs[i:i + BATCH]) for i in range(0, len(xs), BATCH)]


def run_all(run, xs):
    return np.concatenate([run(b) for b in batches(xs)])


def agreement(ref, got):
    a, b = ref.argmax(-1), got.argmax(-1)
    nb = a != 0  # CTC blank is class 0
    return float(np.mean(a == b)), float(np.mean(a[nb] == b[nb])), int(nb.sum())


def lines_b(first_seed, count):
    """count lines of the real-model suite's renderer (tests/realmodels/
    inputs.py, as models.ocr_rec feeds rec), seeds first_seed.."""
    import inputs as I
    return [I.normalize(I.gray_to_rgb(I.text_image(I.rng(first_seed + k), 48, 320, lines=1)),
                        [0.5] * 3, [0.5] * 3) for k in range(count)]


class Sets:
    """The golden (A) and held-out (B) sets with their FP32 references,
    computed once; measure(run) -> {set: (agreement, non-blank, n)}."""
    NAMES = ("golden", "held-out")

    def __init__(self, model):
        self.x = {"golden": ocr_lines.lines(SRC, 0, N_GOLD, seed=2), "held-out": lines_b(12, N_HELD)}
        fp32 = mopt_run(model)
        self.ref = {k: run_all(fp32, v) for k, v in self.x.items()}

    def measure(self, run):
        return {k: agreement(self.ref[k], run_all(run, self.x[k])) for k in self.NAMES}


def derived_table(src, dst, method):
    """The table src (`mopt calibrate`'s) with the scale and zero point of
    another method's range: the table holds all three (`ranges`), so one
    calibration run serves every method (calibrate.c's quant_params; the
    --method flag itself is tested in test_quant.py)."""
    import yaml
    ranges = {k: v["ranges"][method] for k, v in yaml.safe_load(src.read_text())["tensors"].items()}
    out, name = [], None
    for line in src.read_text().splitlines():
        m = re.match(r'  "(.*)":$', line)
        name = m.group(1) if m else name
        lo, hi = (min(ranges[name][0], 0.0), max(ranges[name][1], 0.0)) if name else (0, 0)
        scale = (hi - lo) / 255 if hi > lo else 1.0
        if line.startswith("    scale:"):
            line = "    scale: %.9g" % scale
        elif line.startswith("    zero_point:"):
            line = "    zero_point: %d" % min(255, max(0, round(-lo / scale)))
        elif line.startswith("method:") or line.startswith("    method:"):
            line = line.split("method:")[0] + "method: " + method
        out.append(line)
    dst.write_text("\n".join(out) + "\n")


def mopt_run(model, **opts):
    m = mopt.Model(str(model), **opts)
    s = mopt.Session(m, threads=1)
    return lambda x: next(iter(s.run({"x": x}).values()))


def ort_quantize(src, dst, calib, method):
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat,
                                          QuantType, quantize_static)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"x": a[None]} for a in calib])

        def get_next(self):
            return next(self.it, None)
    quantize_static(str(src), str(dst), Reader(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, per_channel=True,
                    calibrate_method=getattr(CalibrationMethod, method))


def cpu_ratio(ref, run, x):
    """run's process CPU time on x over ref's, 1 thread, medians of
    SPEED_ROUNDS alternating rounds (as bench/cputime.py)."""
    for f in (ref, run):
        f(x), f(x)
    t = ([], [])
    for _ in range(SPEED_ROUNDS):
        for k, f in enumerate((ref, run)):
            c0 = time.process_time()
            f(x)
            t[k].append(time.process_time() - c0)
    return float(np.median(t[1]) / np.median(t[0]))


def fmt(m):
    return ", ".join("%s %.4f (non-blank %.4f)" % (k, m[k][0], m[k][1]) for k in Sets.NAMES)


def main():
    keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
    try:
        import onnxruntime as ort
    except ImportError as e:
        print("SKIPPED: needs onnxruntime (%s)" % e)
        return SKIP
    model, why = rec_model()
    if model is None:
        print("SKIPPED: rapidocr-onnxruntime wheel not cached and not downloadable: %s" % why)
        return SKIP
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(keep) if keep else Path(d)
        tmp.mkdir(parents=True, exist_ok=True)
        # calibration: both renderers (B seeds 5000.., selection 6000.., held-out 12..)
        calib = ocr_lines.lines(SRC, 120, N_CALIB, seed=1) + lines_b(5000, N_CALIB)
        cdir = tmp / "rec_calib"
        cdir.mkdir(exist_ok=True)
        for i, a in enumerate(calib):
            np.save(cdir / ("%02d.npy" % i), a[None])
        sets = Sets(model)
        np.save(tmp / "rec_batch8.npy", np.stack(sets.x["golden"][:BATCH]))
        rows = []
        for method in ("minmax", "percentile", "entropy"):
            table = tmp / ("rec_%s.yaml" % method)
            if method == "minmax":
                r = subprocess.run([MOPT, "calibrate", str(model), "--inputs", str(cdir), "-o",
                                    str(table), "--threads", "2", "--bias-correction"],
                                   capture_output=True, text=True)
                check(r.returncode == 0, "mopt calibrate --bias-correction (%s)"
                      % r.stderr.strip()[-200:])
            else:
                derived_table(tmp / "rec_minmax.yaml", table, method)
            m = sets.measure(mopt_run(model, precision="int8", calibration=str(table)))
            rows.append(("mopt static int8", method, m))
            what = "PP-OCRv4 rec, mopt static int8 (%s): argmax agreement %s" % (method, fmt(m))
            if method != "entropy":
                floor = FLOOR[method]
                check(all(m[k][0] >= floor for k in Sets.NAMES),
                      what + " >= %g on both (target 0.995: see the fallback)" % floor)
            else:
                print("      " + what)
            if method == "minmax":
                import onnx
                fb = [n.name for n in onnx.load(str(model)).graph.node if n.op_type == FALLBACK_OP]
                for prec in ("fp32", "bf16"):
                    m = sets.measure(mopt_run(model, precision="int8", calibration=str(table),
                                              int8_exclude=",".join(fb), int8_fallback=prec))
                    rows.append(("static, %d Convs %s" % (len(fb), prec), method, m))
                    check(all(m[k][0] >= 0.995 for k in Sets.NAMES),
                          "PP-OCRv4 rec, static int8 (minmax) with the %d Convs in %s, MatMuls int8: "
                          "argmax agreement %s >= 0.995" % (len(fb), prec.upper(), fmt(m)))
        # the quality budget decides which nodes leave INT8 (mopt quantize-check)
        # (A and B batches alternate, so --rank-sets 4 ranks on both renderers; the FP32
        # outputs are stored with the inputs, so compare runs only the int8 side)
        sdir = tmp / "rec_select"
        fp32 = mopt_run(model)
        sel_a = batches(ocr_lines.lines(SRC, 240, N_SEL, seed=3))
        sel_b = batches(lines_b(6000, N_SEL))
        sel = [b for ab in zip(sel_a, sel_b) for b in ab]
        for i, b in enumerate(sel):
            (sdir / ("set_%02d" % i)).mkdir(parents=True, exist_ok=True)
            np.save(sdir / ("set_%02d" % i) / "x.npy", b)
            np.save(sdir / ("set_%02d" % i) / "output_0.npy", fp32(b))
        budget, opts = tmp / "rec_budget.yaml", tmp / "rec_fallback.yaml"
        budget.write_text("rules:\n  - metric: argmax\n    stat: mean\n    min: %g\n" % TARGET)
        t0 = time.time()
        r = subprocess.run([MOPT, "quantize-check", str(model), "--golden", str(sdir), "--budget",
                            str(budget), "--calibration", str(tmp / "rec_minmax.yaml"), "--runs", "0",
                            "--max-fallbacks", "46", "--rank", RANK, "--rank-sets", "8",
                            "--confidence", CONFIDENCE,
                            "--threads", "1", "-o", str(opts)],
                           capture_output=True, text=True)
        qc_s = time.time() - t0
        if keep:
            (tmp / "rec_quantize_check.txt").write_text(r.stdout)
        print(r.stdout.split("fallback report:")[-1].rstrip())
        check(r.returncode == 0 and opts.exists(),
              "mopt quantize-check --rank %s finds a fallback whose argmax mean on %d other lines "
              "less %s standard errors is >= %g, in %.0f s (%s)"
              % (RANK, 8 * len(sel), CONFIDENCE, TARGET, qc_s, r.stderr.strip()[-200:]))
        if opts.exists():
            import yaml
            o = yaml.safe_load(opts.read_text())
            ex = o.get("int8_exclude", "")
            kept = re.search(r"still int8: (\d+) of (\d+)", r.stdout)
            for prec in ("fp32", "bf16"):
                run = mopt_run(model, precision="int8", calibration=o["calibration"], int8_exclude=ex,
                               int8_fallback=prec)
                m = sets.measure(run)
                rows.append(("budget: %s of %s int8, %s" % (kept.group(1), kept.group(2), prec),
                             "minmax", m))
                what = ("PP-OCRv4 rec, static int8 with quantize-check's fallback (%s of %s nodes "
                        "int8, the rest %s): argmax agreement %s" % (kept.group(1), kept.group(2),
                                                                     prec.upper(), fmt(m)))
                if prec == "fp32":
                    check(all(m[k][0] >= 0.995 for k in Sets.NAMES), what + " >= 0.995")
                    fp32_out = run_all(run, sets.x["golden"][:4 * BATCH])
                    ratio = cpu_ratio(fp32, run, lines_b(12, 1)[0][None])
                    check(ratio <= SPEED_MAX, "its CPU time is %.3fx of FP32 (one line, 1 thread, "
                          "medians of %d alternating rounds) <= %g"
                          % (ratio, SPEED_ROUNDS, SPEED_MAX))
                else:
                    print("      " + what)
            # the .mopt file keeps the fallback: same outputs as the options
            saved = tmp / "rec_fallback.mopt"
            r = subprocess.run([MOPT, "optimize", str(model), "--options", str(opts), "-o",
                                str(saved)], capture_output=True, text=True)
            check(r.returncode == 0, "mopt optimize with the fallback options (%s)" % r.stderr[-200:])
            if r.returncode == 0:
                got = run_all(mopt_run(saved), sets.x["golden"][:4 * BATCH])
                check(np.array_equal(got, fp32_out), "the saved .mopt gives the same outputs "
                      "(max diff %g)" % float(np.abs(got - fp32_out).max()))
        rows.append(("mopt dynamic int8", "-", sets.measure(mopt_run(model, precision="int8"))))
        rows.append(("mopt bf16", "-", sets.measure(mopt_run(model, precision="bf16"))))
        if "--ort" in sys.argv:
            so = ort.SessionOptions()
            so.intra_op_num_threads = 1
            s32 = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
            oref = {k: run_all(lambda x: s32.run(None, {"x": x})[0], v) for k, v in sets.x.items()}
            rows.append(("ORT fp32 vs mopt fp32", "-",
                         {k: agreement(sets.ref[k], oref[k]) for k in Sets.NAMES}))
            for method in ("MinMax", "Percentile"):
                q = tmp / ("rec_ort_qdq_%s.onnx" % method.lower())
                t0 = time.time()
                ort_quantize(model, q, calib, method)
                sq = ort.InferenceSession(str(q), so, providers=["CPUExecutionProvider"])
                rows.append(("ORT quantize_static QDQ", method,
                             {k: agreement(oref[k], run_all(lambda x: sq.run(None, {"x": x})[0], v))
                              for k, v in sets.x.items()}))
                print("      ORT quantize_static %s: %.1f s" % (method, time.time() - t0))
        print("\n%-26s %-11s %-22s %s" % ("PP-OCRv4 rec", "method", "golden (200 A lines)",
                                          "held-out (48 B lines)"))
        for who, method, m in rows:
            print("%-26s %-11s %-22s %.4f" % (who, method, "%.4f" % m["golden"][0], m["held-out"][0]))
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
