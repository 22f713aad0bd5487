#!/usr/bin/env python3
"""test_minilm.py — all-MiniLM-L6-v2 (issue 13's proving ground), the real
model converted by minilm.py, on the golden set (golden/sentences.txt,
golden/pairs.txt) tokenized by wordpiece.py.

Checks:
- the tokenizer gives the ids of the `tokenizers` package (reference/ids.txt,
  made by make_reference.py) on the golden sentences;
- the conversion: ONNX Runtime on the ONNX graph vs the float64 numpy BERT
  written from the safetensors (bert_numpy.py), and vs the committed
  PyTorch/transformers embeddings (reference/*.npy) — cosine >= 0.99999;
- mopt FP32 (opt_level 3) vs ONNX Runtime FP32: cosine >= 0.99999 per sentence;
- mopt INT8 (precision=int8) vs mopt FP32: per-sentence cosine min >= 0.99,
  mean >= 0.998; Spearman of the pairs' cosine similarities >= 0.995.

--table also measures ORT's quantize_dynamic and quantize_static (the golden
sentences as calibration data; every op ORT quantizes, or only the MatMuls)
on the same set against ORT FP32 and prints the table.
Exit 0 pass, 1 fail, 77 skipped (wheel unavailable or ORT missing).
"""
import argparse
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "realmodels"))

BATCH = 16
TARGETS = {"fp32_cos": 0.99999, "int8_min": 0.99, "int8_mean": 0.998, "int8_spearman": 0.995}


def log(*a):
    print(*a, flush=True)


def read_lines(name):
    out = []
    for line in (HERE / "golden" / name).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            out.append(line)
    return out


def golden():
    sents = read_lines("sentences.txt")
    pairs = [tuple(line.split("\t")) for line in read_lines("pairs.txt")]
    return sents, pairs


def embed(run, tok, texts):
    """sentence embeddings [n, 384] of texts, in batches padded to their longest."""
    import numpy as np
    out = []
    for i in range(0, len(texts), BATCH):
        ids, mask, types = tok.batch(texts[i:i + BATCH])
        out.append(run({"input_ids": ids, "attention_mask": mask, "token_type_ids": types}))
    return np.concatenate(out)


