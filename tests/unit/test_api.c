/*
 * test_api.c — argument checking of the public API, through <mopt/mopt.h>
 * only (linked against libmopt itself): options (unknown keys, wrong kinds,
 * ranges, strings for int keys, YAML strings and files), tensors (create,
 * wrap, bad shapes, accessors), status strings, and NULL for every pointer
 * parameter of every function. Every failure must leave *out NULL and say
 * what went wrong in mopt_last_error(). Expected values come from the
 * header's documentation and the ONNX spec, not from the implementation.
 */
#define MOPT_EXPERIMENTAL_API /* profiling, stats, pass report, model check */
#include <mopt/mopt.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../test_expect.h"
#include "../test_main.h"

#define CNN_MODEL "tests/models/cnn/model.onnx"

/* The int option key of o reads want. */
#define EXPECT_INT_OPTION(o, key, want)                                                            \
    do {                                                                                           \
        int64_t v_ = INT64_MIN; /* a value the call must overwrite */                              \
        EXPECT_OK(mopt_options_get_int((o), (key), &v_));                                          \
        assert_int_equal(v_, (want));                                                              \
    } while (0)

/* ---- version, status, dtypes ----------------------------------------------- */

MOPT_TEST(api_version) {
    assert_int_equal(mopt_version_number(), MOPT_VERSION_NUMBER);
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", MOPT_VERSION_MAJOR, MOPT_VERSION_MINOR,
             MOPT_VERSION_PATCH);
    assert_string_equal(mopt_version(), want);
}

MOPT_TEST(api_status_strings) {
    const char *seen[14];
    for (int s = MOPT_OK; s <= MOPT_ERR_BUSY; s++) {
        const char *str = mopt_status_string((mopt_status)s);
        assert_non_null(str);
        assert_true(str[0] != '\0');
        assert_string_not_equal(str, "unknown status");
        for (int k = 0; k < s; k++)
            if (strcmp(seen[k], str) == 0) fail_msg("statuses %d and %d share '%s'", k, s, str);
        seen[s] = str;
    }
    assert_string_equal(mopt_status_string(MOPT_ERR_INVALID_ARGUMENT), "invalid argument");
    assert_string_equal(mopt_status_string(MOPT_ERR_CANCELLED), "cancelled");
    assert_string_equal(mopt_status_string(MOPT_ERR_BUSY), "session busy");
    assert_string_equal(mopt_status_string((mopt_status)14), "unknown status");
    assert_string_equal(mopt_status_string((mopt_status)-1), "unknown status");
    assert_string_equal(mopt_status_string((mopt_status)1000), "unknown status");
    /* the enum values are part of the ABI */
    assert_int_equal(MOPT_ERR_PARSE, 4);
    assert_int_equal(MOPT_ERR_INTERNAL, 11);
    assert_int_equal(MOPT_ERR_CANCELLED, 12);
    assert_int_equal(MOPT_ERR_BUSY, 13);
}

MOPT_TEST(api_dtypes) {
    /* values and sizes of ONNX TensorProto.DataType */
    static const struct {
        int onnx;
        mopt_dtype dt;
        size_t size;
        const char *name;
    } k[] = {
        {1, MOPT_DTYPE_F32, 4, "f32"},    {2, MOPT_DTYPE_U8, 1, "u8"},
        {3, MOPT_DTYPE_I8, 1, "i8"},      {4, MOPT_DTYPE_U16, 2, "u16"},
        {5, MOPT_DTYPE_I16, 2, "i16"},    {6, MOPT_DTYPE_I32, 4, "i32"},
        {7, MOPT_DTYPE_I64, 8, "i64"},    {9, MOPT_DTYPE_BOOL, 1, "bool"},
        {10, MOPT_DTYPE_F16, 2, "f16"},   {11, MOPT_DTYPE_F64, 8, "f64"},
        {12, MOPT_DTYPE_U32, 4, "u32"},   {13, MOPT_DTYPE_U64, 8, "u64"},
        {16, MOPT_DTYPE_BF16, 2, "bf16"},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        assert_int_equal((int)k[i].dt, k[i].onnx);
        assert_int_equal(mopt_dtype_size(k[i].dt), k[i].size);
        assert_string_equal(mopt_dtype_name(k[i].dt), k[i].name);
    }
    assert_int_equal(mopt_dtype_size(MOPT_DTYPE_UNDEFINED), 0);
    assert_int_equal(mopt_dtype_size(MOPT_DTYPE_STRING), 0);
    assert_int_equal(mopt_dtype_size((mopt_dtype)99), 0);
    assert_int_equal(mopt_dtype_size((mopt_dtype)-3), 0);
    assert_string_equal(mopt_dtype_name((mopt_dtype)99), "undefined");
    assert_string_equal(mopt_dtype_name(MOPT_DTYPE_UNDEFINED), "undefined");
}

/* ---- options -------------------------------------------------------------- */

static int opts_setup(void **state) { return mopt_options_create((mopt_options **)state); }

static int opts_teardown(void **state) {
    mopt_options_destroy(*state);
    return 0;
}

