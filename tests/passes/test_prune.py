#!/usr/bin/env python3
"""test_prune.py — load-time pruning (lib/passes/pass_prune.c) through the
`mopt` tool, on models generated here:

  convs: x -> Conv A (8 channels: 2 and 5 have a zero filter and a zero
    bias, 6 a zero filter but a bias of 0.5) -> Relu -> Conv B (-> y1) and
    Conv C (-> y2); Conv D (a zero channel, its output a graph output: kept).
    prune_channels removes 2 channels; outputs=y1 also drops y2 and Conv C.
  mlp: x -> MatMul W1 [16, 32] (columns 1, 7, 20 zero) -> Add b1 (b1[20] =
    0.5: column 20 is kept) -> Relu -> MatMul W2 [32, 8] -> y; plus a MatMul
    whose zero columns feed a graph output (kept). 2 columns removed.

  bert_tiny (examples/models) with layer 0's V projection columns and bias
    of head 0 zeroed, layer 1's output-projection rows of head 2 zeroed,
    and layer 0's Q columns of head 3 zeroed (not removable: uniform scores
    still average V): prune_heads removes 2 heads at opt_level 2 and 3.

For each: the pass report (`mopt optimize --report`) counts what was
removed, the optimized model's weights shrink, and the outputs equal ONNX
Runtime's and opt_level 0's (1e-5), also from the saved .mopt.

usage: test_prune.py MOPT_EXECUTABLE
"""
import os
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from cli_check import check, failures, options, report_row, runner

MOPT = sys.argv[1]
rng = np.random.default_rng(1203)


mopt = runner(MOPT)


