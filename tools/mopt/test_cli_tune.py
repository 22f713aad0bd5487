#!/usr/bin/env python3
"""test_cli_tune.py — end-to-end test of `mopt tune` (meson suite "cli").

1. The bundled BERT-like example (examples/models/bert_tiny.onnx) on
   generated token inputs, with a small time budget: exit 0; OUT holds
   model.mopt (loads and runs, same outputs as the winner's options on the
   ONNX within the budget), options.yaml (YAML mapping), report.md (every
   stage, a verdict for every candidate, the decision) and three PNG files
   whose signature, IHDR size and CRCs are valid, 960x600, and whose pixels
   (decompressed with zlib, an independent decoder) are not all white.
2. A model with a power-spectrum-like input (features from 1e3 down to
   1e-3): int8 quantization of its activations wipes out the small
   features (cosine ~0.6), bf16 keeps them. tune must not pick int8, and the
   report must say that int8 breaks the quality budget; static int8 from
   the calibration table tune writes (OUT/calibration.yaml) is not kept
   either.
3. --max-minutes 0.001: candidates are skipped and the report lists them.
4. Bad command lines exit 2.

usage: test_cli_tune.py MOPT_EXECUTABLE SOURCE_ROOT
"""
import os
import struct
import sys
import tempfile
import zlib

import numpy as np
import yaml
from onnx import TensorProto, helper, numpy_helper

from cli_check import ROOT, check, done, mopt, save_model

BERT = os.path.join(ROOT, "examples/models/bert_tiny.onnx")


def read_png(path):
    """(width, height, pixels as bytes) after checking chunks and CRCs."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "signature"
    pos, idat = 8, b""
    w = h = None
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        crc = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]
        assert zlib.crc32(typ + body) & 0xffffffff == crc, "crc of %s" % typ
        if typ == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype == 2, "8-bit RGB"
        elif typ == b"IDAT":
            idat += body
        pos += 12 + n
        if typ == b"IEND":
            break
    raw = zlib.decompress(idat)
    assert len(raw) == h * (3 * w + 1), "decompressed size"
    return w, h, raw


def check_pngs(out, what):
    for name in ("latency_cdf.png", "op_times.png", "quality_speed.png"):
        p = os.path.join(out, name)
        ok = os.path.isfile(p) and os.path.getsize(p) > 0
        check(ok, "%s: %s written" % (what, name))
        if not ok:
            continue
        try:
            w, h, raw = read_png(p)
            check((w, h) == (960, 600), "%s: %s is 960x600, got %dx%d" % (what, name, w, h))
            rows = [raw[y * (3 * w + 1) + 1:(y + 1) * (3 * w + 1)] for y in range(h)]
            dark = sum(1 for row in rows for b in row[::3] if b < 128)
            check(dark > 500, "%s: %s has drawing (%d dark pixels)" % (what, name, dark))
        except AssertionError as e:
            check(False, "%s: %s is not a valid PNG: %s" % (what, name, e))


def candidates(report):
    """{label: (verdict, why)} from the report's candidate table."""
    rows = {}
    part = report.split("## Candidates", 1)[-1].split("\n## ", 1)[0]
    for line in part.splitlines():
        f = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(f) >= 12 and f[0].isdigit():
            verdict, _, why = f[11].partition(":")
            rows[f[2]] = (verdict, why.strip(), f[10])
    return rows


