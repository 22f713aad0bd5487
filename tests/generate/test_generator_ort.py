#!/usr/bin/env python3
"""mopt_generator against ONNX Runtime, and on models it must refuse.

usage: test_generator_ort.py LIBMOPT.so MODEL.onnx

1. Greedy generation with the generator's KV cache (through ctypes, the C
   API as a host would call it): at every step, ORT fed the same tokens with
   its own past gives logits within 1e-3 and the same argmax.
2. Models that do not follow the past_key_values convention are refused at
   mopt_generator_create with the documented status and a message naming
   what is wrong (built here with onnx.helper).
3. Decoders of other shapes (examples/generate/train.py's export with random
   weights): 1 to 8 heads, odd head dims (5, 7, 33), the same ORT check
   with kv_cache=1, where the attention is one mopt.DecodeAttention per
   layer over the token-major caches, and as exported.
"""
import ctypes
import os
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

OK, NOT_FOUND, UNSUPPORTED, SHAPE, TYPE = 0, 9, 6, 7, 8
CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64, ctypes.c_size_t)


def load_lib(path):
    lib = ctypes.CDLL(path)
    vp = ctypes.c_void_p
    lib.mopt_model_load.argtypes = [ctypes.c_char_p, vp, ctypes.POINTER(vp)]
    lib.mopt_model_destroy.argtypes = [vp]
    lib.mopt_generator_create.argtypes = [vp, vp, ctypes.c_int64, ctypes.POINTER(vp)]
    lib.mopt_generator_destroy.argtypes = [vp]
    lib.mopt_generator_generate.argtypes = [vp, ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t,
                                            ctypes.c_size_t, CB, vp,
                                            ctypes.POINTER(ctypes.c_size_t)]
    lib.mopt_generator_logits.argtypes = [vp]
    lib.mopt_generator_logits.restype = ctypes.POINTER(ctypes.c_float)
    lib.mopt_last_error.restype = ctypes.c_char_p
    lib.mopt_options_create.argtypes = [ctypes.POINTER(vp)]
    lib.mopt_options_set_int.argtypes = [vp, ctypes.c_char_p, ctypes.c_int64]
    lib.mopt_options_destroy.argtypes = [vp]
    return lib


def load_model(lib, path, kv_cache=0):
    m = ctypes.c_void_p()
    o = ctypes.c_void_p()
    assert lib.mopt_options_create(ctypes.byref(o)) == OK
    assert lib.mopt_options_set_int(o, b"kv_cache", kv_cache) == OK
    st = lib.mopt_model_load(path.encode(), o, ctypes.byref(m))
    lib.mopt_options_destroy(o)
    assert st == OK, lib.mopt_last_error()
    return m


