"""gen_fold.py — op cases for Col2Im (1 to 3 spatial dims, strides, pads,
dilations, int and float dtypes, empty batch, symbolic dims, shapes as
initializers) and MaxUnpool (1 to 3 spatial dims, strides, pads, overlapping
windows, output_shape, several dtypes), and the inputs they must refuse.
Expected outputs from the numpy code below (MaxUnpool's indices from a
numpy MaxPool).

Run from the repo root: python3 tests/ops/gen_fold.py
"""
import itertools

import numpy as np

from opcase import Case, normal, rng

R = rng(2718)


# ---- Col2Im ------------------------------------------------------------------------

def blocks_of(image, block, strides, pads, dils):
    nd = len(image)
    return [(image[d] + pads[d] + pads[d + nd] - dils[d] * (block[d] - 1) - 1) // strides[d] + 1
            for d in range(nd)]


def col2im(x, image, block, strides, pads, dils):
    nd = len(image)
    nb = blocks_of(image, block, strides, pads, dils)
    N, CK, L = x.shape
    K = int(np.prod(block))
    C = CK // K
    acc = np.int64 if np.issubdtype(x.dtype, np.integer) else np.float64
    y = np.zeros((N, C) + tuple(image), acc)
    cols = x.astype(acc).reshape(N, C, K, L)
    for k, kd in enumerate(itertools.product(*[range(b) for b in block])):
        for l, ld in enumerate(itertools.product(*[range(b) for b in nb])):
            pos = [ld[d] * strides[d] - pads[d] + kd[d] * dils[d] for d in range(nd)]
            if all(0 <= pos[d] < image[d] for d in range(nd)):
                y[(slice(None), slice(None)) + tuple(pos)] += cols[:, :, k, l]
    if np.issubdtype(x.dtype, np.integer):
        return y.astype(x.dtype)  # wraps, as the library's integer sums do
    return y.astype(x.dtype)


def col2im_case(name, N, C, image, block, strides=None, pads=None, dils=None, dtype=np.float32,
                shapes_as_weights=False, input_shapes=None, tol=None):
    nd = len(image)
    s, p, d = strides or [1] * nd, pads or [0] * (2 * nd), dils or [1] * nd
    L = int(np.prod(blocks_of(image, block, s, p, d)))
    shape = (N, C * int(np.prod(block)), L)
    if np.issubdtype(dtype, np.integer):
        x = R.integers(-100, 100, shape).astype(dtype)
    else:
        x = normal(R, shape, dtype)
    y = col2im(x, image, block, s, p, d)
    c = Case(f"col2im_{name}", opset=18)
    c.node("Col2Im", ["x", "image_shape", "block_shape"], ["y"], strides=strides, pads=pads,
           dilations=dils)
    im, bl = np.array(image, np.int64), np.array(block, np.int64)
    if tol:
        c.tol(*tol)
    if shapes_as_weights:
        c.initializer("image_shape", im).initializer("block_shape", bl)
        c.save({"x": x}, {"y": y}, input_shapes=input_shapes)
    else:
        c.save({"x": x, "image_shape": im, "block_shape": bl}, {"y": y}, input_shapes=input_shapes)


col2im_case("2d_all_attrs", 2, 3, [7, 9], [2, 3], [2, 1], [1, 0, 0, 2], [1, 2])
col2im_case("1d", 1, 2, [10], [3], [2])
col2im_case("3d", 1, 2, [4, 5, 3], [2, 2, 2], pads=[1, 0, 0, 0, 1, 1])
col2im_case("large", 2, 16, [32, 32], [3, 3], pads=[1, 1, 1, 1], tol=(1e-5, 1e-5))
col2im_case("f64", 1, 2, [5, 6], [2, 2], [1, 2], dtype=np.float64)
col2im_case("i64", 1, 2, [5, 6], [3, 2], dtype=np.int64)
col2im_case("i32", 2, 1, [6, 4], [2, 2], dils=[2, 1], dtype=np.int32)
col2im_case("i8_bridge", 1, 1, [5, 5], [3, 3], dtype=np.int8)  # overlapping sums wrap
col2im_case("f16_bridge", 1, 2, [4, 4], [2, 2], dtype=np.float16, tol=(2e-3, 2e-3))
col2im_case("empty_batch", 0, 2, [4, 4], [2, 2])
col2im_case("weights", 2, 2, [6, 5], [2, 3], [2, 1], shapes_as_weights=True)
col2im_case("symbolic_batch", 3, 2, [6, 5], [2, 3], shapes_as_weights=True,
            input_shapes={"x": ["n", 12, "l"]})


def col2im_error(name, x, image, block, status, text, **attrs):
    c = Case(f"col2im_err_{name}", opset=18)
    c.node("Col2Im", ["x", "image_shape", "block_shape"], ["y"], **attrs)
    c.save_error({"x": x, "image_shape": np.array(image, np.int64),
                  "block_shape": np.array(block, np.int64)},
                 {"y": np.zeros((1,) * (2 + len(image)), x.dtype)}, status, text)


z = np.zeros((1, 8, 12), np.float32)
col2im_error("blocks_count", np.zeros((1, 8, 11), np.float32), [4, 5], [2, 2], "shape error",
             "input dim 2 (11) must be the number of blocks, 12")
col2im_error("channels", np.zeros((1, 7, 12), np.float32), [4, 5], [2, 2], "shape error",
             "input dim 1 (7) is not a multiple of prod(block_shape) = 4")
col2im_error("block_too_big", z, [4, 5], [6, 2], "shape error",
             "block_shape[0] = 6 (dilation 1) does not fit the padded image size 4")
col2im_error("strides_len", z, [4, 5], [2, 2], "invalid model", "strides has 1 values; expected 2",
             strides=[1])
