#!/usr/bin/env bash
# test.sh — the whole test suite from a fresh clone: installs dependencies,
# builds with gcc (release) and runs every meson suite, builds with clang
# (warnings as errors), and reruns the unit, hostile and ops suites under
# AddressSanitizer + UndefinedBehaviorSanitizer (and the models suite).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

jobs=$(nproc)
echo "== gcc release build + all suites"
[ -d build ] || meson setup build >/dev/null
ninja -C build
meson test -C build --print-errorlogs --num-processes "$jobs"

echo "== clang build (-Werror)"
[ -d build-clang ] || CC=clang meson setup build-clang -Dtests=true >/dev/null
ninja -C build-clang

echo "== ASan + UBSan: unit, hostile, ops, models, abi suites"
[ -d build-asan ] || meson setup build-asan -Dbuildtype=debug -Db_sanitize=address,undefined \
    -Db_lundef=false >/dev/null
ninja -C build-asan
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    meson test -C build-asan --print-errorlogs --num-processes "$jobs" \
    --suite unit --suite hostile --suite ops --suite models --suite passes --suite patterns --suite abi

python3 tests/models/check_models.py
