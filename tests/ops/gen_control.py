"""gen_control.py — op cases for the "control" family (If, Loop, Scan) under
tests/ops/data/control/: subgraphs that read outer-scope values (graph inputs
and initializers, two levels deep), If branches of different output shapes,
a while-Loop whose trip count depends on the data, nested control flow, Scan
with input/output axes and directions, and the batched Scan of opset 8 with
ragged sequence_lens.

Expected outputs come from numpy (the semantics written out below), never
from libmopt; each case is also run through ONNX Runtime here and must agree
with numpy. Several cases have two data sets
that take different branches or trip counts, so that one session sees
outputs of different shapes.

Run from the repo root: python3 tests/ops/gen_control.py
"""
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as T

from opcase import Case, DATA_DIR, rng, _c_order

R = rng(31)
SUB = "control/"


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def graph(nodes, name, inputs, outputs, inits=()):
    return helper.make_graph(nodes, name, inputs, outputs, list(inits))


def add_data_set(path, k, inputs, outputs):
    ds = os.path.join(path, f"test_data_set_{k}")
    os.makedirs(ds, exist_ok=True)
    for i, v in enumerate(inputs.values()):
        np.save(os.path.join(ds, f"input_{i}.npy"), _c_order(v))
    for i, v in enumerate(outputs.values()):
        np.save(os.path.join(ds, f"output_{i}.npy"), _c_order(v))


