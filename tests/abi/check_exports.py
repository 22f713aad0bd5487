#!/usr/bin/env python3
"""check_exports.py — the ABI check of libmopt.so and libmopt.a (meson suite "abi").

Asserts that
- lib/mopt.exports (the explicit export list that drives the version script
  and the static localization) names exactly the MOPT_API functions
  declared in include/mopt/mopt.h;
- the dynamic symbols libmopt.so defines are exactly those: no internal
  symbol leaks out, and nothing declared is missing;
- libmopt.a is one prelinked object whose defined globals (nm -g) are
  exactly those too. Undefined references (libc, oneDNN, OpenMP...) are
  not definitions and are not counted; nothing else from the toolchain is
  allowed (STATIC_TOOLCHAIN_GLOBALS, empty with gcc 12 and clang 14, is
  where such a symbol would have to be named);
- tests/abi/test_symbols.c takes the address of every declared function,
  so that list cannot silently fall behind the header.

usage: check_exports.py include/mopt/mopt.h lib/mopt.exports LIBMOPT.so LIBMOPT.a
                        tests/abi/test_symbols.c
"""
import os
import re
import subprocess
import sys

# lib/mopt.exports is read as the build reads it (scripts/build/exports.py)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts", "build"))
from exports import read_exports  # noqa: E402

# Defined globals that the toolchain itself would add to libmopt.a and that
# cannot be made local; none today.
STATIC_TOOLCHAIN_GLOBALS = set()


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


def static_globals(lib):
    """Members of the archive and {name: nm type} of its defined globals."""
    members = subprocess.run(["ar", "t", lib], check=True, capture_output=True,
                             text=True).stdout.split()
    out = subprocess.run(["nm", "-g", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2 or line.endswith(":"):
            continue
        syms[parts[-1]] = parts[-2]
    return members, syms


def main():
    if len(sys.argv) != 6:
        raise SystemExit(__doc__)
    header, exports_file, shared, static, test_symbols = sys.argv[1:6]
    declared = header_functions(header)
    if len(declared) < 10:
        raise SystemExit("check_exports: found only %d MOPT_API functions in %s; the parser "
                         "is broken" % (len(declared), header))
    errors = []
    listed = read_exports(exports_file)
    for name in sorted(set(n for n in listed if listed.count(n) > 1)):
        errors.append("%s lists %s twice" % (exports_file, name))
    for name in sorted(declared - set(listed)):
        errors.append("%s is declared MOPT_API in mopt.h but missing from %s (add it there)"
                      % (name, exports_file))
    for name in sorted(set(listed) - declared):
        errors.append("%s lists %s, which mopt.h does not declare MOPT_API"
                      % (exports_file, name))

    exported = exported_symbols(shared)
    for name in sorted(set(exported) - declared):
        errors.append("%s: exported but not declared MOPT_API in mopt.h (an internal symbol "
                      "leaks): %s (nm type %s)" % (shared, name, exported[name]))
    for name in sorted(declared - set(exported)):
        errors.append("declared MOPT_API in mopt.h but not exported by %s: %s" % (shared, name))
    for name in sorted(declared & set(exported)):
        if exported[name] not in ("T", "t", "i"):
            errors.append("%s: %s is exported as nm type %s, not as a function"
                          % (shared, name, exported[name]))

    members, sglobals = static_globals(static)
    if len(members) != 1:
        errors.append("%s has %d members (%s), not one prelinked object"
                      % (static, len(members), " ".join(members[:5])))
    allowed = declared | STATIC_TOOLCHAIN_GLOBALS
    leaks = sorted(set(sglobals) - allowed)
    for name in leaks[:40]:
        errors.append("%s: defined global that is not in the API (a host program defining "
                      "the same name would clash): %s (nm type %s)"
                      % (static, name, sglobals[name]))
    if len(leaks) > 40:
        errors.append("%s: ... and %d more internal globals" % (static, len(leaks) - 40))
    for name in sorted(declared - set(sglobals)):
        errors.append("declared MOPT_API in mopt.h but not a global of %s: %s" % (static, name))
    for name in sorted(declared & set(sglobals)):
        if sglobals[name] != "T":
            errors.append("%s: %s has nm type %s, not T" % (static, name, sglobals[name]))

    with open(test_symbols, encoding="utf-8") as f:
        test_src = strip_comments(f.read())
    taken = set(re.findall(r"\bSYM\(\s*(mopt_\w+)\s*\)", test_src))
    for name in sorted(declared - taken):
        errors.append("%s does not take the address of %s (add SYM(%s))"
                      % (test_symbols, name, name))
    for name in sorted(taken - declared):
        errors.append("%s lists %s, which mopt.h does not declare" % (test_symbols, name))
    for e in errors:
        print("check_exports: " + e, file=sys.stderr)
    if errors:
        return 1
    print("check_exports: %d functions declared, listed in %s, exported by %s and the only "
          "globals of %s (one object)" % (len(declared), exports_file, shared, static))
    return 0


if __name__ == "__main__":
    sys.exit(main())
