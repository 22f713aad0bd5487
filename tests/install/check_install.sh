#!/usr/bin/env bash
# check_install.sh — installs the build into a temporary prefix and checks
# what a user gets: the header, libmopt.so.0 (soname), libmopt.a, mopt.pc;
# then compiles a C program against it with pkg-config, linked both shared
# and fully static, and runs both.
# usage: check_install.sh BUILD_DIR
set -euo pipefail
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
meson install -C "$BUILD" --destdir "$TMP/dest" >/dev/null
PREFIX=$(meson introspect "$BUILD" --buildoptions | python3 -c \
    "import json,sys; print([o['value'] for o in json.load(sys.stdin) if o['name']=='prefix'][0])")
ROOT="$TMP/dest$PREFIX"
fail() { echo "check_install: FAIL: $*"; exit 1; }
[ -f "$ROOT/include/mopt/mopt.h" ] || fail "header not installed"
PC=$(find "$ROOT" -name mopt.pc | head -n1)
[ -n "$PC" ] || fail "mopt.pc not installed"
SO=$(find "$ROOT" -name 'libmopt.so.0.*' | head -n1)
[ -n "$SO" ] || fail "libmopt.so.0.x not installed"
readelf -d "$SO" | grep -q 'SONAME.*libmopt.so.0' || fail "soname is not libmopt.so.0"
[ -n "$(find "$ROOT" -name libmopt.a)" ] || fail "libmopt.a not installed"
export PKG_CONFIG_PATH=$(dirname "$PC")
export PKG_CONFIG_SYSROOT_DIR="$TMP/dest"
cat > "$TMP/app.c" <<'C'
#include <mopt/mopt.h>
#include <stdio.h>
int main(void) {
    if (mopt_version_number() != MOPT_VERSION_NUMBER) return 1;
    mopt_tensor *t = NULL;
    int64_t d[2] = {2, 3};
    if (mopt_tensor_create(MOPT_DTYPE_F32, 2, d, &t) != MOPT_OK) return 2;
    mopt_tensor_destroy(t);
    mopt_model *m = NULL;
    if (mopt_model_load("/nonexistent.onnx", NULL, &m) == MOPT_OK) return 3;
    printf("libmopt %s ok: %s\n", mopt_version(), mopt_last_error());
    return 0;
}
C
cc -std=c11 -Wall -Werror "$TMP/app.c" -o "$TMP/app_shared" $(pkg-config --cflags --libs mopt)
LD_LIBRARY_PATH=$(dirname "$SO") "$TMP/app_shared" || fail "shared-linked program failed"
cc -std=c11 -Wall -Werror "$TMP/app.c" -o "$TMP/app_static" -static \
    $(pkg-config --cflags --libs --static mopt) || fail "static link failed"
"$TMP/app_static" || fail "static program failed"
echo "check_install: header, soname, static+shared libraries and pkg-config all OK"
