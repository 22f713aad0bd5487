"""bf16_attention_quality.py — a measurement, not a test (bench/proto/README.md): greedy
decoding of examples/generate/kjv-tiny.onnx in numpy (the graph's math, from its initializers),
with f32 attention and with the rounding of decode_attn_layouts.c's tiles_bf16 kernel (K, V, q
and the weights e^(s - max) rounded to bf16; products, their sums and the weights' sum in f32).
The bf16 run is fed the f32 run's tokens, so each step's logits compare at the same context.
Prints per prompt the steps whose argmax differs, then the agreement, the smallest logits cosine
(as 1 - cos) and the largest |logit difference|.

    .venv/bin/python bench/proto/bf16_attention_quality.py [STEPS]   (from the project root)
"""
import math, sys
import numpy as np, onnx
from onnx import numpy_helper
m = onnx.load('examples/generate/kjv-tiny.onnx')
P = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
L, d, H = 2, 96, 4; Dh = d // H
def bf(x):
    x = np.ascontiguousarray(x, dtype=np.float32); u = x.view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)
def ln(x, g, b):
    mu = x.mean(-1, keepdims=True); var = x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b
def logits_last(tokens, mode):
    T = len(tokens)
    x = P['emb'][tokens] + P['pos_table'][:T]
    for l in range(L):
        h = ln(x, P[f'l{l}.g1'], P[f'l{l}.b1'])
        q = (h @ P[f'l{l}.wq'] + P[f'l{l}.bq']).reshape(T, H, Dh).transpose(1, 0, 2)
        k = (h @ P[f'l{l}.wk'] + P[f'l{l}.bk']).reshape(T, H, Dh).transpose(1, 0, 2)
        v = (h @ P[f'l{l}.wv'] + P[f'l{l}.bv']).reshape(T, H, Dh).transpose(1, 0, 2)
        if mode == 'bf16':
            q, k, v = bf(q), bf(k), bf(v)
        s = (q @ k.transpose(0, 2, 1)) / math.sqrt(Dh)
        s = np.where(np.triu(np.ones((T, T), bool), 1), -np.inf, s)
        e = np.exp(s - s.max(-1, keepdims=True)).astype(np.float32)
        lsum = e.sum(-1, keepdims=True)
        if mode == 'bf16':
            e = bf(e)  # the weights enter the V products in bf16; their sum stays f32
        a = ((e @ v) / lsum).transpose(1, 0, 2).reshape(T, d)
        x = x + a @ P[f'l{l}.wo'] + P[f'l{l}.bo']
        h2 = ln(x, P[f'l{l}.g2'], P[f'l{l}.b2'])
        x = x + np.maximum(h2 @ P[f'l{l}.w1'] + P[f'l{l}.bm1'], 0) @ P[f'l{l}.w2'] + P[f'l{l}.bm2']
    return (ln(x[-1], P['gf'], P['bf']) @ P['wout'] + P['bout']).astype(np.float64)
prompts = ["And God said, Let there be light", "In the beginning ", "And the LORD said unto Moses, ",
           "Blessed are the ", "The LORD is my shepherd; ", "And it came to pass, when ",
           "For God so loved the world, ", "Thou shalt not "]
N = int(sys.argv[1]) if len(sys.argv) > 1 else 256
same_total = 0; worst_cos = 1.0; first_div = []; worst_abs = 0.0
for pr in prompts:
    toks = list(pr.encode())
    a, b = list(toks), list(toks)
    div = None
    for i in range(N):
        la = logits_last(np.array(a), 'f32')
        # the bf16 run fed the f32 run's tokens (teacher-forced), so logits compare at equal context
        lb = logits_last(np.array(a), 'bf16')
        cos = float(la @ lb / np.linalg.norm(la) / np.linalg.norm(lb)); worst_cos = min(worst_cos, cos); worst_abs = max(worst_abs, float(np.abs(la - lb).max()))
        ta, tb = int(la.argmax()), int(lb.argmax())
        if ta == tb: same_total += 1
        elif div is None: div = i
        a.append(ta)
    first_div.append(div)
    print(f"{pr!r}: first argmax difference at step {div}", flush=True)
print(f"greedy argmax agreement {same_total}/{N * len(prompts)}; smallest logits cosine: "
      f"1 - {1 - worst_cos:.3g}; largest |logit difference| {worst_abs:.3g}")
