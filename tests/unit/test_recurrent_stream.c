/*
 * test_recurrent_stream.c — stateful streaming through LSTM, as a voice-
 * activity detector is used: tests/ops/stream/lstm_vad (written by
 * tests/ops/gen_recurrent.py) holds a silero-vad-sized LSTM (input 64,
 * hidden 64, batch 1, symbolic seq), 20 chunks of 1..4 steps, and ONNX
 * Runtime's Y, Y_h, Y_c for each chunk with ORT's own state carried. Here
 * libmopt carries its own state (Y_h, Y_c -> initial_h, initial_c):
 *  - every chunk matches ORT (|got - ort| <= 1e-4 * max(1, |ort|));
 *  - the chunks' Y, concatenated, equal one whole-sequence run, and the last
 *    state equals the whole run's Y_h, Y_c (1e-6: only summation order may
 *    differ);
 * on the reference backend and on the automatic choice (the cpu fast path).
 * Public API only.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <mopt/mopt.h>

#include "../test_main.h"

#define DIR "tests/ops/stream/lstm_vad/"
#define H 64
#define I 64

static mopt_tensor *load(const char *name) {
    mopt_tensor *t = NULL;
    if (mopt_tensor_load(name, &t) != MOPT_OK)
        fail_msg("cannot read %s: %s", name, mopt_last_error());
    return t;
}

static mopt_tensor *make(int rank, const int64_t *dims, const float *src) {
    mopt_tensor *t = NULL;
    assert_int_equal(mopt_tensor_create(MOPT_DTYPE_F32, rank, dims, &t), MOPT_OK);
    if (src) memcpy(mopt_tensor_data(t), src, mopt_tensor_size_bytes(t));
    return t;
}

/* Checks n floats of got against want: |d| <= tol * max(1, |want|). */
static void expect_close(const char *what, int chunk, const float *got, const float *want,
                         int64_t n, double tol) {
    for (int64_t i = 0; i < n; i++) {
        double w = want[i], d = fabs((double)got[i] - w);
        if (!(d <= tol * (fabs(w) > 1 ? fabs(w) : 1)))
            fail_msg("%s, chunk %d, element %lld: %.9g, expected %.9g (|diff| %.3g > %.3g)", what,
                     chunk, (long long)i, (double)got[i], w, d, tol);
    }
}

/* One run: x [n, 1, I] from src, states h, c; outputs y, hn, cn (created). */
static void run(mopt_session *s, const float *x, int64_t n, const float *h, const float *c,
                mopt_tensor **out) {
    int64_t xd[3] = {n, 1, I}, sd[3] = {1, 1, H};
    mopt_tensor *in[3] = {make(3, xd, x), make(3, sd, h), make(3, sd, c)};
    const char *names[3] = {"x", "h0", "c0"};
    out[0] = out[1] = out[2] = NULL;
    mopt_status st = mopt_session_run(s, 3, names, (const mopt_tensor *const *)in, 3, NULL, out);
    for (int k = 0; k < 3; k++)
        mopt_tensor_destroy(in[k]);
    if (st != MOPT_OK) fail_msg("run of %lld steps: %s", (long long)n, mopt_last_error());
}

static void stream_with(const char *backend) {
    mopt_options *o = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_string(o, "backend", backend), MOPT_OK);
    mopt_model *m = NULL;
    if (mopt_model_load(DIR "model.onnx", o, &m) != MOPT_OK)
        fail_msg("load (%s): %s", backend, mopt_last_error());
    mopt_session *s = NULL;
    assert_int_equal(mopt_session_create(m, o, &s), MOPT_OK);
    mopt_tensor *x = load(DIR "x.npy"), *lens = load(DIR "chunk_lens.npy");
    mopt_tensor *oy = load(DIR "ort_y.npy"), *oh = load(DIR "ort_h.npy"),
                *oc = load(DIR "ort_c.npy");
    int64_t T = mopt_tensor_dim(x, 0), n_chunks = mopt_tensor_element_count(lens);
    assert_int_equal(n_chunks, 20);
    assert_int_equal(mopt_tensor_element_count(oy), T * H);
    const float *xs = mopt_tensor_data_const(x);
    const int64_t *ls = mopt_tensor_data_const(lens);

    /* the whole sequence at once, from zero state */
    float zero[H] = {0};
    mopt_tensor *whole[3];
    run(s, xs, T, zero, zero, whole);
    /* chunk by chunk, state carried */
    float h[H], c[H];
    memcpy(h, zero, sizeof h);
    memcpy(c, zero, sizeof c);
    int64_t pos = 0;
    for (int k = 0; k < n_chunks; k++) {
        int64_t n = ls[k];
        mopt_tensor *out[3];
        run(s, xs + pos * I, n, h, c, out);
        assert_int_equal(mopt_tensor_element_count(out[0]), n * H);
        const float *y = mopt_tensor_data_const(out[0]);
        expect_close("Y vs ORT", k, y, (const float *)mopt_tensor_data_const(oy) + pos * H, n * H,
                     1e-4);
        expect_close("Y_h vs ORT", k, mopt_tensor_data_const(out[1]),
                     (const float *)mopt_tensor_data_const(oh) + k * H, H, 1e-4);
        expect_close("Y_c vs ORT", k, mopt_tensor_data_const(out[2]),
                     (const float *)mopt_tensor_data_const(oc) + k * H, H, 1e-4);
        expect_close("Y vs the whole-sequence run", k, y,
                     (const float *)mopt_tensor_data_const(whole[0]) + pos * H, n * H, 1e-6);
        memcpy(h, mopt_tensor_data_const(out[1]), sizeof h);
        memcpy(c, mopt_tensor_data_const(out[2]), sizeof c);
        for (int j = 0; j < 3; j++)
            mopt_tensor_destroy(out[j]);
        pos += n;
    }
    assert_int_equal(pos, T);
    expect_close("final Y_h vs the whole run", 19, h, mopt_tensor_data_const(whole[1]), H, 1e-6);
    expect_close("final Y_c vs the whole run", 19, c, mopt_tensor_data_const(whole[2]), H, 1e-6);
    /* the state really moves: it is not still zero after 20 chunks */
    double norm = 0;
    for (int j = 0; j < H; j++)
        norm += fabs(h[j]) + fabs(c[j]);
    assert_true(norm > 0.1);
    for (int j = 0; j < 3; j++)
        mopt_tensor_destroy(whole[j]);
    mopt_tensor_destroy(x);
    mopt_tensor_destroy(lens);
    mopt_tensor_destroy(oy);
    mopt_tensor_destroy(oh);
    mopt_tensor_destroy(oc);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
    mopt_options_destroy(o);
}

MOPT_TEST(recurrent_stream_ref) { stream_with("ref"); }

MOPT_TEST(recurrent_stream_auto) { stream_with("auto"); }

MOPT_TEST_MAIN(cmocka_unit_test(recurrent_stream_ref), cmocka_unit_test(recurrent_stream_auto))
