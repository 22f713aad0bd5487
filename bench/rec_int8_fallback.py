#!/usr/bin/env python3
"""rec_int8_fallback.py — judge `mopt quantize-check` fallbacks on PP-OCRv4
rec (issue 13): for each options file (quantize-check's -o YAML) the argmax
agreement with our FP32 on tests/quant/test_ocr_rec_int8.py's golden (200 A
lines) and held-out (48 B lines) sets, and the CPU time of one line (the
real-model suite's rec input, 1 thread) against FP32, process CPU time,
medians of alternating rounds in one process (as bench/cputime.py).

    python3 bench/rec_int8_fallback.py BUILD_DIR OPTIONS.yaml... [--rounds 40] [--sel DIR]

--sel DIR adds the agreement on a quantize-check golden folder (set_*/x.npy).
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np
import yaml

SRC = Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("options", nargs="+")
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--sel", help="a quantize-check golden folder (set_*/x.npy)")
    args = ap.parse_args()
    import os
    os.environ.setdefault("MOPT_LIBRARY", str(Path(args.build).resolve() / "libmopt.so"))
    for p in ("bindings/python", "tests/quant", "tests/realmodels"):
        sys.path.insert(0, str(SRC / p))
    import mopt
    import ocr_lines
    import run_realmodels as R
    from models import WHEELS
    import inputs as I
    name, version, digest = next(w for w in WHEELS if w[0] == "rapidocr-onnxruntime")
    whl, why = R.fetch_wheel(R.cache_dir() / "wheels", name, version, digest)
    if whl is None:
        sys.exit("no rec model: %s" % why)
    model = R.unpack(whl, R.cache_dir() / "models" / ("%s-%s" % (name, version)))[
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx"]

    def lines_b(first, count):
        return [I.normalize(I.gray_to_rgb(I.text_image(I.rng(first + k), 48, 320, lines=1)),
                            [0.5] * 3, [0.5] * 3) for k in range(count)]

    def session(**opts):
        s = mopt.Session(mopt.Model(str(model), **opts), threads=1)
        return lambda x: next(iter(s.run({"x": x}).values()))

    def run_all(run, xs):
        return np.concatenate([run(np.stack(xs[i:i + 8])) for i in range(0, len(xs), 8)])

    sets = {"golden": ocr_lines.lines(SRC, 0, 200, seed=2), "held-out": lines_b(12, 48)}
    if args.sel:
        sets["sel"] = [a for d in sorted(Path(args.sel).glob("set_*"))
                       for a in np.load(d / "x.npy")]
    fp32 = session()
    ref = {k: run_all(fp32, v).argmax(-1) for k, v in sets.items()}
    cfgs = []
    for path in args.options:
        o = yaml.safe_load(Path(path).read_text())
        opts = {k: str(v) for k, v in o.items()}
        run = session(**opts)
        agree = {k: float(np.mean(run_all(run, v).argmax(-1) == ref[k])) for k, v in sets.items()}
        n_ex = len(o.get("int8_exclude", "").split(",")) if o.get("int8_exclude") else 0
        cfgs.append((path, n_ex, run, agree))
    x = lines_b(12, 1)[0][None]
    runs = [("fp32", fp32)] + [(c[0], c[2]) for c in cfgs]
    for _, r in runs:
        r(x), r(x)
    cpu = {k: [] for k, _ in runs}
    for _ in range(args.rounds):
        for k, r in runs:
            c0 = time.process_time()
            r(x)
            cpu[k].append(time.process_time() - c0)
    f = float(np.median(cpu["fp32"]))
    print("%d alternating rounds, 1 thread, FP32 %.2f ms CPU per line" % (args.rounds, f * 1e3))
    print("%-40s %-9s %-10s %s" % ("options", "vs FP32", "fallbacks", "  ".join(sets)))
    for path, n_ex, _, agree in cfgs:
        print("%-40s %-9s %-10d %s" % (path, "%.3fx" % (float(np.median(cpu[path])) / f), n_ex,
                                      "  ".join("%.4f" % agree[k] for k in sets)), flush=True)


if __name__ == "__main__":
    main()
