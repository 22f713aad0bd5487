#!/usr/bin/env bash
# check_install.sh — installs the build into a temporary prefix and checks
# what a user gets: the header, libmopt.so.0 (soname), libmopt.a, mopt.pc;
# then compiles C programs against it with pkg-config and runs them:
# - linked shared, and fully static (-static);
# - a product binary with libmopt.a linked in and the system libraries
#   shared (`pkg-config --static`, -l:libmopt.a, even under --as-needed):
#   backend=onednn must really run on oneDNN;
# - the same binary defining its own pb_decode_varint (an internal name of
#   the library): it must link and run;
# - a -static binary: Debian ships no libdnnl.a, so oneDNN is left out of
#   the link; backend=onednn must then fail with MOPT_ERR_UNSUPPORTED
#   naming the backend, and backend=auto must still run.
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
[ -z "$(find "$ROOT" -name mopt_config.h)" ] || fail "the private mopt_config.h was installed"
PC=$(find "$ROOT" -name mopt.pc | head -n1)
[ -n "$PC" ] || fail "mopt.pc not installed"
SO=$(find "$ROOT" -name 'libmopt.so.0.*' | head -n1)
[ -n "$SO" ] || fail "libmopt.so.0.x not installed"
readelf -d "$SO" | grep -q 'SONAME.*libmopt.so.0' || fail "soname is not libmopt.so.0"
[ -n "$(find "$ROOT" -name libmopt.a)" ] || fail "libmopt.a not installed"
# Relocate the installed mopt.pc to the temporary prefix (a sysroot would
# also prefix the system folders it names, such as OpenBLAS's or libomp's).
sed -i "s|^prefix=.*|prefix=$ROOT|" "$PC"
export PKG_CONFIG_PATH=$(dirname "$PC")
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
# The .pc must not leak a dependency's include folder (OpenBLAS's).
CFLAGS_PC=$(pkg-config --cflags --static mopt)
case "$CFLAGS_PC" in *openblas*) fail "pkg-config --cflags leaks OpenBLAS: $CFLAGS_PC" ;; esac
LIBS_STATIC=$(pkg-config --libs --static mopt)
echo "pkg-config --static --libs mopt: $LIBS_STATIC"
# libmopt.a rather than libmopt.so from the same folder: -l:libmopt.a
LIBS_A=${LIBS_STATIC/-lmopt/-l:libmopt.a}
MODEL="$SRC/tests/unit/data/header_example.onnx"
HAVE_ONEDNN=0
grep -q 'define MOPT_HAVE_ONEDNN' "$BUILD/mopt_config.h" && HAVE_ONEDNN=1

for variant in plain collide; do
    defs=""
    [ "$variant" = collide ] && defs="-DCOLLIDE"
    exe="$TMP/product_$variant"
    cc -std=c11 -Wall -Werror $defs "$SRC/tests/install/static_app.c" -o "$exe" $CFLAGS_PC \
        -Wl,--as-needed $LIBS_A || fail "$variant: static libmopt.a link via pkg-config --static failed"
    readelf -d "$exe" | grep -q 'NEEDED.*libmopt' && fail "$variant: linked libmopt.so, not libmopt.a"
    out=$("$exe" "$MODEL" auto) || fail "$variant: backend=auto run failed: $out"
    [ "$variant" = collide ] && { echo "$out" | grep -q 'host pb_decode_varint ok' ||
        fail "collide: the host's own pb_decode_varint did not run"; }
    if [ "$HAVE_ONEDNN" = 1 ]; then
        readelf -d "$exe" | grep -q 'NEEDED.*libdnnl' ||
            fail "$variant: libdnnl is not linked (pkg-config --static lost oneDNN)"
        out=$("$exe" "$MODEL" onednn) || fail "$variant: backend=onednn failed: $out"
        echo "$out" | grep -E '^node Gemm .*onednn' >/dev/null ||
            fail "$variant: backend=onednn did not run Gemm on oneDNN: $out"
        echo "$variant product (libmopt.a + shared system libs): Gemm on oneDNN"
    fi
done

# -static: everything from pkg-config --static except oneDNN (no libdnnl.a).
LIBS_NO_DNNL=$(echo "$LIBS_STATIC" | sed 's/-Wl,--push-state,--no-as-needed,-ldnnl,--pop-state//')
# A clang build needs LLVM's libomp, and Debian ships no libomp.a either:
# then no -static program is possible at all; say so instead of failing.
static_omp=no
for d in $(echo "$LIBS_STATIC" | grep -o -- '-L[^ ]*' | sed 's/^-L//') /usr/lib/x86_64-linux-gnu; do
    [ -f "$d/libomp.a" ] && static_omp=yes
done
if [[ " $LIBS_STATIC " == *" -lomp "* ]] && [ "$static_omp" = no ]; then
    echo "check_install: no static libomp (clang build): -static programs are impossible; not built"
    echo "check_install: header, soname, static+shared libraries and pkg-config all OK"
    exit 0
fi
cc -std=c11 -Wall -Werror "$SRC/tests/install/static_app.c" -o "$TMP/fully_static" -static \
    $CFLAGS_PC $LIBS_NO_DNNL || fail "-static link without oneDNN failed"
readelf -d "$TMP/fully_static" | grep -q NEEDED && fail "-static binary has shared dependencies"
out=$("$TMP/fully_static" "$MODEL" auto) || fail "-static binary, backend=auto failed: $out"
cc -std=c11 -Wall -Werror "$TMP/app.c" -o "$TMP/app_static" -static $CFLAGS_PC $LIBS_NO_DNNL ||
    fail "-static link of app.c failed"
"$TMP/app_static" || fail "static program failed"
set +e
out=$("$TMP/fully_static" "$MODEL" onednn)
rc=$?
set -e
[ $rc = 3 ] || fail "-static binary without oneDNN: backend=onednn gave exit $rc, not MOPT_ERR_UNSUPPORTED: $out"
echo "$out" | grep -q 'backend=onednn' || fail "the error does not name the backend: $out"
echo "fully static binary: backend=auto runs; backend=onednn -> $out"
echo "check_install: header, soname, static+shared libraries and pkg-config all OK"