static void options_defaults(void **state) {
    mopt_options *o = *state;
    const char *s = NULL;
    EXPECT_INT_OPTION(o, "threads", 0);
    EXPECT_INT_OPTION(o, "opt_level", 3);
    EXPECT_INT_OPTION(o, "memory_limit", 0);
    EXPECT_OK(mopt_options_get_string(o, "backend", &s));
    assert_string_equal(s, "auto");
    EXPECT_OK(mopt_options_get_string(o, "precision", &s));
    assert_string_equal(s, "fp32");
    EXPECT_OK(mopt_options_get_string(o, "profile", &s));
    assert_string_equal(s, "");
}

static void options_unknown_key_is_named(void **state) {
    mopt_options *o = *state;
    EXPECT_FAIL(mopt_options_set_int(o, "thread", 2), MOPT_ERR_INVALID_ARGUMENT, "'thread'");
    EXPECT_FAIL(mopt_options_set_double(o, "speed", 2.0), MOPT_ERR_INVALID_ARGUMENT, "'speed'");
    EXPECT_FAIL(mopt_options_set_string(o, "Backend", "ref"), MOPT_ERR_INVALID_ARGUMENT,
                "'Backend'");
    EXPECT_FAIL(mopt_options_set_string(o, "", "x"), MOPT_ERR_INVALID_ARGUMENT, "unknown");
    int64_t v;
    double d;
    const char *s;
    EXPECT_FAIL(mopt_options_get_int(o, "thread", &v), MOPT_ERR_NOT_FOUND, "'thread'");
    EXPECT_FAIL(mopt_options_get_double(o, "speed", &d), MOPT_ERR_NOT_FOUND, "'speed'");
    EXPECT_FAIL(mopt_options_get_string(o, "nope", &s), MOPT_ERR_NOT_FOUND, "'nope'");
    /* a failed set changes nothing */
    EXPECT_INT_OPTION(o, "threads", 0);
}

static void options_wrong_kind(void **state) {
    mopt_options *o = *state;
    EXPECT_FAIL(mopt_options_set_int(o, "backend", 1), MOPT_ERR_INVALID_ARGUMENT, "'backend'");
    EXPECT_FAIL(mopt_options_set_double(o, "precision", 1.0), MOPT_ERR_INVALID_ARGUMENT,
                "'precision'");
    EXPECT_FAIL(mopt_options_set_double(o, "threads", 1.5), MOPT_ERR_INVALID_ARGUMENT, "'threads'");
    int64_t v;
    const char *s;
    EXPECT_FAIL(mopt_options_get_string(o, "threads", &s), MOPT_ERR_INVALID_ARGUMENT, "'threads'");
    EXPECT_FAIL(mopt_options_get_int(o, "backend", &v), MOPT_ERR_INVALID_ARGUMENT, "'backend'");
    /* an integral double is accepted for an int key */
    EXPECT_OK(mopt_options_set_double(o, "threads", 3.0));
    EXPECT_INT_OPTION(o, "threads", 3);
}

static void options_out_of_range(void **state) {
    mopt_options *o = *state;
    EXPECT_FAIL(mopt_options_set_int(o, "threads", -1), MOPT_ERR_INVALID_ARGUMENT, "'threads'");
    EXPECT_FAIL(mopt_options_set_int(o, "opt_level", 4), MOPT_ERR_INVALID_ARGUMENT, "'opt_level'");
    EXPECT_FAIL(mopt_options_set_int(o, "opt_level", -1), MOPT_ERR_INVALID_ARGUMENT, "'opt_level'");
    EXPECT_FAIL(mopt_options_set_int(o, "memory_limit", -5), MOPT_ERR_INVALID_ARGUMENT,
                "'memory_limit'");
    EXPECT_FAIL(mopt_options_set_int(o, "threads", INT64_MIN), MOPT_ERR_INVALID_ARGUMENT,
                "'threads'");
    EXPECT_FAIL(mopt_options_set_string(o, "backend", "gpu"), MOPT_ERR_INVALID_ARGUMENT,
                "'backend'");
    EXPECT_FAIL(mopt_options_set_string(o, "precision", "fp64"), MOPT_ERR_INVALID_ARGUMENT,
                "'precision'");
    for (int64_t lvl = 0; lvl <= 3; lvl++) {
        EXPECT_OK(mopt_options_set_int(o, "opt_level", lvl));
        EXPECT_INT_OPTION(o, "opt_level", lvl);
    }
    static const char *const backends[] = {"auto", "ref", "cpu", "onednn", "openblas"};
    const char *s;
    for (size_t i = 0; i < 5; i++) {
        EXPECT_OK(mopt_options_set_string(o, "backend", backends[i]));
        EXPECT_OK(mopt_options_get_string(o, "backend", &s));
        assert_string_equal(s, backends[i]);
    }
}

