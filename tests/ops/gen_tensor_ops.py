"""gen_tensor_ops.py — op cases for CumSum/CumProd (exclusive, reverse,
negative axis, ints), TopK (largest/smallest, ties keep the lower index,
axis), Hardmax (opset 11 coercion and 13), Shrink, Swish, OneHot (axis,
negative and out-of-range indices), SpaceToDepth/DepthToSpace (DCR, CRD),
EyeLike (k, dtype), GatherND (batch_dims), NonZero, Compress (axis and
flattened) and ReverseSequence. Expected outputs from numpy.

Run from the repo root: python3 tests/ops/gen_tensor_ops.py
"""
import numpy as np

from opcase import Case, normal, rng

R = rng(61)


def f(*s):
    return normal(R, s)


def cum(x, axis, excl, rev, prod):
    op = np.cumprod if prod else np.cumsum
    y = np.flip(x, axis) if rev else x
    z = op(y, axis=axis, dtype=x.dtype)
    if excl:
        z = np.concatenate([np.full_like(np.take(z, [0], axis), 1 if prod else 0),
                            np.take(z, range(z.shape[axis] - 1), axis)], axis)
    return np.flip(z, axis) if rev else z


for name in ("CumSum", "CumProd"):
    for dt in (np.float32, np.int32, np.int64, np.float64):
        x = (R.integers(-3, 4, (3, 4)) if dt in (np.int32, np.int64) else f(3, 4)).astype(dt)
        for axis, excl, rev in ((0, 0, 0), (1, 1, 0), (-1, 0, 1), (-2, 1, 1)):
            c = Case(f"{name.lower()}_{np.dtype(dt).name}_ax{axis}_e{excl}_r{rev}",
                     opset=26 if name == "CumProd" else 14)
            c.node(name, ["x", "a"], ["y"], exclusive=excl, reverse=rev)
            c.save({"x": x, "a": np.array(axis, np.int64)},
                   {"y": cum(x, axis, excl, rev, name == "CumProd")})


def topk(x, k, axis, largest):
    xs = x.astype(np.float64)
    idx = np.argsort(-xs if largest else xs, axis=axis, kind="stable")
    idx = np.take(idx, range(k), axis)
    return np.take_along_axis(x, idx, axis), idx.astype(np.int64)


for dt in (np.float32, np.int64, np.uint8):
    x = R.integers(0, 5, (3, 6)).astype(dt)  # many ties
    for axis, largest, k in ((-1, 1, 3), (0, 0, 2), (1, 0, 6)):
        v, i = topk(x, k, axis, largest)
        c = Case(f"topk_{np.dtype(dt).name}_ax{axis}_l{largest}_k{k}", opset=11)
        c.node("TopK", ["x", "k"], ["v", "i"], axis=axis, largest=largest)
        c.save({"x": x, "k": np.array([k], np.int64)}, {"v": v, "i": i})

x = f(2, 3, 4)
for opset, axis in ((13, -1), (13, 1), (11, 1), (11, 0)):
    if opset >= 13:
        a = np.argmax(x, axis=axis)
        y = (np.expand_dims(a, axis) == np.arange(x.shape[axis]).reshape(
            [-1 if d == axis % 3 else 1 for d in range(3)])).astype(np.float32)
    else:
        x2 = x.reshape(int(np.prod(x.shape[:axis])), -1)
        y = np.eye(x2.shape[1], dtype=np.float32)[np.argmax(x2, 1)].reshape(x.shape)
    c = Case(f"hardmax_opset{opset}_axis{axis}", opset=opset)
    c.node("Hardmax", ["x"], ["y"], axis=axis)
    c.save({"x": x}, {"y": y})

x = f(3, 5) * 2
for lambd, bias in ((0.5, 0.0), (1.0, 0.25)):
    y = np.where(x < -lambd, x + bias, np.where(x > lambd, x - bias, 0)).astype(np.float32)
    c = Case(f"shrink_l{lambd}_b{bias}", opset=13)
    c.node("Shrink", ["x"], ["y"], lambd=lambd, bias=bias)
    c.save({"x": x}, {"y": y})
c = Case("swish_alpha", opset=24)
c.node("Swish", ["x"], ["y"], alpha=1.5)
c.save({"x": x}, {"y": (x / (1 + np.exp(-1.5 * x.astype(np.float64)))).astype(np.float32)})