def check_against_ort(lib, path, steps=48, kv_cache=0):
    """ORT, fed its own past, agrees with the generator at every step: on the
    model as exported and with kv_cache=1 (token-major caches in place)."""
    model = load_model(lib, path, kv_cache)
    gen = ctypes.c_void_p()
    assert lib.mopt_generator_create(model, None, 256, ctypes.byref(gen)) == OK, \
        lib.mopt_last_error()
    prompt = list(b"And the earth was without form")
    got, logits = [], []

    def on_token(user, token, index):
        row = lib.mopt_generator_logits(gen)
        logits.append(np.ctypeslib.as_array(row, (256,)).copy())
        got.append(token)
        return 0

    cb = CB(on_token)
    arr = (ctypes.c_int64 * len(prompt))(*prompt)
    n = ctypes.c_size_t()
    st = lib.mopt_generator_generate(gen, arr, len(prompt), steps, cb, None, ctypes.byref(n))
    assert st == OK, lib.mopt_last_error()
    assert n.value == steps == len(got)
    lib.mopt_generator_destroy(gen)
    lib.mopt_model_destroy(model)

    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    ins = sess.get_inputs()
    past = {i.name: np.zeros((1, i.shape[1], 0, i.shape[3]), np.float32)
            for i in ins if i.name.startswith("past_key_values.")}
    feed_tokens = prompt
    pos = 0
    worst = 0.0
    for step in range(steps):
        ids = np.array([feed_tokens], np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones((1, pos + len(feed_tokens)), np.int64),
                 "position_ids": np.arange(pos, pos + len(feed_tokens))[None]}
        feeds.update(past)
        outs = sess.run(None, feeds)
        names = [o.name for o in sess.get_outputs()]
        ref = outs[names.index("logits")][0, -1]
        diff = float(np.abs(ref - logits[step]).max())
        worst = max(worst, diff)
        assert diff < 1e-3, f"step {step}: mopt and ORT logits differ by {diff}"
        assert int(ref.argmax()) == got[step], f"step {step}: ORT argmax {ref.argmax()}, mopt {got[step]}"
        for nm, o in zip(names, outs):
            if nm.startswith("present."):
                past[nm.replace("present.", "past_key_values.")] = o
        pos += len(feed_tokens)
        feed_tokens = [got[step]]
    print(f"ORT agrees on {steps} steps (kv_cache={kv_cache}): worst logit difference {worst:.2e}")


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def bad_model(kind):
    """A small decoder-like graph, broken in one way."""
    F, I = TensorProto.FLOAT, TensorProto.INT64
    H, D = 2, 4
    inputs = [vi("input_ids", I, ["b", "s"])]
    outputs = []
    nodes = []
    inits = [helper.make_tensor("emb", F, [16, 8], np.zeros(128, np.float32))]
    nodes.append(helper.make_node("Gather", ["emb", "input_ids"], ["logits"]))
    outputs.append(vi("logits", F, ["b", "s", 8]))
    layers = 0 if kind == "no_past" else 1
    for l in range(layers):
        for kv in ("key", "value"):
            if kind == "value_missing" and kv == "value":
                continue
            pshape = ["b", H, "p", D]
            oshape = ["b", H, "t", D]
            dt = F
            if kind == "symbolic_heads":
                pshape = ["b", "h", "p", D]
            if kind == "rank3":
                pshape = ["b", "p", D]
            if kind == "f16" and kv == "key":
                dt = TensorProto.FLOAT16
            pin = f"past_key_values.{l}.{kv}"
            inputs.append(vi(pin, dt, pshape))
            out = f"present.{l}.{kv}" if kind != "wrong_present" else f"cache_out.{l}.{kv}"
            if kind == "heads_mismatch":  # present [1, 1, t, 2D]: other heads / head_dim
                oshape = [1, 1, "t", 2 * D]
                inits.append(helper.make_tensor(f"shape_{kv}", I, [4], [1, 1, -1, 2 * D]))
                nodes.append(helper.make_node("Reshape", [pin, f"shape_{kv}"], [out]))
            else:
                nodes.append(helper.make_node("Identity", [pin], [out]))
            outputs.append(vi(out, dt, oshape))
    if kind == "extra_input":
        inputs.append(vi("token_type_ids", I, ["b", "s"]))
        nodes.append(helper.make_node("Identity", ["token_type_ids"], ["tt"]))
        outputs.append(vi("tt", I, ["b", "s"]))
    if kind == "float_ids":
        inputs[0] = vi("input_ids", F, ["b", "s"])
        nodes[0] = helper.make_node("Cast", ["input_ids"], ["ids_i"], to=I)
        nodes.insert(1, helper.make_node("Gather", ["emb", "ids_i"], ["logits"]))
    if kind == "no_ids":
        inputs[0] = vi("tokens", I, ["b", "s"])
        nodes[0] = helper.make_node("Gather", ["emb", "tokens"], ["logits"])
    if kind == "logits_rank2":  # one score per position: no vocabulary axis
        inits[0] = helper.make_tensor("emb", F, [16], np.zeros(16, np.float32))
        outputs[0] = vi("logits", F, ["b", "s"])
    g = helper.make_graph(nodes, kind, inputs, outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


BAD = [  # kind, status, words the message must contain
    ("no_past", UNSUPPORTED, "past_key_values"),
    ("value_missing", NOT_FOUND, "past_key_values"),
    ("wrong_present", NOT_FOUND, "present.0.key"),
    ("symbolic_heads", SHAPE, "fixed heads"),
    ("rank3", SHAPE, "rank 3"),
    ("f16", TYPE, "f16"),
    ("heads_mismatch", SHAPE, "present.0.key"),
    ("extra_input", UNSUPPORTED, "token_type_ids"),
    ("float_ids", TYPE, "input_ids"),
    ("no_ids", UNSUPPORTED, "tokens"),
    ("logits_rank2", SHAPE, "vocab"),
]


def check_bad_models(lib):
    with tempfile.TemporaryDirectory() as tmp:
        for kind, want, words in BAD:
            path = os.path.join(tmp, kind + ".onnx")
            onnx.save(bad_model(kind), path)
            model = load_model(lib, path)
            gen = ctypes.c_void_p()
            st = lib.mopt_generator_create(model, None, 32, ctypes.byref(gen))
            msg = lib.mopt_last_error().decode()
            lib.mopt_model_destroy(model)
            assert gen.value is None, kind
            assert st == want, f"{kind}: status {st}, expected {want}: {msg}"
            assert words in msg, f"{kind}: message '{msg}' does not mention '{words}'"
            print(f"{kind:15s} -> {st}: {msg}")


def kv_cache_note(lib, path):
    """The kv_cache row of the pass report of path loaded with kv_cache=1."""
    vp = ctypes.c_void_p
    lib.mopt_model_pass_count.argtypes = [vp]
    lib.mopt_model_pass_count.restype = ctypes.c_size_t
    for f in (lib.mopt_model_pass_name, lib.mopt_model_pass_note):
        f.argtypes = [vp, ctypes.c_size_t]
        f.restype = ctypes.c_char_p
    m = load_model(lib, path, 1)
    notes = [lib.mopt_model_pass_note(m, i).decode() for i in range(lib.mopt_model_pass_count(m))
             if lib.mopt_model_pass_name(m, i) == b"kv_cache"]
    lib.mopt_model_destroy(m)
    return notes[0] if notes else ""


def check_random_decoders(lib):
    """Other head counts and odd head dims through the fused attention."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(sys.argv[2]))))
    import train  # examples/generate/train.py: config, init_params, export
    rng = np.random.default_rng(5)
    with tempfile.TemporaryDirectory() as tmp:
        for d, heads in ((10, 1), (14, 2), (30, 6), (128, 8), (66, 2)):
            cfg = train.config(d=d, heads=heads, layers=2, ff=2, max_pos=128)
            p = train.init_params(cfg, rng)
            for k in p:  # sharper than the init: no near-ties between logits
                if not k.startswith(("l0.g", "l1.g", "gf")):
                    p[k] = p[k] * 8
            path = os.path.join(tmp, f"dec_{d}_{heads}.onnx")
            train.export(p, cfg, path, {"test": "random weights"})
            print(f"d={d} heads={heads} (head dim {d // heads}):")
            assert "2 DecodeAttention" in kv_cache_note(lib, path), kv_cache_note(lib, path)
            check_against_ort(lib, path, steps=40, kv_cache=1)
            check_against_ort(lib, path, steps=40, kv_cache=0)


def main():
    lib = load_lib(sys.argv[1])
    check_against_ort(lib, sys.argv[2])
    check_against_ort(lib, sys.argv[2], kv_cache=1)
    check_bad_models(lib)
    check_random_decoders(lib)
    return 0


if __name__ == "__main__":
    sys.exit(main())
