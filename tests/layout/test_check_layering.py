#!/usr/bin/env python3
"""test_check_layering.py — proves check_layering.py catches what it claims to
(suite "layout"): on a small synthetic tree it must fail on an upward include,
an include between peers, a stale or uncommented allow-list line and a
MOPT_HAVE_* test without "mopt_config.h", and pass once each is fixed.

usage: test_check_layering.py tests/layout/check_layering.py
"""
import os
import subprocess
import sys
import tempfile


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def check(script, root, allow):
    write(root, "allow.txt", allow)
    r = subprocess.run([sys.executable, script, root, os.path.join(root, "allow.txt")],
                       capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    script = os.path.abspath(sys.argv[1])
    failures = []

    def expect(name, root, allow, rc, needle):
        got, out = check(script, root, allow)
        if got != rc or needle not in out:
            failures.append("%s: expected exit %d with %r, got %d:\n%s" % (name, rc, needle, got, out))

    with tempfile.TemporaryDirectory() as root:
        write(root, "lib/core/error.h", "/* core */\n")
        write(root, "lib/ir/ir.h", '#include "core/error.h"\n')
        write(root, "lib/ops/ops.h", '#include "ir/ir.h"\n#include "kernels/k.h"\n')
        write(root, "kernels/k.h", '#include "core/error.h"\n')
        write(root, "lib/passes/passes.h", '#include "ops/ops.h"\n')
        write(root, "lib/runtime/runtime.h", '#include "passes/passes.h"\n')
        write(root, "lib/passes/p.c", '#include "ops/ops.h"\n')
        expect("clean tree", root, "", 0, "nothing else")
        write(root, "lib/passes/p.c", '#include "ops/ops.h"\n#include "runtime/runtime.h"\n')
        expect("upward include", root, "", 1, "passes -> runtime is upward")
        expect("folder cycle", root, "", 1, "folder cycle between passes, runtime")
        listed = "lib/passes/p.c -> lib/runtime/runtime.h  # known\n"
        expect("allow-listed", root, listed, 0, "known (allow-listed)")
        expect("uncommented entry", root, "lib/passes/p.c -> lib/runtime/runtime.h\n", 1,
               "has no comment")
        write(root, "lib/passes/p.c", '#include "ops/ops.h"\n')
        expect("stale entry", root, listed, 1, "delete this line")
        write(root, "kernels/k.h", '#include "ir/ir.h"\n')
        expect("peers", root, "", 1, "sideways, between peers")
        write(root, "kernels/k.h", '#include "core/error.h"\n')
        write(root, "lib/ops/b.c", "#ifdef MOPT_HAVE_ONEDNN\n#endif\n")
        expect("config include", root, "", 1, 'does not #include "mopt_config.h"')
        write(root, "lib/ops/b.c", '#include "mopt_config.h"\n#ifdef MOPT_HAVE_ONEDNN\n#endif\n')
        expect("config include fixed", root, "", 0, "nothing else")
    for f in failures:
        print("test_check_layering: " + f, file=sys.stderr)
    if not failures:
        print("test_check_layering: 10 cases OK")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
