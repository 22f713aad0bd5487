#!/usr/bin/env python3
"""test_embed.py — examples/embed against the references (issue 15):

- `embed tokenize`: the ids of every line of tests/minilm/golden/
  tokenizer_corpus.txt (1202 lines, unicode, controls, long words) equal the
  `tokenizers` package's (tests/minilm/reference/corpus_ids.txt);
- `embed index` (FP32): every embedding of the golden sentences within
  cosine 0.9999 of ONNX Runtime's FP32 sentence_embedding on the same model
  (the reference pipeline: tests/minilm/wordpiece.py + ORT);
- `embed query` with a line of the corpus finds that line first (score ~1),
  and every command prints its stage times.

Usage: test_embed.py EMBED SOURCE_ROOT. Exit 0 pass, 1 fail, 77 skipped
(the wheel is unavailable, or ONNX Runtime is missing).
"""
import struct
import subprocess
import sys
import tempfile
from pathlib import Path


def read_index(path):
    raw = Path(path).read_bytes()
    assert raw[:8] == b"MOPTEMB1", "bad magic"
    dim, count = struct.unpack_from("<II", raw, 8)
    off = 16
    strs = []
    for _ in range(3):
        (n,) = struct.unpack_from("<I", raw, off)
        strs.append(raw[off + 4:off + 4 + n].decode())
        off += 4 + n
    import numpy as np
    emb = np.frombuffer(raw, np.float32, count * dim, off).reshape(count, dim)
    off += 4 * count * dim
    texts = []
    for _ in range(count):
        (n,) = struct.unpack_from("<I", raw, off)
        texts.append(raw[off + 4:off + 4 + n].decode())
        off += 4 + n
    assert off == len(raw), "trailing bytes"
    return emb, texts, strs


def main():
    embed, root = sys.argv[1], Path(sys.argv[2])
    sys.path.insert(0, str(root / "tests" / "minilm"))
    sys.path.insert(0, str(root / "tests" / "realmodels"))
    import run_realmodels as rr
    np, ort = rr.import_or_skip("numpy", "onnxruntime")
    import minilm
    import test_minilm
    import wordpiece
    folder = minilm.fetch_or_skip()
    model, _ = minilm.onnx_path()
    vocab = folder / "vocab.txt"
    failures = []

    # 1. token ids vs `tokenizers`
    corpus = root / "tests" / "minilm" / "golden" / "tokenizer_corpus.txt"
    lines, ref = test_minilm.corpus()
    r = subprocess.run([embed, "tokenize", "--vocab", str(vocab)], stdin=open(corpus, "rb"),
                       capture_output=True, timeout=300)
    if r.returncode != 0:
        failures.append("embed tokenize exited %d: %s" % (r.returncode, r.stderr.decode()))
    got = [[int(t) for t in line.split()] for line in r.stdout.decode().split("\n")[:-1]]
    print(r.stderr.decode().strip())
    if len(got) != len(ref):
        failures.append("embed tokenize printed %d lines for %d" % (len(got), len(ref)))
    bad = [i for i, (g, w) in enumerate(zip(got, ref)) if g != w]
    print("C tokenizer: %d/%d corpus lines give the `tokenizers` ids" % (len(ref) - len(bad),
                                                                        len(ref)))
    for i in bad[:5]:
        failures.append("line %d %r: C %s, tokenizers %s" % (i + 1, lines[i][:80], got[i][:20],
                                                               ref[i][:20]))

    # 2. embeddings vs ORT FP32
    sents, _ = test_minilm.golden()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "corpus.txt"
        src.write_text("".join(s + "\n" for s in sents), encoding="utf-8")
        index = Path(tmp) / "index.bin"
        r = subprocess.run([embed, "index", str(src), "-o", str(index), "--model", str(model),
                            "--vocab", str(vocab), "--batch", "16"],
                           capture_output=True, text=True, timeout=600)
        print(r.stdout.strip())
        if r.returncode != 0:
            failures.append("embed index exited %d: %s" % (r.returncode, r.stderr))
        else:
            emb, texts, _ = read_index(index)
            if texts != sents:
                failures.append("the index's lines differ from the corpus")
            tok = wordpiece.WordPiece(vocab)
            ref_emb = test_minilm.embed(test_minilm.ort_runner(ort, model), tok, sents)
            c = test_minilm.cosines(emb, ref_emb)
            print("C pipeline FP32 vs ORT FP32: min cosine %.7f over %d sentences (worst %r)"
                  % (c.min(), len(c), sents[int(c.argmin())]))
            if c.min() < 0.9999:
                failures.append("embedding cosine %.7f < 0.9999" % c.min())
            if "stage times" not in r.stdout:
                failures.append("embed index printed no stage times")
            # 3. a query that is a corpus line finds it first
            probe = sents[42]
            r = subprocess.run([embed, "query", str(index), probe, "--top", "3"],
                               capture_output=True, text=True, timeout=300)
            print(r.stdout.strip())
            first = r.stdout.splitlines()[0] if r.stdout else ""
            if r.returncode != 0 or not first.endswith("  " + probe) or \
                    float(first.split()[0]) < 0.9999:
                failures.append("query %r: first hit %r (exit %d, %s)"
                                % (probe, first, r.returncode, r.stderr))
            if "stage times" not in r.stdout:
                failures.append("embed query printed no stage times")
    return rr.verdict(failures, "embed: %s" % ("FAILED" if failures else "passed"))


if __name__ == "__main__":
    sys.exit(main())