def check_ort(path, sets):
    """ONNX Runtime must agree with the numpy references."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(os.path.join(path, "model.onnx"), so,
                                providers=["CPUExecutionProvider"])
    for inputs, outputs in sets:
        got = sess.run(None, inputs)
        for g, (name, want) in zip(got, outputs.items()):
            assert g.shape == want.shape, (path, name, g.shape, want.shape)
            np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6, err_msg=f"{path} {name}")


def case(name, nodes, inits, sets, opset=16, ort_check=True):
    c = Case(SUB + name, opset=opset)
    for n in nodes:
        c.nodes.append(n)
    for k, v in inits.items():
        c.initializer(k, v)
    path = c.save(*sets[0])
    for k, s in enumerate(sets[1:], start=1):
        add_data_set(path, k, *s)
    if ort_check:
        check_ort(path, sets)


# ---- If: branches read graph inputs and an outer initializer -------------------------

w = R.standard_normal(3).astype(np.float32)
then_g = graph([helper.make_node("Mul", ["x", "w"], ["xw"]),
                helper.make_node("Add", ["xw", "y"], ["t"])],
               "then", [], [vi("t", T.FLOAT, [2, 3])])
else_g = graph([helper.make_node("Sub", ["x", "y"], ["d"]),
                helper.make_node("Relu", ["d"], ["e"])],
               "else", [], [vi("e", T.FLOAT, [2, 3])])
nodes = [helper.make_node("If", ["c"], ["z"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Add", ["z", "x"], ["out"])]
sets = []
for cond in (True, False):
    x = R.standard_normal((2, 3)).astype(np.float32)
    y = R.standard_normal((2, 3)).astype(np.float32)
    z = x * w + y if cond else np.maximum(x - y, 0)
    sets.append(({"c": np.array(cond), "x": x, "y": y}, {"out": (z + x).astype(np.float32)}))
case("if_capture", nodes, {"w": w}, sets)

# ---- If: the branches give different shapes ----------------------------------------

then_g = graph([helper.make_node("Concat", ["x", "x"], ["cc"], axis=0)], "then", [],
               [vi("cc", T.FLOAT, [8])])
else_g = graph([helper.make_node("ReduceSum", ["x"], ["rs"], keepdims=1)], "else", [],
               [vi("rs", T.FLOAT, [1])])
nodes = [helper.make_node("If", ["c"], ["z"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Mul", ["z", "z"], ["out"])]
sets = []
for cond in (False, True):
    x = R.standard_normal(4).astype(np.float32)
    z = np.concatenate([x, x]) if cond else np.sum(x, keepdims=True)
    sets.append(({"c": np.array(cond), "x": x}, {"out": (z * z).astype(np.float32)}))
case("if_shapes_differ", nodes, {}, sets)

# ---- Loop: a while loop, the trip count decided by the data ----------------------------

two = np.array(2.0, dtype=np.float32)
body = graph([helper.make_node("Mul", ["acc", "two"], ["a2"]),
              helper.make_node("Add", ["a2", "x"], ["acc2"]),
              helper.make_node("ReduceSum", ["acc2"], ["s"], keepdims=0),
              helper.make_node("Less", ["s", "limit"], ["cond_out"]),
              helper.make_node("Identity", ["i"], ["i_out"])],
             "body",
             [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("acc", T.FLOAT, [3])],
             [vi("cond_out", T.BOOL, []), vi("acc2", T.FLOAT, [3]), vi("acc2_scan", T.FLOAT, [3]),
              vi("i_out", T.INT64, [])])
# acc2 is both carried and scanned: an Identity gives the scan output its own name
body.node.append(helper.make_node("Identity", ["acc2"], ["acc2_scan"]))
nodes = [helper.make_node("Loop", ["", "go", "x"], ["acc_final", "accs", "iters"], body=body)]
sets = []
for limit in (10.0, 200.0):
    x = np.abs(R.standard_normal(3)).astype(np.float32) + 0.5
    acc, accs, its, i = x.copy(), [], [], 0
    while True:
        acc = acc * 2 + x
        accs.append(acc.copy())
        its.append(i)
        i += 1
        if not acc.sum() < limit:
            break
    sets.append(({"go": np.array(True), "x": x, "limit": np.array(limit, dtype=np.float32)},
                 {"acc_final": acc.astype(np.float32), "accs": np.stack(accs).astype(np.float32),
                  "iters": np.array(its, dtype=np.int64)}))
case("loop_while", nodes, {"two": two}, sets)

# ---- Loop with M and no condition, an If inside reading two scopes out -------------------

then_g = graph([helper.make_node("Add", ["v", "a"], ["tv"])], "then", [], [vi("tv", T.FLOAT, [2])])
else_g = graph([helper.make_node("Mul", ["v", "a"], ["ev"])], "else", [], [vi("ev", T.FLOAT, [2])])
body = graph([helper.make_node("Greater", ["i", "k"], ["gt"]),
              helper.make_node("If", ["gt"], ["v2"], then_branch=then_g, else_branch=else_g),
              helper.make_node("Identity", ["cond_in"], ["cond_out"]),
              helper.make_node("Identity", ["v2"], ["v2_scan"])],
             "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("v", T.FLOAT, [2])],
             [vi("cond_out", T.BOOL, []), vi("v2", T.FLOAT, [2]), vi("v2_scan", T.FLOAT, [2])])
nodes = [helper.make_node("Loop", ["m", "", "v0"], ["v_final", "vs"], body=body)]
sets = []
for m, k in ((5, 2), (3, 0)):
    a = R.standard_normal(2).astype(np.float32)
    v0 = R.standard_normal(2).astype(np.float32)
    v, vs = v0.copy(), []
    for i in range(m):
        v = v + a if i > k else v * a
        vs.append(v.copy())
    sets.append(({"m": np.array(m, dtype=np.int64), "v0": v0, "k": np.array(k, dtype=np.int64),
                  "a": a},
                 {"v_final": v.astype(np.float32), "vs": np.stack(vs).astype(np.float32)}))
case("loop_nested_if", nodes, {}, sets)

# ---- Loop of zero iterations: carried values pass through, scans are empty --------------

body = graph([helper.make_node("Add", ["v", "v"], ["v2"]),
              helper.make_node("Identity", ["cond_in"], ["cond_out"]),
              helper.make_node("Identity", ["v2"], ["v2_scan"])],
             "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("v", T.FLOAT, [2])],
             [vi("cond_out", T.BOOL, []), vi("v2", T.FLOAT, [2]), vi("v2_scan", T.FLOAT, [2])])
nodes = [helper.make_node("Loop", ["m", "", "v0"], ["v_final", "vs"], body=body)]
v0 = R.standard_normal(2).astype(np.float32)
case("loop_zero_trips", nodes, {},
     [({"m": np.array(0, dtype=np.int64), "v0": v0},
       {"v_final": v0, "vs": np.zeros((0, 2), dtype=np.float32)})])

# ---- Scan (opset 16): input/output axes and directions, a captured input ----------------

Tn = 5
body = graph([helper.make_node("Mul", ["x1", "x2"], ["p"]),
              helper.make_node("Mul", ["p", "b"], ["pb"]),
              helper.make_node("Add", ["s", "pb"], ["s2"]),
              helper.make_node("Sub", ["x1", "x2"], ["d"]),
              helper.make_node("Identity", ["s2"], ["s2_scan"])],
             "body", [vi("s", T.FLOAT, [2]), vi("x1", T.FLOAT, [2]), vi("x2", T.FLOAT, [2])],
             [vi("s2", T.FLOAT, [2]), vi("s2_scan", T.FLOAT, [2]), vi("d", T.FLOAT, [2])])
nodes = [helper.make_node("Scan", ["s0", "X1", "X2"], ["s_final", "Y1", "Y2"], body=body,
                          num_scan_inputs=2, scan_input_axes=[1, 0], scan_input_directions=[0, 1],
                          scan_output_axes=[1, -2], scan_output_directions=[0, 1])]
s0 = R.standard_normal(2).astype(np.float32)
X1 = R.standard_normal((2, Tn)).astype(np.float32)
X2 = R.standard_normal((Tn, 2)).astype(np.float32)
b = R.standard_normal(2).astype(np.float32)
s, y1, y2 = s0.copy(), np.zeros((2, Tn), np.float32), np.zeros((Tn, 2), np.float32)
for t in range(Tn):
    x1, x2 = X1[:, t], X2[Tn - 1 - t]
    s = s + x1 * x2 * b
    y1[:, t] = s
    y2[Tn - 1 - t] = x1 - x2
case("scan_axes", nodes, {},
     [({"s0": s0, "X1": X1, "X2": X2, "b": b}, {"s_final": s, "Y1": y1, "Y2": y2})])

# ---- Scan (opset 8): a batch axis and ragged sequence_lens ------------------------------

body = graph([helper.make_node("Add", ["s", "x"], ["s2"]),
              helper.make_node("Identity", ["s2"], ["y"])],
             "body", [vi("s", T.FLOAT, [3]), vi("x", T.FLOAT, [3])],
             [vi("s2", T.FLOAT, [3]), vi("y", T.FLOAT, [3])])
nodes = [helper.make_node("Scan", ["lens", "s0", "X"], ["s_final", "Y"], body=body,
                          num_scan_inputs=1, directions=[1])]
B, S = 2, 4
lens = np.array([4, 2], dtype=np.int64)
s0 = R.standard_normal((B, 3)).astype(np.float32)
X = R.standard_normal((B, S, 3)).astype(np.float32)
sf, Y = np.zeros((B, 3), np.float32), np.zeros((B, S, 3), np.float32)
for bi in range(B):
    s = s0[bi].copy()
    L = int(lens[bi])
    for t in range(L):
        s = s + X[bi, L - 1 - t]  # reversed within the row's own length
        Y[bi, t] = s
    sf[bi] = s
case("scan8_lens", nodes, {}, [({"lens": lens, "s0": s0, "X": X}, {"s_final": sf, "Y": Y})],
     opset=8)

print("wrote control cases under", os.path.join(DATA_DIR, SUB))
