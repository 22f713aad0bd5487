/*
 * test_npy.c — unit tests of the .npy reader and writer (lib/io/npy.c):
 * files written by numpy (tests/unit/data/npy, from gen_npy_files.py) are
 * read with the right dtype, shape and values, and our writer reproduces
 * numpy's bytes exactly; round trips for every dtype and rank 0..4 incl.
 * empty tensors; malformed headers, truncation and absurd shapes built here
 * from bytes fail with PARSE/LIMIT/UNSUPPORTED and an offset, never a crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../test_elem.h"
#include "../test_file.h"
#include "../test_main.h"
#include "../test_oom.h"
#include "../test_tmpdir.h"
#include "core/alloc.h"
#include "core/error.h"
#include "io/npy.h"

#define DATA_DIR "tests/unit/data/npy/"

/* rmdir, not test_tmpdir_teardown: every test removes the files it wrote */
static int group_teardown(void **state) {
    (void)state;
    return rmdir(test_tmpdir);
}

/* The value pattern of gen_npy_files.py for element i, as a double. */
static double pattern(mopt_dtype dt, int64_t i) {
    int64_t k = (7 * i) % 11;
    switch (dt) {
    case MOPT_DTYPE_BOOL: return i % 3 == 0;
    case MOPT_DTYPE_F32:
    case MOPT_DTYPE_F64:
    case MOPT_DTYPE_F16: return (double)(k - 5) * 0.25;
    case MOPT_DTYPE_I64:
    case MOPT_DTYPE_I32:
    case MOPT_DTYPE_I16:
    case MOPT_DTYPE_I8: return (double)(k - 5);
    default: return (double)k;
    }
}

static double element(const ir_tensor *t, int64_t i) { return test_elem(t->data, t->dtype, i); }

typedef struct numpy_file {
    const char *name;
    mopt_dtype dtype;
    int32_t rank;
    int64_t dims[8];
    int byte_exact; /* our writer must produce the very same bytes */
} numpy_file;

static const numpy_file k_files[] = {
    {"f32_2x3", MOPT_DTYPE_F32, 2, {2, 3}, 1},
    {"f64_4", MOPT_DTYPE_F64, 1, {4}, 1},
    {"f16_2x2", MOPT_DTYPE_F16, 2, {2, 2}, 1},
    {"i64_3x1x2", MOPT_DTYPE_I64, 3, {3, 1, 2}, 1},
    {"i32_5", MOPT_DTYPE_I32, 1, {5}, 1},
    {"i16_2x3", MOPT_DTYPE_I16, 2, {2, 3}, 1},
    {"i8_7", MOPT_DTYPE_I8, 1, {7}, 1},
    {"u8_2x2x2", MOPT_DTYPE_U8, 3, {2, 2, 2}, 1},
    {"u16_3", MOPT_DTYPE_U16, 1, {3}, 1},
    {"u32_2x2", MOPT_DTYPE_U32, 2, {2, 2}, 1},
    {"u64_3", MOPT_DTYPE_U64, 1, {3}, 1},
    {"bool_2x3", MOPT_DTYPE_BOOL, 2, {2, 3}, 1},
    {"f32_scalar", MOPT_DTYPE_F32, 0, {0}, 1},
    {"i64_0x3", MOPT_DTYPE_I64, 2, {0, 3}, 1},
    {"f32_1x2x3x2", MOPT_DTYPE_F32, 4, {1, 2, 3, 2}, 1},
    {"u8_1x1x1x1x1x1x1x2", MOPT_DTYPE_U8, 8, {1, 1, 1, 1, 1, 1, 1, 2}, 1},
    {"v2_f32_2x3", MOPT_DTYPE_F32, 2, {2, 3}, 0},
    {"v3_f32_2x3", MOPT_DTYPE_F32, 2, {2, 3}, 0},
};

