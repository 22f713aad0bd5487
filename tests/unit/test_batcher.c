/*
 * test_batcher.c — mopt_batcher (suites unit and tsan): batched runs give
 * each request the rows a single run gives (bitwise at one length; within a
 * measured bound when ragged requests are zero-padded to a seq bucket under
 * the attention mask, outputs cropped back), a bad request fails alone (at
 * the checks, or inside the graph: then the batch is rerun one by one), a
 * full queue answers BUSY at once, a request not started within its
 * timeout answers CANCELLED, destroy drains the queue, the counters add up,
 * and many threads submitting at once all get their own results. Public API
 * only; every session runs with 1 thread, so TSan sees the callers' and the
 * workers' threads only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#define MOPT_EXPERIMENTAL_API
#include "../kernels/test_rng.h"
#include "../test_main.h"
#include <mopt/mopt.h>
#include <pthread.h>

#define BERT_TINY "examples/models/bert_tiny.onnx" /* hidden 128, vocab 1000 */
#define BERT_SMALL "tests/models/bert/model.onnx"  /* hidden 64, vocab 1000 */
#define MAX_LEN 64

/* Largest |batched - single| allowed over the real tokens' outputs (of
 * magnitude ~4, where one float ulp is 4.8e-7). Measured on AMD Zen 4
 * (AVX-512): 0, bitwise equal, also with ragged requests zero-padded to a
 * bucket (masked keys get softmax weight exactly 0 and add exact zeros).
 * The bound leaves ~8 ulp for kernels that block a larger batch
 * differently on other CPUs. */
#define PAD_TOL 4e-6f

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- models, samples, single-run references ------------------------------- */

static mopt_options *one_thread(void) {
    mopt_options *o = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "threads", 1), MOPT_OK);
    return o;
}

static mopt_model *load(const char *path) {
    mopt_options *o = one_thread();
    mopt_model *m = NULL;
    mopt_status st = mopt_model_load(path, o, &m);
    mopt_options_destroy(o);
    if (st) fail_msg("loading %s: %s", path, mopt_last_error());
    return m;
}

typedef struct {
    int64_t len;
    int64_t ids[MAX_LEN], mask[MAX_LEN];
    mopt_tensor *in[2];  /* input_ids, attention_mask (wrapping ids, mask) */
    mopt_tensor *ref[2]; /* a single run's last_hidden_state, pooler_output */
} sample;

static void make_sample(sample *s, int64_t len) {
    memset(s, 0, sizeof *s);
    s->len = len;
    for (int64_t i = 0; i < len; i++) {
        s->ids[i] = 1 + (int64_t)(rnd64() % 999);
        s->mask[i] = 1;
    }
    int64_t dims[2] = {1, len};
    assert_int_equal(mopt_tensor_wrap_const(MOPT_DTYPE_I64, 2, dims, s->ids,
                                            (size_t)len * sizeof(int64_t), &s->in[0]),
                     MOPT_OK);
    assert_int_equal(mopt_tensor_wrap_const(MOPT_DTYPE_I64, 2, dims, s->mask,
                                            (size_t)len * sizeof(int64_t), &s->in[1]),
                     MOPT_OK);
}

static void free_sample(sample *s) {
    for (int k = 0; k < 2; k++) {
        mopt_tensor_destroy(s->in[k]);
        mopt_tensor_destroy(s->ref[k]);
    }
}

/* The single-run reference of every sample, on a session of its own. */
static void references(const mopt_model *m, sample *s, int n) {
    mopt_options *o = one_thread();
    mopt_session *ses = NULL;
    assert_int_equal(mopt_session_create(m, o, &ses), MOPT_OK);
    for (int i = 0; i < n; i++) {
        mopt_status st =
            mopt_session_run(ses, 2, NULL, (const mopt_tensor *const *)s[i].in, 2, NULL, s[i].ref);
        if (st) fail_msg("single run %d: %s", i, mopt_last_error());
    }
    mopt_session_destroy(ses);
    mopt_options_destroy(o);
}

/* n samples of the given lengths, then their single-run references */
static void make_samples(const mopt_model *m, sample *s, int n, const int64_t *lens) {
    for (int i = 0; i < n; i++)
        make_sample(&s[i], lens[i]);
    references(m, s, n);
}

static void free_samples(sample *s, int n) {
    for (int i = 0; i < n; i++)
        free_sample(&s[i]);
}

/* max |a - b| over two f32 tensors of the same shape (-1 if shapes differ) */
static float max_diff(const mopt_tensor *a, const mopt_tensor *b) {
    if (!a || !b || mopt_tensor_rank(a) != mopt_tensor_rank(b)) return -1.0f;
    for (int k = 0; k < mopt_tensor_rank(a); k++)
        if (mopt_tensor_dim(a, k) != mopt_tensor_dim(b, k)) return -1.0f;
    const float *x = mopt_tensor_data_const(a), *y = mopt_tensor_data_const(b);
    float d = 0.0f;
    for (int64_t i = 0; i < mopt_tensor_element_count(a); i++) {
        float e = x[i] > y[i] ? x[i] - y[i] : y[i] - x[i];
        if (!(e <= d)) d = e; /* NaN propagates */
    }
    return d;
}

