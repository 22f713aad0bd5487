/*
 * test_shape_leniency.c — shapes as exporters really write them load and
 * run: every "?" (or empty) dim_param is its own unknown dim, and a declared
 * output or value_info shape that inference contradicts is a warning (the
 * computed shape wins), reported by mopt_model_check with status OK and
 * printed under verbose, naming the value. Models: gen_leniency_models.py.
 */
#define MOPT_EXPERIMENTAL_API /* mopt_model_check */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <mopt/mopt.h>

#include "../test_check.h"
#include "../test_main.h"

#define UNKNOWN_DIMS "tests/unit/data/lenient_unknown_dims.onnx"
#define DECLARED_SHAPES "tests/unit/data/lenient_declared_shapes.onnx"

/* Runs a one-input-per-name model on f32 tensors; returns the outputs. */
static void run_f32(mopt_model *m, size_t n_in, const char **names, int rank[], int64_t dims[][4],
                    float *data[], size_t n_out, mopt_tensor **outs) {
    mopt_session *s = NULL;
    assert_int_equal(mopt_session_create(m, NULL, &s), MOPT_OK);
    mopt_tensor *in[4] = {0};
    for (size_t i = 0; i < n_out; i++)
        outs[i] = NULL; /* the library allocates them */
    for (size_t i = 0; i < n_in; i++) {
        size_t count = 1;
        for (int d = 0; d < rank[i]; d++)
            count *= (size_t)dims[i][d];
        assert_int_equal(mopt_tensor_wrap(MOPT_DTYPE_F32, rank[i], dims[i], data[i],
                                          count * sizeof(float), &in[i]),
                         MOPT_OK);
    }
    mopt_status st =
        mopt_session_run(s, n_in, names, (const mopt_tensor *const *)in, n_out, NULL, outs);
    if (st) fprintf(stderr, "run: %s\n", mopt_last_error());
    assert_int_equal(st, MOPT_OK);
    for (size_t i = 0; i < n_in; i++)
        mopt_tensor_destroy(in[i]);
    mopt_session_destroy(s);
}

MOPT_TEST(leniency_question_mark_dims_are_independent) {
    mopt_model *m = NULL;
    mopt_status st = mopt_model_load(UNKNOWN_DIMS, NULL, &m);
    if (st) fprintf(stderr, "load: %s\n", mopt_last_error());
    assert_int_equal(st, MOPT_OK);
    /* no "?" symbol: the two axes are unknown, each on its own */
    assert_int_equal(mopt_model_io_dim(m, MOPT_INPUT, 0, 1), 3);
    assert_int_equal(mopt_model_io_dim(m, MOPT_INPUT, 0, 2), -1);
    assert_null(mopt_model_io_dim_name(m, MOPT_INPUT, 0, 2));
    assert_null(mopt_model_io_dim_name(m, MOPT_INPUT, 0, 3));
    assert_null(mopt_model_io_dim_name(m, MOPT_INPUT, 1, 0));

    /* non-square x (the PP-OCR classifier's 48 x 192), and e with 5 rows */
    enum { H = 48, W = 192, XN = 3 * H * W, EN = 5 * 4 };
    float *x = malloc(XN * sizeof *x), e[EN];
    assert_non_null(x);
    for (int i = 0; i < XN; i++)
        x[i] = (float)((i * 37) % 101) - 50.0f;
    for (int i = 0; i < EN; i++)
        e[i] = (float)i - 10.0f;
    const char *names[] = {"x", "e"};
    int rank[] = {4, 2};
    int64_t dims[][4] = {{1, 3, H, W}, {5, 4, 0, 0}};
    float *data[] = {x, e};
    mopt_tensor *out[2] = {0};
    run_f32(m, 2, names, rank, dims, data, 2, out);
    assert_int_equal(mopt_tensor_rank(out[0]), 4);
    const int64_t *yd = mopt_tensor_dims(out[0]);
    assert_int_equal(yd[2], H);
    assert_int_equal(yd[3], W);
    const float *y = mopt_tensor_data(out[0]);
    for (int i = 0; i < XN; i++)
        assert_true(y[i] == (x[i] > 0 ? x[i] : 0.0f));
    assert_int_equal(mopt_tensor_dims(out[1])[0], 5);
    const float *f = mopt_tensor_data(out[1]);
    for (int i = 0; i < EN; i++)
        assert_true(f[i] == (e[i] > 0 ? e[i] : 0.0f));
    mopt_tensor_destroy(out[0]);
    mopt_tensor_destroy(out[1]);

    /* a square x and another batch still run through the same model */
    int64_t dims2[][4] = {{2, 3, 16, 16}, {1, 4, 0, 0}};
    run_f32(m, 2, names, rank, dims2, data, 2, out);
    assert_int_equal(mopt_tensor_dims(out[0])[0], 2);
    assert_int_equal(mopt_tensor_dims(out[0])[3], 16);
    mopt_tensor_destroy(out[0]);
    mopt_tensor_destroy(out[1]);
    free(x);
    mopt_model_destroy(m);
}