static void options_strings_for_int_keys(void **state) {
    mopt_options *o = *state;
    EXPECT_OK(mopt_options_set_string(o, "threads", "4"));
    EXPECT_INT_OPTION(o, "threads", 4);
    EXPECT_OK(mopt_options_set_string(o, "memory_limit", "1048576"));
    EXPECT_INT_OPTION(o, "memory_limit", 1048576);
    EXPECT_FAIL(mopt_options_set_string(o, "threads", "four"), MOPT_ERR_INVALID_ARGUMENT,
                "'threads'");
    EXPECT_FAIL(mopt_options_set_string(o, "threads", "4x"), MOPT_ERR_INVALID_ARGUMENT,
                "'threads'");
    EXPECT_FAIL(mopt_options_set_string(o, "threads", ""), MOPT_ERR_INVALID_ARGUMENT, "'threads'");
    EXPECT_FAIL(mopt_options_set_string(o, "threads", "2.5"), MOPT_ERR_INVALID_ARGUMENT,
                "'threads'");
    EXPECT_FAIL(mopt_options_set_string(o, "threads", "99999999999999999999999"),
                MOPT_ERR_INVALID_ARGUMENT, "'threads'");
    EXPECT_FAIL(mopt_options_set_string(o, "opt_level", "7"), MOPT_ERR_INVALID_ARGUMENT,
                "'opt_level'");
    EXPECT_INT_OPTION(o, "threads", 4); /* unchanged by the failures */
}

static void options_values_are_copied(void **state) {
    mopt_options *o = *state;
    char buf[16] = "ref";
    EXPECT_OK(mopt_options_set_string(o, "backend", buf));
    strcpy(buf, "cpu");
    const char *s;
    EXPECT_OK(mopt_options_get_string(o, "backend", &s));
    assert_string_equal(s, "ref");
    char key[16] = "profile";
    EXPECT_OK(mopt_options_set_string(o, key, "/tmp/trace.json"));
    memset(key, 'x', sizeof key - 1);
    EXPECT_OK(mopt_options_get_string(o, "profile", &s));
    assert_string_equal(s, "/tmp/trace.json");
}

static void options_yaml_string(void **state) {
    mopt_options *o = *state;
    const char *ok = "threads: 2\nbackend: ref\nopt_level: 1\n";
    EXPECT_OK(mopt_options_load_yaml_string(o, ok, strlen(ok)));
    const char *s;
    EXPECT_INT_OPTION(o, "threads", 2);
    EXPECT_INT_OPTION(o, "opt_level", 1);
    EXPECT_OK(mopt_options_get_string(o, "backend", &s));
    assert_string_equal(s, "ref");

    /* the length is honoured: the bad second line is outside it */
    const char *two = "threads: 5\nbogus: 1\n";
    EXPECT_OK(mopt_options_load_yaml_string(o, two, 11));
    EXPECT_INT_OPTION(o, "threads", 5);

    const char *bad_key = "threads: 3\n\nbogus_key: 1\nverbose: 1\n";
    EXPECT_FAIL(mopt_options_load_yaml_string(o, bad_key, strlen(bad_key)),
                MOPT_ERR_INVALID_ARGUMENT, "bogus_key");
    assert_non_null(strstr(mopt_last_error(), "line 3"));
    /* stops at the first bad entry: earlier keys set, later ones not */
    EXPECT_INT_OPTION(o, "threads", 3);
    EXPECT_INT_OPTION(o, "verbose", 0);

    const char *bad_val = "threads: 1\nopt_level: 9\n";
    EXPECT_FAIL(mopt_options_load_yaml_string(o, bad_val, strlen(bad_val)),
                MOPT_ERR_INVALID_ARGUMENT, "line 2");
    assert_non_null(strstr(mopt_last_error(), "opt_level"));

    const char *nested = "threads: 1\nbackend:\n  name: ref\n";
    EXPECT_FAIL(mopt_options_load_yaml_string(o, nested, strlen(nested)), MOPT_ERR_PARSE, "line 3");
    const char *list = "threads: [1, 2]\n";
    EXPECT_FAIL(mopt_options_load_yaml_string(o, list, strlen(list)), MOPT_ERR_PARSE, "line 1");
    const char *top_list = "- threads\n- 2\n";
    EXPECT_FAIL(mopt_options_load_yaml_string(o, top_list, strlen(top_list)), MOPT_ERR_PARSE,
                "line 1");
    const char *scalar = "just some text\n";
    EXPECT_FAIL(mopt_options_load_yaml_string(o, scalar, strlen(scalar)), MOPT_ERR_PARSE, "line 1");
    const char *broken = "threads: 1\nbackend: ref\n- verbose\n";
    EXPECT_FAIL(mopt_options_load_yaml_string(o, broken, strlen(broken)), MOPT_ERR_PARSE, "line 3");
    const char *quote = "threads: 1\nbackend: \"ref\n";
    EXPECT_FAIL(mopt_options_load_yaml_string(o, quote, strlen(quote)), MOPT_ERR_PARSE, "line");
}

static char *write_temp(const char *text) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/mopt_test_api_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
    return path;
}

