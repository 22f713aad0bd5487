/*
 * mopt_read_fields.c — typed fields of the .mopt header's YAML tree:
 * integers in a range, hex checksums, strings (quoted or !hex), exact
 * floats, dtypes, dims. Each failure names the header line, the key path
 * (`where`) and what was expected; PARSE for bad text, INVALID_MODEL for
 * well-formed values out of range.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "io/mopt_read.h"
#include "io/mopt_spelling.h"

mopt_status mfmt_fail_at(mopt_status st, const ytree_node *n, const char *where, const char *fmt,
                         ...) {
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n) return mopt_fail(st, "header line %zu: %s: %s", n->line, where, msg);
    return mopt_fail(st, "header: %s: %s", where, msg);
}

mopt_status mfmt_need(const ytree_node *map, const char *key, int kind, const char *where,
                      const ytree_node **out) {
    *out = NULL;
    const ytree_node *n = ytree_get(map, key);
    if (!n) return mfmt_fail_at(MOPT_ERR_PARSE, map, where, "missing key '%s'", key);
    if (n->kind != kind)
        return mfmt_fail_at(MOPT_ERR_PARSE, n, where, "'%s' is %s, expected %s", key,
                            ytree_kind_name(n->kind), ytree_kind_name(kind));
    *out = n;
    return MOPT_OK;
}

mopt_status mfmt_item_map(const ytree_node *seq, size_t i, const char *where,
                          const ytree_node **out) {
    *out = seq->kids[i];
    if ((*out)->kind != YTREE_MAP)
        return mfmt_fail_at(MOPT_ERR_PARSE, *out, where, "expected a mapping");
    return MOPT_OK;
}

mopt_status mfmt_as_int(const ytree_node *n, const char *where, const char *what, int64_t lo,
                        int64_t hi, int64_t *out) {
    if (n->kind != YTREE_SCALAR || !n->plain || n->len == 0)
        return mfmt_fail_at(MOPT_ERR_PARSE, n, where, "%s: expected an integer", what);
    errno = 0;
    char *end = NULL;
    long long v = strtoll(n->s, &end, 10);
    if (errno || end != n->s + n->len)
        return mfmt_fail_at(MOPT_ERR_PARSE, n, where, "%s: '%.40s' is not an integer", what, n->s);
    if (v < lo || v > hi)
        return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, n, where,
                            "%s: %lld is out of range [%" PRId64 ", %" PRId64 "]", what, v, lo, hi);
    *out = (int64_t)v;
    return MOPT_OK;
}

mopt_status mfmt_key_int(const ytree_node *map, const char *key, const char *where, int64_t lo,
                         int64_t hi, int64_t *out) {
    const ytree_node *n;
    mopt_status st = mfmt_need(map, key, YTREE_SCALAR, where, &n);
    return st ? st : mfmt_as_int(n, where, key, lo, hi, out);
}

mopt_status mfmt_as_hex64(const ytree_node *n, const char *where, const char *what, uint64_t *out) {
    uint8_t b[8];
    if (n->kind != YTREE_SCALAR || !mfmt_hex_decode(n->s, n->len, b, 8))
        return mfmt_fail_at(MOPT_ERR_PARSE, n, where, "%s: expected 16 hex digits", what);
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | b[i];
    *out = v;
    return MOPT_OK;
}

mopt_status mfmt_as_str(const ytree_node *n, const char *where, const char *what, bool cstr,
                        char **out, size_t *len) {
    *out = NULL;
    if (n->kind != YTREE_SCALAR)
        return mfmt_fail_at(MOPT_ERR_PARSE, n, where, "%s: expected a string", what);
    size_t l = mfmt_is_hex(n) ? n->len / 2 : n->len;
    char *s = mopt_malloc(l + 1);
    if (!s) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
    if (mfmt_is_hex(n)) {
        if (!mfmt_hex_decode(n->s, n->len, (uint8_t *)s, l)) {
            mopt_free(s);
            return mfmt_fail_at(MOPT_ERR_PARSE, n, where, "%s: bad !hex string", what);
        }
    } else {
        memcpy(s, n->s, l);
    }
    s[l] = '\0';
    if (cstr && memchr(s, '\0', l)) {
        mopt_free(s);
        return mfmt_fail_at(MOPT_ERR_PARSE, n, where, "%s: contains a NUL byte", what);
    }
    *out = s;
    if (len) *len = l;
    return MOPT_OK;
}

mopt_status mfmt_key_str(const ytree_node *map, const char *key, const char *where, char **out) {
    const ytree_node *n;
    *out = NULL;
    mopt_status st = mfmt_need(map, key, YTREE_SCALAR, where, &n);
    return st ? st : mfmt_as_str(n, where, key, true, out, NULL);
}

mopt_status mfmt_key_buf(const ytree_node *map, const char *key, const char *where, char *buf,
                         size_t cap) {
    char *s;
    mopt_status st = mfmt_key_str(map, key, where, &s);
    if (st) return st;
    if (strlen(s) >= cap) {
        mopt_free(s);
        return mfmt_fail_at(MOPT_ERR_PARSE, ytree_get(map, key), where,
                            "'%s' is longer than %zu bytes", key, cap - 1);
    }
    snprintf(buf, cap, "%s", s);
    mopt_free(s);
    return MOPT_OK;
}

mopt_status mfmt_as_float(const ytree_node *n, const char *where, const char *what, float *out) {
    if (n->kind != YTREE_SCALAR || n->len == 0)
        return mfmt_fail_at(MOPT_ERR_PARSE, n, where, "%s: expected a number", what);
    if (strcmp(n->s, ".inf") == 0 || strcmp(n->s, "-.inf") == 0) {
        *out = n->s[0] == '-' ? -INFINITY : INFINITY;
        return MOPT_OK;
    }
    if (n->len == 12 && strncmp(n->s, "nan:", 4) == 0) {
        uint8_t b[4];
        if (!mfmt_hex_decode(n->s + 4, 8, b, 4))
            return mfmt_fail_at(MOPT_ERR_PARSE, n, where, "%s: bad NaN '%s'", what, n->s);
        uint32_t u = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
        memcpy(out, &u, 4);
        return MOPT_OK;
    }
    char *end = NULL;
    errno = 0;
    float f = strtof(n->s, &end);
    if (end != n->s + n->len || isnan(f) || (errno == ERANGE && isinf(f)))
        return mfmt_fail_at(MOPT_ERR_PARSE, n, where, "%s: '%.40s' is not a number", what, n->s);
    *out = f;
    return MOPT_OK;
}

mopt_status mfmt_key_ms(const ytree_node *map, const char *where, double *out) {
    const ytree_node *n;
    mopt_status st = mfmt_need(map, "ms", YTREE_SCALAR, where, &n);
    if (st) return st;
    char *end = NULL;
    double v = strtod(n->s, &end);
    if (n->len == 0 || end != n->s + n->len || !isfinite(v) || v < 0)
        return mfmt_fail_at(MOPT_ERR_PARSE, n, where, "ms: '%.40s' is not a time", n->s);
    *out = v;
    return MOPT_OK;
}

mopt_status mfmt_key_dtype(const ytree_node *map, const char *where, mopt_dtype *out) {
    char buf[32];
    mopt_status st = mfmt_key_buf(map, "dtype", where, buf, sizeof buf);
    if (st) return st;
    if (!mfmt_dtype_from_name(buf, out))
        return mfmt_fail_at(MOPT_ERR_PARSE, ytree_get(map, "dtype"), where, "unknown dtype '%s'",
                            buf);
    return MOPT_OK;
}

mopt_status mfmt_key_dims(const ytree_node *map, const char *where, int32_t *rank, int64_t *dims) {
    const ytree_node *d;
    mopt_status st = mfmt_need(map, "dims", YTREE_SEQ, where, &d);
    if (st) return st;
    if (d->n > IR_MAX_RANK)
        return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, d, where, "%zu dims; at most %d are supported",
                            d->n, IR_MAX_RANK);
    for (size_t i = 0; i < d->n; i++) {
        st = mfmt_as_int(d->kids[i], where, "dims", 0, INT64_MAX, &dims[i]);
        if (st) return st;
    }
    *rank = (int32_t)d->n;
    return MOPT_OK;
}

bool mfmt_tensor_bytes(mopt_dtype dt, int32_t rank, const int64_t *dims, uint64_t *out) {
    uint64_t n = mopt_dtype_size(dt);
    for (int32_t i = 0; i < rank; i++) {
        uint64_t d = (uint64_t)dims[i];
        if (d && n > UINT64_MAX / d) return false;
        n *= d;
    }
    *out = n;
    return true;
}

void mfmt_dims_text(int32_t rank, const int64_t *dims, char *buf, size_t cap) {
    size_t len = (size_t)snprintf(buf, cap, "[");
    for (int32_t i = 0; i < rank && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%" PRId64, i ? "," : "", dims[i]);
    if (len < cap) snprintf(buf + len, cap - len, "]");
}
