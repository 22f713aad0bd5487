"""cli_check.py — what the end-to-end tests of the `mopt` tool share.

The tools/mopt/test_cli*.py scripts run as `SCRIPT MOPT_EXECUTABLE SOURCE_ROOT`:
mopt() runs the executable and captures its output, check() records a failed
expectation (with the tail of the command's output when it is given),
save_model() writes the ONNX model of a test graph, and done() prints the
verdict and returns the exit status for sys.exit().
"""
import subprocess
import sys

MOPT = sys.argv[1]
ROOT = sys.argv[2] if len(sys.argv) > 2 else None
failures = []


def mopt(*args, env=None):
    return subprocess.run([MOPT, *args], capture_output=True, text=True, env=env)


def check(cond, what, r=None):
    if not cond:
        if r is not None:
            what += "\n--- stdout:\n%s--- stderr:\n%s" % (r.stdout[-4000:], r.stderr[-4000:])
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)


def save_model(graph, path):
    """Saves graph at path as an opset-17, IR-version-8 ONNX model, checked by
    onnx.checker first."""
    import onnx  # only the scripts that build models need it
    m = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def done(passed="ok"):
    """1 when a check failed, else 0 after printing `passed`."""
    if failures:
        print("%d check(s) failed" % len(failures), file=sys.stderr)
        return 1
    print(passed)
    return 0
