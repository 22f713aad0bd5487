"""export_models.py — export the small model-test corpus with PyTorch.

Writes tests/models/<name>/model.onnx for the four corpus models and the
example model examples/models/bert_tiny.onnx. Run from anywhere (paths are
relative to this file); needs torch and onnx. Everything is seeded, so a
rerun gives the same weights (the .onnx bytes may differ across torch
versions; the references then have to be remade with make_references.py).

Models (all exported with the legacy TorchScript exporter, dynamo=False):
  bert       post-LN encoder, erf-GELU, additive attention mask, 128 positions,
             opset 17
  gpt        pre-LN decoder, tanh-GELU, Trilu causal mask, opset 14 (so that
             LayerNorm is exported as the decomposed ReduceMean/Pow/Sqrt/Div
             pattern rather than LayerNormalization)
  cnn        ResNet-style Conv/BatchNorm/Relu/MaxPool/Add, no constant
             folding, so BatchNormalization stays a separate node; opset 17
  mobilenet  MobileNetV3-style depthwise/pointwise convs, ReLU6 (Clip),
             HardSwish, squeeze-excite with HardSigmoid; default export
             (BatchNorm folded into Conv by the exporter); opset 17

Usage: python3 tests/models/export_models.py [--only NAME ...]
"""
import argparse
import collections
import copy
import math
import os
import sys
import warnings

import onnx
# torch is not in requirements.txt on purpose: this generator is run by hand
# (its outputs are committed); CI and the main job never run it.
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = os.path.join(ROOT, "examples", "models")

SEED = 20240611


# ---------------------------------------------------------------- init helpers

def init_linear(lin, gain=1.0, gen=None):
    """N(0, gain/sqrt(fan_in)) weights, small non-zero bias: unit-scale outputs."""
    fan_in = lin.weight.shape[1]
    with torch.no_grad():
        lin.weight.normal_(0.0, gain / math.sqrt(fan_in), generator=gen)
        if lin.bias is not None:
            lin.bias.normal_(0.0, 0.1, generator=gen)


def init_conv(conv, gain=math.sqrt(2.0), gen=None):
    """Kaiming-normal (fan_in) conv weights; the bias, if any, small."""
    fan_in = conv.weight.shape[1] * conv.weight.shape[2] * conv.weight.shape[3]
    with torch.no_grad():
        conv.weight.normal_(0.0, gain / math.sqrt(fan_in), generator=gen)
        if conv.bias is not None:
            conv.bias.normal_(0.0, 0.1, generator=gen)


def init_norm(norm, gen=None):
    """Non-trivial affine parameters (gamma ~ U(0.6, 1.4), beta ~ N(0, 0.2)) so that
    swapping or dropping them is visible in the outputs."""
    with torch.no_grad():
        norm.weight.uniform_(0.6, 1.4, generator=gen)
        norm.bias.normal_(0.0, 0.2, generator=gen)


def init_bn(bn, gen=None):
    """BatchNorm with random running statistics so that the normalization matters."""
    init_norm(bn, gen)
    with torch.no_grad():
        bn.running_mean.normal_(0.0, 0.3, generator=gen)
        bn.running_var.uniform_(0.4, 2.0, generator=gen)


