#!/usr/bin/env python3
"""check_format.py — every C source and header of lib/, kernels/, include/,
tests/, bench/ and tools/ is formatted as the repo's .clang-format says
(meson suite "layout", test clang_format).

Runs `clang-format --dry-run --Werror` on the files git tracks there (all
*.c and *.h under those folders when the tree is not a git checkout) and
lists every file that is not clean, with the fix. clang-format 14 is the
version the formatting was made with; another major version formats some
constructs differently, so it is refused rather than trusted. Without
clang-format the test is skipped (exit 77), never passed.

usage: check_format.py SOURCE_ROOT [CLANG_FORMAT]
"""
import os
import re
import subprocess
import sys

FOLDERS = ["lib", "kernels", "include", "tests", "bench", "tools"]
REQUIRED_MAJOR = 14


def sources(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--"] + FOLDERS,
                             check=True, capture_output=True, text=True).stdout
        files = [f for f in out.split("\0") if f.endswith((".c", ".h"))]
        if files:
            return sorted(files)
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for top in FOLDERS:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if n.endswith((".c", ".h")):
                    files.append(os.path.relpath(os.path.join(dirpath, n), root))
    return sorted(files)


def main(argv):
    if len(argv) not in (2, 3):
        raise SystemExit(__doc__)
    root = argv[1]
    tool = argv[2] if len(argv) == 3 else "clang-format"
    try:
        version = subprocess.run([tool, "--version"], check=True, capture_output=True,
                                 text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        print("check_format: %s not found: skipped" % tool)
        return 77
    m = re.search(r"version (\d+)\.", version)
    if not m or int(m.group(1)) != REQUIRED_MAJOR:
        print("check_format: %s is not clang-format %d (%s): the repo is formatted with %d"
              % (tool, REQUIRED_MAJOR, version.strip(), REQUIRED_MAJOR), file=sys.stderr)
        return 1
    if not os.path.isfile(os.path.join(root, ".clang-format")):
        print("check_format: no .clang-format at %s" % root, file=sys.stderr)
        return 1
    files = sources(root)
    if len(files) < 50:
        print("check_format: found only %d C files under %s; the file search is broken"
              % (len(files), ", ".join(FOLDERS)), file=sys.stderr)
        return 1
    bad = []
    for i in range(0, len(files), 40):
        chunk = files[i:i + 40]
        r = subprocess.run([tool, "--dry-run", "--Werror", "--style=file"] + chunk, cwd=root,
                           capture_output=True, text=True)
        if r.returncode != 0:
            bad += sorted(set(re.findall(r"^(\S+?):\d+:\d+: error", r.stderr, re.M)) & set(chunk)
                          or chunk)
    for f in bad:
        print("check_format: not formatted: %s" % f, file=sys.stderr)
    if bad:
        print("check_format: %d of %d files; fix with: clang-format-%d -i %s"
              % (len(bad), len(files), REQUIRED_MAJOR, " ".join(bad)), file=sys.stderr)
        return 1
    print("check_format: %d files formatted as .clang-format says" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
