#!/usr/bin/env python3
"""Trains the tiny byte-level GPT of examples/generate and exports it as ONNX.

The model is what examples/generate and the generator tests run: a 2-layer,
pre-LayerNorm decoder over bytes (vocabulary 256), trained on the King James
Bible that Debian's bible-kjv-text package ships (public domain; the `bible`
program of bible-kjv prints it). torch is not a dependency of the project, so
the forward pass, the hand-written backward pass and Adam are numpy below;
tests/generate/test_train_grad.py checks the backward pass against finite
differences. The ONNX graph is written with onnx.helper in the layout torch /
optimum exports decoders with:

  inputs   input_ids [batch, seq] i64, attention_mask [batch, total] i64,
           position_ids [batch, seq] i64,
           past_key_values.N.key / .value [batch, heads, past, head_dim] f32
  outputs  logits [batch, seq, 256] f32,
           present.N.key / .value [batch, heads, total, head_dim] f32
           (present = Concat(past, new) on axis 2, inside the graph)

Not run in CI. How the committed model was made (its metadata_props record
the command, the data and the training time):
  apt-get install bible-kjv bible-kjv-text
  .venv/bin/python examples/generate/train.py --steps 400 --batch 16 \
      --out examples/generate/kjv-tiny.onnx
On the 2-core build machine (shared: load average ~14) that took 855 s of
wall time, about 4 minutes of CPU; validation loss 2.25 nats per byte.
"""
import argparse
import math
import subprocess
import sys
import time

import numpy as np

VOCAB = 256


def config(d=96, heads=4, layers=2, ff=4, max_pos=1024):
    return dict(d=d, heads=heads, layers=layers, ff=ff * d, max_pos=max_pos)


