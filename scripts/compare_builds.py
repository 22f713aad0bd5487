#!/usr/bin/env python3
"""compare_builds.py — are two builds of libmopt bit-identical on the test corpus?

Runs the model suite (tests/models: every model x the configurations that
tests/meson.build runs it in) and the ONNX backend node tests (the
conformance data) with one build, saves every output (dtype, shape, raw
bytes), and compares them with another build's: any output whose dtype,
shape or bytes differ, any case that fails in one build only (or with another
status), and any case present on one side only is reported; the exit status
is 1 when anything differs, 0 when everything is bit-identical, 2 on a usage
error.

Only libmopt's public C ABI is used, through ctypes on the build's
libmopt.so (stdlib + numpy only), so the script does not depend on where the
CLI or the test programs live in the build tree. As the test programs do,
each data set is run twice in the same session (the first run of a shape
signature plans memory, the second runs from the plan into the same output
tensors, scribbled in between); both runs are saved and compared. Cases run
in worker processes (--jobs), so a crash or a hang (--timeout) is reported
for that case and the run goes on.

Modes:
  compare_builds.py --save DIR --build BUILD       run BUILD, save into DIR
  compare_builds.py --against DIR --build BUILD    run BUILD, compare with DIR
  compare_builds.py OLD_BUILD NEW_BUILD            run both, compare
  compare_builds.py --compare DIR_A DIR_B          compare two saved runs
With --against / two builds, --keep DIR keeps the new outputs (default: a
temporary folder, removed afterwards).

Which configurations (mirroring tests/meson.build, suite "models"): every
model at opt_level 0..3 (fp32, default backend), at opt_level 3 with each of
the backends onednn and openblas forced, and at opt_level 3 with precision
bf16 and int8; each with every --threads value (default "1,2"; the suites
use the library default, one thread per core). Conformance: every node case
at the library's default opt_level with one thread, as run_conformance does.
A configuration a build cannot run (a backend it was built without) records
the error, which then has to match too.

Options:
  --lib PATH                 libmopt.so to load (default: searched under BUILD)
  --models DIR               model corpus (default: tests/models of this repo)
  --conformance-data DIR     node-test cases (default: $MOPT_CONFORMANCE_DATA,
                             else with --against the saved run's folder if it
                             still exists, else BUILD/tests/conformance/onnx_node_data, else
                             generated once with tests/conformance/gen_node_data.py
                             into ~/.cache/mopt/onnx_node_data)
  --suites LIST              models,conformance (default both)
  --threads LIST             thread counts for the model suite (default 1,2)
  --filter SUBSTRING         only the cases whose key contains it
  --set KEY=VALUE            force a library option in every run (repeatable;
                             e.g. --set precision=bf16 to check that a change
                             of numerics is caught)
  --jobs N                   worker processes (default: 2, at most the CPUs)
  --timeout SEC              per case (default 300)
  --max-report N             differing outputs printed (default 50)
Environment variables (MOPT_ISA, ...) pass through to the library.
"""
import argparse
import ctypes
import hashlib
import json
import os
import platform
import selectors
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
MODELS = ["bert", "cnn", "mobilenet", "gpt"]
BACKENDS = ["onednn", "openblas"]
ONNX_PIN = "1.23.2"
FORMAT = 1  # of manifest.json

# ---- configurations ---------------------------------------------------------


def model_configs(threads):
    """(name, options) for the model suite, as tests/meson.build runs it."""
    base = []
    for lvl in range(4):
        base.append((f"O{lvl}", {"opt_level": lvl}))
    for b in BACKENDS:
        base.append((f"O3-{b}", {"opt_level": 3, "backend": b}))
    for p in ["bf16", "int8"]:
        base.append((f"O3-{p}", {"opt_level": 3, "precision": p}))
    out = []
    for t in threads:
        for name, opts in base:
            out.append((f"{name}-t{t}", dict(opts, threads=t)))
    return out


def case_dirs(root, depth=2):
    """Folders holding model.onnx under root (root itself, or up to depth below)."""
    if os.path.isfile(os.path.join(root, "model.onnx")):
        return [root]
    if depth == 0 or not os.path.isdir(root):
        return []
    found = []
    for e in sorted(os.listdir(root)):
        p = os.path.join(root, e)
        if not e.startswith(".") and os.path.isdir(p):
            found += case_dirs(p, depth - 1)
    return found