static int same_bits(const mopt_tensor *a, const mopt_tensor *b) {
    size_t na = mopt_tensor_size_bytes(a), nb = mopt_tensor_size_bytes(b);
    return a && b && na == nb && mopt_tensor_rank(a) == mopt_tensor_rank(b) &&
           memcmp(mopt_tensor_data_const(a), mopt_tensor_data_const(b), na) == 0;
}

static mopt_batcher *make_batcher(const mopt_model *m, int max_batch, int64_t delay_us,
                                  size_t capacity, int workers, const int64_t *buckets,
                                  size_t n_buckets) {
    mopt_batcher_config c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.max_batch = max_batch;
    c.max_delay_us = delay_us;
    c.queue_capacity = capacity;
    c.workers = workers;
    c.seq_buckets = buckets;
    c.n_seq_buckets = n_buckets;
    mopt_options *o = one_thread();
    mopt_batcher *b = NULL;
    mopt_status st = mopt_batcher_create(m, o, &c, &b);
    mopt_options_destroy(o);
    if (st) fail_msg("mopt_batcher_create: %s", mopt_last_error());
    return b;
}

static mopt_batcher_stats get_stats(const mopt_batcher *b) {
    mopt_batcher_stats s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    assert_int_equal(mopt_batcher_get_stats(b, &s), MOPT_OK);
    return s;
}

/* The identities the header promises, when no call is in progress. */
static void check_counters(const mopt_batcher_stats *s) {
    assert_int_equal(s->requests, s->completed + s->failed + s->rejected_full + s->timed_out);
    uint64_t batches = 0, ran = 0;
    for (int k = 0; k < 64; k++) {
        batches += s->batch_size_hist[k];
        ran += (uint64_t)(k + 1) * s->batch_size_hist[k];
    }
    assert_int_equal(batches, s->batches);
    assert_int_equal(ran, s->completed + s->failed - s->rejected_invalid);
    assert_int_equal(s->queue_depth, 0);
}

/* Exactly one batch ran, of n requests; the counters' identities hold. */
static void expect_one_batch(const mopt_batcher_stats *s, int n) {
    assert_int_equal(s->batches, 1);
    assert_int_equal(s->batch_size_hist[n - 1], 1);
    check_counters(s);
}

/* ---- callers on threads ------------------------------------------------------- */

typedef struct {
    mopt_batcher *b;
    sample *s;
    const mopt_tensor *in[2]; /* defaults to s->in */
    mopt_tensor *out[2];
    int64_t timeout_us;
    mopt_status st;
    char msg[512];
    double seconds;
} call;

static void *submit(void *p) {
    call *c = p;
    if (!c->in[0]) {
        c->in[0] = c->s->in[0];
        c->in[1] = c->s->in[1];
    }
    double t0 = now_s();
    c->st = mopt_batcher_run(c->b, 2, NULL, c->in, 2, NULL, c->out, c->timeout_us);
    c->seconds = now_s() - t0;
    snprintf(c->msg, sizeof c->msg, "%s", c->st ? mopt_last_error() : "");
    return NULL;
}

static void run_on_threads(call *calls, int n) {
    pthread_t th[64];
    assert_true(n <= 64);
    for (int i = 0; i < n; i++)
        assert_int_equal(pthread_create(&th[i], NULL, submit, &calls[i]), 0);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
}

static void free_calls(call *calls, int n) {
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 2; k++)
            mopt_tensor_destroy(calls[i].out[k]);
}

/* The end of a test: the batcher, the outputs of its calls, the samples. */
static void release(mopt_batcher *b, call *calls, int n_calls, sample *s, int n_samples) {
    mopt_batcher_destroy(b);
    free_calls(calls, n_calls);
    free_samples(s, n_samples);
}

/* n cleared calls to b, call i with sample i */
static void aim_calls(call *calls, int n, mopt_batcher *b, sample *s) {
    memset(calls, 0, (size_t)n * sizeof *calls);
    for (int i = 0; i < n; i++)
        calls[i] = (call){.b = b, .s = &s[i]};
}

/* Requests [0, n) of c succeeded; returns the worst max |diff| of their
 * first n_out outputs against the single runs (shapes must agree), and
 * counts in *bitwise (may be NULL) the outputs equal to them bit for bit. */
static float calls_worst(const call *c, const sample *s, int n, int n_out, int *bitwise) {
    float worst = 0.0f;
    for (int i = 0; i < n; i++) {
        if (c[i].st) fail_msg("request %d: %s", i, c[i].msg);
        for (int k = 0; k < n_out; k++) {
            float d = max_diff(c[i].out[k], s[i].ref[k]);
            if (!(d >= 0.0f)) fail_msg("request %d output %d: shape or NaN (%g)", i, k, (double)d);
            if (d > worst) worst = d;
            if (bitwise) *bitwise += same_bits(c[i].out[k], s[i].ref[k]);
        }
    }
    return worst;
}

