/*
 * test_cpu_pool.c — cpu_parallel_for on the library's own threads
 * (kernels/cpu/cpu_pool.c): every index of [0, n) is run exactly once for
 * many (threads, n, grain); several threads calling it at once each get
 * their whole range done; and sessions on one model driven from several
 * threads at once, 2 threads each, give outputs bitwise equal to a serial
 * run, also with MOPT_ADAPTIVE_THREADS=1. Meant to run under TSan too (suite unit of a
 * -Db_sanitize=thread build): the CPU backend keeps OpenMP out of the way.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mopt/mopt.h>

#include "../test_main.h"

#include "kernels/cpu/cpu_kernels.h"

typedef struct cover {
    _Atomic int *hits;
    _Atomic int calls;
    int64_t n;
    _Atomic int bad; /* a range outside [0, n) or empty */
} cover;

static void mark(void *arg, int64_t lo, int64_t hi) {
    cover *c = arg;
    atomic_fetch_add(&c->calls, 1);
    if (lo < 0 || hi > c->n || lo >= hi) {
        atomic_store(&c->bad, 1);
        return;
    }
    for (int64_t i = lo; i < hi; i++)
        atomic_fetch_add_explicit(&c->hits[i], 1, memory_order_relaxed);
}

static void check_once(int threads, int64_t n, int64_t grain) {
    cover c = {calloc((size_t)(n ? n : 1), sizeof(_Atomic int)), 0, n, 0};
    assert_non_null(c.hits);
    cpu_parallel_for(threads, n, grain, mark, &c);
    assert_int_equal(atomic_load(&c.bad), 0);
    for (int64_t i = 0; i < n; i++)
        if (atomic_load(&c.hits[i]) != 1)
            fail_msg("threads %d n %lld grain %lld: index %lld run %d times", threads, (long long)n,
                     (long long)grain, (long long)i, atomic_load(&c.hits[i]));
    /* chunks are at least `grain` items (but the whole range when it is shorter) */
    int64_t most = grain > 0 ? n / grain : n;
    int calls = atomic_load(&c.calls);
    if (n > 0 && calls > (most > 1 ? most : 1))
        fail_msg("threads %d n %lld grain %lld: %d chunks, more than n/grain", threads,
                 (long long)n, (long long)grain, calls);
    if (threads == 1 && n > 0) assert_int_equal(calls, 1);
    free(c.hits);
}

MOPT_TEST(pool_covers_every_index_once) {
    const int64_t ns[] = {0, 1, 2, 7, 63, 64, 1000, 4097, 100003};
    const int64_t grains[] = {0, 1, 3, 64, 5000};
    for (int t = 1; t <= 5; t++)
        for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
            for (size_t b = 0; b < sizeof grains / sizeof *grains; b++)
                check_once(t, ns[a], grains[b]);
}

static void *caller(void *arg) {
    int id = *(int *)arg;
    for (int r = 0; r < 200; r++)
        check_once(2 + (id + r) % 3, 5000 + 17 * id + r, 16);
    return NULL;
}

