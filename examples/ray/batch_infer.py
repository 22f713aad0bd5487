#!/usr/bin/env python3
"""batch_infer.py — batch inference over a Ray Data dataset with libmopt.

Each Ray worker (an actor of map_batches' pool) loads the model once, as a
.mopt file whose weights libmopt memory-maps (so the workers of one machine
share the file's pages through the page cache), and runs every batch of rows
through a mopt.Batcher: the rows of a Ray batch are single samples of
different lengths that the batcher pads to a seq bucket, runs together and
crops back. The output column "embedding" is the model's pooler_output.

The dataset is synthetic token sequences made from each row's id (seeded, so
any process can recompute a row): "input_ids" padded to --max-len with its
"length". Run on a local cluster (started by the script):

    python3 examples/ray/batch_infer.py --model examples/models/bert_tiny.onnx \\
        --rows 512 --workers 2 --out /tmp/embeddings.npz

or on a running cluster (examples/ray/README.md): --address auto.
"""
import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SEQ_BUCKETS = (8, 16, 32, 64)


def tokens(row_id, max_len):
    """The synthetic sample of row row_id: (ids[max_len] zero-padded, length)."""
    rng = np.random.default_rng(1000003 + int(row_id))
    length = int(rng.integers(3, max_len + 1))
    ids = np.zeros(max_len, np.int64)
    ids[:length] = rng.integers(1, 1000, size=length)
    return ids, length


def make_rows(batch, max_len):
    """map_batches step: {"id"} -> {"id", "input_ids", "length"}."""
    ids = np.asarray(batch["id"], np.int64)
    rows = [tokens(i, max_len) for i in ids]
    return {"id": ids, "input_ids": np.stack([r[0] for r in rows]),
            "length": np.array([r[1] for r in rows], np.int64)}


def mapped_bytes(path):
    """(Rss, Shared) in bytes of this process's mappings of `path` (from /proc/self/smaps)."""
    rss = shared = 0
    inside = False
    target = os.path.realpath(path)
    with open("/proc/self/smaps") as f:
        for line in f:
            parts = line.split()
            if parts and "-" in parts[0] and len(parts) >= 5:  # a mapping's header line
                inside = len(parts) >= 6 and parts[-1] == target
            elif inside and parts[0] == "Rss:":
                rss += int(parts[1]) * 1024
            elif inside and parts[0] in ("Shared_Clean:", "Shared_Dirty:"):
                shared += int(parts[1]) * 1024
    return rss, shared


class MoptEmbedder:
    """One per Ray worker: the model (a mapped .mopt) and a batcher over it."""

    def __init__(self, model_path, threads=1, max_batch=64, binding_path=None):
        if binding_path and binding_path not in sys.path:
            sys.path.insert(0, binding_path)
        import mopt  # imported in the worker process
        self.model = mopt.Model(model_path, threads=threads)
        self.batcher = mopt.Batcher(self.model, max_batch=max_batch, max_delay_us=2000,
                                    queue_capacity=4 * max_batch, seq_buckets=SEQ_BUCKETS)
        self.pool = ThreadPoolExecutor(max_workers=max_batch)
        self.model_path = model_path
        self.pid = os.getpid()

    def _one(self, ids):
        out = self.batcher.run({"input_ids": ids[None, :],
                                "attention_mask": np.ones((1, ids.shape[0]), np.int64)},
                               output_names="pooler_output")
        return out["pooler_output"][0]

    def __call__(self, batch):
        samples = [ids[:n] for ids, n in zip(batch["input_ids"], batch["length"])]
        emb = np.stack(list(self.pool.map(self._one, samples)))
        rss, shared = mapped_bytes(self.model_path)
        n = len(samples)
        st = self.batcher.stats()
        return {"id": batch["id"], "embedding": emb.astype(np.float32),
                "worker_pid": np.full(n, self.pid, np.int64),
                "mopt_mapped_rss": np.full(n, rss, np.int64),
                "mopt_mapped_shared": np.full(n, shared, np.int64),
                "worker_batches": np.full(n, st["batches"], np.int64),
                "worker_requests": np.full(n, st["completed"], np.int64)}