/* Waits (bounded) until the batcher shows `depth` queued requests (at
 * least that many when at_least). */
static void wait_depth(const mopt_batcher *b, size_t depth, int at_least) {
    for (int i = 0; i < 200000; i++) {
        size_t now = get_stats(b).queue_depth;
        if (now == depth || (at_least && now > depth)) return;
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    fail_msg("the queue never reached %zu requests", depth);
}

/* Waits until at least `depth` requests are queued (returns 1), or until
 * all `submitted` requests made since `before` have reached the batcher
 * and fewer are queued (returns 0: the worker kept up with the submitters,
 * as on a loaded machine where threads start slowly). */
static int reach_depth(const mopt_batcher *b, size_t depth, uint64_t before, uint64_t submitted) {
    for (int i = 0; i < 200000; i++) {
        mopt_batcher_stats st = get_stats(b);
        if (st.queue_depth >= depth) return 1;
        if (st.requests - before >= submitted) return 0;
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    fail_msg("only %llu of %llu requests reached the batcher in 20 s",
             (unsigned long long)(get_stats(b).requests - before), (unsigned long long)submitted);
    return 0;
}

/* ---- batched = single --------------------------------------------------------- */

/* Six requests of one length, one batch: each gets exactly its single run. */
MOPT_TEST(batch_same_length_bitwise) {
    mopt_model *m = load(BERT_TINY);
    enum { N = 6 };
    static const int64_t lens[N] = {16, 16, 16, 16, 16, 16};
    sample s[N];
    make_samples(m, s, N, lens);
    /* the batch starts when all six are in (the delay is far longer) */
    mopt_batcher *b = make_batcher(m, N, 20 * 1000 * 1000, 64, 1, NULL, 0);
    call c[N];
    aim_calls(c, N, b, s);
    run_on_threads(c, N);
    int bitwise = 0;
    float worst = calls_worst(c, s, N, 2, &bitwise);
    mopt_batcher_stats st = get_stats(b);
    printf("bert_tiny, 6 requests of length 16 in one batch: %d/%d outputs bitwise equal to "
           "single runs, max |diff| %.3g\n",
           bitwise, 2 * N, (double)worst);
    expect_one_batch(&st, N);
    assert_int_equal(st.padded_elements, 0);
    assert_int_equal(st.effective_max_batch, N);
    assert_true(worst <= PAD_TOL);
    release(b, c, N, s, N);
    mopt_model_destroy(m);
}

/* Ragged lengths share a batch: padded to a bucket, outputs cropped back
 * to each request's own length and equal to unpadded single runs. */
MOPT_TEST(ragged_padded_to_bucket_and_cropped) {
    mopt_model *m = load(BERT_TINY);
    enum { N = 6 };
    static const int64_t lens[N] = {3, 7, 12, 16, 25, 31};
    static const int64_t buckets[] = {8, 16, 32, 64};
    for (int variant = 0; variant < 2; variant++) { /* with buckets, then to the longest */
        sample s[N];
        make_samples(m, s, N, lens);
        mopt_batcher *b =
            make_batcher(m, N, 20 * 1000 * 1000, 64, 1, variant ? NULL : buckets, variant ? 0 : 4);
        call c[N];
        aim_calls(c, N, b, s);
        run_on_threads(c, N);
        float worst = calls_worst(c, s, N, 2, NULL);
        int64_t padded_to = variant ? 31 : 32;
        uint64_t want_padded = 0;
        for (int i = 0; i < N; i++) {
            /* cropped: [1, len, 128] and [1, 128] */
            assert_int_equal(mopt_tensor_rank(c[i].out[0]), 3);
            assert_int_equal(mopt_tensor_dim(c[i].out[0], 0), 1);
            assert_int_equal(mopt_tensor_dim(c[i].out[0], 1), lens[i]);
            assert_int_equal(mopt_tensor_dim(c[i].out[0], 2), 128);
            assert_int_equal(mopt_tensor_rank(c[i].out[1]), 2);
            assert_int_equal(mopt_tensor_dim(c[i].out[1], 1), 128);
            want_padded += 2 * (uint64_t)(padded_to - lens[i]); /* ids and mask */
        }
        mopt_batcher_stats st = get_stats(b);
        printf("bert_tiny, lengths 3..31 padded to %d in one batch: max |batched - single| over "
               "real tokens %.3g (bound %.1g)\n",
               (int)padded_to, (double)worst, (double)PAD_TOL);
        expect_one_batch(&st, N);
        assert_int_equal(st.padded_elements, want_padded);
        assert_int_equal(st.input_elements, 2 * N * (uint64_t)padded_to);
        assert_true(worst <= PAD_TOL);
        release(b, c, N, s, N);
    }
    mopt_model_destroy(m);
}

/* The caller's own output tensors are filled, and one of the wrong shape
 * fails that request alone. */
MOPT_TEST(caller_outputs) {
    mopt_model *m = load(BERT_SMALL);
    enum { N = 3 };
    static const int64_t lens[N] = {5, 8, 11};
    sample s[N];
    make_samples(m, s, N, lens);
    mopt_batcher *b = make_batcher(m, N, 20 * 1000 * 1000, 16, 1, NULL, 0);
    call c[N];
    aim_calls(c, N, b, s);
    float buf[N][MAX_LEN * 64], pool[N][64];
    for (int i = 0; i < N; i++) {
        int64_t d0[3] = {1, s[i].len + (i == 2), 64}, d1[2] = {1, 64}; /* request 2: too long */
        assert_int_equal(mopt_tensor_wrap(MOPT_DTYPE_F32, 3, d0, buf[i],
                                          (size_t)(d0[1] * 64) * sizeof(float), &c[i].out[0]),
                         MOPT_OK);
        assert_int_equal(
            mopt_tensor_wrap(MOPT_DTYPE_F32, 2, d1, pool[i], sizeof pool[i], &c[i].out[1]),
            MOPT_OK);
    }
    run_on_threads(c, N);
    assert_true(calls_worst(c, s, 2, 2, NULL) <= PAD_TOL);
    assert_int_equal(c[2].st, MOPT_ERR_SHAPE);
    assert_non_null(strstr(c[2].msg, "last_hidden_state"));
    mopt_batcher_stats st = get_stats(b);
    assert_int_equal(st.batches, 1);
    assert_int_equal(st.completed, 2);
    assert_int_equal(st.failed, 1);
    check_counters(&st);
    release(b, c, N, s, N);
    mopt_model_destroy(m);
}

/* ---- failures stay with their request ------------------------------------------ */

MOPT_TEST(bad_request_fails_alone) {
    mopt_model *m = load(BERT_SMALL);
    enum { N = 5 };
    static const int64_t lens[N] = {6, 7, 8, 9, 10};
    sample s[N];
    make_samples(m, s, N, lens);

    /* (1) caught by the checks: an i32 input, a batch dim of 2, a mask of
     * another length than its ids; the others batch together */
    int32_t ids32[6] = {5, 6, 7, 8, 9, 10};
    int64_t two[12] = {0}, d1[2] = {1, 6}, d2[2] = {2, 6}, d3[2] = {1, 4};
    mopt_tensor *bad32 = NULL, *bad_batch = NULL, *bad_mask = NULL;
    assert_int_equal(mopt_tensor_wrap_const(MOPT_DTYPE_I32, 2, d1, ids32, sizeof ids32, &bad32),
                     MOPT_OK);
    assert_int_equal(mopt_tensor_wrap_const(MOPT_DTYPE_I64, 2, d2, two, sizeof two, &bad_batch),
                     MOPT_OK);
    assert_int_equal(
        mopt_tensor_wrap_const(MOPT_DTYPE_I64, 2, d3, two, 4 * sizeof(int64_t), &bad_mask),
        MOPT_OK);
    mopt_batcher *b = make_batcher(m, N, 20 * 1000 * 1000, 64, 1, NULL, 0);
    call c[N + 3];
    aim_calls(c, N, b, s);
    c[N] = (call){.b = b, .s = &s[0], .in = {bad32, s[0].in[1]}};
    c[N + 1] = (call){.b = b, .s = &s[0], .in = {bad_batch, bad_batch}};
    c[N + 2] = (call){.b = b, .s = &s[0], .in = {s[0].in[0], bad_mask}};
    run_on_threads(c, N + 3);
    assert_true(calls_worst(c, s, N, 1, NULL) <= PAD_TOL);
    assert_int_equal(c[N].st, MOPT_ERR_TYPE);
    assert_non_null(strstr(c[N].msg, "input_ids"));
    assert_int_equal(c[N + 1].st, MOPT_ERR_SHAPE);
    assert_non_null(strstr(c[N + 1].msg, "axis 0"));
    assert_int_equal(c[N + 2].st, MOPT_ERR_SHAPE);
    assert_non_null(strstr(c[N + 2].msg, "attention_mask"));
    for (int i = N; i < N + 3; i++)
        assert_null(c[i].out[0]);
    mopt_batcher_stats st = get_stats(b);
    expect_one_batch(&st, N);
    assert_int_equal(st.rejected_invalid, 3);
    assert_int_equal(st.failed, 3);
    assert_int_equal(st.completed, N);
    mopt_batcher_destroy(b);
    free_calls(c, N + 3);

    /* (2) past the checks, failing inside the graph: a token id beyond the
     * vocabulary. The batch fails, is rerun request by request, and only
     * the bad one fails, with the single run's status. */
    sample bad;
    make_sample(&bad, 8);
    bad.ids[3] = 5000;
    {
        mopt_options *o = one_thread();
        mopt_session *ses = NULL;
        assert_int_equal(mopt_session_create(m, o, &ses), MOPT_OK);
        mopt_status single =
            mopt_session_run(ses, 2, NULL, (const mopt_tensor *const *)bad.in, 2, NULL, bad.ref);
        assert_int_not_equal(single, MOPT_OK);
        mopt_session_destroy(ses);
        mopt_options_destroy(o);
        b = make_batcher(m, N + 1, 20 * 1000 * 1000, 64, 1, NULL, 0);
        aim_calls(c, N, b, s);
        c[N] = (call){.b = b, .s = &bad};
        run_on_threads(c, N + 1);
        for (int i = 0; i < N; i++) {
            if (c[i].st) fail_msg("request %d beside a bad one: %s", i, c[i].msg);
            assert_true(same_bits(c[i].out[0], s[i].ref[0])); /* rerun alone: exact */
        }
        assert_int_equal(c[N].st, single);
        assert_null(c[N].out[0]);
        st = get_stats(b);
        assert_int_equal(st.batches, 1);
        assert_int_equal(st.reruns, 1);
        assert_int_equal(st.failed, 1);
        assert_int_equal(st.completed, N);
        check_counters(&st);
        mopt_batcher_destroy(b);
        free_calls(c, N + 1);
    }
    free_sample(&bad);
    mopt_tensor_destroy(bad32);
    mopt_tensor_destroy(bad_batch);
    mopt_tensor_destroy(bad_mask);
    free_samples(s, N);
    mopt_model_destroy(m);
}

/* ---- queue, timeout, drain ------------------------------------------------------ */

MOPT_TEST(full_queue_is_busy_at_once) {
    mopt_model *m = load(BERT_SMALL);
    static const int64_t lens[3] = {8, 8, 8};
    sample s[3];
    make_samples(m, s, 3, lens);
    /* two requests fill the queue and wait 0.4 s for company */
    mopt_batcher *b = make_batcher(m, 8, 400 * 1000, 2, 1, NULL, 0);
    call c[2];
    aim_calls(c, 2, b, s);
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_create(&th[i], NULL, submit, &c[i]), 0);
    }
    wait_depth(b, 2, 0);
    call extra = {.b = b, .s = &s[2]};
    submit(&extra);
    assert_int_equal(extra.st, MOPT_ERR_BUSY);
    assert_non_null(strstr(extra.msg, "capacity"));
    assert_non_null(strstr(extra.msg, "2 requests"));
    assert_null(extra.out[0]);
    printf("full queue: BUSY after %.3f ms\n", extra.seconds * 1e3);
    assert_true(extra.seconds < 0.05); /* at once, not after the 0.4 s delay */
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) {
        if (c[i].st) fail_msg("queued request %d: %s", i, c[i].msg);
        assert_true(same_bits(c[i].out[0], s[i].ref[0]));
    }
    mopt_batcher_stats st = get_stats(b);
    assert_int_equal(st.rejected_full, 1);
    assert_int_equal(st.batches, 1);
    assert_int_equal(st.completed, 2);
    check_counters(&st);
    release(b, c, 2, s, 3);
    mopt_model_destroy(m);
}

