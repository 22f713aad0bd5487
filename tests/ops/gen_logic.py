"""gen_logic.py — numpy-checked op cases for the logic family: comparisons
and boolean ops with broadcasting, Where (3-way broadcast, several dtypes),
IsNaN/IsInf, Cast across dtypes (f16 rounding, subnormals, inf, NaN; bf16
through torch, an independent implementation) and CastLike.

Float -> integer casts only use in-range values: out-of-range results are
undefined in ONNX (libmopt saturates, numpy wraps), so they are not compared.
Run from the repo root: python3 tests/ops/gen_logic.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opcase import Case, normal, onnx_dtype, rng  # noqa: E402

F32 = np.float32
R = rng(20240602)


def randn(shape, dtype=F32):
    return normal(R, shape, dtype)


def randint(shape, lo, hi, dtype):
    return R.integers(lo, hi, size=shape).astype(dtype)


def gen_compare():
    ops = {
        "Equal": np.equal,
        "Less": np.less,
        "Greater": np.greater,
        "LessOrEqual": np.less_equal,
        "GreaterOrEqual": np.greater_equal,
    }
    for op, fn in ops.items():
        opset = 12 if op.endswith("OrEqual") else 13
        # f32 with broadcasting and some exactly equal values and a NaN
        a = np.round(randn((2, 3, 5)) * 2) / 2
        b = np.round(randn((3, 1)) * 2) / 2
        a[0, 0, 0] = np.nan
        for tag, sa, sb in (("bcast", a, b), ("scalar", a, np.array(0.5, F32))):
            c = Case(f"{op.lower()}_f32_{tag}", opset=opset)
            c.node(op, ["a", "b"], ["y"])
            with np.errstate(invalid="ignore"):
                c.save({"a": sa, "b": sb}, {"y": fn(sa, sb)})
        for dt, tag in ((np.int64, "i64"), (np.int32, "i32"), (np.uint8, "u8"), (np.float64, "f64")):
            ia = randint((4, 1, 3), 0, 5, dt)
            ib = randint((5, 1), 0, 5, dt)
            c = Case(f"{op.lower()}_{tag}_bcast", opset=opset)
            c.node(op, ["a", "b"], ["y"])
            c.save({"a": ia, "b": ib}, {"y": fn(ia, ib)})
    ba = R.integers(0, 2, (3, 4)).astype(bool)
    bb = R.integers(0, 2, (4,)).astype(bool)
    c = Case("equal_bool_bcast", opset=13)
    c.node("Equal", ["a", "b"], ["y"])
    c.save({"a": ba, "b": bb}, {"y": ba == bb})


def gen_bool():
    a = R.integers(0, 2, (2, 3, 4)).astype(bool)
    b = R.integers(0, 2, (3, 1)).astype(bool)
    for op, fn in (("And", np.logical_and), ("Or", np.logical_or), ("Xor", np.logical_xor)):
        c = Case(f"{op.lower()}_bool_bcast", opset=7)
        c.node(op, ["a", "b"], ["y"])
        c.save({"a": a, "b": b}, {"y": fn(a, b)})
        c = Case(f"{op.lower()}_bool_same", opset=7)
        c.node(op, ["a", "b"], ["y"])
        a2 = R.integers(0, 2, (2, 3, 4)).astype(bool)
        c.save({"a": a, "b": a2}, {"y": fn(a, a2)})
    c = Case("not_bool", opset=1)
    c.node("Not", ["x"], ["y"])
    c.save({"x": a}, {"y": np.logical_not(a)})


def gen_where():
    def where_case(name, cond, x, y, opset=16):
        c = Case(name, opset=opset)
        c.node("Where", ["c", "x", "y"], ["z"])
        c.save({"c": cond, "x": x, "y": y}, {"z": np.where(cond, x, y)})

    cond = R.integers(0, 2, (2, 1, 4)).astype(bool)
    where_case("where_f32_bcast3", cond, randn((3, 1)), randn((1,)))
    where_case("where_f32_same", R.integers(0, 2, (3, 5)).astype(bool), randn((3, 5)), randn((3, 5)))
    where_case("where_f32_scalar_cond", np.array(True), randn((2, 3)), randn((3,)))
    where_case("where_f32_scalars_xy", R.integers(0, 2, (4, 7)).astype(bool), np.array(-1.0, F32),
               np.array(2.5, F32))
    where_case("where_i64_rank4", R.integers(0, 2, (2, 1, 3, 1)).astype(bool),
               randint((1, 5, 1, 4), -9, 9, np.int64), randint((4,), -9, 9, np.int64))
    where_case("where_i32_bcast", R.integers(0, 2, (5, 1)).astype(bool), randint((1, 3), -9, 9, np.int32),
               randint((5, 3), -9, 9, np.int32))
    where_case("where_bool", R.integers(0, 2, (3, 4)).astype(bool), R.integers(0, 2, (4,)).astype(bool),
               R.integers(0, 2, (3, 1)).astype(bool))
    where_case("where_f16", R.integers(0, 2, (2, 3)).astype(bool), randn((2, 3), np.float16),
               randn((3,), np.float16))
    where_case("where_u8_opset9", R.integers(0, 2, (3, 3)).astype(bool), randint((3, 3), 0, 255, np.uint8),
               randint((3,), 0, 255, np.uint8), opset=9)
    where_case("where_f32_empty", np.zeros((0, 3), bool), randn((1, 3)), randn((3,)))


def cast_case(name, x, to_np, y=None, opset=13):
    c = Case(name, opset=opset)
    to = onnx_dtype(np.zeros((), to_np))
    c.node("Cast", ["x"], ["y"], to=to)
    c.tol(0, 0)  # conversions are exact (or correctly rounded): compare bit for bit
    with np.errstate(over="ignore", invalid="ignore"):
        c.save({"x": x}, {"y": x.astype(to_np) if y is None else y})


def gen_cast():
    # float -> integer: truncation toward zero, values in range
    xf = np.array([[-3.99, -2.5, -1.0, -0.5, 0.0, 0.49], [0.5, 1.5, 2.5, 7.99, 100.2, -100.7]], F32)
    cast_case("cast_f32_to_i64", xf, np.int64)
    cast_case("cast_f32_to_i32", xf, np.int32)
    cast_case("cast_f32_to_i16", xf, np.int16)
    cast_case("cast_f32_to_i8", xf, np.int8)
    xp = np.abs(xf) * 2
    cast_case("cast_f32_to_u8", xp, np.uint8)
    cast_case("cast_f32_to_u16", xp * 300, np.uint16)
    cast_case("cast_f32_to_u32", xp * 1e6, np.uint32)
    cast_case("cast_f32_to_u64", xp * 1e6, np.uint64)
    cast_case("cast_f64_to_i64", (xf.astype(np.float64) * 1e9), np.int64)
    cast_case("cast_f32_to_f64", randn((3, 4)), np.float64)
    xd = R.standard_normal((3, 4)) * 1e3
    cast_case("cast_f64_to_f32", xd, F32)
    # f16: round to nearest even, overflow to inf, subnormals, -0, inf, NaN
    sub = 2.0**-24
    xh = np.array([0.1, -0.3333, 1.0 + 2**-11, 1.0 + 3 * 2**-11, 65504.0, 65519.0, 65520.0, 1e6, -1e6,
                   sub, sub / 2, sub * 0.51, sub * 1.5, sub * 2.5, 2.0**-14 * 0.999, 6.1e-5,
                   0.0, -0.0, np.inf, -np.inf, np.nan, 3.14159], F32)
    cast_case("cast_f32_to_f16_rounding", xh, np.float16)
    cast_case("cast_f64_to_f16_rounding", xh.astype(np.float64) * (1 + 2**-30), np.float16)
    cast_case("cast_f64_to_f16_ties", np.array([1.0 + 2**-11, 1.0 + 2**-11 + 2**-40, 2049.0, 2051.0,
                                                sub * 0.5, sub * 0.5 + 2**-60], np.float64), np.float16)
    hx = np.array([0.0, -0.0, 1.0, -2.5, 65504.0, np.inf, -np.inf, np.nan, 6e-8, 5.96e-8, 6.1e-5,
                   1e-6, 0.333], np.float16)
    cast_case("cast_f16_to_f32", hx, F32)
    cast_case("cast_f16_to_f64", hx, np.float64)
    cast_case("cast_f16_to_i32", np.array([-3.5, 0.0, 2.75, 1000.0, -0.9], np.float16), np.int32)
    cast_case("cast_i64_to_f16", np.array([0, 1, -7, 2049, 65504, 65520, 100000], np.int64), np.float16)
    # integers: widen, narrow (wraps like numpy / C), to float
    xi = np.array([0, 1, -1, 127, 128, -129, 255, 256, 70000, -70000, 2**31 + 5, -(2**31) - 7], np.int64)
    cast_case("cast_i64_to_i32_wrap", xi, np.int32)
    cast_case("cast_i64_to_i8_wrap", xi, np.int8)
    cast_case("cast_i64_to_u8_wrap", xi, np.uint8)
    cast_case("cast_i64_to_u16_wrap", xi, np.uint16)
    cast_case("cast_i64_to_f32", np.array([0, -5, 2**24 + 1, 2**40 + 3, -(2**53) - 1, 123456789], np.int64), F32)
    cast_case("cast_i64_to_f64", xi, np.float64)
    cast_case("cast_i32_to_i64", randint((3, 5), -(2**31), 2**31 - 1, np.int32), np.int64)
    cast_case("cast_i32_to_f32", randint((3, 5), -1000, 1000, np.int32), F32)
    cast_case("cast_u8_to_f32", randint((2, 8), 0, 256, np.uint8), F32)
    cast_case("cast_u8_to_i64", randint((2, 8), 0, 256, np.uint8), np.int64)
    cast_case("cast_i8_to_i32", randint((2, 8), -128, 128, np.int8), np.int32)
    cast_case("cast_i8_to_u8", randint((2, 8), -128, 128, np.int8), np.uint8)
    cast_case("cast_i16_to_f32", randint((2, 8), -30000, 30000, np.int16), F32)
    cast_case("cast_u16_to_i32", randint((2, 8), 0, 65536, np.uint16), np.int32)
    cast_case("cast_u32_to_i64", randint((2, 8), 0, 2**32, np.uint32), np.int64)
    cast_case("cast_u64_to_f64", np.array([0, 1, 2**63 + 2**12, 2**64 - 1], np.uint64), np.float64)
    cast_case("cast_u64_to_i64", np.array([0, 5, 2**63, 2**64 - 1], np.uint64), np.int64)
    cast_case("cast_i64_to_u64", np.array([0, 5, -1, -(2**63)], np.int64), np.uint64)
    # bool
    xb = np.array([0.0, -0.0, 0.5, -2.0, np.nan, np.inf], F32)
    cast_case("cast_f32_to_bool", xb, bool)
    cast_case("cast_i64_to_bool", np.array([0, 1, -1, 2**40], np.int64), bool)
    bx = R.integers(0, 2, (3, 4)).astype(bool)
    cast_case("cast_bool_to_f32", bx, F32)
    cast_case("cast_bool_to_i64", bx, np.int64)
    cast_case("cast_bool_to_u8", bx, np.uint8)
    cast_case("cast_f32_to_f32_same", randn((2, 2)), F32)
    cast_case("cast_f32_empty", np.zeros((0, 4), F32), np.int64)
    cast_case("cast_f32_rank0_opset6", np.array(2.75, F32), np.int32, opset=6)
    # bf16 round trip: expected values from torch (independent bf16 implementation)
    try:
        # optional (not in requirements.txt): this generator is run by hand; CI and the main job never run it
        import torch
    except ImportError:  # pragma: no cover
        torch = None
    if torch is not None:
        from onnx import TensorProto

        xbf = np.concatenate([randn((20,)) * 100,
                              np.array([1.0 + 2**-8, 1.0 + 3 * 2**-8, 1.0 + 2**-8 + 2**-20, 3.4e38, -3.4e38,
                                        1e-39, -1e-40, 0.0, -0.0, np.inf, -np.inf, np.nan], F32)]).astype(F32)
        want = torch.from_numpy(xbf).to(torch.bfloat16).to(torch.float32).numpy()
        c = Case("cast_f32_to_bf16_to_f32", opset=13).tol(0, 0)
        c.node("Cast", ["x"], ["b"], to=TensorProto.BFLOAT16)
        c.node("Cast", ["b"], ["y"], to=TensorProto.FLOAT)
        c.save({"x": xbf}, {"y": want})
        xi2 = np.array([0, 1, -3, 257, 259, 1000001, -(2**40) - 2**31], np.int64)
        want = torch.from_numpy(xi2).to(torch.bfloat16).to(torch.float64).numpy()
        c = Case("cast_i64_to_bf16_to_f64", opset=13).tol(0, 0)
        c.node("Cast", ["x"], ["b"], to=TensorProto.BFLOAT16)
        c.node("Cast", ["b"], ["y"], to=TensorProto.DOUBLE)
        c.save({"x": xi2}, {"y": want})
        # bf16 -> f16 (both narrow): via exact bf16 values
        xb16 = torch.from_numpy(randn((12,)) * 10).to(torch.bfloat16)
        c = Case("cast_f32_to_bf16_to_f16", opset=13).tol(0, 0)
        c.node("Cast", ["x"], ["b"], to=TensorProto.BFLOAT16)
        c.node("Cast", ["b"], ["y"], to=TensorProto.FLOAT16)
        xin = xb16.to(torch.float32).numpy()
        c.save({"x": xin}, {"y": xin.astype(np.float16)})
    # CastLike (opset 15)
    c = Case("castlike_f32_to_i64", opset=15)
    c.node("CastLike", ["x", "like"], ["y"])
    c.save({"x": xf, "like": np.zeros((1,), np.int64)}, {"y": xf.astype(np.int64)})
    c = Case("castlike_i32_to_f16", opset=15).tol(0, 0)
    c.node("CastLike", ["x", "like"], ["y"])
    xi3 = randint((2, 3), -2000, 2000, np.int32)
    c.save({"x": xi3, "like": np.zeros((), np.float16)}, {"y": xi3.astype(np.float16)})


def gen_isnan_isinf():
    x = np.array([[0.0, np.nan, np.inf], [-np.inf, -1.5, np.nan]], F32)
    c = Case("isnan_f32", opset=13)
    c.node("IsNaN", ["x"], ["y"])
    c.save({"x": x}, {"y": np.isnan(x)})
    c = Case("isinf_f32", opset=10)
    c.node("IsInf", ["x"], ["y"])
    c.save({"x": x}, {"y": np.isinf(x)})
    c = Case("isinf_f32_positive_only", opset=10)
    c.node("IsInf", ["x"], ["y"], detect_negative=0)
    c.save({"x": x}, {"y": np.isposinf(x)})
    c = Case("isinf_f64_negative_only", opset=10)
    c.node("IsInf", ["x"], ["y"], detect_positive=0)
    xd = x.astype(np.float64)
    c.save({"x": xd}, {"y": np.isneginf(xd)})


def gen_symbolic():
    """A mask-style chain on symbolic dims: Less -> Where -> Cast."""
    x, t = randn((2, 7)), randn((7,))
    c = Case("less_where_cast_symbolic", opset=13)
    c.initializer("ten", np.array(10.0, F32)).initializer("low", np.array(-4.0, F32))
    c.node("Less", ["x", "t"], ["m"]).node("Mul", ["x", "ten"], ["x10"])
    c.node("Where", ["m", "x10", "low"], ["w"]).node("Cast", ["w"], ["y"], to=7)
    w = np.where(x < t, x.astype(np.float64) * 10, -4.0).astype(F32)
    c.save({"x": x, "t": t}, {"y": w.astype(np.int64)}, input_shapes={"x": ["batch", "seq"], "t": ["seq"]})


def main():
    gen_compare()
    gen_bool()
    gen_where()
    gen_cast()
    gen_isnan_isinf()
    gen_symbolic()


if __name__ == "__main__":
    main()
