#!/usr/bin/env python3
"""Checks the hand-written backward pass of examples/generate/train.py against
central finite differences on a small float64 model (every parameter tensor,
a few entries each). Fails when any relative error exceeds 1e-5."""
import importlib.util
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "train", os.path.join(here, "..", "..", "examples", "generate", "train.py"))
train = importlib.util.module_from_spec(spec)
spec.loader.exec_module(train)


def main():
    rng = np.random.default_rng(7)
    cfg = train.config(d=16, heads=2, layers=2, ff=2, max_pos=32)
    p = train.init_params(cfg, rng, dtype=np.float64)
    # larger weights than the init so that every path carries gradient
    for k in p:
        p[k] = p[k] + rng.normal(0, 0.3, p[k].shape)
    x = rng.integers(0, train.VOCAB, (2, 7))
    y = rng.integers(0, train.VOCAB, (2, 7))
    _, loss, st = train.forward(p, cfg, x, y)
    g = train.backward(p, cfg, st)
    assert set(g) == set(p), f"gradients missing for {set(p) - set(g)}"
    worst = 0.0
    checked = 0
    h = 1e-6
    for k in sorted(p):
        flat = p[k].reshape(-1)
        picks = rng.choice(flat.size, min(6, flat.size), replace=False)
        if k == "emb":  # rows of tokens that occur, else the gradient is 0
            picks = np.array([x[0, 0] * cfg["d"] + 3, x[1, 4] * cfg["d"] + 5])
        for i in picks:
            old = flat[i]
            flat[i] = old + h
            lp = train.forward(p, cfg, x, y)[1]
            flat[i] = old - h
            lm = train.forward(p, cfg, x, y)[1]
            flat[i] = old
            num = (lp - lm) / (2 * h)
            ana = g[k].reshape(-1)[i]
            rel = abs(num - ana) / max(1e-8, abs(num) + abs(ana))
            if abs(num) + abs(ana) < 1e-7:  # e.g. key biases: exactly 0 (softmax shift)
                continue
            checked += 1
            worst = max(worst, rel)
            if rel > 1e-5:
                print(f"FAIL {k}[{i}]: analytic {ana:.8e} numeric {num:.8e} rel {rel:.2e}")
                return 1
    if checked < 50:
        print(f"FAIL: only {checked} entries had a gradient large enough to check")
        return 1
    print(f"backward pass matches finite differences on {checked} entries: "
          f"worst relative error {worst:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
