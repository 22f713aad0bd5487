#!/usr/bin/env bash
# install-deps.sh — installs what building and testing libmopt needs on a
# Debian 12 machine: Debian packages (compilers, meson, oneDNN, OpenBLAS,
# libyaml, cmocka) and the Python test tooling from PyPI. Idempotent: skips
# what is already there. Needs root (or sudo) for apt-get.
set -euo pipefail

APT_PACKAGES=(build-essential clang meson ninja-build pkg-config libyaml-dev libcmocka-dev
              libdnnl-dev libopenblas-openmp-dev python3 python3-pip)
# onnx is pinned: the conformance suite generates the ONNX backend node tests
# from it, and tests/conformance/known_failures.txt is reviewed against that
# version (tests/conformance/meson.build checks the same pin).
ONNX_VERSION=1.23.2
PIP_PACKAGES=(numpy "onnx==$ONNX_VERSION" onnxruntime pytest)

missing=()
for p in "${APT_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    echo "install-deps: apt-get install ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! python3 -c "import numpy, onnx, onnxruntime, pytest
assert onnx.__version__ == '$ONNX_VERSION'" >/dev/null 2>&1; then
    echo "install-deps: pip install ${PIP_PACKAGES[*]}"
    python3 -m pip install -q "${PIP_PACKAGES[@]}" 2>/dev/null ||
        python3 -m pip install -q --break-system-packages "${PIP_PACKAGES[@]}"
fi
