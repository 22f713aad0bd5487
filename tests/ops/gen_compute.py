"""gen_compute.py — numpy-checked op cases for the compute families:
MatMul, Gemm, Conv, MaxPool, AveragePool, Global*Pool, BatchNormalization,
InstanceNormalization, LayerNormalization, Softmax, LogSoftmax.

Expected outputs come from the small numpy references below (written from
the ONNX operator specs, independent of libmopt's C code), computed in
float64 and rounded to float32. With --check-ort every case is also run with
ONNX Runtime and compared, as a check of the references themselves (ORT's
results are never stored).

Run from the repo root: python3 tests/ops/gen_compute.py [--check-ort]
"""
import itertools
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opcase import Case, normal, opt, rng  # noqa: E402

CHECK_ORT = "--check-ort" in sys.argv
ORT_FAILS = []
N_CASES = 0


def f32(a):
    return np.asarray(a, dtype=np.float32)


def randn(shape, seed=1234, scale=1.0):
    return normal(rng(seed), shape, scale=scale)


def save(c, inputs, outputs, input_shapes=None):
    global N_CASES
    path = c.save(inputs, outputs, input_shapes)
    N_CASES += 1
    if CHECK_ORT:
        import onnxruntime as ort
        try:
            sess = ort.InferenceSession(os.path.join(path, "model.onnx"),
                                        providers=["CPUExecutionProvider"])
            got = sess.run(None, inputs)
            atol, rtol = c.tolerance or (1e-5, 1e-4)
            for name, g, e in zip(outputs, got, outputs.values()):
                if g.shape != e.shape or not np.allclose(g, e, atol=atol, rtol=rtol,
                                                         equal_nan=True):
                    ORT_FAILS.append(f"{c.name}:{name} ort {g.shape} vs numpy {e.shape}")
        except Exception as ex:  # ORT may not implement every form
            ORT_FAILS.append(f"{c.name}: ORT error {str(ex)[:200]}")


# ---- window geometry (from the ONNX Conv/Pool specs) ----------------------

def window_geometry(in_sp, k, strides, dil, pads, auto_pad, ceil_mode=False):
    """Returns (out sizes, begin pads, end pads)."""
    S = len(in_sp)
    out, pb, pe = [], [], []
    for i in range(S):
        ek = dil[i] * (k[i] - 1) + 1
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-in_sp[i] // strides[i])
            total = max(0, (o - 1) * strides[i] + ek - in_sp[i])
            b = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            out.append(o), pb.append(b), pe.append(total - b)
            continue
        b, e = (0, 0) if auto_pad == "VALID" else (pads[i], pads[S + i])
        span = in_sp[i] + b + e - ek
        if ceil_mode:
            o = math.ceil(span / strides[i]) + 1
            if (o - 1) * strides[i] >= in_sp[i] + b:  # window would start in the end pad
                o -= 1
        else:
            o = span // strides[i] + 1
        out.append(o), pb.append(b), pe.append(e)
    return out, pb, pe


def ref_conv(x, w, b, strides=None, dil=None, pads=None, group=1, auto_pad="NOTSET"):
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    N, C = x.shape[:2]
    M = w.shape[0]
    in_sp, k = list(x.shape[2:]), list(w.shape[2:])
    S = len(in_sp)
    strides = strides or [1] * S
    dil = dil or [1] * S
    pads = pads or [0] * (2 * S)
    out, pb, pe = window_geometry(in_sp, k, strides, dil, pads, auto_pad)
    xp = np.zeros((N, C) + tuple(in_sp[i] + pb[i] + pe[i] + dil[i] * k[i] for i in range(S)))
    xp[(slice(None), slice(None)) + tuple(slice(pb[i], pb[i] + in_sp[i]) for i in range(S))] = x
    y = np.zeros((N, M) + tuple(out))
    cin_g, cout_g = C // group, M // group
    for m in range(M):
        g = m // cout_g
        for o in itertools.product(*[range(n) for n in out]):
            sl = tuple(slice(o[i] * strides[i], o[i] * strides[i] + dil[i] * (k[i] - 1) + 1,
                             dil[i]) for i in range(S))
            patch = xp[(slice(None), slice(g * cin_g, (g + 1) * cin_g)) + sl]
            y[(slice(None), m) + o] = np.sum(patch * w[m], axis=tuple(range(1, 2 + S)))
        if b is not None:
            y[:, m] += b[m]
    return f32(y)