static void options_yaml_file(void **state) {
    mopt_options *o = *state;
    char *path = write_temp("# libmopt options\nthreads: 3\nprecision: bf16\n");
    EXPECT_OK(mopt_options_load_yaml(o, path));
    const char *s;
    EXPECT_INT_OPTION(o, "threads", 3);
    EXPECT_OK(mopt_options_get_string(o, "precision", &s));
    assert_string_equal(s, "bf16");
    unlink(path);

    path = write_temp("threads: 1\nbackend: ref\nnot_an_option: 4\n");
    EXPECT_FAIL(mopt_options_load_yaml(o, path), MOPT_ERR_INVALID_ARGUMENT, "not_an_option");
    assert_non_null(strstr(mopt_last_error(), "line 3"));
    assert_non_null(strstr(mopt_last_error(), path)); /* the file is named */
    unlink(path);

    path = write_temp("threads: 1\nbackend: {a: 1}\n");
    EXPECT_FAIL(mopt_options_load_yaml(o, path), MOPT_ERR_PARSE, "line 2");
    unlink(path);

    path = write_temp("threads: 1\n\n  : : bad\n\t\n");
    EXPECT_FAIL(mopt_options_load_yaml(o, path), MOPT_ERR_PARSE, "line");
    unlink(path);

    EXPECT_FAIL(mopt_options_load_yaml(o, "/nonexistent/mopt/options.yaml"), MOPT_ERR_IO,
                "/nonexistent/mopt/options.yaml");
}

static void options_null_arguments(void **state) {
    mopt_options *o = *state;
    int64_t v;
    double d;
    const char *s;
    EXPECT_FAIL(mopt_options_create(NULL), MOPT_ERR_INVALID_ARGUMENT, NULL);
    mopt_options_destroy(NULL);
    EXPECT_FAIL(mopt_options_set_int(NULL, "threads", 1), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_set_int(o, NULL, 1), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_set_double(NULL, "threads", 1), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_set_double(o, NULL, 1), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_set_string(NULL, "backend", "ref"), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_set_string(o, NULL, "ref"), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_set_string(o, "backend", NULL), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_get_int(NULL, "threads", &v), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_get_int(o, NULL, &v), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_get_int(o, "threads", NULL), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_get_double(NULL, "threads", &d), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_get_double(o, NULL, &d), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_get_double(o, "threads", NULL), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_get_string(NULL, "backend", &s), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_get_string(o, NULL, &s), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_get_string(o, "backend", NULL), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_load_yaml(NULL, "x.yaml"), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_load_yaml(o, NULL), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_options_load_yaml_string(NULL, "threads: 1", 10), MOPT_ERR_INVALID_ARGUMENT,
                NULL);
    EXPECT_FAIL(mopt_options_load_yaml_string(o, NULL, 10), MOPT_ERR_INVALID_ARGUMENT, NULL);
}

/* ---- tensors -------------------------------------------------------------- */

MOPT_TEST(tensor_create_and_accessors) {
    const int64_t dims[3] = {2, 3, 5};
    mopt_tensor *t = NULL;
    EXPECT_OK(mopt_tensor_create(MOPT_DTYPE_F32, 3, dims, &t));
    assert_int_equal(mopt_tensor_dtype(t), MOPT_DTYPE_F32);
    assert_int_equal(mopt_tensor_rank(t), 3);
    for (int a = 0; a < 3; a++)
        assert_int_equal(mopt_tensor_dim(t, a), dims[a]);
    assert_int_equal(mopt_tensor_dim(t, 3), -1);
    assert_int_equal(mopt_tensor_dim(t, -1), -1);
    assert_memory_equal(mopt_tensor_dims(t), dims, sizeof dims);
    assert_int_equal(mopt_tensor_element_count(t), 30);
    assert_int_equal(mopt_tensor_size_bytes(t), 120);
    float *p = mopt_tensor_data(t);
    assert_non_null(p);
    assert_ptr_equal(p, mopt_tensor_data_const(t));
    assert_int_equal((uintptr_t)p % 64, 0);
    for (int i = 0; i < 30; i++)
        assert_true(p[i] == 0.0f);
    p[29] = 1.0f; /* the whole buffer is writable (ASan checks) */
    mopt_tensor_destroy(t);

    t = NULL;
    EXPECT_OK(mopt_tensor_create(MOPT_DTYPE_I64, 0, NULL, &t)); /* a scalar */
    assert_int_equal(mopt_tensor_rank(t), 0);
    assert_int_equal(mopt_tensor_element_count(t), 1);
    assert_int_equal(mopt_tensor_size_bytes(t), 8);
    assert_non_null(mopt_tensor_data(t));
    assert_int_equal(*(int64_t *)mopt_tensor_data(t), 0);
    mopt_tensor_destroy(t);

    const int64_t empty[2] = {0, 7};
    EXPECT_OK(mopt_tensor_create(MOPT_DTYPE_U8, 2, empty, &t));
    assert_int_equal(mopt_tensor_element_count(t), 0);
    assert_int_equal(mopt_tensor_size_bytes(t), 0);
    assert_int_equal(mopt_tensor_dim(t, 1), 7);
    mopt_tensor_destroy(t);

    const int64_t max_rank[MOPT_MAX_RANK] = {1, 2, 1, 2, 1, 2, 1, 2};
    EXPECT_OK(mopt_tensor_create(MOPT_DTYPE_BOOL, MOPT_MAX_RANK, max_rank, &t));
    assert_int_equal(mopt_tensor_element_count(t), 16);
    mopt_tensor_destroy(t);
}

