#!/usr/bin/env bash
# test.sh — the whole test suite from a fresh clone: installs dependencies,
# builds with gcc (release) and runs every meson suite, builds with clang
# (warnings as errors), and reruns the unit, hostile and ops suites under
# AddressSanitizer + UndefinedBehaviorSanitizer (and the models suite, and
# the HTTP server example's malformed-request battery), and
# reruns the suite "tsan" (sessions, the batcher and the shared thread pool on threads) under
# ThreadSanitizer, and
# runs each libFuzzer target for 20 s (clang, suite "fuzz"; tests/fuzz).
# The "conformance" suite (ONNX backend node tests) generates its data from
# the pinned onnx package into the build folder; MOPT_CONFORMANCE_DATA
# points it at another copy. Its per-op report lands in
# build/tests/conformance/conformance_report.md.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
# Every Python step runs in the project's venv (requirements.txt), nothing else.
export VIRTUAL_ENV=$PWD/.venv PATH="$PWD/.venv/bin:$PATH"
unset PYTHONPATH PYTHONHOME

# setup DIR ARGS...: configures DIR, or reconfigures it when the venv is newer
# than its configuration (so that meson's find_program picks the venv's python).
setup() {
    local dir=$1
    shift
    if [ ! -d "$dir" ]; then
        meson setup "$dir" "$@" >/dev/null
    elif [ .venv/pyvenv.cfg -nt "$dir/meson-private/coredata.dat" ]; then
        meson setup --reconfigure "$dir" >/dev/null
    fi
}

jobs=$(nproc)
echo "== gcc release build + all suites"
setup build
ninja -C build
meson test -C build --print-errorlogs --num-processes "$jobs"
grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' build/meson-logs/testlog.txt || true

echo "== clang build (-Werror)"
CC=clang setup build-clang -Dtests=true
ninja -C build-clang

echo "== ASan + UBSan: unit, hostile, ops, models, passes, patterns, abi, conformance, serve-hostile suites"
setup build-asan -Dbuildtype=debug -Db_sanitize=address,undefined -Db_lundef=false
ninja -C build-asan
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    meson test -C build-asan --print-errorlogs --num-processes "$jobs" \
    --suite unit --suite hostile --suite ops --suite models --suite passes --suite patterns --suite abi \
    --suite conformance --suite serve-hostile

# ~1 min: only the library and the suite's tests are built. Sessions run with
# 1 thread, except test_threadpool's and test_cpu_pool's: their concurrency is
# the callers' threads and the library's own workers (instrumented); the
# OpenMP runtime is not TSan-instrumented (tests/tsan.supp).
echo "== ThreadSanitizer (clang): suite tsan"
CC=clang setup build-tsan -Dbuildtype=debug -Db_sanitize=thread -Db_lundef=false \
    -Dbench=false -Dexamples=false
ninja -C build-tsan $(meson introspect build-tsan --tests |
    python3 -c 'import json,sys; print(" ".join(sorted({t["cmd"][0] for t in json.load(sys.stdin) if "mopt:tsan" in t["suite"]})))' |
    sed "s|$PWD/build-tsan/||g")
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    meson test -C build-tsan --no-rebuild --print-errorlogs --num-processes "$jobs" --suite tsan

# ~1.5 min on 2 cores: only the fuzz targets are built (not the other tests)
echo "== libFuzzer targets (clang, ASan + UBSan): suite fuzz, 20 s per target, fixed seed"
CC=clang setup build-fuzz -Dfuzz=true -Dbuildtype=debugoptimized \
    -Db_sanitize=address,undefined -Db_lundef=false -Dbench=false -Dexamples=false
ninja -C build-fuzz $(cd build-fuzz && ninja -t targets all | grep -oE '^tests/fuzz/fuzz_[a-z_]+:' |
    tr -d ':' | sort -u)
meson test -C build-fuzz --no-rebuild --print-errorlogs --num-processes "$jobs" --suite fuzz

python3 tests/models/check_models.py
