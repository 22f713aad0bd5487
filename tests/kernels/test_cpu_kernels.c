/*
 * test_cpu_kernels.c — kernels/cpu against independent references, for every
 * tier this machine can run (avx512, avx2, portable; MOPT_ISA caps them):
 *
 *  - accuracy of the vector math (exp, tanh, erf, sigmoid, GELU both forms)
 *    against double-precision libm on a dense sweep of float bit patterns
 *    (every 509th float of either sign, subnormals to FLT_MAX) plus the
 *    special values; the bounds below are what the kernels promise
 *    (kernels/README.md), measured maxima are printed;
 *  - each op's "cpu-<tier>" implementation (glue in lib/ops/<family>_cpu.c plus the
 *    kernel) against the op's reference run on randomized shapes: odd sizes
 *    (1, 3, 17, 129, 1000), broadcasting in every direction, NaN and
 *    infinities in the data, 1 and 2 threads.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../test_main.h"
#include "core/alloc.h"
#include "core/cpu.h"
#include "ir/ir.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/ref/ref_elementwise.h"
#include "ops/node_view.h"
#include "ops/ops.h"
#include "tests/kernels/test_rng.h"
#include "tests/test_attrs.h"

/* ---- promised error bounds (float32 results vs the exact function) ------
 * err(x) <= REL * |f(x)| + ABS, ABS covering subnormal results. */
#define EXP_REL 2.5e-7  /* exp: ~2 ulp */
#define EXP_ABS 1.5e-45 /* one subnormal step */
#define TANH_REL 2.5e-7
#define SIGMOID_REL 3.0e-7
#define ERF_REL 2.5e-7
#define GELU_REL 3.0e-7
#define GELU_ABS 1.0e-7 /* x < -5.5: GELU(x) is taken as -0 (|GELU| < 7e-8) */
#define TINY_ABS 1.5e-45

static const char *const k_tiers[] = {"avx512", "avx2", "portable"};
#define N_TIERS 3

static float rnd_f(float lo, float hi) { return lo + (hi - lo) * (float)rnd_unit(); }

static float f_of_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, 4);
    return f;
}
static uint32_t bits_of(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

/* ---- accuracy sweeps ---------------------------------------------------- */

static double gelu_erf_d(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }
static double gelu_tanh_d(double x) {
    double u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
    return x / (1.0 + exp(-2.0 * u)); /* = x/2 (1 + tanh u) */
}
static double sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }
static double swish_d(double x) { return x * sigmoid_d(x); }

typedef struct sweep_case {
    const char *name;
    cpu_unop op;
    double (*truth)(double);
    double rel, abs;
} sweep_case;

/* The sweep inputs: every 509th float bit pattern of either sign, plus
 * boundary values; n returned. */
static float *sweep_inputs(int64_t *n) {
    static const float extra[] = {0.0f,    -0.0f,     FLT_MIN,   -FLT_MIN, FLT_MAX, -FLT_MAX,
                                  1e-45f,  88.72283f, 88.72284f, 88.7f,    89.0f,   -87.33654f,
                                  -87.34f, -103.97f,  -103.98f,  -104.0f,  -200.0f, 0.9f,
                                  -0.9f,   1.0f,      -1.0f,     3.92f,    -3.92f,  5.5f,
                                  -5.5f,   5.6f,      -5.6f,     9.0f,     -9.0f,   0.5f};
    const int64_t step = 509, per_sign = 0x7f800000 / step + 1;
    int64_t cap = 2 * per_sign + (int64_t)(sizeof extra / sizeof extra[0]);
    float *x = mopt_malloc((size_t)cap * sizeof *x);
    assert_non_null(x);
    int64_t k = 0;
    for (uint32_t b = 0; b < 0x7f800000u; b += step) {
        x[k++] = f_of_bits(b);
        x[k++] = -f_of_bits(b);
    }
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
        x[k++] = extra[i];
    *n = k;
    return x;
}

static void check_sweep(const cpu_kernels *kt, const sweep_case *c, const float *x, float *y,
                        int64_t n) {
    kt->unary_f32(c->op, x, y, n, NULL);
    double worst = 0, worst_x = 0, worst_abs = 0;
    for (int64_t i = 0; i < n; i++) {
        double t = c->truth((double)x[i]);
        double tf = (double)(float)t; /* the exact result rounded: what a perfect kernel gives */
        if (isinf(tf)) {
            if (y[i] != (float)tf)
                fail_msg("%s/%s(%.9g) = %.9g, expected %g", kt->isa, c->name, x[i], y[i], tf);
            continue;
        }
        double err = fabs((double)y[i] - t);
        double bound = c->rel * fabs(t) + c->abs;
        if (!(err <= bound))
            fail_msg("%s/%s(%.9g) = %.9g, exact %.9g: error %.3g > bound %.3g", kt->isa, c->name,
                     x[i], y[i], t, err, bound);
        /* relative error where the relative part of the bound dominates */
        double r = c->rel * fabs(t) > c->abs ? err / fabs(t) : 0;
        if (r > worst) worst = r, worst_x = x[i];
        if (err > worst_abs) worst_abs = err;
    }
    printf("[ BOUND    ] %-8s %-10s max rel error %.3g (x = %.9g), max abs error %.3g; "
           "bound %.3g|f| + %.3g\n",
           kt->isa, c->name, worst, worst_x, worst_abs, c->rel, c->abs);
    /* special values */
    const float sp[] = {NAN, INFINITY, -INFINITY};
    float out[3];
    kt->unary_f32(c->op, sp, out, 3, NULL);
    if (!isnan(out[0])) fail_msg("%s/%s(NaN) = %g, expected NaN", kt->isa, c->name, out[0]);
    for (int i = 1; i < 3; i++) {
        double t = c->truth(sp[i]);
        if (isnan(t)) continue; /* GELU(-inf): inf * 0 */
        if (out[i] != (float)t)
            fail_msg("%s/%s(%g) = %g, expected %g", kt->isa, c->name, sp[i], out[i], t);
    }
}

MOPT_TEST(math_accuracy) {
    const sweep_case cases[] = {
        {"exp", CPU_UN_EXP, exp, EXP_REL, EXP_ABS},
        {"tanh", CPU_UN_TANH, tanh, TANH_REL, TINY_ABS},
        {"erf", CPU_UN_ERF, erf, ERF_REL, TINY_ABS},
        {"sigmoid", CPU_UN_SIGMOID, sigmoid_d, SIGMOID_REL, TINY_ABS},
        {"gelu", CPU_UN_GELU, gelu_erf_d, GELU_REL, GELU_ABS},
        {"gelu_tanh", CPU_UN_GELU_TANH, gelu_tanh_d, GELU_REL, GELU_ABS},
        {"swish", CPU_UN_SWISH, swish_d, GELU_REL, GELU_ABS}, /* sigmoid's bound + 1 rounding */
    };
    int64_t n;
    float *x = sweep_inputs(&n);
    float *y = mopt_malloc((size_t)n * sizeof *y);
    assert_non_null(y);
    int tiers = 0;
    for (int t = 0; t < N_TIERS; t++) {
        const cpu_kernels *kt = cpu_kernels_for(k_tiers[t]);
        if (!kt) continue;
        tiers++;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            check_sweep(kt, &cases[c], x, y, n);
    }
    assert_true(tiers >= 1);
    mopt_free(x);
    mopt_free(y);
}