def ref_pool(x, kind, k, strides=None, dil=None, pads=None, auto_pad="NOTSET", ceil_mode=False,
             count_include_pad=False):
    x = x.astype(np.float64)
    N, C = x.shape[:2]
    in_sp = list(x.shape[2:])
    S = len(in_sp)
    strides = strides or [1] * S
    dil = dil or [1] * S
    pads = pads or [0] * (2 * S)
    out, pb, pe = window_geometry(in_sp, k, strides, dil, pads, auto_pad, ceil_mode)
    # room for every tap, including ceil_mode overhang past the end pad
    full = tuple(pb[i] + (out[i] - 1) * strides[i] + dil[i] * (k[i] - 1) + 1 for i in range(S))
    full = tuple(max(full[i], pb[i] + in_sp[i] + pe[i]) for i in range(S))
    inner = (slice(None), slice(None)) + tuple(slice(pb[i], pb[i] + in_sp[i]) for i in range(S))
    xp = np.zeros((N, C) + full)
    valid = np.zeros((N, C) + full)  # 1 inside the input
    padded = np.zeros((N, C) + full)  # 1 inside input + declared pads
    xp[inner] = x
    valid[inner] = 1
    padded[(slice(None), slice(None)) + tuple(slice(0, pb[i] + in_sp[i] + pe[i])
                                               for i in range(S))] = 1
    y = np.zeros((N, C) + tuple(out))
    for o in itertools.product(*[range(n) for n in out]):
        sl = (slice(None), slice(None)) + tuple(
            slice(o[i] * strides[i], o[i] * strides[i] + dil[i] * (k[i] - 1) + 1, dil[i])
            for i in range(S))
        axes = tuple(range(2, 2 + S))
        if kind == "max":
            v = np.where(valid[sl] > 0, xp[sl], -np.inf)
            y[(slice(None), slice(None)) + o] = v.max(axis=axes)
        else:
            cnt = (padded[sl] if count_include_pad else valid[sl]).sum(axis=axes)
            y[(slice(None), slice(None)) + o] = (xp[sl] * valid[sl]).sum(axis=axes) / cnt
    return f32(y)


def pool_attrs(k, strides=None, dil=None, pads=None, auto_pad=None, ceil_mode=None,
               count_include_pad=None):
    """A pool node's attributes; Case.node leaves out those given as None."""
    return {"kernel_shape": k, "strides": strides, "dilations": dil, "pads": pads,
            "auto_pad": auto_pad, "ceil_mode": opt(int, ceil_mode),
            "count_include_pad": opt(int, count_include_pad)}


# ---- MatMul / Gemm ---------------------------------------------------------

def gen_matmul():
    shapes = [
        ("matmul_2d", (3, 4), (4, 5)),
        ("matmul_1d_1d", (7,), (7,)),
        ("matmul_1d_2d", (4,), (4, 5)),
        ("matmul_2d_1d", (3, 4), (4,)),
        ("matmul_3d", (2, 3, 4), (2, 4, 5)),
        ("matmul_3d_2d_bcast", (2, 3, 4), (4, 5)),
        ("matmul_2d_3d_bcast", (3, 4), (2, 4, 5)),
        ("matmul_4d_bcast", (2, 1, 3, 4), (1, 3, 4, 5)),
        ("matmul_1d_4d", (4,), (2, 3, 4, 5)),
        ("matmul_4d_1d", (2, 3, 5, 4), (4,)),
        ("matmul_odd", (17, 33), (33, 9)),
        ("matmul_k0", (3, 0), (0, 5)),
        ("matmul_m0", (2, 0, 4), (4, 3)),
    ]
    for name, sa, sb in shapes:
        a, b = randn(sa, 1), randn(sb, 2)
        c = Case(name, opset=13).tol(1e-4, 1e-4)
        c.node("MatMul", ["a", "b"], ["y"])
        save(c, {"a": a, "b": b}, {"y": f32(np.matmul(a.astype(np.float64), b.astype(np.float64)))})
    # weights as an initializer, symbolic batch
    a, b = randn((3, 6, 8), 3), randn((8, 4), 4)
    c = Case("matmul_symbolic_weight", opset=17).tol(1e-4, 1e-4)
    c.initializer("w", b)
    c.node("MatMul", ["a", "w"], ["y"])
    save(c, {"a": a}, {"y": f32(a.astype(np.float64) @ b)}, input_shapes={"a": ["batch", "seq", 8]})
    # float64
    a, b = rng(5).standard_normal((2, 3, 4)), rng(6).standard_normal((4, 2))
    c = Case("matmul_f64", opset=13)
    c.node("MatMul", ["a", "b"], ["y"])
    save(c, {"a": a, "b": b}, {"y": a @ b})


