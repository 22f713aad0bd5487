#!/usr/bin/env python3
"""check_realmodels.py — the real-model benchmark suite's code path, untimed:
bench/realmodels.py --tiny runs the tiny generated MobileNetV3-like model
through every system at 1 and 2 threads with one round each, and this checks
that realmodels.md has every column filled (p50s, ratios, max abs
differences), a geometric-mean row per thread count, outputs that agree with
ONNX Runtime, and that realmodels.json holds the same rows. The OpenVINO
columns are required unless `import openvino` fails here. It also checks the
structure of the generated 224x224 benchmark CNNs (bench/genmodels.py, built
in memory): ResNet-18's convolutions and stride-2 projections, MobileNetV3's
depthwise convolutions, squeeze-excitation and HardSwish, and that ONNX
Runtime runs them at batch 1 and 8.

    check_realmodels.py SOURCE_ROOT OUT_DIR     (MOPT_LIBRARY names libmopt.so)
"""
import json
import math
import subprocess
import sys
from pathlib import Path

EXPECTED_HEAD = ["model", "shape", "thr", "mopt p50 ms", "ORT p50 ms", "OV f32 p50 ms",
                 "OV default p50 ms", "mopt/ORT", "mopt/OV f32", "mopt/OV def",
                 "max abs mopt", "max abs OV f32", "max abs OV def"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def number(text, what):
    try:
        v = float(text.strip("*"))
    except ValueError:
        fail("%s: '%s' is not a number" % (what, text))
    if not math.isfinite(v):
        fail("%s: %s is not finite" % (what, text))
    return v


def check_generated(root):
    sys.path.insert(0, str(root / "bench"))
    import numpy as np
    import onnx
    import onnxruntime as ort
    import genmodels

    def attr(n, name, default=None):
        return next((onnx.helper.get_attribute_value(a) for a in n.attribute if a.name == name),
                    default)

    for name, want in (("resnet18_like", {"Conv": 20, "Add": 8, "MaxPool": 1, "Gemm": 1}),
                       ("mobilenetv3_like", {"HardSwish": 21, "HardSigmoid": 8, "Mul": 8})):
        m = genmodels.GENERATORS[name]()
        nodes = m.graph.node
        counts = {op: sum(1 for n in nodes if n.op_type == op) for op in want}
        if counts != want:
            fail("%s: op counts %s, want %s" % (name, counts, want))
        inits = {i.name: i for i in m.graph.initializer}
        convs = [n for n in nodes if n.op_type == "Conv"]
        if name == "resnet18_like":
            proj = [n for n in convs if attr(n, "kernel_shape") == [1, 1]
                    and attr(n, "strides") == [2, 2]]
            if len(proj) != 3:
                fail("resnet18_like: %d stride-2 1x1 projections, want 3" % len(proj))
        else:
            dw = [n for n in convs if attr(n, "group", 1) > 1
                  and attr(n, "group") == inits[n.input[1]].dims[0]
                  and inits[n.input[1]].dims[1] == 1]
            if len(dw) != 15 or sum(1 for n in dw if attr(n, "strides") == [2, 2]) != 4:
                fail("mobilenetv3_like: %d depthwise convs (want 15, 4 of them stride 2)"
                     % len(dw))
        sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        for batch in (1, 8):
            x = np.random.default_rng(batch).standard_normal((batch, 3, 224, 224))
            y = sess.run(None, {"input": x.astype(np.float32)})[0]
            if y.shape != (batch, 1000) or not np.all(np.isfinite(y)) or float(np.std(y)) <= 0:
                fail("%s batch %d: output %s, finite %s" % (name, batch, y.shape,
                                                           np.all(np.isfinite(y))))
    print("ok: generated ResNet-18-like and MobileNetV3-like structure, ORT at batch 1 and 8")
    # the BERT-like encoder (bert256's generator at a small size): 4 layers of
    # 6 MatMul + bias, Softmax, erf GELU, LayerNorms; ORT runs it finite
    m = genmodels.bert_encoder(hidden=64, heads=2, ffn=128, layers=4, max_pos=32)
    ops = [n.op_type for n in m.graph.node]
    want = {"MatMul": 4 * 6 + 4 * 2, "Softmax": 4, "Erf": 4, "LayerNormalization": 1 + 4 * 2}
    counts = {op: ops.count(op) for op in want}
    if counts != want:
        fail("bert_encoder: op counts %s, want %s" % (counts, want))
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    ids = np.random.default_rng(3).integers(0, 1000, (2, 32), dtype=np.int64)
    y = sess.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0]
    if y.shape != (2, 32, 64) or not np.all(np.isfinite(y)) or float(np.std(y)) <= 0:
        fail("bert_encoder: output %s, finite %s" % (y.shape, np.all(np.isfinite(y))))
    print("ok: generated BERT-like encoder structure, ORT at batch 2 seq 32")


