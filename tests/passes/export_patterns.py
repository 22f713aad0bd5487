"""export_patterns.py — the fusion pattern corpus, exported with PyTorch.

Each case is a tiny torch module exported with the legacy TorchScript
exporter (dynamo=False) at opset 13, 14 and 17 (some also at 18), i.e. the
graphs torch really emits (default constant folding, except for the BN cases),
written to tests/passes/data/<case>/ in the
case_runner layout:
  model.onnx, test_data_set_0/input_K.npy, output_K.npy (ONNX Runtime's
  outputs: an independent reference), and `expect`, what the C test
  tests/passes/test_fusions.c checks on the graph libmopt builds at
  opt_level 2, one rule per line:
      count OP N     exactly N nodes of type OP after optimization
      absent OP      no node of type OP
      min OP N       at least N nodes of type OP
Negative cases (neg_*) are patterns that must NOT fuse.

The rules are written here by hand from what the pattern is, not from what
libmopt does. Run from anywhere: python3 tests/passes/export_patterns.py
(needs torch, onnx, onnxruntime); commit the data folder.
"""
import io
import math
import os
import warnings

import numpy as np
import onnx
import onnxruntime as ort
# torch is not in requirements.txt on purpose: this generator is run by hand
# (its outputs are committed); CI and the main job never run it.
import torch
import torch.nn as nn
import torch.nn.functional as F

from pattern_case import write_case

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
OPSETS = (13, 14, 17)


def seeded(seed):
    torch.manual_seed(seed)
    return np.random.default_rng(seed)


# ---------------------------------------------------------------- modules

def bn(c):
    m = nn.BatchNorm2d(c)
    with torch.no_grad():
        m.weight.uniform_(0.6, 1.4)
        m.bias.normal_(0.0, 0.2)
        m.running_mean.normal_(0.0, 0.3)
        m.running_var.uniform_(0.4, 2.0)
    return m


class ConvBnRelu(nn.Module):
    """Conv -> BN -> ReLU, then a residual block Conv -> BN -> +x -> ReLU,
    and a bias-free Conv -> BN."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.b1 = bn(8)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.b2 = bn(8)
        self.c3 = nn.Conv2d(8, 4, 1, bias=False)
        self.b3 = bn(4)

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        y = F.relu(self.b2(self.c2(y)) + y)
        return self.b3(self.c3(y))


class ConvActs(nn.Module):
    """Conv followed by each supported activation, and a residual add."""

    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(8 if i else 3, 8, 3, padding=1) for i in range(7)])
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)

    def forward(self, x):
        c = self.convs
        y = F.relu6(c[0](x))                    # Clip(0, 6)
        y = F.relu(c[1](y))
        y = torch.sigmoid(c[2](y)) * 2.0 - 0.5
        y = F.leaky_relu(c[3](y), 0.1)
        y = F.hardsigmoid(c[4](y)) - 0.5
        y = torch.tanh(c[5](y))
        y = self.dw(y) + y                      # residual, no activation
        return F.hardswish(c[6](y))             # HardSwish (opset >= 14)


class ManualLN(nn.Module):
    """The decomposed LayerNorm of GPT-2 style code (any opset)."""

    def __init__(self, d, square="pow", eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(d).uniform_(0.6, 1.4))
        self.bias = nn.Parameter(torch.empty(d).normal_(0.0, 0.2))
        self.square, self.eps = square, eps

    def forward(self, x):
        u = x.mean(-1, keepdim=True)
        d = x - u
        s = (d.pow(2) if self.square == "pow" else d * d).mean(-1, keepdim=True)
        return self.weight * ((x - u) / torch.sqrt(s + self.eps)) + self.bias


class LNBlock(nn.Module):
    def __init__(self, square):
        super().__init__()
        self.ln = ManualLN(16, square)
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        return self.fc(self.ln(x))


class TorchLN(nn.Module):
    """nn.LayerNorm: decomposed before opset 17, LayerNormalization from 17."""

    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(16, eps=1e-6)
        with torch.no_grad():
            self.ln.weight.uniform_(0.6, 1.4)
            self.ln.bias.normal_(0.0, 0.2)

    def forward(self, x):
        return self.ln(x) * 2.0


class GeluErfTorch(nn.Module):
    def forward(self, x):
        return F.gelu(x * 3.0)


class GeluErfHF(nn.Module):
    """x * 0.5 * (1 + erf(x * 0.7071...)): Mul by 1/sqrt(2), 0.5 first."""

    def forward(self, x):
        x = x * 3.0
        return x * 0.5 * (1.0 + torch.erf(x * 0.7071067811865476))


class GeluErfHalfLast(nn.Module):
    """x * ((1 + erf(x / sqrt 2)) * 0.5)."""

    def forward(self, x):
        x = x * 3.0
        return x * ((1.0 + torch.erf(x / math.sqrt(2.0))) * 0.5)


class GeluTanhTorch(nn.Module):
    def forward(self, x):
        return F.gelu(x * 3.0, approximate="tanh")


class GeluTanhCube(nn.Module):
    """GPT-2's NewGELU with x*x*x."""

    def forward(self, x):
        x = x * 3.0
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


