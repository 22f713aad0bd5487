/*
 * test_steady_state.c — a steady-state run allocates nothing: after the
 * first run of an input-shape signature (which plans memory), runs with the
 * same shapes and caller-provided outputs make zero heap allocations. This
 * file interposes malloc/calloc/realloc/free/aligned_alloc/posix_memalign to
 * count every allocation in the process (libmopt and anything it calls), so
 * it is only built without sanitizers. Also checks that the arena is smaller
 * than the sum of all intermediate tensors, and that changing shapes and
 * coming back reuses the cached plan; that quantized models (static INT8
 * from a calibration table, ORT's QDQ and QOperator forms, dynamic
 * MatMulInteger: tests/unit/data/quant/gen_quant.py) do not allocate in a
 * steady-state run either; and that a session alternating
 * shapes gives the outputs of a fresh session for each (state kept per
 * shape, such as attention's attn_plan, follows the shapes).
 */
#define MOPT_EXPERIMENTAL_API /* profiling, stats, pass report, model check */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
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

/* Options for a steady-state session: backend (NULL: the default one),
 * precision (NULL: f32) and calibration table (NULL: none). */
static mopt_options *steady_options(const char *backend, const char *precision,
                                    const char *calibration) {
    mopt_options *opts = NULL;
    assert_int_equal(mopt_options_create(&opts), MOPT_OK);
    if (backend) assert_int_equal(mopt_options_set_string(opts, "backend", backend), MOPT_OK);
    if (precision) assert_int_equal(mopt_options_set_string(opts, "precision", precision), MOPT_OK);
    if (calibration)
        assert_int_equal(mopt_options_set_string(opts, "calibration", calibration), MOPT_OK);
    return opts;
}

