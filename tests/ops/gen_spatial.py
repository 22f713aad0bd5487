"""gen_spatial.py — op cases for ConvTranspose (1-D/2-D/3-D, groups,
strides, dilations, pads, output_padding, output_shape, SAME auto_pad, bias)
and LpPool (p 1/2/3, pads, strides, dilations, ceil_mode, SAME). The numpy
references below are direct loops over the definitions.

Run from the repo root: python3 tests/ops/gen_spatial.py
"""
import itertools

import numpy as np

from opcase import Case, normal, rng

R = rng(111)


def f(*s):
    return normal(R, s)


def conv_t(x, w, b, strides, dil, pad_begin, out, group):
    n, c = x.shape[:2]
    mg = w.shape[1]
    m = mg * group
    y = np.zeros((n, m) + tuple(out))
    cg = c // group
    for bi, ch in itertools.product(range(n), range(c)):
        gi = ch // cg
        for i in itertools.product(*[range(s) for s in x.shape[2:]]):
            for k in itertools.product(*[range(s) for s in w.shape[2:]]):
                pos = [i[d] * strides[d] - pad_begin[d] + k[d] * dil[d] for d in range(len(i))]
                if all(0 <= p < o for p, o in zip(pos, out)):
                    for mi in range(mg):
                        y[(bi, gi * mg + mi) + tuple(pos)] += x[(bi, ch) + i] * w[(ch, mi) + k]
    if b is not None:
        y += b.reshape((1, m) + (1,) * len(out))
    return y.astype(np.float32)


def ct_case(name, x, w, b=None, strides=None, dil=None, pads=None, out_pad=None, group=1,
            output_shape=None, auto_pad=None):
    nd = x.ndim - 2
    s = strides or [1] * nd
    d = dil or [1] * nd
    op = out_pad or [0] * nd
    k = w.shape[2:]
    full = [s[i] * (x.shape[i + 2] - 1) + op[i] + (k[i] - 1) * d[i] + 1 for i in range(nd)]
    if auto_pad:
        out = output_shape or [x.shape[i + 2] * s[i] for i in range(nd)]
        tot = [full[i] - out[i] for i in range(nd)]
        pb = [t // 2 if auto_pad == "SAME_UPPER" else t - t // 2 for t in tot]
    else:
        p = pads or [0] * (2 * nd)
        pb = p[:nd]
        out = output_shape or [full[i] - p[i] - p[i + nd] for i in range(nd)]
    attrs = {"group": group}
    for key, val in (("strides", strides), ("dilations", dil), ("pads", pads),
                     ("output_padding", out_pad), ("output_shape", output_shape),
                     ("auto_pad", auto_pad)):
        if val is not None:
            attrs[key] = val
    c = Case(name, opset=11)
    ins = {"x": x, "w": w}
    if b is not None:
        ins["b"] = b
    c.node("ConvTranspose", list(ins), ["y"], **attrs)
    c.tol(1e-5, 1e-4)
    c.save(ins, {"y": conv_t(x, w, b, s, d, pb, out, group)})


ct_case("convtranspose_2d_basic", f(1, 2, 3, 3), f(2, 3, 3, 3), f(3))
ct_case("convtranspose_1d_stride_pad", f(2, 3, 5), f(3, 2, 3), strides=[2], pads=[1, 2])
ct_case("convtranspose_2d_group_dil", f(1, 4, 3, 4), f(4, 1, 2, 3), group=2, dil=[2, 1],
        strides=[1, 2])
ct_case("convtranspose_2d_outpad", f(1, 1, 3, 3), f(1, 2, 3, 3), strides=[3, 2],
        out_pad=[1, 1])
ct_case("convtranspose_2d_output_shape", f(1, 1, 3, 3), f(1, 2, 3, 3), strides=[3, 2],
        output_shape=[10, 8])
ct_case("convtranspose_2d_same_upper", f(1, 2, 3, 3), f(2, 2, 3, 3), strides=[2, 2],
        auto_pad="SAME_UPPER")
ct_case("convtranspose_3d", f(1, 2, 2, 3, 2), f(2, 2, 2, 2, 2), f(2), strides=[1, 2, 1])


def lp_pool(x, k, s, d, pb, out, p):
    y = np.zeros(x.shape[:2] + tuple(out))
    for o in itertools.product(*[range(v) for v in out]):
        acc = np.zeros(x.shape[:2])
        for kk in itertools.product(*[range(v) for v in k]):
            pos = [o[i] * s[i] - pb[i] + kk[i] * d[i] for i in range(len(o))]
            if all(0 <= q < n for q, n in zip(pos, x.shape[2:])):
                acc += np.abs(x[(slice(None), slice(None)) + tuple(pos)].astype(np.float64)) ** p
        y[(slice(None), slice(None)) + o] = acc ** (1.0 / p)
    return y.astype(np.float32)


for name, x, k, s, d, pads, ceil, p in (
        ("lppool_1d_p1", f(1, 2, 7), [3], [2], [1], [0, 0], 0, 1),
        ("lppool_2d_p2_pads", f(2, 1, 5, 4), [3, 2], [1, 1], [1, 1], [1, 0, 1, 1], 0, 2),
        ("lppool_2d_p3_ceil_dil", f(1, 2, 6, 7), [2, 2], [2, 2], [2, 1], [0, 0, 0, 0], 1, 3),
        ("lppool_3d", f(1, 1, 3, 4, 4), [2, 2, 2], [1, 2, 2], [1, 1, 1], [0] * 6, 0, 2)):
    nd = x.ndim - 2
    ke = [(k[i] - 1) * d[i] + 1 for i in range(nd)]
    out = []
    for i in range(nd):
        span = x.shape[i + 2] + pads[i] + pads[i + nd] - ke[i]
        o = (-(-span // s[i]) if ceil else span // s[i]) + 1
        if ceil and (o - 1) * s[i] >= x.shape[i + 2] + pads[i]:
            o -= 1
        out.append(o)
    c = Case(name, opset=18)
    c.node("LpPool", ["x"], ["y"], kernel_shape=k, strides=s, dilations=d, pads=pads,
           ceil_mode=ceil, p=p)
    c.tol(1e-5, 1e-4)
    c.save({"x": x}, {"y": lp_pool(x, k, s, d, pads[:nd], out, p)})
x = f(1, 1, 5, 5)
c = Case("lppool_2d_same_lower", opset=18)
c.node("LpPool", ["x"], ["y"], kernel_shape=[2, 2], auto_pad="SAME_LOWER", p=2)
c.tol(1e-5, 1e-4)
c.save({"x": x}, {"y": lp_pool(x, [2, 2], [1, 1], [1, 1], [1, 1], [5, 5], 2)})
