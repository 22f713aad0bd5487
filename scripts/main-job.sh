#!/usr/bin/env bash
# main-job.sh — the main job on the bundled example model, from a fresh clone:
# installs dependencies, builds libmopt, inspects the model, runs it on seeded
# inputs and checks its outputs against ONNX Runtime on the same inputs.
# usage: scripts/main-job.sh [MODEL.onnx]
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:-examples/models/bert_tiny.onnx}

bash scripts/install-deps.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
echo "== mopt info $MODEL"
./build/examples/cli/mopt info "$MODEL"
echo
echo "== inputs (seeded) and ONNX Runtime reference"
python3 scripts/ort_reference.py "$MODEL" "$OUT"
args=()
for f in "$OUT"/in/*.npy; do
    n=$(basename "$f" .npy)
    args+=(--input "$n=$f")
done
echo
echo "== mopt run"
./build/examples/cli/mopt run "$MODEL" "${args[@]}" --output-dir "$OUT/mopt"
echo
echo "== libmopt vs ONNX Runtime"
python3 scripts/ort_reference.py --compare "$OUT/ort" "$OUT/mopt"