MOPT_TEST(pool_concurrent_callers) {
    pthread_t th[4];
    int ids[4];
    for (int i = 0; i < 4; i++) {
        ids[i] = i;
        assert_int_equal(pthread_create(&th[i], NULL, caller, &ids[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
}

/* ---- sessions on one model from several threads, 2 threads each ---------- */

#define N_SESSIONS 3
#define RUNS 4

typedef struct sess_arg {
    mopt_model *m;
    const mopt_tensor *in;
    const float *want;
    size_t nbytes;
    int mismatches, failures;
} sess_arg;

static mopt_options *options(void) {
    mopt_options *o = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "threads", 2), MOPT_OK);
    assert_int_equal(mopt_options_set_string(o, "backend", "cpu"), MOPT_OK);
    return o;
}

static void *session_thread(void *p) {
    sess_arg *a = p;
    mopt_options *o = options();
    mopt_session *s = NULL;
    if (mopt_session_create(a->m, o, &s) != MOPT_OK) {
        a->failures++;
        mopt_options_destroy(o);
        return NULL;
    }
    for (int r = 0; r < RUNS; r++) {
        mopt_tensor *out = NULL;
        if (mopt_session_run(s, 1, NULL, &a->in, 1, NULL, &out) != MOPT_OK) {
            a->failures++;
            continue;
        }
        if (mopt_tensor_size_bytes(out) != a->nbytes ||
            memcmp(mopt_tensor_data_const(out), a->want, a->nbytes) != 0)
            a->mismatches++;
        mopt_tensor_destroy(out);
    }
    mopt_session_destroy(s);
    mopt_options_destroy(o);
    return NULL;
}

static mopt_model *load_mobilenet(const mopt_options *o) {
    mopt_model *m = NULL;
    if (mopt_model_load("tests/models/mobilenet/model.onnx", o, &m) != MOPT_OK)
        fail_msg("%s", mopt_last_error());
    return m;
}

/* A [batch, 3, 32, 32] input of values (i * mul % mod) / (mod / 2) - 1 in [-1, 1]. */
static mopt_tensor *mobilenet_input(int64_t batch, int64_t mul, int64_t mod) {
    int64_t dims[4] = {batch, 3, 32, 32};
    mopt_tensor *in = NULL;
    assert_int_equal(mopt_tensor_create(MOPT_DTYPE_F32, 4, dims, &in), MOPT_OK);
    float *x = mopt_tensor_data(in);
    for (int64_t i = 0; i < batch * 3 * 32 * 32; i++)
        x[i] = (float)((i * mul) % mod) / (float)(mod / 2) - 1.f;
    return in;
}

MOPT_TEST(sessions_in_parallel_bitwise_equal) {
    /* every node parallel, so the pool is used by all sessions at once */
    setenv("MOPT_PARALLEL_MIN_FLOPS", "0", 1);
    mopt_options *o = options();
    mopt_model *m = load_mobilenet(o);
    mopt_tensor *in = mobilenet_input(4, 7919, 2003), *ref = NULL;
    mopt_session *s = NULL;
    assert_int_equal(mopt_session_create(m, o, &s), MOPT_OK);
    const mopt_tensor *cin = in;
    assert_int_equal(mopt_session_run(s, 1, NULL, &cin, 1, NULL, &ref), MOPT_OK);
    mopt_session_destroy(s);
    sess_arg args[N_SESSIONS];
    pthread_t th[N_SESSIONS];
    for (int i = 0; i < N_SESSIONS; i++) {
        args[i] = (sess_arg){m, in, mopt_tensor_data_const(ref), mopt_tensor_size_bytes(ref), 0, 0};
        assert_int_equal(pthread_create(&th[i], NULL, session_thread, &args[i]), 0);
    }
    for (int i = 0; i < N_SESSIONS; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(args[i].failures, 0);
        assert_int_equal(args[i].mismatches, 0);
    }
    mopt_tensor_destroy(ref);
    mopt_tensor_destroy(in);
    mopt_model_destroy(m);
    mopt_options_destroy(o);
    unsetenv("MOPT_PARALLEL_MIN_FLOPS");
}

/* MOPT_ADAPTIVE_THREADS=1: over 60 runs nodes switch between 1 and 2
 * threads (both are tried in the first runs, the slower again later); the
 * outputs must stay bitwise equal to a 1-thread session's. */
MOPT_TEST(adaptive_threads_same_outputs) {
    setenv("MOPT_ADAPTIVE_THREADS", "1", 1);
    setenv("MOPT_PARALLEL_MIN_FLOPS", "0", 1);
    mopt_options *o = options();
    mopt_model *m = load_mobilenet(o);
    mopt_tensor *in = mobilenet_input(2, 104729, 4001), *ref = NULL;
    const mopt_tensor *cin = in;
    mopt_options *o1 = options();
    assert_int_equal(mopt_options_set_int(o1, "threads", 1), MOPT_OK);
    mopt_session *s1 = NULL, *s2 = NULL;
    assert_int_equal(mopt_session_create(m, o1, &s1), MOPT_OK);
    assert_int_equal(mopt_session_run(s1, 1, NULL, &cin, 1, NULL, &ref), MOPT_OK);
    assert_int_equal(mopt_session_create(m, o, &s2), MOPT_OK);
    for (int r = 0; r < 60; r++) {
        mopt_tensor *out = NULL;
        assert_int_equal(mopt_session_run(s2, 1, NULL, &cin, 1, NULL, &out), MOPT_OK);
        assert_int_equal(mopt_tensor_size_bytes(out), mopt_tensor_size_bytes(ref));
        if (memcmp(mopt_tensor_data_const(out), mopt_tensor_data_const(ref),
                   mopt_tensor_size_bytes(ref)) != 0)
            fail_msg("run %d differs from the 1-thread session", r);
        mopt_tensor_destroy(out);
    }
    mopt_session_destroy(s2);
    mopt_session_destroy(s1);
    mopt_tensor_destroy(ref);
    mopt_tensor_destroy(in);
    mopt_model_destroy(m);
    mopt_options_destroy(o1);
    mopt_options_destroy(o);
    unsetenv("MOPT_ADAPTIVE_THREADS");
    unsetenv("MOPT_PARALLEL_MIN_FLOPS");
}

MOPT_TEST_MAIN(cmocka_unit_test(pool_covers_every_index_once),
               cmocka_unit_test(pool_concurrent_callers),
               cmocka_unit_test(sessions_in_parallel_bitwise_equal),
               cmocka_unit_test(adaptive_threads_same_outputs))