MOPT_TEST(tensor_create_rejects_bad_shapes) {
    const int64_t dims[MOPT_MAX_RANK + 1] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    mopt_tensor *t = (mopt_tensor *)&t; /* must be reset to NULL */
    EXPECT_FAIL(mopt_tensor_create(MOPT_DTYPE_F32, MOPT_MAX_RANK + 1, dims, &t),
                MOPT_ERR_INVALID_ARGUMENT, "rank");
    assert_null(t);
    t = (mopt_tensor *)&t;
    EXPECT_FAIL(mopt_tensor_create(MOPT_DTYPE_F32, -1, dims, &t), MOPT_ERR_INVALID_ARGUMENT,
                "rank");
    assert_null(t);
    const int64_t neg[2] = {3, -2};
    t = (mopt_tensor *)&t;
    EXPECT_FAIL(mopt_tensor_create(MOPT_DTYPE_F32, 2, neg, &t), MOPT_ERR_INVALID_ARGUMENT,
                "negative");
    assert_null(t);
    EXPECT_FAIL(mopt_tensor_create(MOPT_DTYPE_UNDEFINED, 1, dims, &t), MOPT_ERR_INVALID_ARGUMENT,
                NULL);
    EXPECT_FAIL(mopt_tensor_create(MOPT_DTYPE_STRING, 1, dims, &t), MOPT_ERR_INVALID_ARGUMENT,
                NULL);
    EXPECT_FAIL(mopt_tensor_create((mopt_dtype)77, 1, dims, &t), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_tensor_create(MOPT_DTYPE_F32, 2, NULL, &t), MOPT_ERR_INVALID_ARGUMENT, NULL);
    const int64_t huge[3] = {INT64_MAX / 2, 4, 2};
    t = (mopt_tensor *)&t;
    EXPECT_FAIL(mopt_tensor_create(MOPT_DTYPE_F32, 3, huge, &t), MOPT_ERR_LIMIT, NULL);
    assert_null(t);
    const int64_t big[2] = {(int64_t)1 << 40, (int64_t)1 << 22}; /* 2^62 elements */
    EXPECT_FAIL(mopt_tensor_create(MOPT_DTYPE_F64, 2, big, &t), MOPT_ERR_LIMIT, NULL);
    EXPECT_FAIL(mopt_tensor_create(MOPT_DTYPE_F32, 1, dims, NULL), MOPT_ERR_INVALID_ARGUMENT, NULL);
}

MOPT_TEST(tensor_wrap) {
    float buf[6] = {1, 2, 3, 4, 5, 6};
    const int64_t dims[2] = {2, 3};
    mopt_tensor *t = NULL;
    EXPECT_OK(mopt_tensor_wrap(MOPT_DTYPE_F32, 2, dims, buf, sizeof buf, &t));
    assert_ptr_equal(mopt_tensor_data(t), buf); /* no copy */
    assert_int_equal(mopt_tensor_size_bytes(t), sizeof buf);
    mopt_tensor_destroy(t); /* must not free the caller's (stack) buffer */
    assert_true(buf[5] == 6.0f);

    t = (mopt_tensor *)&t;
    EXPECT_FAIL(mopt_tensor_wrap(MOPT_DTYPE_F32, 2, dims, buf, sizeof buf - 4, &t),
                MOPT_ERR_INVALID_ARGUMENT, "size");
    assert_null(t);
    EXPECT_FAIL(mopt_tensor_wrap(MOPT_DTYPE_F32, 2, dims, buf, sizeof buf + 4, &t),
                MOPT_ERR_INVALID_ARGUMENT, "size");
    EXPECT_FAIL(mopt_tensor_wrap(MOPT_DTYPE_F64, 2, dims, buf, sizeof buf, &t),
                MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_tensor_wrap(MOPT_DTYPE_F32, 2, dims, NULL, sizeof buf, &t),
                MOPT_ERR_INVALID_ARGUMENT, NULL);
    const int64_t neg[2] = {-2, -3};
    EXPECT_FAIL(mopt_tensor_wrap(MOPT_DTYPE_F32, 2, neg, buf, sizeof buf, &t),
                MOPT_ERR_INVALID_ARGUMENT, "negative");
    EXPECT_FAIL(mopt_tensor_wrap(MOPT_DTYPE_F32, MOPT_MAX_RANK + 1, dims, buf, sizeof buf, &t),
                MOPT_ERR_INVALID_ARGUMENT, "rank");
    EXPECT_FAIL(mopt_tensor_wrap(MOPT_DTYPE_F32, 2, dims, buf, sizeof buf, NULL),
                MOPT_ERR_INVALID_ARGUMENT, NULL);
    /* an empty tensor may wrap NULL */
    const int64_t empty[1] = {0};
    EXPECT_OK(mopt_tensor_wrap(MOPT_DTYPE_F32, 1, empty, NULL, 0, &t));
    assert_int_equal(mopt_tensor_element_count(t), 0);
    mopt_tensor_destroy(t);
    /* a scalar wraps one element */
    EXPECT_OK(mopt_tensor_wrap(MOPT_DTYPE_F32, 0, NULL, buf, sizeof(float), &t));
    assert_int_equal(mopt_tensor_element_count(t), 1);
    mopt_tensor_destroy(t);
}

