#!/usr/bin/env python3
"""check_exports.py — the ABI check of libmopt.so (meson suite "abi").

Asserts that the dynamic symbols the shared library defines are exactly the
MOPT_API functions declared in include/mopt/mopt.h: no internal symbol leaks
out, and nothing declared is missing. With a third argument it also checks
that tests/abi/test_symbols.c takes the address of every declared function,
so that list cannot silently fall behind the header.

usage: check_exports.py LIBMOPT.so include/mopt/mopt.h [tests/abi/test_symbols.c]
"""
import re
import subprocess
import sys


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def header_functions(path):
    with open(path, encoding="utf-8") as f:
        text = strip_comments(f.read())
    # drop the MOPT_API macro definitions themselves
    text = re.sub(r"^\s*#.*$", " ", text, flags=re.M)
    names = re.findall(r"\bMOPT_API\b[^;{(]*?\b(\w+)\s*\(", text)
    return set(names)


def exported_symbols(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        kind, name = parts[-2], parts[-1]
        if kind == "A":  # version nodes such as MOPT_0
            continue
        syms[name.split("@")[0]] = kind
    return syms


def main():
    if len(sys.argv) not in (3, 4):
        raise SystemExit(__doc__)
    lib, header = sys.argv[1], sys.argv[2]
    declared = header_functions(header)
    if len(declared) < 10:
        raise SystemExit("check_exports: found only %d MOPT_API functions in %s; the parser "
                         "is broken" % (len(declared), header))
    exported = exported_symbols(lib)
    errors = []
    for name in sorted(set(exported) - declared):
        errors.append("exported but not declared MOPT_API in mopt.h (an internal symbol "
                      "leaks): %s (nm type %s)" % (name, exported[name]))
    for name in sorted(declared - set(exported)):
        errors.append("declared MOPT_API in mopt.h but not exported by %s: %s" % (lib, name))
    for name in sorted(declared & set(exported)):
        if exported[name] not in ("T", "t", "i"):
            errors.append("%s is exported as nm type %s, not as a function"
                          % (name, exported[name]))
    if len(sys.argv) == 4:
        with open(sys.argv[3], encoding="utf-8") as f:
            test_src = strip_comments(f.read())
        listed = set(re.findall(r"\bSYM\(\s*(mopt_\w+)\s*\)", test_src))
        for name in sorted(declared - listed):
            errors.append("%s does not take the address of %s (add SYM(%s))"
                          % (sys.argv[3], name, name))
        for name in sorted(listed - declared):
            errors.append("%s lists %s, which mopt.h does not declare" % (sys.argv[3], name))
    for e in errors:
        print("check_exports: " + e, file=sys.stderr)
    if errors:
        return 1
    print("check_exports: %d functions declared and exported, nothing else exported"
          % len(declared))
    return 0


if __name__ == "__main__":
    sys.exit(main())