/* MOPT_ISA caps the tiers: a capped tier must be refused. */
MOPT_TEST(tiers_follow_cpu_features) {
    const cpu_features *f = cpu_get();
    const char *cap = getenv("MOPT_ISA");
    assert_non_null(cpu_kernels_for("portable"));
    assert_null(cpu_kernels_for("sse9"));
    bool t512 = f->avx512f && f->avx512bw && f->avx512vl && f->avx512dq;
    assert_true((cpu_kernels_for("avx512") != NULL) == t512);
    assert_true((cpu_kernels_for("avx2") != NULL) == (f->avx2 && f->fma));
    if (cap && strcmp(cap, "avx2") == 0) assert_null(cpu_kernels_for("avx512"));
    if (cap && strcmp(cap, "portable") == 0) assert_null(cpu_kernels_for("avx2"));
    printf("[ TIERS    ] best tier %s (MOPT_ISA=%s)\n", f->isa, cap ? cap : "unset");
}

/* ---- op-level: cpu impl vs reference run -------------------------------- */

typedef struct node_fx {
    ir_graph *g;
    ir_node *n;
    const op_def *def;
    int64_t opset;
} node_fx;

static void fx_init_domain(node_fx *f, const char *op_type, const char *domain, int n_in, int n_out,
                           int64_t opset) {
    f->g = ir_graph_create();
    assert_non_null(f->g);
    f->n = ir_graph_add_node(f->g, op_type, domain, "node_under_test", n_in, n_out);
    assert_non_null(f->n);
    char name[32];
    for (int k = 0; k < n_in; k++) {
        snprintf(name, sizeof name, "x%d", k);
        f->n->inputs[k] = ir_graph_value(f->g, name);
    }
    for (int k = 0; k < n_out; k++) {
        snprintf(name, sizeof name, "y%d", k);
        f->n->outputs[k] = ir_graph_value(f->g, name);
    }
    f->def = ops_find(op_type, domain);
    assert_non_null(f->def);
    f->n->op = f->def;
    f->opset = opset;
}
static void fx_init(node_fx *f, const char *op_type, int n_in, int n_out, int64_t opset) {
    fx_init_domain(f, op_type, "", n_in, n_out, opset);
}
static void fx_done(node_fx *f) { ir_graph_destroy(f->g); }

static op_tensor tensor_of(mopt_dtype t, int32_t rank, const int64_t *dims, void *data) {
    op_tensor x;
    memset(&x, 0, sizeof x);
    x.dtype = t;
    ir_shape_set(&x.shape, rank, dims);
    x.data = data;
    return x;
}

/* Random f32 data in [lo, hi]; with `specials`, about 1 in 50 values is NaN
 * or +-inf. */
static float *rand_f32(int64_t n, float lo, float hi, bool specials) {
    float *x = mopt_aligned_alloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    assert_non_null(x);
    for (int64_t i = 0; i < n; i++) {
        x[i] = rnd_f(lo, hi);
        if (specials && rnd64() % 50 == 0) {
            int k = (int)(rnd64() % 3);
            x[i] = k == 0 ? NAN : k == 1 ? INFINITY : -INFINITY;
        }
    }
    return x;
}

typedef struct tol {
    double atol, rtol;
    bool exact; /* bit-exact except NaN payloads */
} tol;

static int g_op_checks;
static bool g_must_run;            /* an impl that supports a case must not decline its run */
static const char *g_impl = "cpu"; /* the impls under test: "<g_impl>-<tier>" */
static int g_opt_level;            /* the opt_level the impls see (3: weights prepacked) */

/* Runs the node's reference run and each available cpu-<tier> impl (1 and 2
 * threads) on in[], comparing every output. */
static void check_node(node_fx *f, op_tensor *in, int n_in, int n_out, tol t, const char *what,
                       bool may_decline) {
    /* the op's view of the node, with its params parsed (they live in v) */
    assert_int_equal(ir_graph_set_opset(f->g, "", f->opset), 0);
    op_view v;
    op_view_src src = {.graph = f->g, .runtime = true};
    assert_int_equal(op_view_init(&v, &src, f->n, NULL), MOPT_OK);
    op_ctx ctx = v.ctx;
    op_tensor ref[4], got[4];
    memset(ref, 0, sizeof ref);
    assert_int_equal(f->def->infer(&ctx, in, n_in, ref, n_out), MOPT_OK);
    int64_t numel[4];
    for (int k = 0; k < n_out; k++) {
        numel[k] = ir_shape_numel(&ref[k].shape);
        ref[k].data = mopt_aligned_alloc((size_t)(numel[k] > 0 ? numel[k] : 1) *
                                         mopt_dtype_size(ref[k].dtype));
        assert_non_null(ref[k].data);
    }
    if (ops_run_reference(f->def, &ctx, in, n_in, ref, n_out) != MOPT_OK)
        fail_msg("%s: reference run failed: %s", what, mopt_error_message());
    int ran = 0;
    for (int ti = 0; ti < N_TIERS; ti++) {
        const cpu_kernels *kt = cpu_kernels_for(k_tiers[ti]);
        if (!kt) continue;
        const op_impl *impl = NULL;
        char want[32];
        snprintf(want, sizeof want, "%s-%s", g_impl, k_tiers[ti]);
        for (int k = 0; f->def->impls && f->def->impls[k]; k++)
            if (strcmp(f->def->impls[k]->name, want) == 0) impl = f->def->impls[k];
        if (!impl) fail_msg("%s: op %s has no %s implementation", what, f->n->op_type, want);
        op_ctx lctx = ctx;
        lctx.runtime = false;
        lctx.opt_level = g_opt_level;
        if (!impl->supports(&lctx, in, n_in, ref, n_out)) {
            if (!may_decline) fail_msg("%s: %s does not support the case", what, want);
            printf("[ INFO     ] %s: not taken by %s (reference kernel)\n", what, want);
            ran++;
            continue;
        }
        void *st = NULL;
        assert_int_equal(impl->prepare(&lctx, in, n_in, ref, n_out, &st), MOPT_OK);
        if (!impl->release) assert_ptr_equal(st, kt); /* stateful impls keep their own */
        for (int threads = 1; threads <= 2; threads++) {
            op_ctx rctx = ctx;
            rctx.state = st;
            rctx.threads = threads;
            rctx.opt_level = g_opt_level;
            void *scratch = NULL;
            rctx.scratch = &scratch;
            for (int k = 0; k < n_out; k++) {
                got[k] = ref[k];
                got[k].data = mopt_aligned_alloc((size_t)(numel[k] > 0 ? numel[k] : 1) *
                                                 mopt_dtype_size(ref[k].dtype));
                assert_non_null(got[k].data);
                memset(got[k].data, 0xa5, (size_t)numel[k] * mopt_dtype_size(ref[k].dtype));
            }
            mopt_status rs = impl->run(&rctx, in, n_in, got, n_out);
            if (scratch) {
                assert_non_null(impl->release_scratch);
                impl->release_scratch(scratch);
            }
            if (rs == MOPT_ERR_UNSUPPORTED && g_must_run)
                fail_msg("%s: %s declined the run", what, want);
            if (rs == MOPT_ERR_UNSUPPORTED) { /* declined: the executor runs the reference */
                mopt_clear_error();
                rs = ops_run_reference(f->def, &ctx, in, n_in, got, n_out);
            }
            if (rs != MOPT_OK) fail_msg("%s: %s run failed: %s", what, want, mopt_error_message());
            for (int k = 0; k < n_out; k++) {
                if (ref[k].dtype != MOPT_DTYPE_F32) {
                    size_t nb = (size_t)numel[k] * mopt_dtype_size(ref[k].dtype);
                    if (memcmp(ref[k].data, got[k].data, nb) != 0)
                        fail_msg("%s: %s (%d threads) output %d differs from ref", what, want,
                                 threads, k);
                    continue;
                }
                const float *r = ref[k].data, *g = got[k].data;
                for (int64_t i = 0; i < numel[k]; i++) {
                    bool ok;
                    if (isnan(r[i]) || isnan(g[i]))
                        ok = isnan(r[i]) && isnan(g[i]);
                    else if (t.exact)
                        ok = bits_of(r[i]) == bits_of(g[i]);
                    else if (isinf(r[i]) || isinf(g[i]))
                        ok = r[i] == g[i];
                    else
                        ok = fabs((double)r[i] - g[i]) <= t.atol + t.rtol * fabs((double)r[i]);
                    if (!ok)
                        fail_msg("%s: %s (%d threads) output %d element %lld: %.9g, ref %.9g", what,
                                 want, threads, k, (long long)i, g[i], r[i]);
                }
            }
            for (int k = 0; k < n_out; k++)
                mopt_aligned_free(got[k].data);
            g_op_checks++;
        }
        if (impl->release) impl->release(st);
        ran++;
    }
    assert_true(ran >= 1);
    for (int k = 0; k < n_out; k++)
        mopt_aligned_free(ref[k].data);
}