MOPT_TEST(steady_state_runs_allocate_nothing) {
    mopt_model *m = NULL;
    mopt_session *s = NULL;
#if defined(MOPT_HAVE_ONEDNN) && defined(MOPT_HAVE_OPENBLAS)
    /* oneDNN allocates inside every dnnl_primitive_execute (its argument map,
     * ~6 small blocks per call, C API included): the guarantee covers the
     * library's own kernels and OpenBLAS, so BERT's products go to OpenBLAS
     * here (the other ops keep the automatic order). */
    mopt_options *opts = steady_options("openblas", NULL, NULL);
#else
    mopt_options *opts = NULL;
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

/* A quantized model whose steady-state runs must not allocate either, and
 * the node (op and kernel, as the profile names them) that shows its int8
 * path ran; kernel NULL: any. */
typedef struct quant_case {
    const char *model;
    const char *backend;
    const char *precision, *calibration; /* NULL: f32 / none */
    bool image;                          /* x [1, 3, 32, 32], else x [2, 8, 32] */
    const char *op, *kernel;
} quant_case;

#define QDIR "tests/unit/data/quant/"

/* A kernel of the last (profiled) run that executed a oneDNN primitive (an
 * "onednn..." impl, unless it took its own "+gemv" path), or NULL. */
static const char *onednn_kernel(const mopt_session *s) {
    for (size_t i = 0; i < mopt_session_profile_count(s); i++) {
        const char *k = mopt_session_profile_kernel(s, i);
        if (!strncmp(k, "onednn", 6) && !strstr(k, "+gemv")) return k;
    }
    return NULL;
}

/* Whether the last (profiled) run ran op on kernel. */
static bool profile_has(const mopt_session *s, const char *op, const char *kernel) {
    for (size_t i = 0; i < mopt_session_profile_count(s); i++)
        if (!strcmp(mopt_session_profile_op(s, i), op) &&
            (!kernel || !strcmp(mopt_session_profile_kernel(s, i), kernel)))
            return true;
    return false;
}

/* The heap allocations of 10 steady-state runs of c (after the checks
 * that it loads, runs and ran its int8 kernel). A run that executes oneDNN
 * primitives fails when strict, else it is not counted. */
static long quant_steady_allocs(const quant_case *c, bool strict) {
    mopt_model *m = NULL;
    mopt_session *s = NULL;
    mopt_options *opts = steady_options(c->backend, c->precision, c->calibration);
    if (mopt_model_load(c->model, opts, &m) != MOPT_OK)
        fail_msg("%s: %s", c->model, mopt_last_error());
    assert_int_equal(mopt_session_create(m, opts, &s), MOPT_OK);
    mopt_options_destroy(opts);
    int64_t dims[4] = {1, 3, 32, 32}, flat[3] = {2, 8, 32};
    mopt_tensor *x = NULL, *y = NULL;
    assert_int_equal(
        mopt_tensor_create(MOPT_DTYPE_F32, c->image ? 4 : 3, c->image ? dims : flat, &x), MOPT_OK);
    float *d = mopt_tensor_data(x);
    for (size_t i = 0; i < mopt_tensor_size_bytes(x) / sizeof(float); i++)
        d[i] = (float)((int)(i * 37 % 101) - 50) / 25.f;
    mopt_run_options *ro = NULL;
    assert_int_equal(mopt_run_options_create(&ro), MOPT_OK);
    assert_int_equal(mopt_run_options_set_profiling(ro, 1), MOPT_OK);
    const mopt_tensor *in[1] = {x};
    /* plans the signature; profiled, to show which kernel ran */
    if (mopt_session_run_v2(s, ro, 1, NULL, in, 1, NULL, &y) != MOPT_OK)
        fail_msg("%s: %s", c->model, mopt_last_error());
    mopt_run_options_destroy(ro);
    bool ran = profile_has(s, c->op, c->kernel);
    printf("[ INFO     ] %s%s%s: %s on %s %s\n", c->model, c->precision ? " precision=" : "",
           c->precision ? c->precision : "", c->op, c->kernel ? c->kernel : "any",
           ran ? "ran" : "did not run");
    if (!ran) fail_msg("%s: no %s on %s in the profile", c->model, c->op, c->kernel);
    const char *dnnl = onednn_kernel(s);
    if (dnnl && strict) fail_msg("%s: %s ran (it allocates in every execute)", c->model, dnnl);
    long before = atomic_load(&g_allocs);
    for (int i = 0; i < 10; i++)
        if (mopt_session_run(s, 1, NULL, in, 1, NULL, &y) != MOPT_OK)
            fail_msg("%s: %s", c->model, mopt_last_error());
    long during = atomic_load(&g_allocs) - before;
    printf("[ INFO     ] %s: 10 steady-state runs made %ld heap allocations%s%s%s\n", c->model,
           during, dnnl ? " (not counted: " : "", dnnl ? dnnl : "", dnnl ? " ran)" : "");
    if (dnnl) during = 0; /* oneDNN allocates in every execute (see above) */
    mopt_tensor_destroy(x);
    mopt_tensor_destroy(y);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
    return during;
}

/* Static int8 (a calibration table, QDQ, QOperator) and dynamic int8
 * (DynamicQuantizeLinear + MatMulInteger): the int8 kernels keep their work
 * buffers in session scratch too. The backends keep the nodes off oneDNN
 * (which allocates in every execute, see above; so precision=int8's dynamic
 * FusedMatMul/FusedConv, oneDNN-only, are not covered): backend=cpu for the
 * static convolutions, OpenBLAS for the float Gemm of the QOperator CNN.
 * The kernels named are those of a machine with AVX512-VNNI, where no
 * oneDNN primitive may run; without VNNI the reference runs the int8 nodes
 * (and must not allocate either) and another backend may take a product,
 * so neither is checked there. */
MOPT_TEST(quantized_steady_state_runs_allocate_nothing) {
#if defined(__x86_64__)
    bool vnni = __builtin_cpu_supports("avx512vnni");
#else
    bool vnni = false;
#endif
    const char *vk = vnni ? "cpu-vnni" : NULL;
#if defined(MOPT_HAVE_ONEDNN) && defined(MOPT_HAVE_OPENBLAS)
    const char *products = "openblas";
#else
    const char *products = "cpu";
#endif
    const quant_case cases[] = {
        {QDIR "cnn.onnx", "cpu", "int8", QDIR "cnn_calibration.yaml", true, "StaticQConv", vk},
        {QDIR "cnn_qdq.onnx", "cpu", NULL, NULL, true, "StaticQConv", vk},
        {QDIR "mlp_qdq.onnx", "cpu", NULL, NULL, false, "StaticQMatMul", vk},
        {QDIR "cnn_qop.onnx", products, NULL, NULL, true, "QLinearConv", vk},
        {QDIR "mlp_qop.onnx", "cpu", NULL, NULL, false, "QLinearMatMul", vk},
        {QDIR "mlp_dyn.onnx", "cpu", NULL, NULL, false, "MatMulInteger", NULL},
    };
    long allocs = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        allocs += quant_steady_allocs(&cases[i], vnni);
    assert_int_equal(allocs, 0);
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
               cmocka_unit_test(quantized_steady_state_runs_allocate_nothing),
               cmocka_unit_test(alternating_shapes_match_fresh_sessions))
