"""export_attention.py — tiny attention blocks exported by torch, for the
attention-fusion pattern tests (tests/patterns/attention/<case>/).

Each case is model.onnx + test_data_set_<k>/{input,output}_<i>.npy with ONNX
Runtime outputs (all graph optimizations off) as the reference, and the
expected level-2 op counts in expect.json (checked by check_fusion.py:
the fusion fires — or, for the negative cases, does not). CI needs neither
torch nor this script: the outputs are committed.

Variants (what exporters emit, TorchScript exporter, dynamo=False):
  bert_o13/o14/o17  q/k/v Linear, view to heads through Shape/Gather/Concat,
                    transpose, K^T as one permute / two transposes, scale by
                    Div or Mul, additive mask (1 - mask) * -10000, Softmax,
                    MatMul, transpose back, view [B,S,H*D], output Linear
  gpt_o14/o17       causal mask tril(ones(s, s)) -> Trilu, masked_fill(mask
                    == 0, finfo.min) -> Equal/Where, scale by Mul
  neg_probs_output  the attention probabilities are also a graph output
  neg_softmax_dim2  softmax over the query axis (not attention)

Usage (repo root): python3 tests/patterns/export_attention.py
"""
import json
import math
import os
import shutil
import warnings

import numpy as np
import onnx
import onnxruntime as ort
# torch is not in requirements.txt on purpose: this generator is run by hand
# (its outputs are committed); CI and the main job never run it.
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "attention")
HIDDEN, HEADS = 32, 4


class Attention(nn.Module):
    def __init__(self, causal=False, scale="div", kt="permute", probs_out=False, sm_dim=-1):
        super().__init__()
        self.causal, self.scale, self.kt = causal, scale, kt
        self.probs_out, self.sm_dim = probs_out, sm_dim
        self.d = HIDDEN // HEADS
        self.q = nn.Linear(HIDDEN, HIDDEN)
        self.k = nn.Linear(HIDDEN, HIDDEN)
        self.v = nn.Linear(HIDDEN, HIDDEN)
        self.o = nn.Linear(HIDDEN, HIDDEN)
        g = torch.Generator().manual_seed(7)
        with torch.no_grad():
            for lin, gain in ((self.q, 1.6), (self.k, 1.6), (self.v, 1.0), (self.o, 1.0)):
                lin.weight.normal_(0.0, gain / math.sqrt(HIDDEN), generator=g)
                lin.bias.normal_(0.0, 0.1, generator=g)

    def forward(self, x, mask=None):
        b, s, _ = x.size()
        q = self.q(x).view(b, s, HEADS, self.d).transpose(1, 2)
        k = self.k(x).view(b, s, HEADS, self.d)
        v = self.v(x).view(b, s, HEADS, self.d).transpose(1, 2)
        if self.kt == "permute":
            kt = k.permute(0, 2, 3, 1)
        else:
            kt = k.transpose(1, 2).transpose(-1, -2)
        scores = torch.matmul(q, kt)
        if self.scale == "div":
            scores = scores / math.sqrt(self.d)
        else:
            scores = scores * (1.0 / math.sqrt(self.d))
        if self.causal:
            tri = torch.tril(torch.ones(s, s))
            scores = scores.masked_fill(tri == 0, torch.finfo(torch.float32).min)
        if mask is not None:
            scores = scores + (1.0 - mask[:, None, None, :].float()) * -10000.0
        probs = torch.softmax(scores, dim=self.sm_dim)
        ctx = torch.matmul(probs, v).transpose(1, 2).contiguous().view(b, s, HIDDEN)
        out = self.o(ctx)
        return (out, probs) if self.probs_out else out


CASES = {
    # name: (module kwargs, opset, uses mask input, expected level-2 counts)
    "bert_o13": (dict(scale="div", kt="permute"), 13, True, {"Attention": 1, "Softmax": 0}),
    "bert_o14": (dict(scale="mul", kt="two"), 14, True, {"Attention": 1, "Softmax": 0}),
    "bert_o17": (dict(scale="div", kt="two"), 17, True, {"Attention": 1, "Softmax": 0}),
    "gpt_o14": (dict(causal=True, scale="mul", kt="permute"), 14, False,
                {"Attention": 1, "Softmax": 0, "Trilu": 0, "Where": 0}),
    "gpt_o17": (dict(causal=True, scale="div", kt="two"), 17, False,
                {"Attention": 1, "Softmax": 0, "Trilu": 0, "Where": 0}),
    "gpt_masked_o17": (dict(causal=True, scale="mul", kt="permute"), 17, True,
                       {"Attention": 1, "Softmax": 0, "Trilu": 0, "Where": 0}),
    "neg_probs_output": (dict(probs_out=True), 17, True, {"Attention": 0, "Softmax": 1}),
    "neg_softmax_dim2": (dict(sm_dim=-2), 17, True, {"Attention": 0, "Softmax": 1}),
}

SHAPES = [(1, 8), (2, 13), (1, 1)]  # (batch, seq) per data set


def export(name, kwargs, opset, with_mask, expect):
    torch.manual_seed(0)
    model = Attention(**kwargs).eval()
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    x = torch.randn(2, 5, HIDDEN)
    m = torch.ones(2, 5, dtype=torch.int64)
    args = (x, m) if with_mask else (x,)
    names = ["x", "mask"] if with_mask else ["x"]
    outs = ["y", "probs"] if kwargs.get("probs_out") else ["y"]
    axes = {"x": {0: "batch", 1: "seq"}, "mask": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"},
            "probs": {0: "batch", 2: "seq", 3: "seq"}}
    path = os.path.join(d, "model.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, path, input_names=names, output_names=outs,
                          dynamic_axes={k: axes[k] for k in names + outs}, opset_version=opset,
                          dynamo=False)
    onnx.checker.check_model(onnx.load(path))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(11)
    for k, (b, s) in enumerate(SHAPES):
        feeds = {"x": rng.standard_normal((b, s, HIDDEN)).astype(np.float32)}
        if with_mask:
            mk = np.ones((b, s), np.int64)
            if b > 1 and s > 3:
                mk[1, s - 3:] = 0  # padding at the end of row 1
            feeds["mask"] = mk
        res = sess.run(None, feeds)
        with torch.no_grad():  # torch agrees (float32) — a check on the export itself
            tres = model(*[torch.from_numpy(feeds[n]) for n in names])
            t0 = tres[0] if isinstance(tres, tuple) else tres
            assert np.abs(t0.numpy() - res[0]).max() < 1e-5, name
        ds = os.path.join(d, f"test_data_set_{k}")
        os.makedirs(ds)
        for i, n in enumerate(names):
            np.save(os.path.join(ds, f"input_{i}.npy"), feeds[n])
        for i, r in enumerate(res):
            np.save(os.path.join(ds, f"output_{i}.npy"), r)
    with open(os.path.join(d, "tolerance"), "w") as f:
        f.write("1e-4 0\n")
    with open(os.path.join(d, "expect.json"), "w") as f:
        json.dump({"opt_level": 2, "counts": expect}, f, indent=1, sort_keys=True)
        f.write("\n")
    hist = {}
    for n in onnx.load(path).graph.node:
        hist[n.op_type] = hist.get(n.op_type, 0) + 1
    print(f"{name}: opset {opset}, {sum(hist.values())} nodes: "
          + ", ".join(f"{k} {v}" for k, v in sorted(hist.items())))


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, (kw, opset, with_mask, expect) in CASES.items():
        export(name, kw, opset, with_mask, expect)


if __name__ == "__main__":
    main()
