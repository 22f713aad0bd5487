#!/usr/bin/env python3
"""test_ocr_rec_int8.py — static INT8 of the real PP-OCRv4 recognizer
(ch_PP-OCRv4_rec_infer.onnx from the rapidocr-onnxruntime wheel of the
real-model suite, cached outside the repository; issue 13's CNN target).

Text lines (ocr_lines.py: sentences drawn with a 5x7 font, 48 x 320) make a
calibration set (32 lines), a selection set for `mopt quantize-check` (96
other lines) and a golden set (200 other lines); the metric is the
per-position argmax agreement with our FP32 (200 x 40 positions; ORT's FP32
agrees with ours at every position). `mopt calibrate` writes a table per
method and static INT8 (precision=int8, calibration=TABLE) runs it.
Issue 13's target is >= 99.5%; all-static misses it: the error builds up
over the LCNet backbone's 38 convolutions, no single layer breaks (`mopt
compare --per-layer` shows it). The depthwise convolutions' inputs have
channel ranges spread 7-19x (max/median): with one u8 scale per tensor
(97.7% minmax, 98.1% percentile) they got 25-31 dB SQNR against 41-49 dB
per channel; now the calibration table has per-channel ranges and they get
one scale per input channel (pass_quant_static.c): 98.4% minmax, 98.2%
percentile. The table's channel means (channel_mean) now correct each
Conv's bias for the mean error of its s8 weights, and the pointwise
convolutions' inputs are smoothed (SmoothQuant, alpha 0.75: one scale per
input channel folded into W): 98.89% minmax, 99.05% percentile, asserted
>= 98.5% both.
The quality budget then decides: `mopt quantize-check` (--rank output: each
of the 46 int8 nodes alone int8 on 32 of the lines, ranked by the noise it
puts on the output, then a bisection finds the fewest fallbacks) with
argmax mean >= 0.996 on the selection set (and the --margin below) must
finish and its options must hold >= 99.5% on the golden set; the test
prints how many nodes it kept int8 (--rank layers, one per-layer run of
all-int8, ranked the depthwise convolutions harmless: its subset held the
selection set and not the golden set). The same options saved in
a .mopt file (int8_exclude and int8_fallback) must give the same outputs.
Also checked: every Conv out of INT8 (FALLBACK_OP; int8_fallback fp32 and
bf16; the MatMuls stay static INT8) >= 99.5%. For scale: BF16 alone agrees
at 99.59%. Printed besides: entropy, dynamic INT8 (which leaves every Conv
FP32 and quantizes only the 8 MatMuls), and with --ort ONNX Runtime's
quantize_static (QDQ, per-channel s8 weights, u8 activations, the same 32
lines; MinMax and Percentile) measured the same way against ORT's FP32
(slow: minutes per method).
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
SKIP, BATCH, N_CALIB, N_SEL, N_GOLD = 77, 8, 32, 96, 200
# The per-layer fallback: the Convs (the LCNet backbone, 38 nodes) leave
# static INT8, the 8 MatMuls (the SVTR neck) keep it. No smaller set was
# found: a greedy search on 32 other lines (each node's exclusion ranked by
# the output error it removes) stayed at 0.983-0.991 up to 16 Convs; the
# error is spread over the backbone (`mopt compare --per-layer`: cosine
# falls step by step from the first block on).
FALLBACK_OP = "Conv"
# all-static floors (measured 0.9889 minmax, 0.9905 percentile with bias
# correction and smoothed pointwise inputs; 0.9840 / 0.9820 with per-channel
# depthwise inputs only; 0.9766 / 0.9811 with one scale per tensor)
FLOOR = {"minmax": 0.985, "percentile": 0.985}
# quantize-check's --margin: the relative slack the search requires on the
# selection set (argmax >= 0.996 * (1 + MARGIN))
MARGIN = "0"
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


def run_all(run, gold):
    return np.concatenate([run(b) for b in batches(gold)])


def agreement(ref, got):
    a, b = ref.argmax(-1), got.argmax(-1)
    nb = a != 0  # CTC blank is class 0
    return float(np.mean(a == b)), float(np.mean(a[nb] == b[nb])), int(nb.sum())


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
        calib = ocr_lines.lines(SRC, 120, N_CALIB, seed=1)
        gold = ocr_lines.lines(SRC, 0, N_GOLD, seed=2)
        cdir = tmp / "rec_calib"
        cdir.mkdir(exist_ok=True)
        for i, a in enumerate(calib):
            np.save(cdir / ("%02d.npy" % i), a[None])
        np.save(tmp / "rec_batch8.npy", np.stack(gold[:BATCH]))
        ref = run_all(mopt_run(model), gold)
        rows = []
        for method in ("minmax", "percentile", "entropy"):
            table = tmp / ("rec_%s.yaml" % method)
            r = subprocess.run([MOPT, "calibrate", str(model), "--inputs", str(cdir), "-o", str(table),
                                "--method", method], capture_output=True, text=True)
            check(r.returncode == 0, "mopt calibrate --method %s (%s)" % (method, r.stderr.strip()[-200:]))
            got = run_all(mopt_run(model, precision="int8", calibration=str(table)), gold)
            agr, agr_nb, n_nb = agreement(ref, got)
            rows.append(("mopt static int8", method, agr, agr_nb))
            what = "PP-OCRv4 rec, mopt static int8 (%s): argmax agreement %.4f (non-blank %d: %.4f)" % (
                method, agr, n_nb, agr_nb)
            if method != "entropy":
                floor = FLOOR[method]
                check(agr >= floor, what + " >= %g (target 0.995: see the fallback)" % floor)
            else:
                print("      " + what)
            if method == "minmax":
                import onnx
                fb = [n.name for n in onnx.load(str(model)).graph.node if n.op_type == FALLBACK_OP]
                for prec in ("fp32", "bf16"):
                    got = run_all(mopt_run(model, precision="int8", calibration=str(table),
                                           int8_exclude=",".join(fb), int8_fallback=prec), gold)
                    agr, agr_nb, _ = agreement(ref, got)
                    rows.append(("static, %d Convs %s" % (len(fb), prec), method, agr, agr_nb))
                    check(agr >= 0.995, "PP-OCRv4 rec, static int8 (minmax) with the %d Convs in %s, "
                          "MatMuls int8: argmax agreement %.4f >= 0.995 (non-blank %.4f)"
                          % (len(fb), prec.upper(), agr, agr_nb))
        # the quality budget decides which nodes leave INT8 (mopt quantize-check)
        sdir = tmp / "rec_select"
        for i, b in enumerate(batches(ocr_lines.lines(SRC, 240, N_SEL, seed=3))):
            (sdir / ("set_%02d" % i)).mkdir(parents=True, exist_ok=True)
            np.save(sdir / ("set_%02d" % i) / "x.npy", b)
        budget, opts = tmp / "rec_budget.yaml", tmp / "rec_fallback.yaml"
        budget.write_text("rules:\n  - metric: argmax\n    stat: mean\n    min: 0.996\n")
        t0 = time.time()
        r = subprocess.run([MOPT, "quantize-check", str(model), "--golden", str(sdir), "--budget",
                            str(budget), "--calibration", str(tmp / "rec_minmax.yaml"), "--runs", "0",
                            "--max-fallbacks", "46", "--margin", MARGIN, "--threads", "2", "-o",
                            str(opts)],
                           capture_output=True, text=True)
        qc_s = time.time() - t0
        print(r.stdout.split("fallback report:")[-1].rstrip())
        check(r.returncode == 0 and opts.exists(),
              "mopt quantize-check finds a fallback that holds argmax >= 0.996 on %d other lines "
              "in %.0f s (%s)" % (N_SEL, qc_s, r.stderr.strip()[-200:]))
        if opts.exists():
            import yaml
            o = yaml.safe_load(opts.read_text())
            ex = o.get("int8_exclude", "")
            kept = re.search(r"still int8: (\d+) of (\d+)", r.stdout)
            for prec in ("fp32", "bf16"):
                got = run_all(mopt_run(model, precision="int8", calibration=o["calibration"],
                                       int8_exclude=ex, int8_fallback=prec), gold)
                agr, agr_nb, _ = agreement(ref, got)
                rows.append(("budget: %s of %s int8, %s" % (kept.group(1), kept.group(2), prec),
                             "minmax", agr, agr_nb))
                what = ("PP-OCRv4 rec, static int8 with quantize-check's fallback (%s of %s nodes "
                        "int8, the rest %s): argmax agreement %.4f" % (kept.group(1), kept.group(2),
                                                                       prec.upper(), agr))
                if prec == "fp32":
                    check(agr >= 0.995, what + " >= 0.995")
                    fp32_out = got
                else:
                    print("      " + what)
            # the .mopt file keeps the fallback: same outputs as the options
            saved = tmp / "rec_fallback.mopt"
            r = subprocess.run([MOPT, "optimize", str(model), "--options", str(opts), "-o",
                                str(saved)], capture_output=True, text=True)
            check(r.returncode == 0, "mopt optimize with the fallback options (%s)" % r.stderr[-200:])
            if r.returncode == 0:
                got = run_all(mopt_run(saved), gold)
                check(np.array_equal(got, fp32_out), "the saved .mopt gives the same outputs "
                      "(max diff %g)" % float(np.abs(got - fp32_out).max()))
        dyn = run_all(mopt_run(model, precision="int8"), gold)
        agr, agr_nb, _ = agreement(ref, dyn)
        rows.append(("mopt dynamic int8", "-", agr, agr_nb))
        if "--ort" in sys.argv:
            so = ort.SessionOptions()
            so.intra_op_num_threads = 1
            s32 = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
            oref = run_all(lambda x: s32.run(None, {"x": x})[0], gold)
            agr, agr_nb, _ = agreement(ref, oref)
            rows.append(("ORT fp32 vs mopt fp32", "-", agr, agr_nb))
            for method in ("MinMax", "Percentile"):
                q = tmp / ("rec_ort_qdq_%s.onnx" % method.lower())
                t0 = time.time()
                ort_quantize(model, q, calib, method)
                sq = ort.InferenceSession(str(q), so, providers=["CPUExecutionProvider"])
                got = run_all(lambda x: sq.run(None, {"x": x})[0], gold)
                agr, agr_nb, _ = agreement(oref, got)
                rows.append(("ORT quantize_static QDQ", method, agr, agr_nb))
                print("      ORT quantize_static %s: %.1f s" % (method, time.time() - t0))
        print("\n%-26s %-11s %-16s %s" % ("PP-OCRv4 rec (200 lines)", "method", "argmax agreement",
                                         "non-blank positions"))
        for who, method, a, b in rows:
            print("%-26s %-11s %-16.4f %.4f" % (who, method, a, b))
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