def init_convs_and_bns(model, gen):
    """init_conv / init_bn on every Conv2d and BatchNorm2d of model, in module order."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            init_conv(m, gen=gen)
        elif isinstance(m, nn.BatchNorm2d):
            init_bn(m, gen)


def add_attention_projections(attn, hidden, heads, names):
    """The head split and the four hidden x hidden projections (query, key,
    value, output) of an attention block, registered as names in that order."""
    attn.heads = heads
    attn.head_dim = hidden // heads
    attn.projections = names
    for name in names:
        setattr(attn, name, nn.Linear(hidden, hidden))


def init_attention_projections(attn, out_gain, gen):
    """init_linear on the projections of add_attention_projections, in order:
    query and key a little larger so that softmax is far from uniform."""
    for name, gain in zip(attn.projections, (1.6, 1.6, 1.0, out_gain)):
        init_linear(getattr(attn, name), gain, gen)


# ------------------------------------------------------------------------ BERT

class BertSelfAttention(nn.Module):
    """Explicit q/k/v projections, view/transpose to heads, scaled QK^T + mask,
    softmax, ·V, transpose/reshape back: the pattern torch exporters emit."""

    def __init__(self, hidden, heads):
        super().__init__()
        add_attention_projections(self, hidden, heads, ("query", "key", "value", "out"))

    def split(self, x):
        b, s, _ = x.size()
        return x.view(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x, add_mask):
        b, s, h = x.size()
        q = self.split(self.query(x))
        k = self.split(self.key(x))
        v = self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = scores + add_mask
        probs = F.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v)
        ctx = ctx.transpose(1, 2).contiguous().view(b, s, h)
        return self.out(ctx)


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.attn = BertSelfAttention(hidden, heads)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.fc1 = nn.Linear(hidden, ffn)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, add_mask):
        x = self.ln1(x + self.attn(x, add_mask))
        return self.ln2(x + self.fc2(self.act(self.fc1(x))))


class Bert(nn.Module):
    def __init__(self, vocab=1000, max_pos=64, hidden=64, heads=4, ffn=128, layers=2):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.ln_emb = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer(hidden, heads, ffn) for _ in range(layers)])
        self.pool = nn.Linear(hidden, hidden)
        # The HF way: a position-id buffer sliced to the sequence length.
        self.register_buffer("position_ids", torch.arange(max_pos).unsqueeze(0), persistent=False)

    def init_weights(self, gen, pos_rows=None, extra_gen=None):
        """pos_rows: how many position rows to draw from gen in the usual order (all
        by default); the rest come from extra_gen after everything else. This lets
        the test bert grow its position table without changing any other weight."""
        rows = self.pos.weight.shape[0] if pos_rows is None else pos_rows
        with torch.no_grad():
            self.word.weight.normal_(0.0, 1.0, generator=gen)
            self.pos.weight[:rows].normal_(0.0, 0.5, generator=gen)
        init_norm(self.ln_emb, gen)
        for layer in self.layers:
            init_attention_projections(layer.attn, 1.0, gen)
            init_linear(layer.fc1, 1.0, gen)
            init_linear(layer.fc2, 1.0, gen)
            init_norm(layer.ln1, gen)
            init_norm(layer.ln2, gen)
        init_linear(self.pool, 0.8, gen)
        if rows < self.pos.weight.shape[0]:
            with torch.no_grad():
                self.pos.weight[rows:].normal_(0.0, 0.5, generator=extra_gen)

    def forward(self, input_ids, attention_mask):
        seq = input_ids.size(1)
        pos_ids = self.position_ids[:, :seq]
        x = self.ln_emb(self.word(input_ids) + self.pos(pos_ids))
        ext = attention_mask[:, None, None, :].to(torch.float32)
        add_mask = (1.0 - ext) * -10000.0
        for layer in self.layers:
            x = layer(x, add_mask)
        pooled = torch.tanh(self.pool(x[:, 0]))
        return x, pooled


# ------------------------------------------------------------------------- GPT

class GptAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        add_attention_projections(self, hidden, heads, ("q", "k", "v", "proj"))

    def forward(self, x):
        b, s, h = x.size()
        q = self.q(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        v = self.v(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        causal = torch.tril(torch.ones(s, s, device=x.device))
        scores = scores.masked_fill(causal == 0, torch.finfo(torch.float32).min)
        probs = torch.softmax(scores, dim=-1)
        y = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, h)
        return self.proj(y)


class GptBlock(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden)
        self.attn = GptAttention(hidden, heads)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, ffn)
        self.act = nn.GELU(approximate="tanh")
        self.proj = nn.Linear(ffn, hidden)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.proj(self.act(self.fc(self.ln2(x))))


class Gpt(nn.Module):
    def __init__(self, vocab=100, max_pos=64, hidden=64, heads=4, ffn=256, layers=2):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(max_pos, hidden)
        self.blocks = nn.ModuleList([GptBlock(hidden, heads, ffn) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def init_weights(self, gen):
        with torch.no_grad():
            self.wte.weight.normal_(0.0, 1.0, generator=gen)
            self.wpe.weight.normal_(0.0, 0.5, generator=gen)
        for blk in self.blocks:
            init_norm(blk.ln1, gen)
            init_norm(blk.ln2, gen)
            init_attention_projections(blk.attn, 0.7, gen)
            init_linear(blk.fc, 1.0, gen)
            init_linear(blk.proj, 0.7, gen)
        init_norm(self.ln_f, gen)
        init_linear(self.lm_head, 1.5, gen)

    def forward(self, input_ids):
        s = input_ids.size(1)
        pos = torch.arange(0, s, dtype=torch.long, device=input_ids.device).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.lm_head(self.ln_f(x))


# ------------------------------------------------------------------------- CNN

class ResBlock(nn.Module):
    """conv-bn-relu-conv-bn + shortcut (identity or 1x1 conv-bn), relu."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, 0, bias=False),
                                       nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        s = x if self.short is None else self.short(x)
        return F.relu(y + s)


