"""gen_elementwise.py — numpy-checked op cases for the elementwise family:
binary arithmetic with broadcasting (Add Sub Mul Div Pow Mod PRelu, variadic
Min Max Sum Mean), unary math and activations, and Clip in its attribute
(opset < 11) and input (opset >= 11) forms.

Expected values are computed with numpy (in float64 where that matters, then
rounded to the output type); Erf uses math.erf since scipy is unavailable.
Run from the repo root: python3 tests/ops/gen_elementwise.py
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opcase import Case, normal, rng  # noqa: E402

F32 = np.float32
R = rng(20240601)


def randn(shape, dtype=F32, scale=1.0):
    return normal(R, shape, dtype, scale)


def randint(shape, lo, hi, dtype):
    return R.integers(lo, hi, size=shape).astype(dtype)


def case_binary(name, op, a, b, y, opset=17, **attrs):
    c = Case(name, opset=opset)
    c.node(op, ["a", "b"], ["y"], **attrs)
    c.save({"a": a, "b": b}, {"y": y})


def case_unary(name, op, x, y, opset=17, tol=None, **attrs):
    c = Case(name, opset=opset)
    c.node(op, ["x"], ["y"], **attrs)
    if tol:
        c.tol(*tol)
    c.save({"x": x}, {"y": y})


def f64(x):
    return np.asarray(x, dtype=np.float64)


def trunc_div(a, b):
    """Integer division truncating toward zero; x / 0 gives 0 (libmopt's choice)."""
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    safe = np.where(b64 == 0, 1, b64)
    q = np.abs(a64) // np.abs(safe) * np.sign(a64) * np.sign(safe)
    return np.where(b64 == 0, 0, q).astype(np.result_type(a, b))


def gen_binary():
    # broadcasting shapes: rank 0..4, size-1 axes on both sides, odd sizes
    shapes = [
        ("same", (2, 3, 5), (2, 3, 5)),
        ("scalar", (3, 7), ()),
        ("scalar_left", (), (4, 5)),
        ("rank0", (), ()),
        ("row", (5, 7), (7,)),
        ("col", (5, 1), (1, 6)),
        ("inner1", (2, 3, 1), (2, 3, 4)),
        ("rank4", (2, 1, 3, 5), (4, 1, 5)),
        ("rank4_mid", (3, 1, 1, 9), (1, 5, 7, 1)),
        ("odd", (13, 17), (13, 1)),
        ("empty", (0, 3), (3,)),
    ]
    ops = {
        "Add": lambda a, b: a + b,
        "Sub": lambda a, b: a - b,
        "Mul": lambda a, b: a * b,
        "Div": lambda a, b: a / b,
        "Min": np.minimum,
        "Max": np.maximum,
    }
    for op, fn in ops.items():
        for tag, sa, sb in shapes:
            a = randn(sa)
            b = randn(sb)
            if op == "Div":  # keep denominators away from 0 here; edge cases below
                b = (np.abs(b) + 0.5).astype(F32) * np.where(randn(sb) < 0, -1, 1).astype(F32)
            y = fn(f64(a), f64(b)).astype(F32)
            case_binary(f"{op.lower()}_f32_{tag}", op, a, b, y)

    # Div edge values: x / 0 -> +-inf, 0 / 0 -> NaN, -0 handling
    a = np.array([1.0, -2.0, 0.0, 3.5, -0.0, 7.0], dtype=F32)
    b = np.array([0.0, 0.0, 0.0, -0.0, 2.0, -3.0], dtype=F32)
    with np.errstate(divide="ignore", invalid="ignore"):
        case_binary("div_f32_zero_edge", "Div", a, b, (a / b).astype(F32))

    # float64
    a, b = randn((3, 4), np.float64), randn((4,), np.float64)
    case_binary("add_f64_row", "Add", a, b, a + b)
    case_binary("mul_f64_row", "Mul", a, b, a * b)

    # integers (two's complement, Div truncates toward zero, x / 0 -> 0)
    for dt, tag in ((np.int64, "i64"), (np.int32, "i32")):
        a = randint((3, 5), -50, 50, dt)
        b = randint((5,), -9, 10, dt)
        b[b == 0] = 3
        case_binary(f"add_{tag}_row", "Add", a, b, a + b)
        case_binary(f"sub_{tag}_row", "Sub", a, b, a - b)
        case_binary(f"mul_{tag}_row", "Mul", a, b, a * b)
        case_binary(f"div_{tag}_row", "Div", a, b, trunc_div(a, b))
        case_binary(f"min_{tag}_row", "Min", a, b, np.minimum(a, b))
        case_binary(f"max_{tag}_row", "Max", a, b, np.maximum(a, b))
        a = np.array([7, -7, 7, -7, 0, 5, -5, 100], dtype=dt)
        b = np.array([2, 2, -2, -2, 3, 0, 0, -1], dtype=dt)
        case_binary(f"div_{tag}_trunc_and_zero", "Div", a, b, trunc_div(a, b))
        bs = np.where(b == 0, 1, b)
        case_binary(f"mod_{tag}_sign_of_divisor", "Mod", a, b, np.where(b == 0, 0, np.mod(a, bs)).astype(dt))
        case_binary(f"mod_{tag}_fmod", "Mod", a, b, np.where(b == 0, 0, np.fmod(a, bs)).astype(dt), fmod=1)
        a = randint((2, 1, 4), -20, 20, dt)
        b = randint((3, 1), -20, 20, dt)
        case_binary(f"mul_{tag}_bcast", "Mul", a, b, a * b)
    a = randint((4, 4), -1000, 1000, np.int64) * 1000000000
    b = randint((4,), 1, 1000, np.int64)
    case_binary("mul_i64_large", "Mul", a, b, a * b)

    # Mod on floats (fmod=1 required by ONNX for floats)
    a = randn((3, 7), scale=5.0)
    b = randn((7,), scale=2.0)
    b = np.where(np.abs(b) < 0.2, 0.7, b).astype(F32)
    case_binary("mod_f32_fmod", "Mod", a, b, np.fmod(f64(a), f64(b)).astype(F32), fmod=1)

    # Pow: f32 base with f32 / i64 / i32 exponents
    a = (np.abs(randn((3, 4))) + 0.1).astype(F32)
    b = randn((4,))
    case_binary("pow_f32_f32_bcast", "Pow", a, b, np.power(f64(a), f64(b)).astype(F32))
    a = randn((2, 3, 4))
    e = np.array([0, 1, 2, 3], dtype=np.int64)
    case_binary("pow_f32_i64", "Pow", a, e, np.power(f64(a), f64(e)).astype(F32))
    e = np.array([[-1], [2], [3]], dtype=np.int32)
    a = (randn((3, 5)) + 3.0).astype(F32)
    case_binary("pow_f32_i32_neg_exp", "Pow", a, e, np.power(f64(a), f64(e)).astype(F32))
    a = randn((5,))
    case_binary("pow_f32_square_scalar", "Pow", a, np.array(2.0, dtype=F32), (f64(a) ** 2).astype(F32))
    # a constant exponent of 2 runs as x*x on kernels/cpu; 3 stays with the reference kernel
    for e, shape in ((2.0, (1, 1, 1, 1)), (2.0, ()), (3.0, ())):
        x = normal(rng(7), (2, 9, 37))  # own generator: the cases after keep their data
        c = Case("pow_f32_const_%g_rank%d" % (e, len(shape)))
        c.initializer("e", np.full(shape, e, dtype=F32))
        c.node("Pow", ["x", "e"], ["y"])
        c.save({"x": x}, {"y": np.power(f64(x), e).astype(F32).reshape(np.broadcast_shapes(x.shape, shape))})

    # PRelu: slope broadcast to x
    x = randn((2, 3, 4))
    s = randn((3, 1))
    case_binary("prelu_f32_channel", "PRelu", x, s, np.where(x < 0, f64(x) * f64(s), x).astype(F32))
    s = randn((4,))
    case_binary("prelu_f32_last", "PRelu", x, s, np.where(x < 0, f64(x) * f64(s), x).astype(F32))


def gen_variadic():
    a, b, c = randn((2, 3, 4)), randn((3, 1)), randn((4,))
    for op, fn in (("Min", np.minimum), ("Max", np.maximum), ("Sum", np.add)):
        cs = Case(f"{op.lower()}_f32_3inputs_bcast")
        cs.node(op, ["a", "b", "c"], ["y"])
        cs.save({"a": a, "b": b, "c": c}, {"y": fn(fn(f64(a), f64(b)), f64(c)).astype(F32)})
        cs = Case(f"{op.lower()}_f32_1input")
        cs.node(op, ["a"], ["y"])
        cs.save({"a": a}, {"y": a})
    cs = Case("mean_f32_3inputs_bcast")
    cs.node("Mean", ["a", "b", "c"], ["y"])
    cs.save({"a": a, "b": b, "c": c}, {"y": ((f64(a) + f64(b) + f64(c)) / 3).astype(F32)})
    ia, ib, ic = randint((3, 4), -9, 9, np.int64), randint((4,), -9, 9, np.int64), randint((), -9, 9, np.int64)
    for op, fn in (("Min", np.minimum), ("Max", np.maximum)):
        cs = Case(f"{op.lower()}_i64_3inputs")
        cs.node(op, ["a", "b", "c"], ["y"])
        cs.save({"a": ia, "b": ib, "c": ic}, {"y": fn(fn(ia, ib), ic)})


def erf(x):
    return np.vectorize(math.erf)(f64(x))


def sigmoid(x):
    x = f64(x)
    return 1.0 / (1.0 + np.exp(-x))


def softplus(x):
    x = f64(x)
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)


