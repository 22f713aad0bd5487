#!/usr/bin/env python3
"""test_cli_control.py — the `mopt` tool on models with control flow (meson
suite "cli"): `mopt check` names problems inside subgraphs by path, `mopt
info` describes a model it parses but cannot run (inputs, outputs, histogram
and the nodes that cannot run, text and JSON) and exits 0, `mopt run` still
refuses it, and `mopt run` of a while-Loop matches its numpy reference.

Models: tests/unit/data/control_*.onnx (tests/unit/gen_control_models.py) and
tests/ops/data/control/loop_while (tests/ops/gen_control.py).

usage: test_cli_control.py MOPT_EXECUTABLE SOURCE_ROOT
"""
import json
import os
import sys
import tempfile

import numpy as np

from cli_check import ROOT, check, done, mopt

NESTED = os.path.join(ROOT, "tests/unit/data/control_check_nested.onnx")
LOOP_ERR = os.path.join(ROOT, "tests/unit/data/control_loop_shape_error.onnx")
LOOP = os.path.join(ROOT, "tests/ops/data/control/loop_while")
PATHS = ["If_32/then_branch/LSTM_7", "Loop_1/body/If_2/else_branch/Bad_3"]


def check_check():
    r = mopt("check", NESTED)
    check(r.returncode == 1, "check nested: exit %d" % r.returncode)
    for p in PATHS:
        check("node '%s'" % p in r.stdout, "check does not name %s: %r" % (p, r.stdout))
    check("2 problem nodes" in r.stdout, "check count: %r" % r.stdout)
    r = mopt("check", LOOP_ERR)
    check(r.returncode == 1 and "node 'Loop_9' (Loop): shape error" in r.stdout and
          "Loop_9/body" in r.stdout and "Add_5" in r.stdout, "check loop body: %r" % r.stdout)


def check_info():
    r = mopt("info", NESTED)
    check(r.returncode == 0, "info nested: exit %d: %s" % (r.returncode, r.stderr))
    check("cannot run (2 nodes):" in r.stdout, "info text lacks the count: %r" % r.stdout)
    for p in PATHS:
        check("  %s (test.unsupported." % p in r.stdout, "info text lacks %s" % p)
    check("  x: f32 [2]" in r.stdout and "  z: f32 [2]" in r.stdout, "info text io: %r" % r.stdout)
    r = mopt("info", "--json", "--plan", NESTED)
    check(r.returncode == 0, "info --json --plan nested: exit %d: %s" % (r.returncode, r.stderr))
    try:
        info = json.loads(r.stdout)
    except ValueError:
        check(False, "info --json is not JSON: %r" % r.stdout)
        return
    check([i["name"] for i in info["inputs"]] == ["c", "m", "x"], "json inputs %s" % info["inputs"])
    check([o["name"] for o in info["outputs"]] == ["y", "z"], "json outputs %s" % info["outputs"])
    check(info["op_histogram"] == {"If": 1, "Loop": 1}, "json histogram %s" % info["op_histogram"])
    check("plan" not in info, "a model that cannot run got a plan")
    nodes = [e["node"] for e in info.get("cannot_run", [])]
    check(nodes == PATHS, "json cannot_run %s" % nodes)
    check(all(e["status"] == "unsupported" for e in info.get("cannot_run", [])),
          "json cannot_run status %s" % info.get("cannot_run"))
    # a model that runs has no cannot_run key
    r = mopt("info", "--json", os.path.join(LOOP, "model.onnx"))
    check(r.returncode == 0 and "cannot_run" not in json.loads(r.stdout), "info of a good model")
    # running it is still refused, naming the problem
    r = mopt("run", NESTED)
    check(r.returncode == 1 and "If_32/then_branch/LSTM_7" in r.stderr, "run nested: %r" % r.stderr)


def check_run(tmp):
    for k in (0, 1):
        ds = os.path.join(LOOP, "test_data_set_%d" % k)
        args = ["run", os.path.join(LOOP, "model.onnx"), "--output-dir", tmp]
        for i, name in enumerate(["go", "x", "limit"]):
            args += ["--input", "%s=%s" % (name, os.path.join(ds, "input_%d.npy" % i))]
        r = mopt(*args)
        check(r.returncode == 0, "run loop_while %d: %s" % (k, r.stderr))
        for j, name in enumerate(["acc_final", "accs", "iters"]):
            want = np.load(os.path.join(ds, "output_%d.npy" % j))
            got = np.load(os.path.join(tmp, name + ".npy"))
            check(got.shape == want.shape and np.allclose(got, want, rtol=1e-5, atol=1e-6),
                  "run loop_while %d: %s %s vs %s" % (k, name, got.shape, want.shape))


def main():
    check_check()
    check_info()
    with tempfile.TemporaryDirectory() as tmp:
        check_run(tmp)
    return done("all control-flow CLI checks passed")


if __name__ == "__main__":
    sys.exit(main())