MOPT_TEST(npy_reads_numpy_files) {
    for (size_t f = 0; f < sizeof k_files / sizeof k_files[0]; f++) {
        const numpy_file *nf = &k_files[f];
        char path[256];
        snprintf(path, sizeof path, DATA_DIR "%s.npy", nf->name);
        ir_tensor *t = NULL;
        mopt_status st = npy_read_file(path, &t);
        if (st) fail_msg("%s: status %d: %s", nf->name, st, mopt_error_message());
        assert_int_equal(t->dtype, nf->dtype);
        assert_int_equal(t->rank, nf->rank);
        int64_t n = 1;
        for (int32_t i = 0; i < nf->rank; i++) {
            assert_int_equal(t->dims[i], nf->dims[i]);
            n *= nf->dims[i];
        }
        assert_int_equal(t->nbytes, (size_t)n * mopt_dtype_size(nf->dtype));
        if (n) assert_non_null(t->data);
        for (int64_t i = 0; i < n; i++)
            if (element(t, i) != pattern(nf->dtype, i))
                fail_msg("%s[%lld] = %g, numpy wrote %g", nf->name, (long long)i, element(t, i),
                         pattern(nf->dtype, i));
        ir_tensor_destroy(t);
    }
}

MOPT_TEST(npy_writer_matches_numpy_bytes) {
    for (size_t f = 0; f < sizeof k_files / sizeof k_files[0]; f++) {
        const numpy_file *nf = &k_files[f];
        if (!nf->byte_exact) continue;
        char path[256];
        snprintf(path, sizeof path, DATA_DIR "%s.npy", nf->name);
        ir_tensor *t = NULL;
        assert_int_equal(npy_read_file(path, &t), MOPT_OK);
        const char *out = test_tmp("exact.npy");
        mopt_status st = npy_write_file(out, t->dtype, t->rank, t->dims, t->data);
        if (st) fail_msg("%s: %s", nf->name, mopt_error_message());
        size_t la = 0, lb = 0;
        uint8_t *a = test_read_file(path, &la), *b = test_read_file(out, &lb);
        assert_non_null(a);
        assert_non_null(b);
        if (la != lb || memcmp(a, b, la) != 0)
            fail_msg("%s: our .npy (%zu bytes) differs from numpy's (%zu bytes)", nf->name, lb, la);
        assert_int_equal((lb - t->nbytes) % 64, 0);
        free(a);
        free(b);
        ir_tensor_destroy(t);
        unlink(out);
    }
}

static const mopt_dtype k_dtypes[] = {
    MOPT_DTYPE_F32, MOPT_DTYPE_F64, MOPT_DTYPE_F16, MOPT_DTYPE_I64, MOPT_DTYPE_I32, MOPT_DTYPE_I16,
    MOPT_DTYPE_I8,  MOPT_DTYPE_U8,  MOPT_DTYPE_U16, MOPT_DTYPE_U32, MOPT_DTYPE_U64, MOPT_DTYPE_BOOL,
};

static void roundtrip(mopt_dtype dt, int32_t rank, const int64_t *dims, unsigned seed) {
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= dims[i];
    size_t nbytes = (size_t)n * mopt_dtype_size(dt);
    uint8_t *data = malloc(nbytes ? nbytes : 1);
    for (size_t i = 0; i < nbytes; i++) {
        seed = seed * 1103515245u + 12345u;
        data[i] = (uint8_t)(seed >> 16);
        if (dt == MOPT_DTYPE_BOOL) data[i] &= 1;
    }
    const char *path = test_tmp("rt.npy");
    mopt_status st = npy_write_file(path, dt, rank, dims, nbytes ? data : NULL);
    if (st) fail_msg("write %s rank %d: %s", mopt_dtype_name(dt), rank, mopt_error_message());
    ir_tensor *t = NULL;
    st = npy_read_file(path, &t);
    if (st) fail_msg("read %s rank %d: %s", mopt_dtype_name(dt), rank, mopt_error_message());
    assert_int_equal(t->dtype, dt);
    assert_int_equal(t->rank, rank);
    for (int32_t i = 0; i < rank; i++)
        assert_int_equal(t->dims[i], dims[i]);
    assert_int_equal(t->nbytes, nbytes);
    if (nbytes) assert_memory_equal(t->data, data, nbytes);
    ir_tensor_destroy(t);
    free(data);
    unlink(path);
}

MOPT_TEST(npy_roundtrip_every_dtype_and_rank) {
    const int64_t dims[4] = {3, 1, 4, 2};
    const int64_t empty[3] = {2, 0, 5};
    const int64_t empty1[1] = {0};
    unsigned seed = 1;
    for (size_t d = 0; d < sizeof k_dtypes / sizeof k_dtypes[0]; d++) {
        for (int32_t r = 0; r <= 4; r++)
            roundtrip(k_dtypes[d], r, dims, seed++);
        roundtrip(k_dtypes[d], 3, empty, seed++);
        roundtrip(k_dtypes[d], 1, empty1, seed++);
    }
    const int64_t big[8] = {2, 1, 3, 1, 2, 1, 1, 2};
    roundtrip(MOPT_DTYPE_F32, 8, big, 99);
    const int64_t wide[1] = {100000}; /* a first dim with many digits */
    roundtrip(MOPT_DTYPE_U8, 1, wide, 7);
}