def gen_gemm():
    M, K, N = 3, 5, 4
    cases = [
        # name, transA, transB, alpha, beta, C shape (None = no C), opset
        ("gemm_plain_noc", 0, 0, None, None, None, 13),
        ("gemm_opset11_noc", 0, 0, None, None, None, 11),
        ("gemm_transA", 1, 0, None, None, (M, N), 13),
        ("gemm_transB", 0, 1, None, None, (M, N), 13),
        ("gemm_transAB_alpha_beta", 1, 1, 0.5, 2.0, (M, N), 13),
        ("gemm_alpha_only", 0, 0, 0.25, None, (M, N), 11),
        ("gemm_beta_zero", 0, 0, None, 0.0, (M, N), 13),
        ("gemm_c_row", 0, 1, 1.5, 0.5, (N,), 13),
        ("gemm_c_col", 1, 0, None, 3.0, (M, 1), 13),
        ("gemm_c_scalar", 0, 0, None, -1.0, (), 13),
        ("gemm_c_1x1", 1, 1, None, None, (1, 1), 13),
        ("gemm_c_1xn", 0, 0, 2.0, 1.0, (1, N), 9),
    ]
    for name, ta, tb, alpha, beta, cs, opset in cases:
        a = randn((K, M) if ta else (M, K), 11)
        b = randn((N, K) if tb else (K, N), 12)
        attrs = {"transA": 1 if ta else None, "transB": 1 if tb else None, "alpha": alpha,
                 "beta": beta}
        al = 1.0 if alpha is None else alpha
        be = 1.0 if beta is None else beta
        y = al * ((a.T if ta else a).astype(np.float64) @ (b.T if tb else b))
        inputs = {"a": a, "b": b}
        if cs is not None:
            cc = randn(cs, 13)
            inputs["c"] = cc
            y = y + be * cc
        c = Case(name, opset=opset).tol(1e-4, 1e-4)
        c.node("Gemm", list(inputs), ["y"], **attrs)
        save(c, inputs, {"y": f32(y)})
    # fully-connected layer: weights and bias as initializers, odd sizes
    x, w, bias = randn((7, 13), 21), randn((11, 13), 22), randn((11,), 23)
    c = Case("gemm_fc_initializers", opset=17).tol(1e-4, 1e-4)
    c.initializer("w", w).initializer("bias", bias)
    c.node("Gemm", ["x", "w", "bias"], ["y"], transB=1)
    save(c, {"x": x}, {"y": f32(x.astype(np.float64) @ w.T + bias)},
         input_shapes={"x": ["batch", 13]})
    # a classifier head at batch 1 with a symbolic batch: M = 1 at run time
    # (oneDNN impls run it as a GEMV on panels of B, 150 columns: a ragged
    # last panel), then at batch 3, 8 and 9 (oneDNN itself: its matmul is as
    # fast as the panels read 4 rows per pass at M = 4..8)
    for name, tb, beta, cshape, m in (("gemm_head_gemv_b1", 1, 2.0, (150,), 1),
                                      ("gemm_head_gemv_b3", 1, 2.0, (150,), 3),
                                      ("gemm_head_gemv_b8", 0, 2.0, (150,), 8),
                                      ("gemm_head_gemv_b9", 1, 2.0, (150,), 9),
                                      ("gemm_head_gemv_c_scalar", 0, -1.0, (), 1)):
        x, w, cc = randn((m, 33), 24), randn((150, 33) if tb else (33, 150), 25), randn(cshape, 26)
        c = Case(name, opset=17).tol(1e-4, 1e-4)
        c.initializer("w", w).initializer("c", cc)
        c.node("Gemm", ["x", "w", "c"], ["y"], transB=tb or None, alpha=0.5, beta=beta)
        y = 0.5 * (x.astype(np.float64) @ (w.T if tb else w)) + beta * cc
        save(c, {"x": x}, {"y": f32(y)}, input_shapes={"x": ["batch", 33]})


# ---- Conv ------------------------------------------------------------------

