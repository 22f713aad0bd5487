/*
 * test_host_threads.c — a session's thread count must not leak into the
 * host (issues 10 and 14): the host sets its own OpenMP and OpenBLAS thread
 * counts (3), then loads and runs models with sessions of 1 and 2 threads
 * on every backend built in; after each load, session creation and run,
 * omp_get_max_threads() and openblas_get_num_threads() must still be 3.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mopt/mopt.h>

#include "../test_main.h"

#include "mopt_config.h"

/* The host's side: the OpenMP runtime and OpenBLAS APIs (declared here so
 * that the test needs neither <omp.h> nor <cblas.h>). */
void omp_set_num_threads(int n);
int omp_get_max_threads(void);
#ifdef MOPT_HAVE_OPENBLAS
void openblas_set_num_threads(int n);
int openblas_get_num_threads(void);
#endif

#define HOST_THREADS 3

static void host_set(void) {
#ifdef MOPT_HAVE_OPENBLAS
    openblas_set_num_threads(HOST_THREADS);
#endif
    omp_set_num_threads(HOST_THREADS);
}

static void host_check(const char *after, const char *model, const char *backend, int threads) {
    int omp = omp_get_max_threads();
    if (omp != HOST_THREADS)
        fail_msg("omp_get_max_threads() is %d after %s (%s, backend %s, %d threads)", omp, after,
                 model, backend, threads);
#ifdef MOPT_HAVE_OPENBLAS
    int blas = openblas_get_num_threads();
    if (blas != HOST_THREADS)
        fail_msg("openblas_get_num_threads() is %d after %s (%s, backend %s, %d threads)", blas,
                 after, model, backend, threads);
#endif
}

typedef struct model_case {
    const char *path;
    int n_inputs;
    mopt_dtype dtype;
    int rank;
    int64_t dims[4];
} model_case;

static const model_case k_models[] = {
    {"tests/models/cnn/model.onnx", 1, MOPT_DTYPE_F32, 4, {4, 3, 32, 32}},
    {"tests/models/mobilenet/model.onnx", 1, MOPT_DTYPE_F32, 4, {4, 3, 32, 32}},
    {"tests/models/bert/model.onnx", 2, MOPT_DTYPE_I64, 2, {4, 64}},
};

static void load_and_run(const model_case *mc, const char *backend, int threads) {
    mopt_options *o = NULL;
    mopt_model *m = NULL;
    mopt_session *s = NULL;
    mopt_tensor *in[2] = {NULL, NULL}, *out = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "threads", threads), MOPT_OK);
    assert_int_equal(mopt_options_set_string(o, "backend", backend), MOPT_OK);
    if (mopt_model_load(mc->path, o, &m) != MOPT_OK)
        fail_msg("%s (%s): %s", mc->path, backend, mopt_last_error());
    host_check("load", mc->path, backend, threads);
    assert_int_equal(mopt_session_create(m, o, &s), MOPT_OK);
    host_check("session create", mc->path, backend, threads);
    for (int k = 0; k < mc->n_inputs; k++) {
        assert_int_equal(mopt_tensor_create(mc->dtype, mc->rank, mc->dims, &in[k]), MOPT_OK);
        if (mc->dtype == MOPT_DTYPE_I64) { /* token ids 1.., attention mask all ones */
            int64_t *d = mopt_tensor_data(in[k]);
            for (int64_t i = 0; i < mc->dims[0] * mc->dims[1]; i++)
                d[i] = k == 0 ? 1 + i % 50 : 1;
        }
    }
    for (int r = 0; r < 3; r++) {
        mopt_status st = mopt_session_run(s, (size_t)mc->n_inputs, NULL,
                                          (const mopt_tensor *const *)in, 1, NULL, &out);
        if (st != MOPT_OK) fail_msg("%s (%s): run: %s", mc->path, backend, mopt_last_error());
        host_check("run", mc->path, backend, threads);
        mopt_tensor_destroy(out);
        out = NULL;
    }
    for (int k = 0; k < mc->n_inputs; k++)
        mopt_tensor_destroy(in[k]);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
    mopt_options_destroy(o);
    host_check("destroy", mc->path, backend, threads);
}

static void each_case(void) {
    const char *backends[] = {
        "auto",
        "cpu",
#ifdef MOPT_HAVE_ONEDNN
        "onednn",
#endif
#ifdef MOPT_HAVE_OPENBLAS
        "openblas",
#endif
    };
    host_set();
    /* the precondition: the host really holds 3 */
    assert_int_equal(omp_get_max_threads(), HOST_THREADS);
#ifdef MOPT_HAVE_OPENBLAS
    assert_int_equal(openblas_get_num_threads(), HOST_THREADS);
#endif
    for (size_t b = 0; b < sizeof backends / sizeof *backends; b++)
        for (size_t mi = 0; mi < sizeof k_models / sizeof *k_models; mi++)
            for (int t = 1; t <= 2; t++)
                load_and_run(&k_models[mi], backends[b], t);
}

/* With the default per-node threshold small nodes run on 1 thread. */
MOPT_TEST(host_threads_unchanged) {
    unsetenv("MOPT_PARALLEL_MIN_FLOPS");
    each_case();
}

/* Threshold 0: every node takes the session's thread count. */
MOPT_TEST(host_threads_unchanged_all_parallel) {
    setenv("MOPT_PARALLEL_MIN_FLOPS", "0", 1);
    each_case();
    unsetenv("MOPT_PARALLEL_MIN_FLOPS");
}

MOPT_TEST_MAIN(cmocka_unit_test(host_threads_unchanged),
               cmocka_unit_test(host_threads_unchanged_all_parallel))