ind = np.array([[0, 3, -1], [7, 2, -4]], np.int64)
for axis in (-1, 0, 1):
    depth = 5
    vals = np.array([2, 9], np.int32)
    i = np.where(ind < 0, ind + depth, ind)
    oh = (np.expand_dims(i, -1) == np.arange(depth)).astype(np.int32)
    oh = np.moveaxis(oh, -1, axis)
    y = np.where(oh == 1, vals[1], vals[0]).astype(np.int32)
    c = Case(f"onehot_axis{axis}", opset=11)
    c.node("OneHot", ["i", "d", "v"], ["y"], axis=axis)
    c.save({"i": ind, "d": np.array(depth, np.int64), "v": vals}, {"y": y})

x = f(2, 8, 3, 2)
b = 2
for mode in ("DCR", "CRD"):
    n, cc, h, w = x.shape
    if mode == "DCR":
        y = x.reshape(n, b, b, cc // 4, h, w).transpose(0, 3, 4, 1, 5, 2).reshape(n, cc // 4, h * b, w * b)
    else:
        y = x.reshape(n, cc // 4, b, b, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(n, cc // 4, h * b, w * b)
    c = Case(f"depthtospace_{mode.lower()}", opset=13)
    c.node("DepthToSpace", ["x"], ["y"], blocksize=b, mode=mode)
    c.save({"x": x}, {"y": y})
    xs = f(1, 3, 4, 6)
    n, cc, h, w = xs.shape
    r = xs.reshape(n, cc, h // b, b, w // b, b)
    y = (r.transpose(0, 3, 5, 1, 2, 4) if mode == "DCR" else r.transpose(0, 1, 3, 5, 2, 4))
    c = Case(f"spacetodepth_{mode.lower()}", opset=28 if mode == "CRD" else 13)
    if mode == "CRD":
        c.node("SpaceToDepth", ["x"], ["y"], blocksize=b, mode=mode)
    else:
        c.node("SpaceToDepth", ["x"], ["y"], blocksize=b)
    c.save({"x": xs}, {"y": y.reshape(n, cc * b * b, h // b, w // b)})

for k, dt in ((0, None), (1, 7), (-2, 1)):
    x = np.zeros((3, 4), np.float32)
    y = np.eye(3, 4, k=k, dtype=np.int64 if dt == 7 else np.float32)
    c = Case(f"eyelike_k{k}", opset=9)
    kw = {"k": k}
    if dt:
        kw["dtype"] = dt
    c.node("EyeLike", ["x"], ["y"], **kw)
    c.save({"x": x}, {"y": y})

data = f(2, 3, 4)
c = Case("gathernd_k2", opset=13)
idx = np.array([[0, 1], [1, -1], [1, 2]], np.int64)
c.node("GatherND", ["d", "i"], ["y"])
c.save({"d": data, "i": idx}, {"y": np.stack([data[0, 1], data[1, 2], data[1, 2]])})
c = Case("gathernd_batch1", opset=13)
idx = np.array([[[2], [0]], [[1], [1]]], np.int64)
y = np.stack([data[bi][idx[bi, :, 0]] for bi in range(2)])
c.node("GatherND", ["d", "i"], ["y"], batch_dims=1)
c.save({"d": data, "i": idx}, {"y": y})

x = np.array([[1, 0, 3], [0, 0, 2]], np.int32)
c = Case("nonzero_int32", opset=13)
c.node("NonZero", ["x"], ["y"])
c.save({"x": x}, {"y": np.array(np.nonzero(x), np.int64)})
xf = np.array([0.0, -0.0, 1.5, 0.0, -2], np.float32)
c = Case("nonzero_float_negzero", opset=13)
c.node("NonZero", ["x"], ["y"])
c.save({"x": xf}, {"y": np.array(np.nonzero(xf), np.int64)})

x = f(3, 4)
cond = np.array([True, False, True], np.bool_)
c = Case("compress_axis0", opset=11)
c.node("Compress", ["x", "c"], ["y"], axis=0)
c.save({"x": x, "c": cond}, {"y": np.compress(cond, x, axis=0)})
cond2 = np.array([False, True, True, False, True], np.bool_)
c = Case("compress_flat", opset=11)
c.node("Compress", ["x", "c"], ["y"])
c.save({"x": x, "c": cond2}, {"y": np.compress(cond2, x)})

x = f(4, 3, 2)
lens = np.array([4, 1, 3], np.int64)
y = x.copy()
for bi, L in enumerate(lens):
    y[:L, bi] = x[:L, bi][::-1]
c = Case("reversesequence_time0", opset=10)
c.node("ReverseSequence", ["x", "l"], ["y"], batch_axis=1, time_axis=0)
c.save({"x": x, "l": lens}, {"y": y})