MOPT_TEST(leniency_declared_shape_is_a_warning_in_check) {
    test_check_seen w = {0};
    size_t n = 99;
    assert_int_equal(mopt_model_check(DECLARED_SHAPES, NULL, test_check_record, &w, &n), MOPT_OK);
    assert_int_equal(n, 0);
    assert_int_equal(w.n_not_ok, 0);
    assert_int_equal(w.n, 3);
    /* each message names the value first, with both shapes */
    assert_true(test_check_said(&w, "output 'y' is declared [1,seqlen] but computes to [3,2]"));
    assert_true(test_check_said(&w, "output 'z' is declared [2,5] but computes to [2,3]"));
    assert_true(test_check_said(&w, "value 'mid' is declared [7,7] but computes to [2,3]"));
}

MOPT_TEST(leniency_declared_shape_loads_and_runs) {
    mopt_model *m = NULL;
    for (int level = 0; level <= 3; level += 3) {
        mopt_options *o = NULL;
        assert_int_equal(mopt_options_create(&o), MOPT_OK);
        assert_int_equal(mopt_options_set_int(o, "opt_level", level), MOPT_OK);
        mopt_status st = mopt_model_load(DECLARED_SHAPES, o, &m);
        mopt_options_destroy(o);
        if (st) fprintf(stderr, "load: %s\n", mopt_last_error());
        assert_int_equal(st, MOPT_OK);
        /* the computed shapes are what the model reports */
        size_t yi = 0, zi = 0;
        assert_int_equal(mopt_model_io_find(m, MOPT_OUTPUT, "y", &yi), MOPT_OK);
        assert_int_equal(mopt_model_io_find(m, MOPT_OUTPUT, "z", &zi), MOPT_OK);
        assert_int_equal(mopt_model_io_rank(m, MOPT_OUTPUT, yi), 2);
        assert_int_equal(mopt_model_io_dim(m, MOPT_OUTPUT, yi, 0), 3);
        assert_int_equal(mopt_model_io_dim(m, MOPT_OUTPUT, yi, 1), 2);
        assert_int_equal(mopt_model_io_dim(m, MOPT_OUTPUT, zi, 1), 3);
        float x[6] = {-1, 2, -3, 4, -5, 6};
        const char *names[] = {"x"};
        int rank[] = {2};
        int64_t dims[][4] = {{2, 3, 0, 0}};
        float *data[] = {x};
        mopt_tensor *out[2] = {0};
        run_f32(m, 1, names, rank, dims, data, 2, out);
        mopt_tensor *y = out[yi], *z = out[zi];
        assert_int_equal(mopt_tensor_dims(y)[0], 3);
        assert_int_equal(mopt_tensor_dims(y)[1], 2);
        assert_int_equal(mopt_tensor_dims(z)[1], 3);
        const float *yv = mopt_tensor_data(y), *zv = mopt_tensor_data(z);
        for (int i = 0; i < 6; i++) {
            float r = x[i] > 0 ? x[i] : 0.0f;
            assert_true(yv[i] == r);
            assert_true(zv[i] == -r);
        }
        mopt_tensor_destroy(out[0]);
        mopt_tensor_destroy(out[1]);
        mopt_model_destroy(m);
    }
}

/* With verbose on, loading prints the warnings to stderr. */
MOPT_TEST(leniency_declared_shape_warns_when_verbose) {
    char path[] = "/tmp/mopt_leniency_stderr_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fd, STDERR_FILENO) >= 0);
    mopt_options *o = NULL;
    mopt_model *m = NULL;
    mopt_status st = mopt_options_create(&o);
    if (!st) st = mopt_options_set_int(o, "verbose", 1);
    if (!st) st = mopt_model_load(DECLARED_SHAPES, o, &m);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    mopt_options_destroy(o);
    mopt_model_destroy(m);
    assert_int_equal(st, MOPT_OK);

    char text[16384];
    FILE *f = fdopen(fd, "r");
    assert_non_null(f);
    rewind(f);
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = '\0';
    fclose(f);
    unlink(path);
    assert_non_null(strstr(text, "mopt: warning: output 'y' is declared [1,seqlen]"));
    assert_non_null(strstr(text, "mopt: warning: value 'mid' is declared [7,7]"));

    /* without verbose, nothing is printed */
    memcpy(path + strlen(path) - 6, "XXXXXX", 6);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    saved = dup(STDERR_FILENO);
    assert_true(dup2(fd, STDERR_FILENO) >= 0);
    setenv("MOPT_VERBOSE", "0", 1);
    st = mopt_model_load(DECLARED_SHAPES, NULL, &m);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    mopt_model_destroy(m);
    assert_int_equal(st, MOPT_OK);
    f = fdopen(fd, "r");
    assert_non_null(f);
    rewind(f);
    len = fread(text, 1, sizeof text - 1, f);
    text[len] = '\0';
    fclose(f);
    unlink(path);
    assert_null(strstr(text, "warning"));
}

MOPT_TEST_MAIN(cmocka_unit_test(leniency_question_mark_dims_are_independent),
               cmocka_unit_test(leniency_declared_shape_is_a_warning_in_check),
               cmocka_unit_test(leniency_declared_shape_loads_and_runs),
               cmocka_unit_test(leniency_declared_shape_warns_when_verbose))