def sinusoid(max_pos, d, scale=0.1):
    """Fixed positional encoding (scaled so that it does not drown the token
    embeddings at the start of training)."""
    pos = np.arange(max_pos)[:, None]
    i = np.arange(d // 2)[None, :]
    ang = pos / np.power(10000.0, 2.0 * i / d)
    table = np.zeros((max_pos, d))
    table[:, 0::2] = np.sin(ang)
    table[:, 1::2] = np.cos(ang)
    return scale * table


def init_params(cfg, rng, dtype=np.float32):
    d, ff = cfg["d"], cfg["ff"]
    p = {"emb": rng.normal(0, 0.5, (VOCAB, d))}
    for l in range(cfg["layers"]):
        p[f"l{l}.g1"] = np.ones(d)
        p[f"l{l}.b1"] = np.zeros(d)
        p[f"l{l}.wqkv"] = rng.normal(0, 0.02, (d, 3 * d))
        p[f"l{l}.bqkv"] = np.zeros(3 * d)
        p[f"l{l}.wo"] = rng.normal(0, 0.02 / math.sqrt(2 * cfg["layers"]), (d, d))
        p[f"l{l}.bo"] = np.zeros(d)
        p[f"l{l}.g2"] = np.ones(d)
        p[f"l{l}.b2"] = np.zeros(d)
        p[f"l{l}.w1"] = rng.normal(0, 0.02, (d, ff))
        p[f"l{l}.bm1"] = np.zeros(ff)
        p[f"l{l}.w2"] = rng.normal(0, 0.02 / math.sqrt(2 * cfg["layers"]), (ff, d))
        p[f"l{l}.bm2"] = np.zeros(d)
    p["gf"] = np.ones(d)
    p["bf"] = np.zeros(d)
    p["wout"] = rng.normal(0, 0.02, (d, VOCAB))
    p["bout"] = np.zeros(VOCAB)
    return {k: v.astype(dtype) for k, v in p.items()}


EPS = 1e-5


def ln_fwd(x, g, b):
    mu = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    rs = 1.0 / np.sqrt(var + EPS)
    xh = (x - mu) * rs
    return xh * g + b, (xh, rs, g)


def ln_bwd(dy, cache):
    xh, rs, g = cache
    dg = (dy * xh).reshape(-1, xh.shape[-1]).sum(0)
    db = dy.reshape(-1, xh.shape[-1]).sum(0)
    dxh = dy * g
    dx = rs * (dxh - dxh.mean(-1, keepdims=True) - xh * (dxh * xh).mean(-1, keepdims=True))
    return dx, dg, db


def forward(p, cfg, tokens, targets=None):
    """tokens [B, T] -> logits [B, T, V] (and mean cross-entropy, caches)."""
    B, T = tokens.shape
    d, H = cfg["d"], cfg["heads"]
    Dh = d // H
    pos = sinusoid(cfg["max_pos"], d)[:T].astype(p["emb"].dtype)
    x = p["emb"][tokens] + pos
    causal = np.triu(np.ones((T, T), dtype=bool), 1)
    caches = []
    for l in range(cfg["layers"]):
        c = {}
        h1, c["ln1"] = ln_fwd(x, p[f"l{l}.g1"], p[f"l{l}.b1"])
        qkv = h1 @ p[f"l{l}.wqkv"] + p[f"l{l}.bqkv"]
        q, k, v = [qkv[..., i * d:(i + 1) * d].reshape(B, T, H, Dh).transpose(0, 2, 1, 3)
                   for i in range(3)]
        s = (q @ k.transpose(0, 1, 3, 2)) / math.sqrt(Dh)
        s = np.where(causal, -1e9, s)
        s = s - s.max(-1, keepdims=True)
        e = np.exp(s)
        pr = e / e.sum(-1, keepdims=True)
        a = (pr @ v).transpose(0, 2, 1, 3).reshape(B, T, d)
        x = x + a @ p[f"l{l}.wo"] + p[f"l{l}.bo"]
        h2, c["ln2"] = ln_fwd(x, p[f"l{l}.g2"], p[f"l{l}.b2"])
        u = h2 @ p[f"l{l}.w1"] + p[f"l{l}.bm1"]
        r = np.maximum(u, 0)
        x = x + r @ p[f"l{l}.w2"] + p[f"l{l}.bm2"]
        c.update(h1=h1, q=q, k=k, v=v, pr=pr, a=a, h2=h2, u=u, r=r)
        caches.append(c)
    hf, lnf = ln_fwd(x, p["gf"], p["bf"])
    logits = hf @ p["wout"] + p["bout"]
    if targets is None:
        return logits
    z = logits - logits.max(-1, keepdims=True)
    lse = np.log(np.exp(z).sum(-1, keepdims=True))
    logp = z - lse
    loss = -np.take_along_axis(logp, targets[..., None], -1).mean()
    return logits, loss, (tokens, targets, caches, hf, lnf, logp)


def backward(p, cfg, state):
    tokens, targets, caches, hf, lnf, logp = state
    B, T = tokens.shape
    d, H = cfg["d"], cfg["heads"]
    Dh = d // H
    g = {}
    dlogits = np.exp(logp)
    np.put_along_axis(dlogits, targets[..., None],
                      np.take_along_axis(dlogits, targets[..., None], -1) - 1, -1)
    dlogits /= B * T
    g["wout"] = hf.reshape(-1, d).T @ dlogits.reshape(-1, VOCAB)
    g["bout"] = dlogits.reshape(-1, VOCAB).sum(0)
    dx, g["gf"], g["bf"] = ln_bwd(dlogits @ p["wout"].T, lnf)
    for l in reversed(range(cfg["layers"])):
        c = caches[l]
        # MLP
        g[f"l{l}.w2"] = c["r"].reshape(-1, cfg["ff"]).T @ dx.reshape(-1, d)
        g[f"l{l}.bm2"] = dx.reshape(-1, d).sum(0)
        du = (dx @ p[f"l{l}.w2"].T) * (c["u"] > 0)
        g[f"l{l}.w1"] = c["h2"].reshape(-1, d).T @ du.reshape(-1, cfg["ff"])
        g[f"l{l}.bm1"] = du.reshape(-1, cfg["ff"]).sum(0)
        dh2, g[f"l{l}.g2"], g[f"l{l}.b2"] = ln_bwd(du @ p[f"l{l}.w1"].T, c["ln2"])
        dx = dx + dh2
        # attention
        g[f"l{l}.wo"] = c["a"].reshape(-1, d).T @ dx.reshape(-1, d)
        g[f"l{l}.bo"] = dx.reshape(-1, d).sum(0)
        da = (dx @ p[f"l{l}.wo"].T).reshape(B, T, H, Dh).transpose(0, 2, 1, 3)
        pr = c["pr"]
        dpr = da @ c["v"].transpose(0, 1, 3, 2)
        dv = pr.transpose(0, 1, 3, 2) @ da
        ds = pr * (dpr - (dpr * pr).sum(-1, keepdims=True)) / math.sqrt(Dh)
        dq = ds @ c["k"]
        dk = ds.transpose(0, 1, 3, 2) @ c["q"]
        dqkv = np.concatenate(
            [t.transpose(0, 2, 1, 3).reshape(B, T, d) for t in (dq, dk, dv)], -1)
        g[f"l{l}.wqkv"] = c["h1"].reshape(-1, d).T @ dqkv.reshape(-1, 3 * d)
        g[f"l{l}.bqkv"] = dqkv.reshape(-1, 3 * d).sum(0)
        dh1, g[f"l{l}.g1"], g[f"l{l}.b1"] = ln_bwd(dqkv @ p[f"l{l}.wqkv"].T, c["ln1"])
        dx = dx + dh1
    g["emb"] = np.zeros_like(p["emb"])
    np.add.at(g["emb"], tokens.reshape(-1), dx.reshape(-1, d))
    return g


def load_text():
    out = subprocess.run(["bible", "-f", "Genesis 1:1-Revelation 22:21"],
                         stdin=subprocess.DEVNULL, capture_output=True, check=True).stdout
    lines = []
    for line in out.decode("ascii", "replace").splitlines():
        ref, _, verse = line.partition(" ")  # drop the "Ge1:1" reference
        if verse:
            lines.append(verse)
    return np.frombuffer(("\n".join(lines) + "\n").encode("ascii", "replace"), dtype=np.uint8)


def train(args):
    cfg = config()
    rng = np.random.default_rng(args.seed)
    data = load_text().astype(np.int64)
    split = int(len(data) * 0.98)
    train_d, val_d = data[:split], data[split:]
    p = init_params(cfg, rng)
    m = {k: np.zeros_like(v) for k, v in p.items()}
    s = {k: np.zeros_like(v) for k, v in p.items()}
    b1, b2 = 0.9, 0.99
    t0 = time.time()
    for step in range(1, args.steps + 1):
        lr = args.lr * min(1.0, step / 50) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / args.steps)))
        idx = rng.integers(0, len(train_d) - args.ctx - 1, args.batch)
        x = np.stack([train_d[i:i + args.ctx] for i in idx])
        y = np.stack([train_d[i + 1:i + args.ctx + 1] for i in idx])
        _, loss, st = forward(p, cfg, x, y)
        g = backward(p, cfg, st)
        for k in p:
            m[k] = b1 * m[k] + (1 - b1) * g[k]
            s[k] = b2 * s[k] + (1 - b2) * g[k] * g[k]
            mh = m[k] / (1 - b1 ** step)
            sh = s[k] / (1 - b2 ** step)
            p[k] -= (lr * mh / (np.sqrt(sh) + 1e-8)).astype(p[k].dtype)
        if step % 50 == 0 or step == 1:
            vi = np.arange(0, len(val_d) - args.ctx - 1, len(val_d) // 16)[:16]
            vx = np.stack([val_d[i:i + args.ctx] for i in vi])
            vy = np.stack([val_d[i + 1:i + args.ctx + 1] for i in vi])
            _, vloss, _ = forward(p, cfg, vx, vy)
            print(f"step {step:5d}  loss {loss:.3f}  val {vloss:.3f}  ({time.time() - t0:.0f} s)",
                  flush=True)
    return p, cfg


def export(p, cfg, path, meta):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    d, H, L = cfg["d"], cfg["heads"], cfg["layers"]
    Dh = d // H
    inits, nodes = [], []

    def init(name, arr, dtype=np.float32):
        inits.append(numpy_helper.from_array(np.asarray(arr, dtype=dtype), name))
        return name

    def node(op, ins, outs, **attrs):
        nodes.append(helper.make_node(op, ins, outs, name=f"{op}_{len(nodes)}", **attrs))
        return outs[0]

    init("emb", p["emb"])
    init("pos_table", sinusoid(cfg["max_pos"], d))
    init("shape_bthd", [0, 0, H, Dh], np.int64)
    init("shape_btd", [0, 0, d], np.int64)
    init("zero_i64", 0, np.int64)
    init("one_i64", 1, np.int64)
    init("neg_big", -1e9)
    init("scale", 1.0 / math.sqrt(Dh))
    init("axes_1", [1], np.int64)
    init("axes_2", [2], np.int64)
    init("axes_12", [1, 2], np.int64)

    x = node("Gather", ["emb", "input_ids"], ["tok_emb"])
    pe = node("Gather", ["pos_table", "position_ids"], ["pos_emb"])
    x = node("Add", [x, pe], ["x0"])
    # mask [batch, 1, seq, total]: key j visible to query i when j <= position_ids[i] and
    # attention_mask[j] != 0 (the same rule as a torch causal LM with a padding mask)
    total = node("Shape", ["attention_mask"], ["am_shape"])
    total = node("Gather", [total, "one_i64"], ["total_len"], axis=0)
    kpos = node("Range", ["zero_i64", total, "one_i64"], ["key_pos"])
    qpos = node("Unsqueeze", ["position_ids", "axes_2"], ["qpos3"])  # [b, s, 1]
    qpos = node("Unsqueeze", [qpos, "axes_1"], ["qpos4"])  # [b, 1, s, 1]
    causal = node("LessOrEqual", [kpos, qpos], ["causal"])  # [b, 1, s, total]
    am = node("Cast", ["attention_mask"], ["am_bool"], to=TensorProto.BOOL)
    am = node("Unsqueeze", [am, "axes_12"], ["am4"])  # [b, 1, 1, total]
    allow = node("And", [causal, am], ["allow"])
    for l in range(L):
        h = node("LayerNormalization", [x, init(f"l{l}.g1", p[f"l{l}.g1"]),
                                        init(f"l{l}.b1", p[f"l{l}.b1"])], [f"l{l}.h1"],
                 axis=-1, epsilon=EPS)
        heads = {}
        for i, nm in enumerate("qkv"):
            w = init(f"l{l}.w{nm}", p[f"l{l}.wqkv"][:, i * d:(i + 1) * d])
            b = init(f"l{l}.b{nm}", p[f"l{l}.bqkv"][i * d:(i + 1) * d])
            t = node("MatMul", [h, w], [f"l{l}.{nm}_mm"])
            t = node("Add", [t, b], [f"l{l}.{nm}_lin"])
            t = node("Reshape", [t, "shape_bthd"], [f"l{l}.{nm}_r"])
            heads[nm] = node("Transpose", [t], [f"l{l}.{nm}_h"], perm=[0, 2, 1, 3])
        pk = node("Concat", [f"past_key_values.{l}.key", heads["k"]], [f"present.{l}.key"], axis=2)
        pv = node("Concat", [f"past_key_values.{l}.value", heads["v"]], [f"present.{l}.value"],
                  axis=2)
        kt = node("Transpose", [pk], [f"l{l}.kt"], perm=[0, 1, 3, 2])
        s = node("MatMul", [heads["q"], kt], [f"l{l}.qk"])
        s = node("Mul", [s, "scale"], [f"l{l}.qk_s"])
        s = node("Where", [allow, s, "neg_big"], [f"l{l}.qk_m"])
        s = node("Softmax", [s], [f"l{l}.probs"], axis=-1)
        a = node("MatMul", [s, pv], [f"l{l}.ctx"])
        a = node("Transpose", [a], [f"l{l}.ctx_t"], perm=[0, 2, 1, 3])
        a = node("Reshape", [a, "shape_btd"], [f"l{l}.ctx_r"])
        a = node("MatMul", [a, init(f"l{l}.wo", p[f"l{l}.wo"])], [f"l{l}.o_mm"])
        a = node("Add", [a, init(f"l{l}.bo", p[f"l{l}.bo"])], [f"l{l}.o"])
        x = node("Add", [x, a], [f"l{l}.x_attn"])
        h = node("LayerNormalization", [x, init(f"l{l}.g2", p[f"l{l}.g2"]),
                                        init(f"l{l}.b2", p[f"l{l}.b2"])], [f"l{l}.h2"],
                 axis=-1, epsilon=EPS)
        u = node("MatMul", [h, init(f"l{l}.w1", p[f"l{l}.w1"])], [f"l{l}.u_mm"])
        u = node("Add", [u, init(f"l{l}.bm1", p[f"l{l}.bm1"])], [f"l{l}.u"])
        u = node("Relu", [u], [f"l{l}.r"])
        u = node("MatMul", [u, init(f"l{l}.w2", p[f"l{l}.w2"])], [f"l{l}.m_mm"])
        u = node("Add", [u, init(f"l{l}.bm2", p[f"l{l}.bm2"])], [f"l{l}.m"])
        x = node("Add", [x, u], [f"l{l}.x"])
    h = node("LayerNormalization", [x, init("gf", p["gf"]), init("bf", p["bf"])], ["hf"],
             axis=-1, epsilon=EPS)
    h = node("MatMul", [h, init("wout", p["wout"])], ["logits_mm"])
    node("Add", [h, init("bout", p["bout"])], ["logits"])

    i64, f32 = TensorProto.INT64, TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("input_ids", i64, ["batch", "seq"]),
              helper.make_tensor_value_info("attention_mask", i64, ["batch", "total"]),
              helper.make_tensor_value_info("position_ids", i64, ["batch", "seq"])]
    outputs = [helper.make_tensor_value_info("logits", f32, ["batch", "seq", VOCAB])]
    for l in range(L):
        for kv in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{l}.{kv}", f32,
                                                        ["batch", H, "past", Dh]))
            outputs.append(helper.make_tensor_value_info(f"present.{l}.{kv}", f32,
                                                         ["batch", H, "total", Dh]))
    graph = helper.make_graph(nodes, "kjv_tiny_gpt", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="libmopt examples/generate/train.py")
    model.ir_version = 8
    for k, v in meta.items():
        e = model.metadata_props.add()
        e.key, e.value = k, str(v)
    onnx.checker.check_model(model)
    onnx.save(model, path)