def gen_conv():
    cases = [
        # name, x shape, w shape, bias?, attrs
        ("conv2d_basic", (1, 3, 7, 7), (4, 3, 3, 3), True, {}),
        ("conv2d_no_bias", (2, 2, 5, 6), (3, 2, 3, 2), False, {}),
        ("conv2d_pads_strides", (2, 3, 9, 8), (4, 3, 3, 3), True,
         {"pads": [1, 2, 0, 1], "strides": [2, 1]}),
        ("conv2d_dilations", (1, 2, 10, 9), (3, 2, 3, 3), True,
         {"dilations": [2, 3], "pads": [2, 2, 2, 2]}),
        ("conv2d_stride_dilation_odd", (1, 3, 11, 13), (2, 3, 3, 2), True,
         {"dilations": [2, 1], "strides": [3, 2], "pads": [0, 1, 1, 0]}),
        ("conv2d_group2", (2, 4, 6, 7), (6, 2, 3, 3), True, {"group": 2, "pads": [1, 1, 1, 1]}),
        ("conv2d_depthwise", (1, 3, 8, 8), (3, 1, 3, 3), True,
         {"group": 3, "pads": [1, 1, 1, 1], "strides": [2, 2]}),
        ("conv2d_depthwise_mult2", (1, 3, 7, 6), (6, 1, 3, 3), False, {"group": 3}),
        ("conv2d_pointwise", (2, 5, 4, 3), (7, 5, 1, 1), True, {}),
        ("conv2d_same_upper_even_k", (1, 2, 7, 7), (3, 2, 4, 4), True, {"auto_pad": "SAME_UPPER"}),
        ("conv2d_same_upper_stride2", (1, 2, 7, 8), (3, 2, 3, 3), True,
         {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
        ("conv2d_same_lower_even_k", (1, 2, 7, 6), (2, 2, 4, 2), True, {"auto_pad": "SAME_LOWER"}),
        ("conv2d_same_lower_stride2", (1, 2, 8, 9), (2, 2, 3, 4), False,
         {"auto_pad": "SAME_LOWER", "strides": [2, 3]}),
        ("conv2d_valid", (1, 3, 9, 10), (2, 3, 3, 3), True, {"auto_pad": "VALID", "strides": [2, 2]}),
        ("conv2d_kernel_shape_attr", (1, 2, 6, 6), (2, 2, 3, 2), True, {"kernel_shape": [3, 2]}),
        ("conv2d_notset_explicit", (1, 1, 5, 5), (1, 1, 3, 3), False, {"auto_pad": "NOTSET"}),
        ("conv1d_basic", (2, 3, 11), (5, 3, 3), True, {"pads": [1, 1], "strides": [2]}),
        ("conv1d_dilated_same_upper", (1, 2, 10), (4, 2, 3), True,
         {"dilations": [2], "auto_pad": "SAME_UPPER"}),
        ("conv1d_group_depthwise", (2, 4, 9), (4, 1, 5), True, {"group": 4, "pads": [2, 2]}),
        ("conv3d_basic", (1, 2, 5, 6, 4), (3, 2, 2, 3, 2), True,
         {"pads": [1, 0, 1, 0, 1, 1], "strides": [1, 2, 1]}),
    ]
    for name, xs, ws, has_b, attrs in cases:
        x, w = randn(xs, 31), randn(ws, 32)
        b = randn((ws[0],), 33) if has_b else None
        y = ref_conv(x, w, b, attrs.get("strides"), attrs.get("dilations"), attrs.get("pads"),
                     attrs.get("group", 1), attrs.get("auto_pad", "NOTSET"))
        inputs = {"x": x, "w": w}
        if has_b:
            inputs["b"] = b
        c = Case(name, opset=11 if "1d" in name else 13).tol(1e-4, 1e-4)
        c.node("Conv", list(inputs), ["y"], **attrs)
        save(c, inputs, {"y": y})
    # weights as initializers and a symbolic batch (the usual exported form)
    x, w, b = randn((3, 3, 6, 5), 34), randn((4, 3, 3, 3), 35), randn((4,), 36)
    c = Case("conv2d_initializers_symbolic_batch", opset=17).tol(1e-4, 1e-4)
    c.initializer("w", w).initializer("b", b)
    c.node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])
    save(c, {"x": x}, {"y": ref_conv(x, w, b, pads=[1, 1, 1, 1])},
         input_shapes={"x": ["N", 3, 6, 5]})
    # a 1x1 conv on a 1x1 image (squeeze-excitation, a classifier head) with a
    # symbolic batch: at batch 1 to 8 the oneDNN impls run it as a GEMV of
    # that many rows (150 outputs: a ragged last panel; 5 rows: a 4-row pass
    # and a 1-row one), at batch 9 as a conv; with an activation and a
    # residual (FusedConv at opt_level 3)
    for m in (1, 2, 5, 9):
        x, w, b = randn((m, 37, 1, 1), 42), randn((150, 37, 1, 1), 43), randn((150,), 44)
        r = randn((m, 150, 1, 1), 45)
        c = Case("conv2d_1x1_image_b%d" % m, opset=17).tol(1e-4, 1e-4)
        c.initializer("w", w).initializer("b", b)
        c.node("Conv", ["x", "w", "b"], ["t"])
        c.node("HardSigmoid", ["t"], ["h"], alpha=0.2, beta=0.5)
        c.node("Add", ["h", "r"], ["y"])
        t = ref_conv(x, w, b).astype(np.float64)
        save(c, {"x": x, "r": r}, {"y": f32(np.clip(0.2 * t + 0.5, 0, 1) + r)},
             input_shapes={"x": ["N", 37, 1, 1], "r": ["N", 150, 1, 1]})
        c = Case("conv2d_1x1_image_residual_b%d" % m, opset=17).tol(1e-4, 1e-4)
        c.initializer("w", w).initializer("b", b)
        c.node("Conv", ["x", "w", "b"], ["t"])
        c.node("Add", ["t", "r"], ["s"])
        c.node("Relu", ["s"], ["y"])
        save(c, {"x": x, "r": r}, {"y": f32(np.maximum(t + r, 0))},
             input_shapes={"x": ["N", 37, 1, 1], "r": ["N", 150, 1, 1]})
    # an empty batch
    x, w, b = randn((0, 2, 5, 5), 39), randn((3, 2, 3, 3), 40), randn((3,), 41)
    c = Case("conv2d_empty_batch", opset=13)
    c.node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])
    save(c, {"x": x, "w": w, "b": b}, {"y": ref_conv(x, w, b, pads=[1, 1, 1, 1])})
    # an omitted optional bias (empty input name)
    x, w = randn((1, 2, 5, 5), 37), randn((2, 2, 3, 3), 38)
    c = Case("conv2d_omitted_bias", opset=13).tol(1e-4, 1e-4)
    c.node("Conv", ["x", "w", ""], ["y"])
    save(c, {"x": x, "w": w}, {"y": ref_conv(x, w, None)})