static const int64_t k_sizes[] = {1, 3, 17, 129, 1000};
#define N_SIZES 5

/* Random shape of rank 1..4 with at most max_numel elements. */
static int32_t rand_shape(int64_t *dims, int64_t max_numel) {
    for (;;) {
        int32_t r = 1 + (int32_t)(rnd64() % 4);
        int64_t n = 1;
        for (int32_t i = 0; i < r; i++) {
            dims[i] = k_sizes[rnd64() % N_SIZES];
            n *= dims[i];
        }
        if (n <= max_numel) return r;
    }
}

MOPT_TEST(ops_binary_vs_ref) {
    static const char *const ops[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
    typedef struct {
        int32_t ra, rb;
        int64_t a[4], b[4];
    } pair;
    const pair fixed[] = {
        {2, 2, {17, 129}, {17, 129}},    /* same shape */
        {0, 2, {0}, {3, 1000}},          /* scalar + tensor */
        {2, 0, {3, 1000}, {0}},          /* tensor + scalar */
        {2, 1, {129, 17}, {17}},         /* row broadcast (bias) */
        {1, 3, {1000}, {3, 1, 1000}},    /* row broadcast, a is the row */
        {2, 2, {129, 1}, {129, 17}},     /* column broadcast */
        {3, 3, {3, 1, 17}, {1, 129, 1}}, /* outer product-like */
        {4, 3, {2, 3, 4, 5}, {3, 1, 5}}, /* middle broadcast */
        {1, 1, {1}, {1}},
        {1, 1, {1000}, {1}},
        {4, 4, {1, 1, 1, 1}, {1, 1, 1, 1}},
        /* per-channel (squeeze-excitation) broadcasts: rows against a scalar each */
        {4, 4, {2, 3, 5, 19}, {1, 3, 1, 1}},
        {4, 4, {2, 3, 5, 19}, {2, 3, 1, 1}},
        {4, 4, {1, 3, 1, 1}, {2, 3, 5, 19}}, /* the scalars on the left */
        {4, 4, {2, 5, 3, 3}, {2, 5, 1, 1}},
        {4, 4, {3, 40, 33, 35}, {1, 40, 1, 1}}, /* split over threads mid-block */
        {4, 4, {2, 40, 1, 1}, {2, 40, 33, 35}},
        {4, 4, {2, 7, 9, 17}, {1, 1, 9, 17}}, /* a plane per channel */
    };
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        int n_cases = (int)(sizeof fixed / sizeof fixed[0]) + 20;
        for (int c = 0; c < n_cases; c++) {
            pair p;
            if (c < (int)(sizeof fixed / sizeof fixed[0])) {
                p = fixed[c];
            } else { /* random broadcast: b drops leading axes and sets some to 1 */
                p.ra = rand_shape(p.a, 60000);
                p.rb = (int32_t)(rnd64() % (uint64_t)(p.ra + 1));
                for (int32_t i = 0; i < p.rb; i++) {
                    p.b[i] = p.a[p.ra - p.rb + i];
                    if (rnd64() % 3 == 0) p.b[i] = 1;
                }
                if (rnd64() % 2) {
                    pair s = p;
                    p.ra = s.rb, p.rb = s.ra;
                    memcpy(p.a, s.b, sizeof p.a);
                    memcpy(p.b, s.a, sizeof p.b);
                }
            }
            node_fx f;
            fx_init(&f, ops[o], 2, 1, 17);
            int64_t na = ir_numel(p.ra, p.a), nb = ir_numel(p.rb, p.b);
            float *a = rand_f32(na, -3, 3, true), *b = rand_f32(nb, -3, 3, true);
            op_tensor in[2] = {tensor_of(MOPT_DTYPE_F32, p.ra, p.a, a),
                               tensor_of(MOPT_DTYPE_F32, p.rb, p.b, b)};
            char what[96];
            snprintf(what, sizeof what, "%s case %d (ranks %d, %d)", ops[o], c, (int)p.ra,
                     (int)p.rb);
            check_node(&f, in, 2, 1, (tol){0, 0, true}, what, false);
            mopt_aligned_free(a);
            mopt_aligned_free(b);
            fx_done(&f);
        }
    }
}

typedef struct un_case {
    const char *op;
    tol t;
    float lo, hi;
    float alpha, beta; /* attributes when set (NAN: absent) */
    const char *approx;
} un_case;

MOPT_TEST(ops_unary_vs_ref) {
    /* The reference uses libm (about 1 ulp) and the cpu kernels the bounds
     * above: compare with their sum. Exact ops must be bit-exact. */
    const tol exact = {0, 0, true};
    const un_case cases[] = {
        {"Relu", exact, -5, 5, NAN, NAN, NULL},
        {"LeakyRelu", exact, -5, 5, 0.1f, NAN, NULL},
        {"LeakyRelu", exact, -5, 5, NAN, NAN, NULL},
        {"Sigmoid", {1e-7, 5e-7, false}, -30, 30, NAN, NAN, NULL},
        {"Tanh", {1e-7, 5e-7, false}, -10, 10, NAN, NAN, NULL},
        {"Erf", {1e-7, 5e-7, false}, -5, 5, NAN, NAN, NULL},
        {"Gelu", {2e-7, 5e-7, false}, -10, 10, NAN, NAN, NULL},
        {"Gelu", {2e-7, 5e-7, false}, -10, 10, NAN, NAN, "tanh"},
        {"Exp", {1.5e-45, 5e-7, false}, -100, 88, NAN, NAN, NULL},
        {"HardSwish", {1e-7, 2.5e-7, false}, -5, 5, NAN, NAN, NULL},
        {"HardSigmoid", {1e-7, 2.5e-7, false}, -5, 5, NAN, NAN, NULL},
        {"HardSigmoid", {1e-7, 2.5e-7, false}, -5, 5, 0.3f, 0.4f, NULL},
        {"Sqrt", exact, 0, 100, NAN, NAN, NULL},
        {"Neg", exact, -5, 5, NAN, NAN, NULL},
        {"Abs", exact, -5, 5, NAN, NAN, NULL},
        {"Reciprocal", exact, -5, 5, NAN, NAN, NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int s = 0; s < N_SIZES + 1; s++) {
            int64_t dims[4];
            int32_t rank = 1;
            if (s < N_SIZES)
                dims[0] = k_sizes[s];
            else
                rank = rand_shape(dims, 200000);
            node_fx f;
            fx_init(&f, cases[c].op, 1, 1, 17);
            if (!isnan(cases[c].alpha)) attr_float(f.n, "alpha", cases[c].alpha);
            if (!isnan(cases[c].beta)) attr_float(f.n, "beta", cases[c].beta);
            if (cases[c].approx) attr_str(f.n, "approximate", cases[c].approx);
            int64_t n = ir_numel(rank, dims);
            float *x = rand_f32(n, cases[c].lo, cases[c].hi, true);
            op_tensor in[1] = {tensor_of(MOPT_DTYPE_F32, rank, dims, x)};
            char what[96];
            snprintf(what, sizeof what, "%s%s%s n=%lld", cases[c].op, cases[c].approx ? "/" : "",
                     cases[c].approx ? cases[c].approx : "", (long long)n);
            check_node(&f, in, 1, 1, cases[c].t, what, false);
            mopt_aligned_free(x);
            fx_done(&f);
        }
    }
}

