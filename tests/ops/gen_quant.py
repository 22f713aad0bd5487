"""gen_quant.py — op cases for QuantizeLinear/DequantizeLinear (per-tensor,
per-axis, blocked; u8 i8 u16 i16; ties round to even; saturation; f16
scales), DynamicQuantizeLinear, MatMulInteger (zero points per tensor and
per row/column, batched) and QLinearMatMul. Expected outputs from numpy.

Run from the repo root: python3 tests/ops/gen_quant.py
"""
import numpy as np

from opcase import Case, rng

R = rng(71)

RANGES = {np.uint8: (0, 255), np.int8: (-128, 127), np.uint16: (0, 65535), np.int16: (-32768, 32767)}


def quant(x, s, zp, dt):
    lo, hi = RANGES[dt]
    q = np.rint(x.astype(np.float32) / s.astype(np.float32)).astype(np.float64) + zp
    return np.clip(q, lo, hi).astype(dt)


x = (R.standard_normal((2, 3, 4)) * 40).astype(np.float32)
x.flat[:4] = [0.5, 1.5, 2.5, -2.5]  # ties to even
for dt in (np.uint8, np.int8, np.uint16, np.int16):
    name = np.dtype(dt).name
    s = np.array(0.5, np.float32)
    zp = np.array(3 if dt in (np.uint8, np.uint16) else -2, dt)
    c = Case(f"quantize_{name}", opset=21)
    c.node("QuantizeLinear", ["x", "s", "z"], ["y"])
    c.save({"x": x, "s": s, "z": zp}, {"y": quant(x, s, zp.astype(np.float64), dt)})
    q = quant(x, s, zp.astype(np.float64), dt)
    c = Case(f"dequantize_{name}", opset=21)
    c.node("DequantizeLinear", ["q", "s", "z"], ["y"])
    c.save({"q": q, "s": s, "z": zp},
           {"y": ((q.astype(np.float32) - zp.astype(np.float32)) * s).astype(np.float32)})
s_ax = np.array([0.25, 1.0, 3.0], np.float32)
zp_ax = np.array([0, 10, 250], np.uint8)
c = Case("quantize_axis1", opset=21)
c.node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1)
c.save({"x": x, "s": s_ax, "z": zp_ax},
       {"y": quant(x, s_ax.reshape(1, 3, 1), zp_ax.reshape(1, 3, 1).astype(np.float64), np.uint8)})
s_bl = R.uniform(0.1, 1, (2, 3, 2)).astype(np.float32)
sb = np.repeat(s_bl, 2, axis=2)
c = Case("quantize_blocked", opset=21)
c.node("QuantizeLinear", ["x", "s"], ["y"], axis=2, block_size=2)
c.save({"x": x, "s": s_bl}, {"y": quant(x, sb, 0.0, np.uint8)})
qi = R.integers(-128, 127, (3, 4)).astype(np.int8)
s16 = np.array(0.125, np.float16)
c = Case("dequantize_int8_f16scale", opset=21)
c.node("DequantizeLinear", ["q", "s"], ["y"])
c.save({"q": qi, "s": s16}, {"y": (qi.astype(np.float32) * np.float32(s16)).astype(np.float16)})


def dyn(x):
    mx, mn = max(0.0, float(x.max())), min(0.0, float(x.min()))
    s = np.float32((mx - mn) if mx != mn else 1.0) / np.float32(255)
    zp = np.rint(np.clip(np.float32(0) - np.float32(mn) / s, 0, 255))
    y = np.clip(np.rint(x / s) + zp, 0, 255).astype(np.uint8)
    return y, np.array(s, np.float32), np.array(zp, np.uint8)


for tag, xv in (("mixed", R.standard_normal((3, 4)).astype(np.float32)),
                ("positive", R.uniform(1, 5, (5,)).astype(np.float32))):
    y, s, z = dyn(xv)
    c = Case(f"dynamicquantize_{tag}", opset=11)
    c.node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])
    c.save({"x": xv}, {"y": y, "s": s, "z": z})

a = R.integers(0, 255, (2, 3, 5)).astype(np.uint8)
b = R.integers(-128, 127, (5, 4)).astype(np.int8)
za = np.array([3, 100, 7], np.uint8)
zb = np.array(-5, np.int8)
ref = (a.astype(np.int32) - za.reshape(1, 3, 1)) @ (b.astype(np.int32) - np.int32(zb))
c = Case("matmulinteger_zp_rows", opset=10)
c.node("MatMulInteger", ["a", "b", "za", "zb"], ["y"])
c.save({"a": a, "b": b, "za": za, "zb": zb}, {"y": ref.astype(np.int32)})
c = Case("matmulinteger_nozp", opset=10)
c.node("MatMulInteger", ["a", "b"], ["y"])
c.save({"a": a, "b": b}, {"y": (a.astype(np.int32) @ b.astype(np.int32)).astype(np.int32)})

a2 = R.integers(0, 255, (3, 6)).astype(np.uint8)
b2 = R.integers(0, 255, (6, 2)).astype(np.uint8)
sa, sb, sy = np.float32(0.02), np.float32(0.01), np.float32(0.3)
zqa, zqb, zy = np.uint8(120), np.uint8(130), np.uint8(128)
acc = (a2.astype(np.int32) - int(zqa)) @ (b2.astype(np.int32) - int(zqb))
y = np.clip(np.rint(acc * np.float64(np.float32(sa * sb / sy)) + int(zy)), 0, 255).astype(np.uint8)
c = Case("qlinearmatmul_u8", opset=10)
c.node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])
c.save({"a": a2, "sa": np.array(sa), "za": np.array(zqa), "b": b2, "sb": np.array(sb),
        "zb": np.array(zqb), "sy": np.array(sy), "zy": np.array(zy)}, {"y": y})