def make_jobs(args, conf_data):
    jobs = []
    if "models" in args.suites:
        for cname, opts in model_configs(args.threads):
            for m in MODELS:
                d = os.path.join(args.models, m)
                if os.path.isfile(os.path.join(d, "model.onnx")):
                    jobs.append({"key": f"models/{m}/{cname}", "dir": d, "options": opts})
    if "conformance" in args.suites:
        for d in case_dirs(conf_data, 1):
            jobs.append({"key": f"conformance/{os.path.basename(d)}", "dir": d,
                         "options": {"threads": 1}})
    if args.filter:
        jobs = [j for j in jobs if args.filter in j["key"]]
    for j in jobs:  # --set wins over the configuration
        j["options"] = dict(j["options"], **args.set)
    return jobs


# ---- the worker: runs cases through the public C ABI ------------------------


class Lib:
    """The few libmopt calls this script needs, through ctypes."""

    def __init__(self, path):
        L = ctypes.CDLL(path)
        P, S, I, I64 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int64
        PP = ctypes.POINTER(ctypes.c_void_p)
        sigs = {
            "mopt_version": (ctypes.c_char_p, []),
            "mopt_status_string": (ctypes.c_char_p, [I]),
            "mopt_last_error": (ctypes.c_char_p, []),
            "mopt_dtype_name": (ctypes.c_char_p, [I]),
            "mopt_options_create": (I, [PP]),
            "mopt_options_destroy": (None, [P]),
            "mopt_options_set_int": (I, [P, ctypes.c_char_p, I64]),
            "mopt_options_set_string": (I, [P, ctypes.c_char_p, ctypes.c_char_p]),
            "mopt_model_load": (I, [ctypes.c_char_p, P, PP]),
            "mopt_model_destroy": (None, [P]),
            "mopt_model_io_count": (S, [P, I]),
            "mopt_model_io_name": (ctypes.c_char_p, [P, I, S]),
            "mopt_session_create": (I, [P, P, PP]),
            "mopt_session_destroy": (None, [P]),
            "mopt_session_run": (I, [P, S, P, P, S, P, P]),
            "mopt_tensor_load": (I, [ctypes.c_char_p, PP]),
            "mopt_tensor_destroy": (None, [P]),
            "mopt_tensor_dtype": (I, [P]),
            "mopt_tensor_rank": (I, [P]),
            "mopt_tensor_dim": (I64, [P, I]),
            "mopt_tensor_size_bytes": (S, [P]),
            "mopt_tensor_data": (P, [P]),
        }
        for name, (res, argt) in sigs.items():
            f = getattr(L, name)
            f.restype, f.argtypes = res, argt
            setattr(self, name[5:], f)

    def err(self, what, st):
        return {"status": int(st), "message": "%s: %s: %s" % (
            what, self.status_string(st).decode(), (self.last_error() or b"").decode(errors="replace"))}


def io_files(folder, prefix):
    files = []
    while True:
        base = os.path.join(folder, f"{prefix}_{len(files)}")
        if os.path.isfile(base + ".npy"):
            files.append(base + ".npy")
        elif os.path.isfile(base + ".pb"):
            files.append(base + ".pb")
        else:
            return files


def data_sets(case_dir):
    sets = []
    while os.path.isdir(os.path.join(case_dir, f"test_data_set_{len(sets)}")):
        sets.append(os.path.join(case_dir, f"test_data_set_{len(sets)}"))
    return sets


def set_options(lib, opts, options):
    for k, v in options.items():
        if isinstance(v, int):
            st = lib.options_set_int(opts, k.encode(), v)
        else:
            st = lib.options_set_string(opts, k.encode(), str(v).encode())
        if st:
            return lib.err(f"option {k}={v}", st)
    return None


