#!/usr/bin/env python3
"""ort_reference.py — helper for scripts/main-job.sh.

  ort_reference.py MODEL DIR      writes seeded inputs to DIR/in/<name>.npy and
                                  ONNX Runtime's outputs to DIR/ort/<name>.npy
  ort_reference.py --compare A B  compares the .npy files of two folders and
                                  prints max abs error and cosine similarity
Symbolic dims get fixed sizes: batch=2, every other symbol 16.
"""
import os
import sys

import numpy as np


def make_inputs(model_path, out_dir):
    import onnxruntime as ort
    sess = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = {}
    for i in sess.get_inputs():
        shape = [d if isinstance(d, int) else (2 if "batch" in str(d) else 16) for d in i.shape]
        if "int64" in i.type:
            if "mask" in i.name:
                a = np.ones(shape, dtype=np.int64)
                a[..., shape[-1] * 3 // 4:] = 0
            else:
                a = rng.integers(0, 50, size=shape, dtype=np.int64)
        else:
            a = rng.uniform(-1, 1, size=shape).astype(np.float32)
        feeds[i.name] = a
    os.makedirs(os.path.join(out_dir, "in"), exist_ok=True)
    os.makedirs(os.path.join(out_dir, "ort"), exist_ok=True)
    for k, v in feeds.items():
        np.save(os.path.join(out_dir, "in", k + ".npy"), v)
    outs = sess.run(None, feeds)
    for o, v in zip(sess.get_outputs(), outs):
        np.save(os.path.join(out_dir, "ort", o.name.replace("/", "_") + ".npy"), v)
        print(f"  {o.name}: {v.dtype} {list(v.shape)}")


def compare(a_dir, b_dir):
    worst = 0.0
    for f in sorted(os.listdir(a_dir)):
        a = np.load(os.path.join(a_dir, f)).astype(np.float64).ravel()
        b = np.load(os.path.join(b_dir, f)).astype(np.float64).ravel()
        err = float(np.max(np.abs(a - b))) if a.size else 0.0
        cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))
        worst = max(worst, err)
        print(f"  {f[:-4]}: max abs error {err:.3g}, cosine similarity {cos:.9f}")
    if worst > 1e-3:
        print("outputs differ beyond 1e-3", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        make_inputs(sys.argv[1], sys.argv[2])