def gen_unary():
    shape = (3, 4, 5)
    x = randn(shape, scale=2.0)
    pos = (np.abs(randn(shape, scale=2.0)) + 0.05).astype(F32)
    unit = (R.uniform(-0.95, 0.95, shape)).astype(F32)
    big = (R.uniform(1.05, 5.0, shape)).astype(F32)
    cases = [
        ("Sqrt", pos, np.sqrt, {}, 17),
        ("Exp", x, np.exp, {}, 17),
        ("Log", pos, np.log, {}, 17),
        ("Neg", x, np.negative, {}, 17),
        ("Abs", x, np.abs, {}, 17),
        ("Reciprocal", pos * np.where(x < 0, -1, 1).astype(F32), np.reciprocal, {}, 17),
        ("Erf", x, erf, {}, 17),
        ("Tanh", x, np.tanh, {}, 17),
        ("Relu", x, lambda v: np.maximum(v, 0), {}, 17),
        ("Sigmoid", x, sigmoid, {}, 17),
        ("HardSwish", x * 2, lambda v: v * np.clip(v / 6 + 0.5, 0, 1), {}, 17),
        ("Floor", x, np.floor, {}, 17),
        ("Ceil", x, np.ceil, {}, 17),
        ("Sign", np.concatenate([x.ravel(), np.zeros(3, F32)]), np.sign, {}, 17),
        ("Sin", x, np.sin, {}, 17),
        ("Cos", x, np.cos, {}, 17),
        ("Tan", unit, np.tan, {}, 17),
        ("Atan", x, np.arctan, {}, 17),
        ("Asin", unit, np.arcsin, {}, 17),
        ("Acos", unit, np.arccos, {}, 17),
        ("Sinh", x, np.sinh, {}, 17),
        ("Cosh", x, np.cosh, {}, 17),
        ("Asinh", x, np.arcsinh, {}, 17),
        ("Acosh", big, np.arccosh, {}, 17),
        ("Atanh", unit, np.arctanh, {}, 17),
        ("Softplus", x * 3, softplus, {}, 17),
        ("Softsign", x, lambda v: v / (1 + np.abs(v)), {}, 17),
        ("Mish", x, lambda v: v * np.tanh(softplus(v)), {}, 18),
        ("Gelu", x, lambda v: 0.5 * v * (1 + erf(v / math.sqrt(2))), {}, 20),
        ("Gelu", x, lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3))),
         {"approximate": "tanh"}, 20),
        ("LeakyRelu", x, lambda v: np.where(v < 0, 0.01 * v, v), {}, 17),
        ("LeakyRelu", x, lambda v: np.where(v < 0, 0.2 * v, v), {"alpha": 0.2}, 17),
        ("HardSigmoid", x, lambda v: np.clip(0.2 * v + 0.5, 0, 1), {}, 17),
        ("HardSigmoid", x, lambda v: np.clip(0.3 * v + 0.4, 0, 1), {"alpha": 0.3, "beta": 0.4}, 17),
        ("Elu", x, lambda v: np.where(v < 0, np.expm1(v), v), {}, 17),
        ("Elu", x, lambda v: np.where(v < 0, 0.5 * np.expm1(v), v), {"alpha": 0.5}, 17),
        ("Selu", x, lambda v: np.where(v > 0, 1.0507009873554805 * v,
                                       1.0507009873554805 * 1.6732632423543772 * np.expm1(v)), {}, 17),
        ("Selu", x, lambda v: np.where(v > 0, 2.0 * v, 2.0 * 1.5 * np.expm1(v)),
         {"alpha": 1.5, "gamma": 2.0}, 17),
        ("Celu", x, lambda v: np.maximum(v, 0) + np.minimum(0, 0.7 * np.expm1(v / 0.7)), {"alpha": 0.7}, 12),
        ("ThresholdedRelu", x, lambda v: np.where(v > 0.5, v, 0), {"alpha": 0.5}, 17),
    ]
    seen = {}
    for op, inp, fn, attrs, opset in cases:
        k = seen.get(op, 0)
        seen[op] = k + 1
        name = f"{op.lower()}_f32" + (f"_attrs{k}" if k else "")
        if op == "Gelu" and attrs:
            name = "gelu_f32_tanh"
        y = fn(f64(inp)).astype(F32)
        case_unary(name, op, inp, y, opset=opset, **attrs)

    # Round: halves go to even
    xr = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49, -0.51, 3.7, -3.2], dtype=F32)
    case_unary("round_f32_half_even", "Round", xr, np.round(xr), opset=11)
    # Sigmoid far out (no overflow)
    xs = np.array([-100.0, -30.0, -1.0, 0.0, 1.0, 30.0, 100.0], dtype=F32)
    case_unary("sigmoid_f32_extremes", "Sigmoid", xs, sigmoid(xs).astype(F32))
    case_unary("softplus_f32_extremes", "Softplus", xs, softplus(xs).astype(F32))
    # edge values producing NaN / inf (the runner matches NaN with NaN, inf with inf)
    xe = np.array([4.0, 0.0, -0.0, -1.0, np.inf, 1e-30], dtype=F32)
    with np.errstate(divide="ignore", invalid="ignore"):
        case_unary("sqrt_f32_edge", "Sqrt", xe, np.sqrt(xe))
        case_unary("log_f32_edge", "Log", xe, np.log(xe))
        case_unary("reciprocal_f32_edge", "Reciprocal", xe, np.reciprocal(xe))
    # rank 0 and empty
    case_unary("exp_f32_rank0", "Exp", np.array(0.75, F32), np.exp(np.array(0.75, F32)))
    case_unary("relu_f32_empty", "Relu", np.zeros((2, 0, 3), F32), np.zeros((2, 0, 3), F32))
    # float64
    xd = randn((4, 5), np.float64)
    case_unary("exp_f64", "Exp", xd, np.exp(xd))
    case_unary("tanh_f64", "Tanh", xd, np.tanh(xd))
    case_unary("sigmoid_f64", "Sigmoid", xd, sigmoid(xd))
    # integers
    for dt, tag in ((np.int64, "i64"), (np.int32, "i32")):
        xi = randint((3, 7), -100, 100, dt)
        xi[0, 0] = 0
        case_unary(f"neg_{tag}", "Neg", xi, -xi)
        case_unary(f"abs_{tag}", "Abs", xi, np.abs(xi))
        case_unary(f"sign_{tag}", "Sign", xi, np.sign(xi))
        case_unary(f"relu_{tag}", "Relu", xi, np.maximum(xi, 0), opset=14)


