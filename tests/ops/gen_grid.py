"""gen_grid.py — cases of the "grid" op family (GridSample, AffineGrid) that the
ONNX node tests miss: odd sizes, grids far outside [-1, 1] under each padding
mode, 1-D and 3-D sampling in every mode, integer X (nearest), f64 and f16 X
(the float bridge), single-pixel axes, and error paths. Expected values come
from the numpy implementation below (written from the spec's definition: map
to pixel space, move inside by the padding mode, per-axis taps), which is also
checked against onnx.reference where that one is defined.

Run from the repo root: python3 tests/ops/gen_grid.py
"""
import itertools
import math

import numpy as np
from onnx.reference.ops.op_grid_sample import GridSample as OnnxGridSample

from opcase import Case, rng

ERR_INVALID_MODEL, ERR_SHAPE, ERR_TYPE = 5, 7, 8


def denorm(g, size, align):
    g = np.float32(g)
    if align:
        return np.float32(np.float32(g + np.float32(1)) / np.float32(2)) * np.float32(size - 1)
    return np.float32(np.float32(np.float32(g + np.float32(1)) * np.float32(size)) - 1) / np.float32(2)


def reflect(x, lo, hi):
    rng_ = hi - lo
    if rng_ <= 0:
        return lo
    if x < lo:
        k, r = divmod(lo - x, rng_)
        return lo + r if k % 2 == 0 else hi - r
    if x > hi:
        k, r = divmod(x - hi, rng_)
        return hi - r if k % 2 == 0 else lo + r
    return x


def cubic(t):
    a = -0.75

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def axis_taps(g, size, mode, pad, align):
    lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
    x = float(denorm(g, size, align))
    if mode == "nearest":
        x = float(np.rint(np.float32(x)))
    if x < lo or x > hi:
        if pad == "border":
            x = min(max(x, 0.0), size - 1.0)
        elif pad == "reflection":
            x = reflect(x, lo, hi)

    def at(i):
        if 0 <= i < size:
            return i
        if pad == "zeros":
            return None
        if pad == "border":
            return 0 if i < 0 else size - 1
        return min(max(int(reflect(float(i), lo, hi)), 0), size - 1)

    if mode == "nearest":
        return [(at(int(x)), 1.0)]
    x0 = math.floor(x)
    t = x - x0
    if mode == "linear":
        return [(at(x0), 1 - t), (at(x0 + 1), t)]
    return [(at(x0 - 1 + k), w) for k, w in enumerate(cubic(t))]


def grid_sample(X, grid, mode="linear", pad="zeros", align=0):
    N, C = X.shape[:2]
    dims = X.shape[2:]
    r = len(dims)
    out_sp = grid.shape[1:-1]
    Y = np.zeros((N, C) + out_sp, dtype=np.float64)
    for n in range(N):
        for o in np.ndindex(*out_sp):
            g = grid[(n,) + o]
            taps = [axis_taps(g[r - 1 - i], dims[i], mode, pad, align) for i in range(r)]
            for combo in itertools.product(*taps):
                if any(i is None for i, _ in combo):
                    continue
                w = np.prod([w for _, w in combo])
                idx = tuple(i for i, _ in combo)
                Y[(n, slice(None)) + o] += w * X[(n, slice(None)) + idx].astype(np.float64)
    return Y


def onnx_mode(mode, opset):
    if opset >= 20:
        return mode
    return {"linear": "bilinear", "cubic": "bicubic"}.get(mode, mode)


def gs_case(name, X, grid, mode, pad, align, opset=20, check_onnx=True, tol=None):
    y = grid_sample(X, grid, mode, pad, align)
    if check_onnx:
        ref = OnnxGridSample.eval(X, grid, mode=onnx_mode(mode, 20), padding_mode=pad,
                                  align_corners=align)
        assert np.allclose(ref.astype(np.float64), y, rtol=1e-4, atol=1e-5), name
    c = Case(name, opset=opset)
    c.node("GridSample", ["X", "grid"], ["Y"], mode=onnx_mode(mode, opset), padding_mode=pad,
           align_corners=align)
    if tol:
        c.tol(*tol)
    c.save({"X": X, "grid": grid}, {"Y": y.astype(X.dtype)})


def base(size, align):
    i = np.arange(size, dtype=np.float64)
    if align:
        return -1.0 + i * (2.0 / (size - 1)) if size > 1 else np.array([-1.0])
    return -1.0 + (2 * i + 1) / size