def cosines(a, b):
    import numpy as np
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def rank(x):
    import numpy as np
    order = np.argsort(x, kind="stable")
    r = np.empty(len(x))
    r[order] = np.arange(len(x))
    # ties: average rank
    xs = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and xs[j + 1] == xs[i]:
            j += 1
        r[order[i:j + 1]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman(x, y):
    import numpy as np
    rx, ry = rank(np.asarray(x)), rank(np.asarray(y))
    return float(np.corrcoef(rx, ry)[0, 1])


class Runner:
    """Sentence embeddings from one engine over the golden set."""

    def __init__(self, run, tok, sents, pairs):
        self.emb = embed(run, tok, sents)
        firsts = embed(run, tok, [p[0] for p in pairs])
        seconds = embed(run, tok, [p[1] for p in pairs])
        self.pair_sims = cosines(firsts, seconds)


def quality(test, ref):
    """min/mean per-sentence cosine vs ref, Spearman of the pairs' similarities."""
    c = cosines(test.emb, ref.emb)
    return float(c.min()), float(c.mean()), spearman(ref.pair_sims, test.pair_sims), int(c.argmin())


def ort_runner(ort, path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    s = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    return lambda feeds: s.run(["sentence_embedding"], feeds)[0]


def mopt_runner(mopt, path, **options):
    model = mopt.Model(str(path), **options)
    sess = mopt.Session(model)
    return lambda feeds: sess.run(feeds)["sentence_embedding"]


def read_split(path):
    """Lines split on "\n" only (the corpus holds U+2028, U+0085, ...)."""
    return Path(path).read_bytes().decode("utf-8").split("\n")[:-1]


def corpus():
    """The tokenizer corpus and the `tokenizers` ids of each line."""
    lines = read_split(HERE / "golden" / "tokenizer_corpus.txt")
    ids = [[int(t) for t in line.split()] for line in read_split(HERE / "reference" /
                                                                 "corpus_ids.txt")]
    return lines, ids


def check_tokenizer(tok, sents, failures):
    lines = (HERE / "reference" / "ids.txt").read_text().splitlines()
    texts, refs = list(sents), [[int(t) for t in line.split()] for line in lines]
    c_lines, c_ids = corpus()
    for what, t, r in (("golden sentences", texts, refs), ("corpus lines", c_lines, c_ids)):
        if len(t) != len(r):
            failures.append("%s: %d lines but %d reference id lines" % (what, len(t), len(r)))
            continue
        bad = [i for i, (s, ids) in enumerate(zip(t, r)) if tok.encode(s) != ids]
        log("tokenizer: %d/%d %s give the `tokenizers` ids" % (len(t) - len(bad), len(t), what))
        if bad:
            failures.append("tokenizer differs from `tokenizers` on %d %s, first: %r"
                            % (len(bad), what, t[bad[0]]))


def check_conversion(np, ort, path, folder, tok, failures):
    """ORT on the ONNX graph vs the numpy BERT and the committed torch embeddings."""
    import bert_numpy
    import minilm
    refdir = HERE / "reference"
    texts = (refdir / "sentences.txt").read_text(encoding="utf-8").splitlines()
    torch_emb = np.load(refdir / "torch_embeddings.npy")
    run = ort_runner(ort, path)
    ids, mask, types = tok.batch(texts)
    got = run({"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
    w = minilm.read_safetensors(folder / "model.safetensors")
    _, ref = bert_numpy.encode(w, ids, mask, types)
    for name, r in (("numpy float64 BERT", ref), ("PyTorch (transformers BertModel)", torch_emb)):
        c = cosines(got, r)
        log("conversion: ORT FP32 on the ONNX vs %s on %d sentences: min cosine %.7f"
            % (name, len(texts), c.min()))
        if c.min() < TARGETS["fp32_cos"]:
            failures.append("conversion vs %s: min cosine %.7f" % (name, c.min()))
    c = cosines(ref, torch_emb)
    log("            numpy BERT vs PyTorch: min cosine %.7f" % c.min())


def ort_quantized(ort, path, kind, tok, sents, tmp):
    from onnxruntime.quantization import QuantType, quantize_dynamic, quantize_static
    out = Path(tmp) / ("ort_%s.onnx" % kind)
    if kind == "dynamic":
        quantize_dynamic(str(path), str(out), weight_type=QuantType.QInt8)
    else:
        from onnxruntime.quantization import CalibrationDataReader

        class Reader(CalibrationDataReader):
            def __init__(self):
                self.items = []
                for i in range(0, len(sents), BATCH):
                    ids, mask, types = tok.batch(sents[i:i + BATCH])
                    self.items.append({"input_ids": ids, "attention_mask": mask,
                                       "token_type_ids": types})
                self.it = iter(self.items)

            def get_next(self):
                return next(self.it, None)
        # "static": ORT's defaults for every op it quantizes; "static-matmul":
        # only the MatMuls (what mopt's int8 quantizes), per-channel weights
        ops = ["MatMul"] if kind == "static-matmul" else None
        quantize_static(str(path), str(out), Reader(), weight_type=QuantType.QInt8,
                        activation_type=QuantType.QUInt8, per_channel=True,
                        op_types_to_quantize=ops)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-root", default=str(HERE.parent.parent))
    ap.add_argument("--table", action="store_true",
                    help="also measure ORT quantize_dynamic / quantize_static")
    args = ap.parse_args()
    from run_realmodels import import_mopt, import_or_skip, verdict
    np, ort = import_or_skip("numpy", "onnxruntime")
    import minilm
    import wordpiece
    folder = minilm.fetch_or_skip()
    path, _ = minilm.onnx_path()
    mopt = import_mopt(args.source_root)
    tok = wordpiece.WordPiece(folder / "vocab.txt")
    sents, pairs = golden()
    log("golden set: %d sentences, %d pairs" % (len(sents), len(pairs)))
    failures = []
    check_tokenizer(tok, sents, failures)
    check_conversion(np, ort, path, folder, tok, failures)

    ref = Runner(ort_runner(ort, path), tok, sents, pairs)
    fp32 = Runner(mopt_runner(mopt, path, threads=1, opt_level=3), tok, sents, pairs)
    c = cosines(fp32.emb, ref.emb)
    log("mopt FP32 vs ORT FP32: min cosine %.7f (sentence %r)" % (c.min(), sents[int(c.argmin())]))
    if c.min() < TARGETS["fp32_cos"]:
        failures.append("mopt FP32 vs ORT: min cosine %.7f < %g" % (c.min(), TARGETS["fp32_cos"]))

    rows = [("mopt int8", Runner(mopt_runner(mopt, path, threads=1, opt_level=3,
                                             precision="int8"), tok, sents, pairs), fp32)]
    if args.table:
        with tempfile.TemporaryDirectory() as tmp:
            for kind in ("dynamic", "static", "static-matmul"):
                q = ort_quantized(ort, path, kind, tok, sents, tmp)
                rows.append(("ORT quantize_%s" % kind,
                             Runner(ort_runner(ort, q), tok, sents, pairs), ref))
    log("%-28s %10s %10s %10s  worst sentence" % ("method", "min cos", "mean cos", "Spearman"))
    for name, r, base in rows:
        mn, mean, sp, worst = quality(r, base)
        log("%-28s %10.5f %10.5f %10.5f  %r" % (name, mn, mean, sp, sents[worst]))
    mn, mean, sp, _ = quality(rows[0][1], fp32)
    for what, got, want in (("min cosine", mn, TARGETS["int8_min"]),
                            ("mean cosine", mean, TARGETS["int8_mean"]),
                            ("Spearman", sp, TARGETS["int8_spearman"])):
        if got < want:
            failures.append("mopt int8 vs FP32: %s %.5f < %g" % (what, got, want))
    return verdict(failures, "minilm: %s" % ("FAILED" if failures else "passed"))


if __name__ == "__main__":
    sys.exit(main())
