"""cli_check.py — what the passes suite's CLI test scripts (test_prune.py,
test_fuse_qkv.py) share: the list of failed checks, a check that records and
prints one, and a runner for the `mopt` executable under test."""
import subprocess

failures = []


def check(cond, what, r=None):
    """Record `what` as failed unless cond; print the run's output tails if r is given."""
    if not cond:
        failures.append(what)
        print("FAIL:", what)
        if r is not None:
            print("  stdout:", r.stdout[-3000:])
            print("  stderr:", r.stderr[-3000:])


def runner(exe):
    """A function that runs `exe ARGS...` and returns the completed process."""
    def run(*args):
        return subprocess.run([exe, *args], capture_output=True, text=True)
    return run
