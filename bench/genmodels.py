#!/usr/bin/env python3
"""genmodels.py — generated CNN benchmark models, built with the onnx helper
API and seeded random weights (no torch): a ResNet-18-like and a
MobileNetV3-Large-like classifier at 224x224 with a symbolic batch, a tiny
MobileNet-style model for the harness test, and BERT-like encoders (hidden 256
and 768, 4 layers, symbolic batch and seq up to 128). They are written into a folder
outside the source tree (the build folder; ~47 MB and ~22 MB), never
committed, and rebuilt only when missing or made by another generator version.

    python3 bench/genmodels.py build/bench-models     # writes all three

Weights are He-scaled normal (std sqrt(2 / fan_in)) with small biases, so the
activations neither vanish nor explode through the depth and the outputs are
meaningful numbers to compare between engines. The layouts follow what a
PyTorch export of these networks looks like after BatchNorm folding: Conv
with bias, Relu / HardSwish, Add for residuals, GlobalAveragePool, Gemm.
"""
import argparse
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# bump when a generator changes, so cached files are rebuilt
VERSION = 1
OPSET = 17


class Builder:
    """Accumulates nodes and initializers; each layer returns its output name."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []
        self.count = 0

    def name(self, kind):
        self.count += 1
        return "%s_%d" % (kind, self.count)

    def weight(self, shape, fan_in, kind):
        n = self.name(kind)
        w = self.rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)
        self.inits.append(numpy_helper.from_array(w.astype(np.float32), n))
        return n

    def bias(self, c, kind="b"):
        n = self.name(kind)
        self.inits.append(numpy_helper.from_array(
            (self.rng.standard_normal(c) * 0.01).astype(np.float32), n))
        return n

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out + "_node", **attrs))
        return out

    def conv(self, x, cin, cout, k, stride=1, group=1):
        w = self.weight([cout, cin // group, k, k], cin // group * k * k, "w")
        return self.node("Conv", [x, w, self.bias(cout)], kernel_shape=[k, k],
                         strides=[stride, stride], pads=[k // 2] * 4, group=group)

    def act(self, x, kind):
        if kind == "relu":
            return self.node("Relu", [x])
        if kind == "hswish":
            return self.node("HardSwish", [x])
        return x

    def se(self, x, c):
        """Squeeze-excitation: GAP -> 1x1 conv (c/4, rounded to 8) -> Relu ->
        1x1 conv -> HardSigmoid -> scale the input channels."""
        mid = max(8, (c // 4 + 4) // 8 * 8)
        s = self.node("GlobalAveragePool", [x])
        s = self.act(self.conv(s, c, mid, 1), "relu")
        s = self.conv(s, mid, c, 1)
        s = self.node("HardSigmoid", [s], alpha=1.0 / 6.0, beta=0.5)
        return self.node("Mul", [x, s])

    def head(self, x, cin, classes):
        x = self.node("GlobalAveragePool", [x])
        x = self.node("Flatten", [x], axis=1)
        w = self.weight([classes, cin], cin, "fc")
        return self.node("Gemm", [x, w, self.bias(classes)], transB=1)

    def model(self, name, x_in, y, hw, channels=3):
        return self.finish(
            name,
            [helper.make_tensor_value_info(x_in, TensorProto.FLOAT, ["batch", channels, hw, hw])],
            [helper.make_tensor_value_info(y, TensorProto.FLOAT, ["batch", None])])

    def finish(self, name, inputs, outputs):
        """The checked model of the nodes so far, with these input/output infos."""
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="libmopt bench/genmodels.py",
                              producer_version=str(VERSION))
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def resnet18(seed=1, hw=224, classes=1000):
    """ResNet-18 layout: 7x7/2 stem, 3x3/2 max pool, four stages of two basic
    blocks (64, 128, 256, 512 channels); the first block of stages 2-4 halves
    the resolution with a stride-2 3x3 conv and a stride-2 1x1 projection."""
    b = Builder(seed)
    x = b.act(b.conv("input", 3, 64, 7, 2), "relu")
    x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        for blk in range(2):
            s = stride if blk == 0 else 1
            y = b.act(b.conv(x, cin, cout, 3, s), "relu")
            y = b.conv(y, cout, cout, 3, 1)
            short = b.conv(x, cin, cout, 1, s) if (s != 1 or cin != cout) else x
            x = b.act(b.node("Add", [y, short]), "relu")
            cin = cout
    return b.model("resnet18_like", "input", b.head(x, cin, classes), hw)


# MobileNetV3-Large: kernel, expansion, out channels, SE, activation, stride
MBV3_LARGE = [
    (3, 16, 16, False, "relu", 1), (3, 64, 24, False, "relu", 2),
    (3, 72, 24, False, "relu", 1), (5, 72, 40, True, "relu", 2),
    (5, 120, 40, True, "relu", 1), (5, 120, 40, True, "relu", 1),
    (3, 240, 80, False, "hswish", 2), (3, 200, 80, False, "hswish", 1),
    (3, 184, 80, False, "hswish", 1), (3, 184, 80, False, "hswish", 1),
    (3, 480, 112, True, "hswish", 1), (3, 672, 112, True, "hswish", 1),
    (5, 672, 160, True, "hswish", 2), (5, 960, 160, True, "hswish", 1),
    (5, 960, 160, True, "hswish", 1),
]
MBV3_TINY = [(3, 16, 16, True, "relu", 2), (3, 48, 24, False, "hswish", 2),
             (5, 64, 24, True, "hswish", 1)]


def mobilenetv3(seed=2, hw=224, classes=1000, table=MBV3_LARGE, last=960, hidden=1280):
    """MobileNetV3 inverted residuals: 1x1 expansion, depthwise kxk (stride 1
    or 2), optional squeeze-excitation, 1x1 linear projection, a residual Add
    when the shape is kept; HardSwish stem and head."""
    b = Builder(seed)
    x = b.act(b.conv("input", 3, 16, 3, 2), "hswish")
    cin = 16
    for k, exp, cout, se, act, stride in table:
        y = x
        if exp != cin:
            y = b.act(b.conv(y, cin, exp, 1), act)
        y = b.act(b.conv(y, exp, exp, k, stride, group=exp), act)
        if se:
            y = b.se(y, exp)
        y = b.conv(y, exp, cout, 1)
        x = b.node("Add", [y, x]) if (stride == 1 and cin == cout) else y
        cin = cout
    x = b.act(b.conv(x, cin, last, 1), "hswish")
    x = b.node("GlobalAveragePool", [x])
    x = b.act(b.conv(x, last, hidden, 1), "hswish")
    return b.model("mobilenetv3_like", "input", b.head(x, hidden, classes), hw)


def bert_encoder(seed=4, hidden=256, heads=4, ffn=1024, layers=4, vocab=1000, max_pos=128):
    """BERT-base-like encoder as a PyTorch export lays it out: word + position
    embeddings (positions sliced to the input's length), LayerNorm, then per
    layer Q/K/V MatMul + Add, Reshape [0, 0, heads, head_dim], Transpose,
    Q.K^T / sqrt(head_dim) + additive mask, Softmax, .V, output projection,
    residual Add + LayerNorm, FFN with the erf GELU, residual + LayerNorm.
    Weights normal with std 1/sqrt(fan_in); inputs input_ids and
    attention_mask (int64, [batch, seq]); output the last hidden state."""
    b = Builder(seed)
    d = hidden // heads

    def const(arr, kind="c"):
        n = b.name(kind)
        b.inits.append(numpy_helper.from_array(np.asarray(arr), n))
        return n

    def linear(x, cin, cout):
        n = b.name("w")
        w = b.rng.standard_normal([cin, cout]) * np.sqrt(1.0 / cin)
        b.inits.append(numpy_helper.from_array(w.astype(np.float32), n))
        return b.node("Add", [b.bias(cout), b.node("MatMul", [x, n])])

    def layernorm(x):
        g = const((1.0 + 0.1 * b.rng.standard_normal(hidden)).astype(np.float32), "ln_w")
        return b.node("LayerNormalization", [x, g, b.bias(hidden)], axis=-1, epsilon=1e-12)

    def emb(rows, kind):
        n = b.name(kind)
        b.inits.append(numpy_helper.from_array(
            b.rng.standard_normal([rows, hidden]).astype(np.float32), n))
        return n

    seq = b.node("Slice", [b.node("Shape", ["input_ids"]), const(np.array([1], np.int64)),
                           const(np.array([2], np.int64))])
    pos = b.node("Slice", [const(np.arange(max_pos, dtype=np.int64)),
                           const(np.array([0], np.int64)), seq])
    x = b.node("Add", [b.node("Gather", [emb(vocab, "word"), "input_ids"]),
                       b.node("Gather", [emb(max_pos, "pos"), pos])])
    x = layernorm(x)
    m = b.node("Cast", [b.node("Unsqueeze", ["attention_mask", const(np.array([1, 2], np.int64))])],
               to=TensorProto.FLOAT)
    mask = b.node("Mul", [b.node("Sub", [const(np.array(1.0, np.float32)), m]),
                          const(np.array(-10000.0, np.float32))])
    split = const(np.array([0, 0, heads, d], np.int64))
    merge = const(np.array([0, 0, hidden], np.int64))
    for _ in range(layers):
        q = b.node("Transpose", [b.node("Reshape", [linear(x, hidden, hidden), split])],
                   perm=[0, 2, 1, 3])
        k = b.node("Transpose", [b.node("Reshape", [linear(x, hidden, hidden), split])],
                   perm=[0, 2, 3, 1])
        v = b.node("Transpose", [b.node("Reshape", [linear(x, hidden, hidden), split])],
                   perm=[0, 2, 1, 3])
        s = b.node("Div", [b.node("MatMul", [q, k]), const(np.array(np.sqrt(d), np.float32))])
        p = b.node("Softmax", [b.node("Add", [s, mask])], axis=-1)
        a = b.node("Transpose", [b.node("MatMul", [p, v])], perm=[0, 2, 1, 3])
        a = linear(b.node("Reshape", [a, merge]), hidden, hidden)
        x = layernorm(b.node("Add", [a, x]))
        h = linear(x, hidden, ffn)
        e = b.node("Erf", [b.node("Div", [h, const(np.array(np.sqrt(2.0), np.float32))])])
        h = b.node("Mul", [b.node("Mul", [h, b.node("Add", [e, const(np.array(1.0, np.float32))])]),
                           const(np.array(0.5, np.float32))])
        x = layernorm(b.node("Add", [linear(h, ffn, hidden), x]))
    ids = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
           for n in ("input_ids", "attention_mask")]
    return b.finish("bert_encoder_%d" % hidden, ids, [
        helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", "seq", hidden])])


GENERATORS = {
    "resnet18_like": lambda: resnet18(),
    "mobilenetv3_like": lambda: mobilenetv3(),
    "tiny_mbv3": lambda: mobilenetv3(seed=3, hw=32, classes=10, table=MBV3_TINY, last=48,
                                     hidden=64),
    # BERT-like encoders of issue 11 (4 layers; seq up to 128)
    "bert256": lambda: bert_encoder(hidden=256, heads=4, ffn=1024),
    "bert768": lambda: bert_encoder(hidden=768, heads=12, ffn=3072),
}


def ensure(folder, name):
    """The path of generated model `name` in folder, built if missing or stale."""
    folder = Path(folder)
    path = folder / ("%s.onnx" % name)
    if path.is_file():
        try:
            m = onnx.load(str(path), load_external_data=False)
            if m.producer_version == str(VERSION):
                return path
        except Exception:  # a truncated file: rebuild it
            pass
    folder.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    onnx.save(GENERATORS[name](), str(tmp))
    tmp.replace(path)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", help="where to write the .onnx files (not the source tree)")
    ap.add_argument("names", nargs="*", help="which (default all): " + ", ".join(GENERATORS))
    args = ap.parse_args(argv)
    for n in args.names or GENERATORS:
        if n not in GENERATORS:
            ap.error("unknown model %s" % n)
        p = ensure(args.folder, n)
        print("%s  %.1f MB" % (p, p.stat().st_size / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
