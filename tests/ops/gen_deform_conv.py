"""gen_deform_conv.py — DeformConv cases the ONNX node tests miss: odd sizes,
strides, dilations, asymmetric pads, group and offset_group together, a mask
with a bias, offsets that move taps far outside X, 1-D and 3-D, f64 through
the float bridge, and error paths. Expected values come from the direct numpy
implementation below (multilinear sampling, zero outside), checked against
onnx.reference for the 2-D cases.

Run from the repo root: python3 tests/ops/gen_deform_conv.py
"""
import itertools

import numpy as np
from onnx.reference.ops.op_deform_conv import DeformConv as OnnxDeformConv

from opcase import Case, rng

ERR_INVALID_MODEL, ERR_SHAPE = 5, 7


def sample(plane, pos):
    """Multilinear sample of plane (S-D) at pos; taps outside read 0."""
    lo = [int(np.floor(p)) for p in pos]
    acc = 0.0
    for corner in itertools.product((0, 1), repeat=len(pos)):
        idx = tuple(lo[i] + corner[i] for i in range(len(pos)))
        if any(j < 0 or j >= plane.shape[i] for i, j in enumerate(idx)):
            continue
        wt = 1.0
        for i, c in enumerate(corner):
            t = pos[i] - lo[i]
            wt *= t if c else 1 - t
        acc += wt * float(plane[idx])
    return acc


def deform_conv(x, w, offset, bias=None, mask=None, group=1, offset_group=1, strides=None,
                pads=None, dilations=None):
    N, C = x.shape[:2]
    M, cg = w.shape[:2]
    k = w.shape[2:]
    S = len(k)
    strides = strides or [1] * S
    dilations = dilations or [1] * S
    pads = pads or [0] * (2 * S)
    out = offset.shape[2:]
    K = int(np.prod(k))
    off = offset.reshape((N, offset_group, K, S) + out)
    msk = None if mask is None else mask.reshape((N, offset_group, K) + out)
    mg = M // group
    cog = C // offset_group
    y = np.zeros((N, M) + out)
    for n in range(N):
        for o in np.ndindex(*out):
            for ic in range(C):
                og = ic // cog
                g = ic // cg
                for ki, kk in enumerate(np.ndindex(*k)):
                    pos = [o[i] * strides[i] - pads[i] + kk[i] * dilations[i]
                           + float(off[(n, og, ki, i) + o]) for i in range(S)]
                    v = sample(x[n, ic], pos)
                    if msk is not None:
                        v *= float(msk[(n, og, ki) + o])
                    for m in range(g * mg, (g + 1) * mg):
                        y[(n, m) + o] += float(w[(m, ic - g * cg) + kk]) * v
    if bias is not None:
        y += bias.reshape((1, -1) + (1,) * S)
    return y


def out_size(in_sp, k, strides, pads, dilations):
    S = len(k)
    return [(in_sp[i] + pads[i] + pads[i + S] - dilations[i] * (k[i] - 1) - 1) // strides[i] + 1
            for i in range(S)]


def case(name, g, x_shape, w_shape, group=1, offset_group=1, strides=None, pads=None,
         dilations=None, with_mask=False, with_bias=False, spread=1.5, dtype=np.float32,
         check_onnx=True, tol=None):
    S = len(x_shape) - 2
    strides_ = strides or [1] * S
    pads_ = pads or [0] * (2 * S)
    dil_ = dilations or [1] * S
    out = out_size(x_shape[2:], w_shape[2:], strides_, pads_, dil_)
    K = int(np.prod(w_shape[2:]))
    x = g.standard_normal(x_shape).astype(dtype)
    w = g.standard_normal(w_shape).astype(dtype)
    offset = (g.standard_normal([x_shape[0], offset_group * K * S] + out) * spread).astype(dtype)
    mask = g.uniform(0, 1, [x_shape[0], offset_group * K] + out).astype(dtype) if with_mask \
        else None
    bias = g.standard_normal(w_shape[0]).astype(dtype) if with_bias else None
    y = deform_conv(x, w, offset, bias, mask, group, offset_group, strides, pads, dilations)
    if check_onnx and S == 2:
        ref = OnnxDeformConv.eval(x, w, offset, bias, mask, dilations=dilations, group=group,
                                  offset_group=offset_group, pads=pads, strides=strides)
        assert np.allclose(ref, y, rtol=1e-4, atol=1e-4), name
    c = Case(name, opset=19)
    names = ["X", "W", "offset"]
    ins = {"X": x, "W": w, "offset": offset}
    if with_bias or with_mask:
        names.append("B" if with_bias else "")
        if with_bias:
            ins["B"] = bias
    if with_mask:
        names.append("mask")
        ins["mask"] = mask
    c.node("DeformConv", names, ["Y"], group=group, offset_group=offset_group, strides=strides,
           pads=pads, dilations=dilations)
    c.tol(*(tol or (1e-4, 1e-4)))
    c.save(ins, {"Y": y.astype(dtype)})