/* A request behind a busy worker, with a timeout shorter than the run in
 * front of it, is dropped with CANCELLED; a later one without a timeout
 * runs. */
MOPT_TEST(timeout_cancels_unstarted) {
    mopt_model *m = load(BERT_TINY);
    sample longest, s;
    make_sample(&longest, MAX_LEN);
    make_sample(&s, 8);
    references(m, &s, 1);
    mopt_batcher *b = make_batcher(m, 1, 0, 16, 1, NULL, 0);
    int cancelled = 0;
    for (int attempt = 0; attempt < 5 && !cancelled; attempt++) {
        /* keep the one worker busy with long requests */
        enum { BUSY_CALLS = 8 };
        call busy[BUSY_CALLS];
        memset(busy, 0, sizeof busy);
        uint64_t before = get_stats(b).requests;
        pthread_t th[BUSY_CALLS];
        for (int i = 0; i < BUSY_CALLS; i++) {
            busy[i] = (call){.b = b, .s = &longest};
            assert_int_equal(pthread_create(&th[i], NULL, submit, &busy[i]), 0);
        }
        /* at least four runs to go before the next one; if the worker kept
         * up with the submitters, t most likely runs in time: try again */
        (void)reach_depth(b, 4, before, BUSY_CALLS);
        call t = {.b = b, .s = &s, .timeout_us = 300};
        submit(&t);
        if (t.st == MOPT_ERR_CANCELLED) {
            cancelled = 1;
            assert_non_null(strstr(t.msg, "timeout"));
            assert_null(t.out[0]);
        } else {
            /* the queue ran dry first (a very fast machine): try again */
            assert_int_equal(t.st, MOPT_OK);
        }
        for (int i = 0; i < BUSY_CALLS; i++) {
            pthread_join(th[i], NULL);
            assert_int_equal(busy[i].st, MOPT_OK);
        }
        free_calls(busy, BUSY_CALLS);
        free_calls(&t, 1);
    }
    assert_true(cancelled);
    call after = {.b = b, .s = &s, .timeout_us = 0};
    submit(&after);
    assert_int_equal(after.st, MOPT_OK);
    assert_true(same_bits(after.out[0], s.ref[0]));
    mopt_batcher_stats st = get_stats(b);
    assert_int_equal(st.timed_out, 1);
    check_counters(&st);
    free_calls(&after, 1);
    mopt_batcher_destroy(b);
    free_sample(&longest);
    free_sample(&s);
    mopt_model_destroy(m);
}

