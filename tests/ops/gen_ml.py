"""gen_ml.py — op cases for the "ml" family beyond the ONNX node tests (which
cover only TfIdfVectorizer mode TF, Binarizer on f32, a 2-D
ArrayFeatureExtractor and TreeEnsemble with SUM): TfIdfVectorizer IDF and
TFIDF with weights and skips over i64 tokens, Binarizer on i64 and f64, a
1-D ArrayFeatureExtractor, TreeEnsemble with AVERAGE, MIN and MAX over two
trees, every comparison mode and NaN routed by missing_value_tracks_true.
Expected outputs from plain Python/numpy written from the ONNX spec.

Run from the repo root: python3 tests/ops/gen_ml.py
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from opcase import Case, rng

R = rng(77)
ML = {"ai.onnx.ml": 5}


def tfidf_ref(x, pool, counts, idx, min_n, max_n, skip, mode, weights):
    """Counts every n-gram of the pool in each row, with skip distances."""
    grams, g = {}, 0
    for i, start in enumerate(counts):
        n = i + 1
        end = counts[i + 1] if i + 1 < len(counts) else len(pool)
        for s in range(start, end, n):
            if min_n <= n <= max_n:
                grams[tuple(pool[s:s + n])] = idx[g]
            g += 1
    size = max(idx) + 1
    rows = x if x.ndim == 2 else x[None]
    out = np.zeros((len(rows), size), np.float32)
    for r, row in enumerate(rows):
        for d in range(1, skip + 2):
            for s in range(len(row)):
                for n in range(min_n, max_n + 1):
                    if n == 1 and d > 1:
                        continue
                    last = s + d * (n - 1)
                    if last >= len(row):
                        continue
                    key = tuple(int(row[s + d * t]) for t in range(n))
                    if key in grams:
                        out[r, grams[key]] += 1
    w = np.asarray(weights if weights else [1.0] * size, np.float32)
    if mode == "IDF":
        out = np.where(out > 0, w, 0).astype(np.float32)
    elif mode == "TFIDF":
        out = out * w
    return out if x.ndim == 2 else out[0]


pool = [4, 9, 2, 4, 9, 9, 2, 7, 7]  # unigrams 4 9 2, bigrams (4,9) (9,2), (7,7)
counts, idx = [0, 3], [0, 1, 2, 3, 4, 5]
x = R.integers(1, 10, (2, 9)).astype(np.int64)
x[0, :4] = [4, 9, 2, 4]
W6 = [0.5, 2.0, 1.5, 3.0, 0.25, 4.0]
for mode, weights in (("IDF", W6), ("TFIDF", W6), ("TFIDF", None)):
    for skip in (0, 2):
        c = Case(f"tfidf_{mode.lower()}_{'w' if weights else 'now'}_skip{skip}", opset=9)
        attrs = dict(mode=mode, min_gram_length=1, max_gram_length=2, max_skip_count=skip,
                     ngram_counts=counts, ngram_indexes=idx, pool_int64s=pool)
        if weights:
            attrs["weights"] = weights
        c.node("TfIdfVectorizer", ["x"], ["y"], **attrs)
        c.save({"x": x}, {"y": tfidf_ref(x, pool, counts, idx, 1, 2, skip, mode, weights)})

for dt in (np.int64, np.float64):
    xb = (R.integers(-5, 6, (3, 4)) if dt == np.int64 else R.standard_normal((3, 4))).astype(dt)
    c = Case(f"binarizer_{np.dtype(dt).name}", opset=17, domain_opsets={"ai.onnx.ml": 1})
    c.node("Binarizer", ["x"], ["y"], domain="ai.onnx.ml", threshold=0.5)
    c.save({"x": xb}, {"y": (xb > 0.5).astype(dt)})

xa = R.standard_normal(6).astype(np.float32)
ia = np.array([5, 0, 5, 2], np.int64)
c = Case("array_feature_extractor_1d", opset=17, domain_opsets={"ai.onnx.ml": 1})
c.node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain="ai.onnx.ml")
c.save({"x": xa, "i": ia}, {"y": xa[ia][None]})

# Two trees over 3 features, 2 targets. Tree 0 (root 0): node0 x0 < 0.3 ?
# node1 : leaf0; node1 x1 >= -0.2 ? leaf1 : leaf2 (NaN goes true). Tree 1
# (root 2): node2 x2 == 1.0 ? leaf3 : node3; node3 x0 != 0.0 ? node4 : leaf4;
# node4 x1 > 0.5 ? leaf5 : leaf6 (NaN goes true at node4).
modes = [1, 2, 4, 5, 3]
feat = [0, 1, 2, 0, 1]
split = [0.3, -0.2, 1.0, 0.0, 0.5]
t_id, t_leaf = [1, 1, 3, 4, 5], [0, 1, 1, 0, 1]
f_id, f_leaf = [0, 2, 3, 4, 6], [1, 1, 0, 1, 1]
missing = [0, 1, 0, 0, 1]
leaf_t = [0, 1, 0, 1, 0, 1, 0]
leaf_w = [1.5, -2.0, 3.25, 0.5, -1.0, 4.0, 2.5]


def tree_leaf(row, node):
    while True:
        v, s, m = row[feat[node]], split[node], modes[node]
        go = (np.isnan(v) and missing[node]) or {1: v < s, 2: v >= s, 3: v > s, 4: v == s,
                                                  5: v != s}[m]
        nxt, leaf = (t_id[node], t_leaf[node]) if go else (f_id[node], f_leaf[node])
        if leaf:
            return nxt
        node = nxt


xt = R.standard_normal((6, 3)).astype(np.float32)
xt[1, 1] = np.nan
xt[2, 2] = 1.0
xt[3, 0] = 0.0
xt[4, 1] = np.nan
for agg, name in ((0, "average"), (2, "min"), (3, "max")):
    init = {0: 0.0, 2: np.finfo(np.float64).max, 3: -np.finfo(np.float64).max}[agg]
    want = np.full((6, 2), init)
    if agg == 0:
        want[:] = 0
    for r in range(6):
        for root in (0, 2):
            lf = tree_leaf(xt[r].astype(np.float64), root)
            t, w = leaf_t[lf], leaf_w[lf]
            if agg == 0:
                want[r, t] += w / 2
            elif agg == 2:
                want[r, t] = min(want[r, t], w)
            else:
                want[r, t] = max(want[r, t], w)
    want = want.astype(np.float32)  # untouched MIN/MAX targets overflow to inf in f32
    c = Case(f"tree_ensemble_{name}", opset=17, domain_opsets=ML)
    c.node("TreeEnsemble", ["x"], ["y"], domain="ai.onnx.ml", n_targets=2,
           aggregate_function=agg, tree_roots=[0, 2], nodes_featureids=feat,
           nodes_truenodeids=t_id, nodes_trueleafs=t_leaf, nodes_falsenodeids=f_id,
           nodes_falseleafs=f_leaf, nodes_missing_value_tracks_true=missing,
           leaf_targetids=leaf_t,
           nodes_modes=helper.make_tensor("m", TensorProto.UINT8, [5], modes),
           nodes_splits=numpy_helper.from_array(np.array(split, np.float32)),
           leaf_weights=numpy_helper.from_array(np.array(leaf_w, np.float32)))
    c.save({"x": xt}, {"y": want})
