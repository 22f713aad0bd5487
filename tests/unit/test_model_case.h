/*
 * test_model_case.h — a committed test model and its input sets, for the
 * tests that run one model from many sessions and compare every output
 * with a serial run bit for bit (test_concurrency.c, test_threadpool.c),
 * and the workers that do so on threads (case_run_workers).
 * Public API only; include after <cmocka.h> and <mopt/mopt.h>.
 */
#ifndef MOPT_TESTS_UNIT_TEST_MODEL_CASE_H
#define MOPT_TESTS_UNIT_TEST_MODEL_CASE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define CASE_MAX_SETS 3
#define CASE_MAX_IN 4

typedef struct {
    const char *dir;
    mopt_model *model;
    int n_inputs, n_sets;
    mopt_tensor *inputs[CASE_MAX_SETS][CASE_MAX_IN];
    mopt_tensor *serial[CASE_MAX_SETS]; /* output 0 of a serial run */
} model_case;

/* Loads DIR/model.onnx (with load_opts, may be NULL) and the inputs of its
 * first n_sets test_data_set_K folders. */
static inline void load_case(model_case *c, const char *dir, int n_sets,
                             const mopt_options *load_opts) {
    assert_true(n_sets >= 1 && n_sets <= CASE_MAX_SETS);
    memset(c, 0, sizeof *c);
    c->dir = dir;
    c->n_sets = n_sets;
    char path[512];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    mopt_status st = mopt_model_load(path, load_opts, &c->model);
    if (st) fail_msg("loading %s: %s", path, mopt_last_error());
    c->n_inputs = (int)mopt_model_io_count(c->model, MOPT_INPUT);
    assert_true(c->n_inputs >= 1 && c->n_inputs <= CASE_MAX_IN);
    for (int k = 0; k < n_sets; k++)
        for (int i = 0; i < c->n_inputs; i++) {
            snprintf(path, sizeof path, "%s/test_data_set_%d/input_%d.npy", dir, k, i);
            st = mopt_tensor_load(path, &c->inputs[k][i]);
            if (st) fail_msg("%s: %s", path, mopt_last_error());
        }
}

static inline void free_case(model_case *c) {
    for (int k = 0; k < c->n_sets; k++) {
        for (int i = 0; i < c->n_inputs; i++)
            mopt_tensor_destroy(c->inputs[k][i]);
        mopt_tensor_destroy(c->serial[k]);
    }
    mopt_model_destroy(c->model);
}

/* Runs set k, returns output 0 (owned) or NULL with *st set. */
static inline mopt_tensor *run_set(mopt_session *s, const model_case *c, int k, mopt_status *st) {
    mopt_tensor *out[1] = {NULL};
    *st = mopt_session_run(s, (size_t)c->n_inputs, NULL, (const mopt_tensor *const *)c->inputs[k],
                           1, NULL, out);
    return *st ? NULL : out[0];
}

static inline int same_bits(const mopt_tensor *a, const mopt_tensor *b) {
    size_t na = mopt_tensor_size_bytes(a), nb = mopt_tensor_size_bytes(b);
    return na == nb && memcmp(mopt_tensor_data_const(a), mopt_tensor_data_const(b), na) == 0;
}

/* The serial reference: every set once on session s (then destroyed). */
static inline void case_serial(model_case *c, mopt_session *s) {
    for (int k = 0; k < c->n_sets; k++) {
        mopt_status st;
        c->serial[k] = run_set(s, c, k, &st);
        if (st) fail_msg("%s set %d: %s", c->dir, k, mopt_last_error());
    }
    mopt_session_destroy(s);
}

/* One thread's share of the check: `runs` runs of the sets in turn on s,
 * or, when s is NULL, on a 1-thread session of its own created (and
 * destroyed) on the thread; failed runs and outputs that differ from the
 * serial run counted. destroy: s is destroyed on the thread when done. */
typedef struct {
    model_case *c;
    mopt_session *s;
    int runs, mismatches, failures;
    bool destroy;
} case_worker;

static inline void *case_worker_main(void *p) {
    case_worker *w = p;
    mopt_session *s = w->s;
    if (!s) {
        mopt_options *o = NULL;
        mopt_status st = mopt_options_create(&o);
        if (!st) st = mopt_options_set_int(o, "threads", 1);
        if (!st) st = mopt_session_create(w->c->model, o, &s);
        mopt_options_destroy(o);
        if (st) {
            w->failures++;
            return NULL;
        }
    }
    for (int r = 0; r < w->runs; r++) {
        int k = r % w->c->n_sets;
        mopt_status st;
        mopt_tensor *y = run_set(s, w->c, k, &st);
        if (!y)
            w->failures++;
        else if (!same_bits(y, w->c->serial[k]))
            w->mismatches++;
        mopt_tensor_destroy(y);
    }
    if (!w->s || w->destroy) mopt_session_destroy(s);
    return NULL;
}

#define CASE_MAX_WORKERS 16

/* Runs w[0..n) each on a thread of its own and waits for them; fails naming
 * a worker with a failed run or an output unlike the serial run's. */
static inline void case_run_workers(case_worker *w, int n) {
    pthread_t th[CASE_MAX_WORKERS];
    assert_true(n >= 1 && n <= CASE_MAX_WORKERS);
    for (int t = 0; t < n; t++)
        assert_int_equal(pthread_create(&th[t], NULL, case_worker_main, &w[t]), 0);
    for (int t = 0; t < n; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < n; t++)
        if (w[t].failures || w[t].mismatches)
            fail_msg("%s thread %d: %d failed runs, %d outputs differ from the serial run",
                     w[t].c->dir, t, w[t].failures, w[t].mismatches);
}

#endif