col2im_error("shape_lengths", z, [4, 5], [2], "shape error",
             "image_shape and block_shape must have the same number")
col2im_error("zero_stride", z, [4, 5], [2, 2], "invalid model", "strides[1] = 0 is outside [1",
             strides=[1, 0])


# ---- MaxUnpool ------------------------------------------------------------------------

def maxpool_with_indices(x, kernel, strides, pads):
    """numpy MaxPool: values and flat indices (over the whole of x), as MaxPool's Indices."""
    nd = len(kernel)
    N, C = x.shape[:2]
    sp = x.shape[2:]
    out = [(sp[d] + pads[d] + pads[d + nd] - kernel[d]) // strides[d] + 1 for d in range(nd)]
    vals = np.zeros((N, C) + tuple(out), x.dtype)
    idx = np.zeros((N, C) + tuple(out), np.int64)
    flat = x.reshape(-1)
    for n in range(N):
        for c in range(C):
            for o in itertools.product(*[range(v) for v in out]):
                best, bi = None, -1
                for k in itertools.product(*[range(v) for v in kernel]):
                    pos = [o[d] * strides[d] - pads[d] + k[d] for d in range(nd)]
                    if not all(0 <= pos[d] < sp[d] for d in range(nd)):
                        continue
                    f = np.ravel_multi_index((n, c) + tuple(pos), x.shape)
                    if best is None or flat[f] > best:
                        best, bi = flat[f], f
                vals[(n, c) + o] = best
                idx[(n, c) + o] = bi
    return vals, idx


def unpool_case(name, N, C, pooled, kernel, strides=None, pads=None, out_extra=None,
                dtype=np.float32, opset=11):
    nd = len(kernel)
    s, p = strides or [1] * nd, pads or [0] * (2 * nd)
    inner = [(pooled[d] - 1) * s[d] - p[d] - p[d + nd] + kernel[d] for d in range(nd)]
    orig = normal(R, (N, C) + tuple(inner), dtype)
    vals, idx = maxpool_with_indices(orig, kernel, s, p)
    y = np.zeros((N, C) + tuple(inner), dtype).reshape(-1)
    y[idx.reshape(-1)] = vals.reshape(-1)
    y = y.reshape((N, C) + tuple(inner))
    c = Case(f"maxunpool_{name}", opset=opset)
    feeds = {"x": vals, "i": idx}
    ins = ["x", "i"]
    if out_extra is not None:
        oshape = np.array((N, C) + tuple(inner), np.int64) + np.array(out_extra, np.int64)
        full = np.zeros(tuple(oshape), dtype)
        full[tuple(slice(0, v) for v in y.shape)] = y
        y = full
        feeds["output_shape"] = oshape
        ins.append("output_shape")
    c.node("MaxUnpool", ins, ["y"], kernel_shape=kernel, strides=strides, pads=pads)
    c.save(feeds, {"y": y})


unpool_case("2d_k2s2", 2, 3, [3, 4], [2, 2], [2, 2])
unpool_case("2d_k3s2_pads", 1, 2, [4, 4], [3, 3], [2, 2], [1, 1, 1, 1])
unpool_case("2d_overlap", 1, 1, [5, 5], [3, 3], [1, 1])  # an argmax may repeat
unpool_case("1d", 2, 2, [6], [3], [2], opset=9)
unpool_case("3d", 1, 2, [2, 3, 2], [2, 2, 2], [2, 2, 2], opset=22)
unpool_case("output_shape", 1, 2, [2, 3], [2, 2], [2, 2], out_extra=[0, 0, 1, 3])
unpool_case("f64", 1, 1, [3, 3], [2, 2], [2, 2], dtype=np.float64)
unpool_case("f16", 1, 2, [3, 3], [2, 2], [2, 2], dtype=np.float16, opset=22)
unpool_case("empty", 0, 2, [3, 3], [2, 2], [2, 2])


def unpool_error(name, x, i, status, text, output_shape=None, **attrs):
    c = Case(f"maxunpool_err_{name}", opset=11, check=False)
    feeds = {"x": x, "i": i}
    if output_shape is not None:
        feeds["output_shape"] = np.array(output_shape, np.int64)
    c.node("MaxUnpool", list(feeds), ["y"], **attrs)
    c.save_error(feeds, {"y": np.zeros((1, 1, 1, 1), np.float32)}, status, text)


x22 = np.ones((1, 1, 2, 2), np.float32)
unpool_error("index_range", x22, np.array([[[[0, 3], [15, 16]]]], np.int64), "invalid argument",
             "I[3] = 16 is outside the unpooled tensor [0, 16)", kernel_shape=[2, 2],
             strides=[2, 2])
unpool_error("no_kernel", x22, np.zeros((1, 1, 2, 2), np.int64), "invalid model",
             "attribute kernel_shape is required")
unpool_error("output_shape_small", x22, np.zeros((1, 1, 2, 2), np.int64), "shape error",
             "output_shape[2] = 3 is smaller than the unpooled size 4", output_shape=[1, 1, 3, 4],
             kernel_shape=[2, 2], strides=[2, 2])
unpool_error("x_rank", np.ones((1, 2, 2), np.float32), np.zeros((1, 2, 2), np.int64), "shape error",
             "must have rank 4 (kernel_shape has 2 dims)", kernel_shape=[2, 2])
unpool_error("i_shape", x22, np.zeros((1, 1, 2, 3), np.int64), "shape error",
             "must have X's shape", kernel_shape=[2, 2])
unpool_error("pads_len", x22, np.zeros((1, 1, 2, 2), np.int64), "invalid model",
             "pads has 2 values; expected 4", kernel_shape=[2, 2], pads=[0, 0])
