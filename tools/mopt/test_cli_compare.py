#!/usr/bin/env python3
"""test_cli_compare.py — end-to-end test of `mopt compare` (meson suite "cli").

Builds a small model with three outputs (features = Relu(x W1 + b1),
logits = features W2 + b2, and logits as a [batch, 2, 5] sequence) and a
broken copy (one weight of W2 perturbed) with the
onnx helper API, writes golden sets, and checks:
- a model against itself exits 0 with cosine 1 and max_abs 0;
- against the broken copy with a budget (cosine >= 0.999) it exits 1 and
  names the output (logits) and the metric; the untouched output passes; the
  worst cosine and its input set, the mean top-1 agreement, the sequence's
  per-position argmax agreement and the Spearman correlation of pairwise
  cosine similarities equal what numpy computes;
- stored reference outputs are used (and --recompute ignores them);
- a folder of lone .npy files is a golden set;
- precision=int8 of tests/models/mobilenet against FP32 prints finite metrics;
- bad command lines, budgets and files exit 2 with a message.

usage: test_cli_compare.py MOPT_EXECUTABLE SOURCE_ROOT
"""
import math
import os
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from cli_check import ROOT, check, done, mopt, save_model

MOBILENET = os.path.join(ROOT, "tests/models/mobilenet")


def table(stdout):
    """{(output, metric): (worst, at, mean)} from the printed table."""
    rows, body = {}, False
    for line in stdout.splitlines():
        if line.startswith("output ") and "metric" in line:
            body = True
            continue
        if not body or not line.strip() or line.startswith("budget"):
            continue
        f = line.split()
        if len(f) >= 4 and f[1] != "(not":
            at = " ".join(f[3:5]) if f[3] == "(all" else f[3]
            rows[(f[0], f[1])] = (float(f[2]), at, f[-1] if f[3] != "(all" else "-")
    return rows


rng = np.random.default_rng(7)
W1 = rng.standard_normal((16, 32)).astype(np.float32) * 0.3
B1 = rng.standard_normal(32).astype(np.float32) * 0.1
W2 = rng.standard_normal((32, 10)).astype(np.float32) * 0.3
B2 = rng.standard_normal(10).astype(np.float32) * 0.1
W2_BROKEN = W2.copy()
W2_BROKEN[3, 4] += 4.0  # one weight perturbed


def make_model(path, w2):
    inits = [numpy_helper.from_array(a, n) for a, n in
             ((W1, "W1"), (B1, "B1"), (w2, "W2"), (B2, "B2"),
              (np.array([-1, 2, 5], dtype=np.int64), "seq_shape"))]
    nodes = [helper.make_node("MatMul", ["x", "W1"], ["h0"]),
             helper.make_node("Add", ["h0", "B1"], ["h1"]),
             helper.make_node("Relu", ["h1"], ["features"]),
             helper.make_node("MatMul", ["features", "W2"], ["l0"]),
             helper.make_node("Add", ["l0", "B2"], ["logits"]),
             helper.make_node("Reshape", ["logits", "seq_shape"], ["sequence"])]
    g = helper.make_graph(
        nodes, "golden_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10]),
         helper.make_tensor_value_info("features", TensorProto.FLOAT, ["batch", 32]),
         helper.make_tensor_value_info("sequence", TensorProto.FLOAT, ["batch", 2, 5])],
        inits)
    save_model(g, path)


def forward(x, w2):
    f = np.maximum(x.astype(np.float64) @ W1 + B1, 0)
    return f @ w2.astype(np.float64) + B2, f


def cosine(a, b):
    a, b = a.ravel(), b.ravel()
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


