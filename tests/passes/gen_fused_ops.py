"""gen_fused_ops.py — numpy-checked cases for the fused operators
(mopt.FusedMatMul, mopt.FusedConv; docs/fused_ops.md), written to
tests/passes/ops_data/<case>/ in the case_runner layout. The models use the
"mopt" domain directly, so the cases exercise the operators' inference and
reference runs at opt_level 0: transA/transB, alpha, bias and residual
broadcasting, every activation, symbolic batch dims, grouped/strided convs.

Also writes tests/passes/bad/<status>_<what>.onnx: malformed fused nodes
that test_fusions expects to be refused with that status.

Run from the repo root: python3 tests/passes/gen_fused_ops.py
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ops"))
import opcase  # noqa: E402
from opcase import Case, normal, opt, rng  # noqa: E402

opcase.DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops_data")
MOPT = {"mopt": 1}

_erf = np.vectorize(math.erf, otypes=[np.float64])

ACTS = {
    "": lambda y, a, b: y,
    "Relu": lambda y, a, b: np.maximum(y, 0),
    "LeakyRelu": lambda y, a, b: np.where(y < 0, a * y, y),
    "Clip": lambda y, a, b: np.minimum(np.maximum(y, a), b),
    "HardSwish": lambda y, a, b: y * np.clip(y / 6 + 0.5, 0, 1),
    "HardSigmoid": lambda y, a, b: np.clip(a * y + b, 0, 1),
    "Sigmoid": lambda y, a, b: 1 / (1 + np.exp(-y)),
    "Tanh": lambda y, a, b: np.tanh(y),
    "Gelu": lambda y, a, b: 0.5 * y * (1 + _erf(y / math.sqrt(2))),
    "GeluTanh": lambda y, a, b: 0.5 * y * (1 + np.tanh(math.sqrt(2 / math.pi) *
                                                       (y + 0.044715 * y ** 3))),
    "Swish": lambda y, a, b: y / (1 + np.exp(-y)),
}
DEFAULTS = {"LeakyRelu": (0.01, 0), "Clip": (-np.inf, np.inf), "HardSigmoid": (0.2, 0.5)}


def f32(*shape, seed=0):
    return normal(rng(seed), shape)


def act_attrs(act, alpha, beta):
    """The fused activation's attributes; Case.node leaves out those given as None."""
    return {"activation": act or None, "activation_alpha": opt(float, alpha),
            "activation_beta": opt(float, beta)}


def node_inputs(*pairs):
    """(name, array or None) pairs in input order -> (feeds, input names):
    an absent input before a present one is named "", trailing absent ones
    are left out."""
    feeds = {n: v for n, v in pairs if v is not None}
    names = [n if v is not None else "" for n, v in pairs]
    while names and not names[-1]:
        names.pop()
    return feeds, names


def apply_act(y, act, alpha, beta):
    da, db = DEFAULTS.get(act, (0, 0))
    return ACTS[act](y, da if alpha is None else alpha, db if beta is None else beta)


def fused_matmul(name, a, b, bias=None, res=None, trans_a=0, trans_b=0, alpha=None, act="",
                 act_alpha=None, act_beta=None, shapes=None):
    c = Case(name, opset=17, domain_opsets=MOPT)
    ins, names = node_inputs(("a", a), ("b", b), ("bias", bias), ("res", res))
    attrs = act_attrs(act, act_alpha, act_beta)
    if trans_a:
        attrs["transA"] = 1
    if trans_b:
        attrs["transB"] = 1
    if alpha is not None:
        attrs["alpha"] = float(alpha)
    c.node("FusedMatMul", names, ["y"], domain="mopt", **attrs)
    A = np.swapaxes(a, -1, -2) if trans_a else a
    B = np.swapaxes(b, -1, -2) if trans_b else b
    y = np.matmul(A.astype(np.float64), B.astype(np.float64)) * (1.0 if alpha is None else alpha)
    if bias is not None:
        y = y + bias
    if res is not None:
        y = y + res
    y = apply_act(y, act, act_alpha, act_beta)
    c.save(ins, {"y": y.astype(np.float32)}, input_shapes=shapes)


def conv_ref(x, w, b, stride, pad, group):
    n, cin, h, wd = x.shape
    cout, cpg, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, cout, oh, ow))
    opg = cout // group
    for co in range(cout):
        g = co // opg
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cpg:(g + 1) * cpg, i * stride:i * stride + kh,
                           j * stride:j * stride + kw]
                y[:, co, i, j] = (patch * w[co]).sum(axis=(1, 2, 3))
    if b is not None:
        y += b[None, :, None, None]
    return y


