"""make_references.py — reference inputs/outputs for the model-test corpus.

For each model exported by export_models.py (tests/models/<model>/model.onnx)
this writes seeded inputs and the ONNX Runtime outputs as
tests/models/<model>/test_data_set_<k>/input_<i>.npy and output_<j>.npy (in
the model's input/output order, the layout of the op tests) plus a
`tolerance` file ("atol rtol"). The reference run is ORT on the CPU with one
thread and all graph optimizations disabled. As a sanity check, ORT with all
optimizations must agree with it within 1e-5.

Needs onnx, onnxruntime and numpy (not torch).
Usage: python3 tests/models/make_references.py [--only NAME ...]
"""
import argparse
import glob
import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))

TOLERANCE = (1e-4, 0.0)     # atol, rtol: what libmopt must meet on these outputs
ORT_OPT_ATOL = 1e-5         # ORT optimized vs unoptimized
SEED = 7

BERT_VOCAB = 1000
GPT_VOCAB = 100


def session(path, optimize):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimize
                                   else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def bert_inputs(rng, batch, seq):
    ids = rng.integers(0, BERT_VOCAB, size=(batch, seq), dtype=np.int64)
    mask = np.ones((batch, seq), dtype=np.int64)
    # Padding at the end of some rows (never the whole row): row 0 keeps full
    # length when batch > 1; with batch 1 the single row is padded.
    for r in range(batch):
        if batch > 1 and r == 0:
            continue
        pad = min(seq - 1, 1 + (2 * r + seq // 3) % seq)
        if pad > 0:
            mask[r, seq - pad:] = 0
            # Padded positions usually hold the pad token id 0.
            ids[r, seq - pad:] = 0
    return [ids, mask]


def gpt_inputs(rng, batch, seq):
    return [rng.integers(0, GPT_VOCAB, size=(batch, seq), dtype=np.int64)]


def image_inputs(rng, batch, size=32):
    return [rng.standard_normal((batch, 3, size, size), dtype=np.float32)]


CASES = {
    # (1, 128): the full position table, the length the benchmarks run at.
    "bert": [("bert", (1, 8)), ("bert", (2, 16)), ("bert", (3, 5)), ("bert", (1, 128))],
    "gpt": [("gpt", (1, 8)), ("gpt", (2, 12)), ("gpt", (1, 1))],
    "cnn": [("image", (1,)), ("image", (2,)), ("image", (3,))],
    "mobilenet": [("image", (1,)), ("image", (2,)), ("image", (3,))],
}

MAKERS = {"bert": bert_inputs, "gpt": gpt_inputs, "image": image_inputs}


def describe(arr):
    return f"{arr.dtype}{list(arr.shape)}"


def make(name):
    folder = os.path.join(HERE, name)
    path = os.path.join(folder, "model.onnx")
    model = onnx.load(path)
    init_names = {t.name for t in model.graph.initializer}
    in_names = [i.name for i in model.graph.input if i.name not in init_names]
    out_names = [o.name for o in model.graph.output]
    ref = session(path, optimize=False)
    opt = session(path, optimize=True)
    assert [i.name for i in ref.get_inputs()] == in_names
    assert [o.name for o in ref.get_outputs()] == out_names

    for old in glob.glob(os.path.join(folder, "test_data_set_*")):
        shutil.rmtree(old)
    with open(os.path.join(folder, "tolerance"), "w") as f:
        f.write(f"{TOLERANCE[0]:g} {TOLERANCE[1]:g}\n")

    worst = 0.0
    for k, (kind, dims) in enumerate(CASES[name]):
        rng = np.random.default_rng(SEED * 1000 + 10 * k + sum(map(ord, name)))
        inputs = MAKERS[kind](rng, *dims)
        feeds = dict(zip(in_names, inputs))
        outs = ref.run(out_names, feeds)
        outs_opt = opt.run(out_names, feeds)
        ds = os.path.join(folder, f"test_data_set_{k}")
        os.makedirs(ds)
        for i, a in enumerate(inputs):
            np.save(os.path.join(ds, f"input_{i}.npy"), np.ascontiguousarray(a))
        parts = []
        for j, (oname, a, b) in enumerate(zip(out_names, outs, outs_opt)):
            if not np.all(np.isfinite(a)):
                raise SystemExit(f"{name} case {k}: output {oname} is not finite")
            diff = float(np.max(np.abs(a - b))) if a.size else 0.0
            mag = float(np.max(np.abs(a))) if a.size else 0.0
            worst = max(worst, diff)
            if diff > ORT_OPT_ATOL:
                raise SystemExit(f"{name} case {k}: ORT optimized vs unoptimized differ on "
                                 f"{oname}: max abs {diff:.3g} > {ORT_OPT_ATOL}")
            np.save(os.path.join(ds, f"output_{j}.npy"), np.ascontiguousarray(a))
            parts.append(f"{oname} {describe(a)} max|y| {mag:.3f} std {float(np.std(a)):.3f} "
                         f"(opt-vs-noopt {diff:.1e})")
        ins = ", ".join(f"{n} {describe(a)}" for n, a in zip(in_names, inputs))
        print(f"{name}/test_data_set_{k}: {ins}")
        for p in parts:
            print(f"    {p}")
    return worst


def sensitivity(name, sess, in_names, out_names):
    """Checks that the corpus can catch the bugs it is meant to catch: the
    padding mask, the causal mask and the BatchNorm statistics must all move
    the outputs far beyond the tolerance (and masked parts must not)."""
    atol = TOLERANCE[0]
    rng = np.random.default_rng(99)
    msgs = []
    if name == "bert":
        ids, mask = bert_inputs(rng, 2, 10)
        base = sess.run(out_names, {"input_ids": ids, "attention_mask": mask})[0]
        keep = mask[1] == 1
        ids2 = ids.copy()
        ids2[1, ~keep] = rng.integers(1, BERT_VOCAB, size=int((~keep).sum()))
        moved = sess.run(out_names, {"input_ids": ids2, "attention_mask": mask})[0]
        d_pad = float(np.max(np.abs(moved[1][keep] - base[1][keep])))
        full = sess.run(out_names, {"input_ids": ids2, "attention_mask": np.ones_like(mask)})[0]
        d_mask = float(np.max(np.abs(full[1][keep] - base[1][keep])))
        msgs.append(f"padded-token change moves kept rows by {d_pad:.1e} (must be ~0); "
                    f"dropping the mask moves them by {d_mask:.2f}")
        ok = d_pad < 1e-6 and d_mask > 100 * atol
    elif name == "gpt":
        ids = gpt_inputs(rng, 1, 9)[0]
        base = sess.run(out_names, {"input_ids": ids})[0]
        ids2 = ids.copy()
        ids2[0, -1] = (ids2[0, -1] + 1) % GPT_VOCAB
        moved = sess.run(out_names, {"input_ids": ids2})[0]
        d_past = float(np.max(np.abs(moved[0, :-1] - base[0, :-1])))
        d_last = float(np.max(np.abs(moved[0, -1] - base[0, -1])))
        msgs.append(f"changing the last token moves earlier logits by {d_past:.1e} "
                    f"(must be ~0), the last ones by {d_last:.2f}")
        ok = d_past < 1e-6 and d_last > 100 * atol
    elif name == "cnn":
        model = onnx.load(os.path.join(HERE, name, "model.onnx"))
        means = {n.input[3] for n in model.graph.node if n.op_type == "BatchNormalization"}
        varis = {n.input[4] for n in model.graph.node if n.op_type == "BatchNormalization"}
        for t in model.graph.initializer:
            if t.name in means or t.name in varis:
                a = onnx.numpy_helper.to_array(t)
                fill = np.zeros_like(a) if t.name in means else np.ones_like(a)
                t.CopyFrom(onnx.numpy_helper.from_array(fill, t.name))
        plain = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        x = image_inputs(rng, 1)[0]
        d = float(np.max(np.abs(plain.run(None, {in_names[0]: x})[0] -
                                sess.run(None, {in_names[0]: x})[0])))
        msgs.append(f"BatchNorm with mean 0 / var 1 instead of the running stats moves "
                    f"logits by {d:.2f}")
        ok = d > 100 * atol
    else:
        return
    print(f"{name}: sensitivity: " + "; ".join(msgs))
    if not ok:
        raise SystemExit(f"{name}: sensitivity check failed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    names = [n for n in CASES if not args.only or n in args.only]
    for name in names:
        worst = make(name)
        path = os.path.join(HERE, name, "model.onnx")
        sess = session(path, optimize=False)
        sensitivity(name, sess, [i.name for i in sess.get_inputs()],
                    [o.name for o in sess.get_outputs()])
        print(f"{name}: ORT all-optimizations vs none, worst max abs diff {worst:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