def save(path, nodes, inits, x_shape, outputs):
    g = helper.make_graph(nodes, os.path.basename(path),
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT,
                                                         [None] * len(x_shape))
                           for o in outputs],
                          [numpy_helper.from_array(a, n) for n, a in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return m


def run(model, opts, x, tmp, tag):
    out = os.path.join(tmp, "out_" + tag)
    xin = os.path.join(tmp, "x_%s.npy" % tag)
    np.save(xin, x)
    r = mopt("run", model, "--options", opts, "--input", "x=" + xin, "--output-dir", out)
    check(r.returncode == 0, "%s: mopt run exits 0" % tag, r)
    got = {}
    if os.path.isdir(out):
        for fn in os.listdir(out):
            got[fn[:-4]] = np.load(os.path.join(out, fn))
    return got


def compare(tag, got, ref, names):
    check(sorted(got) == sorted(names), "%s: outputs %s, expected %s" % (tag, sorted(got), names))
    for n in names:
        if n in got:
            err = float(np.max(np.abs(got[n] - ref[n]))) if got[n].shape == ref[n].shape else 1e9
            check(err <= 1e-5 * max(1.0, float(np.max(np.abs(ref[n])))),
                  "%s: output %s equals the reference (max abs err %g)" % (tag, n, err))


def case(tmp, name, model_path, x, outputs, prune_note, kept_outputs=None, prune_outputs_note=None):
    sess = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    ref = dict(zip(outputs, sess.run(None, {"x": x})))
    kept = kept_outputs or outputs
    extra = {"outputs": ",".join(kept)} if kept_outputs else {}
    o3 = options(tmp, name + "_o3", opt_level=3, **extra)
    o1 = options(tmp, name + "_o1", opt_level=1, **extra)
    o0 = options(tmp, name + "_o0", opt_level=0, **extra)
    base = options(tmp, name + "_base", opt_level=0)
    for level, opts in ((3, o3), (1, o1)):
        mo = os.path.join(tmp, "%s_o%d.mopt" % (name, level))
        r = mopt("optimize", model_path, "--options", opts, "--report", "-o", mo)
        check(r.returncode == 0, "%s O%d: optimize exits 0" % (name, level), r)
        row = report_row(r.stdout, "prune_channels")
        check(row is not None and row[3].strip() == prune_note,
              "%s O%d: prune_channels says '%s': %s" % (name, level, prune_note, row), r)
        if kept_outputs:
            row = report_row(r.stdout, "prune_outputs")
            check(row is not None and row[3].strip() == prune_outputs_note,
                  "%s O%d: prune_outputs says '%s': %s" % (name, level, prune_outputs_note, row), r)
        # fewer parameter bytes than without pruning
        r0 = mopt("optimize", model_path, "--options", base, "-o", os.path.join(tmp, "base.mopt"))
        pb = lambda s: int(s.split(" nodes, ")[1].split()[0]) if " nodes, " in s else -1
        check(pb(r.stdout) < pb(r0.stdout),
              "%s O%d: parameter bytes shrink (%d -> %d)" % (name, level, pb(r0.stdout),
                                                          pb(r.stdout)))
        compare("%s O%d" % (name, level), run(model_path, opts, x, tmp, "%s%d" % (name, level)),
                ref, kept)
        compare("%s O%d .mopt" % (name, level), run(mo, opts, x, tmp, "%s%dm" % (name, level)),
                ref, kept)
    # opt_level 0 runs no pass: the channels stay; outputs= still applies
    r = mopt("optimize", model_path, "--options", o0, "--report", "-o",
             os.path.join(tmp, name + "_o0.mopt"))
    check(report_row(r.stdout, "prune_channels") is None, "%s O0: no prune_channels" % name, r)
    if kept_outputs:
        row = report_row(r.stdout, "prune_outputs")
        check(row is not None and row[3].strip() == prune_outputs_note,
              "%s O0: prune_outputs says '%s': %s" % (name, prune_outputs_note, row), r)
    compare("%s O0" % name, run(model_path, o0, x, tmp, name + "0"), ref, kept)


def heads_case(tmp):
    here = os.path.dirname(os.path.abspath(__file__))
    m = onnx.load(os.path.join(here, "..", "..", "examples", "models", "bert_tiny.onnx"))
    inits = {t.name: t for t in m.graph.initializer}
    weight = {}  # node name -> its constant weight input
    for n in m.graph.node:
        for i in n.input:
            if i in inits:
                weight[n.name] = i

    def edit(node, fn):
        t = inits[weight[node]]
        a = numpy_helper.to_array(t).copy()
        fn(a)
        t.CopyFrom(numpy_helper.from_array(a, t.name))

    d = 32  # bert_tiny: hidden 128, 4 heads
    edit("/layers.0/attn/value/MatMul", lambda a: a.__setitem__((slice(None), slice(0, d)), 0))
    edit("/layers.0/attn/value/Add", lambda a: a.__setitem__(slice(0, d), 0))
    edit("/layers.1/attn/out/MatMul", lambda a: a.__setitem__(slice(2 * d, 3 * d), 0))
    edit("/layers.0/attn/query/MatMul", lambda a: a.__setitem__((slice(None), slice(3 * d, 4 * d)), 0))
    path = os.path.join(tmp, "bert_heads.onnx")
    onnx.save(m, path)
    ids = rng.integers(0, 1000, (2, 12)).astype(np.int64)
    mask = np.ones((2, 12), np.int64)
    mask[1, 9:] = 0
    feeds = {"input_ids": ids, "attention_mask": mask}
    names = [o.name for o in m.graph.output]
    ref = dict(zip(names, ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)))
    ins = []
    for k, v in feeds.items():
        np.save(os.path.join(tmp, k + ".npy"), v)
        ins += ["--input", "%s=%s" % (k, os.path.join(tmp, k + ".npy"))]
    for level in (1, 2, 3):
        opts = options(tmp, "heads_o%d" % level, opt_level=level)
        mo = os.path.join(tmp, "heads_o%d.mopt" % level)
        r = mopt("optimize", path, "--options", opts, "--report", "-o", mo)
        check(r.returncode == 0, "heads O%d: optimize exits 0" % level, r)
        row = report_row(r.stdout, "prune_heads")
        if level == 1:
            check(row is None, "heads O1: no prune_heads (it needs the fused attention)", r)
        else:
            check(row is not None and row[3].strip() == "2 attention heads",
                  "heads O%d: prune_heads says '2 attention heads': %s" % (level, row), r)
        for tag, model in (("onnx", path), ("mopt", mo)):
            out = os.path.join(tmp, "heads_out_%d_%s" % (level, tag))
            r = mopt("run", model, "--options", opts, *ins, "--output-dir", out)
            check(r.returncode == 0, "heads O%d %s: run exits 0" % (level, tag), r)
            got = {fn[:-4]: np.load(os.path.join(out, fn)) for fn in os.listdir(out)} \
                if os.path.isdir(out) else {}
            compare("heads O%d %s" % (level, tag), got, ref, names)


