/*
 * test_rnn_weight_inputs.c — LSTM and GRU whose W, R and B are graph inputs
 * (tests/unit/data/rnn_weight_inputs.onnx, gen_rnn_weight_inputs.py), as a
 * subgraph's captured weights are. The cpu kernels pack such weights at run
 * time and reuse the packing while the bytes are unchanged: a session fed
 * weight set A, then B, then A again, then A changed in place (same buffer)
 * must give, bitwise, what a fresh session gives for each set.
 */
#define MOPT_EXPERIMENTAL_API
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mopt/mopt.h>

#include "../test_main.h"

#define MODEL "tests/unit/data/rnn_weight_inputs.onnx"
#define N_IN 7 /* x, lW lR lB, gW gR gB */

static const int64_t k_dims[N_IN][3] = {{5, 2, 8},  {2, 64, 8},  {2, 64, 16}, {2, 128, 0},
                                        {1, 48, 8}, {1, 48, 16}, {1, 96, 0}};

static int64_t numel(int i) {
    int64_t n = 1;
    for (int d = 0; d < 3 && k_dims[i][d]; d++)
        n *= k_dims[i][d];
    return n;
}

static void fill(float *p, int64_t n, uint32_t seed) {
    uint32_t s = seed * 2654435761u + 12345u;
    for (int64_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        p[i] = (float)((int32_t)(s >> 8) % 2001) / 4000.f; /* [-0.5, 0.5] */
    }
}

typedef struct {
    float *buf[N_IN];
    mopt_tensor *t[N_IN];
} feed;

static void feed_make(feed *f, uint32_t seed) {
    for (int i = 0; i < N_IN; i++) {
        int64_t n = numel(i);
        f->buf[i] = malloc((size_t)n * sizeof(float));
        assert_non_null(f->buf[i]);
        fill(f->buf[i], n, i == 0 ? 7u : seed * 31u + (uint32_t)i);
        int rank = k_dims[i][2] ? 3 : 2;
        assert_int_equal(mopt_tensor_wrap(MOPT_DTYPE_F32, rank, k_dims[i], f->buf[i],
                                          (size_t)n * sizeof(float), &f->t[i]),
                         MOPT_OK);
    }
}

static void feed_free(feed *f) {
    for (int i = 0; i < N_IN; i++) {
        mopt_tensor_destroy(f->t[i]);
        free(f->buf[i]);
    }
}

static mopt_session *session(const mopt_model *m) {
    mopt_options *o = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "threads", 1), MOPT_OK);
    assert_int_equal(mopt_options_set_string(o, "profile", "1"), MOPT_OK);
    mopt_session *s = NULL;
    assert_int_equal(mopt_session_create(m, o, &s), MOPT_OK);
    mopt_options_destroy(o);
    return s;
}

/* Runs and returns the two outputs (owned). */
static void run(mopt_session *s, const feed *f, mopt_tensor *out[2]) {
    out[0] = out[1] = NULL;
    mopt_status st =
        mopt_session_run(s, N_IN, NULL, (const mopt_tensor *const *)f->t, 2, NULL, out);
    if (st) fail_msg("run: %s", mopt_last_error());
}

static int same(mopt_tensor *const a[2], mopt_tensor *const b[2]) {
    for (int k = 0; k < 2; k++)
        if (mopt_tensor_size_bytes(a[k]) != mopt_tensor_size_bytes(b[k]) ||
            memcmp(mopt_tensor_data_const(a[k]), mopt_tensor_data_const(b[k]),
                   mopt_tensor_size_bytes(a[k])) != 0)
            return 0;
    return 1;
}

static void drop(mopt_tensor *y[2]) {
    mopt_tensor_destroy(y[0]);
    mopt_tensor_destroy(y[1]);
}

/* What a fresh session gives for f. */
static void fresh(const mopt_model *m, const feed *f, mopt_tensor *out[2]) {
    mopt_session *s = session(m);
    run(s, f, out);
    mopt_session_destroy(s);
}

MOPT_TEST(packing_follows_the_bytes) {
    mopt_model *m = NULL;
    if (mopt_model_load(MODEL, NULL, &m)) fail_msg("%s", mopt_last_error());
    feed a, b;
    feed_make(&a, 1);
    feed_make(&b, 2);
    mopt_session *s = session(m);
    mopt_tensor *ya[2], *yb[2], *ya2[2], *yc[2], *ref[2];
    run(s, &a, ya);
    /* the fast kernels ran (the memo lives in them), not the reference */
    for (size_t i = 0; i < mopt_session_profile_count(s); i++) {
        const char *op = mopt_session_profile_op(s, i), *kern = mopt_session_profile_kernel(s, i);
        if (strcmp(op, "LSTM") == 0 || strcmp(op, "GRU") == 0)
            if (strncmp(kern, "cpu", 3) != 0) fail_msg("%s ran on '%s'", op, kern);
    }
    run(s, &b, yb);
    fresh(m, &b, ref);
    assert_true(same(yb, ref));
    assert_false(same(ya, yb));
    drop(ref);
    run(s, &a, ya2);
    assert_true(same(ya, ya2));
    /* one weight of each matrix changed in place: same buffers, new bytes */
    for (int i = 1; i < N_IN; i++)
        a.buf[i][numel(i) / 2] += 0.25f;
    run(s, &a, yc);
    assert_false(same(yc, ya));
    fresh(m, &a, ref);
    assert_true(same(yc, ref));
    drop(ref);
    drop(ya), drop(yb), drop(ya2), drop(yc);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
    feed_free(&a);
    feed_free(&b);
}

MOPT_TEST_MAIN(cmocka_unit_test(packing_follows_the_bytes))