def gen_clip():
    x = randn((3, 4, 5), scale=2.0)
    # opset 6: attributes
    c = Case("clip_f32_opset6_attrs", opset=6)
    c.node("Clip", ["x"], ["y"], min=-0.5, max=1.25)
    c.save({"x": x}, {"y": np.clip(x, F32(-0.5), F32(1.25))})
    c = Case("clip_f32_opset6_min_only", opset=6)
    c.node("Clip", ["x"], ["y"], min=0.0)
    c.save({"x": x}, {"y": np.maximum(x, 0)})
    c = Case("clip_f32_opset6_no_bounds", opset=6)
    c.node("Clip", ["x"], ["y"])
    c.save({"x": x}, {"y": x})
    # opset 11 / 13: optional inputs
    lo, hi = np.array(-0.75, F32), np.array(0.5, F32)
    c = Case("clip_f32_opset11_inputs", opset=11)
    c.node("Clip", ["x", "lo", "hi"], ["y"])
    c.save({"x": x, "lo": lo, "hi": hi}, {"y": np.clip(x, lo, hi)})
    c = Case("clip_f32_opset13_omitted_min", opset=13)
    c.node("Clip", ["x", "", "hi"], ["y"])
    c.save({"x": x, "hi": hi}, {"y": np.minimum(x, hi)})
    c = Case("clip_f32_opset13_min_only", opset=13)
    c.node("Clip", ["x", "lo"], ["y"])
    c.save({"x": x, "lo": lo}, {"y": np.maximum(x, lo)})
    c = Case("clip_f32_opset13_no_bounds", opset=13)
    c.node("Clip", ["x"], ["y"])
    c.save({"x": x}, {"y": x})
    c = Case("clip_f32_opset13_initializers", opset=13)  # bounds known at load time (Relu6)
    c.initializer("lo", np.array(0.0, F32)).initializer("hi", np.array(6.0, F32))
    c.node("Clip", ["x", "lo", "hi"], ["y"])
    x6 = x * 4
    c.save({"x": x6}, {"y": np.clip(x6, 0, 6)})
    c = Case("clip_f32_opset13_min_gt_max", opset=13)
    c.node("Clip", ["x", "lo", "hi"], ["y"])
    lo2, hi2 = np.array(1.0, F32), np.array(-1.0, F32)
    c.save({"x": x, "lo": lo2, "hi": hi2}, {"y": np.minimum(np.maximum(x, lo2), hi2)})
    xi = randint((4, 6), -100, 100, np.int64)
    c = Case("clip_i64_opset13", opset=13)
    c.node("Clip", ["x", "lo", "hi"], ["y"])
    lo3, hi3 = np.array(-20, np.int64), np.array(35, np.int64)
    c.save({"x": xi, "lo": lo3, "hi": hi3}, {"y": np.clip(xi, lo3, hi3)})
    xi = randint((4, 6), -100, 100, np.int32)
    c = Case("clip_i32_opset13_omitted_min", opset=13)
    c.node("Clip", ["x", "", "hi"], ["y"])
    hi4 = np.array(10, np.int32)
    c.save({"x": xi, "hi": hi4}, {"y": np.minimum(xi, hi4)})


def gen_symbolic():
    """Inputs declared with symbolic dims: load-time inference keeps symbols."""
    a, b = randn((2, 5, 3)), randn((5, 1))
    c = Case("add_f32_symbolic_dims")
    c.node("Add", ["a", "b"], ["t"]).node("Relu", ["t"], ["y"])
    c.save({"a": a, "b": b}, {"y": np.maximum(f64(a) + f64(b), 0).astype(F32)},
           input_shapes={"a": ["batch", "seq", 3], "b": ["seq", 1]})
    c = Case("mul_f32_symbolic_vs_fixed")
    c.node("Mul", ["a", "b"], ["y"])
    a, b = randn((4, 1)), randn((4, 6))
    c.save({"a": a, "b": b}, {"y": (f64(a) * f64(b)).astype(F32)}, input_shapes={"a": ["n", 1]})


def main():
    gen_binary()
    gen_variadic()
    gen_unary()
    gen_clip()
    gen_symbolic()


if __name__ == "__main__":
    main()