def fused_conv(name, x, w, b=None, res=None, stride=1, pad=0, group=1, act="", act_alpha=None,
               act_beta=None, shapes=None, post_scale=None, post_shift=None):
    c = Case(name, opset=17, domain_opsets=MOPT)
    ins, names = node_inputs(("x", x), ("w", w), ("b", b), ("res", res))
    attrs = act_attrs(act, act_alpha, act_beta)
    attrs.update(post_scale=opt(float, post_scale), post_shift=opt(float, post_shift))
    c.node("FusedConv", names, ["y"], domain="mopt", strides=[stride, stride],
           pads=[pad] * 4, group=group, **attrs)
    y = conv_ref(x, w, b, stride, pad, group)
    if res is not None:
        y = y + res
    y = apply_act(y, act, act_alpha, act_beta)
    if post_scale is not None:
        y = y * post_scale
    if post_shift is not None:
        y = y + post_shift
    c.save(ins, {"y": y.astype(np.float32)}, input_shapes=shapes)


def main():
    fused_matmul("fmm_plain", f32(3, 5, seed=1), f32(5, 4, seed=2))
    fused_matmul("fmm_bias_batched", f32(2, 3, 5, 4, seed=3), f32(4, 6, seed=4),
                 bias=f32(6, seed=5))
    fused_matmul("fmm_trans_alpha_res_relu", f32(2, 4, 5, seed=6), f32(2, 6, 4, seed=7),
                 bias=f32(1, 6, seed=8), res=f32(2, 5, 6, seed=9), trans_a=1, trans_b=1,
                 alpha=0.5, act="Relu")
    fused_matmul("fmm_res_broadcast_leaky", f32(3, 5, 7, seed=10), f32(7, 6, seed=11),
                 res=f32(5, 1, seed=12), act="LeakyRelu", act_alpha=0.2)
    fused_matmul("fmm_batch_broadcast_transb", f32(2, 1, 3, 8, seed=13), f32(4, 5, 8, seed=14),
                 bias=f32(5, seed=15), trans_b=1)
    fused_matmul("fmm_symbolic_batch", f32(3, 4, 8, seed=16), f32(8, 8, seed=17),
                 bias=f32(8, seed=18), res=f32(3, 4, 8, seed=19), act="Gelu",
                 shapes={"a": ["batch", "seq", 8], "res": ["batch", "seq", 8]})
    for i, (act, al, be) in enumerate([("Clip", -0.5, 0.7), ("Clip", None, None),
                                       ("HardSwish", None, None), ("HardSigmoid", 0.3, 0.4),
                                       ("HardSigmoid", None, None), ("LeakyRelu", None, None),
                                       ("Sigmoid", None, None), ("Tanh", None, None),
                                       ("Gelu", None, None), ("GeluTanh", None, None),
                                       ("Swish", None, None)]):
        suffix = act.lower() + ("_params" if al is not None else "")
        fused_matmul(f"fmm_act_{suffix}", f32(4, 6, seed=30 + i) * 2, f32(6, 5, seed=50 + i),
                     bias=f32(5, seed=70 + i), act=act, act_alpha=al, act_beta=be)
    fused_conv("fconv_bias_res_relu", f32(2, 3, 7, 7, seed=90), f32(4, 3, 3, 3, seed=91),
               b=f32(4, seed=92), res=f32(2, 4, 7, 7, seed=93), pad=1, act="Relu",
               shapes={"x": ["batch", 3, 7, 7], "res": ["batch", 4, 7, 7]})
    fused_conv("fconv_grouped_strided_hardswish", f32(1, 4, 9, 9, seed=94),
               f32(6, 2, 3, 3, seed=95), b=f32(6, seed=96), stride=2, pad=1, group=2,
               act="HardSwish")
    fused_conv("fconv_nobias_res", f32(2, 3, 5, 5, seed=97), f32(4, 3, 1, 1, seed=98),
               res=f32(2, 4, 5, 5, seed=99))
    fused_conv("fconv_clip", f32(1, 3, 6, 6, seed=100), f32(3, 1, 3, 3, seed=101),
               b=f32(3, seed=102), pad=1, group=3, act="Clip", act_alpha=0.0, act_beta=6.0)
    fused_conv("fconv_swish", f32(2, 5, 6, 7, seed=103) * 3, f32(4, 5, 3, 2, seed=104),
               b=f32(4, seed=105), pad=1, act="Swish")
    # the post affine (post_scale, post_shift) after the activation, with a
    # residual and Relu, after HardSwish on a 16 -> 16 3x3, only a shift,
    # only a scale (W is an input here: the reference runs these; the
    # oneDNN paths are tests/passes/data/conv_post_affine's)
    fused_conv("fconv_res_relu_post", f32(2, 3, 6, 6, seed=106), f32(4, 3, 3, 3, seed=107),
               b=f32(4, seed=108), res=f32(2, 4, 6, 6, seed=109), pad=1, act="Relu",
               post_scale=1.5, post_shift=-0.25)
    fused_conv("fconv_wino_hardswish_post", f32(1, 16, 8, 8, seed=110),
               f32(16, 16, 3, 3, seed=111) * 0.3, b=f32(16, seed=112), pad=1, act="HardSwish",
               post_scale=0.75, post_shift=0.5)
    fused_conv("fconv_hardswish_post_shift", f32(1, 4, 5, 5, seed=113), f32(8, 4, 1, 1, seed=114),
               act="HardSwish", post_shift=0.125)
    fused_conv("fconv_relu_post_scale", f32(1, 4, 5, 5, seed=115), f32(8, 4, 1, 1, seed=116),
               act="Relu", post_scale=-2.0)