def affine_grid(theta, size, align):
    N = size[0]
    sp = size[2:]
    axes = [base(s, align) for s in sp]
    mesh = np.meshgrid(*axes, indexing="ij")  # outermost first: (D,) H, W
    coords = [m for m in reversed(mesh)]  # x (W), y (H)[, z (D)]
    homo = np.stack(coords + [np.ones_like(mesh[0])], axis=-1)  # (..., r + 1)
    out = np.einsum("nkj,...j->n...k", theta.astype(np.float64), homo)
    assert out.shape == (N,) + tuple(sp) + (len(sp),)
    return out.astype(np.float32)


def main():
    g = rng(7)
    # 2-D, odd sizes, grid well outside [-1, 1]: every mode x padding, both alignments
    X = g.standard_normal((2, 3, 5, 7)).astype(np.float32)
    grid = g.uniform(-1.8, 1.8, (2, 4, 3, 2)).astype(np.float32)
    for mode, pad in itertools.product(["nearest", "linear", "cubic"],
                                       ["zeros", "border", "reflection"]):
        for align in (0, 1):
            gs_case(f"gridsample_2d_{mode}_{pad}_ac{align}", X, grid, mode, pad, align)
    # far outside (|g| up to 9: several reflections) and exact ties for nearest
    far = g.uniform(-9, 9, (1, 3, 5, 2)).astype(np.float32)
    Xs = g.standard_normal((1, 2, 4, 6)).astype(np.float32)
    for pad in ("zeros", "border", "reflection"):
        gs_case(f"gridsample_2d_far_cubic_{pad}", Xs, far, "cubic", pad, 0)
    ties = np.array([[[[-1.0, -1.0], [-0.6, 0.2], [0.2, -0.2], [1.0, 1.0]]]], np.float32)
    gs_case("gridsample_2d_nearest_ties", Xs[:, :, :, :5], ties, "nearest", "zeros", 0)
    # opset 16 spellings
    gs_case("gridsample_opset16_bilinear", X, grid, "linear", "border", 0, opset=16)
    gs_case("gridsample_opset16_bicubic", X, grid, "cubic", "reflection", 1, opset=16)
    # 1-D and 3-D
    X1 = g.standard_normal((2, 2, 9)).astype(np.float32)
    g1 = g.uniform(-1.5, 1.5, (2, 5, 1)).astype(np.float32)
    for mode in ("nearest", "linear", "cubic"):
        gs_case(f"gridsample_1d_{mode}_reflection", X1, g1, mode, "reflection", 0)
    X3 = g.standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
    g3 = g.uniform(-1.3, 1.3, (1, 2, 3, 2, 3)).astype(np.float32)
    for mode, pad in (("nearest", "border"), ("linear", "zeros"), ("cubic", "reflection")):
        gs_case(f"gridsample_3d_{mode}_{pad}", X3, g3, mode, pad, 1)
    # single-pixel axis with align_corners (the reflection range is empty)
    Xp = g.standard_normal((1, 2, 1, 4)).astype(np.float32)
    gp = g.uniform(-1.5, 1.5, (1, 3, 2, 2)).astype(np.float32)
    gs_case("gridsample_single_row_reflection_ac1", Xp, gp, "linear", "reflection", 1,
            check_onnx=False)
    # integer X: nearest copies the element
    Xi = g.integers(-100, 100, (1, 2, 3, 5)).astype(np.int32)
    y = grid_sample(Xi, grid[:1], "nearest", "zeros", 0).astype(np.int32)
    c = Case("gridsample_nearest_i32")
    c.node("GridSample", ["X", "grid"], ["Y"], mode="nearest")
    c.save({"X": Xi, "grid": grid[:1]}, {"Y": y})
    # nearest copies f64 X exactly, whatever the grid's float type
    Xd = (g.standard_normal((1, 2, 3, 5)) * 1e10 + 1e-3).astype(np.float64)
    y = grid_sample(Xd, grid[:1], "nearest", "border", 0)
    c = Case("gridsample_nearest_f64_exact", opset=20).tol(0, 0)
    c.node("GridSample", ["X", "grid"], ["Y"], mode="nearest", padding_mode="border")
    c.save({"X": Xd, "grid": grid[:1].astype(np.float64)}, {"Y": y})
    # f64 and f16 X go through the float bridge
    gs_case("gridsample_f64_linear", X.astype(np.float64), grid.astype(np.float64), "linear",
            "zeros", 0, check_onnx=False, tol=(1e-5, 1e-5))
    Xh = X.astype(np.float16)
    y = grid_sample(Xh.astype(np.float32), grid.astype(np.float16).astype(np.float32),
                    "linear", "border", 0)
    c = Case("gridsample_f16_linear", opset=20).tol(2e-3, 2e-3)
    c.node("GridSample", ["X", "grid"], ["Y"], mode="linear", padding_mode="border")
    c.save({"X": Xh, "grid": grid.astype(np.float16)}, {"Y": y.astype(np.float16)})

    # errors
    c = Case("gridsample_err_mode", check=False).expect_error(ERR_INVALID_MODEL, "unknown mode 'area'")
    c.node("GridSample", ["X", "grid"], ["Y"], mode="area")
    c.save({"X": X, "grid": grid}, {"Y": X})
    c = Case("gridsample_err_padding", check=False).expect_error(ERR_INVALID_MODEL,
                                                                 "unknown padding_mode 'wrap'")
    c.node("GridSample", ["X", "grid"], ["Y"], padding_mode="wrap")
    c.save({"X": X, "grid": grid}, {"Y": X})
    c = Case("gridsample_err_grid_last_dim").expect_error(ERR_SHAPE, "must end in 2")
    c.node("GridSample", ["X", "grid"], ["Y"])
    c.save({"X": X, "grid": g.standard_normal((2, 4, 3, 3)).astype(np.float32)}, {"Y": X})
    c = Case("gridsample_err_batch").expect_error(ERR_SHAPE, "different batch sizes")
    c.node("GridSample", ["X", "grid"], ["Y"])
    c.save({"X": X, "grid": grid[:1]}, {"Y": X})
    c = Case("gridsample_err_opset16_3d", opset=16, check=False).expect_error(
        ERR_SHAPE, "before opset 20 samples 4-D X")
    c.node("GridSample", ["X", "grid"], ["Y"])
    c.save({"X": X3, "grid": g3}, {"Y": X3})
    c = Case("gridsample_err_int_linear").expect_error(ERR_TYPE, "linear sampling takes float X")
    c.node("GridSample", ["X", "grid"], ["Y"], mode="linear")
    c.save({"X": Xi, "grid": grid[:1]}, {"Y": Xi})

    # AffineGrid
    th2 = g.standard_normal((2, 2, 3)).astype(np.float32)
    th3 = g.standard_normal((1, 3, 4)).astype(np.float32)
    for name, th, size in (("2d_odd", th2, [2, 3, 5, 7]), ("2d_single_row", th2, [2, 1, 1, 4]),
                           ("3d_odd", th3, [1, 2, 3, 5, 2])):
        for align in (0, 1):
            c = Case(f"affinegrid_{name}_ac{align}", opset=20)
            c.node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align)
            size_a = np.array(size, np.int64)
            c.save({"theta": th, "size": size_a}, {"grid": affine_grid(th, size, align)})
    # AffineGrid feeding GridSample (a spatial transformer): size as a constant
    c = Case("affinegrid_to_gridsample", opset=20)
    c.initializer("size", np.array([2, 3, 4, 6], np.int64))
    c.node("AffineGrid", ["theta", "size"], ["grid"], align_corners=0)
    c.node("GridSample", ["X", "grid"], ["Y"], mode="linear", padding_mode="zeros")
    grid_t = affine_grid(th2, [2, 3, 4, 6], 0)
    c.save({"theta": th2, "X": X}, {"Y": grid_sample(X, grid_t, "linear", "zeros", 0)
                                    .astype(np.float32)})
    c = Case("affinegrid_err_theta", opset=20).expect_error(ERR_SHAPE, "must be (N, 2, 3)")
    c.node("AffineGrid", ["theta", "size"], ["grid"])
    c.save({"theta": g.standard_normal((2, 2, 4)).astype(np.float32),
            "size": np.array([2, 3, 5, 7], np.int64)}, {"grid": np.zeros((2, 5, 7, 2), np.float32)})
    c = Case("affinegrid_err_size_batch", opset=20).expect_error(ERR_SHAPE, "size[0] = 3")
    c.node("AffineGrid", ["theta", "size"], ["grid"])
    c.save({"theta": th2, "size": np.array([3, 3, 5, 7], np.int64)},
           {"grid": np.zeros((3, 5, 7, 2), np.float32)})


if __name__ == "__main__":
    main()
