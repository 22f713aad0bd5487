"""gen_bridge.py — op cases for the dtype bridge (lib/ops/bridge.c): ops
that implement f32 run on f16 and f64 through f32 and round once; integer
ops on i8 i16 u8 u16 u32 (and u64 where exact) through i64 or f32. Also the
native additions: u64 arithmetic and integer Pow. Expected outputs from
numpy in the tensors' own types.

Run from the repo root: python3 tests/ops/gen_bridge.py
"""
import numpy as np

from opcase import Case, rng

R = rng(101)

x32 = R.standard_normal((3, 5)).astype(np.float32)
for dt in (np.float16, np.float64):
    x = x32.astype(dt)
    name = np.dtype(dt).name
    c = Case(f"bridge_softmax_{name}", opset=13)
    c.node("Softmax", ["x"], ["y"], axis=-1)
    e = np.exp(x.astype(np.float64) - x.max(-1, keepdims=True))
    c.tol(1e-3 if dt == np.float16 else 1e-6, 1e-3 if dt == np.float16 else 1e-6)
    c.save({"x": x}, {"y": (e / e.sum(-1, keepdims=True)).astype(dt)})
    c = Case(f"bridge_reducelogsumexp_{name}", opset=18)
    c.node("ReduceLogSumExp", ["x", "a"], ["y"], keepdims=0)
    m = x.astype(np.float64).max(1)
    y = np.log(np.exp(x.astype(np.float64) - m[:, None]).sum(1)) + m
    c.tol(1e-3 if dt == np.float16 else 1e-6, 1e-3 if dt == np.float16 else 1e-6)
    c.save({"x": x, "a": np.array([1], np.int64)}, {"y": y.astype(dt)})
    c = Case(f"bridge_layernorm_{name}", opset=17)
    s = np.ones(5, dt)
    b = np.zeros(5, dt)
    xf = x.astype(np.float64)
    y = (xf - xf.mean(-1, keepdims=True)) / np.sqrt(xf.var(-1, keepdims=True) + 1e-5)
    c.node("LayerNormalization", ["x", "s", "b"], ["y"])
    c.tol(2e-3 if dt == np.float16 else 1e-5, 2e-3 if dt == np.float16 else 1e-5)
    c.save({"x": x, "s": s, "b": b}, {"y": y.astype(dt)})

for dt in (np.int8, np.int16, np.uint8, np.uint16, np.uint32):
    info = np.iinfo(dt)
    a = R.integers(info.min, info.max, (4, 3), endpoint=True).astype(dt)
    b = R.integers(max(info.min, -50), 50, (3,)).astype(dt)
    b[b == 0] = 1
    name = np.dtype(dt).name
    for op, fn in (("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply),
                   ("Max", np.maximum), ("Min", np.minimum)):
        c = Case(f"bridge_{op.lower()}_{name}", opset=14)
        c.node(op, ["a", "b"], ["y"])
        c.save({"a": a, "b": b}, {"y": fn(a, b)})
    c = Case(f"bridge_div_{name}", opset=14)
    c.node("Div", ["a", "b"], ["y"])
    q = np.trunc(a.astype(np.float64) / b.astype(np.float64)).astype(np.int64).astype(dt)
    c.save({"a": a, "b": b}, {"y": q})
    c = Case(f"bridge_reducesum_{name}", opset=13)
    c.node("ReduceSum", ["a", "ax"], ["y"], keepdims=1)
    c.save({"a": a, "ax": np.array([0], np.int64)},
           {"y": a.sum(0, keepdims=True, dtype=np.int64).astype(dt)})

u = np.array([2**64 - 1, 2**63 + 5, 7, 0], np.uint64)
v = np.array([3, 2**63, 7, 9], np.uint64)
for op, fn in (("Div", lambda p, q: p // q), ("Max", np.maximum), ("Mod", np.mod),
               ("Sub", np.subtract)):
    c = Case(f"u64_{op.lower()}", opset=14)
    c.node(op, ["a", "b"], ["y"])
    c.save({"a": u, "b": v}, {"y": fn(u, v).astype(np.uint64)})

base = np.array([[2, -3, 5], [0, 7, -1]], np.int64)
ex = np.array([3, 2, 0], np.int64)
c = Case("pow_int64_int64", opset=15)
c.node("Pow", ["a", "b"], ["y"])
c.save({"a": base, "b": ex}, {"y": np.power(base, ex)})

img = R.integers(0, 255, (1, 2, 5, 5)).astype(np.uint8)
c = Case("bridge_maxpool_uint8", opset=12)
c.node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
c.save({"x": img}, {"y": img[:, :, :4, :4].reshape(1, 2, 2, 2, 2, 2).max(axis=(3, 5))})

bx = np.array([[True, False, False], [False, False, False]])
c = Case("bridge_reducemax_bool", opset=20)
c.node("ReduceMax", ["x", "a"], ["y"], keepdims=0)
c.save({"x": bx, "a": np.array([1], np.int64)}, {"y": bx.max(1)})