# ---- pooling -----------------------------------------------------------------

def gen_pool():
    cases = [
        # name, op, x shape, attrs
        ("maxpool2d_basic", "max", (1, 2, 6, 6), dict(k=[2, 2], strides=[2, 2])),
        ("maxpool2d_pads", "max", (2, 3, 7, 5), dict(k=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
        ("maxpool2d_asym_pads", "max", (1, 2, 6, 7), dict(k=[3, 2], pads=[0, 1, 2, 0])),
        ("maxpool2d_ceil", "max", (1, 2, 7, 7), dict(k=[2, 2], strides=[2, 2], ceil_mode=True)),
        ("maxpool2d_ceil_drop_last", "max", (1, 1, 5, 5),
         dict(k=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=True)),
        ("maxpool2d_ceil_stride3", "max", (1, 2, 8, 10),
         dict(k=[3, 2], strides=[3, 3], pads=[1, 0, 0, 1], ceil_mode=True)),
        ("maxpool2d_dilations", "max", (1, 2, 9, 8), dict(k=[2, 3], dil=[2, 2], strides=[1, 2])),
        ("maxpool2d_same_upper", "max", (1, 2, 7, 6),
         dict(k=[3, 2], strides=[2, 2], auto_pad="SAME_UPPER")),
        ("maxpool2d_same_lower", "max", (1, 2, 7, 6),
         dict(k=[3, 2], strides=[2, 2], auto_pad="SAME_LOWER")),
        ("maxpool2d_valid", "max", (1, 2, 7, 6), dict(k=[3, 3], strides=[2, 2], auto_pad="VALID")),
        ("maxpool1d", "max", (2, 3, 11), dict(k=[3], strides=[2], pads=[1, 1])),
        ("maxpool3d", "max", (1, 2, 5, 4, 6), dict(k=[2, 2, 3], strides=[2, 1, 2])),
        ("avgpool2d_basic", "avg", (1, 2, 6, 6), dict(k=[2, 2], strides=[2, 2])),
        ("avgpool2d_pads_exclude", "avg", (2, 2, 7, 5),
         dict(k=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
        ("avgpool2d_pads_include", "avg", (2, 2, 7, 5),
         dict(k=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=True)),
        ("avgpool2d_asym_pads_include", "avg", (1, 2, 6, 5),
         dict(k=[3, 2], pads=[0, 1, 2, 1], count_include_pad=True)),
        ("avgpool2d_ceil", "avg", (1, 2, 7, 8), dict(k=[3, 3], strides=[2, 2], ceil_mode=True)),
        ("avgpool2d_ceil_pads_include", "avg", (1, 2, 7, 6),
         dict(k=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=True,
              count_include_pad=True)),
        ("avgpool2d_ceil_pads_exclude", "avg", (1, 2, 7, 6),
         dict(k=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=True,
              count_include_pad=False)),
        ("avgpool2d_same_upper", "avg", (1, 2, 7, 6),
         dict(k=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER")),
        ("avgpool2d_same_lower_include", "avg", (1, 2, 5, 6),
         dict(k=[2, 3], auto_pad="SAME_LOWER", count_include_pad=True)),
        ("avgpool1d", "avg", (2, 3, 10), dict(k=[4], strides=[3], pads=[2, 1])),
        ("avgpool3d", "avg", (1, 2, 4, 5, 6), dict(k=[2, 3, 2], strides=[2, 2, 2])),
    ]
    for name, kind, xs, a in cases:
        x = randn(xs, 41)
        y = ref_pool(x, kind, a["k"], a.get("strides"), a.get("dil"), a.get("pads"),
                     a.get("auto_pad", "NOTSET"), a.get("ceil_mode", False),
                     a.get("count_include_pad", False))
        attrs = pool_attrs(a["k"], a.get("strides"), a.get("dil"), a.get("pads"),
                           a.get("auto_pad"), a.get("ceil_mode"), a.get("count_include_pad"))
        c = Case(name, opset=13 if "ceil" in name or "dil" in name else 11).tol(1e-5, 1e-4)
        c.node("MaxPool" if kind == "max" else "AveragePool", ["x"], ["y"], **attrs)
        save(c, {"x": x}, {"y": y})
    # MaxPool's Indices: flat index of each window's maximum in X (row-major, or
    # column-major over the spatial axes with storage_order=1), plane offset included
    for name, xs, a, order in (
            ("maxpool2d_indices_pads_dil", (2, 3, 7, 6),
             dict(k=[3, 2], strides=[2, 1], dil=[1, 2], pads=[1, 0, 1, 1]), 0),
            ("maxpool2d_indices_colmajor_ceil", (1, 2, 7, 5),
             dict(k=[2, 2], strides=[2, 2], ceil_mode=True), 1),
            ("maxpool1d_indices", (2, 2, 9), dict(k=[3], strides=[2], pads=[1, 1]), 0),
            ("maxpool3d_indices_colmajor", (1, 2, 4, 5, 3), dict(k=[2, 3, 2], pads=[0, 1, 1, 1, 1, 0]),
             1)):
        x = randn(xs, 43)
        S = len(xs) - 2
        strides, dil = a.get("strides") or [1] * S, a.get("dil") or [1] * S
        out, pb, _ = window_geometry(list(xs[2:]), a["k"], strides, dil, a.get("pads") or [0] * 2 * S,
                                     "NOTSET", a.get("ceil_mode", False))
        y = np.zeros(xs[:2] + tuple(out), np.float32)
        ind = np.zeros(xs[:2] + tuple(out), np.int64)
        plane = int(np.prod(xs[2:]))
        for n, ch in itertools.product(range(xs[0]), range(xs[1])):
            for o in itertools.product(*[range(m) for m in out]):
                best, at = None, None
                for t in itertools.product(*[range(m) for m in a["k"]]):
                    pos = tuple(o[i] * strides[i] - pb[i] + t[i] * dil[i] for i in range(S))
                    if any(p_ < 0 or p_ >= xs[2 + i] for i, p_ in enumerate(pos)):
                        continue
                    if best is None or x[(n, ch) + pos] > best:
                        best, at = x[(n, ch) + pos], pos
                y[(n, ch) + o] = best
                ind[(n, ch) + o] = (n * xs[1] + ch) * plane + np.ravel_multi_index(
                    at, xs[2:], order="F" if order else "C")
        attrs = pool_attrs(a["k"], a.get("strides"), a.get("dil"), a.get("pads"), None,
                           a.get("ceil_mode"), None)
        c = Case(name, opset=12)
        c.node("MaxPool", ["x"], ["y", "indices"], storage_order=order or None, **attrs)
        save(c, {"x": x}, {"y": y, "indices": ind})

    for op, fn in (("GlobalAveragePool", np.mean), ("GlobalMaxPool", np.max)):
        for xs in ((2, 3, 5, 4), (1, 4, 7), (1, 2, 3, 2, 4)):
            x = randn(xs, 42)
            y = f32(fn(x.astype(np.float64), axis=tuple(range(2, len(xs))), keepdims=True))
            c = Case(f"{op.lower()}_{len(xs) - 2}d", opset=13)
            c.node(op, ["x"], ["y"])
            save(c, {"x": x}, {"y": y})


# ---- normalization -----------------------------------------------------------

def gen_norm():
    for name, xs, eps, opset in (("batchnorm_4d", (2, 3, 4, 5), None, 15),
                                 ("batchnorm_2d", (5, 4), 1e-3, 14),
                                 ("batchnorm_3d_opset9", (2, 3, 7), 1e-2, 9)):
        C = xs[1]
        x = randn(xs, 51)
        scale, bias, mean = randn((C,), 52), randn((C,), 53), randn((C,), 54)
        var = f32(rng(55).uniform(0.5, 2.0, (C,)))
        e = 1e-5 if eps is None else eps
        bshape = (1, C) + (1,) * (len(xs) - 2)
        y = ((x.astype(np.float64) - mean.reshape(bshape)) / np.sqrt(var.reshape(bshape) + e)
             * scale.reshape(bshape) + bias.reshape(bshape))
        c = Case(name, opset=opset).tol(1e-5, 1e-4)
        attrs = {} if eps is None else {"epsilon": eps}
        c.initializer("scale", scale).initializer("bias", bias)
        c.initializer("mean", mean).initializer("var", var)
        c.node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], **attrs)
        save(c, {"x": x}, {"y": f32(y)})

    # training_mode=1: batch statistics normalize X, running statistics come out
    x = randn((3, 4, 5), 59)
    scale, bias, mean = randn((4,), 60), randn((4,), 61), randn((4,), 62)
    var = f32(rng(63).uniform(0.5, 2.0, (4,)))
    xd = x.astype(np.float64)
    bm, bv = xd.mean(axis=(0, 2)), xd.var(axis=(0, 2))
    y = (xd - bm[None, :, None]) / np.sqrt(bv[None, :, None] + 1e-3) * scale[None, :, None] \
        + bias[None, :, None]
    c = Case("batchnorm_training_3d_momentum", opset=15).tol(1e-5, 1e-4)
    c.node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y", "rm", "rv"],
           training_mode=1, epsilon=1e-3, momentum=0.7)
    save(c, {"x": x, "scale": scale, "bias": bias, "mean": mean, "var": var},
         {"y": f32(y), "rm": f32(mean * 0.7 + bm * 0.3), "rv": f32(var * 0.7 + bv * 0.3)})
    c = Case("batchnorm_stats_output_needs_training", opset=15, check=False).expect_error(
        6, "needs training_mode=1")
    c.node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y", "rm"])
    save(c, {"x": x, "scale": scale, "bias": bias, "mean": mean, "var": var},
         {"y": x, "rm": mean})

    x = randn((2, 3, 4, 5), 56)
    scale, bias = randn((3,), 57), randn((3,), 58)
    xd = x.astype(np.float64)
    m = xd.mean(axis=(2, 3), keepdims=True)
    v = xd.var(axis=(2, 3), keepdims=True)
    y = (xd - m) / np.sqrt(v + 1e-5) * scale.reshape(1, 3, 1, 1) + bias.reshape(1, 3, 1, 1)
    c = Case("instancenorm_4d", opset=13).tol(1e-5, 1e-4)
    c.node("InstanceNormalization", ["x", "s", "b"], ["y"])
    save(c, {"x": x, "s": scale, "b": bias}, {"y": f32(y)})

    def layernorm(x, axis, scale, bias, eps=1e-5):
        xd = x.astype(np.float64)
        ax = tuple(range(axis % x.ndim, x.ndim))
        m = xd.mean(axis=ax, keepdims=True)
        inv = 1.0 / np.sqrt(xd.var(axis=ax, keepdims=True) + eps)
        y = (xd - m) * inv * scale
        if bias is not None:
            y = y + bias
        return f32(y), f32(m), f32(inv)

    for name, xs, axis, with_bias, extra, sshape in (
            ("layernorm_last_bias", (2, 3, 8), -1, True, False, None),
            ("layernorm_last_nobias", (4, 7), -1, False, False, None),
            ("layernorm_axis_m2_bias", (2, 3, 4, 5), -2, True, False, None),
            ("layernorm_axis1", (3, 4, 5), 1, True, False, None),
            ("layernorm_stats_outputs", (2, 5, 6), -1, True, True, None),
            ("layernorm_axis_m2_scale_bcast", (2, 3, 4, 5), -2, True, False, (1, 5))):
        x = randn(xs, 61)
        ns = sshape or xs[axis % len(xs):]
        scale = randn(ns, 62)
        bias = randn(ns, 63) if with_bias else None
        y, m, inv = layernorm(x, axis, scale, bias)
        c = Case(name, opset=17).tol(1e-5, 1e-4)
        ins = {"x": x, "scale": scale}
        if with_bias:
            ins["bias"] = bias
        outs = {"y": y}
        if extra:
            outs["mean"], outs["inv_std"] = m, inv
        attrs = {} if axis == -1 else {"axis": axis}
        c.node("LayerNormalization", list(ins), list(outs), **attrs)
        save(c, ins, outs)

    def softmax(x, axis, log):
        xd = x.astype(np.float64)
        e = np.exp(xd - xd.max(axis=axis, keepdims=True))
        s = e.sum(axis=axis, keepdims=True)
        return f32(np.log(e / s) if log else e / s)

    def softmax_2d(x, axis, log):
        axis = axis % x.ndim
        rows = int(np.prod(x.shape[:axis], dtype=np.int64))
        return softmax(x.reshape(rows, -1), 1, log).reshape(x.shape)

    for op in ("Softmax", "LogSoftmax"):
        log = op == "LogSoftmax"
        low = op.lower()
        # opset 13+: along one axis (default -1)
        for name, xs, axis in ((f"{low}13_default", (2, 3, 5), None),
                               (f"{low}13_axis0", (3, 4), 0),
                               (f"{low}13_axis1_of3", (2, 5, 3), 1),
                               (f"{low}13_axis_m2_of4", (2, 3, 4, 3), -2),
                               (f"{low}13_1d", (9,), None)):
            x = randn(xs, 71, scale=3.0)
            c = Case(name, opset=13).tol(1e-5, 1e-4)
            attrs = {} if axis is None else {"axis": axis}
            c.node(op, ["x"], ["y"], **attrs)
            save(c, {"x": x}, {"y": softmax(x, -1 if axis is None else axis, log)})
        # opset < 13: coerced to 2-D at axis (default 1)
        for name, xs, axis in ((f"{low}11_default", (2, 3, 4), None),
                               (f"{low}11_axis0", (2, 3, 4), 0),
                               (f"{low}11_axis2", (2, 3, 4), 2),
                               (f"{low}11_axis_m1", (3, 2, 5), -1),
                               (f"{low}11_2d", (4, 6), None)):
            x = randn(xs, 72, scale=3.0)
            c = Case(name, opset=11).tol(1e-5, 1e-4)
            attrs = {} if axis is None else {"axis": axis}
            c.node(op, ["x"], ["y"], **attrs)
            save(c, {"x": x}, {"y": softmax_2d(x, 1 if axis is None else axis, log)})
        # empty rows
        x = f32(np.zeros((0, 5)))
        c = Case(f"{low}13_empty", opset=13)
        c.node(op, ["x"], ["y"])
        save(c, {"x": x}, {"y": softmax(x, -1, log) if x.size else x.copy()})
        # large magnitudes: only a max-subtracted kernel survives
        x = f32(np.array([[1000.0, 999.0, 990.0], [-1000.0, -1001.0, -1003.0]]))
        c = Case(f"{low}13_stable", opset=13).tol(1e-5, 1e-4)
        c.node(op, ["x"], ["y"])
        save(c, {"x": x}, {"y": softmax(x, -1, log)})


if __name__ == "__main__":
    gen_matmul()
    gen_gemm()
    gen_conv()
    gen_pool()
    gen_norm()
    print(f"gen_compute: wrote {N_CASES} cases")
    if CHECK_ORT:
        print(f"ORT cross-check: {len(ORT_FAILS)} disagreements")
        for f in ORT_FAILS:
            print("  " + f)
