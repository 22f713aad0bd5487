#!/usr/bin/env python3
"""test_cli_per_layer.py — `mopt compare --per-layer` and the option
expose_values it runs on (issue 13; meson suite "cli").

- A six-layer MLP (fcI: MatMul, biasI: Add, tanhI: Tanh -> actI) against a
  copy whose fc3 weight is broken: the report lists act0..act5 in
  topological order, act0..act2 with cosine 1 and max_abs 0, and names act3
  as the first divergence, with the cosine and max abs error numpy computes
  from the same layers; the mlp's fused tensors (mm*, lin*) are not listed.
- A small CNN under static INT8 (calibration table) against FP32: the
  intermediate tensors kept u8 between static nodes are compared too
  (dequantized), every REF tensor is mapped, none crosses 0.99.
- expose_values=1 does not change the model's own outputs (max_abs 0).
- --layer-cosine outside (0, 1] is a usage error; a .mopt file with
  expose_values is refused.

usage: test_cli_per_layer.py MOPT_EXECUTABLE SOURCE_ROOT
"""
import os
import re
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from cli_check import ROOT, check, done, mopt, save_model

D, LAYERS, BROKEN = 32, 6, 3


def mlp_weights(broken):
    rng = np.random.default_rng(1)
    ws = []
    for i in range(LAYERS):
        w = (rng.standard_normal((D, D)) / np.sqrt(D)).astype(np.float32)
        b = (rng.standard_normal(D) * 0.1).astype(np.float32)
        if broken == i:
            w[:, :4] *= -3
        ws.append((w, b))
    return ws


def mlp(path, broken=None):
    nodes, inits, x = [], [], "x"
    for i, (w, b) in enumerate(mlp_weights(broken)):
        inits += [numpy_helper.from_array(w, "w%d" % i), numpy_helper.from_array(b, "b%d" % i)]
        nodes += [helper.make_node("MatMul", [x, "w%d" % i], ["mm%d" % i], name="fc%d" % i),
                  helper.make_node("Add", ["mm%d" % i, "b%d" % i], ["lin%d" % i], name="bias%d" % i),
                  helper.make_node("Tanh", ["lin%d" % i], ["act%d" % i], name="tanh%d" % i)]
        x = "act%d" % i
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, D])],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, [4, D])], inits)
    save_model(g, path)


def mlp_forward(x, broken):
    acts = []
    for w, b in mlp_weights(broken):
        x = np.tanh(x.astype(np.float64) @ w + b)
        acts.append(x)
    return acts


def cnn(path):
    rng = np.random.default_rng(2)
    def conv(name, x, cin, cout, stride):
        w = (rng.standard_normal((cout, cin, 3, 3)) / np.sqrt(cin * 9)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, name + "_w"))
        nodes.append(helper.make_node("Conv", [x, name + "_w"], [name + "_c"], name=name, pads=[1, 1, 1, 1],
                                      strides=[stride, stride]))
        nodes.append(helper.make_node("Relu", [name + "_c"], [name + "_r"], name=name + "_relu"))
        return name + "_r"
    nodes, inits = [], []
    y = conv("c1", "x", 3, 8, 1)
    y = conv("c2", y, 8, 16, 2)
    y = conv("c3", y, 16, 16, 1)
    nodes.append(helper.make_node("GlobalAveragePool", [y], ["gap"], name="gap"))
    g = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("gap", TensorProto.FLOAT, [1, 16, 1, 1])], inits)
    save_model(g, path)


def layer_rows(stdout):
    """{tensor: (index, cosine, max_abs, marked)} from the per-layer table."""
    rows, body = {}, False
    for line in stdout.splitlines():
        if line.startswith("per-layer"):
            body = True
            continue
        m = re.match(r"\s*(\d+)\s+(\S+)\s+([-\d.einfa]+)\s+\S+\s+(\S+)", line) if body else None
        if m:
            rows[m.group(2)] = (int(m.group(1)), float(m.group(3)), float(m.group(4)),
                                "first divergence" in line)
    return rows


