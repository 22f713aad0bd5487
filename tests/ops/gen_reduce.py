"""gen_reduce.py — op cases for the "reduce" family: Reduce{Sum,Mean,Max,
Min,Prod,L1,L2,SumSquare,LogSum,LogSumExp} in the attribute form (ReduceSum
before opset 13, the others before 18) and the input form, keepdims,
noop_with_empty_axes, int dtypes, empty tensors, symbolic inputs; ArgMax and
ArgMin with keepdims and select_last_index. Expected outputs from numpy.

Run from the repo root: python3 tests/ops/gen_reduce.py
"""
import numpy as np

from opcase import Case, rng

R = rng(11)


def ints(*v):
    return np.array(v, dtype=np.int64)


def np_logsumexp(x, axis, keepdims):
    m = np.max(x, axis=axis, keepdims=True)
    y = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return y if keepdims else np.squeeze(y, axis=axis)


REF = {
    "ReduceSum": lambda x, a, k: np.sum(x, axis=a, keepdims=k),
    "ReduceMean": lambda x, a, k: np.mean(x, axis=a, keepdims=k),
    "ReduceMax": lambda x, a, k: np.max(x, axis=a, keepdims=k),
    "ReduceMin": lambda x, a, k: np.min(x, axis=a, keepdims=k),
    "ReduceProd": lambda x, a, k: np.prod(x, axis=a, keepdims=k),
    "ReduceL1": lambda x, a, k: np.sum(np.abs(x), axis=a, keepdims=k),
    "ReduceL2": lambda x, a, k: np.sqrt(np.sum(x * x, axis=a, keepdims=k)),
    "ReduceSumSquare": lambda x, a, k: np.sum(x * x, axis=a, keepdims=k),
    "ReduceLogSum": lambda x, a, k: np.log(np.sum(x, axis=a, keepdims=k)),
    "ReduceLogSumExp": np_logsumexp,
}


def axes_input_opset(op):
    return 13 if op == "ReduceSum" else 18


def ref(op, x, axes, keepdims):
    a = None if axes is None else tuple(axes)
    x64 = x.astype(np.float64) if x.dtype == np.float32 else x
    y = REF[op](x64, a, bool(keepdims))
    return np.asarray(y).astype(x.dtype)


def reduce_case(name, op, x, axes=None, keepdims=None, form="attr", noop=None,
                input_shapes=None, opset=None):
    """form: 'attr' (axes attribute, the op's old opsets) or 'input'."""
    if opset is None:
        opset = (axes_input_opset(op) - 2 if op == "ReduceSum" else 13) if form == "attr" \
            else axes_input_opset(op)
    c = Case(name, opset=opset)
    attrs = {"keepdims": keepdims}
    ins = ["x"]
    if form == "attr":
        attrs["axes"] = axes
    else:
        attrs["noop_with_empty_axes"] = noop
        if axes is not None:
            c.initializer("axes", ints(*axes))
            ins.append("axes")
    c.node(op, ins, ["y"], **attrs)
    k = 1 if keepdims is None else keepdims
    if form == "input" and noop and not axes:
        y = x.copy()
    else:
        y = ref(op, x, axes if axes else None, k)
    c.save({"x": x}, {"y": y}, input_shapes=input_shapes)


def data_for(op, shape):
    x = R.standard_normal(shape).astype(np.float32)
    if op == "ReduceLogSum":
        x = np.abs(x) + 0.1
    if op == "ReduceProd":
        x = (np.abs(x) * 0.5 + 0.75) * np.sign(x)
    return x.astype(np.float32)


