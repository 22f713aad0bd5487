"""gen_state_space.py — LinearAttention and CausalConvWithState cases the
ONNX node tests miss: GQA with per-key decay and a shared beta, a long
prefill with a past state, T=1 decode, f64 through the float bridge, a
causal conv with bias, past state and SiLU on odd sizes, the kernel of size
one (an empty state), a chunked run that must equal the one-shot run, and
error paths. Expected values come from the direct numpy recurrences below
(written per head and token), checked against onnx.reference.

Run from the repo root: python3 tests/ops/gen_state_space.py
"""
import numpy as np
from onnx.reference.ops.op_causal_conv_with_state import CausalConvWithState as OnnxCCS
from onnx.reference.ops.op_linear_attention import LinearAttention as OnnxLA

from opcase import Case, rng

ERR_INVALID_MODEL, ERR_SHAPE = 5, 7


def linear_attention(q, k, v, past, decay, beta, hq, hkv, rule, scale=0.0):
    b, t, _ = q.shape
    dk, dv = q.shape[2] // hq, v.shape[2] // hkv
    sc = scale or 1.0 / np.sqrt(dk)
    S = np.zeros((b, hkv, dk, dv)) if past is None else past.astype(np.float64).copy()
    y = np.zeros((b, t, hq, dv))
    for bi in range(b):
        for ti in range(t):
            for h in range(hkv):
                kt = k[bi, ti, h * dk:(h + 1) * dk].astype(np.float64)
                vt = v[bi, ti, h * dv:(h + 1) * dv].astype(np.float64)
                if "gated" in rule:
                    dl = decay[bi, ti]
                    g = dl[h] if len(dl) == hkv else dl[h * dk:(h + 1) * dk]
                    S[bi, h] *= np.exp(np.asarray(g, np.float64)).reshape(-1, 1)
                if "delta" in rule:
                    bt = beta[bi, ti]
                    bv = bt[0] if len(bt) == 1 else bt[h]
                    vt = bv * (vt - S[bi, h].T @ kt)
                S[bi, h] += np.outer(kt, vt)
                for j in range(hq // hkv):
                    qh = h * (hq // hkv) + j
                    y[bi, ti, qh] = sc * (q[bi, ti, qh * dk:(qh + 1) * dk] @ S[bi, h])
    return y.reshape(b, t, hq * dv), S


def la_case(name, g, b, t, hq, hkv, dk, dv, rule, past=False, decay_per_key=False,
            beta_shared=False, scale=0.0, dtype=np.float32, tol=(1e-5, 1e-4), out_state=True):
    q = g.standard_normal((b, t, hq * dk)).astype(dtype)
    k = g.standard_normal((b, t, hkv * dk)).astype(dtype)
    kk = k.reshape(b, t, hkv, dk)
    k = (kk / np.linalg.norm(kk, axis=-1, keepdims=True)).reshape(b, t, -1).astype(dtype)
    v = g.standard_normal((b, t, hkv * dv)).astype(dtype)
    ps = g.standard_normal((b, hkv, dk, dv)).astype(dtype) * 0.5 if past else None
    decay = beta = None
    if "gated" in rule:
        decay = -np.abs(g.standard_normal((b, t, hkv * dk if decay_per_key else hkv))) * 0.3
        decay = decay.astype(dtype)
    if "delta" in rule:
        beta = g.uniform(0, 1, (b, t, 1 if beta_shared else hkv)).astype(dtype)
    y, S = linear_attention(q, k, v, ps, decay, beta, hq, hkv, rule, scale)
    ry, rs = OnnxLA.__new__(OnnxLA)._run(q, k, v, ps, decay, beta, kv_num_heads=hkv,
                                          q_num_heads=hq, scale=scale, update_rule=rule)
    assert np.allclose(ry, y, rtol=1e-3, atol=1e-4) and np.allclose(rs, S, rtol=1e-3, atol=1e-4)
    c = Case(name, opset=27, check=False)
    ins = {"q": q, "k": k, "v": v}
    names = ["q", "k", "v", "", "", ""]
    for i, (nm, arr) in enumerate((("past", ps), ("decay", decay), ("beta", beta))):
        if arr is not None:
            ins[nm] = arr
            names[3 + i] = nm
    while names[-1] == "":
        names.pop()
    outs = {"y": y.astype(dtype)}
    if out_state:
        outs["state"] = S.astype(dtype)
    c.node("LinearAttention", names, list(outs), q_num_heads=hq, kv_num_heads=hkv,
           update_rule=rule, scale=scale or None)
    c.tol(*tol)
    c.save(ins, outs)


def causal_conv(x, w, bias, past, silu):
    b, c, n = x.shape
    kk = w.shape[2]
    pad = np.zeros((b, c, kk - 1)) if past is None else past.astype(np.float64)
    xp = np.concatenate([pad, x.astype(np.float64)], axis=2)
    y = np.zeros((b, c, n))
    for t in range(n):
        y[:, :, t] = np.sum(xp[:, :, t:t + kk] * w[None, :, 0, :], axis=2)
    if bias is not None:
        y += bias[None, :, None]
    if silu:
        y = y / (1 + np.exp(-y))
    return y, xp[:, :, n:]


def ccs_case(name, g, b, c_, n, kk, bias=False, past=False, act=None, dtype=np.float32,
             tol=(1e-5, 1e-4)):
    x = g.standard_normal((b, c_, n)).astype(dtype)
    w = g.standard_normal((c_, 1, kk)).astype(dtype)
    bs = g.standard_normal(c_).astype(dtype) if bias else None
    ps = g.standard_normal((b, c_, kk - 1)).astype(dtype) if past else None
    y, st = causal_conv(x, w, bs, ps, act in ("silu", "swish"))
    ry, rst = OnnxCCS.__new__(OnnxCCS)._run(x, w, bs, ps, activation=act)
    assert np.allclose(ry, y, rtol=1e-3, atol=1e-4) and np.array_equal(rst, st.astype(dtype))
    cs = Case(name, opset=27, check=False)
    ins = {"x": x, "w": w}
    names = ["x", "w", "", ""]
    if bias:
        ins["bias"], names[2] = bs, "bias"
    if past:
        ins["past"], names[3] = ps, "past"
    while names[-1] == "":
        names.pop()
    cs.node("CausalConvWithState", names, ["y", "state"], activation=act)
    cs.tol(*tol)
    cs.save(ins, {"y": y.astype(dtype), "state": st.astype(dtype)})


def main():
    g = rng(27)
    la_case("linattn_gqa_per_key_decay_shared_beta", g, 2, 5, 6, 2, 3, 5, "gated_delta",
            past=True, decay_per_key=True, beta_shared=True)
    la_case("linattn_delta_prefill_past_scale", g, 1, 9, 3, 3, 4, 2, "delta", past=True,
            scale=0.7)
    la_case("linattn_gated_decode_mqa", g, 3, 1, 4, 1, 5, 3, "gated", past=True)
    la_case("linattn_linear_no_state_output", g, 2, 3, 2, 2, 3, 3, "linear", out_state=False)
    la_case("linattn_f64", g, 1, 4, 2, 1, 3, 4, "gated_delta", past=True, dtype=np.float64,
            tol=(1e-6, 1e-6))

    ccs_case("ccs_bias_past_silu_odd", g, 3, 5, 7, 3, bias=True, past=True, act="silu")
    ccs_case("ccs_swish_no_past", g, 1, 2, 4, 5, act="swish")
    ccs_case("ccs_kernel_one_empty_state", g, 2, 3, 6, 1, bias=True)
    ccs_case("ccs_f64", g, 1, 3, 5, 4, past=True, dtype=np.float64, tol=(1e-6, 1e-6))

    # a stream of chunks with the state carried equals one call on the whole input
    x = g.standard_normal((2, 3, 10)).astype(np.float32)
    w = g.standard_normal((3, 1, 4)).astype(np.float32)
    whole, _ = causal_conv(x, w, None, None, False)
    c = Case("ccs_chunked_equals_whole", opset=27, check=False)
    c.node("CausalConvWithState", ["x1", "w"], ["y1", "s1"])
    c.node("CausalConvWithState", ["x2", "w", "", "s1"], ["y2", "s2"])
    c.node("Concat", ["y1", "y2"], ["y"], axis=2)
    c.tol(1e-5, 1e-4)
    c.save({"x1": x[:, :, :6], "x2": x[:, :, 6:], "w": w},
           {"y": whole.astype(np.float32), "s2": x[:, :, 7:]})

    q = np.zeros((1, 2, 8), np.float32)
    c = Case("linattn_err_missing_decay", opset=27, check=False).expect_error(
        ERR_INVALID_MODEL, "requires the decay input")
    c.node("LinearAttention", ["q", "q", "q"], ["y"], q_num_heads=2, kv_num_heads=2,
           update_rule="gated")
    c.save({"q": q}, {"y": q})
    c = Case("linattn_err_heads", opset=27, check=False).expect_error(
        ERR_INVALID_MODEL, "positive multiple of kv_num_heads")
    c.node("LinearAttention", ["q", "q", "q"], ["y"], q_num_heads=3, kv_num_heads=2,
           update_rule="linear")
    c.save({"q": q}, {"y": q})
    c = Case("ccs_err_past_width", opset=27, check=False).expect_error(ERR_SHAPE,
                                                                      "past_state must be [1, 2, 2]")
    c.node("CausalConvWithState", ["x", "w", "", "p"], ["y", "s"])
    c.save({"x": np.zeros((1, 2, 4), np.float32), "w": np.zeros((2, 1, 3), np.float32),
            "p": np.zeros((1, 2, 3), np.float32)},
           {"y": np.zeros((1, 2, 4), np.float32), "s": np.zeros((1, 2, 2), np.float32)})
    c = Case("ccs_err_activation", opset=27, check=False).expect_error(ERR_INVALID_MODEL,
                                                                      "activation 'relu'")
    c.node("CausalConvWithState", ["x", "w"], ["y", "s"], activation="relu")
    c.save({"x": np.zeros((1, 2, 4), np.float32), "w": np.zeros((2, 1, 3), np.float32)},
           {"y": np.zeros((1, 2, 4), np.float32), "s": np.zeros((1, 2, 2), np.float32)})


if __name__ == "__main__":
    main()
