#!/usr/bin/env bash
# main-job.sh — the main job on the bundled example model, from a fresh clone:
# installs dependencies, builds libmopt, then
#   1. inspects the model (mopt info),
#   2. optimizes it and benchmarks it against its unoptimized self
#      (mopt-bench: load time, p50/p90/p95/p99, throughput, memory, top ops),
#   3. runs libmopt and ONNX Runtime side by side on the same inputs and
#      threads (bench/compare.py: latency table, ratio, output difference).
# usage: scripts/main-job.sh [MODEL.onnx] [--dim NAME=N]...
#        (default: examples/models/bert_tiny.onnx at batch 1, seq 128)
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=examples/models/bert_tiny.onnx
if [ $# -gt 0 ] && [[ "$1" != --* ]]; then MODEL=$1; shift; fi
DIMS=("$@")
[ ${#DIMS[@]} -eq 0 ] && DIMS=(--dim batch=1 --dim seq=128)
THREADS=${THREADS:-1}

bash scripts/install-deps.sh
# Every Python step runs in the project's venv (requirements.txt), nothing else.
export VIRTUAL_ENV=$PWD/.venv PATH="$PWD/.venv/bin:$PATH"
unset PYTHONPATH PYTHONHOME
if [ ! -d build ]; then
    meson setup build >/dev/null
elif [ .venv/pyvenv.cfg -nt build/meson-private/coredata.dat ]; then
    meson setup --reconfigure build >/dev/null   # so meson picks the venv's python
fi
ninja -C build >/dev/null

echo "== 1. mopt info $MODEL"
./build/tools/mopt/mopt info "$MODEL"

echo
echo "== 2. optimized (opt_level 3, the default) vs unoptimized (opt_level 0), $THREADS thread(s)"
for lvl in 0 3; do
    ./build/bench/mopt-bench "$MODEL" "${DIMS[@]}" --threads "$THREADS" --opt-level "$lvl" \
        --warmup 3 --iterations 30 --no-progress --top 5
    echo
done

echo "== 3. libmopt vs ONNX Runtime, same model, inputs and threads"
python3 bench/compare.py "$MODEL" "${DIMS[@]}" --threads "$THREADS" --iterations 30 \
    --mopt-config opt_level=0 --mopt-config opt_level=3