MOPT_TEST(ops_clip_vs_ref) {
    const float bounds[][2] = {
        {-1, 1}, {0, 6}, {2, -2} /* lo > hi: all hi */, {NAN, 0.5f}, {-0.5f, NAN}};
    for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; b++) {
        for (int opset = 6; opset <= 13; opset += 7) {
            int64_t n = k_sizes[b % N_SIZES] * 7;
            node_fx f;
            fx_init(&f, "Clip", opset >= 11 ? 3 : 1, 1, opset);
            float lo = bounds[b][0], hi = bounds[b][1];
            op_tensor in[3];
            int n_in = 1;
            float *x = rand_f32(n, -10, 10, true);
            in[0] = tensor_of(MOPT_DTYPE_F32, 1, &n, x);
            if (opset < 11) {
                if (!isnan(lo)) attr_float(f.n, "min", lo);
                if (!isnan(hi)) attr_float(f.n, "max", hi);
            } else {
                n_in = 3;
                in[1] = tensor_of(isnan(lo) ? MOPT_DTYPE_UNDEFINED : MOPT_DTYPE_F32, 0, NULL, &lo);
                in[2] = tensor_of(isnan(hi) ? MOPT_DTYPE_UNDEFINED : MOPT_DTYPE_F32, 0, NULL, &hi);
                if (isnan(lo)) f.n->inputs[1] = -1, in[1].data = NULL;
                if (isnan(hi)) f.n->inputs[2] = -1, in[2].data = NULL;
            }
            char what[96];
            snprintf(what, sizeof what, "Clip opset %d [%g, %g]", opset, lo, hi);
            check_node(&f, in, n_in, 1, (tol){0, 0, true}, what, false);
            mopt_aligned_free(x);
            fx_done(&f);
        }
    }
}

MOPT_TEST(ops_softmax_vs_ref) {
    typedef struct {
        int32_t rank;
        int64_t dims[4];
        int64_t axis; /* INT64_MIN: default */
        int64_t opset;
    } sm;
    const sm cases[] = {
        {2, {1, 1}, INT64_MIN, 13},
        {2, {3, 17}, INT64_MIN, 13},
        {2, {129, 1000}, -1, 13},
        {3, {2, 3, 129}, 2, 13},
        {4, {2, 12, 128, 128}, -1, 13},
        {3, {17, 129, 1}, 1, 13} /* trailing 1 */,
        {3, {3, 17, 129}, 1, 13} /* middle axis: columns kernel */,
        {4, {1, 16, 4, 525}, 1, 13} /* YOLOv8 DFL */,
        {4, {2, 5, 3, 17}, -3, 13},
        {3, {5, 1, 33}, 0, 13},
        {3, {1, 3, 1000}, 1, 13},
        {4, {2, 3, 1, 1}, 1, 13},
        {3, {3, 17, 129}, 1, 11} /* coerced rows of 17*129 */,
        {3, {3, 5, 7}, 0, 11},
        {1, {1000}, 0, 13},
    };
    for (int lg = 0; lg < 2; lg++) {
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            for (int sp = 0; sp < 2; sp++) {
                node_fx f;
                fx_init(&f, lg ? "LogSoftmax" : "Softmax", 1, 1, cases[c].opset);
                if (cases[c].axis != INT64_MIN) attr_int(f.n, "axis", cases[c].axis);
                int64_t n = ir_numel(cases[c].rank, cases[c].dims);
                float *x = rand_f32(n, -20, 20, sp == 1);
                op_tensor in[1] = {tensor_of(MOPT_DTYPE_F32, cases[c].rank, cases[c].dims, x)};
                char what[96];
                snprintf(what, sizeof what, "%s case %zu%s", lg ? "LogSoftmax" : "Softmax", c,
                         sp ? " with NaN/inf" : "");
                /* log-softmax subtracts the log-sum (about 20 here) from x: one ulp of
                 * that (1.9e-6) is the floor of the absolute error */
                check_node(&f, in, 1, 1, (tol){lg ? 4e-6 : 2e-7, 2e-6, false}, what, false);
                mopt_aligned_free(x);
                fx_done(&f);
            }
        }
    }
}

MOPT_TEST(ops_layernorm_vs_ref) {
    typedef struct {
        int32_t rank;
        int64_t dims[4];
        int64_t axis;
        bool bias;
        int n_out;
    } ln;
    const ln cases[] = {
        {2, {1, 1}, -1, true, 1},      {2, {3, 17}, -1, true, 3},
        {2, {128, 768}, -1, true, 1},  {3, {2, 3, 1000}, -1, false, 1},
        {3, {2, 17, 129}, 1, true, 3}, {2, {129, 3}, 1, true, 2},
        {1, {1000}, 0, true, 3},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        node_fx f;
        int n_in = cases[c].bias ? 3 : 2;
        fx_init(&f, "LayerNormalization", n_in, cases[c].n_out, 17);
        attr_int(f.n, "axis", cases[c].axis);
        attr_float(f.n, "epsilon", 1e-5f);
        const int32_t rank = cases[c].rank;
        int32_t axis = (int32_t)(cases[c].axis < 0 ? cases[c].axis + rank : cases[c].axis);
        int64_t n = ir_numel(rank, cases[c].dims);
        int64_t len = ir_numel(rank - axis, cases[c].dims + axis);
        float *x = rand_f32(n, -4, 4, false);
        for (int64_t i = 0; i < n; i++)
            x[i] += (float)(i / len % 5); /* per-row offsets */
        float *sc = rand_f32(len, 0.5f, 1.5f, false), *bi = rand_f32(len, -1, 1, false);
        op_tensor in[3] = {tensor_of(MOPT_DTYPE_F32, rank, cases[c].dims, x),
                           tensor_of(MOPT_DTYPE_F32, rank - axis, cases[c].dims + axis, sc),
                           tensor_of(MOPT_DTYPE_F32, rank - axis, cases[c].dims + axis, bi)};
        char what[96];
        snprintf(what, sizeof what, "LayerNormalization case %zu", c);
        check_node(&f, in, n_in, cases[c].n_out, (tol){2e-6, 2e-6, false}, what, false);
        mopt_aligned_free(x);
        mopt_aligned_free(sc);
        mopt_aligned_free(bi);
        fx_done(&f);
    }
}

/* GlobalAveragePool: 1-3 spatial axes, batch > 1, a spatial size of 1, one
 * large plane (split over threads), NaN/inf. GlobalMaxPool has no cpu impl:
 * its reference skips NaN where the cpu max would propagate it. */
