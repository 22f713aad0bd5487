#!/usr/bin/env python3
"""gen_quality_cases.py — computes the quality metrics of `mopt compare` with
numpy, independently of tools/mopt/quality.c, writes them as cases to a text
file and runs the cmocka test test_quality on that file (suite "unit").

Each case: "case NAME METRIC N C K", a "ref" line, a "test" line (N values
each, %.17g) and "expect VALUE". Ranks for Spearman are computed with
np.unique (ties averaged), the C code sorts instead.

usage: gen_quality_cases.py TEST_QUALITY_EXECUTABLE
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

rng = np.random.default_rng(20261203)
cases = []


def add(name, metric, ref, test, expect, c=0, k=0):
    ref = np.asarray(ref, dtype=np.float64).ravel()
    test = np.asarray(test, dtype=np.float64).ravel()
    cases.append((name, metric, ref, test, float(expect), c, k))


def max_abs(r, t):
    return np.max(np.abs(t - r)) if r.size else 0.0


def max_rel(r, t):
    floor = 1e-3 * np.max(np.abs(r))
    return np.max(np.abs(t - r) / np.maximum(np.abs(r), floor))


def cosine(r, t):
    return np.dot(r, t) / (np.linalg.norm(r) * np.linalg.norm(t))


def topk(r, t, c, k):
    r, t = r.reshape(-1, c), t.reshape(-1, c)
    agree = []
    for a, b in zip(r, t):
        ta = set(np.argsort(-a, kind="stable")[:k].tolist())
        tb = set(np.argsort(-b, kind="stable")[:k].tolist())
        agree.append(len(ta & tb) / k)
    return np.mean(agree)


def ranks(x):
    _, inv, counts = np.unique(x, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    starts = ends - counts
    return ((starts + 1 + ends) / 2.0)[inv]


def spearman(x, y):
    return np.corrcoef(ranks(x), ranks(y))[0, 1]


def pairwise_spearman(r, t, c):
    def sims(a):
        a = a.reshape(-1, c)
        a = a / np.linalg.norm(a, axis=1, keepdims=True)
        s = a @ a.T
        return s[np.triu_indices(a.shape[0], k=1)]
    return spearman(sims(r), sims(t))


for trial in range(4):
    n = int(rng.integers(5, 400))
    r = rng.standard_normal(n) * 10 ** rng.uniform(-3, 3)
    t = r + rng.standard_normal(n) * 10 ** rng.uniform(-4, 0) * np.abs(r).max()
    if trial == 3:
        r[2] = 0.0  # a zero reference element: the relative floor applies
    add(f"abs{trial}", "max_abs", r, t, max_abs(r, t))
    add(f"rel{trial}", "max_rel", r, t, max_rel(r, t))
    add(f"cos{trial}", "cosine", r, t, cosine(r, t))
for trial, (rows, c, k) in enumerate([(30, 10, 1), (20, 50, 5), (8, 1000, 5), (40, 3, 2)]):
    r = rng.standard_normal(rows * c)
    t = r + rng.standard_normal(rows * c) * 0.3
    if trial == 3:  # ties: quantized logits
        r, t = np.round(r), np.round(t)
    add(f"top{trial}", "topk", r, t, topk(r, t, c, k), c, k)
for trial, n in enumerate([10, 97, 500]):
    x = rng.standard_normal(n)
    y = x + rng.standard_normal(n) * 0.7
    if trial == 1:  # ties in both
        x, y = np.round(x * 2), np.round(y * 2)
    add(f"spear{trial}", "spearman", x, y, spearman(x, y))
for trial, (rows, c) in enumerate([(5, 8), (40, 32), (25, 384)]):
    r = rng.standard_normal((rows, c))
    t = r + rng.standard_normal((rows, c)) * 0.2
    add(f"pair{trial}", "pairwise_spearman", r, t, pairwise_spearman(r, t, c), c)

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "cases.txt")
    with open(path, "w") as f:
        for name, metric, ref, test, expect, c, k in cases:
            f.write(f"case {name} {metric} {ref.size} {c} {k}\n")
            f.write("ref " + " ".join("%.17g" % v for v in ref) + "\n")
            f.write("test " + " ".join("%.17g" % v for v in test) + "\n")
            f.write("expect %.17g\n" % expect)
    sys.exit(subprocess.run([sys.argv[1], path, str(len(cases))]).returncode)