/* destroy with requests waiting (for company for 20 s) runs them at once
 * and every caller gets its result. */
MOPT_TEST(destroy_drains) {
    mopt_model *m = load(BERT_SMALL);
    enum { N = 5 };
    static const int64_t lens[N] = {4, 6, 8, 10, 12};
    sample s[N];
    make_samples(m, s, N, lens);
    mopt_batcher *b = make_batcher(m, 64, 20 * 1000 * 1000, 64, 2, NULL, 0);
    call c[N];
    aim_calls(c, N, b, s);
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        assert_int_equal(pthread_create(&th[i], NULL, submit, &c[i]), 0);
    }
    wait_depth(b, N, 0);
    mopt_batcher_stats st = get_stats(b);
    assert_int_equal(st.batches, 0);
    double t0 = now_s();
    mopt_batcher_destroy(b); /* the model handle stays ours */
    double took = now_s() - t0;
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    printf("destroy drained %d waiting requests in %.3f s\n", N, took);
    assert_true(took < 10.0);
    assert_true(calls_worst(c, s, N, 2, NULL) <= PAD_TOL); /* the drained requests */
    free_calls(c, N);
    free_samples(s, N);
    mopt_model_destroy(m);
}

/* ---- many threads -------------------------------------------------------------------- */

enum { CT_THREADS = 8, CT_CALLS = 12, CT_SAMPLES = 6 };