MOPT_TEST(ops_global_pool_vs_ref) {
    static const char *const ops[] = {"GlobalAveragePool"};
    typedef struct {
        int32_t rank;
        int64_t dims[5];
    } gc;
    const gc cases[] = {
        {4, {2, 3, 7, 9}}, {3, {3, 17, 129}},     {5, {1, 4, 3, 5, 2}},
        {4, {2, 5, 1, 1}}, {4, {1, 2, 300, 301}}, {4, {1, 960, 20, 20}},
    };
    for (size_t o = 0; o < 1; o++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (int sp = 0; sp < 2; sp++) {
                node_fx f;
                fx_init(&f, ops[o], 1, 1, 17);
                int64_t n = ir_numel(cases[c].rank, cases[c].dims);
                float *x = rand_f32(n, -2, 2, sp == 1);
                op_tensor in[1] = {tensor_of(MOPT_DTYPE_F32, cases[c].rank, cases[c].dims, x)};
                char what[96];
                snprintf(what, sizeof what, "%s case %zu%s", ops[o], c, sp ? " with NaN/inf" : "");
                /* float accumulation vs the reference's, up to 90300 terms of
                 * |x| <= 2 */
                check_node(&f, in, 1, 1, (tol){2e-3, 1e-5, false}, what, false);
                mopt_aligned_free(x);
                fx_done(&f);
            }
}

/* ---- the layout pass's channels-last ops (domain mopt) ------------------- */

/* check_node where no impl may decline a case it supports (g_must_run);
 * then frees the n_in inputs' data and the node. */
static void check_must_run(node_fx *f, op_tensor *in, float **data, int n_in, int n_out, tol t,
                           const char *what) {
    g_must_run = true;
    check_node(f, in, n_in, n_out, t, what, false);
    g_must_run = false;
    for (int k = 0; k < n_in; k++)
        mopt_aligned_free(data[k]);
    fx_done(f);
}

MOPT_TEST(ops_channels_last_concat_split_vs_ref) {
    typedef struct {
        int32_t rank;
        int64_t n, sp[3]; /* N and the spatial dims */
        int parts;
        int64_t ch[5];
    } cc;
    const cc cases[] = {
        {4, 1, {5, 7}, 2, {3, 5}},
        {4, 2, {33, 35}, 3, {1, 16, 17}}, /* split over threads mid-image */
        {4, 1, {20, 20}, 2, {64, 129}},   /* a transposed part wider than a tile */
        {3, 2, {77}, 4, {2, 3, 5, 7}},
        {5, 1, {3, 4, 5}, 2, {8, 1}},
        {4, 1, {1, 1}, 4, {1, 2, 3, 4}}, /* check_node: at most 4 outputs */
        {4, 2, {160, 161}, 2, {16, 16}}, /* YOLO-like: many pixels, few channels */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const cc *q = &cases[c];
        int64_t C = 0;
        for (int k = 0; k < q->parts; k++)
            C += q->ch[k];
        for (int split = 0; split < 2; split++)
            for (int lay = 0; lay < 4; lay++) {
                /* layouts: all channels-last, all plain, then two mixes */
                int64_t big_cl = lay == 0 || lay == 2, part_bits = 0;
                for (int k = 0; k < q->parts; k++)
                    if (lay == 0 || (lay >= 2 && (k + lay) % 2 == 0)) part_bits |= (int64_t)1 << k;
                node_fx f;
                int n_in = split ? 1 : q->parts, n_out = split ? q->parts : 1;
                fx_init_domain(&f, split ? "ChannelsLastSplit" : "ChannelsLastConcat", "mopt", n_in,
                               n_out, 17);
                attr_int(f.n, "axis", 1);
                attr_int(f.n, "in_layout", split ? big_cl : part_bits);
                attr_int(f.n, "out_layout", split ? part_bits : big_cl);
                if (split) attr_ints(f.n, "sizes", q->parts, q->ch);
                op_tensor in[5];
                float *data[5];
                int64_t dims[5] = {q->n, 0, q->sp[0], q->sp[1], q->sp[2]};
                for (int k = 0; k < n_in; k++) {
                    dims[1] = split ? C : q->ch[k];
                    int64_t numel = ir_numel(q->rank, dims);
                    data[k] = rand_f32(numel, -3, 3, k == 0);
                    in[k] = tensor_of(MOPT_DTYPE_F32, q->rank, dims, data[k]);
                }
                char what[96];
                snprintf(what, sizeof what, "%s case %zu layouts %d",
                         split ? "ChannelsLastSplit" : "ChannelsLastConcat", c, lay);
                check_must_run(&f, in, data, n_in, n_out, (tol){0, 0, true}, what);
            }
    }
}

MOPT_TEST(ops_channels_last_elementwise_vs_ref) {
    typedef struct {
        int32_t rank;
        int64_t dims[5];
        int64_t sn, sc; /* Scale's S: [sn, sc, 1...] */
    } ec;
    const ec cases[] = {
        {4, {2, 3, 7, 9}, 1, 3},     {4, {2, 3, 7, 9}, 2, 3},     {4, {2, 17, 5, 5}, 2, 1},
        {4, {1, 16, 1, 1}, 1, 1},    {3, {3, 129, 17}, 3, 129},   {5, {1, 4, 3, 5, 2}, 1, 4},
        {4, {1, 960, 7, 7}, 1, 960}, {4, {2, 40, 33, 35}, 2, 40}, /* split over threads */
        {4, {1, 2, 300, 301}, 1, 2},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const ec *q = &cases[c];
        const int64_t C = q->dims[1], n = ir_numel(q->rank, q->dims);
        for (int op = 0; op < 3; op++) {
            static const char *const names[] = {"ChannelsLastGlobalAveragePool",
                                                "ChannelsLastScale", "ChannelsLastAffine"};
            node_fx f;
            int n_in = op + 1;
            fx_init_domain(&f, names[op], "mopt", n_in, 1, 17);
            op_tensor in[3];
            float *data[3];
            data[0] = rand_f32(n, -2, 2, c % 2 == 1);
            in[0] = tensor_of(MOPT_DTYPE_F32, q->rank, q->dims, data[0]);
            if (op == 1) {
                int64_t sd[5] = {q->sn, q->sc, 1, 1, 1};
                data[1] = rand_f32(q->sn * q->sc, -2, 2, false);
                in[1] = tensor_of(MOPT_DTYPE_F32, q->rank, sd, data[1]);
            } else if (op == 2) {
                for (int k = 1; k < 3; k++) {
                    data[k] = rand_f32(C, -2, 2, false);
                    in[k] = tensor_of(MOPT_DTYPE_F32, 1, &C, data[k]);
                }
            }
            char what[96];
            snprintf(what, sizeof what, "%s case %zu", names[op], c);
            /* GAP: float sums as ops_global_pool_vs_ref; Scale and Affine
             * round as the reference does */
            tol t = op == 0 ? (tol){2e-3, 1e-5, false} : (tol){0, 0, true};
            check_must_run(&f, in, data, n_in, 1, t, what);
        }
    }
}

/* mopt.ChannelsLastMaxPool's cpu tiers (kernels/cpu's maxpool) against the
 * reference, bit for bit: channels-last and blocked (nChw16c) layouts,
 * channel counts below, at and past a vector, strides, dilations,
 * asymmetric pads, ceil_mode's overhang, NaN and infinities among the taps
 * (skipped as the reference skips them), images and rows split over 2
 * threads; ResNet's stem pool (64 channels blocked, 112x112, 3x3 stride 2). */
MOPT_TEST(ops_channels_last_maxpool_vs_ref) {
    typedef struct {
        int64_t dims[4];
        int64_t k[2], s[2], d[2], pads[4];
        int ceil, blocked;
    } mc;
    const mc cases[] = {
        {{1, 64, 112, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 0, 1},
        {{2, 3, 7, 9}, {2, 2}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 0, 0},
        {{1, 17, 10, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 0, 2, 1}, 1, 0},
        {{2, 32, 9, 8}, {3, 3}, {1, 1}, {2, 2}, {2, 2, 2, 2}, 0, 1},
        {{1, 40, 5, 5}, {5, 5}, {1, 1}, {1, 1}, {2, 2, 2, 2}, 0, 0},
        {{3, 20, 13, 6}, {2, 3}, {1, 2}, {1, 1}, {0, 1, 1, 0}, 1, 0},
        {{1, 16, 1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 0, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const mc *q = &cases[c];
        const int64_t n = ir_numel(4, q->dims);
        node_fx f;
        fx_init_domain(&f, "ChannelsLastMaxPool", "mopt", 1, 1, 17);
        attr_ints(f.n, "kernel_shape", 2, q->k);
        attr_ints(f.n, "strides", 2, q->s);
        attr_ints(f.n, "dilations", 2, q->d);
        attr_ints(f.n, "pads", 4, q->pads);
        attr_int(f.n, "ceil_mode", q->ceil);
        if (q->blocked) attr_int(f.n, "blocked", 1);
        op_tensor in[1];
        float *data[1] = {rand_f32(n, -2, 2, c % 2 == 0)};
        in[0] = tensor_of(MOPT_DTYPE_F32, 4, q->dims, data[0]);
        char what[64];
        snprintf(what, sizeof what, "ChannelsLastMaxPool case %zu", c);
        check_must_run(&f, in, data, 1, 1, (tol){0, 0, true}, what);
    }
}

MOPT_TEST(ops_batchnorm_vs_ref) {
    typedef struct {
        int32_t rank;
        int64_t dims[5];
    } bc;
    const bc cases[] = {{4, {2, 3, 7, 9}},    {2, {5, 17}},         {3, {3, 129, 17}},
                        {5, {1, 4, 3, 5, 2}}, {4, {2, 40, 33, 35}}, {4, {1, 1, 1, 1}}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t C = cases[c].dims[1], n = ir_numel(cases[c].rank, cases[c].dims);
        node_fx f;
        fx_init(&f, "BatchNormalization", 5, 1, 15);
        attr_float(f.n, "epsilon", 1e-3f);
        op_tensor in[5];
        float *data[5];
        data[0] = rand_f32(n, -3, 3, c % 2 == 1);
        in[0] = tensor_of(MOPT_DTYPE_F32, cases[c].rank, cases[c].dims, data[0]);
        for (int k = 1; k < 5; k++) {
            data[k] = rand_f32(C, k == 4 ? 0.1f : -2, 2, false); /* var > 0 */
            in[k] = tensor_of(MOPT_DTYPE_F32, 1, &C, data[k]);
        }
        char what[96];
        snprintf(what, sizeof what, "BatchNormalization case %zu", c);
        check_must_run(&f, in, data, 5, 1, (tol){0, 0, true}, what);
    }
}

MOPT_TEST(ops_reduce_vs_ref) {
    static const char *const ops[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"};
    typedef struct {
        int32_t rank;
        int64_t dims[4];
        int n_axes;
        int64_t axes[4];
        int keep;
    } rc;
    const rc cases[] = {
        {2, {129, 1000}, 1, {-1}, 1},
        {2, {3, 17}, 1, {1}, 0},
        {3, {2, 17, 129}, 2, {1, 2}, 1},
        {3, {3, 129, 17}, 1, {1}, 1},
        {3, {1000, 3, 1}, 1, {0}, 0},
        {4, {2, 3, 17, 5}, 2, {1, 2}, 0},
        {3, {2, 1, 129}, 2, {1, 2}, 1},
        {2, {1, 1}, 1, {0}, 1},
        {3, {5, 7, 3}, 0, {0}, 0},
        {3, {3, 17, 5}, 2, {0, 2}, 1} /* scattered: reference path */,
    };
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            for (int sp = 0; sp < 2; sp++) {
                node_fx f;
                fx_init(&f, ops[o], 1, 1, 13); /* opset 13: axes attribute for ReduceSum too? */
                if (strcmp(ops[o], "ReduceSum") == 0) f.opset = 11;
                if (cases[c].n_axes) attr_ints(f.n, "axes", cases[c].n_axes, cases[c].axes);
                attr_int(f.n, "keepdims", cases[c].keep);
                int64_t n = ir_numel(cases[c].rank, cases[c].dims);
                float *x = rand_f32(n, -2, 2, sp == 1);
                op_tensor in[1] = {tensor_of(MOPT_DTYPE_F32, cases[c].rank, cases[c].dims, x)};
                char what[96];
                snprintf(what, sizeof what, "%s case %zu%s", ops[o], c, sp ? " with NaN/inf" : "");
                /* float accumulation vs the reference's double: |x| <= 2 and
                 * at most 129000 terms; sums are compared loosely */
                bool minmax = o >= 2;
                check_node(&f, in, 1, 1, (tol){minmax ? 0 : 2e-3, minmax ? 0 : 1e-5, minmax}, what,
                           false);
                mopt_aligned_free(x);
                fx_done(&f);
            }
        }
    }
    /* ReduceSum opset 13: axes as an input */
    node_fx f;
    fx_init(&f, "ReduceSum", 2, 1, 13);
    int64_t dims[3] = {3, 17, 129}, axes[1] = {-1}, one = 1;
    float *x = rand_f32(3 * 17 * 129, -1, 1, false);
    op_tensor in[2] = {tensor_of(MOPT_DTYPE_F32, 3, dims, x),
                       tensor_of(MOPT_DTYPE_I64, 1, &one, axes)};
    check_node(&f, in, 2, 1, (tol){1e-5, 1e-5, false}, "ReduceSum opset 13 axes input", false);
    mopt_aligned_free(x);
    fx_done(&f);
}

MOPT_TEST(ops_transpose_vs_ref) {
    typedef struct {
        int32_t rank;
        int64_t dims[4];
        int64_t perm[4];
        mopt_dtype dt;
    } tc;
    const tc cases[] = {
        {2, {1000, 129}, {1, 0}, MOPT_DTYPE_F32},
        {2, {17, 3}, {1, 0}, MOPT_DTYPE_F32},
        {2, {1, 1000}, {1, 0}, MOPT_DTYPE_F32},
        {2, {129, 129}, {1, 0}, MOPT_DTYPE_I32},
        {4, {2, 128, 12, 64}, {0, 2, 1, 3}, MOPT_DTYPE_F32}, /* [B,S,H,D] -> [B,H,S,D] */
        {4, {2, 17, 3, 129}, {0, 2, 1, 3}, MOPT_DTYPE_I64},
        {4, {2, 128, 12, 64}, {0, 2, 3, 1}, MOPT_DTYPE_F32}, /* [B,S,H,D] -> [B,H,D,S] */
        {3, {3, 17, 129}, {0, 2, 1}, MOPT_DTYPE_F32},
        {3, {3, 1, 17}, {2, 1, 0}, MOPT_DTYPE_F32},
        {3, {1000, 3, 1}, {1, 0, 2}, MOPT_DTYPE_U8},
        {3, {5, 7, 9}, {2, 0, 1}, MOPT_DTYPE_F32},
        {4, {2, 3, 4, 5}, {3, 2, 1, 0}, MOPT_DTYPE_F32},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        node_fx f;
        fx_init(&f, "Transpose", 1, 1, 13);
        attr_ints(f.n, "perm", cases[c].rank, cases[c].perm);
        int64_t n = ir_numel(cases[c].rank, cases[c].dims);
        size_t esz = mopt_dtype_size(cases[c].dt);
        uint8_t *x = mopt_aligned_alloc((size_t)n * esz);
        assert_non_null(x);
        for (size_t i = 0; i < (size_t)n * esz; i++)
            x[i] = (uint8_t)rnd64();
        if (cases[c].dt == MOPT_DTYPE_F32) { /* keep NaN payloads out of a bit-exact check */
            float *xf = (float *)(void *)x;
            for (int64_t i = 0; i < n; i++)
                xf[i] = rnd_f(-1, 1);
        }
        op_tensor in[1] = {tensor_of(cases[c].dt, cases[c].rank, cases[c].dims, x)};
        char what[64];
        snprintf(what, sizeof what, "Transpose case %zu", c);
        check_node(&f, in, 1, 1, (tol){0, 0, true}, what, true); /* some perms: reference */
        mopt_aligned_free(x);
        fx_done(&f);
    }
}

/* Resize on 4-D NCHW: every nearest_mode and coordinate mode exporters
 * emit, linear too, with scales (< 1, > 1, the integer 2x) or sizes, batch
 * 2, widths that are no multiple of any vector width. The cpu tables are
 * built with the reference's own coordinate rules, so nearest is bit-exact;
 * linear blends in float (ref: double). Cubic is left to the reference. */
MOPT_TEST(ops_resize_vs_ref) {
    typedef struct {
        const char *mode, *coord, *nearest;
        int64_t ih, iw;
        float sh, sw;   /* scales, or 0: sizes */
        int64_t oh, ow; /* sizes when the scales are 0 */
    } rc;
    const rc cases[] = {
        {"nearest", "asymmetric", "floor", 5, 19, 2, 2, 0, 0},
        {"nearest", "asymmetric", "floor", 4, 40, 2, 2, 0, 0},
        {"nearest", "half_pixel", "round_prefer_floor", 7, 37, 2, 2, 0, 0},
        {"nearest", "half_pixel", "round_prefer_ceil", 7, 37, 0.6f, 1.7f, 0, 0},
        {"nearest", "align_corners", "round_prefer_floor", 9, 33, 3, 0.5f, 0, 0},
        {"nearest", "pytorch_half_pixel", "ceil", 6, 21, 0, 0, 11, 50},
        {"nearest", "asymmetric", "floor", 16, 33, 0, 0, 9, 13},
        {"nearest", "half_pixel_symmetric", "floor", 5, 17, 1.5f, 2.5f, 0, 0},
        {"linear", "half_pixel", NULL, 5, 19, 2, 2, 0, 0},
        {"linear", "half_pixel", NULL, 7, 37, 0.6f, 1.7f, 0, 0},
        {"linear", "align_corners", NULL, 9, 33, 2, 2, 0, 0},
        {"linear", "pytorch_half_pixel", NULL, 6, 21, 0, 0, 1, 50},
        {"linear", "asymmetric", NULL, 16, 1030, 0.5f, 1.25f, 0, 0},
        {"linear", "half_pixel", NULL, 1, 1, 0, 0, 3, 5},
        {"cubic", "half_pixel", NULL, 5, 19, 2, 2, 0, 0}, /* reference */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        node_fx f;
        fx_init(&f, "Resize", 4, 1, 13);
        attr_str(f.n, "mode", cases[c].mode);
        attr_str(f.n, "coordinate_transformation_mode", cases[c].coord);
        if (cases[c].nearest) attr_str(f.n, "nearest_mode", cases[c].nearest);
        int64_t dims[4] = {2, 3, cases[c].ih, cases[c].iw}, four = 4, zero = 0;
        float *x = rand_f32(ir_numel(4, dims), -3, 3, false);
        float scales[4] = {1, 1, cases[c].sh, cases[c].sw};
        int64_t sizes[4] = {2, 3, cases[c].oh, cases[c].ow};
        bool by_scale = cases[c].sh > 0;
        op_tensor in[4] = {tensor_of(MOPT_DTYPE_F32, 4, dims, x),
                           tensor_of(MOPT_DTYPE_F32, 1, &zero, NULL),
                           tensor_of(MOPT_DTYPE_F32, 1, by_scale ? &four : &zero, scales),
                           tensor_of(MOPT_DTYPE_I64, 1, by_scale ? &zero : &four, sizes)};
        char what[128];
        snprintf(what, sizeof what, "Resize case %zu (%s %s %s)", c, cases[c].mode, cases[c].coord,
                 cases[c].nearest ? cases[c].nearest : "");
        bool cubic = strcmp(cases[c].mode, "cubic") == 0;
        bool nearest = strcmp(cases[c].mode, "nearest") == 0;
        g_must_run = !cubic;
        check_node(&f, in, 4, 1, (tol){nearest ? 0 : 1e-6, nearest ? 0 : 1e-6, nearest}, what,
                   false);
        g_must_run = false;
        /* the name MOPT_VERBOSE lists says whether the cpu kernel runs, or why not */
        op_view v;
        op_view_src src = {.graph = f.g, .runtime = false};
        assert_int_equal(op_view_init(&v, &src, f.n, NULL), MOPT_OK);
        const op_impl *impl = f.def->impls[2]; /* cpu-portable: every machine has it */
        assert_string_equal(impl->name, "cpu-portable");
        void *st = NULL;
        assert_int_equal(impl->prepare(&v.ctx, in, 4, NULL, 1, &st), MOPT_OK);
        const char *shown = impl->variant(st);
        if (cubic ? strstr(shown, "declines: mode cubic") == NULL
                  : strcmp(shown, "cpu-portable") != 0)
            fail_msg("%s: listed as kernel=%s", what, shown);
        impl->release(st);
        mopt_aligned_free(x);
        fx_done(&f);
    }
}

/* The M = 1 product (cpu-gemv) of MatMul, Gemm (transB, alpha, beta, C)
 * and FusedMatMul (bias, Relu) with a constant weight, against the
 * reference: widths that are no multiple of a vector or a 128-column panel,
 * K odd, the weight as stored (opt_level 0) and packed (3). Float sums in
 * another order than the reference's: 1e-6 K absolute, 1e-5 relative, on |x|, |w| <= 1. */
MOPT_TEST(ops_gemv_vs_ref) {
    const int64_t ks[] = {1, 7, 256, 385}, ns[] = {1, 13, 120, 128, 200, 1030};
    g_impl = "cpu-gemv";
    g_must_run = true;
    for (int lvl = 0; lvl <= 3; lvl += 3) {
        g_opt_level = lvl;
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
            for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
                const int64_t K = ks[ki], N = ns[ni];
                float *x = rand_f32(K, -1, 1, false), *w = rand_f32(K * N, -1, 1, false);
                float *c = rand_f32(N, -1, 1, false);
                char what[96];
                for (int kind = 0; kind < 4; kind++) {
                    node_fx f;
                    int64_t xd[3] = {1, 1, K}, wd[2] = {K, N}, wt[2] = {N, K}, cd[1] = {N};
                    op_tensor in[3];
                    int n_in = 2;
                    if (kind == 0) { /* MatMul [1, 1, K] x [K, N] */
                        fx_init(&f, "MatMul", 2, 1, 13);
                        in[0] = tensor_of(MOPT_DTYPE_F32, 3, xd, x);
                        in[1] = tensor_of(MOPT_DTYPE_F32, 2, wd, w);
                    } else if (kind <= 2) { /* Gemm, kind 2: transB, alpha, beta, C */
                        n_in = kind == 2 ? 3 : 2;
                        fx_init(&f, "Gemm", n_in, 1, 13);
                        if (kind == 2) {
                            attr_int(f.n, "transB", 1);
                            attr_float(f.n, "alpha", 0.75f);
                            attr_float(f.n, "beta", -1.5f);
                        }
                        in[0] = tensor_of(MOPT_DTYPE_F32, 2, xd + 1, x);
                        in[1] = tensor_of(MOPT_DTYPE_F32, 2, kind == 2 ? wt : wd, w);
                        in[2] = tensor_of(MOPT_DTYPE_F32, 1, cd, c);
                    } else { /* mopt.FusedMatMul with bias and Relu */
                        n_in = 3;
                        f.g = ir_graph_create();
                        assert_non_null(f.g);
                        f.n =
                            ir_graph_add_node(f.g, "FusedMatMul", "mopt", "node_under_test", 3, 1);
                        assert_non_null(f.n);
                        f.n->inputs[0] = ir_graph_value(f.g, "x0");
                        f.n->inputs[1] = ir_graph_value(f.g, "x1");
                        f.n->inputs[2] = ir_graph_value(f.g, "x2");
                        f.n->outputs[0] = ir_graph_value(f.g, "y0");
                        f.def = ops_find("FusedMatMul", "mopt");
                        assert_non_null(f.def);
                        f.n->op = f.def;
                        f.opset = 13;
                        attr_str(f.n, "activation", "Relu");
                        in[0] = tensor_of(MOPT_DTYPE_F32, 2, xd + 1, x);
                        in[1] = tensor_of(MOPT_DTYPE_F32, 2, wd, w);
                        in[2] = tensor_of(MOPT_DTYPE_F32, 1, cd, c);
                    }
                    snprintf(what, sizeof what, "GEMV %s K=%lld N=%lld opt_level %d",
                             kind == 0   ? "MatMul"
                             : kind == 1 ? "Gemm"
                             : kind == 2 ? "Gemm transB alpha beta C"
                                         : "FusedMatMul bias Relu",
                             (long long)K, (long long)N, lvl);
                    check_node(&f, in, n_in, 1, (tol){1e-6 * (double)K, 1e-5, false}, what, false);
                    fx_done(&f);
                }
                mopt_aligned_free(x);
                mopt_aligned_free(w);
                mopt_aligned_free(c);
            }
        }
    }
    g_opt_level = 0;
    g_must_run = false;
    g_impl = "cpu";
}

/* cpu_gemv_f32 against a double-precision product, every tier: every
 * width from 1 to past two 8-vector panels of the widest tier (so every
 * count of leftover vectors, full and partial, follows whole panels), K
 * odd and even, a row stride past the width. Nothing past width changes. */
MOPT_TEST(kernel_gemv_vs_naive) {
    const int64_t ks[] = {1, 2, 7, 130};
    for (size_t t = 0; t < sizeof k_tiers / sizeof k_tiers[0]; t++) {
        const cpu_kernels *kt = cpu_kernels_for(k_tiers[t]);
        if (!kt) continue;
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
            for (int64_t W = 1; W <= 2 * 128 + 17; W++) {
                const int64_t K = ks[ki], ld = W + 3;
                float *x = rand_f32(K, -1, 1, false), *b = rand_f32(K * ld, -1, 1, false);
                float *y = rand_f32(ld, -1, 1, false);
                float *y0 = mopt_aligned_alloc((size_t)ld * sizeof *y0);
                assert_non_null(y0);
                memcpy(y0, y, (size_t)ld * sizeof *y0);
                kt->gemv_f32(x, b, K, ld, W, y);
                for (int64_t n = 0; n < ld; n++) {
                    if (n >= W) {
                        if (y[n] != y0[n])
                            fail_msg("%s gemv K=%lld W=%lld: y[%lld] past the width changed",
                                     k_tiers[t], (long long)K, (long long)W, (long long)n);
                        continue;
                    }
                    double ref = 0;
                    for (int64_t k = 0; k < K; k++)
                        ref += (double)x[k] * b[k * ld + n];
                    if (fabs(y[n] - ref) > 1e-6 * (double)K + 1e-5 * fabs(ref))
                        fail_msg("%s gemv K=%lld W=%lld: y[%lld] = %g, expected %g", k_tiers[t],
                                 (long long)K, (long long)W, (long long)n, y[n], ref);
                }
                mopt_aligned_free(x);
                mopt_aligned_free(b);
                mopt_aligned_free(y);
                mopt_aligned_free(y0);
            }
    }
}

/* cpu_gemv_rows_f32 (M = 1..CPU_GEMV_MAX_ROWS rows of x against one
 * weight block, as the oneDNN impls' 1x1-image convs and small-batch Gemm
 * run it) against a double-precision product, every tier: M not a multiple
 * of its 4-row step, widths below, at and past its 4-vector column step
 * and partial vectors, row strides past the widths. Nothing outside the
 * M x width block of y may change. */
MOPT_TEST(kernel_gemv_rows_vs_naive) {
    const int64_t ms[] = {1, 2, 3, 4, 5, 7, 8}, ks[] = {1, 7, 130}, ws[] = {1, 13, 64, 100, 128};
    for (size_t t = 0; t < sizeof k_tiers / sizeof k_tiers[0]; t++) {
        const cpu_kernels *kt = cpu_kernels_for(k_tiers[t]);
        if (!kt) continue;
        for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++)
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
                for (size_t wi = 0; wi < sizeof ws / sizeof ws[0]; wi++) {
                    const int64_t M = ms[mi], K = ks[ki], W = ws[wi];
                    const int64_t ldx = K + 2, ld = W + 3, ldy = W + 5;
                    float *x = rand_f32(M * ldx, -1, 1, false), *b = rand_f32(K * ld, -1, 1, false);
                    float *y = rand_f32((M + 1) * ldy, -1, 1, false);
                    float *y0 = mopt_aligned_alloc((size_t)((M + 1) * ldy) * sizeof *y0);
                    assert_non_null(y0);
                    memcpy(y0, y, (size_t)((M + 1) * ldy) * sizeof *y0);
                    kt->gemv_rows_f32(x, ldx, M, b, K, ld, W, y, ldy);
                    for (int64_t m = 0; m <= M; m++)
                        for (int64_t n = 0; n < ldy; n++) {
                            float got = y[m * ldy + n];
                            if (m == M || n >= W) {
                                if (got != y0[m * ldy + n])
                                    fail_msg("%s gemv_rows M=%lld K=%lld W=%lld: y[%lld][%lld] "
                                             "outside the block changed",
                                             k_tiers[t], (long long)M, (long long)K, (long long)W,
                                             (long long)m, (long long)n);
                                continue;
                            }
                            double ref = 0;
                            for (int64_t k = 0; k < K; k++)
                                ref += (double)x[m * ldx + k] * b[k * ld + n];
                            if (fabs(got - ref) > 1e-6 * (double)K + 1e-5 * fabs(ref))
                                fail_msg("%s gemv_rows M=%lld K=%lld W=%lld: y[%lld][%lld] = %g, "
                                         "expected %g",
                                         k_tiers[t], (long long)M, (long long)K, (long long)W,
                                         (long long)m, (long long)n, got, ref);
                        }
                    mopt_aligned_free(x);
                    mopt_aligned_free(b);
                    mopt_aligned_free(y);
                    mopt_aligned_free(y0);
                }
    }
}