with tempfile.TemporaryDirectory() as tmp:
    good, broken = os.path.join(tmp, "good.onnx"), os.path.join(tmp, "broken.onnx")
    make_model(good, W2)
    make_model(broken, W2_BROKEN)
    golden = os.path.join(tmp, "golden")
    inputs = []
    for k in range(12):  # test_data_set_10 sorts after _2 (natural order)
        d = os.path.join(golden, "test_data_set_%d" % k)
        os.makedirs(d)
        x = rng.standard_normal((4, 16)).astype(np.float32)
        x *= 1.0 + k  # sets of different scales: the worst set is well defined
        np.save(os.path.join(d, "input_0.npy"), x)
        inputs.append(x)

    # 1. a model against itself: exit 0, cosine 1, errors 0
    r = mopt("compare", good, good, "--golden", golden)
    t = table(r.stdout)
    check(r.returncode == 0, "self compare exits 0 (got %d)" % r.returncode, r)
    check("12 input sets" in r.stdout and "computed by REF" in r.stdout, "self compare header", r)
    for out in ("logits", "features"):
        check(t.get((out, "cosine"), (0,))[0] == 1.0, "self %s cosine is 1" % out, r)
        check(t.get((out, "max_abs"), (1,))[0] == 0.0, "self %s max_abs is 0" % out, r)
        check(t.get((out, "spearman"), (0,))[0] == 1.0, "self %s spearman is 1" % out, r)
    check(t.get(("logits", "top1"), (0,))[0] == 1.0, "self logits top1 is 1", r)
    check(("logits", "top5") in t, "logits [4,10] gets top5", r)

    # 2. against the broken model with a budget: exit 1, names output and metric
    budget = os.path.join(tmp, "quality.yaml")
    with open(budget, "w") as f:
        f.write("# the quality budget of the test\n"
                "rules:\n"
                "  - output: \"*\"\n    metric: cosine\n    min: 0.999\n"
                "  - output: features\n    metric: max_abs\n    max: 0\n")
    r = mopt("compare", good, broken, "--golden", golden, "--budget", budget)
    t = table(r.stdout)
    check(r.returncode == 1, "broken compare exits 1 (got %d)" % r.returncode, r)
    viol = [ln for ln in r.stdout.splitlines() if ln.startswith("budget violated")]
    check(len(viol) == 2 and all("cosine worst" in v and "< min 0.999 (line 3)" in v for v in viol)
          and "'logits'" in viol[0] and "'sequence'" in viol[1],
          "violations name logits and sequence (its reshape) and cosine: %s" % viol, r)
    check("features" not in r.stdout.split("budget violated", 1)[-1], "features holds", r)
    check("budget %s: 2 violations" % budget in r.stdout, "violation summary", r)
    # the figures equal numpy's
    cos = [cosine(forward(x, W2)[0], forward(x, W2_BROKEN)[0]) for x in inputs]
    worst = int(np.argmin(cos))
    got = t.get(("logits", "cosine"), (None, None))
    check(got[0] is not None and abs(got[0] - cos[worst]) < 1e-5,
          "logits worst cosine %s vs numpy %.6g" % (got[0], cos[worst]), r)
    check(got[1] == "test_data_set_%d" % worst, "worst set %s vs numpy's %d" % (got[1], worst), r)
    mean = float(t.get(("logits", "cosine"), (0, 0, "nan"))[2])
    check(abs(mean - np.mean(cos)) < 1e-5, "logits mean cosine %s vs numpy %.6g"
          % (mean, np.mean(cos)), r)
    agree = np.mean([np.mean(np.argmax(forward(x, W2)[0], 1) == np.argmax(forward(x, W2_BROKEN)[0], 1))
                     for x in inputs])
    check(abs(float(t.get(("logits", "top1"), (0, 0, "nan"))[2]) - agree) < 1e-5,
          "logits mean top1 vs numpy %.6g" % agree, r)
    check(t.get(("features", "max_abs"), (1,))[0] == 0.0, "features untouched", r)
    pos = [np.mean(np.argmax(forward(x, W2)[0].reshape(-1, 2, 5), 2)
                   == np.argmax(forward(x, W2_BROKEN)[0].reshape(-1, 2, 5), 2)) for x in inputs]
    got = t.get(("sequence", "argmax"), (None, None, "nan"))
    check(got[0] is not None and abs(got[0] - min(pos)) < 1e-9
          and abs(float(got[2]) - np.mean(pos)) < 1e-5,
          "sequence argmax worst/mean %s vs numpy %.6g/%.6g" % (got, min(pos), np.mean(pos)), r)
    check(("sequence", "top1") not in t and ("logits", "argmax") not in t,
          "top-k for rank 2, argmax for rank 3", r)

    def ranks(v):
        _, inv, counts = np.unique(v, return_inverse=True, return_counts=True)
        ends = np.cumsum(counts)
        return ((ends - counts + 1 + ends) / 2.0)[inv]

    def sims(rows):
        rows = rows / np.linalg.norm(rows, axis=1, keepdims=True)
        return (rows @ rows.T)[np.triu_indices(rows.shape[0], k=1)]

    ref_rows = np.concatenate([forward(x, W2)[0] for x in inputs])
    test_rows = np.concatenate([forward(x, W2_BROKEN)[0] for x in inputs])
    rho = np.corrcoef(ranks(sims(ref_rows)), ranks(sims(test_rows)))[0, 1]
    got = t.get(("logits", "spearman"), (None,))[0]
    check(got is not None and abs(got - rho) < 1e-4,
          "logits spearman %s vs numpy %.6g" % (got, rho), r)
    # the same budget on the model itself holds
    r = mopt("compare", good, good, "--golden", golden, "--budget", budget)
    check(r.returncode == 0 and "all 2 rules hold" in r.stdout, "budget holds on itself", r)
    # stat: mean with a threshold its direction comes from the metric
    with open(budget, "w") as f:
        f.write("- metric: top1\n  stat: mean\n  threshold: 1.0\n")
    r = mopt("compare", good, broken, "--golden", golden, "--budget", budget)
    check(r.returncode == (1 if agree < 1 else 0), "top1 mean budget (agreement %.3f)" % agree, r)

    # 3. stored references: used unless --recompute
    stored = os.path.join(tmp, "stored")
    for k, x in enumerate(inputs[:3]):
        d = os.path.join(stored, "test_data_set_%d" % k)
        os.makedirs(d)
        np.save(os.path.join(d, "input_0.npy"), x)
        lo, fe = forward(x, W2_BROKEN)  # the broken model's outputs as references
        np.save(os.path.join(d, "output_0.npy"), lo.astype(np.float32))
        np.save(os.path.join(d, "output_1.npy"), fe.astype(np.float32))
    r = mopt("compare", good, broken, "--golden", stored)
    t = table(r.stdout)
    check(r.returncode == 0 and "references: stored" in r.stdout, "stored references", r)
    check(t.get(("logits", "cosine"), (0,))[0] > 0.99999, "broken vs its stored outputs", r)
    r = mopt("compare", good, broken, "--golden", stored, "--recompute")
    t = table(r.stdout)
    check("computed by REF" in r.stdout and t.get(("logits", "cosine"), (1,))[0] < 0.999,
          "--recompute runs REF", r)

    # 4. a folder of lone .npy files, one input set each
    flat = os.path.join(tmp, "flat")
    os.makedirs(flat)
    for name in ("b", "a"):
        np.save(os.path.join(flat, name + ".npy"), rng.standard_normal((2, 16)).astype(np.float32))
    r = mopt("compare", good, good, "--golden", flat)
    check(r.returncode == 0 and "2 input sets" in r.stdout and " a.npy " in r.stdout,
          "flat .npy golden set", r)

    # 5. int8 against fp32 on a tests/models model: finite metrics
    r = mopt("compare", os.path.join(MOBILENET, "model.onnx"), os.path.join(MOBILENET, "model.onnx"),
             "--golden", MOBILENET, "--test-set", "precision=int8", "--recompute")
    t = table(r.stdout)
    check(r.returncode == 0, "mobilenet int8 compare exits 0", r)
    check("precision=int8" in r.stdout, "TEST options shown", r)
    check(len(t) >= 5 and all(math.isfinite(v[0]) for v in t.values()),
          "mobilenet int8 metrics finite: %s" % t, r)
    check(0.9 < t.get(("logits", "cosine"), (0,))[0] < 1.0, "int8 changes the logits a little", r)

    # 6. exit code 2 with a message
    bad_budget = os.path.join(tmp, "bad.yaml")

    def bad(args, words, budget_text=None):
        if budget_text is not None:
            with open(bad_budget, "w") as f:
                f.write(budget_text)
        r = mopt("compare", *args)
        check(r.returncode == 2 and all(w in r.stderr for w in words),
              "exit 2 naming %s for %s (got %d)" % (words, args, r.returncode), r)

    bad([good, good], ["--golden"])
    bad([good], ["REF and TEST"])
    bad([good, good, "--golden", os.path.join(tmp, "nope")], ["nope"])
    bad([good, os.path.join(tmp, "missing.onnx"), "--golden", golden], ["TEST", "missing.onnx"])
    bad([good, good, "--golden", golden, "--test-set", "no_such_option=1"], ["no_such_option"])
    bad([good, good, "--golden", golden, "--test-set", "precision"], ["KEY=VALUE"])
    bad([good, good, "--golden", golden, "--frobnicate"], ["--frobnicate"])
    bad([good, good, "--golden", golden, "--budget", os.path.join(tmp, "none.yaml")], ["none.yaml"])
    bad([good, good, "--golden", golden, "--budget", bad_budget], ["unknown metric 'cosin'"],
        "- metric: cosin\n  min: 0.9\n")
    bad([good, good, "--golden", golden, "--budget", bad_budget], ["min, max or threshold"],
        "- metric: cosine\n")
    bad([good, good, "--golden", golden, "--budget", bad_budget], ["no output named 'probs'"],
        "- output: probs\n  metric: cosine\n  min: 0.9\n")
    bad([good, good, "--golden", golden, "--budget", bad_budget],
        ["argmax does not apply to output 'features'"],
        "- output: features\n  metric: argmax\n  min: 0.9\n")
    bad([good, good, "--golden", golden, "--budget", bad_budget], ["unknown key 'minimum'"],
        "- metric: cosine\n  minimum: 0.9\n")
    bad([good, good, "--golden", golden, "--budget", bad_budget], ["not valid YAML"],
        "- metric: [cosine\n")
    # a budget's topK sets k; it must agree with --top-k
    with open(bad_budget, "w") as f:
        f.write("- metric: top3\n  min: 0.9\n")
    r = mopt("compare", good, good, "--golden", golden, "--budget", bad_budget)
    check(r.returncode == 0 and ("logits", "top3") in table(r.stdout), "budget top3 sets k", r)
    bad([good, good, "--golden", golden, "--budget", bad_budget, "--top-k", "5"], ["top3"],
        "- metric: top3\n  min: 0.9\n")
    # a set without the input file
    os.makedirs(os.path.join(tmp, "holes", "test_data_set_0"))
    bad([good, good, "--golden", os.path.join(tmp, "holes")], ["input_0.npy"])

sys.exit(done())
