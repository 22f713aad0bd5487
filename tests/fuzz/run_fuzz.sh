#!/usr/bin/env bash
# run_fuzz.sh — runs the libFuzzer targets of tests/fuzz on seed corpora made
# from the committed test files (make_seeds.py). Used by the meson suite
# "fuzz" (20 s per target, fixed seed, fresh corpus) and by hand for longer
# campaigns. Nothing it writes is committed: corpora, seeds and crash
# artifacts live in the build folder; only the minimized corpus of
# tests/fuzz/corpus/ is committed (see below).
#
# Build (clang only; the library itself is instrumented for coverage):
#   CC=clang meson setup build-fuzz -Dfuzz=true -Dbuildtype=debugoptimized \
#       -Db_sanitize=address,undefined -Db_lundef=false
#   ninja -C build-fuzz
#
# Usage: tests/fuzz/run_fuzz.sh [-b BUILD] [-t SECONDS] [-s SEED] [-j JOBS]
#                               [--short] [TARGET ...] [-- LIBFUZZER_ARGS ...]
#   TARGET     onnx_model tensor_pb npy options_yaml mopt (default: all, one
#              after the other)
#   -b BUILD   build folder (default build-fuzz)
#   -t SECONDS time per target (default 600)
#   -s SEED    libFuzzer seed (default 0: random)
#   -j JOBS    parallel fuzzing processes per target (default 1)
#   --short    the quick check of the meson test: small seed set and a
#              throw-away corpus
#   -k         keep going after a crash (libFuzzer -fork=JOBS with
#              -ignore_crashes/-ignore_timeouts/-ignore_ooms): collects every
#              finding of a long campaign instead of stopping at the first
# Long campaigns keep their corpus in BUILD/tests/fuzz/work/<target>/corpus,
# so each run continues where the last stopped, e.g. an hour per target on
# two cores:
#   tests/fuzz/run_fuzz.sh -t 3600 -j 2 onnx_model
# and start from the committed corpus tests/fuzz/corpus/<target> too: what
# earlier campaigns found, minimized (files under 64 KB, libFuzzer -merge=1,
# without the seeds, which make_seeds.py rebuilds from the committed tests).
# Refresh it after a campaign:
#   mkdir new && fuzz_<target> -merge=1 new BUILD/tests/fuzz/work/<target>/corpus
#   (keep files < 64 KB), then replace tests/fuzz/corpus/<target> with new.
# The meson test fuzz_corpus_<target> replays it (no mutation) every run.
# A crash, leak, sanitizer report, timeout (> 10 s per input) or a broken
# API promise (a failure without a message, ...) stops the target with a
# non-zero status and leaves the input in BUILD/tests/fuzz/work/<target>/
# artifacts. Reproduce it with BUILD/tests/fuzz/fuzz_<target> FILE, shrink
# it with -minimize_crash=1 -runs=20000, fix the library, and add the input
# as a regression: tests/hostile/corpus/ (with a line in its EXPECTED) when
# mopt_model_load must refuse it, else tests/fuzz/regressions/ (prefix
# model_, mopt_, tensor_, npy_ or options_; test_fuzz_regressions runs them).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=build-fuzz
seconds=600
seed=0
jobs=1
short=0
keep=0
targets=()
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
    -b) build=$2; shift 2 ;;
    -t) seconds=$2; shift 2 ;;
    -s) seed=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    --short) short=1; shift ;;
    -k) keep=1; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) targets+=("$1"); shift ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=(onnx_model tensor_pb npy options_yaml mopt)
build=$(cd "$build" && pwd)

status=0
for t in "${targets[@]}"; do
    exe="$build/tests/fuzz/fuzz_$t"
    [ -x "$exe" ] || { echo "run_fuzz.sh: $exe not built (-Dfuzz=true with clang?)" >&2; exit 2; }
    case "$t" in
    onnx_model|tensor_pb) dict=onnx.dict ;;
    *) dict=$t.dict ;;
    esac
    work="$build/tests/fuzz/work/$t"
    mkdir -p "$work/artifacts"
    if [ $short = 1 ]; then
        seeds="$build/tests/fuzz/seeds-small"
        corpus=$(mktemp -d "${TMPDIR:-/tmp}/mopt-fuzz-$t.XXXXXX")
        trap 'rm -rf "$corpus"' EXIT
        python3 "$src/tests/fuzz/make_seeds.py" "$src" "$seeds" --small "$t" >/dev/null
        small=--small
    else
        seeds="$build/tests/fuzz/seeds"
        corpus="$work/corpus"
        mkdir -p "$corpus"
        python3 "$src/tests/fuzz/make_seeds.py" "$src" "$seeds" "$t"
        small=
    fi
    if [ "$t" = mopt ] && [ -x "$build/tests/fuzz/fuzz_make_mopt" ]; then
        # valid .mopt images of the ONNX seeds (the onnx_model seed list)
        python3 "$src/tests/fuzz/make_seeds.py" "$src" "$seeds" $small onnx_model >/dev/null
        ASAN_OPTIONS=detect_leaks=0 "$build/tests/fuzz/fuzz_make_mopt" "$seeds/mopt" \
            "$seeds"/onnx_model/* 2>/dev/null | tail -1 || true
    fi
    # the committed, minimized corpus (tests/fuzz/corpus/<target>) joins
    # the seeds of long runs; the short meson test keeps its small set
    committed=
    [ $short = 1 ] || [ ! -d "$src/tests/fuzz/corpus/$t" ] || committed="$src/tests/fuzz/corpus/$t"
    args=(-max_total_time="$seconds" -seed="$seed" -timeout=10 -rss_limit_mb=2048
          -dict="$src/tests/fuzz/$dict" -artifact_prefix="$work/artifacts/"
          -print_final_stats=1)
    if [ $keep = 1 ]; then
        args+=(-fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
    elif [ "$jobs" -gt 1 ]; then
        args+=(-jobs="$jobs" -workers="$jobs")
    fi
    echo "== fuzz_$t: ${seconds}s, seed $seed, corpus $corpus"
    rc=0
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
        "$exe" "${args[@]}" "${extra[@]}" "$corpus" "$seeds/$t" $committed || rc=$?
    if [ $rc != 0 ]; then
        echo "== fuzz_$t FAILED (exit $rc); inputs in $work/artifacts/" >&2
        status=1
    fi
    if [ $short = 1 ]; then rm -rf "$corpus"; trap - EXIT; fi
done
exit $status
