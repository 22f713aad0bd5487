/*
 * test_threadpool.c — mopt_threadpool (suites unit and tsan): K sessions of
 * `threads` threads each on one pool of T never have more than T threads at
 * work at once (the pool's instrumented count, peak_threads), and give
 * outputs bitwise equal to serial runs; a session alone on the pool does
 * use its threads (the count is live); a pool destroyed while sessions run
 * lives on until the last is gone (reference-counted); nested subgraph runs
 * on a pool of 1 reuse their seat (no deadlock); batcher workers share a
 * pool; bad arguments. Public API only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../test_main.h"
#define MOPT_EXPERIMENTAL_API
#include <mopt/mopt.h>
#include <pthread.h>

#include "test_model_case.h"

#define K_SESSIONS 4
#define N_SETS 3

/* Options on pool (may be NULL) with `threads` threads (< 0: not set). */
static mopt_options *pool_options(int threads, mopt_threadpool *pool) {
    mopt_options *o = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    if (threads >= 0) assert_int_equal(mopt_options_set_int(o, "threads", threads), MOPT_OK);
    assert_int_equal(mopt_options_set_threadpool(o, pool), MOPT_OK);
    return o;
}

static mopt_threadpool *new_pool(int threads) {
    mopt_threadpool *pool = NULL;
    assert_int_equal(mopt_threadpool_create(threads, NULL, &pool), MOPT_OK);
    return pool;
}

/* A session with `threads` threads, on pool (may be NULL). */
static mopt_session *new_session(const mopt_model *m, int threads, mopt_threadpool *pool) {
    mopt_options *o = pool_options(threads, pool);
    mopt_session *s = NULL;
    mopt_status st = mopt_session_create(m, o, &s);
    mopt_options_destroy(o);
    if (st) fail_msg("session: %s", mopt_last_error());
    return s;
}

/* The serial reference: one session on 1 thread, no pool. */
static void serial_reference(model_case *c) { case_serial(c, new_session(c->model, 1, NULL)); }

static mopt_threadpool_stats pool_stats(const mopt_threadpool *p) {
    mopt_threadpool_stats ps;
    memset(&ps, 0, sizeof ps);
    ps.struct_size = sizeof ps;
    assert_int_equal(mopt_threadpool_get_stats(p, &ps), MOPT_OK);
    return ps;
}

/* K sessions x `threads` threads on one pool of T, each on its own thread:
 * never more than T threads at work, outputs bitwise equal to serial. */
static void bounded(const char *dir, int T, int threads, int runs) {
    model_case c;
    load_case(&c, dir, N_SETS, NULL);
    serial_reference(&c);
    mopt_threadpool *pool = new_pool(T);
    case_worker w[K_SESSIONS];
    for (int t = 0; t < K_SESSIONS; t++)
        w[t] = (case_worker){.c = &c, .s = new_session(c.model, threads, pool), .runs = runs};
    assert_int_equal(pool_stats(pool).sessions, K_SESSIONS);
    case_run_workers(w, K_SESSIONS);
    mopt_threadpool_stats ps = pool_stats(pool);
    print_message("%s: pool %d, %d sessions x %d threads: peak %d threads at work, %llu runs "
                  "(%llu waited), %llu/%llu parallel nodes narrowed\n",
                  dir, T, K_SESSIONS, threads, ps.peak_threads, (unsigned long long)ps.runs,
                  (unsigned long long)ps.waited_runs, (unsigned long long)ps.narrowed_nodes,
                  (unsigned long long)ps.parallel_nodes);
    assert_int_equal(ps.threads, T);
    assert_true(ps.peak_threads >= 1);
    assert_true(ps.peak_threads <= T);
    assert_int_equal(ps.active_threads, 0);
    assert_int_equal(ps.cores_in_use, 0);
    assert_int_equal(ps.runs, (uint64_t)(K_SESSIONS * runs));
    assert_true(ps.narrowed_nodes <= ps.parallel_nodes);
    for (int t = 0; t < K_SESSIONS; t++)
        mopt_session_destroy(w[t].s);
    assert_int_equal(pool_stats(pool).sessions, 0);
    mopt_threadpool_destroy(pool);
    free_case(&c);
}

/* The cases of bounded(), each a test of its own: BOUND_TEST(name) names the
 * test after its case and hands the case over as the test's state. */
typedef struct {
    const char *dir;
    int T, threads, runs;
} bound_case;

static bound_case bound_cnn = {"tests/models/cnn", 2, 2, 8};
static bound_case bound_mobilenet = {"tests/models/mobilenet", 2, 2, 8};
static bound_case bound_bert = {"tests/models/bert", 2, 2, 8};
/* A pool of 1: every run waits its turn; sessions asking for 4 threads get 1. */
static bound_case bound_one = {"tests/models/cnn", 1, 4, 6};
/* A pool of 3 shared by 4 sessions of 2 threads. */
static bound_case bound_three = {"tests/models/bert", 3, 2, 6};

