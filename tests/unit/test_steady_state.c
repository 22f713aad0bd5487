/*
 * test_steady_state.c — a steady-state run allocates nothing: after the
 * first run of an input-shape signature (which plans memory), runs with the
 * same shapes and caller-provided outputs make zero heap allocations. This
 * file interposes malloc/calloc/realloc/free/aligned_alloc/posix_memalign to
 * count every allocation in the process (libmopt and anything it calls), so
 * it is only built without sanitizers. Also checks that the arena is smaller
 * than the sum of all intermediate tensors, and that changing shapes and
 * coming back reuses the cached plan; and that a session alternating
 * shapes gives the outputs of a fresh session for each (state kept per
 * shape, such as attention's attn_plan, follows the shapes).
 */
#define MOPT_EXPERIMENTAL_API /* profiling, stats, pass report, model check */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mopt/mopt.h>

#include "../test_main.h"

#include "mopt_config.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static atomic_long g_allocs;

void *malloc(size_t n) {
    atomic_fetch_add(&g_allocs, 1);
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
    atomic_fetch_add(&g_allocs, 1);
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n) {
    atomic_fetch_add(&g_allocs, 1);
    return __libc_realloc(p, n);
}
void *aligned_alloc(size_t al, size_t n) {
    atomic_fetch_add(&g_allocs, 1);
    return __libc_memalign(al, n);
}
int posix_memalign(void **out, size_t al, size_t n) {
    atomic_fetch_add(&g_allocs, 1);
    void *p = __libc_memalign(al, n);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}
void free(void *p) { __libc_free(p); }

#define MODEL "tests/models/bert/model.onnx"

typedef struct run_set {
    mopt_tensor *in[2];
    mopt_tensor *out[2];
} run_set;

static void make_inputs(run_set *r, int64_t batch, int64_t seq) {
    int64_t dims[2] = {batch, seq};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(mopt_tensor_create(MOPT_DTYPE_I64, 2, dims, &r->in[k]), MOPT_OK);
        int64_t *d = mopt_tensor_data(r->in[k]);
        for (int64_t i = 0; i < batch * seq; i++)
            d[i] = k == 0 ? (i * 7) % 50 : 1;
    }
    r->out[0] = r->out[1] = NULL;
}

static void free_set(run_set *r) {
    for (int k = 0; k < 2; k++) {
        mopt_tensor_destroy(r->in[k]);
        mopt_tensor_destroy(r->out[k]);
    }
}

static void run(mopt_session *s, run_set *r) {
    mopt_status st =
        mopt_session_run(s, 2, NULL, (const mopt_tensor *const *)r->in, 2, NULL, r->out);
    if (st != MOPT_OK) fail_msg("run failed: %s", mopt_last_error());
}

MOPT_TEST(steady_state_runs_allocate_nothing) {
    mopt_model *m = NULL;
    mopt_session *s = NULL;
    mopt_options *opts = NULL;
#if defined(MOPT_HAVE_ONEDNN) && defined(MOPT_HAVE_OPENBLAS)
    /* oneDNN allocates inside every dnnl_primitive_execute (its argument map,
     * ~6 small blocks per call, C API included): the guarantee covers the
     * library's own kernels and OpenBLAS, so BERT's products go to OpenBLAS
     * here (the other ops keep the automatic order). */
    assert_int_equal(mopt_options_create(&opts), MOPT_OK);
    assert_int_equal(mopt_options_set_string(opts, "backend", "openblas"), MOPT_OK);
#endif
    assert_int_equal(mopt_model_load(MODEL, opts, &m), MOPT_OK);
    assert_int_equal(mopt_session_create(m, opts, &s), MOPT_OK);
    mopt_options_destroy(opts);
    run_set a, b;
    make_inputs(&a, 2, 16);
    make_inputs(&b, 1, 9);
    run(s, &a); /* plans [2,16]; outputs allocated by the library */
    long before = atomic_load(&g_allocs);
    for (int i = 0; i < 10; i++)
        run(s, &a);
    long during = atomic_load(&g_allocs) - before;
    if (during != 0) fail_msg("10 steady-state runs made %ld heap allocations", during);

    int64_t arena = 0, total = 0, plans = 0;
    assert_int_equal(mopt_session_get_stat(s, "arena_bytes", &arena), MOPT_OK);
    assert_int_equal(mopt_session_get_stat(s, "intermediate_bytes", &total), MOPT_OK);
    printf("[ INFO     ] bert [2,16]: arena %lld bytes, all intermediates %lld bytes\n",
           (long long)arena, (long long)total);
    assert_true(arena > 0);
    assert_true(arena < total);

    /* another signature gets its own plan; coming back to the first is free */
    run(s, &b);
    run(s, &b);
    before = atomic_load(&g_allocs);
    run(s, &a);
    run(s, &b);
    during = atomic_load(&g_allocs) - before;
    if (during != 0) fail_msg("alternating cached signatures made %ld allocations", during);
    assert_int_equal(mopt_session_get_stat(s, "plans", &plans), MOPT_OK);
    assert_int_equal(plans, 2);

    free_set(&a);
    free_set(&b);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
}

/* r's outputs from a fresh session of m */
static void run_fresh(mopt_model *m, run_set *r) {
    mopt_session *s = NULL;
    assert_int_equal(mopt_session_create(m, NULL, &s), MOPT_OK);
    run(s, r);
    mopt_session_destroy(s);
}

static void expect_same_outputs(run_set *got, run_set *want) {
    for (int k = 0; k < 2; k++) {
        size_t n = mopt_tensor_size_bytes(want->out[k]);
        assert_int_equal(mopt_tensor_size_bytes(got->out[k]), n);
        assert_memory_equal(mopt_tensor_data(got->out[k]), mopt_tensor_data(want->out[k]), n);
    }
}

MOPT_TEST(alternating_shapes_match_fresh_sessions) {
    mopt_model *m = NULL;
    mopt_session *s = NULL;
    assert_int_equal(mopt_model_load(MODEL, NULL, &m), MOPT_OK);
    assert_int_equal(mopt_session_create(m, NULL, &s), MOPT_OK);
    run_set a, b, fa, fb;
    make_inputs(&a, 2, 16);
    make_inputs(&b, 1, 9);
    make_inputs(&fa, 2, 16);
    make_inputs(&fb, 1, 9);
    run_fresh(m, &fa);
    run_fresh(m, &fb);
    for (int i = 0; i < 3; i++) { /* a, b, a, b, a, b in one session */
        run(s, &a);
        expect_same_outputs(&a, &fa);
        run(s, &b);
        expect_same_outputs(&b, &fb);
    }
    free_set(&a);
    free_set(&b);
    free_set(&fa);
    free_set(&fb);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
}

MOPT_TEST_MAIN(cmocka_unit_test(steady_state_runs_allocate_nothing),
               cmocka_unit_test(alternating_shapes_match_fresh_sessions))
