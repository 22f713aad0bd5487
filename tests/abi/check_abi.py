#!/usr/bin/env python3
"""check_abi.py — the ABI baseline check of libmopt (meson suite "abi").

libmopt.so is built without debug information (buildtype=release), and
abidiff needs DWARF to see types. The build therefore makes a twin,
libmopt_abi_twin.so (tests/abi/meson.build): the files that define the
MOPT_API functions (lib/api/*.c and the four lib/core files) compiled again
with -g, linked with the same objects and the same version script. This
script first checks that the twin exports exactly what libmopt.so exports,
then describes it with abidw (only the types of include/mopt, no paths), and
compares that with the committed baseline tests/abi/libmopt.abi with
abidiff. It fails on any change abidiff reports between the two: a removed
or renamed function, a changed parameter or return type, a changed struct
layout (mopt_allocator), a renumbered enum. Additions (new functions, new
enum values at the end) are compatible and pass.

Refreshing the baseline is a deliberate act, done when a new soversion is
released (an incompatible change) or to record additions, never to make the
test pass:
    python3 tests/abi/check_abi.py --update <builddir>/tests/abi/libmopt_abi_twin.so \\
        include/mopt tests/abi/libmopt.abi
and commit tests/abi/libmopt.abi with the change that made it necessary.

usage: check_abi.py TWIN.so LIBMOPT.so HEADERS_DIR BASELINE.abi OUT.abi
       check_abi.py --update TWIN.so HEADERS_DIR BASELINE.abi
"""
import shutil
import subprocess
import sys

ABIDW_FLAGS = ["--no-corpus-path", "--no-comp-dir-path", "--no-show-locs", "--no-architecture",
               "--drop-private-types", "--type-id-style", "hash"]

# abidiff exit status bits (libabigail's abidiff manual)
ABIDIFF_ERROR = 1
ABIDIFF_USAGE_ERROR = 2
ABIDIFF_ABI_CHANGE = 4
ABIDIFF_ABI_INCOMPATIBLE_CHANGE = 8


def dynamic_symbols(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True,
                         text=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines()
            if len(line.split()) >= 2 and line.split()[-2] != "A"}


def describe(twin, headers, out):
    r = subprocess.run(["abidw", "--headers-dir", headers, *ABIDW_FLAGS, "--out-file", out,
                        twin], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("check_abi: abidw failed (%d): %s" % (r.returncode, r.stderr))
    with open(out, encoding="utf-8") as f:
        text = f.read()
    # A description without the API's types means the twin lost its debug info.
    if "mopt_allocator" not in text or "mopt_status" not in text:
        raise SystemExit("check_abi: abidw found no type information in %s (is it built "
                         "with -g?)" % twin)


def main(argv):
    for tool in ("abidw", "abidiff", "nm"):
        if not shutil.which(tool):
            print("check_abi: %s is missing (Debian: apt-get install abigail-tools "
                  "binutils; scripts/install-deps.sh does)" % tool, file=sys.stderr)
            return 77  # skipped, never counted as a pass
    if len(argv) == 5 and argv[1] == "--update":
        _, _, twin, headers, baseline = argv
        describe(twin, headers, baseline)
        print("check_abi: wrote %s from %s" % (baseline, twin))
        return 0
    if len(argv) != 6:
        raise SystemExit(__doc__)
    _, twin, shared, headers, baseline, out = argv
    twin_syms, real_syms = dynamic_symbols(twin), dynamic_symbols(shared)
    if twin_syms != real_syms:
        print("check_abi: the twin %s and %s export different symbols; add the file that "
              "defines them to the twin in tests/abi/meson.build:\n  only in the twin: %s\n"
              "  only in libmopt: %s" % (twin, shared, sorted(twin_syms - real_syms),
                                         sorted(real_syms - twin_syms)), file=sys.stderr)
        return 1
    describe(twin, headers, out)
    # No --headers-dir here: both descriptions were made with it (private types
    # are declaration-only) and without locations, so abidiff given the
    # headers again would take every type for a private one and hide changes.
    r = subprocess.run(["abidiff", "--no-added-syms", "--no-show-locs", baseline, out],
                       capture_output=True, text=True)
    if r.returncode & (ABIDIFF_ERROR | ABIDIFF_USAGE_ERROR):
        print("check_abi: abidiff failed (%d): %s%s" % (r.returncode, r.stdout, r.stderr),
              file=sys.stderr)
        return 1
    if r.returncode:
        kind = ("an incompatible" if r.returncode & ABIDIFF_ABI_INCOMPATIBLE_CHANGE else "a")
        print("check_abi: %s change of the ABI against the baseline %s:\n%s\n"
              "If it is deliberate (a new soversion), refresh the baseline as the docstring of "
              "tests/abi/check_abi.py says." % (kind, baseline, r.stdout), file=sys.stderr)
        return 1
    print("check_abi: %d exported functions; no change against %s except additions"
          % (len(real_syms), baseline))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
