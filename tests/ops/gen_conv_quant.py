"""gen_conv_quant.py — cases of the "conv_quant" op family (ConvInteger,
QLinearConv) that the ONNX node tests miss: int8 and uint8 data and weights
(mixed too), per-output-channel weight zero points and scales, groups
(depthwise), strides, dilations, asymmetric pads, auto_pad, 1-D and 3-D,
bias, saturation of the output, and error paths. Expected values come from
the integer numpy convolution below (int64, padding by the zero point).

Run from the repo root: python3 tests/ops/gen_conv_quant.py
"""
import numpy as np

from opcase import Case, rng

ERR_SHAPE, ERR_TYPE = 7, 8


def conv_int(x, w, group=1, strides=None, dilations=None, pads=None):
    """x [N, C, sp...], w [M, C/group, k...], both int64 with zero points
    already subtracted; zero padding."""
    S = x.ndim - 2
    strides = strides or [1] * S
    dilations = dilations or [1] * S
    pads = pads or [0] * (2 * S)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + S]) for i in range(S)])
    k = w.shape[2:]
    out = [(xp.shape[2 + i] - dilations[i] * (k[i] - 1) - 1) // strides[i] + 1 for i in range(S)]
    N, M, cg = x.shape[0], w.shape[0], w.shape[1]
    mg = M // group
    y = np.zeros((N, M, *out), np.int64)
    for g in range(group):
        for kk in np.ndindex(*k):
            sl = tuple(slice(kk[i] * dilations[i],
                             kk[i] * dilations[i] + strides[i] * (out[i] - 1) + 1, strides[i])
                       for i in range(S))
            xs = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            wk = w[(slice(g * mg, (g + 1) * mg), slice(None)) + kk]
            y[:, g * mg:(g + 1) * mg] += np.einsum("nc...,mc->nm...", xs, wk)
    return y


def same_upper_pads(in_sp, k, strides, dilations):
    pads_b, pads_e = [], []
    for i, n in enumerate(in_sp):
        out = -(-n // strides[i])
        total = max(0, (out - 1) * strides[i] + dilations[i] * (k[i] - 1) + 1 - n)
        pads_b.append(total // 2)
        pads_e.append(total - total // 2)
    return pads_b + pads_e


def qint(gen, shape, dtype):
    info = np.iinfo(dtype)
    return gen.integers(info.min, info.max + 1, shape).astype(dtype)


def zero_points(names, ins, zps):
    """Appends the optional trailing zero-point inputs zps [(name, value or
    None, dtype)] of ConvInteger / MatMulInteger to the node's input names (a
    skipped one before a given one as "") and feeds the given ones."""
    last = max((i for i, (_, v, _) in enumerate(zps) if v is not None), default=-1)
    for name, value, dtype in zps[:last + 1]:
        names.append("" if value is None else name)
        if value is not None:
            ins[name] = np.asarray(value, dtype)


def conv_integer_case(name, x, w, xzp=None, wzp=None, **attrs):
    xi = x.astype(np.int64) - (0 if xzp is None else int(xzp))
    wz = 0 if wzp is None else np.asarray(wzp, np.int64).reshape((-1,) + (1,) * (w.ndim - 1))
    wi = w.astype(np.int64) - wz
    pads = attrs.get("pads")
    if attrs.get("auto_pad") == "SAME_UPPER":
        pads = same_upper_pads(x.shape[2:], w.shape[2:], attrs.get("strides") or
                               [1] * (x.ndim - 2), attrs.get("dilations") or [1] * (x.ndim - 2))
    y = conv_int(xi, wi, attrs.get("group", 1), attrs.get("strides"), attrs.get("dilations"), pads)
    c = Case(name, opset=10)
    ins = {"x": x, "w": w}
    names = ["x", "w"]
    zero_points(names, ins, [("x_zero_point", xzp, x.dtype), ("w_zero_point", wzp, w.dtype)])
    c.node("ConvInteger", names, ["y"], **attrs)
    c.save(ins, {"y": y.astype(np.int32)})


def qlinear_case(name, x, xs, xzp, w, ws, wzp, ys, yzp, bias=None, **attrs):
    xi = x.astype(np.int64) - int(xzp)
    wz = np.asarray(wzp, np.int64).reshape((-1,) + (1,) * (w.ndim - 1))
    wi = w.astype(np.int64) - wz
    acc = conv_int(xi, wi, attrs.get("group", 1), attrs.get("strides"), attrs.get("dilations"),
                   attrs.get("pads"))
    if bias is not None:
        acc = acc + bias.astype(np.int64).reshape((1, -1) + (1,) * (x.ndim - 2))
    mult = (np.float32(xs) * np.asarray(ws, np.float32)) / np.float32(ys)
    mult = mult.reshape((1, -1) + (1,) * (x.ndim - 2)).astype(np.float64)
    info = np.iinfo(yzp.dtype)
    y = np.clip(np.round(acc * mult) + int(yzp), info.min, info.max).astype(yzp.dtype)
    c = Case(name, opset=10)
    names = ["x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp"]
    ins = {"x": x, "xs": np.array(xs, np.float32), "xzp": np.array(xzp, x.dtype), "w": w,
           "ws": np.asarray(ws, np.float32), "wzp": np.asarray(wzp, w.dtype),
           "ys": np.array(ys, np.float32), "yzp": yzp}
    if bias is not None:
        names.append("B")
        ins["B"] = bias
    c.node("QLinearConv", names, ["y"], **attrs)
    c.save(ins, {"y": y})


def main():
    g = rng(5)
    # ConvInteger
    x = qint(g, (2, 4, 7, 9), np.uint8)
    w = qint(g, (6, 2, 3, 2), np.uint8)
    conv_integer_case("convinteger_u8_group2_stride_dil_pads", x, w, np.uint8(131), np.uint8(7),
                      group=2, strides=[2, 1], dilations=[2, 3], pads=[1, 0, 2, 3])
    xs8 = qint(g, (1, 3, 11), np.int8)
    ws8 = qint(g, (5, 3, 4), np.int8)
    conv_integer_case("convinteger_s8_1d_per_channel_wzp", xs8, ws8, np.int8(-3),
                      qint(g, (5,), np.int8), pads=[2, 1], strides=[3])
    conv_integer_case("convinteger_u8x_s8w_no_zero_points", x[:1, :2], qint(g, (3, 2, 2, 2),
                                                                           np.int8))
    conv_integer_case("convinteger_3d_same_upper", qint(g, (1, 2, 4, 5, 3), np.uint8),
                      qint(g, (2, 2, 2, 3, 2), np.uint8), np.uint8(100), np.uint8(128),
                      auto_pad="SAME_UPPER", strides=[2, 2, 1])
    conv_integer_case("convinteger_depthwise", x, qint(g, (4, 1, 3, 3), np.uint8), np.uint8(0),
                      qint(g, (4,), np.uint8), group=4, pads=[1, 1, 1, 1])

    # QLinearConv
    xq = qint(g, (2, 4, 6, 5), np.uint8)
    wq = qint(g, (6, 2, 3, 3), np.int8)
    qlinear_case("qlinearconv_u8_s8w_per_tensor_bias", xq, 0.02, np.uint8(120), wq, 0.005,
                 np.int8(0), 0.1, np.uint8(128), bias=g.integers(-2000, 2000, 6).astype(np.int32),
                 group=2, pads=[1, 0, 1, 2])
    qlinear_case("qlinearconv_per_channel_scales_zps", xq, 0.03, np.uint8(7), wq,
                 g.uniform(0.001, 0.01, 6).astype(np.float32), qint(g, (6,), np.int8), 3.0,
                 np.uint8(10), strides=[2, 2], group=2)
    xi8 = qint(g, (1, 3, 9), np.int8)
    qlinear_case("qlinearconv_s8_1d_s8_out", xi8, 0.1, np.int8(-5), qint(g, (4, 3, 3), np.int8),
                 0.02, np.int8(3), 0.3, np.int8(-2), dilations=[2], pads=[2, 2])
    qlinear_case("qlinearconv_saturates", xq, 1.0, np.uint8(0), wq, 1.0, np.int8(0), 0.5,
                 np.uint8(0), group=2)
    qlinear_case("qlinearconv_depthwise_bias", xq, 0.02, np.uint8(128),
                 qint(g, (4, 1, 3, 3), np.uint8), 0.01, np.uint8(128), 0.02, np.uint8(128),
                 bias=g.integers(-500, 500, 4).astype(np.int32), group=4, pads=[1, 1, 1, 1])

    # errors
    c = Case("convinteger_err_wzp_count", opset=10).expect_error(ERR_SHAPE,
                                                                 "one value per output channel")
    c.node("ConvInteger", ["x", "w", "", "wzp"], ["y"], group=2)
    c.save({"x": x, "w": w, "wzp": qint(g, (4,), np.uint8)}, {"y": np.zeros((2, 6, 5, 8), np.int32)})
    c = Case("convinteger_err_xzp_per_channel", opset=10).expect_error(
        ERR_SHAPE, "x_zero_point [4] must be a scalar")
    c.node("ConvInteger", ["x", "w", "xzp"], ["y"], group=2)
    c.save({"x": x, "w": w, "xzp": qint(g, (4,), np.uint8)},
           {"y": np.zeros((2, 6, 5, 8), np.int32)})
    c = Case("convinteger_err_float_x", opset=10, check=False).expect_error(ERR_TYPE, "input 0")
    c.node("ConvInteger", ["x", "w"], ["y"])
    c.save({"x": x.astype(np.float32), "w": w[:, :1].repeat(4, axis=1)},
           {"y": np.zeros((2, 6, 5, 8), np.int32)})
    c = Case("qlinearconv_err_bias", opset=10).expect_error(ERR_SHAPE, "B [5] must be 1-D")
    c.node("QLinearConv", ["x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp", "B"], ["y"], group=2)
    c.save({"x": xq, "xs": np.array(0.1, np.float32), "xzp": np.array(0, np.uint8), "w": wq,
            "ws": np.array(0.1, np.float32), "wzp": np.array(0, np.int8),
            "ys": np.array(0.1, np.float32), "yzp": np.array(0, np.uint8),
            "B": np.zeros(5, np.int32)}, {"y": np.zeros((2, 6, 4, 3), np.uint8)})
    c = Case("qlinearconv_err_channels", opset=10).expect_error(ERR_SHAPE, "channels")
    c.node("QLinearConv", ["x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp"], ["y"])
    c.save({"x": xq, "xs": np.array(0.1, np.float32), "xzp": np.array(0, np.uint8), "w": wq,
            "ws": np.array(0.1, np.float32), "wzp": np.array(0, np.int8),
            "ys": np.array(0.1, np.float32), "yzp": np.array(0, np.uint8)},
           {"y": np.zeros((2, 6, 4, 3), np.uint8)})


def fast_path_cases():
    """data/conv_quant/: sizes that cross the cpu fast path's blocks (12 output
    channels, 32-pixel micro-tiles, 192-pixel tiles) with tails, every mix of
    int8/uint8 data and weights, and an int32 sum that wraps around. tests/
    meson.build runs them on the reference, cpu-vnni and cpu-portable: each
    must equal these numpy integers exactly."""
    g = rng(12)
    d = "conv_quant/"
    conv_integer_case(d + "convinteger_u8_u8w_tiles", qint(g, (2, 20, 17, 23), np.uint8),
                      qint(g, (29, 20, 3, 3), np.uint8), np.uint8(117), np.uint8(131),
                      pads=[1, 1, 1, 1])
    conv_integer_case(d + "convinteger_s8_s8w_per_channel_group",
                      qint(g, (1, 12, 15, 40), np.int8), qint(g, (30, 4, 3, 5), np.int8),
                      np.int8(-7), qint(g, (30,), np.int8), group=3, strides=[2, 1],
                      dilations=[1, 2], pads=[2, 1, 0, 3])
    conv_integer_case(d + "convinteger_u8_u8w_per_channel_1d", qint(g, (3, 7, 300), np.uint8),
                      qint(g, (13, 7, 5), np.uint8), np.uint8(255), qint(g, (13,), np.uint8),
                      strides=[3], pads=[4, 4])
    conv_integer_case(d + "convinteger_s8_u8w_3d", qint(g, (1, 5, 6, 7, 8), np.int8),
                      qint(g, (14, 5, 2, 3, 3), np.uint8), np.int8(100), np.uint8(0),
                      strides=[1, 2, 1], dilations=[2, 1, 1], pads=[1, 0, 1, 0, 2, 1])
    conv_integer_case(d + "convinteger_u8_s8w_depthwise", qint(g, (1, 16, 15, 21), np.uint8),
                      qint(g, (16, 1, 3, 3), np.int8), group=16, pads=[1, 1, 1, 1])
    conv_integer_case(d + "convinteger_u8_u8w_pointwise", qint(g, (1, 64, 8, 30), np.uint8),
                      qint(g, (40, 64, 1, 1), np.uint8), np.uint8(3), np.uint8(140))
    # 255 * -255 * 4096 * 9 = -2397081600 wraps to 1897885696 in int32
    xw = np.full((1, 4096, 3, 3), 255, np.uint8)
    ww = np.zeros((2, 4096, 3, 3), np.uint8)
    ww[1] = qint(g, (4096, 3, 3), np.uint8)
    conv_integer_case(d + "convinteger_int32_wraps", xw, ww, np.uint8(0), np.uint8(255))
    qlinear_case(d + "qlinearconv_u8_u8w_per_channel_bias", qint(g, (1, 16, 14, 30), np.uint8),
                 0.05, np.uint8(128), qint(g, (27, 16, 3, 3), np.uint8),
                 g.uniform(0.001, 0.01, 27).astype(np.float32), qint(g, (27,), np.uint8), 2.0,
                 np.uint8(120), bias=g.integers(-20000, 20000, 27).astype(np.int32),
                 pads=[1, 1, 1, 1])
    qlinear_case(d + "qlinearconv_s8_s8w_group_s8_out", qint(g, (2, 8, 21, 19), np.int8), 0.1,
                 np.int8(-3), qint(g, (14, 4, 3, 3), np.int8), 0.02, np.int8(5), 4.0,
                 np.int8(-1), group=2, strides=[2, 2], pads=[0, 1, 1, 0])

    # MatMulInteger (the cpu impls run it as a 1x1 convolution)
    def mmi(name, a, b, za=None, zb=None, const_b=False):
        zr = 0 if za is None else np.asarray(za, np.int64).reshape(
            (-1, 1) if np.ndim(za) == 1 else ())
        zc = 0 if zb is None else np.asarray(zb, np.int64)
        y = np.matmul(a.astype(np.int64) - zr, b.astype(np.int64) - zc)
        c = Case(d + name, opset=10)
        names, ins = ["a", "b"], {"a": a, "b": b}
        if const_b:  # B and its zero point as initializers: the cpu impls pack B at load
            del ins["b"]
            c.initializer("b", b)
            if zb is not None:
                c.initializer("zb", np.asarray(zb, b.dtype))
        zero_points(names, ins, [("za", za, a.dtype), ("zb", zb, b.dtype)])
        if const_b:
            ins.pop("zb", None)  # an initializer, made above
        c.node("MatMulInteger", names, ["y"])
        c.save(ins, {"y": y.astype(np.int32)})

    mmi("matmulinteger_u8_u8_batch_a", qint(g, (3, 29, 70), np.uint8),
        qint(g, (70, 450), np.uint8), np.uint8(131), np.uint8(7))
    mmi("matmulinteger_s8_s8_rows_zp_batched", qint(g, (2, 13, 33), np.int8),
        qint(g, (2, 33, 200), np.int8), qint(g, (13,), np.int8), np.int8(-9))
    mmi("matmulinteger_u8_s8_column_zp", qint(g, (5, 20), np.uint8), qint(g, (20, 37), np.int8),
        np.uint8(200), qint(g, (37,), np.int8))
    mmi("matmulinteger_s8_u8_no_zp", qint(g, (17, 65), np.int8), qint(g, (65, 33), np.uint8))
    mmi("matmulinteger_const_b_u8_u8", qint(g, (2, 41, 300), np.uint8),
        qint(g, (300, 410), np.uint8), np.uint8(121), np.uint8(133), const_b=True)
    mmi("matmulinteger_const_b_s8_s8_rows_zp", qint(g, (13, 70), np.int8),
        qint(g, (70, 50), np.int8), qint(g, (13,), np.int8), np.int8(-4), const_b=True)
    # 255 * -255 * 36864 wraps in int32
    wa = np.full((2, 36864), 255, np.uint8)
    wb = np.zeros((36864, 3), np.uint8)
    wb[:, 1] = qint(g, (36864,), np.uint8)
    mmi("matmulinteger_int32_wraps", wa, wb, np.uint8(0), np.uint8(255))


if __name__ == "__main__":
    main()
    fast_path_cases()
