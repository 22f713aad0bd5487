#!/usr/bin/env python3
"""Writes a decoder of a chosen size with random weights, for timing only.

examples/generate/kjv-tiny.onnx is small (d=96, 2 layers: ~1 MB of weights),
so its KV caches compete with its weights for the core's L2 cache, and the
decode step grows with the number of cached tokens for that reason as much
as for the attention's own work. This script exports the same graph
(examples/generate/train.py's exporter: byte vocabulary, pre-LayerNorm,
past_key_values inputs) at a realistic size with random weights, so that
`generate_bench --model PATH` can show how the step grows where the weights
do not fit in L2. The tokens it generates are meaningless; it is not a
quality check.

  .venv/bin/python bench/gen_decoder.py --d 512 --heads 8 --layers 6 \
      -o /tmp/dec512.onnx        # ~19 M parameters, 79 MB
  build/bench/generate_bench --model /tmp/dec512.onnx --repeats 5 --threads 1
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                                "generate"))
import train  # noqa: E402  (the exporter of examples/generate)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--d", type=int, default=512, help="model width")
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    if a.d <= 0 or a.heads <= 0 or a.layers <= 0 or a.d % a.heads:
        ap.error("--d, --heads and --layers must be positive, and --d a multiple of --heads")
    cfg = train.config(d=a.d, heads=a.heads, layers=a.layers)
    p = train.init_params(cfg, np.random.default_rng(a.seed))
    train.export(p, cfg, a.out, {"training": "none: random weights (bench/gen_decoder.py, timing only)"})
    train.check_export(p, cfg, a.out)
    n = sum(v.size for v in p.values())
    print(f"wrote {a.out}: d={a.d}, {a.heads} heads, {a.layers} layers, {n / 1e6:.1f} M parameters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