def main():
    root, out = Path(sys.argv[1]), Path(sys.argv[2])
    check_generated(root)
    try:
        import openvino  # noqa: F401
        have_ov = True
    except ImportError as e:
        print("note: openvino is not importable (%s): its columns are not checked" % e)
        have_ov = False
    md = out / "realmodels.md"
    if md.exists():
        md.unlink()
    r = subprocess.run([sys.executable, str(root / "bench" / "realmodels.py"), "--tiny",
                        "--iterations", "1", "--no-hog", "--out", str(out)],
                       capture_output=True, text=True, timeout=600)
    sys.stdout.write(r.stdout[-3000:])
    sys.stderr.write(r.stderr[-3000:])
    if r.returncode != 0:
        fail("realmodels.py exited with %d" % r.returncode)
    if not md.is_file():
        fail("realmodels.py wrote no %s" % md)
    lines = [ln for ln in md.read_text().splitlines() if ln.startswith("|")]
    if not lines or cells(lines[0]) != EXPECTED_HEAD:
        fail("table head %s, want %s" % (cells(lines[0]) if lines else None, EXPECTED_HEAD))
    body = [cells(ln) for ln in lines[2:]]
    rows = [c for c in body if not c[0].startswith("**")]
    geo = [c for c in body if c[0].startswith("**geometric mean")]
    if sorted(int(c[2]) for c in rows) != [1, 2]:
        fail("want one row per thread count (1, 2), got %s" % [c[2] for c in rows])
    if sorted(int(c[2]) for c in geo) != [1, 2]:
        fail("want a geometric-mean row per thread count, got %s" % [c[2] for c in geo])
    ov_cols = {"OV f32 p50 ms", "OV default p50 ms", "mopt/OV f32", "mopt/OV def",
               "max abs OV f32", "max abs OV def"}
    for c in rows:
        if c[1] != "2x3x32x32":
            fail("shape column %s, want 2x3x32x32" % c[1])
        for name, v in zip(EXPECTED_HEAD[3:], c[3:]):
            if name in ov_cols and not have_ov:
                continue
            x = number(v, "%s, %s threads, %s" % (c[0], c[2], name))
            if name.endswith("p50 ms") or name.startswith("mopt/"):
                if x <= 0:
                    fail("%s = %s must be > 0" % (name, v))
        # f32 engines agree with ONNX Runtime on this small network; the bf16
        # default of OpenVINO is only checked to be a finite number
        if number(c[10], "max abs mopt") > 1e-3:
            fail("libmopt differs from ONNX Runtime by %s" % c[10])
        if have_ov and number(c[11], "max abs OV f32") > 1e-3:
            fail("OpenVINO f32 differs from ONNX Runtime by %s" % c[11])
    for c in geo:
        for name, v in zip(EXPECTED_HEAD[3:10], c[3:10]):
            if name in ov_cols and not have_ov:
                continue
            number(v, "geometric mean, %s threads, %s" % (c[2], name))
    data = json.loads((out / "realmodels.json").read_text())
    if len(data["rows"]) != 2 or any(r["errors"] for r in data["rows"]):
        fail("realmodels.json rows: %s" % data["rows"])
    for res in data["results"]:
        if res["rounds"] != 1:
            fail("%d rounds, want exactly 1 (--iterations 1)" % res["rounds"])
    print("ok: %d rows, %d geometric-mean rows, OpenVINO columns %s" % (
        len(rows), len(geo), "checked" if have_ov else "not checked"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
