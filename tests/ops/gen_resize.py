"""gen_resize.py — op cases for Resize: nearest (every nearest_mode),
linear and cubic (cubic_coeff_a, exclude_outside) under the coordinate
transformation modes, scales vs sizes (keep_aspect_ratio_policy), axes,
tf_crop_and_resize with extrapolation; Upsample (opset 9). The numpy
reference below is written from the operator specification.

Run from the repo root: python3 tests/ops/gen_resize.py
"""
import math

import numpy as np

from opcase import Case, rng

R = rng(81)


def src_coord(mode, j, scale, n_in, n_out, roi):
    out_w = scale * n_in
    if mode == "align_corners":
        return 0.0 if out_w == 1 else j * (n_in - 1) / (out_w - 1)
    if mode == "asymmetric":
        return j / scale
    if mode == "pytorch_half_pixel":
        return -0.5 if out_w == 1 else (j + 0.5) / scale - 0.5
    if mode == "tf_crop_and_resize":
        a, b = roi
        return ((b - a) * (n_in - 1) / 2 if out_w == 1 else j * (b - a) * (n_in - 1) / (out_w - 1)) + a * (n_in - 1)
    return (j + 0.5) / scale - 0.5


def taps(kind, xo, n_in, a, excl, nearest):
    if kind == "nearest":
        if xo == math.floor(xo):
            i = int(xo)
        else:
            fr = xo - math.floor(xo)
            up = {"round_prefer_floor": fr > 0.5, "round_prefer_ceil": fr >= 0.5,
                  "floor": False, "ceil": True}[nearest]
            i = math.floor(xo) + (1 if up else 0)
        return [(min(max(i, 0), n_in - 1), 1.0)]
    i0 = math.floor(xo)
    r = xo - i0
    if kind == "linear":
        pts = [(i0, 1 - r), (i0 + 1, r)]
    else:
        def w(t):
            t = abs(t)
            if t <= 1:
                return (a + 2) * t ** 3 - (a + 3) * t ** 2 + 1
            if t < 2:
                return a * t ** 3 - 5 * a * t ** 2 + 8 * a * t - 4 * a
            return 0.0
        pts = [(i0 + k, w(xo - (i0 + k))) for k in (-1, 0, 1, 2)]
    if excl:
        pts = [(i, c if 0 <= i < n_in else 0.0) for i, c in pts]
        s = sum(c for _, c in pts) or 1.0
        pts = [(i, c / s) for i, c in pts]
    return [(min(max(i, 0), n_in - 1), c) for i, c in pts]


def resize(x, out_shape, scales, kind, mode, a=-0.75, excl=False, nearest="round_prefer_floor",
           roi=None, extrap=0.0):
    y = x.astype(np.float64)
    scales = [float(np.float32(s)) for s in scales]  # the op reads f32 scales
    for ax in range(x.ndim):
        n_in, n_out = y.shape[ax], out_shape[ax]
        if n_in == n_out and scales[ax] == 1 and mode != "tf_crop_and_resize":
            continue
        moved = np.moveaxis(y, ax, -1)
        res = np.zeros(moved.shape[:-1] + (n_out,))
        for j in range(n_out):
            xo = src_coord(mode, j, scales[ax], n_in, n_out, roi[ax] if roi else None)
            if mode == "tf_crop_and_resize" and (xo < 0 or xo > n_in - 1):
                res[..., j] = extrap
                continue
            for i, c in taps(kind, xo, n_in, a, excl, nearest):
                res[..., j] += c * moved[..., i]
        y = np.moveaxis(res, -1, ax)
    return y.astype(np.float32)


x = R.standard_normal((1, 2, 4, 5)).astype(np.float32)
for kind in ("nearest", "linear", "cubic"):
    for mode in ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"):
        for sc in ((1, 1, 1.5, 0.6), (1, 1, 2.0, 3.0)):
            out = [int(math.floor(d * float(np.float32(s)))) for d, s in zip(x.shape, sc)]
            c = Case(f"resize_{kind}_{mode}_{'up' if sc[2] > 1.9 else 'mixed'}", opset=13)
            c.node("Resize", ["x", "", "s"], ["y"], mode=kind, coordinate_transformation_mode=mode)
            c.tol(1e-5, 1e-4)
            c.save({"x": x, "s": np.array(sc, np.float32)}, {"y": resize(x, out, sc, kind, mode)})
for nm in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"):
    sc = (1, 1, 2.5, 1.5)
    out = [int(math.floor(d * float(np.float32(s)))) for d, s in zip(x.shape, sc)]
    c = Case(f"resize_nearest_{nm}", opset=13)
    c.node("Resize", ["x", "", "s"], ["y"], mode="nearest", nearest_mode=nm,
           coordinate_transformation_mode="asymmetric")
    c.save({"x": x, "s": np.array(sc, np.float32)},
           {"y": resize(x, out, sc, "nearest", "asymmetric", nearest=nm)})
sc = (1, 1, 0.75, 1.4)
out = [int(math.floor(d * float(np.float32(s)))) for d, s in zip(x.shape, sc)]
c = Case("resize_cubic_a05_exclude", opset=13)
c.node("Resize", ["x", "", "s"], ["y"], mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1)
c.tol(1e-5, 1e-4)
c.save({"x": x, "s": np.array(sc, np.float32)},
       {"y": resize(x, out, sc, "cubic", "half_pixel", a=-0.5, excl=True)})
for pol in ("stretch", "not_larger", "not_smaller"):
    sizes = np.array([7, 3], np.int64)
    ins = [x.shape[2], x.shape[3]]
    if pol == "stretch":
        sc2 = [sizes[0] / ins[0], sizes[1] / ins[1]]
        o2 = list(sizes)
    else:
        s = (min if pol == "not_larger" else max)(sizes[0] / ins[0], sizes[1] / ins[1])
        sc2 = [s, s]
        o2 = [int(math.floor(s * d + 0.5)) for d in ins]
    c = Case(f"resize_sizes_axes_{pol}", opset=18)
    c.node("Resize", ["x", "", "", "z"], ["y"], mode="linear", axes=[2, 3],
           keep_aspect_ratio_policy=pol)
    c.tol(1e-5, 1e-4)
    c.save({"x": x, "z": sizes},
           {"y": resize(x, [1, 2] + o2, [1, 1] + sc2, "linear", "half_pixel")})
roi = np.array([0, 0, 0.2, -0.1, 1, 1, 0.9, 1.2], np.float32)
sc = (1, 1, 1.5, 1.2)
out = [int(math.floor(d * float(np.float32(s)))) for d, s in zip(x.shape, sc)]
rr = [(float(roi[i]), float(roi[4 + i])) for i in range(4)]
c = Case("resize_tf_crop_extrapolate", opset=13)
c.node("Resize", ["x", "r", "s"], ["y"], mode="linear",
       coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-7.0)
c.tol(1e-5, 1e-4)
c.save({"x": x, "r": roi, "s": np.array(sc, np.float32)},
       {"y": resize(x, out, sc, "linear", "tf_crop_and_resize", roi=rr, extrap=-7.0)})
c = Case("upsample_nearest_opset9", opset=9)
sc = (1, 1, 2, 3)
c.node("Upsample", ["x", "s"], ["y"], mode="nearest")
c.save({"x": x, "s": np.array(sc, np.float32)},
       {"y": resize(x, [1, 2, 8, 15], sc, "nearest", "asymmetric", nearest="floor")})
