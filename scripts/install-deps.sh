#!/usr/bin/env bash
# install-deps.sh — installs what building and testing libmopt needs on a
# Debian 12 machine: Debian packages (compilers, meson, oneDNN, OpenBLAS,
# libyaml, cmocka, python3-venv) and the project's Python virtual environment
# .venv, made from the exact pins of requirements.txt without the system's
# site-packages. Idempotent: skips what is already there (the venv is
# reinstalled only when requirements.txt changes). Needs root (or sudo) for
# apt-get. Scripts then use the venv with:  export PATH="$PWD/.venv/bin:$PATH"
# (meson finds .venv/bin/python3 by itself: see meson.build).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(build-essential clang meson ninja-build pkg-config libyaml-dev libcmocka-dev zlib1g-dev
              libdnnl-dev libopenblas-openmp-dev python3 python3-pip python3-venv
              abigail-tools libmicrohttpd-dev libpng-dev libjpeg62-turbo-dev
              libfreetype-dev fonts-dejavu-core
              bible-kjv bible-kjv-text)  # examples/generate/train.py: the training text
# abigail-tools: abidw/abidiff for the ABI baseline check (tests/abi).
# libmicrohttpd-dev: the HTTP server example (examples/serve, suite "serve").
# libpng-dev, libjpeg62-turbo-dev: examples/common's image library (detect, ocr).
# libfreetype-dev, fonts-dejavu-core: the ocr test renders its images (examples/ocr).
# cargo builds and tests the Rust crates (bindings/rust, offline, std only);
# one already on PATH (rustup's) is used as it is.
command -v cargo >/dev/null 2>&1 || APT_PACKAGES+=(cargo)

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

VENV=$PWD/.venv
REQ=$PWD/requirements.txt
# A venv that sees the system's site-packages (made by hand with
# --system-site-packages) is not hermetic: start again.
if [ -f "$VENV/pyvenv.cfg" ] &&
   grep -qiE '^include-system-site-packages *= *true' "$VENV/pyvenv.cfg"; then
    echo "install-deps: $VENV sees the system site-packages; recreating it"
    rm -rf "$VENV"
fi
if [ ! -x "$VENV/bin/python3" ] || ! "$VENV/bin/python3" -c 'import sys' 2>/dev/null; then
    echo "install-deps: creating the virtual environment $VENV"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
fi
want=$(sha256sum "$REQ" | cut -d' ' -f1)
have=$(cat "$VENV/.requirements.sha256" 2>/dev/null || true)
if [ "$want" != "$have" ]; then
    echo "install-deps: pip install -r requirements.txt into $VENV"
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/python3" -m pip install -q --no-input \
        --require-virtualenv -r "$REQ"
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/python3" -m pip check
    echo "$want" > "$VENV/.requirements.sha256"
fi