for op in REF:
    s = op[len("Reduce"):].lower()
    x = data_for(op, (3, 4, 5))
    reduce_case(f"reduce{s}_attr_axis1", op, x, axes=[1])
    reduce_case(f"reduce{s}_attr_neg_axes_nokeep", op, x, axes=[-1, 0], keepdims=0)
    reduce_case(f"reduce{s}_attr_all_axes", op, x)
    reduce_case(f"reduce{s}_input_axes_nokeep", op, x, axes=[0, 2], keepdims=0, form="input")
    reduce_case(f"reduce{s}_input_no_axes_all", op, x, keepdims=0, form="input")
    reduce_case(f"reduce{s}_input_noop_empty_axes", op, x, form="input", noop=1)
    reduce_case(f"reduce{s}_odd_shape", op, data_for(op, (7, 1, 3)), axes=[0, 1], keepdims=1)
    if op != "ReduceSum":
        # opset 13: axes still an attribute for all but ReduceSum
        reduce_case(f"reduce{s}_attr_opset11", op, x, axes=[2], keepdims=0, opset=11)

# integer reductions
for op in ("ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"):
    s = op[len("Reduce"):].lower()
    xi = R.integers(-5, 6, size=(4, 3, 2), dtype=np.int64)
    reduce_case(f"reduce{s}_int64", op, xi, axes=[1], keepdims=0)
    reduce_case(f"reduce{s}_int32", op, xi.astype(np.int32), axes=[0, 2], keepdims=1)

# empty tensors: a zero-size kept axis gives an empty output; summing over a
# zero-size axis gives the identity
x0 = np.zeros((0, 3), np.float32)
reduce_case("reducesum_empty_kept_axis", "ReduceSum", x0, axes=[1], keepdims=1, form="input")
reduce_case("reducesum_over_empty_axis", "ReduceSum", x0, axes=[0], keepdims=0, form="input")
reduce_case("reducemax_empty_kept_axis", "ReduceMax", x0, axes=[1], keepdims=0)
reduce_case("reduceprod_over_empty_axis", "ReduceProd", x0, axes=[0], keepdims=1)

# symbolic input dims
xs = R.standard_normal((2, 5, 4)).astype(np.float32)
reduce_case("reducemean_symbolic", "ReduceMean", xs, axes=[-1], keepdims=1,
            input_shapes={"x": ["batch", "seq", 4]})
reduce_case("reducesum_symbolic_input_axes", "ReduceSum", xs, axes=[1], keepdims=0, form="input",
            input_shapes={"x": ["batch", "seq", 4]})

# axes fed as a graph input (not known at load time)
c = Case("reducesum_axes_graph_input", opset=13)
c.node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)
x = R.standard_normal((3, 4, 2)).astype(np.float32)
c.save({"x": x, "axes": ints(0, -1)}, {"y": ref("ReduceSum", x, [0, -1], 0)})


# ---- ArgMax / ArgMin ----------------------------------------------------------------
def arg_case(name, op, x, axis=None, keepdims=None, last=None, opset=13):
    c = Case(name, opset=opset)
    c.node(op, ["x"], ["y"], axis=axis, keepdims=keepdims, select_last_index=last)
    a = 0 if axis is None else axis
    f = np.argmax if op == "ArgMax" else np.argmin
    if last:
        n = x.shape[a]
        y = n - 1 - f(np.flip(x, axis=a), axis=a)
    else:
        y = f(x, axis=a)
    if keepdims is None or keepdims:
        y = np.expand_dims(y, a)
    c.save({"x": x}, {"y": y.astype(np.int64)})


for op in ("ArgMax", "ArgMin"):
    s = op.lower()
    x = R.standard_normal((3, 4, 5)).astype(np.float32)
    ties = R.integers(0, 3, size=(4, 6)).astype(np.float32)
    arg_case(f"{s}_default", op, x)
    arg_case(f"{s}_axis_neg_nokeep", op, x, axis=-1, keepdims=0)
    arg_case(f"{s}_ties_first", op, ties, axis=1)
    arg_case(f"{s}_ties_select_last", op, ties, axis=1, last=1)
    arg_case(f"{s}_ties_select_last_axis0", op, ties, axis=0, keepdims=0, last=1)
    arg_case(f"{s}_int64", op, R.integers(-3, 3, size=(5, 3), dtype=np.int64), axis=0)
    arg_case(f"{s}_int32_opset11", op, R.integers(-3, 3, size=(2, 7), dtype=np.int32), axis=1,
             opset=11)
