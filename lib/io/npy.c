/*
 * npy.c — NumPy .npy reading (format versions 1.0, 2.0, 3.0) and writing
 * (version 1.0, laid out byte for byte as numpy.save does).
 *
 * The reader never trusts the file: the header dict is parsed by a small
 * strict parser (exactly the keys 'descr', 'fortran_order' and 'shape'),
 * every length and dimension is bounds- and overflow-checked, and errors
 * give the file offset. Only little-endian (or byte-order-free) descrs in C
 * order are accepted; anything else is UNSUPPORTED with a clear message.
 */
#include "io/npy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/file.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_MAX_HEADER ((size_t)1 << 20) /* numpy itself refuses > 10000 by default */
#define NPY_MAX_BYTES ((size_t)1 << 46)
#define NPY_MAX_FILE ((size_t)1 << 46)
#define NPY_ALIGN 64
#define NPY_GROWTH_DIGITS 21 /* numpy's GROWTH_AXIS_MAX_DIGITS */

/* ---- dtype <-> descr ------------------------------------------------------ */

typedef struct npy_type {
    const char *code; /* descr without the byte-order character */
    mopt_dtype dtype;
} npy_type;

static const npy_type k_types[] = {
    {"f4", MOPT_DTYPE_F32}, {"f8", MOPT_DTYPE_F64}, {"f2", MOPT_DTYPE_F16}, {"i8", MOPT_DTYPE_I64},
    {"i4", MOPT_DTYPE_I32}, {"i2", MOPT_DTYPE_I16}, {"i1", MOPT_DTYPE_I8},  {"u1", MOPT_DTYPE_U8},
    {"u2", MOPT_DTYPE_U16}, {"u4", MOPT_DTYPE_U32}, {"u8", MOPT_DTYPE_U64}, {"b1", MOPT_DTYPE_BOOL},
};
#define N_TYPES (sizeof k_types / sizeof k_types[0])

static const char *npy_code(mopt_dtype dtype) {
    for (size_t i = 0; i < N_TYPES; i++)
        if (k_types[i].dtype == dtype) return k_types[i].code;
    return NULL;
}

/* Maps a descr string to a dtype. off is the file offset of the string, for
 * messages. */
