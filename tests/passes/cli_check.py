"""cli_check.py — what the passes suite's CLI test scripts (test_prune.py,
test_fuse_qkv.py, test_fuse_conv_dw.py) share: the list of failed checks, a
check that records and prints one, a runner for the `mopt` executable under
test, an options file writer, a reader of one pass's row in `mopt optimize
--report` and a check of how many rewrites that row counts."""
import os
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


def options(tmp, name, **kv):
    """Write KEY: VALUE lines to TMP/NAME.yaml and return its path."""
    p = os.path.join(tmp, name + ".yaml")
    with open(p, "w") as f:
        for k, v in kv.items():
            f.write("%s: %s\n" % (k, v))
    return p


def report_row(text, name):
    """(before, after, rewrites, note) of the pass `name` in the report."""
    for line in text.splitlines():
        f = line.split(None, 5)
        if f and f[0] == name and len(f) >= 5:
            return int(f[2]), int(f[3]), int(f[4]), f[5] if len(f) > 5 else ""
    return None


def check_rewrites(r, name, label, level, want, verb="rewrites"):
    """Check the `mopt optimize --report` run r: pass `name` is absent at
    opt_level 2 and counts `want` rewrites at opt_level 3."""
    row = report_row(r.stdout, name)
    if level == 2:
        check(row is None, "%s O2: no %s" % (label, name), r)
    else:
        check(row is not None and row[2] == want,
              "%s O3: %s %s %d: %s" % (label, name, verb, want, row), r)