def run_job(lib, job, out_dir):
    """Runs one case; saves its outputs in out_dir/data/KEY.npz; returns its entry."""
    entry = {"key": job["key"], "options": job["options"], "status": 0, "message": "",
             "outputs": []}
    blobs = {}
    opts, model, sess = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    try:
        st = lib.options_create(ctypes.byref(opts))
        if st:
            entry.update(lib.err("options", st))
            return entry
        e = set_options(lib, opts, job["options"])
        if e:
            entry.update(e)
            return entry
        st = lib.model_load(os.path.join(job["dir"], "model.onnx").encode(), opts,
                            ctypes.byref(model))
        if st:
            entry.update(lib.err("load", st))
            return entry
        st = lib.session_create(model, opts, ctypes.byref(sess))
        if st:
            entry.update(lib.err("session", st))
            return entry
        n_in = lib.model_io_count(model, 0)
        sets = data_sets(job["dir"])
        if not sets:
            entry.update(status=-1, message="no test_data_set_* folder")
        for si, ds in enumerate(sets):
            e = run_set(lib, model, sess, n_in, si, ds, entry, blobs)
            if e:
                entry.update(e)
                break
    finally:
        lib.session_destroy(sess)
        lib.model_destroy(model)
        lib.options_destroy(opts)
        if blobs:
            path = os.path.join(out_dir, "data", job["key"] + ".npz")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            np.savez(path, **blobs)
    return entry


def run_set(lib, model, sess, n_in, si, ds, entry, blobs):
    in_files, out_files = io_files(ds, "input"), io_files(ds, "output")
    no = len(out_files)
    if len(in_files) != n_in:
        return {"status": -1, "message": f"data set {si} has {len(in_files)} inputs, the model {n_in}"}
    if no == 0 or no > lib.model_io_count(model, 1):
        return {"status": -1, "message": f"data set {si} has {no} output files"}
    ins = (ctypes.c_void_p * max(n_in, 1))()
    outs = (ctypes.c_void_p * no)()
    try:
        for k, f in enumerate(in_files):
            t = ctypes.c_void_p()
            st = lib.tensor_load(f.encode(), ctypes.byref(t))
            ins[k] = t.value
            if st:
                return lib.err(f"reading {os.path.basename(f)} of set {si}", st)
        prev = {}
        for rep in range(2):
            st = lib.session_run(sess, n_in, None, ins, no, None, outs)
            if st:
                return lib.err(f"run {rep + 1} of set {si}", st)
            for k in range(no):
                t = outs[k]
                nbytes = lib.tensor_size_bytes(t)
                ptr = lib.tensor_data(t)
                raw = ctypes.string_at(ptr, nbytes) if nbytes else b""
                rank = lib.tensor_rank(t)
                o = {"id": f"s{si}_r{rep}_o{k}",
                     "name": (lib.model_io_name(model, 1, k) or b"").decode(errors="replace"),
                     "dtype": lib.dtype_name(lib.tensor_dtype(t)).decode(),
                     "shape": [lib.tensor_dim(t, a) for a in range(rank)],
                     "sha256": hashlib.sha256(raw).hexdigest()}
                entry["outputs"].append(o)
                # the second run's bytes are stored only when they differ from the first's
                if rep == 0 or prev[k] != o["sha256"]:
                    blobs[o["id"]] = np.frombuffer(raw, dtype=np.uint8)
                prev[k] = o["sha256"]
                if rep == 0 and nbytes:  # the planned run must write every byte again
                    ctypes.memset(ptr, 0xA5, nbytes)
    finally:
        for k in range(n_in):
            lib.tensor_destroy(ins[k])
        for k in range(no):
            lib.tensor_destroy(outs[k])
    return None


def worker_main(lib_path, jobs_file, out_dir):
    """Reads job indices on stdin, answers one JSON line per job on stdout."""
    with open(jobs_file) as f:
        jobs = json.load(f)
    lib = Lib(lib_path)
    real_stdout = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # library chatter must not corrupt the protocol
    real_stdout.write(json.dumps({"ready": lib.version().decode()}) + "\n")
    real_stdout.flush()
    for line in sys.stdin:
        i = int(line)
        try:
            entry = run_job(lib, jobs[i], out_dir)
        except Exception as exc:  # a Python-side failure is this case's, not the run's
            entry = {"key": jobs[i]["key"], "options": jobs[i]["options"], "status": -2,
                     "message": f"compare_builds worker: {exc!r}", "outputs": []}
        real_stdout.write(json.dumps({"i": i, "entry": entry}) + "\n")
        real_stdout.flush()
    return 0