static void bound_test(void **state) {
    const bound_case *b = *state;
    bounded(b->dir, b->T, b->threads, b->runs);
}

#define BOUND_TEST(c)                                                                              \
    { .name = #c, .test_func = bound_test, .initial_state = &(c) }

/* The count is live: a session alone on a pool of 2, with 2 threads, has 2
 * threads at work in its parallel nodes (and its outputs stay bitwise). */
MOPT_TEST(alone_uses_threads) {
    model_case c;
    load_case(&c, "tests/models/cnn", N_SETS, NULL);
    serial_reference(&c);
    mopt_threadpool *pool = new_pool(2);
    mopt_session *s = new_session(c.model, 0, pool); /* threads unset: the pool's 2 */
    for (int r = 0; r < 6; r++) {
        mopt_status st;
        mopt_tensor *y = run_set(s, &c, r % N_SETS, &st);
        if (!y) fail_msg("run: %s", mopt_last_error());
        assert_true(same_bits(y, c.serial[r % N_SETS]));
        mopt_tensor_destroy(y);
    }
    mopt_threadpool_stats ps = pool_stats(pool);
    assert_int_equal(ps.runs, 6);
    assert_int_equal(ps.waited_runs, 0);
    assert_true(ps.parallel_nodes > 0);
    assert_int_equal(ps.narrowed_nodes, 0); /* nobody else holds a core */
    assert_int_equal(ps.peak_threads, 2);
    mopt_session_destroy(s);
    mopt_threadpool_destroy(pool);
    free_case(&c);
}

/* Destroy-order misuse: the pool is destroyed (and its options) while
 * sessions hold it and run on other threads; they keep working (the pool is
 * reference-counted) and the last session frees it (ASan: no leak, no use
 * after free). */
MOPT_TEST(destroyed_while_used) {
    model_case c;
    load_case(&c, "tests/models/cnn", N_SETS, NULL);
    serial_reference(&c);
    mopt_threadpool *pool = new_pool(1);
    mopt_options *o = pool_options(-1, pool);
    mopt_threadpool_destroy(pool); /* the options still hold it */
    case_worker w[2];
    for (int t = 0; t < 2; t++) {
        mopt_session *s = NULL;
        assert_int_equal(mopt_session_create(c.model, o, &s), MOPT_OK);
        w[t] = (case_worker){.c = &c, .s = s, .runs = 6};
    }
    mopt_options_destroy(o); /* now only the sessions hold it */
    case_run_workers(w, 2);
    mopt_session_destroy(w[0].s);
    mopt_status st;
    mopt_tensor *y = run_set(w[1].s, &c, 0, &st); /* the last holder still runs */
    assert_int_equal(st, MOPT_OK);
    assert_true(same_bits(y, c.serial[0]));
    mopt_tensor_destroy(y);
    mopt_session_destroy(w[1].s); /* frees the pool */
    free_case(&c);
}

/* A Loop with a nested If runs nested sessions inside the enclosing run, on
 * the same thread: on a pool of 1 they reuse the enclosing seat (waiting
 * for a second seat would never end). */
MOPT_TEST(nested_subgraphs) {
    model_case c;
    load_case(&c, "tests/ops/data/control/loop_nested_if", 2, NULL);
    mopt_session *ref = new_session(c.model, 1, NULL);
    mopt_threadpool *pool = new_pool(1);
    mopt_session *s = new_session(c.model, 2, pool);
    for (int k = 0; k < 2; k++) {
        mopt_status st1, st2;
        mopt_tensor *a = run_set(ref, &c, k, &st1);
        mopt_tensor *b = run_set(s, &c, k, &st2);
        if (st1 || st2) fail_msg("set %d: %s", k, mopt_last_error());
        assert_true(same_bits(a, b));
        mopt_tensor_destroy(a);
        mopt_tensor_destroy(b);
    }
    mopt_threadpool_stats ps = pool_stats(pool);
    assert_int_equal(ps.runs, 2); /* the nested runs took no seat of their own */
    assert_true(ps.peak_threads <= 1);
    mopt_session_destroy(s);
    mopt_session_destroy(ref);
    mopt_threadpool_destroy(pool);
    free_case(&c);
}

/* Batcher workers share a pool: 3 workers on a pool of 1. */
typedef struct {
    mopt_batcher *b;
    const model_case *c;
    int failures, mismatches;
} batch_arg;

static void *batch_client(void *p) {
    batch_arg *a = p;
    for (int r = 0; r < 4; r++) {
        int k = r % a->c->n_sets;
        mopt_tensor *out[1] = {NULL};
        mopt_status st =
            mopt_batcher_run(a->b, (size_t)a->c->n_inputs, NULL,
                             (const mopt_tensor *const *)a->c->inputs[k], 1, NULL, out, 0);
        if (st)
            a->failures++;
        else if (!same_bits(out[0], a->c->serial[k]))
            a->mismatches++;
        mopt_tensor_destroy(out[0]);
    }
    return NULL;
}

MOPT_TEST(batcher_shares_pool) {
    model_case c;
    load_case(&c, "tests/models/cnn", N_SETS, NULL);
    serial_reference(&c);
    mopt_threadpool *pool = new_pool(1);
    mopt_options *o = pool_options(2, pool);
    /* max_batch 1: every request is a single run, bitwise equal to serial */
    mopt_batcher_config cfg = {.struct_size = sizeof cfg, .max_batch = 1, .workers = 3};
    mopt_batcher *b = NULL;
    mopt_status st = mopt_batcher_create(c.model, o, &cfg, &b);
    if (st) fail_msg("batcher: %s", mopt_last_error());
    mopt_options_destroy(o);
    assert_int_equal(pool_stats(pool).sessions, 3);
    pthread_t th[3];
    batch_arg a[3];
    for (int t = 0; t < 3; t++) {
        a[t] = (batch_arg){.b = b, .c = &c};
        assert_int_equal(pthread_create(&th[t], NULL, batch_client, &a[t]), 0);
    }
    for (int t = 0; t < 3; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(a[t].failures, 0);
        assert_int_equal(a[t].mismatches, 0);
    }
    mopt_batcher_destroy(b);
    mopt_threadpool_stats ps = pool_stats(pool);
    assert_int_equal(ps.sessions, 0);
    assert_int_equal(ps.runs, 12);
    assert_true(ps.peak_threads == 1);
    mopt_threadpool_destroy(pool);
    free_case(&c);
}

MOPT_TEST(bad_args) {
    mopt_threadpool *p = (mopt_threadpool *)&p;
    assert_int_equal(mopt_threadpool_create(-1, NULL, &p), MOPT_ERR_INVALID_ARGUMENT);
    assert_null(p);
    assert_non_null(strstr(mopt_last_error(), "out of range"));
    assert_int_equal(mopt_threadpool_create(1025, NULL, &p), MOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(mopt_threadpool_create(2, NULL, NULL), MOPT_ERR_INVALID_ARGUMENT);
    int junk = 0;
    assert_int_equal(mopt_threadpool_create(2, &junk, &p), MOPT_ERR_INVALID_ARGUMENT);
    assert_null(p);
    assert_int_equal(mopt_options_set_threadpool(NULL, NULL), MOPT_ERR_INVALID_ARGUMENT);
    mopt_threadpool_destroy(NULL); /* no-op */

    assert_int_equal(mopt_threadpool_create(0, NULL, &p), MOPT_OK); /* 0: the process's cores */
    mopt_threadpool_stats ps;
    memset(&ps, 0, sizeof ps);
    assert_int_equal(mopt_threadpool_get_stats(p, NULL), MOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(mopt_threadpool_get_stats(NULL, &ps), MOPT_ERR_INVALID_ARGUMENT);
    ps.struct_size = offsetof(mopt_threadpool_stats, peak_threads); /* too small */
    assert_int_equal(mopt_threadpool_get_stats(p, &ps), MOPT_ERR_INVALID_ARGUMENT);
    /* a smaller (older) struct: filled up to its size only */
    ps.struct_size = offsetof(mopt_threadpool_stats, runs);
    ps.runs = 777;
    assert_int_equal(mopt_threadpool_get_stats(p, &ps), MOPT_OK);
    assert_true(ps.threads >= 1);
    assert_int_equal(ps.runs, 777);

    /* options: setting again replaces (and releases) the held pool; NULL detaches */
    mopt_options *o = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_threadpool(o, p), MOPT_OK);
    assert_int_equal(mopt_options_set_threadpool(o, p), MOPT_OK);
    assert_int_equal(mopt_options_set_threadpool(o, NULL), MOPT_OK);
    mopt_options_destroy(o);
    mopt_threadpool_destroy(p); /* the last reference: ASan sees a leak otherwise */
}

MOPT_TEST_MAIN(cmocka_unit_test(bad_args), cmocka_unit_test(alone_uses_threads),
               BOUND_TEST(bound_cnn), BOUND_TEST(bound_mobilenet), BOUND_TEST(bound_bert),
               BOUND_TEST(bound_one), BOUND_TEST(bound_three),
               cmocka_unit_test(destroyed_while_used), cmocka_unit_test(nested_subgraphs),
               cmocka_unit_test(batcher_shares_pool))
