#!/usr/bin/env python3
"""test_cli_mopt.py — end-to-end test of `mopt optimize` and of .mopt files
in `mopt info` / `mopt run` (meson suite "cli").

Checks: optimize writes a .mopt whose header is valid YAML (read with PyYAML,
an independent parser) describing the graph `mopt info` reports, with 64-byte
aligned, non-overlapping weights whose bytes equal the ONNX initializers
(at opt_level 0 every initializer, compared with numpy by name); --report
prints the pass table; info on the .mopt matches info on the optimized .onnx;
run on the .mopt gives the ONNX Runtime references and the same bytes as run
on the .onnx; info --plan reports an arena no larger than the sum of the
intermediates; bad command lines and corrupt files give exit codes 2 and 1;
MOPT_VERBOSE names the kernels OpenBLAS chose (a warning for SSE-era ones on
an AVX2 CPU).

usage: test_cli_mopt.py MOPT_EXECUTABLE SOURCE_ROOT
"""
import json
import os
import sys
import tempfile

import numpy as np
import onnx
import yaml
from onnx import numpy_helper

from cli_check import ROOT, check, done, mopt

CNN = os.path.join(ROOT, "tests/models/cnn/model.onnx")
BERT = os.path.join(ROOT, "tests/models/bert/model.onnx")
NP_DTYPES = {"f32": np.float32, "i64": np.int64, "i32": np.int32, "u8": np.uint8,
             "i8": np.int8, "bool": np.bool_, "f16": np.float16, "f64": np.float64}


def read_header(path):
    data = open(path, "rb").read()
    first = data.index(b"\n") + 1
    end = data.index(b"\n%MOPT-END ") + 1
    return data, data[:first], yaml.safe_load(data[first:end].decode("utf-8"))


def check_optimize(tmp, model, name):
    out = os.path.join(tmp, name + ".mopt")
    r = mopt("optimize", model, "-o", out, "--report", "--opt-level", "2")
    check(r.returncode == 0, "optimize %s: exit %d: %s" % (name, r.returncode, r.stderr))
    if r.returncode:
        return None
    check(r.stdout.startswith("pass ") and "\ntotal " in r.stdout and "fold_constants" in r.stdout,
          "optimize --report prints the pass table: %r" % r.stdout[:200])
    data, magic, h = read_header(out)
    check(magic == b"%MOPT-1\n", "magic line %r" % magic)
    check(h["format_version"] == 1 and h["opt_level"] == 2 and h["precision"] == "fp32",
          "header basics %r" % {k: h.get(k) for k in ("format_version", "opt_level")})
    check(h["source"]["bytes"] == os.path.getsize(model), "source bytes")
    # the .mopt holds the opt_level 2 graph (opt_level 3 also rewrites the
    # layout of CNN activations, pass_layout.c)
    info = json.loads(mopt("info", "--json", "--opt-level", "2", model).stdout)
    check(len(h["graph"]["nodes"]) == info["nodes"], "header nodes %d != info %d"
          % (len(h["graph"]["nodes"]), info["nodes"]))
    check(h["passes"][-1]["nodes_after"] == info["nodes"], "pass report ends at the node count")
    check_table(data, h, {})
    # info on the .mopt is info on the optimized .onnx
    info_m = json.loads(mopt("info", "--json", out).stdout)
    info.pop("model")
    info_m.pop("model")
    check(info == info_m, "info differs between .onnx and .mopt:\n%s\n%s" % (info, info_m))
    # at opt_level 0 every ONNX initializer is in the table, byte for byte
    out0 = os.path.join(tmp, name + "_O0.mopt")
    r = mopt("optimize", model, "-o", out0, "--opt-level", "0")
    check(r.returncode == 0, "optimize -O0 %s: %s" % (name, r.stderr))
    if r.returncode == 0:
        data0, _, h0 = read_header(out0)
        inits = {i.name: numpy_helper.to_array(i) for i in onnx.load(model).graph.initializer}
        compared = check_table(data0, h0, inits)
        check(compared == len(inits), "%s: %d of %d initializers found in the table"
              % (name, compared, len(inits)))
    return out


def check_table(data, h, inits):
    """Offsets aligned, no overlap, inside the file; entries named like an
    initializer hold its bytes. Returns how many were compared."""
    prev_end, compared = 0, 0
    for t in h["tensors"]:
        check(t["offset"] % 64 == 0, "tensor %s offset %d misaligned" % (t["name"], t["offset"]))
        check(t["offset"] >= prev_end, "tensor %s overlaps the previous one" % t["name"])
        prev_end = t["offset"] + t["size"]
        arr = np.frombuffer(data[t["offset"]:prev_end], NP_DTYPES[t["dtype"]]).reshape(t["dims"])
        if t["name"] in inits:
            ref = inits[t["name"]]
            check(ref.shape == arr.shape and ref.tobytes() == arr.tobytes(),
                  "tensor %s differs from the ONNX initializer" % t["name"])
            compared += 1
    check(prev_end <= len(data), "weights beyond the end of the file")
    return compared