# ---- the parent: a pool of workers, crash and timeout handling --------------


class Worker:
    def __init__(self, lib_path, jobs_file, out_dir):
        self.p = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", lib_path, jobs_file, out_dir],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.job = None
        self.t0 = 0.0
        self.buf = ""
        hello = self.p.stdout.readline()
        if not hello:
            raise RuntimeError(f"worker for {lib_path} did not start")
        self.version = json.loads(hello)["ready"]

    def give(self, i):
        self.job, self.t0 = i, time.monotonic()
        self.p.stdin.write(f"{i}\n")
        self.p.stdin.flush()

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        self.p.wait()


def run_build(lib_path, jobs, out_dir, meta, n_workers, timeout, quiet=False):
    """Runs every job with lib_path, saving into out_dir; returns the manifest."""
    os.makedirs(out_dir, exist_ok=True)
    jobs_file = os.path.join(out_dir, "jobs.json")
    with open(jobs_file, "w") as f:
        json.dump(jobs, f)
    results = [None] * len(jobs)
    todo = list(range(len(jobs)))
    todo.reverse()  # pop() from the end: keep the listed order
    sel = selectors.DefaultSelector()
    workers = []
    version = None
    t_start = time.monotonic()
    done = 0

    def spawn():
        w = Worker(lib_path, jobs_file, out_dir)
        sel.register(w.p.stdout, selectors.EVENT_READ, w)
        workers.append(w)
        return w

    def retire(w, result):
        nonlocal done
        sel.unregister(w.p.stdout)
        w.kill()
        workers.remove(w)
        if w.job is not None:
            j = jobs[w.job]
            results[w.job] = {"key": j["key"], "options": j["options"], "status": -3,
                              "message": result, "outputs": []}
            done += 1

    for _ in range(min(n_workers, len(jobs))):
        w = spawn()
        version = w.version
        if todo:
            w.give(todo.pop())
    while workers:
        events = sel.select(timeout=1.0)
        for key, _ in events:
            w = key.data
            line = w.p.stdout.readline()
            if not line:  # the worker died inside a case
                rc = w.p.wait()
                retire(w, f"crash (worker exit status {rc})")
                if todo:
                    spawn().give(todo.pop())
                continue
            msg = json.loads(line)
            results[msg["i"]] = msg["entry"]
            done += 1
            w.job = None
            if todo:
                w.give(todo.pop())
            else:
                sel.unregister(w.p.stdout)
                w.close()
                workers.remove(w)
        now = time.monotonic()
        for w in list(workers):
            if w.job is not None and now - w.t0 > timeout:
                retire(w, f"timeout after {timeout} s")
                if todo:
                    spawn().give(todo.pop())
        if not quiet and sys.stderr.isatty():
            sys.stderr.write(f"\r  {done}/{len(jobs)} cases")
            sys.stderr.flush()
    if not quiet and sys.stderr.isatty():
        sys.stderr.write("\n")
    os.remove(jobs_file)
    meta = dict(meta, mopt_version=version, seconds=round(time.monotonic() - t_start, 1))
    manifest = {"format": FORMAT, "meta": meta, "cases": {r["key"]: r for r in results}}
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    return manifest


# ---- comparison --------------------------------------------------------------

NP_DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i8": np.int8,
             "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32,
             "u32": np.uint32, "i64": np.int64, "u64": np.uint64, "bool": np.uint8}


def as_numbers(raw, dtype):
    """The values of a saved output as float64 (bf16 widened), or None."""
    name = dtype.lower()
    if name in ("bf16", "bfloat16"):
        u = np.frombuffer(raw.tobytes(), dtype=np.uint16).astype(np.uint32) << 16
        return u.view(np.float32).astype(np.float64)
    for k, t in NP_DTYPES.items():
        if name in (k, np.dtype(t).name):
            return np.frombuffer(raw.tobytes(), dtype=t).astype(np.float64)
    return None


def blob(save_dir, key, o):
    """The bytes of output o of case key (a second run may share the first's)."""
    path = os.path.join(save_dir, "data", key + ".npz")
    with np.load(path) as z:
        if o["id"] in z.files:
            return z[o["id"]]
        first = o["id"].replace("_r1_", "_r0_")
        return z[first]


