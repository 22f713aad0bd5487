"""gen_misc.py — op cases for BitCast, Hann/Hamming/BlackmanWindow
(periodic and symmetric, output_datatype), LRN, Det (2-D, batched,
singular), SwiGLU, TensorScatter (linear with write indices, circular) and
Scatter (opset 9). Expected outputs from numpy.

Run from the repo root: python3 tests/ops/gen_misc.py
"""
import numpy as np

from opcase import Case, normal, rng

R = rng(91)


def f(*s):
    return normal(R, s)


for src, dst, onnx_t in ((np.float32, np.int32, 6), (np.int64, np.float64, 11),
                         (np.uint16, np.int16, 5)):
    x = (f(3, 4) if src == np.float32 else R.integers(0, 1000, (3, 4))).astype(src)
    c = Case(f"bitcast_{np.dtype(src).name}_{np.dtype(dst).name}", opset=26)
    c.node("BitCast", ["x"], ["y"], to=onnx_t)
    c.save({"x": x}, {"y": x.view(dst)})

for name in ("HannWindow", "HammingWindow", "BlackmanWindow"):
    for periodic in (0, 1):
        n = 10
        N = n if periodic else n - 1
        k = np.arange(n, dtype=np.float64)
        if name == "HannWindow":
            y = np.sin(np.pi * k / N) ** 2
        elif name == "HammingWindow":
            y = 25 / 46 - (21 / 46) * np.cos(2 * np.pi * k / N)
        else:
            y = 0.42 - 0.5 * np.cos(2 * np.pi * k / N) + 0.08 * np.cos(4 * np.pi * k / N)
        c = Case(f"{name.lower()}_p{periodic}", opset=17)
        c.node(name, ["n"], ["y"], periodic=periodic, output_datatype=11)
        c.save({"n": np.array(n, np.int64)}, {"y": y})

x = f(2, 5, 3, 2)
for size in (3, 4):
    sq = np.zeros_like(x, dtype=np.float64)
    for ch in range(5):
        lo, hi = max(0, ch - (size - 1) // 2), min(5, ch + int(np.ceil((size - 1) / 2)) + 1)
        sq[:, ch] = (x[:, lo:hi].astype(np.float64) ** 2).sum(1)
    y = (x / (2.0 + 1e-3 / size * sq) ** 0.6).astype(np.float32)
    c = Case(f"lrn_size{size}", opset=13)
    c.node("LRN", ["x"], ["y"], size=size, alpha=1e-3, beta=0.6, bias=2.0)
    c.save({"x": x}, {"y": y})

m = f(3, 4, 4)
m[1, 3] = m[1, 0]  # singular
c = Case("det_batched", opset=11)
c.node("Det", ["x"], ["y"])
c.tol(1e-5, 1e-4)
c.save({"x": m}, {"y": np.linalg.det(m.astype(np.float64)).astype(np.float32)})

a, b = f(2, 6), f(2, 6)
for alpha in (1.0, 1.7):
    y = (a * (1 / (1 + np.exp(-alpha * a.astype(np.float64)))) * b).astype(np.float32)
    c = Case(f"swiglu_alpha{alpha}", opset=28)
    c.node("SwiGLU", ["a", "b"], ["y"], alpha=alpha)
    c.save({"a": a, "b": b}, {"y": y})

cache = f(2, 3, 5, 4)
upd = f(2, 3, 2, 4)
wi = np.array([1, 4], np.int64)
for mode in ("linear", "circular"):
    y = cache.copy()
    for bi in range(2):
        for s in range(2):
            pos = wi[bi] + s if mode == "circular" else min(wi[bi], 3) + s
            y[bi, :, pos % 5] = upd[bi, :, s]
    w = wi if mode == "circular" else np.array([1, 3], np.int64)
    c = Case(f"tensorscatter_{mode}", opset=24)
    c.node("TensorScatter", ["c", "u", "w"], ["y"], mode=mode, axis=-2)
    c.save({"c": cache, "u": upd, "w": w}, {"y": y})

data = f(3, 4)
idx = np.array([[1, 0], [2, 3], [0, 0]], np.int64)
upd = f(3, 2)
y = data.copy()
for i in range(3):
    for j in range(2):
        y[i, idx[i, j]] = upd[i, j]
c = Case("scatter_opset9_axis1", opset=9)
c.node("Scatter", ["d", "i", "u"], ["y"], axis=1)
c.save({"d": data, "i": idx, "u": upd}, {"y": y})