typedef struct {
    mopt_batcher *b;
    sample *samples;
    int id;
    int ok, busy, wrong;
} hammer_arg;

static void *hammer(void *p) {
    hammer_arg *h = p;
    for (int k = 0; k < CT_CALLS; k++) {
        sample *s = &h->samples[(h->id + k) % CT_SAMPLES];
        mopt_tensor *out[2] = {NULL, NULL};
        mopt_status st =
            mopt_batcher_run(h->b, 2, NULL, (const mopt_tensor *const *)s->in, 2, NULL, out, 0);
        if (st == MOPT_OK) {
            h->ok++;
            if (!(max_diff(out[0], s->ref[0]) <= PAD_TOL) ||
                !(max_diff(out[1], s->ref[1]) <= PAD_TOL))
                h->wrong++;
        } else if (st == MOPT_ERR_BUSY) {
            h->busy++;
        } else {
            h->wrong++;
        }
        mopt_tensor_destroy(out[0]);
        mopt_tensor_destroy(out[1]);
    }
    return NULL;
}

MOPT_TEST(many_threads) {
    mopt_model *m = load(BERT_SMALL);
    static const int64_t lens[CT_SAMPLES] = {3, 9, 14, 17, 30, 33};
    static const int64_t buckets[] = {8, 16, 32, 64};
    sample s[CT_SAMPLES];
    make_samples(m, s, CT_SAMPLES, lens);
    mopt_batcher *b = make_batcher(m, 4, 500, 6, 2, buckets, 4);
    pthread_t th[CT_THREADS];
    hammer_arg h[CT_THREADS];
    for (int t = 0; t < CT_THREADS; t++) {
        h[t] = (hammer_arg){.b = b, .samples = s, .id = t};
        assert_int_equal(pthread_create(&th[t], NULL, hammer, &h[t]), 0);
    }
    int ok = 0, busy = 0;
    for (int t = 0; t < CT_THREADS; t++) {
        pthread_join(th[t], NULL);
        if (h[t].wrong) fail_msg("thread %d: %d wrong or failed results", t, h[t].wrong);
        ok += h[t].ok;
        busy += h[t].busy;
    }
    mopt_batcher_stats st = get_stats(b);
    printf("%d threads x %d calls: %d ok, %d busy (queue of 6), %llu batches, sizes:", CT_THREADS,
           CT_CALLS, ok, busy, (unsigned long long)st.batches);
    for (int k = 0; k < 4; k++)
        printf(" %d:%llu", k + 1, (unsigned long long)st.batch_size_hist[k]);
    printf("\n");
    assert_int_equal(ok + busy, CT_THREADS * CT_CALLS);
    assert_int_equal(st.completed, (uint64_t)ok);
    assert_int_equal(st.rejected_full, (uint64_t)busy);
    assert_true(ok > 0);
    check_counters(&st);
    mopt_batcher_destroy(b);
    free_samples(s, CT_SAMPLES);
    mopt_model_destroy(m);
}

/* ---- arguments, config, forced max_batch 1 -------------------------------------------- */

