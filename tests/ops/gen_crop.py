"""gen_crop.py — op cases for CenterCropPad: crop, pad and both, odd and
even differences, every axis or a subset (negative axes), int32 and int64
shape inputs, several dtypes, ranks 0 to 5, empty inputs and outputs, a
large image, symbolic dims — and the inputs it must refuse. Expected
outputs from the numpy code below.

Run from the repo root: python3 tests/ops/gen_crop.py
"""
import numpy as np

from opcase import Case, normal, rng

R = rng(5150)


def center_crop_pad(x, shape, axes=None):
    axes = list(range(x.ndim)) if axes is None else [a % x.ndim for a in axes]
    new = list(x.shape)
    src = [slice(None)] * x.ndim
    dst = [slice(None)] * x.ndim
    for a, s in zip(axes, shape):
        d = x.shape[a]
        new[a] = s
        if s < d:  # crop: the extra element of an odd difference is dropped at the end
            b = (d - s) // 2
            src[a] = slice(b, b + s)
        elif s > d:
            b = (s - d) // 2
            dst[a] = slice(b, b + d)
    y = np.zeros(new, x.dtype)
    y[tuple(dst)] = x[tuple(src)]
    return y


def case(name, x, shape, axes=None, shape_dtype=np.int64, shape_weight=False, input_shapes=None):
    sh = np.array(shape, shape_dtype)
    y = center_crop_pad(x, shape, axes)
    c = Case(f"center_crop_pad_{name}", opset=18)
    c.node("CenterCropPad", ["x", "shape"], ["y"], axes=axes)
    if shape_weight:
        c.initializer("shape", sh)
        c.save({"x": x}, {"y": y}, input_shapes=input_shapes)
    else:
        c.save({"x": x, "shape": sh}, {"y": y}, input_shapes=input_shapes)


case("crop_odd", normal(R, (9, 10)), [4, 7])
case("pad_odd", normal(R, (4, 5)), [9, 8])
case("crop_and_pad", normal(R, (3, 11, 6)), [5, 4, 9])
case("axes_subset", normal(R, (2, 3, 10, 12)), [7, 15], axes=[2, 3])
case("negative_axes", normal(R, (10, 12, 3)), [15, 7], axes=[-3, -2])
case("axes_unordered", normal(R, (10, 12, 3)), [4, 8], axes=[1, 0])
case("shape_i32", normal(R, (6, 6)), [3, 9], shape_dtype=np.int32)
case("same_size", normal(R, (4, 5)), [4, 5])
case("rank1", np.arange(10, dtype=np.int64), [5])
case("rank5", normal(R, (2, 3, 4, 5, 6)), [3, 2, 6, 5, 4])
case("rank0", np.array(3.5, np.float32), [])
case("u8", R.integers(0, 255, (6, 7)).astype(np.uint8), [9, 3])
case("bool", R.random((5, 5)) < 0.5, [2, 8])
case("f16", normal(R, (5, 6), np.float16), [7, 3])
case("f64", normal(R, (5, 6), np.float64), [3, 7])
case("to_empty", normal(R, (4, 5)), [0, 5])
case("from_empty", np.zeros((0, 3), np.float32), [4, 3])
case("image_large", normal(R, (3, 224, 224)), [200, 256], axes=[1, 2])
case("symbolic_weight", normal(R, (3, 8, 9)), [5, 5], axes=[1, 2], shape_weight=True,
     input_shapes={"x": ["c", "h", "w"]})


def error(name, x, shape, status, text, axes=None):
    c = Case(f"center_crop_pad_err_{name}", opset=18)
    c.node("CenterCropPad", ["x", "shape"], ["y"], axes=axes)
    c.save_error({"x": x, "shape": np.array(shape, np.int64)},
                 {"y": np.zeros((1,) * x.ndim, x.dtype)}, status, text)


z = np.zeros((4, 5), np.float32)
error("repeated_axis", z, [2, 2], "invalid model", "axis 1 appears twice in axes", axes=[1, -1])
error("shape_count", z, [2, 2, 2], "shape error", "shape must be 1-D with one value per axis")
error("negative", z, [2, -1], "shape error", "shape[1] = -1 is negative")
error("axis_range", z, [2], "invalid model", "axes", axes=[2])
