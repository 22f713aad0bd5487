/*
 * test_inplace.c — a fused conv's output takes its residual's buffer (the
 * memory plan's in-place outputs, op_impl.inplace): planned when the residual
 * dies at the conv, never when it is read again later, and the outputs are
 * bit-identical to runs with MOPT_INPLACE=0 (no sharing), in fp32 and bf16.
 */
#define MOPT_EXPERIMENTAL_API /* session stats */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mopt/mopt.h>

#include "../test_main.h"
#include "../test_pb_writer.h"

#include "mopt_config.h"

#define C 8
#define N 2
#define HW 10

/* A node of op type `op` with up to 3 inputs (NULL ends them) and output out. */
static void node(buf *g, const char *op, const char *name, const char *a, const char *b,
                 const char *c, const char *out) {
    buf n = {0};
    f_str(&n, 1, a);
    if (b) f_str(&n, 1, b);
    if (c) f_str(&n, 1, c);
    f_str(&n, 2, out);
    f_str(&n, 3, name);
    f_str(&n, 4, op);
    f_msg(g, 1, &n);
}

/* A [C, C, 1, 1] weight named name, its values from seed. */
static void weight(buf *g, const char *name, int seed) {
    float w[C * C];
    for (int i = 0; i < C * C; i++)
        w[i] = (float)((i * 7 + seed * 13) % 17 - 8) / 16.f;
    buf t = {0};
    int64_t dims[4] = {C, C, 1, 1};
    for (int i = 0; i < 4; i++)
        f_int(&t, 1, (uint64_t)dims[i]);
    f_int(&t, 2, 1); /* FLOAT */
    f_str(&t, 8, name);
    f_bytes(&t, 9, w, sizeof w); /* little-endian host */
    f_msg(g, 5, &t);
}

/* a = Relu(x); b = Conv(a, w1); d = Conv(b, w2) + a (a FusedConv with
 * residual a); y = d * d, or, when reuse, y = d * a: a is then read after the
 * fused conv and must keep its bytes. */
static buf model(bool reuse) {
    buf g = {0};
    node(&g, "Relu", "relu", "x", NULL, NULL, "a");
    node(&g, "Conv", "conv1", "a", "w1", NULL, "b");
    node(&g, "Conv", "conv2", "b", "w2", NULL, "c");
    node(&g, "Add", "add", "c", "a", NULL, "d");
    node(&g, "Mul", "mul", "d", reuse ? "a" : "d", NULL, "y");
    f_str(&g, 2, "inplace");
    weight(&g, "w1", 1);
    weight(&g, "w2", 2);
    int64_t dims[4] = {N, C, HW, HW};
    value_info(&g, 11, "x", 1, 4, dims);
    value_info(&g, 12, "y", 1, 4, dims);
    return model_proto(&g);
}

typedef struct result {
    float y[N * C * HW * HW];
    int64_t inplace, arena;
} result;

/* Loads m at precision, runs it twice (the second run from the memory plan)
 * with inplace on or off, and returns the output and the plan's stats. */
static void run(const buf *m, const char *precision, bool inplace, result *r) {
    setenv("MOPT_INPLACE", inplace ? "1" : "0", 1);
    mopt_options *opts = NULL;
    mopt_model *model = NULL;
    mopt_session *s = NULL;
    assert_int_equal(mopt_options_create(&opts), MOPT_OK);
    assert_int_equal(mopt_options_set_string(opts, "precision", precision), MOPT_OK);
    assert_int_equal(mopt_model_load_from_memory(m->p, m->n, opts, &model), MOPT_OK);
    assert_int_equal(mopt_session_create(model, opts, &s), MOPT_OK);
    int64_t dims[4] = {N, C, HW, HW};
    mopt_tensor *x = NULL, *y = NULL;
    assert_int_equal(mopt_tensor_create(MOPT_DTYPE_F32, 4, dims, &x), MOPT_OK);
    float *xd = mopt_tensor_data(x);
    for (int i = 0; i < N * C * HW * HW; i++)
        xd[i] = (float)((i * 31) % 23 - 9) / 8.f;
    for (int k = 0; k < 2; k++) {
        mopt_tensor_destroy(y);
        y = NULL;
        if (mopt_session_run(s, 1, NULL, (const mopt_tensor *const *)&x, 1, NULL, &y) != MOPT_OK)
            fail_msg("run failed: %s", mopt_last_error());
    }
    memcpy(r->y, mopt_tensor_data(y), sizeof r->y);
    assert_int_equal(mopt_session_get_stat(s, "inplace_outputs", &r->inplace), MOPT_OK);
    assert_int_equal(mopt_session_get_stat(s, "arena_bytes", &r->arena), MOPT_OK);
    mopt_tensor_destroy(x);
    mopt_tensor_destroy(y);
    mopt_session_destroy(s);
    mopt_model_destroy(model);
    mopt_options_destroy(opts);
    unsetenv("MOPT_INPLACE");
}