def ensure_mopt(model, out_dir):
    """The .mopt file to serve: model itself when it is one, else optimized once and
    saved to out_dir (mopt.Model.save, as `mopt optimize` does)."""
    import mopt
    with open(model, "rb") as f:
        if f.read(6) == b"%MOPT-":
            return os.path.realpath(model)
    path = Path(out_dir) / (Path(model).stem + ".mopt")
    path.parent.mkdir(parents=True, exist_ok=True)
    with mopt.Model(model) as m:
        m.save(path)
    return str(path.resolve())


def run(model, rows, workers, batch_size=32, max_len=64, address=None, mopt_dir=None,
        threads=1):
    """Runs the pipeline; returns (ids, embeddings, per-row info dict, seconds)."""
    import ray
    binding = str(REPO / "bindings" / "python")
    sys.path.insert(0, binding)
    mopt_path = ensure_mopt(model, mopt_dir or (REPO / "build" / "ray"))
    # the workers import this file (by module name) and the binding
    env = {k: os.environ[k] for k in ("MOPT_LIBRARY",) if k in os.environ}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE), binding] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    runtime_env = {"env_vars": env}
    if address:
        ray.init(address=address, runtime_env=runtime_env)
    else:
        ray.init(num_cpus=workers, include_dashboard=False, runtime_env=runtime_env,
                 _node_ip_address="127.0.0.1", object_store_memory=128 * 1024 * 1024,
                 log_to_driver=False)
    try:
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        t0 = time.monotonic()
        # the rows are made here, in the driver: then no read task competes with
        # the workers for the cluster's CPUs (a real job reads files instead,
        # e.g. ray.data.read_parquet, and gives them CPUs of their own)
        cols = make_rows({"id": np.arange(rows)}, max_len)
        items = [{"id": int(cols["id"][i]), "input_ids": cols["input_ids"][i],
                  "length": int(cols["length"][i])} for i in range(rows)]
        ds = ray.data.from_items(items, override_num_blocks=max(2 * workers, 2))
        ds = ds.map_batches(MoptEmbedder, batch_size=batch_size, batch_format="numpy",
                            fn_constructor_kwargs={"model_path": mopt_path, "threads": threads,
                                                   "max_batch": batch_size,
                                                   "binding_path": binding},
                            compute=ray.data.ActorPoolStrategy(size=workers), num_cpus=1)
        parts = list(ds.iter_batches(batch_size=None, batch_format="numpy"))
        seconds = time.monotonic() - t0
    finally:
        ray.shutdown()
    cols = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    order = np.argsort(cols["id"])
    cols = {k: v[order] for k, v in cols.items()}
    return cols, seconds, mopt_path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=str(REPO / "examples/models/bert_tiny.onnx"),
                    help=".onnx (optimized once and saved as .mopt) or .mopt")
    ap.add_argument("--rows", type=int, default=512)
    ap.add_argument("--workers", type=int, default=2, help="Ray workers (one model each)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--max-len", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1, help="libmopt threads per worker")
    ap.add_argument("--address", default=None,
                    help="a running Ray cluster ('auto' or host:port); default: a local one")
    ap.add_argument("--mopt-dir", default=None,
                    help="where the .mopt is written (a path every node sees, on a cluster)")
    ap.add_argument("--out", default=None, help="write ids and embeddings to this .npz")
    a = ap.parse_args()
    cols, seconds, mopt_path = run(a.model, a.rows, a.workers, a.batch_size, a.max_len,
                                   a.address, a.mopt_dir, a.threads)
    pids = np.unique(cols["worker_pid"])
    print("%d rows in %.2f s (%.0f rows/s) on %d workers (pids %s), model %s"
          % (len(cols["id"]), seconds, len(cols["id"]) / seconds, len(pids),
             ", ".join(map(str, pids)), mopt_path))
    for pid in pids:
        sel = cols["worker_pid"] == pid
        print("  worker %d: %d rows, %d mopt batches for %d requests, .mopt mapping rss %d KiB"
              " (shared %d KiB)" % (pid, sel.sum(), cols["worker_batches"][sel].max(),
                                   cols["worker_requests"][sel].max(),
                                   cols["mopt_mapped_rss"][sel].max() // 1024,
                                   cols["mopt_mapped_shared"][sel].max() // 1024))
    if a.out:
        np.savez(a.out, id=cols["id"], embedding=cols["embedding"])
        print("wrote", a.out)


if __name__ == "__main__":
    main()