def describe(dir_a, dir_b, key, oa, ob):
    if oa["dtype"] != ob["dtype"]:
        return f"dtype {oa['dtype']} vs {ob['dtype']}"
    if oa["shape"] != ob["shape"]:
        return f"shape {oa['shape']} vs {ob['shape']}"
    try:
        ra, rb = blob(dir_a, key, oa), blob(dir_b, key, ob)
    except (OSError, KeyError) as exc:
        return f"bytes differ (sha256); saved data unreadable: {exc}"
    nbytes_diff = int(np.count_nonzero(ra != rb)) if ra.size == rb.size else -1
    va, vb = as_numbers(ra, oa["dtype"]), as_numbers(rb, ob["dtype"])
    if va is None or vb is None or va.size != vb.size:
        return f"bytes differ ({nbytes_diff} of {ra.size} bytes)"
    with np.errstate(invalid="ignore"):
        same = (va == vb) | (np.isnan(va) & np.isnan(vb))
        d = np.where(same, 0.0, np.abs(va - vb))
    n = int(np.count_nonzero(~same))
    i = int(np.nanargmax(np.where(np.isnan(d), np.inf, d))) if d.size else 0
    return (f"values differ: {n} of {va.size} elements, max |diff| {float(d[i]):.3g} "
            f"at flat index {i} ({float(va[i]):.9g} vs {float(vb[i]):.9g})"
            if n else f"bytes differ ({nbytes_diff} bytes) with equal values (NaN payloads or -0)")


def compare(dir_a, dir_b, man_a, man_b, max_report):
    """Prints the differences; returns their count."""
    ca, cb = man_a["cases"], man_b["cases"]
    diffs = []
    notes = []
    n_outputs = 0
    for key in sorted(set(ca) | set(cb)):
        if key not in cb:
            diffs.append((key, "only in A", False))
            continue
        if key not in ca:
            diffs.append((key, "only in B", False))
            continue
        ea, eb = ca[key], cb[key]
        if ea["status"] != eb["status"]:
            diffs.append((key, f"status {ea['status']} ({ea['message']}) vs {eb['status']} "
                               f"({eb['message']})", False))
        elif ea["message"] != eb["message"]:
            notes.append((key, f"same status {ea['status']}, message changed: "
                               f"'{ea['message']}' -> '{eb['message']}'"))
        oa = {o["id"]: o for o in ea["outputs"]}
        ob = {o["id"]: o for o in eb["outputs"]}
        differing = set()
        for oid in sorted(set(oa) | set(ob)):
            first = oid.replace("_r1_", "_r0_")
            if oid not in oa or oid not in ob:
                diffs.append((key, f"output {oid} only in {'B' if oid in ob else 'A'}", False))
                continue
            n_outputs += 1
            x, y = oa[oid], ob[oid]
            if x["dtype"] == y["dtype"] and x["shape"] == y["shape"] and x["sha256"] == y["sha256"]:
                continue
            repeat = first != oid and first in differing and \
                oa[first]["sha256"] == x["sha256"] and ob[first]["sha256"] == y["sha256"]
            differing.add(oid)
            what = "same as the first run" if repeat else describe(dir_a, dir_b, key, x, y)
            diffs.append((key, f"output {oid} '{x['name']}': {what}", repeat))
    # models first; a planned run (r1) that differs like the first run is counted, not printed
    diffs.sort(key=lambda d: (not d[0].startswith("models/"), d[0]))
    shown = [d for d in diffs if not d[2]]
    for key, what, _ in shown[:max_report]:
        print(f"DIFF {key}: {what}")
    if len(shown) > max_report:
        print(f"... and {len(shown) - max_report} more (--max-report)")
    for key, what in notes[:10]:
        print(f"note {key}: {what}")
    if len(notes) > 10:
        print(f"note: {len(notes) - 10} more cases whose error message changed")
    n_cases = len(set(ca) | set(cb))
    n_err = sum(1 for e in ca.values() if e["status"])
    bad = sorted({d[0] for d in diffs})
    per_suite = ", ".join(f"{s}: {sum(1 for k in bad if k.startswith(s + '/'))}"
                          for s in ("models", "conformance"))
    print(f"{n_cases} cases ({n_err} of them not runnable in A, e.g. unsupported), "
          f"{n_outputs} outputs compared (dtype, shape, bytes): "
          + ("all bit-identical" if not diffs else
             f"{len(diffs)} differences in {len(bad)} cases ({per_suite})"))
    return len(diffs)


