#!/usr/bin/env python3
"""test_fuse_qkv.py — the merge of an attention's Q, K, V projections
(lib/passes/pass_fuse_qkv.c, opt_level 3) through the `mopt` tool, on
one-layer attention blocks generated here as torch exports them (x [B,S,E]
-> Q/K/V MatMul [+ Add bias] -> Reshape [0,0,H,D] -> Transpose -> scores /
sqrt(D) + mask -> Softmax -> .V -> Transpose -> Reshape -> output MatMul):

  - head counts 1, 2, 4 and 12 (D 48, 32, 16, 8), biases on all three
    projections, on none, and on Q and V only (K's is then zeros): the pass
    merges exactly one attention (`mopt optimize --report`), and not at
    opt_level 2;
  - K's (or Q's) projection output also read elsewhere (a second graph
    output): the attention is still fused, the merge must not fire;
  - different widths: V projected to another width than Q and K (Dv != D):
    no merge.

Every case runs at opt_level 3 and 2, batch 1 and 2, 1 and 2 threads, at
fp32 (within 1e-4 of ONNX Runtime), bf16 (cosine >= 0.999) and int8
(cosine >= 0.995), also from the saved .mopt of opt_level 3.

usage: test_fuse_qkv.py MOPT_EXECUTABLE
"""
import os
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from cli_check import check, check_rewrites, failures, options, report_row, runner

MOPT = sys.argv[1]
rng = np.random.default_rng(1204)


mopt = runner(MOPT)


def block(path, hidden, heads, bias=(True, True, True), shared=None, v_width=None):
    """One attention block; shared: 'q' or 'k' whose projection output is
    also a graph output; v_width: V's projection width (default hidden)."""
    d = hidden // heads
    dv = (v_width or hidden) // heads
    inits, nodes = {}, []

    def const(name, arr):
        inits[name] = np.asarray(arr)
        return name

    def proj(tag, width, with_bias):
        w = const("w" + tag, (rng.standard_normal((hidden, width)) / np.sqrt(hidden))
                  .astype(np.float32))
        out = tag + "_mm"
        nodes.append(helper.make_node("MatMul", ["x", w], [out]))
        if with_bias:
            b = const("b" + tag, (0.1 * rng.standard_normal(width)).astype(np.float32))
            nodes.append(helper.make_node("Add", [out, b], [tag]))
            return tag
        return out

    q = proj("q", hidden, bias[0])
    k = proj("k", hidden, bias[1])
    v = proj("v", v_width or hidden, bias[2])
    split = const("split", np.array([0, 0, heads, d], np.int64))
    split_v = const("split_v", np.array([0, 0, heads, dv], np.int64))
    nodes += [
        helper.make_node("Reshape", [q, split], ["q4"]),
        helper.make_node("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", [k, split], ["k4"]),
        helper.make_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", [v, split_v], ["v4"]),
        helper.make_node("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["qh", "kt"], ["s"]),
        helper.make_node("Div", ["s", const("sq", np.array(np.sqrt(d), np.float32))], ["sd"]),
        helper.make_node("Add", ["sd", "mask"], ["sm"]),
        helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "vh"], ["o"]),
        helper.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ot", const("merge", np.array([0, 0, heads * dv], np.int64))],
                         ["om"]),
        helper.make_node("MatMul", ["om", const("wo", (rng.standard_normal((heads * dv, hidden))
                                                       / np.sqrt(hidden)).astype(np.float32))],
                         ["y"]),
    ]
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", hidden])]
    if shared:
        name = {"q": q, "k": k}[shared]
        outs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                  ["batch", "seq", hidden]))
    g = helper.make_graph(
        nodes, os.path.basename(path),
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", hidden]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", 1, 1, "seq"])],
        outs, [numpy_helper.from_array(a, n) for n, a in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return [o.name for o in outs]


def cosine(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))


def feeds(batch, seq, hidden):
    x = rng.standard_normal((batch, seq, hidden)).astype(np.float32)
    mask = np.zeros((batch, 1, 1, seq), np.float32)
    mask[-1, 0, 0, seq - 3:] = -10000.0  # the last sequence is padded
    return {"x": x, "mask": mask}


def case(tmp, name, hidden, heads, merges, **kw):
    path = os.path.join(tmp, name + ".onnx")
    names = block(path, hidden, heads, **kw)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for level in (3, 2):
        opts = options(tmp, "%s_o%d" % (name, level), opt_level=level)
        mo = os.path.join(tmp, "%s_o%d.mopt" % (name, level))
        r = mopt("optimize", path, "--options", opts, "--report", "-o", mo)
        check(r.returncode == 0, "%s O%d: optimize exits 0" % (name, level), r)
        att = report_row(r.stdout, "fuse_attention")
        check(att is not None and att[2] == 1,
              "%s O%d: the attention is fused: %s" % (name, level, att), r)
        check_rewrites(r, "fuse_qkv", name, level, merges, "merges")
    for batch, seq in ((1, 7), (2, 13)):
        f = feeds(batch, seq, hidden)
        ref = dict(zip(names, sess.run(None, f)))
        ins = []
        for k, v in f.items():
            p = os.path.join(tmp, "%s_%s_b%d.npy" % (name, k, batch))
            np.save(p, v)
            ins += ["--input", "%s=%s" % (k, p)]
        for level in (3, 2):
            for prec, threads in (("fp32", 1), ("bf16", 2), ("int8", 1), ("int8", 2)):
                tag = "%s O%d b%d %s t%d" % (name, level, batch, prec, threads)
                opts = options(tmp, "run", opt_level=level, precision=prec, threads=threads)
                models = [path]
                if level == 3 and prec == "fp32":
                    models.append(os.path.join(tmp, "%s_o3.mopt" % name))
                for model in models:
                    out = os.path.join(tmp, "out_%s" % tag.replace(" ", "_")) + model[-4:]
                    r = mopt("run", model, "--options", opts, *ins, "--output-dir", out)
                    check(r.returncode == 0, "%s: run exits 0" % tag, r)
                    got = {fn[:-4]: np.load(os.path.join(out, fn))
                           for fn in os.listdir(out)} if os.path.isdir(out) else {}
                    check(sorted(got) == sorted(names), "%s: outputs %s" % (tag, sorted(got)))
                    for n in names:
                        if n not in got or got[n].shape != ref[n].shape:
                            check(False, "%s: output %s missing or misshapen" % (tag, n))
                            continue
                        if prec == "fp32":
                            err = float(np.max(np.abs(got[n] - ref[n])))
                            check(err <= 1e-4 * max(1.0, float(np.max(np.abs(ref[n])))),
                                  "%s: %s within 1e-4 of ORT (max abs err %g)" % (tag, n, err))
                        else:
                            c = cosine(got[n], ref[n])
                            floor = 0.999 if prec == "bf16" else 0.995
                            check(c >= floor, "%s: %s cosine %.6f >= %g" % (tag, n, c, floor))


with tempfile.TemporaryDirectory() as tmp:
    case(tmp, "h48_1head", 48, 1, 1)
    case(tmp, "h64_2heads", 64, 2, 1)
    case(tmp, "h64_4heads_nobias", 64, 4, 1, bias=(False, False, False))
    case(tmp, "h96_12heads_qv_bias", 96, 12, 1, bias=(True, False, True))
    case(tmp, "h64_4heads_k_shared", 64, 4, 0, shared="k")
    case(tmp, "h64_4heads_q_shared", 64, 4, 0, shared="q")
    case(tmp, "h64_4heads_v_wider", 64, 4, 0, v_width=128)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("test_fuse_qkv: all cases passed")