def main():
    g = rng(3)
    case("deformconv_2d_groups_offset_groups_mask_bias", g, (2, 4, 7, 6), (6, 2, 3, 2), group=2,
         offset_group=2, strides=[2, 1], pads=[1, 0, 2, 1], dilations=[1, 2], with_mask=True,
         with_bias=True)
    case("deformconv_2d_far_offsets", g, (1, 2, 5, 5), (3, 2, 3, 3), pads=[1, 1, 1, 1],
         spread=6.0)
    case("deformconv_2d_offset_group_4", g, (1, 4, 6, 5), (2, 4, 2, 2), offset_group=4,
         with_mask=True)
    case("deformconv_1d", g, (2, 3, 11), (4, 3, 3), strides=[2], pads=[1, 2], dilations=[2],
         with_bias=True)
    case("deformconv_3d", g, (1, 2, 4, 5, 3), (2, 1, 2, 2, 2), group=2, pads=[0, 1, 0, 1, 0, 1],
         with_mask=True, spread=0.8)
    case("deformconv_f64", g, (1, 2, 5, 6), (3, 2, 3, 3), pads=[1, 1, 1, 1], dtype=np.float64,
         tol=(1e-5, 1e-5))

    # errors
    x = g.standard_normal((1, 4, 6, 6)).astype(np.float32)
    w = g.standard_normal((2, 4, 3, 3)).astype(np.float32)
    c = Case("deformconv_err_offset_channels", opset=19).expect_error(
        ERR_SHAPE, "offset [1,10,4,4] must have offset_group (1) x 9 kernel taps x 2 = 18")
    c.node("DeformConv", ["X", "W", "offset"], ["Y"])
    c.save({"X": x, "W": w, "offset": np.zeros((1, 10, 4, 4), np.float32)},
           {"Y": np.zeros((1, 2, 4, 4), np.float32)})
    c = Case("deformconv_err_offset_size", opset=19).expect_error(ERR_SHAPE,
                                                                  "the output's spatial size")
    c.node("DeformConv", ["X", "W", "offset"], ["Y"])
    c.save({"X": x, "W": w, "offset": np.zeros((1, 18, 5, 4), np.float32)},
           {"Y": np.zeros((1, 2, 4, 4), np.float32)})
    c = Case("deformconv_err_offset_group", opset=19).expect_error(
        ERR_SHAPE, "not a multiple of offset_group 3")
    c.node("DeformConv", ["X", "W", "offset"], ["Y"], offset_group=3)
    c.save({"X": x, "W": w, "offset": np.zeros((1, 54, 4, 4), np.float32)},
           {"Y": np.zeros((1, 2, 4, 4), np.float32)})
    c = Case("deformconv_err_mask_channels", opset=19).expect_error(ERR_SHAPE, "mask [1,18,4,4]")
    c.node("DeformConv", ["X", "W", "offset", "", "mask"], ["Y"])
    c.save({"X": x, "W": w, "offset": np.zeros((1, 18, 4, 4), np.float32),
            "mask": np.zeros((1, 18, 4, 4), np.float32)},
           {"Y": np.zeros((1, 2, 4, 4), np.float32)})


if __name__ == "__main__":
    main()