static mopt_status npy_descr_dtype(const char *descr, size_t off, mopt_dtype *out) {
    size_t n = strlen(descr);
    if (n == 3 && (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=')) {
        for (size_t i = 0; i < N_TYPES; i++) {
            if (strcmp(descr + 1, k_types[i].code) != 0) continue;
            mopt_dtype dt = k_types[i].dtype;
            size_t size = mopt_dtype_size(dt);
            if (size == 1) { /* byte order is meaningless for one-byte types */
                *out = dt;
                return MOPT_OK;
            }
            if (descr[0] == '<') {
                *out = dt;
                return MOPT_OK;
            }
            if (descr[0] == '>')
                return mopt_fail(MOPT_ERR_UNSUPPORTED,
                                 "npy: big-endian dtype '%s' (offset %zu) is not supported; "
                                 "convert with arr.astype('<%s')",
                                 descr, off, descr + 1);
            return mopt_fail(MOPT_ERR_UNSUPPORTED,
                             "npy: dtype '%s' (offset %zu) has no explicit byte order; only "
                             "little-endian '<%s' is supported",
                             descr, off, descr + 1);
        }
    }
    return mopt_fail(MOPT_ERR_UNSUPPORTED,
                     "npy: dtype '%s' (offset %zu) is not supported (supported: <f4 <f8 <f2 "
                     "<i8 <i4 <i2 |i1 |u1 <u2 <u4 <u8 |b1)",
                     descr, off);
}

/* ---- header dict parser --------------------------------------------------- */

typedef struct npy_parser {
    const char *s;   /* header text (not NUL-terminated) */
    size_t len, pos; /* length and cursor within the header */
    size_t base;     /* file offset of s[0] */
} npy_parser;

static mopt_status perr(const npy_parser *p, const char *what) {
    if (p->pos >= p->len)
        return mopt_fail(MOPT_ERR_PARSE, "npy: header ends early at offset %zu: %s",
                         p->base + p->pos, what);
    char c = p->s[p->pos];
    if (c >= 0x20 && c < 0x7f)
        return mopt_fail(MOPT_ERR_PARSE, "npy: bad header at offset %zu (found '%c'): %s",
                         p->base + p->pos, c, what);
    return mopt_fail(MOPT_ERR_PARSE, "npy: bad header at offset %zu (found byte 0x%02x): %s",
                     p->base + p->pos, (unsigned)(unsigned char)c, what);
}

static void skip_ws(npy_parser *p) {
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                               p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
        p->pos++;
}

static int peek(npy_parser *p) {
    skip_ws(p);
    return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

static int accept(npy_parser *p, char c) {
    if (peek(p) != (unsigned char)c) return 0;
    p->pos++;
    return 1;
}

/* A quoted Python string literal without escapes, copied into buf. */
static mopt_status parse_string(npy_parser *p, char *buf, size_t cap, const char *what) {
    int q = peek(p);
    if (q != '\'' && q != '"') return perr(p, what);
    size_t start = ++p->pos;
    while (p->pos < p->len && p->s[p->pos] != (char)q) {
        char c = p->s[p->pos];
        if (c == '\\' || c == '\n' || (unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
            return perr(p, "unexpected character in a string");
        p->pos++;
    }
    if (p->pos >= p->len) return perr(p, "unterminated string");
    size_t n = p->pos - start;
    if (n >= cap) {
        p->pos = start;
        return perr(p, "string is too long");
    }
    memcpy(buf, p->s + start, n);
    buf[n] = '\0';
    p->pos++; /* closing quote */
    return MOPT_OK;
}

static int match_word(npy_parser *p, const char *w) {
    size_t n = strlen(w);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, w, n) != 0) return 0;
    size_t e = p->pos + n;
    if (e < p->len) {
        char c = p->s[e];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')
            return 0;
    }
    p->pos = e;
    return 1;
}

static mopt_status parse_bool(npy_parser *p, int *out) {
    peek(p);
    if (match_word(p, "True"))
        *out = 1;
    else if (match_word(p, "False"))
        *out = 0;
    else
        return perr(p, "'fortran_order' must be True or False");
    return MOPT_OK;
}

/* A non-negative decimal integer (an optional Python 2 'L' suffix is
 * tolerated). */
static mopt_status parse_dim(npy_parser *p, int64_t *out) {
    int c = peek(p);
    if (c == '-') return perr(p, "a dimension is negative");
    if (c < '0' || c > '9') return perr(p, "expected a dimension (a non-negative integer)");
    size_t start = p->pos;
    uint64_t v = 0;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
        uint64_t d = (uint64_t)(p->s[p->pos] - '0');
        if (v > ((uint64_t)INT64_MAX - d) / 10) {
            p->pos = start;
            return mopt_fail(MOPT_ERR_LIMIT, "npy: dimension at offset %zu does not fit in int64",
                             p->base + start);
        }
        v = v * 10 + d;
        p->pos++;
    }
    if (p->pos < p->len && p->s[p->pos] == 'L') p->pos++;
    *out = (int64_t)v;
    return MOPT_OK;
}

/* A Python tuple of dimensions: (), (3,), (2, 3) or (2, 3,). */
static mopt_status parse_shape(npy_parser *p, int32_t *rank, int64_t *dims) {
    if (!accept(p, '(')) return perr(p, "'shape' must be a tuple such as (2, 3)");
    int32_t r = 0;
    int trailing_comma = 0;
    while (!accept(p, ')')) {
        if (r == MOPT_MAX_RANK) {
            size_t at = p->base + p->pos;
            return mopt_fail(MOPT_ERR_LIMIT,
                             "npy: shape at offset %zu has more than %d dimensions (the most "
                             "libmopt handles)",
                             at, MOPT_MAX_RANK);
        }
        mopt_status st = parse_dim(p, &dims[r]);
        if (st) return st;
        r++;
        trailing_comma = accept(p, ',');
        if (!trailing_comma && peek(p) != ')') return perr(p, "expected ',' or ')' in 'shape'");
    }
    if (r == 1 && !trailing_comma) {
        p->pos--;
        return perr(p, "a one-dimensional shape needs a trailing comma, as in (3,)");
    }
    *rank = r;
    return MOPT_OK;
}

typedef struct npy_header {
    mopt_dtype dtype;
    int32_t rank;
    int64_t dims[MOPT_MAX_RANK];
} npy_header;

static mopt_status parse_header(npy_parser *p, npy_header *h) {
    int have_descr = 0, have_order = 0, have_shape = 0;
    char descr[32];
    size_t descr_off = 0;
    int fortran = 0;
    if (!accept(p, '{')) return perr(p, "the header must be a Python dict literal '{...}'");
    while (!accept(p, '}')) {
        char key[32];
        size_t key_off = p->base + p->pos;
        mopt_status st = parse_string(p, key, sizeof key, "expected a quoted key");
        if (st) return st;
        if (!accept(p, ':')) return perr(p, "expected ':' after a key");
        if (strcmp(key, "descr") == 0 && !have_descr) {
            peek(p);
            descr_off = p->base + p->pos;
            if (peek(p) == '[')
                return mopt_fail(MOPT_ERR_UNSUPPORTED,
                                 "npy: structured dtypes (offset %zu) are not supported",
                                 descr_off);
            st = parse_string(p, descr, sizeof descr, "'descr' must be a quoted dtype string");
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0 && !have_order) {
            st = parse_bool(p, &fortran);
            have_order = 1;
        } else if (strcmp(key, "shape") == 0 && !have_shape) {
            st = parse_shape(p, &h->rank, h->dims);
            have_shape = 1;
        } else if (strcmp(key, "descr") == 0 || strcmp(key, "fortran_order") == 0 ||
                   strcmp(key, "shape") == 0) {
            return mopt_fail(MOPT_ERR_PARSE, "npy: key '%s' repeated in the header (offset %zu)",
                             key, key_off);
        } else {
            return mopt_fail(MOPT_ERR_PARSE,
                             "npy: unexpected key '%s' in the header (offset %zu); expected "
                             "'descr', 'fortran_order' and 'shape'",
                             key, key_off);
        }
        if (st) return st;
        if (!accept(p, ',') && peek(p) != '}') return perr(p, "expected ',' or '}'");
    }
    skip_ws(p);
    if (p->pos != p->len) return perr(p, "unexpected text after the header dict");
    if (!have_descr || !have_order || !have_shape)
        return mopt_fail(MOPT_ERR_PARSE, "npy: the header (offset %zu) lacks the key '%s'", p->base,
                         !have_descr   ? "descr"
                         : !have_order ? "fortran_order"
                                       : "shape");
    mopt_status st = npy_descr_dtype(descr, descr_off, &h->dtype);
    if (st) return st;
    if (fortran)
        return mopt_fail(MOPT_ERR_UNSUPPORTED,
                         "npy: fortran_order True (header at offset %zu) is not supported; save "
                         "a C-ordered array, e.g. np.save(path, np.ascontiguousarray(a))",
                         p->base);
    return MOPT_OK;
}

/* ---- reading -------------------------------------------------------------- */

static uint32_t rd_le(const uint8_t *b, int n) {
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | b[i];
    return v;
}

mopt_status npy_read_memory(const uint8_t *buf, size_t len, ir_tensor **out) {
    *out = NULL;
    if (!buf && len) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "npy: buffer is NULL");
    if (len < NPY_MAGIC_LEN || memcmp(buf, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
        return mopt_fail(MOPT_ERR_PARSE,
                         "npy: bad magic at offset 0 (expected \\x93NUMPY; not a .npy file)");
    if (len < 8)
        return mopt_fail(MOPT_ERR_PARSE, "npy: truncated at offset %zu (no format version)", len);
    uint8_t major = buf[6], minor = buf[7];
    if (minor != 0 || major < 1 || major > 3)
        return mopt_fail(MOPT_ERR_UNSUPPORTED,
                         "npy: format version %u.%u (offset 6) is not supported (1.0, 2.0, 3.0)",
                         major, minor);
    int lenbytes = major == 1 ? 2 : 4;
    size_t hstart = 8 + (size_t)lenbytes;
    if (len < hstart)
        return mopt_fail(MOPT_ERR_PARSE, "npy: truncated at offset %zu (no header length)", len);
    size_t hlen = rd_le(buf + 8, lenbytes);
    if (hlen > NPY_MAX_HEADER)
        return mopt_fail(MOPT_ERR_LIMIT, "npy: header length %zu (offset 8) exceeds the limit %zu",
                         hlen, NPY_MAX_HEADER);
    if (hlen > len - hstart)
        return mopt_fail(MOPT_ERR_PARSE,
                         "npy: truncated header: %zu bytes announced at offset 8, only %zu "
                         "present from offset %zu",
                         hlen, len - hstart, hstart);
    npy_parser p = {(const char *)buf + hstart, hlen, 0, hstart};
    npy_header h;
    memset(&h, 0, sizeof h);
    mopt_status st = parse_header(&p, &h);
    if (st) return st;

    int64_t numel = ir_numel(h.rank, h.dims);
    size_t nbytes = 0;
    if (numel < 0 || !mopt_mul_overflow((size_t)numel, mopt_dtype_size(h.dtype), &nbytes) ||
        nbytes > NPY_MAX_BYTES)
        return mopt_fail(MOPT_ERR_LIMIT,
                         "npy: the shape in the header at offset %zu describes more than %zu "
                         "bytes of data",
                         hstart, NPY_MAX_BYTES);
    size_t doff = hstart + hlen, avail = len - doff;
    if (avail < nbytes)
        return mopt_fail(MOPT_ERR_PARSE,
                         "npy: truncated data: %zu bytes needed from offset %zu, only %zu present",
                         nbytes, doff, avail);
    if (avail > nbytes)
        return mopt_fail(MOPT_ERR_PARSE, "npy: %zu unexpected bytes after the data at offset %zu",
                         avail - nbytes, doff + nbytes);

    ir_tensor *t = mopt_calloc(1, sizeof *t);
    if (!t) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "npy: out of memory");
    t->dtype = h.dtype;
    t->rank = h.rank;
    for (int32_t i = 0; i < h.rank; i++)
        t->dims[i] = h.dims[i];
    t->nbytes = nbytes;
    if (nbytes) {
        t->data = mopt_aligned_alloc(nbytes);
        if (!t->data) {
            mopt_free(t);
            return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "npy: out of memory for %zu bytes of data",
                             nbytes);
        }
        memcpy(t->data, buf + doff, nbytes);
        if (h.dtype == MOPT_DTYPE_BOOL) { /* libmopt's bools are exactly 0 or 1 */
            uint8_t *b = t->data;
            for (size_t i = 0; i < nbytes; i++)
                b[i] = b[i] != 0;
        }
    }
    *out = t;
    return MOPT_OK;
}