def main():
    with tempfile.TemporaryDirectory() as d:
        ref, bad = os.path.join(d, "ref.onnx"), os.path.join(d, "broken.onnx")
        mlp(ref)
        mlp(bad, BROKEN)
        gold = os.path.join(d, "g")
        os.makedirs(gold)
        xs = []
        for i in range(3):
            x = np.random.default_rng(10 + i).standard_normal((4, D)).astype(np.float32)
            np.save(os.path.join(gold, "%d.npy" % i), x)
            xs.append(x)
        r = mopt("compare", ref, bad, "--golden", gold, "--per-layer")
        rows = layer_rows(r.stdout)
        check(r.returncode == 0 and sorted(rows) == ["act%d" % i for i in range(LAYERS)],
              "per-layer lists act0..act5 (the fused mm*/lin* are not tensors of the run): %s" % sorted(rows), r)
        check(all(rows.get("act%d" % i, (0, 0, 1, 0))[1] == 1.0 and rows["act%d" % i][2] == 0.0
                  for i in range(BROKEN)), "layers before the broken one: cosine 1, max_abs 0", r)
        check([k for k, v in rows.items() if v[3]] == ["act3"] and
              "first divergence: 'act3'" in r.stdout, "the broken layer fc3's output act3 is the first divergence", r)
        check([rows[k][0] for k in sorted(rows, key=lambda k: int(k[3:]))] == sorted(v[0] for v in rows.values()),
              "the rows are in topological order", r)
        ra = [mlp_forward(x, None)[BROKEN] for x in xs]
        ta = [mlp_forward(x, BROKEN)[BROKEN] for x in xs]
        cos = min(float(a.ravel() @ b.ravel() / np.linalg.norm(a) / np.linalg.norm(b)) for a, b in zip(ra, ta))
        err = max(float(np.abs(a - b).max()) for a, b in zip(ra, ta))
        got = rows.get("act3", (0, 0, 0, 0))
        check(abs(got[1] - cos) < 1e-4 and abs(got[2] - err) < 1e-3 * max(err, 1),
              "act3: cosine %.6f max_abs %.4g as numpy (%.6f, %.4g)" % (got[1], got[2], cos, err), r)
        r = mopt("compare", ref, bad, "--golden", gold, "--per-layer", "--layer-cosine", "0.3")
        check(r.returncode == 0 and "no compared tensor has cosine < 0.3" in r.stdout,
              "--layer-cosine 0.3: nothing crosses", r)
        # expose_values leaves the model's outputs as they were
        r = mopt("compare", ref, ref, "--golden", gold, "--test-set", "expose_values=1")
        check(r.returncode == 0 and re.search(r"^act5\s+max_abs\s+0\s", r.stdout, re.M),
              "expose_values=1: the model's output is bit-identical", r)

        # static INT8: the u8 tensors between static convs are compared too
        c = os.path.join(d, "cnn.onnx")
        cnn(c)
        cg = os.path.join(d, "cg")
        os.makedirs(cg)
        for i in range(4):
            np.save(os.path.join(cg, "%d.npy" % i),
                    np.random.default_rng(20 + i).standard_normal((1, 3, 16, 16)).astype(np.float32))
        calib = os.path.join(d, "c.yaml")
        r = mopt("calibrate", c, "--inputs", cg, "-o", calib)
        check(r.returncode == 0, "calibrate the CNN", r)
        r = mopt("compare", c, c, "--golden", cg, "--test-set", "precision=int8", "--test-set",
                 "calibration=" + calib, "--per-layer")
        rows = layer_rows(r.stdout)
        check(r.returncode == 0 and sorted(rows) == ["c1_r", "c2_r", "c3_r", "gap"] and
              "not mapped" not in r.stdout and all(v[1] > 0.99 for v in rows.values()),
              "static int8 CNN: every tensor (u8 ones dequantized) mapped, cosine > 0.99: %s" % rows, r)

        r = mopt("compare", ref, bad, "--golden", gold, "--per-layer", "--layer-cosine", "1.5")
        check(r.returncode == 2 and "--layer-cosine" in r.stderr, "--layer-cosine 1.5 is a usage error", r)
        saved = os.path.join(d, "ref.mopt")
        r = mopt("optimize", ref, "-o", saved)
        r = mopt("compare", saved, saved, "--golden", gold, "--per-layer")
        check(r.returncode == 2 and "expose_values" in r.stderr, "a .mopt file is refused for --per-layer", r)
    return done("all checks passed")


if __name__ == "__main__":
    sys.exit(main())