with tempfile.TemporaryDirectory() as tmp:
    heads_case(tmp)

    # ---- convs ---------------------------------------------------------------
    WA = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    BA = rng.standard_normal(8).astype(np.float32)
    for c in (2, 5, 6):
        WA[c] = 0
    BA[2] = BA[5] = 0
    BA[6] = 0.5
    WB = rng.standard_normal((4, 8, 3, 3)).astype(np.float32)
    WC = rng.standard_normal((5, 8, 1, 1)).astype(np.float32)
    WD = rng.standard_normal((3, 3, 1, 1)).astype(np.float32)
    WD[1] = 0
    inits = {"WA": WA, "BA": BA, "WB": WB, "WC": WC, "WD": WD}
    nodes = [helper.make_node("Conv", ["x", "WA", "BA"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("Conv", ["r", "WB"], ["y1"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["r", "WC"], ["y2"]),
             helper.make_node("Conv", ["x", "WD"], ["y3"])]
    convs = os.path.join(tmp, "convs.onnx")
    save(convs, nodes, inits, [1, 3, 8, 8], ["y1", "y2", "y3"])
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    case(tmp, "convs", convs, x, ["y1", "y2", "y3"], "2 zero conv channels")
    case(tmp, "convs_y1", convs, x, ["y1", "y2", "y3"], "2 zero conv channels",
         kept_outputs=["y1"], prune_outputs_note="2 outputs, 2 nodes")

    # ---- mlp -----------------------------------------------------------------
    W1 = rng.standard_normal((16, 32)).astype(np.float32)
    b1 = rng.standard_normal(32).astype(np.float32)
    for c in (1, 7, 20):
        W1[:, c] = 0
        b1[c] = 0
    b1[20] = 0.5
    W2 = rng.standard_normal((32, 8)).astype(np.float32)
    W3 = rng.standard_normal((16, 4)).astype(np.float32)
    W3[:, 2] = 0
    inits = {"W1": W1, "b1": b1, "W2": W2, "W3": W3}
    nodes = [helper.make_node("MatMul", ["x", "W1"], ["h"]),
             helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["hr"]),
             helper.make_node("MatMul", ["hr", "W2"], ["y"]),
             helper.make_node("MatMul", ["x", "W3"], ["z"])]
    mlp = os.path.join(tmp, "mlp.onnx")
    save(mlp, nodes, inits, [2, 16], ["y", "z"])
    x = rng.standard_normal((2, 16)).astype(np.float32)
    case(tmp, "mlp", mlp, x, ["y", "z"], "2 zero matmul columns")
    case(tmp, "mlp_y", mlp, x, ["y", "z"], "2 zero matmul columns", kept_outputs=["y"],
         prune_outputs_note="1 output, 1 node")

    # ---- outputs= errors -------------------------------------------------------
    bad = options(tmp, "bad", outputs="nope")
    r = mopt("run", mlp, "--options", bad)
    check(r.returncode == 1 and "no output named 'nope'" in r.stderr and "'y'" in r.stderr,
          "outputs=nope fails naming the outputs", r)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("all pruning checks passed")