MOPT_TEST(npy_public_load_and_save) {
    mopt_tensor *t = NULL;
    assert_int_equal(mopt_tensor_load(DATA_DIR "i64_3x1x2.npy", &t), MOPT_OK);
    assert_int_equal(mopt_tensor_dtype(t), MOPT_DTYPE_I64);
    assert_int_equal(mopt_tensor_rank(t), 3);
    assert_int_equal(mopt_tensor_dim(t, 0), 3);
    assert_int_equal(mopt_tensor_element_count(t), 6);
    const int64_t *v = mopt_tensor_data_const(t);
    for (int i = 0; i < 6; i++)
        assert_int_equal(v[i], (int64_t)pattern(MOPT_DTYPE_I64, i));
    const char *path = test_tmp("pub.npy");
    assert_int_equal(mopt_tensor_save_npy(t, path), MOPT_OK);
    mopt_tensor *u = NULL;
    assert_int_equal(mopt_tensor_load(path, &u), MOPT_OK);
    assert_int_equal(mopt_tensor_size_bytes(u), 48);
    assert_memory_equal(mopt_tensor_data_const(u), v, 48);
    mopt_tensor_destroy(u);
    mopt_tensor_destroy(t);
    unlink(path);

    /* empty tensors load with a non-NULL buffer and save fine */
    assert_int_equal(mopt_tensor_load(DATA_DIR "i64_0x3.npy", &t), MOPT_OK);
    assert_int_equal(mopt_tensor_element_count(t), 0);
    assert_int_equal(mopt_tensor_save_npy(t, path), MOPT_OK);
    mopt_tensor_destroy(t);
    unlink(path);

    assert_int_equal(mopt_tensor_load(DATA_DIR "no_such_file.npy", &t), MOPT_ERR_IO);
    assert_null(t);
    assert_non_null(strstr(mopt_last_error(), "no_such_file.npy"));
}

static void expect_file_error(const char *name, mopt_status want, const char *needle) {
    char path[256];
    snprintf(path, sizeof path, DATA_DIR "%s.npy", name);
    ir_tensor *t = (ir_tensor *)&t;
    mopt_status st = npy_read_file(path, &t);
    if (st != want) fail_msg("%s: status %d, want %d (%s)", name, st, want, mopt_error_message());
    assert_null(t);
    if (!strstr(mopt_error_message(), needle))
        fail_msg("%s: message '%s' lacks '%s'", name, mopt_error_message(), needle);
    assert_non_null(strstr(mopt_error_message(), name)); /* the path is named */
}

MOPT_TEST(npy_rejects_unsupported_numpy_files) {
    expect_file_error("bad_bigendian_f32_3", MOPT_ERR_UNSUPPORTED, "big-endian");
    expect_file_error("bad_fortran_f32_2x3", MOPT_ERR_UNSUPPORTED, "fortran_order");
    expect_file_error("bad_complex_c8_2", MOPT_ERR_UNSUPPORTED, "<c8");
    expect_file_error("bad_rank9_u8", MOPT_ERR_LIMIT, "more than 8 dimensions");
    mopt_tensor *t = NULL;
    assert_int_equal(mopt_tensor_load(DATA_DIR "bad_fortran_f32_2x3.npy", &t),
                     MOPT_ERR_UNSUPPORTED);
    assert_null(t);
}

/* Builds a .npy image: magic, version, header length, the header text padded
 * with spaces to a 64-byte boundary (unless exact), then ndata pattern bytes. */
static uint8_t *build(int major, const char *header, size_t ndata, size_t *len) {
    size_t hl = strlen(header), pre = major == 1 ? 10 : 12;
    size_t total = pre + hl + ndata;
    uint8_t *b = malloc(total + 1);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (uint8_t)major;
    b[7] = 0;
    if (major == 1) {
        b[8] = (uint8_t)(hl & 0xff);
        b[9] = (uint8_t)(hl >> 8);
    } else {
        for (int i = 0; i < 4; i++)
            b[8 + i] = (uint8_t)(hl >> (8 * i));
    }
    memcpy(b + pre, header, hl);
    for (size_t i = 0; i < ndata; i++)
        b[pre + hl + i] = (uint8_t)i;
    *len = total;
    return b;
}

