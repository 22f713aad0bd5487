"""cli_check.py — what the end-to-end tests of the `mopt` tool share.

The tools/mopt/test_cli*.py scripts run as `SCRIPT MOPT_EXECUTABLE SOURCE_ROOT`:
mopt() runs the executable and captures its output, check() records a failed
expectation (with the tail of the command's output when it is given), and
done() prints the verdict and returns the exit status for sys.exit().
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


def done(passed="ok"):
    """1 when a check failed, else 0 after printing `passed`."""
    if failures:
        print("%d check(s) failed" % len(failures), file=sys.stderr)
        return 1
    print(passed)
    return 0
