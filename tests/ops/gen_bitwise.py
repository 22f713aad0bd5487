"""gen_bitwise.py — op cases for the "bitwise" family: BitShift (LEFT/RIGHT,
unsigned types; signed from opset 26 is covered by the ONNX node tests),
BitwiseAnd/Or/Xor with broadcasting on every integer width, BitwiseNot.
Expected outputs from numpy.

Run from the repo root: python3 tests/ops/gen_bitwise.py
"""
import numpy as np

from opcase import Case, rng

R = rng(21)


def ints(dt, shape):
    info = np.iinfo(dt)
    return R.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)


for dt in (np.uint8, np.uint16, np.uint32, np.uint64):
    x = ints(dt, (3, 5))
    s = R.integers(0, np.iinfo(dt).bits, size=(5,)).astype(dt)
    c = Case(f"bitshift_left_{np.dtype(dt).name}", opset=11)
    c.node("BitShift", ["x", "s"], ["y"], direction="LEFT")
    c.save({"x": x, "s": s}, {"y": np.left_shift(x, s)})
    c = Case(f"bitshift_right_{np.dtype(dt).name}", opset=11)
    c.node("BitShift", ["x", "s"], ["y"], direction="RIGHT")
    c.save({"x": x, "s": s}, {"y": np.right_shift(x, s)})

for dt in (np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64):
    a, b = ints(dt, (2, 3, 4)), ints(dt, (3, 1))
    for op, fn in (("BitwiseAnd", np.bitwise_and), ("BitwiseOr", np.bitwise_or),
                   ("BitwiseXor", np.bitwise_xor)):
        c = Case(f"{op.lower()}_{np.dtype(dt).name}_broadcast", opset=18)
        c.node(op, ["a", "b"], ["y"])
        c.save({"a": a, "b": b}, {"y": fn(a, b)})
    c = Case(f"bitwisenot_{np.dtype(dt).name}", opset=18)
    c.node("BitwiseNot", ["a"], ["y"])
    c.save({"a": a}, {"y": np.invert(a)})

c = Case("bitwiseand_empty", opset=18)
a = np.zeros((0, 3), np.int32)
c.node("BitwiseAnd", ["a", "b"], ["y"])
c.save({"a": a, "b": np.ones((3,), np.int32)}, {"y": a})