static void expect_mem(const uint8_t *b, size_t len, mopt_status want, const char *needle,
                       const char *what) {
    ir_tensor *t = (ir_tensor *)&t;
    mopt_clear_error();
    mopt_status st = npy_read_memory(b, len, &t);
    if (st != want)
        fail_msg("%s: status %d, want %d (%s)", what, st, want,
                 st ? mopt_error_message() : "accepted");
    if (want == MOPT_OK) {
        assert_non_null(t);
        ir_tensor_destroy(t);
        return;
    }
    assert_null(t);
    if (needle && !strstr(mopt_error_message(), needle))
        fail_msg("%s: message '%s' lacks '%s'", what, mopt_error_message(), needle);
}

/* A version-1 file of `header` and ndata data bytes: its status, and a
 * needle of the error message. */
typedef struct {
    const char *header;
    size_t ndata;
    mopt_status want;
    const char *needle;
} hdr_case;

static const hdr_case hdr_cases[] = {
    /* sanity: the builder makes valid files */
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", 24, MOPT_OK, NULL},
    {"{\"descr\":\"<i4\",\"fortran_order\":False,\"shape\":(2,)}", 8, MOPT_OK, NULL},
    {"{'shape': (), 'fortran_order': False, 'descr': '|b1'}   \n", 1, MOPT_OK, NULL},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }\n", 24, MOPT_OK, NULL},
    {"{'descr': '<f8', 'fortran_order': False, 'shape': (0, 99999999999), }\n", 0, MOPT_OK, NULL},

    {"{'descr': '<f4', 'fortran_order': False}\n", 4, MOPT_ERR_PARSE, "'shape'"},
    {"{'descr': '<f4', 'shape': (1,)}\n", 4, MOPT_ERR_PARSE, "'fortran_order'"},
    {"{'fortran_order': False, 'shape': (1,)}\n", 4, MOPT_ERR_PARSE, "'descr'"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}\n", 4, MOPT_ERR_PARSE,
     "unexpected key 'x'"},
    {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}\n", 4, MOPT_ERR_PARSE,
     "repeated"},
    {"'descr': '<f4', 'fortran_order': False, 'shape': (1,)\n", 4, MOPT_ERR_PARSE, "offset 10"},
    {"{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}\n", 4, MOPT_ERR_PARSE, "offset"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", 4, MOPT_ERR_PARSE, "ends early"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x\n", 4, MOPT_ERR_PARSE,
     "after the header"},
    {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}\n", 4, MOPT_ERR_PARSE, "True or False"},
    {"{'descr': '<f4', 'fortran_order': Falsey, 'shape': (1,)}\n", 4, MOPT_ERR_PARSE,
     "True or False"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}\n", 4, MOPT_ERR_PARSE, "negative"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (1.5,)}\n", 4, MOPT_ERR_PARSE, "offset"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (1)}\n", 4, MOPT_ERR_PARSE,
     "trailing comma"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': [1]}\n", 4, MOPT_ERR_PARSE, "tuple"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,,)}\n", 4, MOPT_ERR_PARSE, "offset"},
    {"{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}\n", 4, MOPT_ERR_PARSE, "expected ','"},
    {"{'descr' '<f4', 'fortran_order': False, 'shape': (1,)}\n", 4, MOPT_ERR_PARSE, "expected ':'"},
    {"{'descr': '<f\\x34', 'fortran_order': False, 'shape': (1,)}\n", 4, MOPT_ERR_PARSE,
     "unexpected character"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}\x01\n", 4, MOPT_ERR_PARSE,
     "byte 0x01"},
    {"", 4, MOPT_ERR_PARSE, "ends early"},

    /* absurd or oversized shapes */
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}\n", 4,
     MOPT_ERR_LIMIT, "int64"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, "
     "1099511627776)}\n",
     4, MOPT_ERR_LIMIT, "bytes of data"},
    {"{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4, 0)}\n", 0,
     MOPT_ERR_LIMIT, "bytes of data"},
    {"{'descr': '<u1', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}\n", 1, MOPT_ERR_LIMIT,
     "more than 8"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000)}\n", 16, MOPT_ERR_PARSE,
     "truncated data"},

    /* dtypes */
    {"{'descr': '>i4', 'fortran_order': False, 'shape': (1,)}\n", 4, MOPT_ERR_UNSUPPORTED,
     "big-endian"},
    {"{'descr': '|f4', 'fortran_order': False, 'shape': (1,)}\n", 4, MOPT_ERR_UNSUPPORTED,
     "byte order"},
    {"{'descr': '<c16', 'fortran_order': False, 'shape': (1,)}\n", 16, MOPT_ERR_UNSUPPORTED,
     "<c16"},
    {"{'descr': '|O', 'fortran_order': False, 'shape': (1,)}\n", 8, MOPT_ERR_UNSUPPORTED,
     "not supported"},
    {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}\n", 4, MOPT_ERR_UNSUPPORTED,
     "structured"},
    {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}\n", 16, MOPT_ERR_UNSUPPORTED,
     "fortran_order"},
    /* one-byte types take any byte-order mark */
    {"{'descr': '<i1', 'fortran_order': False, 'shape': (3,)}\n", 3, MOPT_OK, NULL},
    {"{'descr': '|b1', 'fortran_order': False, 'shape': (3,)}\n", 3, MOPT_OK, NULL},

    /* data length */
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", 23, MOPT_ERR_PARSE,
     "truncated data"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", 25, MOPT_ERR_PARSE,
     "after the data"},
};