mopt_status npy_read_file(const char *path, ir_tensor **out) {
    *out = NULL;
    if (!path) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "npy: path is NULL");
    uint8_t *buf = NULL;
    size_t len = 0;
    mopt_status st = file_read_all(path, NPY_MAX_FILE, &buf, &len);
    if (st) return st;
    st = npy_read_memory(buf, len, out);
    mopt_free(buf);
    if (st) mopt_fail_context(st, "reading '%s'", path);
    return st;
}

/* ---- writing -------------------------------------------------------------- */

/* Formats the version 1.0 preamble and header exactly as numpy.save does;
 * returns its length (a multiple of 64), or 0 if it would not fit. */
static size_t npy_format_header(char *hdr, size_t cap, const char *code, int32_t rank,
                                const int64_t *dims) {
    char dict[512];
    size_t n = 0;
    n += (size_t)snprintf(dict + n, sizeof dict - n,
                          "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
                          code[1] == '1' ? '|' : '<', code);
    for (int32_t i = 0; i < rank; i++)
        n += (size_t)snprintf(dict + n, sizeof dict - n, "%s%" PRId64, i ? ", " : "", dims[i]);
    n += (size_t)snprintf(dict + n, sizeof dict - n, "%s), }", rank == 1 ? "," : "");
    if (rank > 0) { /* numpy's spare room for growing the first axis in place */
        char d0[32];
        int w = snprintf(d0, sizeof d0, "%" PRId64, dims[0]);
        for (int i = w; i < NPY_GROWTH_DIGITS; i++)
            dict[n++] = ' ';
    }
    size_t hlen = n + 1; /* + '\n' */
    size_t pad = NPY_ALIGN - ((NPY_MAGIC_LEN + 2 + 2 + hlen) % NPY_ALIGN);
    size_t total = NPY_MAGIC_LEN + 2 + 2 + hlen + pad;
    if (total > cap || hlen + pad > 0xffff) return 0;
    memcpy(hdr, NPY_MAGIC, NPY_MAGIC_LEN);
    hdr[6] = 1;
    hdr[7] = 0;
    hdr[8] = (char)((hlen + pad) & 0xff);
    hdr[9] = (char)((hlen + pad) >> 8);
    memcpy(hdr + 10, dict, n);
    memset(hdr + 10 + n, ' ', pad);
    hdr[total - 1] = '\n';
    return total;
}