class GeluTanhPow(nn.Module):
    def forward(self, x):
        x = x * 3.0
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                           (x + 0.044715 * torch.pow(x, 3.0))))


class Mlp(nn.Module):
    """Linear -> GELU -> Linear -> + residual (3-D input: MatMul + Add)."""

    def __init__(self, act="gelu"):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 16)
        self.act = act

    def forward(self, x):
        h = self.fc1(x)
        h = F.gelu(h) if self.act == "gelu" else F.relu(h)
        return x + self.fc2(h)


class GemmAct(nn.Module):
    """2-D Linear (exported as Gemm) + ReLU / Sigmoid; a last Gemm alone."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(12, 20)
        self.fc2 = nn.Linear(20, 20)
        self.fc3 = nn.Linear(20, 5)

    def forward(self, x):
        return self.fc3(torch.sigmoid(self.fc2(F.relu(self.fc1(x)))))


class MatMulTransB(nn.Module):
    """a @ b^T with b an input (Transpose swapping the last two axes)."""

    def forward(self, a, b):
        return torch.matmul(a, b.transpose(-1, -2)) * 0.5


class NegBnTwoUses(nn.Module):
    """The Conv output is read by the BN and by another branch: no folding."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 4, 3, padding=1)
        self.b = bn(4)

    def forward(self, x):
        y = self.c(x)
        return self.b(y) + torch.sigmoid(y)


class NegLnAxis(nn.Module):
    """A LayerNorm-like normalization over axis 1 (not the last one)."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(1).uniform_(0.6, 1.4))

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        d = x - u
        s = d.pow(2).mean(1, keepdim=True)
        return (d / torch.sqrt(s + 1e-5)) * self.weight


class NegBiasInput(nn.Module):
    """MatMul + Add of a graph input (not a constant bias, and it broadcasts,
    so it is no residual either)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(16, 8) * 0.25)

    def forward(self, x, bias):
        return torch.matmul(x, self.w) + bias


class NegGeluConst(nn.Module):
    """Looks like erf-GELU but divides by 1.5, not sqrt(2)."""

    def forward(self, x):
        return x * 0.5 * (1.0 + torch.erf(x / 1.5))