MOPT_TEST(npy_rejects_malformed_headers) {
    for (size_t i = 0; i < sizeof hdr_cases / sizeof hdr_cases[0]; i++) {
        const hdr_case *c = &hdr_cases[i];
        size_t len;
        uint8_t *b = build(1, c->header, c->ndata, &len);
        expect_mem(b, len, c->want, c->needle, c->header);
        free(b);
    }
}

MOPT_TEST(npy_rejects_bad_preamble) {
    const char *h = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}\n";
    size_t len;
    uint8_t *b = build(1, h, 4, &len);
    b[1] = 'X';
    expect_mem(b, len, MOPT_ERR_PARSE, "magic at offset 0", "bad magic");
    b[1] = 'N';
    b[6] = 4;
    expect_mem(b, len, MOPT_ERR_UNSUPPORTED, "version 4.0", "version 4");
    b[6] = 1;
    b[7] = 1;
    expect_mem(b, len, MOPT_ERR_UNSUPPORTED, "version 1.1", "version 1.1");
    b[7] = 0;
    b[8] = 0xff;
    expect_mem(b, len, MOPT_ERR_PARSE, "truncated header", "header length past the end");
    free(b);
    b = build(2, h, 4, &len);
    expect_mem(b, len, MOPT_OK, NULL, "version 2");
    b[11] = 0x7f; /* a 2 GB header */
    expect_mem(b, len, MOPT_ERR_LIMIT, "header length", "huge v2 header");
    free(b);
    b = build(3, h, 4, &len);
    expect_mem(b, len, MOPT_OK, NULL, "version 3");
    free(b);
    expect_mem((const uint8_t *)"", 0, MOPT_ERR_PARSE, "magic", "empty buffer");
}

/* Every prefix of a valid file must be refused as truncated (PARSE), and
 * every single-byte corruption of the header must be either accepted or
 * refused with a message; never crash or read out of bounds (ASan). */
MOPT_TEST(npy_truncation_and_corruption) {
    size_t len = 0;
    uint8_t *good = test_read_file(DATA_DIR "f32_2x3.npy", &len);
    assert_non_null(good);
    for (size_t cut = 0; cut < len; cut++) {
        uint8_t *b = malloc(cut ? cut : 1); /* exact-size copy so ASan sees overreads */
        memcpy(b, good, cut);
        ir_tensor *t = NULL;
        mopt_status st = npy_read_memory(b, cut, &t);
        if (st != MOPT_ERR_PARSE)
            fail_msg("prefix of %zu bytes: status %d (%s)", cut, st, mopt_error_message());
        assert_null(t);
        assert_non_null(strstr(mopt_error_message(), "offset"));
        free(b);
    }
    static const uint8_t k_bytes[] = {0, '\'', '"', '(', ')', ',', ':', '{', '}', '9', ' ', 0xff};
    size_t hend = len - 24;
    for (size_t pos = 6; pos < hend; pos++) {
        for (size_t k = 0; k < sizeof k_bytes; k++) {
            uint8_t *b = malloc(len);
            memcpy(b, good, len);
            b[pos] = k_bytes[k];
            ir_tensor *t = NULL;
            mopt_clear_error();
            mopt_status st = npy_read_memory(b, len, &t);
            if (st) {
                assert_null(t);
                assert_true(mopt_error_message()[0] != '\0');
            } else {
                assert_non_null(t);
                ir_tensor_destroy(t);
            }
            free(b);
        }
    }
    free(good);
}