# ---- finding things ----------------------------------------------------------


def find_lib(build):
    best = None
    for root, dirs, files in os.walk(build):
        dirs[:] = [d for d in dirs if not d.endswith(".p") and not d.startswith("meson-")]
        for f in files:
            if f.startswith("libmopt.so"):
                p = os.path.join(root, f)
                rank = (p.count(os.sep), len(f))  # shallowest, then libmopt.so over .so.0.1.0
                if best is None or rank < best[0]:
                    best = (rank, p)
    if not best:
        sys.exit(f"compare_builds: no libmopt.so under {build} (give --lib)")
    return os.path.abspath(best[1])


def source_of(build):
    try:
        with open(os.path.join(build, "meson-info", "meson-info.json")) as f:
            src = json.load(f)["directories"]["source"]
        rev = subprocess.run(["git", "-C", src, "describe", "--always", "--dirty"],
                             capture_output=True, text=True).stdout.strip()
        return src, rev or "unknown"
    except (OSError, KeyError, ValueError):
        return None, "unknown"


def find_conformance_data(args, builds):
    if args.conformance_data:
        return os.path.abspath(args.conformance_data)
    env = os.environ.get("MOPT_CONFORMANCE_DATA")
    if env:
        return os.path.abspath(env)
    for b in builds:
        d = os.path.join(b, "tests", "conformance", "onnx_node_data")
        if case_dirs(d, 1):
            return os.path.abspath(d)
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                         "mopt", "onnx_node_data")
    if not case_dirs(cache, 1):
        print(f"compare_builds: generating the ONNX node tests into {cache} (once)", file=sys.stderr)
        gen = os.path.join(REPO, "tests", "conformance", "gen_node_data.py")
        subprocess.run([sys.executable, gen, cache, "--require-version", ONNX_PIN], check=True)
    return cache


def corpus_digest(folders):
    """sha256 over the models and inputs the cases read (their paths relative
    to the corpus and their bytes), so two runs can tell they fed the same
    data even from different checkouts."""
    h = hashlib.sha256()
    for root in folders:
        for d, dirs, files in sorted(os.walk(root)):
            dirs.sort()
            for f in sorted(files):
                if f == "model.onnx" or f.startswith("input_"):
                    p = os.path.join(d, f)
                    h.update(os.path.relpath(p, root).encode() + b"\0")
                    with open(p, "rb") as fh:
                        h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()


