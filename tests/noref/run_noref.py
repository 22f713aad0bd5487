#!/usr/bin/env python3
"""run_noref.py — the `noref` suite (issue 10, "never run a slow path
silently"): every model of tests/models, the ONNX node-test cases of Conv,
ConvTranspose, MatMul and Gemm, and the real models of the realmodels cache
(when it exists: MOPT_REALMODELS_CACHE, else $XDG_CACHE_HOME or ~/.cache
/mopt-realmodels) run through `mopt run` with the oneDNN backend at opt_level
2 and 3, in fp32, bf16 and int8, at several values of their symbolic dims,
with MOPT_FAIL_ON_REF=1 in the environment: any oneDNN reference
implementation chosen for a primitive then fails the run with a message
naming it (kernels/onednn/onednn.h, onednn_ref_count), and this suite fails.

A combination that fails for another reason (a shape the model cannot take)
is counted as not applicable and printed; every model must run in at least
one combination, and the counts are printed.

usage: run_noref.py MOPT_CLI SOURCE_ROOT CONFORMANCE_DATA_DIR [--quick]
Exit: 0 pass, 1 a reference implementation was chosen (or nothing ran).
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

PRECISIONS = ("fp32", "bf16", "int8")
CONF_OPS = re.compile(r"^test_(conv|convtranspose|matmul|gemm)(_|$)")
REF_MARK = "MOPT_FAIL_ON_REF"


def cache_dir():
    env = os.environ.get("MOPT_REALMODELS_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "mopt-realmodels"


def symbols(cli, path):
    """The model's inputs as [(name, [dim or symbol])], or None."""
    r = subprocess.run([cli, "info", path, "--json"], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return None
    try:
        return [(i["name"], i["shape"]) for i in json.loads(r.stdout)["inputs"]]
    except (ValueError, KeyError, TypeError):
        return None


def shape_sets(inputs, image_sizes):
    """--dim arguments for a few values of every symbolic dim: a leading dim
    is a batch (1, 2, 1), a spatial dim of a rank-4 input takes image_sizes,
    any other a sequence-like length (8, 17, 32)."""
    seq = (8, 17, 32)
    batch = (1, 2, 1)
    sets = []
    for k in range(3):
        dims = {}
        for _, shape in inputs:
            if not isinstance(shape, list):
                continue
            for i, d in enumerate(shape):
                if isinstance(d, str) and d != "?" and d not in dims:
                    if i == 0:
                        dims[d] = batch[k]
                    elif len(shape) == 4 and i >= 2:
                        dims[d] = image_sizes[k]
                    else:
                        dims[d] = seq[k]
        sets.append(dims)
    unique = []
    for s in sets:
        if s not in unique:
            unique.append(s)
    return unique


def run(cli, path, prec, level, dims, out_dir):
    cmd = [cli, "run", path, "--backend", "onednn", "--precision", prec, "--opt-level",
           str(level), "--threads", "1", "--output-dir", out_dir]
    for sym, v in dims.items():
        cmd += ["--dim", "%s=%d" % (sym, v)]
    env = dict(os.environ, MOPT_FAIL_ON_REF="1")
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    if r.returncode == 0:
        return "ok", ""
    if r.returncode < 0:
        return "crash", "signal %d" % -r.returncode
    if REF_MARK in r.stderr:
        return "ref", r.stderr.strip()[-400:]
    return "n/a", r.stderr.strip()[-200:]


def main():
    cli, root, conf = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    quick = "--quick" in sys.argv
    models = []  # (label, path, image sizes)
    for p in sorted((root / "tests" / "models").glob("*/model.onnx")):
        models.append(("models/" + p.parent.name, p, (32, 48, 64)))
    if conf.is_dir():
        for d in sorted(conf.iterdir()):
            if CONF_OPS.match(d.name) and (d / "model.onnx").exists():
                models.append(("conformance/" + d.name, d / "model.onnx", (32, 48, 64)))
    cache = cache_dir() / "x"
    if cache.is_dir():
        for p in sorted(cache.rglob("*.onnx")):
            models.append(("realmodels/" + p.relative_to(cache).as_posix(), p, (320, 96, 640)))
    else:
        print("realmodels cache %s absent: real models not run" % cache)
    bad, counts, never = [], {"ok": 0, "n/a": 0, "ref": 0, "crash": 0, "timeout": 0}, []
    with tempfile.TemporaryDirectory() as out:
        for label, path, sizes in models:
            inputs = symbols(cli, str(path))
            if inputs is None:
                print("%-60s cannot load: not run" % label)
                continue
            sets = shape_sets(inputs, sizes)[: 1 if quick else 3]
            ran = 0
            for level in (2, 3):
                for prec in PRECISIONS:
                    for dims in sets:
                        res, msg = run(cli, str(path), prec, level, dims, out)
                        counts[res] += 1
                        ran += res == "ok"
                        if res in ("ref", "crash", "timeout"):
                            bad.append("%s opt_level %d %s %s: %s %s" % (label, level, prec, dims,
                                                                       res, msg))
            if ran == 0:
                never.append(label)
            print("%-60s %d shape sets, %d ok runs" % (label, len(sets), ran), flush=True)
    print("runs: " + ", ".join("%s %d" % kv for kv in counts.items()))
    for b in bad:
        print("FAIL", b)
    for n in never:
        print("note: %s ran in no combination (not applicable)" % n)
    return 1 if bad or counts["ok"] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