MOPT_TEST(arguments) {
    mopt_model *m = load(BERT_SMALL);
    mopt_batcher *b = NULL;
    assert_int_equal(mopt_batcher_create(NULL, NULL, NULL, &b), MOPT_ERR_INVALID_ARGUMENT);
    assert_null(b);
    assert_int_equal(mopt_batcher_create(m, NULL, NULL, NULL), MOPT_ERR_INVALID_ARGUMENT);
    mopt_batcher_config c;
    memset(&c, 0, sizeof c);
    c.struct_size = 8;
    assert_int_equal(mopt_batcher_create(m, NULL, &c, &b), MOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mopt_last_error(), "struct_size"));
    c.struct_size = sizeof c;
    c.max_batch = -1;
    assert_int_equal(mopt_batcher_create(m, NULL, &c, &b), MOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mopt_last_error(), "max_batch"));
    c.max_batch = 0;
    c.max_delay_us = -5;
    assert_int_equal(mopt_batcher_create(m, NULL, &c, &b), MOPT_ERR_INVALID_ARGUMENT);
    c.max_delay_us = 0;
    int64_t bad_buckets[3] = {8, 8, 16};
    c.seq_buckets = bad_buckets;
    c.n_seq_buckets = 3;
    assert_int_equal(mopt_batcher_create(m, NULL, &c, &b), MOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mopt_last_error(), "ascending"));
    assert_null(b);
    /* defaults; the model handle may go before the batcher */
    mopt_options *o = one_thread();
    assert_int_equal(mopt_batcher_create(m, o, NULL, &b), MOPT_OK);
    mopt_options_destroy(o);
    mopt_model_destroy(m);
    mopt_batcher_stats st;
    memset(&st, 0, sizeof st);
    assert_int_equal(mopt_batcher_get_stats(b, &st), MOPT_ERR_INVALID_ARGUMENT); /* size 0 */
    st = get_stats(b);
    assert_int_equal(st.effective_max_batch, 8);
    sample s;
    make_sample(&s, 5);
    mopt_tensor *out[2] = {NULL, NULL};
    const char *bad_name[2] = {"input_ids", "nope"};
    assert_int_equal(
        mopt_batcher_run(b, 2, bad_name, (const mopt_tensor *const *)s.in, 2, NULL, out, 0),
        MOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(mopt_last_error(), "nope"));
    assert_int_equal(
        mopt_batcher_run(b, 1, NULL, (const mopt_tensor *const *)s.in, 2, NULL, out, 0),
        MOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(
        mopt_batcher_run(b, 2, NULL, (const mopt_tensor *const *)s.in, 2, NULL, out, -1),
        MOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(
        mopt_batcher_run(NULL, 2, NULL, (const mopt_tensor *const *)s.in, 2, NULL, out, 0),
        MOPT_ERR_INVALID_ARGUMENT);
    /* names in another order, one output by name */
    const char *names[2] = {"attention_mask", "input_ids"};
    const mopt_tensor *swapped[2] = {s.in[1], s.in[0]};
    const char *pooled = "pooler_output";
    assert_int_equal(mopt_batcher_run(b, 2, names, swapped, 1, &pooled, out, 0), MOPT_OK);
    assert_int_equal(mopt_tensor_rank(out[0]), 2);
    assert_int_equal(mopt_tensor_dim(out[0], 1), 64);
    assert_null(out[1]);
    mopt_tensor_destroy(out[0]);
    st = get_stats(b);
    assert_int_equal(st.requests, 4); /* the NULL batcher is not counted */
    assert_int_equal(st.completed, 1);
    assert_int_equal(st.rejected_invalid, 3);
    check_counters(&st);
    free_sample(&s);
    mopt_batcher_destroy(b);
    mopt_batcher_destroy(NULL);
}

/* ---- other models: a fixed batch axis, images, no padding ------------------------------ */

static char logged[512];
static void capture_log(void *user, mopt_log_level level, const char *message) {
    (void)user;
    if (level == MOPT_LOG_WARNING && strstr(message, "mopt_batcher_create"))
        snprintf(logged, sizeof logged, "%s", message);
}

typedef struct {
    mopt_batcher *b;
    const mopt_tensor *in;
    mopt_tensor *out;
    mopt_status st;
} one_call;

static void *submit_one(void *p) {
    one_call *c = p;
    c->st = mopt_batcher_run(c->b, 1, NULL, &c->in, 1, NULL, &c->out, 0);
    return NULL;
}

/* Runs n single-input requests from n threads and checks each against a
 * single run: bitwise when tol is 0, else within tol; returns the stats. */
static mopt_batcher_stats run_images(const mopt_model *m, mopt_batcher *b, mopt_tensor **in, int n,
                                     float tol) {
    mopt_options *o = one_thread();
    mopt_session *ses = NULL;
    assert_int_equal(mopt_session_create(m, o, &ses), MOPT_OK);
    mopt_options_destroy(o);
    one_call c[8];
    pthread_t th[8];
    assert_true(n <= 8);
    for (int i = 0; i < n; i++) {
        c[i] = (one_call){.b = b, .in = in[i]};
        assert_int_equal(pthread_create(&th[i], NULL, submit_one, &c[i]), 0);
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < n; i++) {
        assert_int_equal(c[i].st, MOPT_OK);
        mopt_tensor *ref = NULL;
        assert_int_equal(
            mopt_session_run(ses, 1, NULL, (const mopt_tensor *const *)&in[i], 1, NULL, &ref),
            MOPT_OK);
        if (tol == 0.f)
            assert_true(same_bits(c[i].out, ref));
        else
            assert_true(max_diff(c[i].out, ref) <= tol);
        mopt_tensor_destroy(ref);
        mopt_tensor_destroy(c[i].out);
    }
    mopt_session_destroy(ses);
    mopt_batcher_stats st = get_stats(b);
    check_counters(&st);
    return st;
}

MOPT_TEST(other_models) {
    float pixels[4][3 * 32 * 32];
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3 * 32 * 32; k++)
            pixels[i][k] = (float)((int)(rnd64() % 2001) - 1000) / 1000.0f;
    mopt_tensor *in[4];

    /* axis 0 fixed at 1: max_batch forced to 1, with a warning */
    mopt_model *m = load("tests/unit/data/header_example.onnx");
    int64_t d8[4] = {1, 3, 8, 8};
    for (int i = 0; i < 4; i++)
        assert_int_equal(mopt_tensor_wrap_const(MOPT_DTYPE_F32, 4, d8, pixels[i],
                                                3 * 8 * 8 * sizeof(float), &in[i]),
                         MOPT_OK);
    logged[0] = '\0';
    mopt_set_log_callback(capture_log, NULL);
    mopt_batcher *b = make_batcher(m, 8, 1000, 16, 1, NULL, 0);
    mopt_set_log_callback(NULL, NULL);
    assert_non_null(strstr(logged, "axis 0 fixed at 1"));
    assert_non_null(strstr(logged, "max_batch is 1"));
    mopt_batcher_stats st = run_images(m, b, in, 4, 0.f); /* each request alone: exact */
    assert_int_equal(st.effective_max_batch, 1);
    assert_int_equal(st.batch_size_hist[0], 4);
    mopt_batcher_destroy(b);
    for (int i = 0; i < 4; i++)
        mopt_tensor_destroy(in[i]);
    mopt_model_destroy(m);

    /* a CNN (rank-4 input, nothing ragged): one batch of 4, equal to single
     * runs up to the summation order (a single run's fc Gemm is a GEMV,
     * the batch's a oneDNN matmul: mopt.h allows that order to differ) */
    m = load("tests/models/cnn/model.onnx");
    int64_t d32[4] = {1, 3, 32, 32};
    for (int i = 0; i < 4; i++)
        assert_int_equal(
            mopt_tensor_wrap_const(MOPT_DTYPE_F32, 4, d32, pixels[i], sizeof pixels[i], &in[i]),
            MOPT_OK);
    b = make_batcher(m, 4, 20 * 1000 * 1000, 16, 1, NULL, 0);
    st = run_images(m, b, in, 4, PAD_TOL);
    assert_int_equal(st.batches, 1);
    assert_int_equal(st.batch_size_hist[3], 1);
    mopt_batcher_destroy(b);
    for (int i = 0; i < 4; i++)
        mopt_tensor_destroy(in[i]);
    mopt_model_destroy(m);
}