def bad_models():
    """Malformed fused nodes: tests/passes/bad/<status>_<what>.onnx must be
    refused at load with that status and a message naming the node."""
    import onnx
    from onnx import helper, TensorProto
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bad")
    os.makedirs(out, exist_ok=True)

    def save(fname, op, node_inputs, shapes, **attrs):
        """node_inputs: names ("" = omitted); shapes: one per distinct non-empty name."""
        node = helper.make_node(op, node_inputs, ["y"], domain="mopt", name="bad_node", **attrs)
        names = list(dict.fromkeys(n for n in node_inputs if n))  # once each
        g_in = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                for n, s in zip(names, shapes)]
        g_out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
        graph = helper.make_graph([node], fname, g_in, g_out)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                        helper.make_opsetid("mopt", 1)])
        model.ir_version = 8
        onnx.save(model, os.path.join(out, fname + ".onnx"))

    for f in os.listdir(out):
        os.remove(os.path.join(out, f))
    save("invalid_unknown_activation", "FusedMatMul", ["a", "b"], [[2, 3], [3, 4]],
         activation="Mish")
    save("shape_inner_dims", "FusedMatMul", ["a", "b"], [[2, 3], [5, 4]])
    save("shape_inner_dims_transposed", "FusedMatMul", ["a", "b"], [[2, 3], [3, 4]], transB=1)
    save("shape_bias_grows_output", "FusedMatMul", ["a", "b", "bias"],
         [[2, 3], [3, 4], [3, 4]])
    save("shape_residual_grows_output", "FusedMatMul", ["a", "b", "", "r"],
         [[2, 3], [3, 4], [5, 2, 4]])
    save("shape_rank1_operand", "FusedMatMul", ["a", "b"], [[3], [3, 4]])
    save("shape_conv_bias", "FusedConv", ["x", "w", "b"],
         [[1, 3, 5, 5], [4, 3, 3, 3], [1, 4, 5, 5]])
    save("shape_conv_residual", "FusedConv", ["x", "w", "", "r"],
         [[1, 3, 5, 5], [4, 3, 3, 3], [1, 4, 5, 5]], pads=[0, 0, 0, 0])
    save("invalid_conv_activation", "FusedConv", ["x", "w"], [[1, 3, 5, 5], [4, 3, 3, 3]],
         activation="Softplus")
    # mopt.Attention with packed_qkv (the fuse_qkv pass's form)
    save("invalid_attention_packed_bhsd", "Attention", ["qkv", "qkv", "qkv"], [[1, 2, 4, 6]],
         packed_qkv=1)
    save("invalid_attention_packed_distinct", "Attention", ["q", "k", "v"],
         [[1, 4, 6], [1, 4, 6], [1, 4, 6]], layout="bsh", num_heads=1, packed_qkv=1)
    save("invalid_attention_packed_value", "Attention", ["qkv", "qkv", "qkv"], [[1, 4, 6]],
         layout="bsh", num_heads=1, packed_qkv=2)
    save("shape_attention_packed_width", "Attention", ["qkv", "qkv", "qkv"], [[1, 4, 8]],
         layout="bsh", num_heads=2, packed_qkv=1)

if __name__ == "__main__":
    main()
    bad_models()