class NegConvOutputUsedTwice(nn.Module):
    """The Conv output is also a graph output: no activation fusion."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.c(x)
        return y, F.relu(y)


# ------------------------------------------------------------------- cases

def case_list():
    """(name, module factory, input shapes, dynamic axes, opsets, rules)."""
    img = [(2, 3, 8, 8)]
    dyn_img = {"input_0": {0: "batch"}}
    seq = [(2, 5, 16)]
    dyn_seq = {"input_0": {0: "batch", 1: "seq"}}
    gelu_rules = ["absent Erf", "absent Tanh", "count Gelu 1"]
    cases = []
    for op in OPSETS:
        cases += [
            (f"conv_bn_o{op}", ConvBnRelu, img, dyn_img, op,
             ["absent BatchNormalization", "absent Relu", "absent Add", "count FusedConv 2",
              "count Conv 1"]),
            (f"conv_act_o{op}", ConvActs, img, dyn_img, op,
             ["absent Clip", "absent Relu", "absent Sigmoid", "absent LeakyRelu",
              "absent Tanh"] +
             # before opset 14 torch writes HardSwish as x * HardSigmoid(x): the Conv output
             # has two readers, so that last Conv stays unfused
             (["absent HardSwish", "absent HardSigmoid", "count FusedConv 8"] if op >= 14 else
              ["count FusedConv 7", "count Conv 1"])),
            (f"ln_pow_o{op}", lambda: LNBlock("pow"), seq, dyn_seq, op,
             ["absent ReduceMean", "absent Pow", "absent Sqrt", "count LayerNormalization 1",
              "count FusedMatMul 1"]),
            (f"ln_mul_o{op}", lambda: LNBlock("mul"), seq, dyn_seq, op,
             ["absent ReduceMean", "absent Sqrt", "count LayerNormalization 1",
              "count FusedMatMul 1"]),
            (f"ln_torch_o{op}", TorchLN, seq, dyn_seq, op,
             ["absent ReduceMean", "absent Sqrt", "count LayerNormalization 1"]),
            (f"gelu_erf_o{op}", GeluErfTorch, seq, dyn_seq, op, gelu_rules),
            (f"gelu_erf_hf_o{op}", GeluErfHF, seq, dyn_seq, op, gelu_rules),
            (f"gelu_erf_halflast_o{op}", GeluErfHalfLast, seq, dyn_seq, op, gelu_rules),
            (f"gelu_tanh_o{op}", GeluTanhTorch, seq, dyn_seq, op, gelu_rules),
            (f"gelu_tanh_cube_o{op}", GeluTanhCube, seq, dyn_seq, op, gelu_rules),
            (f"gelu_tanh_pow_o{op}", GeluTanhPow, seq, dyn_seq, op, gelu_rules),
            (f"mlp_gelu_o{op}", Mlp, seq, {}, op,
             ["absent Erf", "absent Gelu", "absent MatMul", "absent Add",
              "count FusedMatMul 2"]),
            (f"mlp_relu_dyn_o{op}", lambda: Mlp("relu"), seq, dyn_seq, op,
             ["absent Relu", "absent MatMul", "count FusedMatMul 2"]),
            (f"gemm_act_o{op}", GemmAct, [(4, 12)], {"input_0": {0: "batch"}}, op,
             ["absent Relu", "absent Sigmoid", "count FusedMatMul 2", "count Gemm 1"]),
            (f"matmul_transb_o{op}", MatMulTransB, [(2, 3, 5, 8), (2, 3, 7, 8)], {}, op,
             ["absent Transpose", "count FusedMatMul 1"]),
        ]
    cases += [
        ("ln_pow_o18", lambda: LNBlock("pow"), seq, dyn_seq, 18,
         ["absent ReduceMean", "count LayerNormalization 1"]),
        ("neg_bn_two_uses", NegBnTwoUses, img, dyn_img, 17,
         ["count BatchNormalization 1", "absent FusedConv"]),
        ("neg_ln_axis", NegLnAxis, [(2, 6, 5)], {}, 14,
         ["min ReduceMean 2", "absent LayerNormalization"]),
        ("neg_bias_input", NegBiasInput, [(2, 5, 16), (8,)], {}, 17,
         ["count MatMul 1", "count Add 1", "absent FusedMatMul"]),
        ("neg_gelu_const", NegGeluConst, seq, {}, 17, ["count Erf 1", "absent Gelu"]),
        ("neg_conv_two_outputs", NegConvOutputUsedTwice, img, {}, 17,
         ["count Conv 1", "count Relu 1", "absent FusedConv"]),
    ]
    return cases


def export(name, factory, shapes, dyn, opset, rules, seed):
    rng = seeded(seed)
    model = factory().eval()
    inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    in_names = [f"input_{k}" for k in range(len(inputs))]
    with torch.no_grad():
        outs = model(*[torch.from_numpy(a) for a in inputs])
    n_out = len(outs) if isinstance(outs, tuple) else 1
    out_names = [f"output_{k}" for k in range(n_out)]
    buf = io.BytesIO()
    # torch's default export folds BatchNormalization into the Conv itself; the
    # BN cases keep it, as a model exported without constant folding has it
    fold = "bn" not in name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(torch.from_numpy(a) for a in inputs), buf,
                          input_names=in_names, output_names=out_names,
                          dynamic_axes=dyn or None, opset_version=opset,
                          do_constant_folding=fold, dynamo=False)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    ref = sess.run(None, dict(zip(in_names, inputs)))
    torch_outs = outs if isinstance(outs, tuple) else (outs,)
    for r, t in zip(ref, torch_outs):
        # the export itself must be faithful: ORT agrees with torch
        np.testing.assert_allclose(r, t.numpy(), atol=1e-4, rtol=1e-4)
    write_case(os.path.join(DATA, name), proto, inputs, ref, rules)
    ops = sorted({n.op_type for n in proto.graph.node})
    print(f"{name}: {len(proto.graph.node)} nodes ({', '.join(ops)})")


def main():
    os.makedirs(DATA, exist_ok=True)
    for i, c in enumerate(case_list()):
        export(*c, seed=1000 + i)


if __name__ == "__main__":
    main()