def check_run(tmp, cnn_mopt):
    data = os.path.join(ROOT, "tests/models/cnn/test_data_set_0")
    outs = {}
    for tag, model in (("onnx", CNN), ("mopt", cnn_mopt)):
        d = os.path.join(tmp, "run_" + tag)
        # the .mopt was optimized at opt_level 2 and runs at it: so does the .onnx
        level = ["--opt-level", "2"] if tag == "onnx" else []
        r = mopt("run", model, "--input", "input=" + os.path.join(data, "input_0.npy"),
                 "--output-dir", d, "--threads", "1", *level)
        check(r.returncode == 0, "run %s: exit %d: %s" % (tag, r.returncode, r.stderr))
        if r.returncode:
            return
        outs[tag] = open(os.path.join(d, "logits.npy"), "rb").read()
    got = np.load(os.path.join(tmp, "run_mopt", "logits.npy"))
    want = np.load(os.path.join(data, "output_0.npy"))
    check(np.allclose(got, want, atol=1e-4, rtol=1e-4), "run .mopt differs from ORT")
    check(outs["onnx"] == outs["mopt"], "run .mopt and .onnx give different bytes")


def check_plan(bert_mopt):
    for model in (BERT, bert_mopt):
        r = mopt("info", "--json", "--plan", "--dim", "batch=2", "--dim", "seq=16", model)
        check(r.returncode == 0, "info --plan %s: %s" % (model, r.stderr))
        if r.returncode:
            continue
        plan = json.loads(r.stdout)["plan"]
        check(plan["inputs"]["input_ids"] == [2, 16], "plan inputs %r" % plan["inputs"])
        check(0 < plan["arena_bytes"] <= plan["intermediate_bytes"], "plan %r" % plan)
        # the output alone is 2 x 16 x 64 floats; intermediates hold more
        check(plan["intermediate_bytes"] >= 2 * 16 * 64 * 4, "plan %r" % plan)
        t = mopt("info", "--plan", "--dim", "batch=2", "--dim", "seq=16", model)
        check("arena:" in t.stdout and "intermediates:" in t.stdout, "info --plan text")


def check_errors(tmp, cnn_mopt):
    r = mopt("optimize", CNN)
    check(r.returncode == 2 and "-o" in r.stderr, "optimize without -o: %d %r"
          % (r.returncode, r.stderr))
    r = mopt("info", "--dim", "batch=2", CNN)
    check(r.returncode == 2, "info --dim without --plan: %d" % r.returncode)
    data = bytearray(open(cnn_mopt, "rb").read())
    data[30] ^= 1
    bad = os.path.join(tmp, "bad.mopt")
    open(bad, "wb").write(bytes(data))
    r = mopt("run", bad)
    check(r.returncode == 1 and "mopt: malformed file:" in r.stderr
          and "header checksum mismatch" in r.stderr, "run corrupt .mopt: %r" % r.stderr)
    r = mopt("optimize", CNN, "-o", os.path.join(tmp, "no/such/dir/x.mopt"))
    check(r.returncode == 1 and "cannot" in r.stderr, "optimize to a bad path: %r" % r.stderr)


def check_openblas_core(tmp):
    """MOPT_VERBOSE names the kernels OpenBLAS chose for its nodes (OpenBLAS's
    own openblas_get_corename, read here through ctypes) and warns when they
    are SSE-era ones, as OpenBLAS 0.3.21 picks on CPUs it does not know."""
    import ctypes
    import ctypes.util
    name = ctypes.util.find_library("openblas")
    try:
        lib = ctypes.CDLL(name or "libopenblas.so.0")
    except OSError:
        print("OpenBLAS not found by ctypes: the core name check is not run")
        return
    lib.openblas_get_corename.restype = ctypes.c_char_p
    core = lib.openblas_get_corename().decode()
    opts = os.path.join(tmp, "openblas.yaml")
    with open(opts, "w") as f:
        f.write("backend: openblas\n")
    env = dict(os.environ, MOPT_VERBOSE="1")
    r = mopt("info", BERT, "--options", opts, env=env)
    line = [ln for ln in r.stderr.splitlines() if "OpenBLAS runs" in ln]
    if "without OpenBLAS" in r.stderr:
        return  # a build without OpenBLAS refuses the option
    check(r.returncode == 0 and len(line) == 1 and ("'%s' kernels" % core) in line[0],
          "MOPT_VERBOSE names OpenBLAS's kernels '%s' once: %s" % (core, line), r)
    sse = core in ("Katmai", "Coppermine", "Northwood", "Prescott", "Banias", "Core2", "Penryn",
                   "Dunnington", "Nehalem", "Atom", "Athlon", "Opteron", "Opteron(SSE3)",
                   "Barcelona", "Nano", "unknown")
    avx2 = "avx2" in open("/proc/cpuinfo").read()
    check(bool(line) and ("SSE-era" in line[0]) == (sse and avx2),
          "the OpenBLAS line warns exactly when its kernels are SSE-era on an AVX2 CPU "
          "(core %s, avx2 %s): %s" % (core, avx2, line))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_openblas_core(tmp)
        cnn = check_optimize(tmp, CNN, "cnn")
        bert = check_optimize(tmp, BERT, "bert")
        if cnn:
            check_run(tmp, cnn)
            check_errors(tmp, cnn)
        if bert:
            check_plan(bert)
    return done()


if __name__ == "__main__":
    sys.exit(main())
