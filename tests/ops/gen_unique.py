"""gen_unique.py — op cases for Unique: flattened and along an axis
(negative, size-1 and middle axes), sorted and first-occurrence order, one
to four outputs (omitted ones in the middle), every numeric dtype and bool,
NaN / -0.0 / inf, large, empty, rank-0 and symbolic inputs — and the
attributes it must refuse. Expected outputs from numpy.unique.

Run from the repo root: python3 tests/ops/gen_unique.py
"""
import numpy as np

from opcase import Case, normal, rng

R = rng(1111)


def unique_ref(x, axis, is_sorted):
    y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True,
                                 axis=axis)
    inv = inv.reshape(-1)
    if not is_sorted:  # in order of first occurrence
        order = np.argsort(idx, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        idx, cnt, inv = idx[order], cnt[order], rank[inv]
        y = np.take(x.reshape(-1) if axis is None else x, idx, axis=0 if axis is None else axis)
    return y, idx.astype(np.int64), inv.astype(np.int64), cnt.astype(np.int64)


def case(name, x, axis=None, is_sorted=None, outputs=("y", "indices", "inverse", "counts"),
         opset=11, input_shapes=None, tol=None):
    y, idx, inv, cnt = unique_ref(x, axis, is_sorted is None or is_sorted == 1)
    c = Case(f"unique_{name}", opset=opset)
    c.node("Unique", ["x"], list(outputs), axis=axis, sorted=is_sorted)
    vals = dict(zip(("y", "indices", "inverse", "counts"), (y, idx, inv, cnt)))
    if tol:
        c.tol(*tol)
    c.save({"x": x}, {k: vals[k] for k in outputs if k}, input_shapes=input_shapes)


ints = R.integers(-20, 20, (40,)).astype(np.int64)
case("i64_sorted", ints)
case("i64_unsorted", ints, is_sorted=0)
case("i64_large", R.integers(0, 3000, (10007,)).astype(np.int64), is_sorted=0)
case("f32_2d_flat", normal(R, (5, 7)).round(0))
f = np.array([1.5, np.nan, -0.0, 0.0, np.inf, -np.inf, np.nan, 1.5, 0.0, -2.0], np.float32)
case("f32_nan_zero_inf", f)
case("f32_nan_zero_inf_unsorted", f, is_sorted=0)
case("f64", normal(R, (30,), np.float64).round(1), opset=28)
for dt in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.uint64):
    lo = 0 if np.issubdtype(dt, np.unsignedinteger) else -100
    v = R.integers(lo, 100, (50,)).astype(dt)
    if dt == np.uint64:
        v[::7] = np.uint64(2**64 - 3)  # above the int64 range
    case(f"{np.dtype(dt).name}", v, is_sorted=int(R.integers(0, 2)))
case("bool", R.random((3, 9)) < 0.5)
case("f16_bridge", normal(R, (40,), np.float16).round(0), opset=28)
rows = np.array([[1, 0, 0], [1, 0, 0], [2, 3, 4], [0, 5, 1], [2, 3, 4]], np.int64)
case("axis0_rows", rows, axis=0)
case("axis0_rows_unsorted", rows, axis=0, is_sorted=0)
case("axis1_cols", rows.T.copy(), axis=1)
case("axis1_cols_unsorted", rows.T.copy(), axis=1, is_sorted=0)
x3 = R.integers(0, 2, (2, 6, 3)).astype(np.float32)
case("axis_neg_3d", x3, axis=-1)
case("axis_middle_3d", x3, axis=1, is_sorted=0)
case("axis_size1", np.arange(6, dtype=np.int32).reshape(2, 1, 3), axis=1)
case("only_y_unsorted", ints, is_sorted=0, outputs=("y",))
case("y_indices", ints, outputs=("y", "indices"))
case("omitted_middle", ints, is_sorted=0, outputs=("y", "", "", "counts"))
case("empty", np.zeros((0,), np.float32))
case("empty_axis", np.zeros((3, 0), np.int64), axis=0)
case("rank0", np.array(7, np.int64))
case("symbolic", R.integers(0, 5, (4, 6)).astype(np.int64), input_shapes={"x": ["a", "b"]})


def error(name, x, status, text, **attrs):
    c = Case(f"unique_err_{name}", opset=11)
    c.node("Unique", ["x"], ["y"], **attrs)
    c.save_error({"x": x}, {"y": np.zeros((1,), x.dtype)}, status, text)


error("axis_range", np.zeros((2, 3), np.float32), "invalid model", "axis", axis=2)
error("sorted_2", np.zeros((2, 3), np.float32), "invalid model", "sorted must be 0 or 1, not 2",
      sorted=2)