mopt_status npy_write_file(const char *path, mopt_dtype dtype, int32_t rank, const int64_t *dims,
                           const void *data) {
    if (!path) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "npy: path is NULL");
    const char *code = npy_code(dtype);
    if (!code)
        return mopt_fail(MOPT_ERR_UNSUPPORTED,
                         "npy: cannot write dtype %s to '%s' (numpy has no "
                         "matching little-endian type)",
                         mopt_dtype_name(dtype), path);
    if (rank < 0 || rank > MOPT_MAX_RANK)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "npy: rank %d is outside 0..%d", (int)rank,
                         MOPT_MAX_RANK);
    if (rank > 0 && !dims) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "npy: dims is NULL");
    for (int32_t i = 0; i < rank; i++)
        if (dims[i] < 0)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "npy: dim %d is negative (%" PRId64 ")",
                             (int)i, dims[i]);
    int64_t numel = ir_numel(rank, dims);
    size_t nbytes = 0;
    if (numel < 0 || !mopt_mul_overflow((size_t)numel, mopt_dtype_size(dtype), &nbytes))
        return mopt_fail(MOPT_ERR_LIMIT, "npy: tensor size overflows");
    if (nbytes && !data)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "npy: data is NULL for a non-empty tensor");
    char hdr[1024];
    size_t hsize = npy_format_header(hdr, sizeof hdr, code, rank, dims);
    if (!hsize) return mopt_fail(MOPT_ERR_INTERNAL, "npy: header too long");

    FILE *f = fopen(path, "wb");
    if (!f) return mopt_fail(MOPT_ERR_IO, "cannot create '%s': %s", path, strerror(errno));
    int ok = fwrite(hdr, 1, hsize, f) == hsize;
    if (ok && nbytes) ok = fwrite(data, 1, nbytes, f) == nbytes;
    int err = errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        err = errno;
    }
    if (!ok) {
        remove(path);
        return mopt_fail(MOPT_ERR_IO, "cannot write '%s': %s", path, strerror(err));
    }
    return MOPT_OK;
}