def build_meta(build, lib, args, conf_data):
    src, rev = source_of(build) if build else (None, "unknown")
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), cpu)
    except OSError:
        pass
    return {"build": os.path.abspath(build) if build else None, "lib": lib, "source": src,
            "git": rev, "models": args.models, "conformance_data": conf_data,
            "models_digest": corpus_digest([args.models]) if "models" in args.suites else None,
            "conformance_digest": corpus_digest([conf_data]) if conf_data else None,
            "threads": args.threads, "set": args.set, "suites": args.suites,
            "filter": args.filter, "cpu": cpu, "host": platform.node(),
            "env": {k: v for k, v in os.environ.items() if k.startswith("MOPT_")},
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def load_manifest(d):
    try:
        with open(os.path.join(d, "manifest.json")) as f:
            m = json.load(f)
    except OSError as exc:
        sys.exit(f"compare_builds: {d} holds no saved run: {exc}")
    if m.get("format") != FORMAT:
        sys.exit(f"compare_builds: {d}: manifest format {m.get('format')}, expected {FORMAT}")
    return m


def main(argv):
    if len(argv) > 1 and argv[1] == "--worker":
        return worker_main(*argv[2:5])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    ap.add_argument("builds", nargs="*", help="OLD_BUILD NEW_BUILD")
    ap.add_argument("--build")
    ap.add_argument("--lib")
    ap.add_argument("--save")
    ap.add_argument("--against")
    ap.add_argument("--compare", nargs=2, metavar=("DIR_A", "DIR_B"))
    ap.add_argument("--keep")
    ap.add_argument("--models", default=os.path.join(REPO, "tests", "models"))
    ap.add_argument("--conformance-data")
    ap.add_argument("--suites", default="models,conformance")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--filter")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--max-report", type=int, default=50)
    args = ap.parse_args(argv[1:])
    args.suites = [s for s in args.suites.split(",") if s]
    for s in args.suites:
        if s not in ("models", "conformance"):
            ap.error(f"unknown suite '{s}' (models, conformance)")
    try:
        args.threads = [int(t) for t in args.threads.split(",")]
    except ValueError:
        ap.error("--threads takes a list of numbers: 1,2")
    forced = {}
    for kv in args.set:
        if "=" not in kv:
            ap.error(f"--set {kv}: expected KEY=VALUE")
        k, v = kv.split("=", 1)
        forced[k] = int(v) if v.lstrip("-").isdigit() else v
    args.set = forced
    args.models = os.path.abspath(args.models)

    if args.compare:
        a, b = args.compare
        return 1 if compare(a, b, load_manifest(a), load_manifest(b), args.max_report) else 0

    if args.builds:
        if len(args.builds) != 2 or args.build or args.save or args.against:
            ap.error("give two builds (OLD NEW), or --build with --save or --against")
        builds = args.builds
    elif args.build and (args.save or args.against):
        if args.save and args.against:
            ap.error("--save and --against exclude each other")
        builds = [args.build]
    else:
        ap.error("nothing to do: see the modes above")
    if args.lib and len(builds) != 1:
        ap.error("--lib goes with --build")
    if args.against and not args.conformance_data and not os.environ.get("MOPT_CONFORMANCE_DATA"):
        saved = load_manifest(args.against)["meta"].get("conformance_data")
        if saved and case_dirs(saved, 1):  # the very cases the baseline ran
            args.conformance_data = saved
    conf_data = find_conformance_data(args, builds) if "conformance" in args.suites else None
    jobs = make_jobs(args, conf_data)
    if not jobs:
        sys.exit("compare_builds: no cases (check --models, --conformance-data, --filter)")

    def run(build, out_dir):
        lib = args.lib or find_lib(build)
        meta = build_meta(build, lib, args, conf_data)
        print(f"running {len(jobs)} cases with {lib} ({meta['git']}), {args.jobs} workers ...",
              flush=True)
        if os.path.exists(os.path.join(out_dir, "data")):
            shutil.rmtree(os.path.join(out_dir, "data"))
        m = run_build(lib, jobs, out_dir, meta, args.jobs, args.timeout)
        bad = sum(1 for e in m["cases"].values() if e["status"] < -2)
        print(f"  {m['meta']['seconds']} s; saved in {out_dir}"
              + (f"; {bad} crashed or timed out" if bad else ""), flush=True)
        return m

    if args.save:
        run(builds[0], os.path.abspath(args.save))
        return 0
    tmp = None
    try:
        if args.against:
            old_dir = os.path.abspath(args.against)
            man_old = load_manifest(old_dir)
            new_build = builds[0]
        else:
            tmp = tempfile.mkdtemp(prefix="mopt-compare-")
            old_dir = os.path.join(tmp, "old")
            man_old = run(builds[0], old_dir)
            new_build = builds[1]
        if args.keep:
            new_dir = os.path.abspath(args.keep)
        else:
            tmp = tmp or tempfile.mkdtemp(prefix="mopt-compare-")
            new_dir = os.path.join(tmp, "new")
        man_new = run(new_build, new_dir)
        if args.against:
            keys = set(man_new["cases"])
            # compare only what was rerun, so --filter/--suites work against a full baseline
            man_old = dict(man_old, cases={k: v for k, v in man_old["cases"].items() if k in keys})
            checked = ["set"] + (["threads", "models_digest"] if "models" in args.suites else []) + (
                ["conformance_digest"] if "conformance" in args.suites else [])
            for k in checked:
                if man_old["meta"].get(k) != man_new["meta"].get(k):
                    print(f"note: {k} differs: saved {man_old['meta'].get(k)!r}, "
                          f"now {man_new['meta'].get(k)!r} (the runs did not see the same inputs "
                          "or options)")
        return 1 if compare(old_dir, new_dir, man_old, man_new, args.max_report) else 0
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
