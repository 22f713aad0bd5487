#!/usr/bin/env python3
"""test_cli.py — end-to-end test of the `mopt` tool (meson suite "cli").

Checks `mopt info --json` against the model as the onnx Python package reads
it (inputs, symbolic shapes, opset, node count and op histogram at
--opt-level 0, parameter count and bytes from the initializers), `mopt run`
against the ONNX Runtime references of tests/models, the generated-input
rules (fixed seed, integers in [0, 10), floats in [-1, 1), --dim/--shape),
output-name sanitizing, and the exit codes and error format.

usage: test_cli.py MOPT_EXECUTABLE SOURCE_ROOT
Exits 77 (meson's "skipped") while libmopt cannot import ONNX models yet.
"""
import collections
import json
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from cli_check import ROOT, check, done, mopt

CNN = os.path.join(ROOT, "tests/models/cnn/model.onnx")
BERT = os.path.join(ROOT, "examples/models/bert_tiny.onnx")


ONNX_DTYPES = {1: "f32", 2: "u8", 3: "i8", 4: "u16", 5: "i16", 6: "i32", 7: "i64",
               9: "bool", 10: "f16", 11: "f64", 12: "u32", 13: "u64", 16: "bf16"}


def onnx_io(values):
    out = []
    for v in values:
        t = v.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
                 for d in t.shape.dim]
        out.append({"name": v.name, "dtype": ONNX_DTYPES[t.elem_type], "shape": shape})
    return out


def check_info(path):
    r = mopt("info", path, "--json", "--opt-level", "0")
    check(r.returncode == 0, "info %s: exit %d: %s" % (path, r.returncode, r.stderr))
    if r.returncode:
        return
    info = json.loads(r.stdout)
    m = onnx.load(path)
    inits = {i.name for i in m.graph.initializer}
    want_in = onnx_io([v for v in m.graph.input if v.name not in inits])
    check(info["inputs"] == want_in, "info inputs %s != %s" % (info["inputs"], want_in))
    want_out = onnx_io(m.graph.output)
    check(info["outputs"] == want_out, "info outputs %s != %s" % (info["outputs"], want_out))
    opset = next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
    check(info["opset"] == opset, "info opset %s != %s" % (info["opset"], opset))
    check(info["nodes"] == len(m.graph.node), "info nodes %s != %d"
          % (info["nodes"], len(m.graph.node)))
    hist = collections.Counter(n.op_type for n in m.graph.node)
    check(info["op_histogram"] == dict(hist), "info op_histogram %s != %s"
          % (info["op_histogram"], dict(hist)))
    counts = list(info["op_histogram"].values())
    check(counts == sorted(counts, reverse=True), "op_histogram is not sorted by count")
    arrays = [numpy_helper.to_array(i, base_dir=os.path.dirname(path))
              for i in m.graph.initializer]
    n = sum(a.size for a in arrays)
    b = sum(a.nbytes for a in arrays)
    check(info["parameters"] == {"count": n, "bytes": b},
          "info parameters %s != count %d bytes %d" % (info["parameters"], n, b))
    text = mopt("info", path)
    check(text.returncode == 0, "info (text) failed")
    for v in want_in:
        shape = ", ".join(str(d) for d in v["shape"])
        line = "%s: %s [%s]" % (v["name"], v["dtype"], shape)
        check(line in text.stdout, "info text lacks '%s'" % line)


def check_run_reference(tmp):
    data = os.path.join(ROOT, "tests/models/cnn/test_data_set_0")
    out_dir = os.path.join(tmp, "cnn")
    os.mkdir(out_dir)
    r = mopt("run", CNN, "--input", "input=" + os.path.join(data, "input_0.npy"),
             "--output-dir", out_dir, "--threads", "1", "--opt-level", "2")
    check(r.returncode == 0, "run cnn: exit %d: %s" % (r.returncode, r.stderr))
    if r.returncode:
        return
    got = np.load(os.path.join(out_dir, "logits.npy"))
    want = np.load(os.path.join(data, "output_0.npy"))
    check(got.shape == want.shape and np.allclose(got, want, atol=1e-4, rtol=1e-4),
          "run cnn: logits differ from ORT by %g" % float(np.abs(got - want).max()))
    check("logits: f32 [%s]" % ", ".join(map(str, want.shape)) in r.stdout,
          "run prints name, dtype and shape: %r" % r.stdout)