MOPT_TEST(npy_bool_values_are_normalized) {
    size_t len;
    uint8_t *b = build(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (4,)}\n", 0, &len);
    uint8_t *c = malloc(len + 4);
    memcpy(c, b, len);
    c[len] = 0, c[len + 1] = 1, c[len + 2] = 2, c[len + 3] = 255;
    ir_tensor *t = NULL;
    assert_int_equal(npy_read_memory(c, len + 4, &t), MOPT_OK);
    const uint8_t want[4] = {0, 1, 1, 1};
    assert_memory_equal(t->data, want, 4);
    ir_tensor_destroy(t);
    free(c);
    free(b);
}

MOPT_TEST(npy_write_errors) {
    const int64_t dims[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    float x[1] = {1};
    const char *path = test_tmp("w.npy");
    assert_int_equal(npy_write_file(path, MOPT_DTYPE_BF16, 1, dims, x), MOPT_ERR_UNSUPPORTED);
    assert_non_null(strstr(mopt_error_message(), "bf16"));
    assert_int_equal(npy_write_file(path, MOPT_DTYPE_STRING, 1, dims, x), MOPT_ERR_UNSUPPORTED);
    assert_int_equal(npy_write_file(path, MOPT_DTYPE_F32, 9, dims, x), MOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(npy_write_file(path, MOPT_DTYPE_F32, -1, dims, x), MOPT_ERR_INVALID_ARGUMENT);
    const int64_t neg[2] = {2, -3};
    assert_int_equal(npy_write_file(path, MOPT_DTYPE_F32, 2, neg, x), MOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(npy_write_file(path, MOPT_DTYPE_F32, 1, dims, NULL),
                     MOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(npy_write_file(path, MOPT_DTYPE_F32, 1, NULL, x), MOPT_ERR_INVALID_ARGUMENT);
    const int64_t huge[2] = {INT64_MAX, 4};
    assert_int_equal(npy_write_file(path, MOPT_DTYPE_F32, 2, huge, x), MOPT_ERR_LIMIT);
    assert_int_equal(npy_write_file("/nonexistent_dir_mopt/x.npy", MOPT_DTYPE_F32, 1, dims, x),
                     MOPT_ERR_IO);
    assert_non_null(strstr(mopt_error_message(), "/nonexistent_dir_mopt/x.npy"));
    assert_int_equal(access(path, F_OK), -1); /* nothing was written */
    /* a scalar with NULL dims is fine */
    assert_int_equal(npy_write_file(path, MOPT_DTYPE_F32, 0, NULL, x), MOPT_OK);
    ir_tensor *t = NULL;
    assert_int_equal(npy_read_file(path, &t), MOPT_OK);
    assert_int_equal(t->rank, 0);
    assert_true(((float *)t->data)[0] == 1.0f);
    ir_tensor_destroy(t);
    unlink(path);
}

static mopt_status read_f32_2x3(void *ctx) {
    (void)ctx;
    ir_tensor *t = NULL;
    mopt_status st = npy_read_file(DATA_DIR "f32_2x3.npy", &t);
    if (st == MOPT_OK)
        ir_tensor_destroy(t);
    else
        assert_null(t);
    return st;
}

MOPT_TEST(npy_survives_allocation_failures) { oom_sweep(read_f32_2x3, NULL, 16); }

MOPT_TEST_MAIN_WITH(test_tmpdir_setup, group_teardown, cmocka_unit_test(npy_reads_numpy_files),
                    cmocka_unit_test(npy_writer_matches_numpy_bytes),
                    cmocka_unit_test(npy_roundtrip_every_dtype_and_rank),
                    cmocka_unit_test(npy_public_load_and_save),
                    cmocka_unit_test(npy_rejects_unsupported_numpy_files),
                    cmocka_unit_test(npy_rejects_malformed_headers),
                    cmocka_unit_test(npy_rejects_bad_preamble),
                    cmocka_unit_test(npy_truncation_and_corruption),
                    cmocka_unit_test(npy_bool_values_are_normalized),
                    cmocka_unit_test(npy_write_errors),
                    cmocka_unit_test(npy_survives_allocation_failures))