MOPT_TEST(tensor_null_handling) {
    mopt_tensor_destroy(NULL);
    assert_int_equal(mopt_tensor_dtype(NULL), MOPT_DTYPE_UNDEFINED);
    assert_int_equal(mopt_tensor_rank(NULL), -1);
    assert_int_equal(mopt_tensor_dim(NULL, 0), -1);
    assert_null(mopt_tensor_dims(NULL));
    assert_int_equal(mopt_tensor_element_count(NULL), 0);
    assert_int_equal(mopt_tensor_size_bytes(NULL), 0);
    assert_null(mopt_tensor_data(NULL));
    assert_null(mopt_tensor_data_const(NULL));
    mopt_tensor *t = (mopt_tensor *)&t;
    EXPECT_FAIL(mopt_tensor_load(NULL, &t), MOPT_ERR_INVALID_ARGUMENT, NULL);
    assert_null(t);
    EXPECT_FAIL(mopt_tensor_load("tests/unit/data/npy/f32_2x3.npy", NULL),
                MOPT_ERR_INVALID_ARGUMENT, NULL);
    t = (mopt_tensor *)&t;
    EXPECT_FAIL(mopt_tensor_load("/nonexistent/mopt/x.npy", &t), MOPT_ERR_IO,
                "/nonexistent/mopt/x.npy");
    assert_null(t);
    EXPECT_FAIL(mopt_tensor_save_npy(NULL, "/tmp/x.npy"), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_OK(mopt_tensor_create(MOPT_DTYPE_F32, 0, NULL, &t));
    EXPECT_FAIL(mopt_tensor_save_npy(t, NULL), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_tensor_save_npy(t, "/nonexistent/mopt/x.npy"), MOPT_ERR_IO, NULL);
    mopt_tensor_destroy(t);
    /* bf16 has no numpy equivalent */
    EXPECT_OK(mopt_tensor_create(MOPT_DTYPE_BF16, 0, NULL, &t));
    EXPECT_FAIL(mopt_tensor_save_npy(t, "/tmp/mopt_test_api_bf16.npy"), MOPT_ERR_UNSUPPORTED,
                "bf16");
    mopt_tensor_destroy(t);
}

/* ---- models and sessions -------------------------------------------------- */

MOPT_TEST(model_null_handling) {
    mopt_model *m = (mopt_model *)&m;
    EXPECT_FAIL(mopt_model_load(NULL, NULL, &m), MOPT_ERR_INVALID_ARGUMENT, NULL);
    assert_null(m);
    EXPECT_FAIL(mopt_model_load(CNN_MODEL, NULL, NULL), MOPT_ERR_INVALID_ARGUMENT, NULL);
    m = (mopt_model *)&m;
    EXPECT_FAIL(mopt_model_load("/nonexistent/mopt/m.onnx", NULL, &m), MOPT_ERR_IO,
                "/nonexistent/mopt/m.onnx");
    assert_null(m);
    m = (mopt_model *)&m;
    EXPECT_FAIL(mopt_model_load_from_memory(NULL, 16, NULL, &m), MOPT_ERR_INVALID_ARGUMENT, NULL);
    assert_null(m);
    EXPECT_FAIL(mopt_model_load_from_memory("abc", 3, NULL, NULL), MOPT_ERR_INVALID_ARGUMENT, NULL);
    m = (mopt_model *)&m;
    assert_int_not_equal(mopt_model_load_from_memory("\xff\xff\xff\xff", 4, NULL, &m), MOPT_OK);
    assert_null(m);
    mopt_model_destroy(NULL);

    assert_int_equal(mopt_model_io_count(NULL, MOPT_INPUT), 0);
    assert_int_equal(mopt_model_io_count(NULL, MOPT_OUTPUT), 0);
    assert_null(mopt_model_io_name(NULL, MOPT_INPUT, 0));
    assert_int_equal(mopt_model_io_dtype(NULL, MOPT_INPUT, 0), MOPT_DTYPE_UNDEFINED);
    assert_int_equal(mopt_model_io_rank(NULL, MOPT_INPUT, 0), -1);
    assert_int_equal(mopt_model_io_dim(NULL, MOPT_INPUT, 0, 0), -1);
    assert_null(mopt_model_io_dim_name(NULL, MOPT_INPUT, 0, 0));
    size_t idx;
    EXPECT_FAIL(mopt_model_io_find(NULL, MOPT_INPUT, "input", &idx), MOPT_ERR_INVALID_ARGUMENT,
                NULL);
    assert_int_equal(mopt_model_node_count(NULL), 0);
    assert_null(mopt_model_node_op_type(NULL, 0));
    assert_null(mopt_model_node_name(NULL, 0));
    assert_int_equal(mopt_model_opset(NULL, ""), -1);
    assert_int_equal(mopt_model_parameter_count(NULL), 0);
    assert_int_equal(mopt_model_parameter_bytes(NULL), 0);

    size_t n = mopt_supported_op_count();
    for (size_t i = 0; i < n; i++)
        assert_non_null(mopt_supported_op_name(i));
    assert_null(mopt_supported_op_name(n));
    assert_null(mopt_supported_op_name((size_t)-1));
}

MOPT_TEST(session_null_handling) {
    mopt_session *s = (mopt_session *)&s;
    EXPECT_FAIL(mopt_session_create(NULL, NULL, &s), MOPT_ERR_INVALID_ARGUMENT, NULL);
    assert_null(s);
    EXPECT_FAIL(mopt_session_create(NULL, NULL, NULL), MOPT_ERR_INVALID_ARGUMENT, NULL);
    mopt_session_destroy(NULL);
    mopt_tensor *out = NULL;
    EXPECT_FAIL(mopt_session_run(NULL, 0, NULL, NULL, 1, NULL, &out), MOPT_ERR_INVALID_ARGUMENT,
                NULL);
    assert_null(out);
    int64_t v;
    EXPECT_FAIL(mopt_session_get_stat(NULL, "runs", &v), MOPT_ERR_INVALID_ARGUMENT, NULL);
    assert_int_equal(mopt_session_profile_count(NULL), 0);
    assert_null(mopt_session_profile_node(NULL, 0));
    assert_null(mopt_session_profile_op(NULL, 0));
    assert_null(mopt_session_profile_kernel(NULL, 0));
    assert_int_equal(mopt_session_profile_ns(NULL, 0), 0);
    assert_int_equal(mopt_session_profile_flops(NULL, 0), 0);
}

/* Loads the small CNN of the model corpus (f32 input [batch,3,32,32] ->
 * logits [batch,10]); skips while the ONNX importer is a placeholder. */
static mopt_model *load_cnn(void) {
    mopt_model *m = NULL;
    mopt_status st = mopt_model_load(CNN_MODEL, NULL, &m);
    if (st == MOPT_ERR_UNSUPPORTED && strstr(mopt_last_error(), "not implemented")) return NULL;
    if (st) fail_msg("loading %s: %s: %s", CNN_MODEL, mopt_status_string(st), mopt_last_error());
    return m;
}

MOPT_TEST(model_introspection_bounds) {
    mopt_model *m = load_cnn();
    if (!m) skip();
    assert_int_equal(mopt_model_io_count(m, MOPT_INPUT), 1);
    assert_int_equal(mopt_model_io_count(m, MOPT_OUTPUT), 1);
    assert_string_equal(mopt_model_io_name(m, MOPT_INPUT, 0), "input");
    assert_null(mopt_model_io_name(m, MOPT_INPUT, 1));
    assert_null(mopt_model_io_name(m, (mopt_io_kind)7, 0));
    assert_int_equal(mopt_model_io_dtype(m, MOPT_INPUT, 0), MOPT_DTYPE_F32);
    assert_int_equal(mopt_model_io_dtype(m, MOPT_INPUT, 5), MOPT_DTYPE_UNDEFINED);
    assert_int_equal(mopt_model_io_rank(m, MOPT_INPUT, 0), 4);
    assert_int_equal(mopt_model_io_rank(m, MOPT_OUTPUT, 3), -1);
    assert_int_equal(mopt_model_io_dim(m, MOPT_INPUT, 0, 0), -1); /* symbolic */
    assert_string_equal(mopt_model_io_dim_name(m, MOPT_INPUT, 0, 0), "batch");
    assert_int_equal(mopt_model_io_dim(m, MOPT_INPUT, 0, 1), 3);
    assert_null(mopt_model_io_dim_name(m, MOPT_INPUT, 0, 1));
    assert_int_equal(mopt_model_io_dim(m, MOPT_INPUT, 0, 4), -1);
    assert_int_equal(mopt_model_io_dim(m, MOPT_INPUT, 0, -1), -1);
    size_t idx = 99;
    EXPECT_OK(mopt_model_io_find(m, MOPT_OUTPUT, "logits", &idx));
    assert_int_equal(idx, 0);
    EXPECT_FAIL(mopt_model_io_find(m, MOPT_INPUT, "logits", &idx), MOPT_ERR_NOT_FOUND, "logits");
    EXPECT_FAIL(mopt_model_io_find(m, MOPT_INPUT, NULL, &idx), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_model_io_find(m, MOPT_INPUT, "input", NULL), MOPT_ERR_INVALID_ARGUMENT, NULL);
    size_t n = mopt_model_node_count(m);
    assert_true(n > 0);
    assert_non_null(mopt_model_node_op_type(m, n - 1));
    assert_null(mopt_model_node_op_type(m, n));
    assert_null(mopt_model_node_name(m, n));
    assert_int_equal(mopt_model_opset(m, ""), 17);
    assert_int_equal(mopt_model_opset(m, "ai.onnx"), 17);
    assert_int_equal(mopt_model_opset(m, "com.example.none"), -1);
    assert_true(mopt_model_parameter_count(m) > 0);
    assert_true(mopt_model_parameter_bytes(m) >= 4 * mopt_model_parameter_count(m));
    mopt_model_destroy(m);
}

MOPT_TEST(session_run_argument_checks) {
    mopt_model *m = load_cnn();
    if (!m) skip();
    mopt_session *s = NULL;
    EXPECT_FAIL(mopt_session_create(m, NULL, NULL), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_OK(mopt_session_create(m, NULL, &s));
    const int64_t dims[4] = {1, 3, 32, 32}, bad_dims[4] = {1, 4, 32, 32};
    mopt_tensor *in = NULL, *in_i64 = NULL, *in_bad = NULL, *out = NULL;
    EXPECT_OK(mopt_tensor_create(MOPT_DTYPE_F32, 4, dims, &in));
    EXPECT_OK(mopt_tensor_create(MOPT_DTYPE_I64, 4, dims, &in_i64));
    EXPECT_OK(mopt_tensor_create(MOPT_DTYPE_F32, 4, bad_dims, &in_bad));
    const mopt_tensor *ins[2] = {in, in};
    const char *bad_name[1] = {"no_such_input"};
    const char *null_name[1] = {NULL};
    EXPECT_FAIL(mopt_session_run(s, 0, NULL, NULL, 1, NULL, &out), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_session_run(s, 2, NULL, ins, 1, NULL, &out), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_session_run(s, 1, NULL, NULL, 1, NULL, &out), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_session_run(s, 1, bad_name, ins, 1, NULL, &out), MOPT_ERR_NOT_FOUND,
                "no_such_input");
    EXPECT_FAIL(mopt_session_run(s, 1, null_name, ins, 1, NULL, &out), MOPT_ERR_INVALID_ARGUMENT,
                NULL);
    const mopt_tensor *null_in[1] = {NULL};
    EXPECT_FAIL(mopt_session_run(s, 1, NULL, null_in, 1, NULL, &out), MOPT_ERR_INVALID_ARGUMENT,
                NULL);
    const mopt_tensor *wrong_type[1] = {in_i64};
    EXPECT_FAIL(mopt_session_run(s, 1, NULL, wrong_type, 1, NULL, &out), MOPT_ERR_TYPE, "input");
    const mopt_tensor *wrong_shape[1] = {in_bad};
    EXPECT_FAIL(mopt_session_run(s, 1, NULL, wrong_shape, 1, NULL, &out), MOPT_ERR_SHAPE, "input");
    EXPECT_FAIL(mopt_session_run(s, 1, NULL, ins, 1, NULL, NULL), MOPT_ERR_INVALID_ARGUMENT, NULL);
    const char *bad_out[1] = {"no_such_output"};
    EXPECT_FAIL(mopt_session_run(s, 1, NULL, ins, 1, bad_out, &out), MOPT_ERR_NOT_FOUND,
                "no_such_output");
    assert_null(out); /* nothing handed over on failure */
    int64_t v = -1;
    EXPECT_OK(mopt_session_get_stat(s, "runs", &v));
    assert_int_equal(v, 0);
    EXPECT_FAIL(mopt_session_get_stat(s, "bogus_stat", &v), MOPT_ERR_NOT_FOUND, "bogus_stat");
    EXPECT_FAIL(mopt_session_get_stat(s, NULL, &v), MOPT_ERR_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(mopt_session_get_stat(s, "runs", NULL), MOPT_ERR_INVALID_ARGUMENT, NULL);
    mopt_tensor_destroy(in);
    mopt_tensor_destroy(in_i64);
    mopt_tensor_destroy(in_bad);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
}

#define OPT_TEST(f) cmocka_unit_test_setup_teardown(f, opts_setup, opts_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(api_version),
        cmocka_unit_test(api_status_strings),
        cmocka_unit_test(api_dtypes),
        OPT_TEST(options_defaults),
        OPT_TEST(options_unknown_key_is_named),
        OPT_TEST(options_wrong_kind),
        OPT_TEST(options_out_of_range),
        OPT_TEST(options_strings_for_int_keys),
        OPT_TEST(options_values_are_copied),
        OPT_TEST(options_yaml_string),
        OPT_TEST(options_yaml_file),
        OPT_TEST(options_null_arguments),
        cmocka_unit_test(tensor_create_and_accessors),
        cmocka_unit_test(tensor_create_rejects_bad_shapes),
        cmocka_unit_test(tensor_wrap),
        cmocka_unit_test(tensor_null_handling),
        cmocka_unit_test(model_null_handling),
        cmocka_unit_test(session_null_handling),
        cmocka_unit_test(model_introspection_bounds),
        cmocka_unit_test(session_run_argument_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
