"""gen_attention.py — numpy-checked cases for mopt.Attention (docs/fused_ops.md).

Writes tests/ops/data/attention/<case>/: one node of domain "mopt" (so the
ONNX checker is skipped), inputs and the expected output computed here in
float64 with numpy. Covers both layouts, additive masks of every broadcast
shape, bool masks (incl. a row with no key -> zeros), causal with Sq == Sk,
Sq < Sk and Sq > Sk, explicit scale, odd sizes (D = 1, 3, 17, 64, Dv != D,
Sq != Sk, sequence 1..300), symbolic input dims and an empty batch.

Run from the repo root: python3 tests/ops/gen_attention.py
"""
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opcase import Case, DATA_DIR, normal, rng  # noqa: E402

OUT = "attention"


def reference(q, k, v, mask=None, scale=None, causal=False, layout="bhsd", heads=None):
    """softmax(scale * q k^T + mask) v in float64; rows with no key give 0."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    if layout == "bsh":
        def split(x):
            b, s, hd = x.shape
            return x.reshape(b, s, heads, hd // heads).transpose(0, 2, 1, 3)
        q, k, v = split(q), split(k), split(v)
    d = q.shape[-1]
    if scale is None:
        scale = 1.0 / np.sqrt(d) if d > 0 else 1.0
    s = scale * np.matmul(q, np.swapaxes(k, -1, -2))
    sq, sk = s.shape[-2], s.shape[-1]
    keep = np.ones(s.shape, bool)
    if mask is not None and mask.dtype == np.bool_:
        keep &= np.broadcast_to(mask, s.shape)
    elif mask is not None:
        # the sum is rounded to float32 as any float32 implementation does (it
        # matters for large masks: -10000 + s keeps ~3 decimals of s)
        s = (s.astype(np.float32) + mask).astype(np.float64)
    if causal:
        i = np.arange(sq)[:, None]
        j = np.arange(sk)[None, :]
        keep &= j <= i + (sk - sq)
    s = np.where(keep, s, -np.inf)
    mx = s.max(axis=-1, keepdims=True) if sk > 0 else np.full(s.shape[:-1] + (1,), -np.inf)
    empty = mx == -np.inf
    e = np.where(keep, np.exp(s - np.where(empty, 0.0, mx)), 0.0)
    tot = e.sum(axis=-1, keepdims=True)
    p = np.where(empty, 0.0, e / np.where(tot == 0, 1.0, tot))
    o = np.matmul(p, v)
    if layout == "bsh":
        b, h, s_, dv = o.shape
        o = o.transpose(0, 2, 1, 3).reshape(b, s_, h * dv)
    return o.astype(np.float32)


def case(name, q, k, v, mask=None, shapes=None, tol=None, **attrs):
    c = Case(f"{OUT}/{name}", opset=17, domain_opsets={"mopt": 1}, check=False)
    names = ["q", "k", "v"] + (["mask"] if mask is not None else [])
    node_attrs = {key: val for key, val in attrs.items() if val is not None}
    c.node("Attention", names, ["o"], domain="mopt", **node_attrs)
    inputs = {"q": q, "k": k, "v": v}
    if mask is not None:
        inputs["mask"] = mask
    out = reference(q, k, v, mask, scale=attrs.get("scale"), causal=bool(attrs.get("causal", 0)),
                    layout=attrs.get("layout", "bhsd"), heads=attrs.get("num_heads"))
    if tol:
        c.tol(*tol)
    c.save(inputs, {"o": out}, input_shapes=shapes)


def randn(g, *shape, scale=1.0):
    return normal(g, shape, scale=scale)


def main():
    shutil.rmtree(os.path.join(DATA_DIR, OUT), ignore_errors=True)
    g = rng(4242)
    # ---- bhsd, no mask, odd sizes
    for (b, h, sq, sk, d, dv) in [(2, 3, 5, 7, 17, 17), (1, 2, 4, 4, 1, 1), (2, 1, 6, 3, 3, 5),
                                  (1, 2, 9, 33, 64, 64), (1, 1, 1, 1, 8, 8), (1, 3, 2, 1, 4, 7)]:
        case(f"bhsd_b{b}h{h}q{sq}k{sk}d{d}v{dv}", randn(g, b, h, sq, d, scale=1.5),
             randn(g, b, h, sk, d, scale=1.5), randn(g, b, h, sk, dv))
    # long sequences (several key tiles, ragged last tile, several query blocks)
    for s in (64, 65, 130, 300):
        case(f"bhsd_seq{s}", randn(g, 1, 2, s, 8, scale=2.0), randn(g, 1, 2, s, 8, scale=2.0),
             randn(g, 1, 2, s, 8))
    # explicit scale, larger scores (softmax far from uniform)
    case("bhsd_scale", randn(g, 2, 2, 5, 16), randn(g, 2, 2, 6, 16), randn(g, 2, 2, 6, 16),
         scale=0.9)
    # ---- additive masks of every broadcast shape
    b, h, sq, sk, d = 2, 3, 5, 70, 16
    q, k, v = randn(g, b, h, sq, d), randn(g, b, h, sk, d), randn(g, b, h, sk, d)
    pad = np.zeros((b, sk), np.float32)
    pad[1, 50:] = -10000.0  # bert-style padding mask on batch 1
    masks = {
        "b11k": pad[:, None, None, :],
        "b1qk": randn(g, b, 1, sq, sk),
        "bhqk": randn(g, b, h, sq, sk),
        "qk": randn(g, sq, sk),
        "k": randn(g, sk),
        "1": np.array([0.5], np.float32),
        "11q1": randn(g, 1, 1, sq, 1),
        "neginf": np.where(g.random((b, 1, sq, sk)) < 0.3, -np.inf, 0.0).astype(np.float32),
    }
    for name, m in masks.items():
        case(f"mask_add_{name}", q, k, v, mask=m)
    # a fully masked row with a finite mask still averages V (like Softmax)
    m = np.zeros((1, 1, 4, 6), np.float32)
    m[..., 2, :] = -10000.0
    case("mask_add_full_row", randn(g, 1, 2, 4, 8), randn(g, 1, 2, 6, 8), randn(g, 1, 2, 6, 8),
         mask=m)
    # ---- bool masks (true = attend); row 1 of batch 0 sees no key -> zeros
    bm = g.random((2, 1, 4, 40)) < 0.7
    bm[0, 0, 1, :] = False
    case("mask_bool_b1qk", randn(g, 2, 2, 4, 8), randn(g, 2, 2, 40, 8), randn(g, 2, 2, 40, 8),
         mask=bm)
    case("mask_bool_k", randn(g, 1, 2, 3, 8), randn(g, 1, 2, 20, 8), randn(g, 1, 2, 20, 8),
         mask=g.random(20) < 0.5)
    # ---- causal
    for (sq, sk) in [(7, 7), (3, 10), (10, 4), (100, 100)]:
        case(f"causal_q{sq}k{sk}", randn(g, 1, 2, sq, 16), randn(g, 1, 2, sk, 16),
             randn(g, 1, 2, sk, 16), causal=1)
    case("causal_mask_add", randn(g, 2, 2, 9, 8), randn(g, 2, 2, 9, 8), randn(g, 2, 2, 9, 8),
         mask=randn(g, 2, 1, 1, 9), causal=1)
    case("causal_mask_bool", randn(g, 1, 2, 70, 8), randn(g, 1, 2, 70, 8), randn(g, 1, 2, 70, 8),
         mask=g.random((70, 70)) < 0.8, causal=1)
    # ---- bsh layout (heads split/merged inside)
    for (b, s, hh, d) in [(2, 9, 4, 16), (1, 17, 3, 3), (1, 5, 2, 1), (1, 128, 4, 64)]:
        case(f"bsh_b{b}s{s}h{hh}d{d}", randn(g, b, s, hh * d), randn(g, b, s, hh * d),
             randn(g, b, s, hh * d), layout="bsh", num_heads=hh)
    pad = np.zeros((2, 1, 1, 9), np.float32)
    pad[1, ..., 6:] = -10000.0
    case("bsh_mask_b11k", randn(g, 2, 9, 64), randn(g, 2, 9, 64), randn(g, 2, 9, 64), mask=pad,
         layout="bsh", num_heads=4, scale=0.25)
    case("bsh_causal_qk_differ", randn(g, 2, 3, 12), randn(g, 2, 11, 12), randn(g, 2, 11, 6),
         layout="bsh", num_heads=3, causal=1)
    case("bsh_mask_bool", randn(g, 1, 6, 8), randn(g, 1, 6, 8), randn(g, 1, 6, 8),
         mask=g.random((1, 1, 6, 6)) < 0.6, layout="bsh", num_heads=2)
    # ---- symbolic dims declared on the inputs
    case("bsh_symbolic", randn(g, 2, 10, 32), randn(g, 2, 10, 32), randn(g, 2, 10, 32),
         mask=np.zeros((2, 1, 1, 10), np.float32), layout="bsh", num_heads=4,
         shapes={"q": ["batch", "seq", 32], "k": ["batch", "seq", 32], "v": ["batch", "seq", 32],
                 "mask": ["batch", 1, 1, "seq"]})
    case("bhsd_symbolic", randn(g, 1, 2, 7, 8), randn(g, 1, 2, 7, 8), randn(g, 1, 2, 7, 8),
         causal=1, shapes={"q": ["b", 2, "s", 8], "k": ["b", 2, "s", 8], "v": ["b", 2, "s", 8]})
    # ---- empty batch
    case("bhsd_empty_batch", randn(g, 0, 2, 3, 4), randn(g, 0, 2, 3, 4), randn(g, 0, 2, 3, 4))
    n = len(os.listdir(os.path.join(DATA_DIR, OUT)))
    print(f"wrote {n} cases to {os.path.join(DATA_DIR, OUT)}")


if __name__ == "__main__":
    main()