class Cnn(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, 1, 1, bias=True)
        self.bn = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2, 2)                  # 32 -> 16
        self.block1 = ResBlock(16, 16, 1)
        self.block2 = ResBlock(16, 32, 2)               # 16 -> 8
        self.pool2 = nn.MaxPool2d(3, 2, 1)              # 8 -> 4 (padded, overlapping)
        self.block3 = ResBlock(32, 32, 1)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, classes)

    def init_weights(self, gen):
        init_convs_and_bns(self, gen)
        init_linear(self.fc, 0.5, gen)

    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.stem(x))))
        x = self.block1(x)
        x = self.pool2(self.block2(x))
        x = self.block3(x)
        x = torch.flatten(self.gap(x), 1)
        return self.fc(x)


# ------------------------------------------------------------------- MobileNet

class SqueezeExcite(nn.Module):
    def __init__(self, ch, squeeze):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(ch, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, ch, 1)
        self.gate = nn.Hardsigmoid()

    def forward(self, x):
        s = self.gate(self.fc2(F.relu(self.fc1(self.pool(x)))))
        return x * s


class InvertedResidual(nn.Module):
    def __init__(self, cin, expand, cout, kernel, stride, act, se):
        super().__init__()
        self.use_res = stride == 1 and cin == cout
        self.expand = nn.Sequential(nn.Conv2d(cin, expand, 1, bias=False),
                                    nn.BatchNorm2d(expand), act())
        self.dw = nn.Sequential(nn.Conv2d(expand, expand, kernel, stride, kernel // 2,
                                          groups=expand, bias=False),
                                nn.BatchNorm2d(expand), act())
        self.se = SqueezeExcite(expand, max(8, expand // 4)) if se else nn.Identity()
        self.project = nn.Sequential(nn.Conv2d(expand, cout, 1, bias=False),
                                     nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.project(self.se(self.dw(self.expand(x))))
        return x + y if self.use_res else y


class MobileNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False),   # 32 -> 16
                                  nn.BatchNorm2d(16), nn.Hardswish())
        self.blocks = nn.Sequential(
            InvertedResidual(16, 32, 16, 3, 1, nn.ReLU6, se=True),
            InvertedResidual(16, 48, 24, 3, 2, nn.ReLU6, se=False),         # 16 -> 8
            InvertedResidual(24, 64, 24, 5, 1, nn.Hardswish, se=True),
            InvertedResidual(24, 64, 32, 5, 2, nn.Hardswish, se=True),      # 8 -> 4
        )
        self.head = nn.Sequential(nn.Conv2d(32, 96, 1, bias=False), nn.BatchNorm2d(96),
                                  nn.Hardswish())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Linear(96, 64)
        self.act = nn.Hardswish()
        self.fc2 = nn.Linear(64, classes)

    def init_weights(self, gen):
        init_convs_and_bns(self, gen)
        init_linear(self.fc1, 2.0, gen)
        init_linear(self.fc2, 2.0, gen)

    def forward(self, x):
        x = self.head(self.blocks(self.stem(x)))
        x = torch.flatten(self.pool(x), 1)
        return self.fc2(self.act(self.fc1(x)))


# ---------------------------------------------------------------------- export

def op_histogram(model):
    return collections.Counter(n.op_type for n in model.graph.node)


def export(name, model, args, path, input_names, output_names, dynamic_axes, opset,
           constant_folding=True):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, path, dynamo=False, opset_version=opset,
                          input_names=input_names, output_names=output_names,
                          dynamic_axes=dynamic_axes, do_constant_folding=constant_folding,
                          training=torch.onnx.TrainingMode.EVAL,
                          keep_initializers_as_inputs=False)
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
    hist = op_histogram(m)
    size = os.path.getsize(path)
    print(f"{name}: {os.path.relpath(path, ROOT)}  opset {opset}  ir_version {m.ir_version}  "
          f"{size} bytes  {sum(hist.values())} nodes")
    print("  " + ", ".join(f"{k} {v}" for k, v in sorted(hist.items())))
    return m


def bert_case(m, gen, pad_second_from=None):
    """The bert models' case: ids (2, 8) < 1000 drawn from gen after m's weights,
    a mask of ones (the second row padded from pad_second_from on, if given)."""
    ids = torch.randint(0, 1000, (2, 8), generator=gen)
    mask = torch.ones(2, 8, dtype=torch.int64)
    if pad_second_from is not None:
        mask[1, pad_second_from:] = 0
    return (m, (ids, mask), ["input_ids", "attention_mask"],
            ["last_hidden_state", "pooler_output"],
            {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
             "last_hidden_state": {0: "batch", 1: "seq"}, "pooler_output": {0: "batch"}},
            17, True)


def image_case(m, gen, constant_folding):
    """The CNN models' case: one image batch (2, 3, 32, 32) drawn from gen after
    m's weights, opset 17."""
    x = torch.randn(2, 3, 32, 32, generator=gen)
    return (m, (x,), ["input"], ["logits"],
            {"input": {0: "batch"}, "logits": {0: "batch"}}, 17, constant_folding)