/* The plain result, computed here from the model's definition. */
static void expected(bool reuse, float *y) {
    static float a[N * C * HW * HW], b[N * C * HW * HW], d[N * C * HW * HW];
    float w[2][C * C];
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < C * C; i++)
            w[s][i] = (float)((i * 7 + (s + 1) * 13) % 17 - 8) / 16.f;
    for (int i = 0; i < N * C * HW * HW; i++) {
        float x = (float)((i * 31) % 23 - 9) / 8.f;
        a[i] = x > 0 ? x : 0;
    }
    for (int n = 0; n < N; n++)
        for (int o = 0; o < C; o++)
            for (int p = 0; p < HW * HW; p++) {
                double sb = 0;
                for (int c = 0; c < C; c++)
                    sb += (double)w[0][o * C + c] * a[(n * C + c) * HW * HW + p];
                b[(n * C + o) * HW * HW + p] = (float)sb;
            }
    for (int n = 0; n < N; n++)
        for (int o = 0; o < C; o++)
            for (int p = 0; p < HW * HW; p++) {
                int at = (n * C + o) * HW * HW + p;
                double sd = 0;
                for (int c = 0; c < C; c++)
                    sd += (double)w[1][o * C + c] * b[(n * C + c) * HW * HW + p];
                d[at] = (float)sd + a[at];
                y[at] = d[at] * (reuse ? a[at] : d[at]);
            }
}

static void check(bool reuse, const char *precision) {
    buf m = model(reuse);
    static result on, off;
    static float want[N * C * HW * HW];
    run(&m, precision, true, &on);
    run(&m, precision, false, &off);
    free(m.p);
    printf("[ INFO     ] %s %s: in place %lld outputs, arena %lld bytes (%lld without)\n",
           reuse ? "residual read again" : "residual dies", precision, (long long)on.inplace,
           (long long)on.arena, (long long)off.arena);
    assert_int_equal(off.inplace, 0);
    if (memcmp(on.y, off.y, sizeof on.y) != 0) fail_msg("in-place outputs differ from plain ones");
    expected(reuse, want);
    double tol = strcmp(precision, "bf16") == 0 ? 0.1 : 1e-4;
    for (int i = 0; i < N * C * HW * HW; i++) {
        double e = want[i], g = on.y[i], d = e > g ? e - g : g - e;
        if (d > tol * (1 + (e > 0 ? e : -e))) fail_msg("y[%d] = %g, expected %g", i, g, e);
    }
    if (reuse) {
        assert_int_equal(on.inplace, 0);
        assert_int_equal(on.arena, off.arena);
    } else {
#ifdef MOPT_HAVE_ONEDNN
        /* the FusedConv's output takes a's bytes: one tensor less in the arena */
        assert_true(on.inplace >= 1);
        assert_true(on.arena < off.arena);
#endif
    }
}

MOPT_TEST(residual_dies_fp32) { check(false, "fp32"); }

MOPT_TEST(residual_dies_bf16) { check(false, "bf16"); }

MOPT_TEST(residual_read_again) {
    check(true, "fp32");
    check(true, "bf16");
}

MOPT_TEST_MAIN(cmocka_unit_test(residual_dies_fp32), cmocka_unit_test(residual_dies_bf16),
               cmocka_unit_test(residual_read_again))
