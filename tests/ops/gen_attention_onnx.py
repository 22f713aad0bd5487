"""gen_attention_onnx.py — op cases for the ONNX Attention operator (opset
23): 4-D and 3-D inputs, grouped KV heads, additive and boolean masks (a
shorter mask padded as masked), causal with and without a KV cache, scale,
softcap and the qk_matmul_output modes; a fully masked row gives zeros.
Expected outputs from numpy.

Run from the repo root: python3 tests/ops/gen_attention_onnx.py
"""
import numpy as np

from opcase import Case, normal, rng

R = rng(41)


def attention(q, k, v, mask=None, past_k=None, past_v=None, causal=False, scale=None,
              softcap=0.0, mode=0):
    b, hq, sq, d = q.shape
    if past_k is not None:
        k = np.concatenate([past_k, k], axis=2)
        v = np.concatenate([past_v, v], axis=2)
    hk, total = k.shape[1], k.shape[2]
    s = 1 / np.sqrt(d) if scale is None else scale
    kk = np.repeat(k, hq // hk, axis=1)
    vv = np.repeat(v, hq // hk, axis=1)
    qk = (q.astype(np.float64) * np.sqrt(s)) @ (kk.astype(np.float64) * np.sqrt(s)).transpose(0, 1, 3, 2)
    if softcap > 0:
        qk = softcap * np.tanh(qk / softcap)
    bias = np.zeros((b, hq, sq, total))
    if mask is not None:
        m = mask
        if m.shape[-1] < total:
            pad = [(0, 0)] * (m.ndim - 1) + [(0, total - m.shape[-1])]
            m = np.pad(m, pad, constant_values=False if m.dtype == np.bool_ else -np.inf)
        bias = bias + (np.where(m, 0, -np.inf) if m.dtype == np.bool_ else m)
    if causal:
        off = 0 if past_k is None else past_k.shape[2]
        i = np.arange(sq)[:, None]
        j = np.arange(total)[None, :]
        bias = bias + np.where(j <= i + off, 0, -np.inf)
    x = qk + bias
    allmask = np.isneginf(bias.max(axis=-1, keepdims=True))
    mx = np.where(np.isneginf(x.max(axis=-1, keepdims=True)), 0, x.max(axis=-1, keepdims=True))
    e = np.exp(x - mx)
    ssum = e.sum(axis=-1, keepdims=True)
    p = np.where(allmask, 0, e / np.where(ssum == 0, 1, ssum))
    y = p @ vv
    qko = {0: qk, 1: qk, 2: qk + bias, 3: p}[mode]
    return (y.astype(np.float32), k.astype(np.float32), v.astype(np.float32),
            qko.astype(np.float32))


def f(*shape):
    return normal(R, shape)


def case(name, q, k, v, mask=None, past=None, three_d=None, **attrs):
    kw = {kk: vv for kk, vv in attrs.items() if kk in ("causal", "scale", "softcap", "mode")}
    y, pk, pv, qk = attention(q, k, v, mask, *(past or (None, None)), **kw)
    node_attrs = {}
    if attrs.get("causal"):
        node_attrs["is_causal"] = 1
    if "scale" in attrs:
        node_attrs["scale"] = float(attrs["scale"])
    if attrs.get("softcap"):
        node_attrs["softcap"] = float(attrs["softcap"])
    if "mode" in attrs:
        node_attrs["qk_matmul_output_mode"] = attrs["mode"]
    ins = {"q": q, "k": k, "v": v}
    names = ["q", "k", "v"]
    if three_d:
        hq, hk = three_d
        node_attrs["q_num_heads"], node_attrs["kv_num_heads"] = hq, hk
        b, _, sq, d = q.shape
        ins["q"] = q.transpose(0, 2, 1, 3).reshape(b, sq, -1)
        ins["k"] = k.transpose(0, 2, 1, 3).reshape(b, k.shape[2], -1)
        ins["v"] = v.transpose(0, 2, 1, 3).reshape(b, v.shape[2], -1)
        y = y.transpose(0, 2, 1, 3).reshape(b, sq, -1)
    names.append("m" if mask is not None else "")
    if mask is not None:
        ins["m"] = mask
    if past:
        names += ["pk", "pv"]
        ins["pk"], ins["pv"] = past
    while names and names[-1] == "":
        names.pop()
    outs = {"y": y}
    out_names = ["y"]
    if past or "mode" in attrs:
        outs["present_k"], outs["present_v"] = pk, pv
        out_names += ["present_k", "present_v"]
    if "mode" in attrs:
        outs["qk"] = qk
        out_names.append("qk")
    c = Case(name, opset=23)
    c.node("Attention", names, out_names, **node_attrs)
    c.tol(1e-5, 1e-4)
    c.save(ins, outs)


case("attention_onnx_4d", f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 5))
case("attention_onnx_4d_gqa", f(1, 4, 3, 8), f(1, 2, 5, 8), f(1, 2, 5, 8))
case("attention_onnx_3d_gqa", f(2, 4, 3, 4), f(2, 2, 5, 4), f(2, 2, 5, 6), three_d=(4, 2))
case("attention_onnx_mask_add", f(1, 2, 3, 4), f(1, 2, 5, 4), f(1, 2, 5, 4),
     mask=f(3, 5))
m = R.random((1, 1, 3, 4)) > 0.3
m[0, 0, 1, :] = False  # a fully masked row: zeros
case("attention_onnx_mask_bool_short", f(2, 2, 3, 4), f(2, 2, 5, 4), f(2, 2, 5, 4), mask=m)
case("attention_onnx_causal", f(1, 2, 5, 4), f(1, 2, 5, 4), f(1, 2, 5, 4), causal=True)
case("attention_onnx_causal_past", f(1, 2, 2, 4), f(1, 2, 2, 4), f(1, 2, 2, 3),
     past=(f(1, 2, 3, 4), f(1, 2, 3, 3)), causal=True)
case("attention_onnx_scale_softcap_mode1", f(1, 1, 3, 4), f(1, 1, 4, 4), f(1, 1, 4, 4),
     scale=0.7, softcap=2.0, mode=1)
case("attention_onnx_mode2", f(1, 2, 3, 4), f(1, 2, 4, 4), f(1, 2, 4, 4), mask=f(1, 2, 3, 4),
     mode=2)
case("attention_onnx_mode3", f(1, 2, 3, 4), f(1, 2, 4, 4), f(1, 2, 4, 4), mode=3)