with tempfile.TemporaryDirectory() as tmp:
    # ---- 1. the BERT-like example -------------------------------------------
    inputs = os.path.join(tmp, "bert_inputs")
    rng = np.random.default_rng(15)
    for k in range(3):
        d = os.path.join(inputs, "test_data_set_%d" % k)
        os.makedirs(d)
        np.save(os.path.join(d, "input_0.npy"), rng.integers(1, 1000, (1, 32), dtype=np.int64))
        np.save(os.path.join(d, "input_1.npy"), np.ones((1, 32), dtype=np.int64))
    out = os.path.join(tmp, "out_bert")
    r = mopt("tune", BERT, "--inputs", inputs, "--target", "p50", "--threads", "1",
             "--batch", "1,2", "--rounds", "3", "--runs", "5", "--max-minutes", "1", "-o", out)
    check(r.returncode == 0, "bert tune exits 0 (got %d)" % r.returncode, r)
    check("mopt tune:" in r.stdout, "bert tune prints its decision", r)
    check(all("\r" not in ln for ln in r.stderr.splitlines()),
          "no progress bar when stderr is not a terminal", r)
    for name in ("model.mopt", "options.yaml", "report.md", "quality.yaml"):
        p = os.path.join(out, name)
        check(os.path.isfile(p) and os.path.getsize(p) > 0, "bert: %s written" % name)
    check_pngs(out, "bert")
    report = open(os.path.join(out, "report.md")).read() if os.path.isfile(
        os.path.join(out, "report.md")) else ""
    for stage in ("opt_level", "precision", "backend", "threads", "batch"):
        check("### Stage: %s" % stage in report, "bert report has the %s stage" % stage)
    check("## Decision" in report and "## How it is judged" in report and "A/A" in report,
          "bert report explains the decision and the rule")
    rows = candidates(report)
    for label in ("baseline", "opt_level=2", "opt_level=1", "opt_level=0", "backend=cpu",
                  "precision=bf16", "precision=int8", "precision=int8 calibration",
                  "threads=1", "batch=2"):
        check(label in rows, "bert report has a row for %s (rows: %s)" % (label, list(rows)))
    verdicts = {v[0] for v in rows.values()}
    check(verdicts <= {"baseline", "kept", "dropped", "failed", "skipped"},
          "bert verdicts are known: %s" % verdicts)
    kept = [k for k, v in rows.items() if v[0] == "kept"]
    check(len(kept) <= 5, "kept candidates: at most one per stage: %s" % kept)
    for label, (verdict, why, q) in rows.items():
        if verdict == "dropped":
            check("noise" in why or "budget" in why or "was kept" in why,
                  "bert: dropped %s says why: %s" % (label, why))
    opts = yaml.safe_load(open(os.path.join(out, "options.yaml"))) if os.path.isfile(
        os.path.join(out, "options.yaml")) else None
    check(isinstance(opts, dict), "options.yaml is a YAML mapping: %r" % (opts,))
    # the winner's line in the report and options.yaml agree
    if isinstance(opts, dict) and opts:
        check(any("%s=%s" % (k, v) in report for k, v in opts.items()),
              "the report names the winner's settings %s" % opts)
    # model.mopt loads and runs, within the budget of the FP32 model
    mo = os.path.join(out, "model.mopt")
    r2 = mopt("compare", BERT, mo, "--golden", inputs, "--budget",
              os.path.join(out, "quality.yaml"))
    check(r2.returncode == 0, "model.mopt holds the budget against the ONNX model", r2)

    # ---- 2. int8 breaks the budget ------------------------------------------
    F, O = 64, 32
    srng = np.random.default_rng(3)
    scale = np.logspace(3, -3, F).astype(np.float32)
    W = np.zeros((F, O), np.float32)
    W[:F // 2, :O // 2] = srng.standard_normal((F // 2, O // 2)) / scale[:F // 2, None]
    W[F // 2:, O // 2:] = srng.standard_normal((F // 2, O // 2)) / scale[F // 2:, None]
    g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"])], "spectrum",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", F])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", O])],
                          [numpy_helper.from_array(W, "W")])
    spec = os.path.join(tmp, "spectrum.onnx")
    save_model(g, spec)
    golden = os.path.join(tmp, "spec_golden")
    for k in range(4):
        d = os.path.join(golden, "test_data_set_%d" % k)
        os.makedirs(d)
        x = (np.abs(srng.standard_normal((1, F))) * scale).astype(np.float32)
        np.save(os.path.join(d, "input_0.npy"), x)
        np.save(os.path.join(d, "output_0.npy"), (x.astype(np.float64) @ W).astype(np.float32))
    budget = os.path.join(tmp, "spec_budget.yaml")
    with open(budget, "w") as f:
        f.write("- metric: cosine\n  min: 0.999\n")
    out = os.path.join(tmp, "out_spec")
    r = mopt("tune", spec, "--inputs", golden, "--budget", budget, "--target", "throughput",
             "--rounds", "3", "--runs", "5", "--max-minutes", "1", "-o", out)
    check(r.returncode == 0, "spectrum tune exits 0 (got %d)" % r.returncode, r)
    report = open(os.path.join(out, "report.md")).read() if os.path.isfile(
        os.path.join(out, "report.md")) else ""
    rows = candidates(report)
    v = rows.get("precision=int8", ("?", "", ""))
    check(v[0] == "dropped" and "breaks the quality budget" in v[1] and "cosine worst" in v[1],
          "int8 is dropped for breaking the budget: %s" % (v,))
    check(v[2].startswith("BREAKS"), "int8's quality column says BREAKS: %s" % v[2])
    # static INT8 from the calibration table tune writes: the same failure
    v = rows.get("precision=int8 calibration", ("?", "", ""))
    check((v[0] == "dropped" and "breaks the quality budget" in v[1]) or v[0] == "failed",
          "static int8 (calibrated) is not kept: %s" % (v,))
    check(os.path.isfile(os.path.join(out, "calibration.yaml")),
          "the calibration table is written to OUT/calibration.yaml")
    check(rows.get("precision=bf16", ("", "", ""))[2].startswith("holds"),
          "bf16 holds the budget: %s" % (rows.get("precision=bf16"),))
    check("references: stored outputs" in report, "the stored references are used")
    opts = yaml.safe_load(open(os.path.join(out, "options.yaml"))) if os.path.isfile(
        os.path.join(out, "options.yaml")) else {}
    check(not opts or opts.get("precision") != "int8", "options.yaml does not pick int8: %s" % opts)
    check("precision=int8" not in report.split("## Decision", 1)[-1].split("##", 1)[0],
          "the decision is not int8")
    check("- #" in report.split("## Candidates that break the quality budget", 1)[-1],
          "the report lists int8 among the candidates that break the budget")
    check_pngs(out, "spectrum")

    # ---- 3. the time budget ------------------------------------------------
    out = os.path.join(tmp, "out_time")
    r = mopt("tune", spec, "--inputs", golden, "--target", "p95", "--rounds", "2", "--runs",
             "3", "--max-minutes", "0.0001", "-o", out)
    check(r.returncode == 0, "tiny time budget exits 0 (got %d)" % r.returncode, r)
    check("skipped (time budget)" in r.stdout, "the skipped candidates are printed", r)
    report = open(os.path.join(out, "report.md")).read() if os.path.isfile(
        os.path.join(out, "report.md")) else ""
    check("**Skipped** (time budget)" in report and "precision=int8" in report,
          "the report lists what was skipped")

    # ---- 4. bad command lines -----------------------------------------------
    for args in (["tune"], ["tune", spec, "--inputs", golden, "-o", out],
                 ["tune", spec, "--inputs", golden, "--target", "p42", "-o", out],
                 ["tune", spec, "--inputs", golden, "--target", "p50"],
                 ["tune", spec, "--inputs", golden, "--target", "p50", "--batch", "0", "-o", out],
                 ["tune", spec, "--target", "p50", "-o", out]):
        r = mopt(*args)
        check(r.returncode == 2, "%s exits 2 (got %d)" % (" ".join(args[2:]), r.returncode), r)

sys.exit(done("all mopt tune checks passed"))