static int report(void **state) {
    (void)state;
    printf("[ CHECKS   ] %d op-level comparisons (impl x tier x threads)\n", g_op_checks);
    return 0;
}

MOPT_TEST_MAIN_WITH(NULL, report, cmocka_unit_test(tiers_follow_cpu_features),
                    cmocka_unit_test(math_accuracy), cmocka_unit_test(ops_binary_vs_ref),
                    cmocka_unit_test(ops_unary_vs_ref), cmocka_unit_test(ops_clip_vs_ref),
                    cmocka_unit_test(ops_softmax_vs_ref), cmocka_unit_test(ops_layernorm_vs_ref),
                    cmocka_unit_test(ops_reduce_vs_ref), cmocka_unit_test(ops_transpose_vs_ref),
                    cmocka_unit_test(ops_global_pool_vs_ref), cmocka_unit_test(ops_resize_vs_ref),
                    cmocka_unit_test(ops_gemv_vs_ref), cmocka_unit_test(kernel_gemv_vs_naive),
                    cmocka_unit_test(kernel_gemv_rows_vs_naive),
                    cmocka_unit_test(ops_channels_last_concat_split_vs_ref),
                    cmocka_unit_test(ops_channels_last_elementwise_vs_ref),
                    cmocka_unit_test(ops_channels_last_maxpool_vs_ref),
                    cmocka_unit_test(ops_batchnorm_vs_ref))