def make_model(path):
    """x: i64 [batch, seq], y: f32 [batch, 4], z: bool [n] ->
    'a/b' = Cast<float>(x), 'c' = y + 0, 'd' = Not(z)."""
    x = helper.make_tensor_value_info("x", TensorProto.INT64, ["batch", "seq"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
    z = helper.make_tensor_value_info("z", TensorProto.BOOL, ["n"])
    outs = [helper.make_tensor_value_info("a/b", TensorProto.FLOAT, ["batch", "seq"]),
            helper.make_tensor_value_info("c", TensorProto.FLOAT, ["batch", 4]),
            helper.make_tensor_value_info("d", TensorProto.BOOL, ["n"])]
    zero = numpy_helper.from_array(np.zeros((1,), np.float32), "zero")
    nodes = [helper.make_node("Cast", ["x"], ["a/b"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["y", "zero"], ["c"]),
             helper.make_node("Not", ["z"], ["d"])]
    g = helper.make_graph(nodes, "g", [x, y, z], outs, [zero])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, path)


def check_generated_inputs(tmp):
    model = os.path.join(tmp, "gen.onnx")
    make_model(model)
    d1, d2 = os.path.join(tmp, "g1"), os.path.join(tmp, "g2")
    os.mkdir(d1)
    os.mkdir(d2)
    args = ["--dim", "batch=3", "--dim", "seq=50", "--shape", "z=7"]
    r1 = mopt("run", model, "--output-dir", d1, *args)
    r2 = mopt("run", model, "--output-dir=" + d2, *args)
    check(r1.returncode == 0, "run generated: exit %d: %s" % (r1.returncode, r1.stderr))
    if r1.returncode:
        return
    check(not os.path.exists(os.path.join(d1, "a", "b.npy")), "'/' not sanitized")
    a = np.load(os.path.join(d1, "a_b.npy"))
    c = np.load(os.path.join(d1, "c.npy"))
    d = np.load(os.path.join(d1, "d.npy"))
    check(a.shape == (3, 50) and c.shape == (3, 4) and d.shape == (7,),
          "generated shapes %s %s %s" % (a.shape, c.shape, d.shape))
    check(np.all(a == np.floor(a)) and a.min() >= 0 and a.max() <= 9 and len(np.unique(a)) > 5,
          "integer inputs not in [0, 10): %s" % np.unique(a))
    check(c.min() >= -1 and c.max() < 1 and c.std() > 0.2, "float inputs not in [-1, 1)")
    check(d.dtype == np.bool_, "bool output dtype %s" % d.dtype)
    for name in ("a_b", "c", "d"):
        same = np.array_equal(np.load(os.path.join(d1, name + ".npy")),
                              np.load(os.path.join(d2, name + ".npy")))
        check(same, "the fixed seed does not reproduce output %s" % name)
    r3 = mopt("run", model, "--output-dir", d2, "--seed", "5", *args)
    check(r3.returncode == 0 and not np.array_equal(np.load(os.path.join(d2, "c.npy")), c),
          "--seed does not change the generated data")
    # symbolic dims default to 1
    r4 = mopt("run", model, "--output-dir", d2)
    check(r4.returncode == 0 and np.load(os.path.join(d2, "a_b.npy")).shape == (1, 1),
          "symbolic dims do not default to 1")


def check_errors(tmp):
    def expect(args, code, needle):
        r = mopt(*args)
        check(r.returncode == code, "%s: exit %d, want %d (%s)" % (args, r.returncode, code,
                                                                  r.stderr.strip()))
        check(needle in r.stderr, "%s: stderr %r lacks %r" % (args, r.stderr, needle))
        check(r.stderr.startswith("mopt: "), "%s: stderr not 'mopt: ...'" % (args,))
    expect(["info", os.path.join(tmp, "missing.onnx")], 1, "mopt: I/O error: ")
    bad = os.path.join(tmp, "bad.onnx")
    with open(bad, "wb") as f:
        f.write(b"\x0a\xff\xff\xff\xff\x0f")
    r = mopt("info", bad)
    check(r.returncode == 1 and r.stderr.startswith("mopt: "), "truncated model: %r" % r.stderr)
    expect(["run", CNN, "--input", "nosuch=x.npy"], 1, "mopt: not found: ")
    expect(["run", CNN, "--input", "input=" + os.path.join(tmp, "missing.npy")], 1, "I/O error")
    expect(["run", CNN, "--threads", "many"], 2, "threads")
    expect(["run", CNN, "--precision", "fp7"], 2, "precision")
    expect(["run", CNN, "--bogus"], 2, "--bogus")
    expect(["run", CNN, "--input"], 2, "--input")
    expect(["run", CNN, "--dim", "batch"], 2, "--dim")
    expect(["run"], 2, "MODEL")
    expect(["frobnicate"], 2, "frobnicate")
    expect([], 2, "usage")
    r = mopt("help")
    check(r.returncode == 0 and "mopt run" not in r.stderr and "run MODEL" in r.stdout,
          "help text")
    check(mopt("--help").returncode == 0, "--help")
    r = mopt("version")
    check(r.returncode == 0 and r.stdout.startswith("mopt "), "version: %r" % r.stdout)


def check_calibrate(tmp):
    """mopt calibrate on the CNN test model, its test_data_set_N folders as the
    input sets; the table it writes then drives a static INT8 run."""
    table = os.path.join(tmp, "calib.yaml")
    r = mopt("calibrate", CNN, "--inputs", os.path.dirname(CNN), "-o", table, "--method",
             "percentile", "--percentile", "99.9")
    check(r.returncode == 0 and "on 3 input sets (percentile)" in r.stdout,
          "calibrate: %r %r" % (r.stdout, r.stderr))
    text = open(table).read() if os.path.exists(table) else ""
    for needle in ("format: mopt-calibration/1", "model: \"model.onnx\"", "model_hash: \"mh64:",
                   "method: percentile", "percentile: 99.9", "input_sets: 3", "  \"input\":",
                   "    dtype: uint8", "    zero_point: ", "    ranges: {minmax: [",
                   "    histogram: {values: "):
        check(needle in text, "calibration table has %r" % needle)
    opts = os.path.join(tmp, "static.yaml")
    with open(opts, "w") as f:
        f.write("precision: int8\ncalibration: %s\n" % table)
    inp = "input=" + os.path.join(os.path.dirname(CNN), "test_data_set_0", "input_0.npy")
    out_f, out_q = os.path.join(tmp, "fp32"), os.path.join(tmp, "static")
    r1 = mopt("run", CNN, "--input", inp, "--output-dir", out_f)
    r2 = mopt("run", CNN, "--options", opts, "--input", inp, "--output-dir", out_q)
    check(r1.returncode == 0 and r2.returncode == 0, "static INT8 run: %r" % r2.stderr)
    if r1.returncode == 0 and r2.returncode == 0:
        a = np.load(os.path.join(out_f, "logits.npy")).ravel()
        b = np.load(os.path.join(out_q, "logits.npy")).ravel()
        cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
        check(cos > 0.999, "static INT8 logits vs fp32: cosine %.5f" % cos)
    r = mopt("help")
    check("calibrate MODEL --inputs DIR -o TABLE.yaml" in r.stdout, "help lists calibrate")
    for args, needle in ((["calibrate", CNN, "-o", table], "--inputs"),
                         (["calibrate", CNN, "--inputs", tmp], "-o TABLE.yaml"),
                         (["calibrate", "--inputs", tmp, "-o", table], "MODEL"),
                         (["calibrate", CNN, "--inputs", tmp, "-o", table, "--percentile", "30"],
                          "--percentile 30"),
                         (["calibrate", CNN, "--inputs", tmp, "-o", table, "--method", "kl"],
                          "--method kl")):
        r = mopt(*args)
        check(r.returncode == 2 and needle in r.stderr, "%s: exit %d %r" % (args, r.returncode,
                                                                             r.stderr))


def main():
    probe = mopt("info", CNN)
    if probe.returncode != 0 and "not implemented" in probe.stderr:
        print("skipping: " + probe.stderr.strip())
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        check_info(CNN)
        check_info(BERT)
        check_run_reference(tmp)
        check_generated_inputs(tmp)
        check_errors(tmp)
        check_calibrate(tmp)
    return done("all CLI checks passed")


if __name__ == "__main__":
    sys.exit(main())