def check_export(p, cfg, path):
    """ORT on the exported graph agrees with the numpy forward, with and without past."""
    import onnxruntime as ort

    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    text = np.frombuffer(b"In the beginning God created", dtype=np.uint8).astype(np.int64)[None]
    ref = forward({k: v.astype(np.float64) for k, v in p.items()}, cfg, text)
    H, Dh = cfg["heads"], cfg["d"] // cfg["heads"]
    feeds = {"input_ids": text, "attention_mask": np.ones_like(text),
             "position_ids": np.arange(text.shape[1])[None]}
    for l in range(cfg["layers"]):
        for kv in ("key", "value"):
            feeds[f"past_key_values.{l}.{kv}"] = np.zeros((1, H, 0, Dh), np.float32)
    out = sess.run(None, feeds)
    err = np.abs(out[0] - ref).max()
    # one more token with the cache
    n = text.shape[1]
    step = {"input_ids": np.array([[32]]), "attention_mask": np.ones((1, n + 1), np.int64),
            "position_ids": np.array([[n]])}
    for i, o in enumerate(sess.get_outputs()[1:]):
        step[o.name.replace("present", "past_key_values")] = out[1 + i]
    out2 = sess.run(None, step)
    ref2 = forward({k: v.astype(np.float64) for k, v in p.items()}, cfg,
                   np.concatenate([text, [[32]]], 1))
    err2 = np.abs(out2[0][0, -1] - ref2[0, -1]).max()
    print(f"ORT vs numpy: prefill max|diff| {err:.2e}, cached step {err2:.2e}")
    assert err < 1e-3 and err2 < 1e-3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--batch", type=int, default=24)
    ap.add_argument("--ctx", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="kjv-tiny.onnx")
    args = ap.parse_args()
    t0 = time.time()
    p, cfg = train(args)
    meta = {"training": f"train.py --steps {args.steps} --batch {args.batch} --ctx {args.ctx} "
                        f"--lr {args.lr} --seed {args.seed}",
            "data": "King James Bible, Debian bible-kjv-text 4.38 (public domain)",
            "tokenizer": "bytes", "train_seconds": f"{time.time() - t0:.0f}"}
    export(p, cfg, args.out, meta)
    check_export(p, cfg, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
