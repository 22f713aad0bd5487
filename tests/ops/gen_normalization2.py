"""gen_normalization2.py — op cases for RMSNormalization (axes, epsilon,
broadcast scale), GroupNormalization (opset 21 per-channel scale/bias; onnx rejects
the deprecated opset 18 form), LpNormalization (p 1 and 2, axes, a zero row) and
MeanVarianceNormalization (default and custom axes). Expected outputs from
numpy.

Run from the repo root: python3 tests/ops/gen_normalization2.py
"""
import numpy as np

from opcase import Case, normal, rng

R = rng(51)


def f(*s):
    return normal(R, s)


for shape, axis in (((3, 5), -1), ((2, 3, 4), 1), ((2, 3, 2, 3), 0), ((4, 7), 1)):
    x = f(*shape)
    ax = axis % len(shape)
    sc = f(*shape[ax:])
    ms = np.mean(x.astype(np.float64) ** 2, axis=tuple(range(ax, len(shape))), keepdims=True)
    y = (x / np.sqrt(ms + 1e-3) * sc).astype(np.float32)
    c = Case(f"rmsnorm_{'x'.join(map(str, shape))}_axis{axis}", opset=23)
    c.node("RMSNormalization", ["x", "s"], ["y"], axis=axis, epsilon=1e-3)
    c.save({"x": x, "s": sc}, {"y": y})
x = f(2, 5)
sc = f(5)
c = Case("rmsnorm_default", opset=23)
c.node("RMSNormalization", ["x", "s"], ["y"])
c.save({"x": x, "s": sc}, {"y": (x / np.sqrt(np.mean(x * x, -1, keepdims=True) + 1e-5) * sc)})


def group_norm(x, g, scale, bias, eps, per_group):
    n, c = x.shape[:2]
    xr = x.reshape(n, g, -1).astype(np.float64)
    m = xr.mean(-1, keepdims=True)
    v = xr.var(-1, keepdims=True)
    y = ((xr - m) / np.sqrt(v + eps)).reshape(x.shape)
    if per_group:
        scale, bias = np.repeat(scale, c // g), np.repeat(bias, c // g)
    bshape = (1, c) + (1,) * (x.ndim - 2)
    return (y * scale.reshape(bshape) + bias.reshape(bshape)).astype(np.float32)


x = f(2, 6, 3, 2)
for opset, per_group in ((21, False),):  # opset 18 (per-group) is deprecated in onnx
    n_sb = 3 if per_group else 6
    s, b = f(n_sb), f(n_sb)
    c = Case(f"groupnorm_opset{opset}", opset=opset)
    c.node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=3, epsilon=1e-4)
    c.save({"x": x, "s": s, "b": b}, {"y": group_norm(x, 3, s, b, 1e-4, per_group)})

for p in (1, 2):
    for axis in (-1, 0, 1):
        x = f(3, 4)
        x[1, :] = 0
        x[:, 2] = 0
        n = np.sum(np.abs(x), axis=axis, keepdims=True) if p == 1 else \
            np.sqrt(np.sum(x * x, axis=axis, keepdims=True))
        y = np.where(n == 0, 0, x / np.where(n == 0, 1, n)).astype(np.float32)
        c = Case(f"lpnorm_p{p}_axis{axis}", opset=13)
        c.node("LpNormalization", ["x"], ["y"], p=p, axis=axis)
        c.save({"x": x}, {"y": y})

x = f(2, 3, 4, 5)
for axes in (None, [1], [2, 3]):
    a = (0, 2, 3) if axes is None else tuple(axes)
    m = x.mean(axis=a, keepdims=True)
    v = ((x - m) ** 2).mean(axis=a, keepdims=True)
    y = ((x - m) / np.sqrt(v + 1e-9)).astype(np.float32)
    c = Case(f"mvn_axes_{'default' if axes is None else '_'.join(map(str, axes))}", opset=13)
    kw = {} if axes is None else {"axes": axes}
    c.node("MeanVarianceNormalization", ["x"], ["y"], **kw)
    c.save({"x": x}, {"y": y})

# ---- Softmax / LogSoftmax on an axis with trailing dims (the cpu columns
# kernel: YOLOv8's DFL [1, 16, 4, A] on axis 1); own generator so the cases
# above keep their data
RS = rng(4402)


def softmax_ref(x, axis, log):
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=axis, keepdims=True))
    s = e.sum(axis=axis, keepdims=True)
    return (np.log(e / s) if log else e / s).astype(np.float32)


for shape, axis, log in (((1, 16, 4, 37), 1, False), ((2, 5, 3, 17), -3, False),
                         ((5, 2, 33), 0, True), ((3, 7, 1, 19), 1, True), ((2, 3, 1), 0, False)):
    x = normal(RS, shape, scale=4.0)
    op = "LogSoftmax" if log else "Softmax"
    c = Case(f"{op.lower()}13_cols_{'x'.join(map(str, shape))}_axis{axis}", opset=13)
    c.node(op, ["x"], ["y"], axis=axis)
    c.save({"x": x}, {"y": softmax_ref(x, axis, log)})