def build(name, gen):
    """Returns (module, example args, input names, output names, dynamic axes, opset, folding)."""
    if name == "bert":
        # 128 positions so that seq 128 can be run (and benchmarked). Rows 0..63 and all
        # other weights are drawn exactly as when the table had 64 rows (so outputs for
        # seq <= 64 did not change); rows 64..127 come from their own seeded generator.
        m = Bert(max_pos=128)
        m.init_weights(gen, pos_rows=64,
                       extra_gen=torch.Generator().manual_seed(SEED + sum(map(ord, "bert_pos"))))
        return bert_case(m, gen, pad_second_from=6)
    if name == "bert_tiny":
        m = Bert(vocab=1000, max_pos=128, hidden=128, heads=4, ffn=512, layers=2)
        m.init_weights(gen)
        return bert_case(m, gen)
    if name == "gpt":
        m = Gpt()
        m.init_weights(gen)
        ids = torch.randint(0, 100, (2, 8), generator=gen)
        return (m, (ids,), ["input_ids"], ["logits"],
                {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}},
                14, True)
    if name == "cnn":
        m = Cnn()
        m.init_weights(gen)
        return image_case(m, gen, constant_folding=False)
    if name == "mobilenet":
        m = MobileNet()
        m.init_weights(gen)
        return image_case(m, gen, constant_folding=True)
    raise ValueError(name)


def check_structure(name, m):
    """The properties the corpus exists for; fail loudly if the exporter changed."""
    hist = op_histogram(m)
    need = {
        "bert": ["Gather", "MatMul", "Softmax", "Erf", "LayerNormalization", "Transpose",
                 "Reshape", "Cast", "Sub", "Tanh", "Gemm"],
        "bert_tiny": ["Gather", "MatMul", "Softmax", "Erf", "LayerNormalization"],
        "gpt": ["Gather", "Trilu", "Where", "Softmax", "Tanh", "Pow", "ReduceMean", "Sqrt",
                "Range"],
        "cnn": ["Conv", "BatchNormalization", "Relu", "MaxPool", "Add", "GlobalAveragePool",
                "Flatten", "Gemm"],
        "mobilenet": ["Conv", "Clip", "HardSwish", "HardSigmoid", "GlobalAveragePool", "Mul",
                      "Add", "Gemm"],
    }[name]
    missing = [op for op in need if hist[op] == 0]
    if missing:
        raise SystemExit(f"{name}: exported graph lacks {missing}; histogram {dict(hist)}")
    if name == "mobilenet":
        if not any(n.op_type == "Conv" and any(a.name == "group" and a.i > 1 for a in n.attribute)
                   for n in m.graph.node):
            raise SystemExit("mobilenet: no depthwise (group > 1) Conv")


def check_against_float64(name, module, args, path, input_names):
    """The exported graph run by ONNX Runtime (float32) must match the torch module
    run in float64 (an independent implementation) within 2e-5 on the example input."""
    try:
        import onnxruntime as ort
    except ImportError:
        print(f"  (onnxruntime missing: {name} not cross-checked against float64)")
        return
    m64 = copy.deepcopy(module).double().eval()
    with torch.no_grad():
        ref = m64(*[a.double() if a.is_floating_point() else a for a in args])
    ref = ref if isinstance(ref, tuple) else (ref,)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    got = sess.run(None, {n: a.numpy() for n, a in zip(input_names, args)})
    err = max(float((torch.from_numpy(g).double() - r).abs().max()) for g, r in zip(got, ref))
    mag = max(float(r.abs().max()) for r in ref)
    print(f"  ORT float32 vs torch float64: max abs err {err:.1e} (outputs max |y| {mag:.2f})")
    if err > 2e-5:
        raise SystemExit(f"{name}: exported model disagrees with torch float64 ({err:.3g})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    names = ["bert", "gpt", "cnn", "mobilenet", "bert_tiny"]
    if args.only:
        names = [n for n in names if n in args.only]
    torch.set_num_threads(1)
    for name in names:
        torch.manual_seed(SEED)
        gen = torch.Generator().manual_seed(SEED + sum(map(ord, name)))
        module, ex, ins, outs, dyn, opset, fold = build(name, gen)
        if name == "bert_tiny":
            path = os.path.join(EXAMPLES, "bert_tiny.onnx")
        else:
            path = os.path.join(HERE, name, "model.onnx")
        m = export(name, module, ex, path, ins, outs, dyn, opset, fold)
        check_structure(name, m)
        check_against_float64(name, module, ex, path, ins)
    return 0


if __name__ == "__main__":
    sys.exit(main())