/* no_padding: requests of two lengths form two batches, nothing padded. */
MOPT_TEST(no_padding_groups_by_length) {
    mopt_model *m = load(BERT_SMALL);
    enum { N = 4 };
    static const int64_t lens[N] = {5, 9, 5, 9};
    sample s[N];
    make_samples(m, s, N, lens);
    mopt_batcher_config c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.max_batch = 2;
    c.max_delay_us = 20 * 1000 * 1000; /* each group starts when it has its 2 */
    c.no_padding = 1;
    mopt_options *o = one_thread();
    mopt_batcher *b = NULL;
    assert_int_equal(mopt_batcher_create(m, o, &c, &b), MOPT_OK);
    mopt_options_destroy(o);
    call calls[N];
    aim_calls(calls, N, b, s);
    run_on_threads(calls, N);
    for (int i = 0; i < N; i++) {
        if (calls[i].st) fail_msg("request %d: %s", i, calls[i].msg);
        assert_true(same_bits(calls[i].out[0], s[i].ref[0]));
    }
    mopt_batcher_stats st = get_stats(b);
    assert_int_equal(st.batches, 2);
    assert_int_equal(st.batch_size_hist[1], 2);
    assert_int_equal(st.padded_elements, 0);
    check_counters(&st);
    release(b, calls, N, s, N);
    mopt_model_destroy(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(arguments),
        cmocka_unit_test(batch_same_length_bitwise),
        cmocka_unit_test(ragged_padded_to_bucket_and_cropped),
        cmocka_unit_test(caller_outputs),
        cmocka_unit_test(bad_request_fails_alone),
        cmocka_unit_test(full_queue_is_busy_at_once),
        cmocka_unit_test(timeout_cancels_unstarted),
        cmocka_unit_test(destroy_drains),
        cmocka_unit_test(many_threads),
        cmocka_unit_test(other_models),
        cmocka_unit_test(no_padding_groups_by_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
