/*
 * test_kernels.c — every fast implementation (op_impl of MatMul, Gemm, Conv
 * on oneDNN and OpenBLAS) against the reference run of the same op, on
 * randomized inputs: odd sizes (1, 3, 17, 129), broadcast batch dims, 1-D
 * operands, transposed operands, every Gemm C shape, grouped/depthwise conv
 * with strides, dilations, pads and auto_pad, constant and non-constant
 * weights, symbolic load-time shapes. A call an impl declines
 * (MOPT_ERR_UNSUPPORTED, then the reference runs, as in the executor) is
 * counted, and the reference run is wrapped so that an impl calling it by
 * hand is caught too: a fast impl never silently runs the reference. The
 * oneDNN impl of each op picks its variant (precision, weight layout) in
 * prepare; the variant each case gets is checked by name. The oneDNN
 * post-ops (bias, residual, every activation) are checked at the kernel
 * layer against libm formulas.
 *
 * Tolerance (f32): both sides round each product/sum, so they differ by at
 * most 2 * gamma_K * sum_k |a_ik b_kj| with gamma_K = K u / (1 - K u),
 * u = 2^-24 (Higham's bound for dot products); we check that bound plus
 * 1e-6. Activations add their Lipschitz factor (<= 1.5) and oneDNN's own
 * approximation error (<= 1e-5 relative, 1e-6 absolute).
 *
 * Tolerance (bf16, precision=bf16 impls): each operand is rounded to bf16
 * (relative error <= u = 2^-8), so each product is off by <= 2u + u^2; the
 * bound becomes (2^-7 + 2^-16 + 2 gamma_K) * sum_k |a_ik b_kj| + 1e-6.
 *
 * Tolerance (int8, precision=int8 impls): each row i of A is quantized
 * asymmetrically to u8 with its own scale sa_i = (max(0, row) - min(0,
 * row)) / 255, and B per column with sb_j = max_k |B_kj| / 127 (/ 63 without
 * VNNI: int8_wmax), both rounded to nearest, so |a - a~| <= sa_i / 2 and
 * |b - b~| <= sb_j / 2 and |ab - a~b~| <= |a| sb_j / 2 + |b| sa_i / 2 +
 * sa_i sb_j / 4; summed over k (the int32 accumulation
 * is exact), times |alpha|, plus the f32 bound.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/alloc.h"
#include "core/cpu.h"
#include "core/error.h"
#include "ir/ir.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/ref/ref_epilogue.h"
#include "mopt_config.h"
#include "ops/conv.h"
#include "ops/fused.h"
#include "ops/impls.h"
#include "ops/node_view.h"
#include "ops/ops.h"
#include "tests/kernels/test_rng.h"
#include "tests/test_attrs.h"
#ifdef MOPT_HAVE_ONEDNN
#include "kernels/cpu/rowquant.h"
#include "kernels/onednn/onednn.h"
#include "ops/onednn/onednn_glue.h"
#endif

/* ---- helpers ------------------------------------------------------------ */

static op_precision g_prec; /* ctx->precision of the impl under test */
static int g_opt_level;     /* ctx->opt_level of the impl under test */
/* The variant the impl's prepare must choose (NULL: any). With
 * g_may_step_aside (a "-packed" variant, which steps aside when oneDNN keeps
 * the stored layout), another choice is counted in g_stepped and still
 * checked, the wanted one in g_ran. */
static const char *g_want;
static int g_onednn_ref; /* calls declined because oneDNN chose a ref: kernel */
static bool g_may_step_aside;
static int g_ran, g_stepped;

/* The largest |q| of a precision=int8 weight: 7 bits where oneDNN's u8 x s8
 * pairs saturate (no VNNI in its effective ISA). */
static double int8_wmax(void) {
#ifdef MOPT_HAVE_ONEDNN
    return onednn_int8_exact() ? 127 : 63;
#else
    return 63;
#endif
}

static float frand(void) { return (float)(rnd_unit() * 2.0 - 1.0); }

static float *rand_buf(int64_t n) {
    float *p = mopt_aligned_alloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        p[i] = frand();
    return p;
}

/* The reference run of the op under test, counted: a fast impl that calls
 * it by hand (instead of computing or declining) is noticed. */
static const op_def *g_real;
static int g_ref_calls;
static mopt_status counting_ref(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    g_ref_calls++;
    return ops_run_reference(g_real, ctx, in, n_in, out, n_out);
}

typedef struct node_case {
    ir_graph *g;
    ir_node *n;
    op_def def; /* copy of the real op_def, run = counting_ref */
} node_case;

static void nc_init_domain(node_case *c, const char *op, const char *domain, int n_in) {
    c->g = ir_graph_create();
    ir_graph_set_opset(c->g, "", 17);
    if (domain[0]) ir_graph_set_opset(c->g, domain, 1);
    c->n = ir_graph_add_node(c->g, op, domain, "node", n_in, 1);
    g_real = ops_find(op, domain);
    assert_non_null(g_real);
    c->def = *g_real;
    c->def.run = counting_ref;
    c->n->op = &c->def;
}

static void nc_init(node_case *c, const char *op, int n_in) { nc_init_domain(c, op, "", n_in); }

/* The node's op_ctx with its params parsed (op_view_init; they live in v). */
static op_ctx node_ctx(const node_case *c, op_view *v, bool runtime, int threads) {
    op_view_src src = {.graph = c->g,
                       .runtime = runtime,
                       .precision = g_prec,
                       .opt_level = g_opt_level,
                       .threads = threads};
    mopt_status st = op_view_init(v, &src, c->n, NULL);
    if (st) print_message("op_view_init: %s\n", mopt_error_message());
    assert_int_equal(st, MOPT_OK);
    return v->ctx;
}

static void tensor(op_tensor *t, int32_t rank, const int64_t *dims) {
    memset(t, 0, sizeof *t);
    t->dtype = MOPT_DTYPE_F32;
    ir_shape_set(&t->shape, rank, dims);
    t->data = rand_buf(ir_shape_numel(&t->shape));
}

/* Runs impl and the reference on the same inputs and compares with the
 * bound tol[i] per output element (computed by the caller's bound()).
 * const_mask: inputs given to prepare as constants (weights).
 * sym_mask: inputs whose dims are symbolic at load time. */
typedef void (*bound_fn)(const op_tensor *in, int n_in, const ir_shape *y, double *tol);

/* Whether c is a depthwise Conv/FusedConv (W [group, 1, k...])
 * and bf16 convolutions run on AMX here: its bf16 variants then step aside
 * for the f32 ones (conv_onednn.c: oneDNN's f32 depthwise kernel is the
 * faster one). */
static bool depthwise_f32(const node_case *c, const op_tensor *in, int n_in) {
    if (n_in < 2 || !ops_conv_bf16_amx() ||
        (strcmp(c->n->op_type, "Conv") && strcmp(c->n->op_type, "FusedConv")))
        return false;
    const ir_shape *w = &in[1].shape;
    int64_t group = ir_node_attr_int(c->n, "group", 1);
    return group > 1 && w->rank >= 3 && w->dims[1] == 1 && w->dims[0] == group;
}

/* The f32 twin of a bf16 variant's name ("onednn-bf16-packed" ->
 * "onednn-packed"), else the name. */
static const char *f32_twin(const char *want) {
    if (!want || strncmp(want, "onednn-bf16", 11) != 0) return want;
    return want[11] ? "onednn-packed" : "onednn";
}

static void check_impl(node_case *c, const op_impl *impl, op_tensor *in, int n_in,
                       unsigned const_mask, unsigned sym_mask, bound_fn bound, int threads,
                       bool expect_decline) {
    static op_view view;
    op_ctx ctx = node_ctx(c, &view, true, threads);
    op_tensor out, ref_out;
    memset(&out, 0, sizeof out);
    assert_int_equal(g_real->infer(&ctx, in, n_in, &out, 1), MOPT_OK);
    int64_t n = ir_shape_numel(&out.shape);
    ref_out = out;
    out.data = mopt_aligned_alloc((size_t)(n ? n : 1) * sizeof(float));
    ref_out.data = mopt_aligned_alloc((size_t)(n ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        ((float *)out.data)[i] = NAN; /* every element must be written */
    assert_int_equal(ops_run_reference(g_real, &ctx, in, n_in, &ref_out, 1), MOPT_OK);

    /* load time: shapes may be symbolic, data only for constants */
    op_tensor lin[8];
    op_tensor lout = out;
    lout.data = NULL;
    for (int k = 0; k < n_in; k++) {
        lin[k] = in[k];
        if (!(const_mask & (1u << k))) lin[k].data = NULL;
        if (sym_mask & (1u << k))
            for (int32_t d = 0; d < lin[k].shape.rank; d++)
                lin[k].shape.syms[d] = ir_graph_symbol(c->g, d == 0 ? "s0" : "s1");
    }
    op_ctx lctx = ctx;
    lctx.runtime = false;
    lctx.threads = 1;
    bool supported = impl->supports(&lctx, lin, n_in, &lout, 1);
    void *state = NULL;
    mopt_status pst = MOPT_OK;
    if (supported && impl->prepare) pst = impl->prepare(&lctx, lin, n_in, &lout, 1, &state);
    assert_true(supported);
    if (impl->prepare) {
        if (pst) {
            char b0[IR_SHAPE_STR_CAP], b1[IR_SHAPE_STR_CAP];
            print_message("%s: prepare failed (%d) for %s x %s: %s\n", impl->name, (int)pst,
                          ir_shape_str(&lin[0].shape, c->g, b0, sizeof b0),
                          ir_shape_str(&lin[1].shape, c->g, b1, sizeof b1), mopt_error_message());
        }
        assert_int_equal(pst, MOPT_OK);
    }
    const char *variant = impl->variant ? impl->variant(state) : impl->name;
    /* "<variant>+gemv-<tier>": the variant, keeping GEMV panels for batch 1..8 too */
    size_t vlen = strcspn(variant, "+");
    const char *wanted = depthwise_f32(c, lin, n_in) ? f32_twin(g_want) : g_want;
    if (wanted && (strlen(wanted) != vlen || strncmp(variant, wanted, vlen) != 0)) {
        if (!g_may_step_aside) print_message("%s chose %s, not %s\n", impl->name, variant, wanted);
        assert_true(g_may_step_aside);
        g_stepped++;
    } else {
        g_ran++;
    }
    void *scratch = NULL;
    ctx.state = state;
    ctx.scratch = &scratch;
    double *tol = mopt_malloc((size_t)(n ? n : 1) * sizeof(double));
    bound(in, n_in, &out.shape, tol);
    for (int rep = 0; rep < 2; rep++) { /* the second run hits the primitive cache */
        g_ref_calls = 0;
        mopt_status st = impl->run(&ctx, in, n_in, &out, 1);
        assert_int_equal(g_ref_calls, 0); /* never the reference by hand */
        bool declined = st == MOPT_ERR_UNSUPPORTED;
        if (declined && !expect_decline &&
            strstr(mopt_error_message(), "reference implementation")) {
            /* oneDNN chose its slow reference kernel: declined, never silent */
            print_message("%s (%s): %s\n", impl->name, variant, mopt_error_message());
            g_onednn_ref++;
            declined = expect_decline = false;
            mopt_clear_error();
            st = ops_run_reference(g_real, &ctx, in, n_in, &out, 1);
        }
        if (declined) { /* what the executor does then */
            mopt_clear_error();
            st = ops_run_reference(g_real, &ctx, in, n_in, &out, 1);
        }
        if (st) print_message("run failed: %s\n", mopt_error_message());
        assert_int_equal(st, MOPT_OK);
        if (declined != expect_decline)
            print_message("%s (%s) %s the call\n", impl->name, variant,
                          declined ? "declined" : "did not decline");
        assert_int_equal(declined, expect_decline);
        for (int64_t i = 0; i < n; i++) {
            double got = ((float *)out.data)[i], want = ((float *)ref_out.data)[i];
            if (isnan(want) ? !isnan(got)
                            : !(fabs(got - want) <= tol[i])) { /* NaN where the reference's */
                print_message("%s: element %lld of %lld is %.9g, reference %.9g (tol %.3g)\n",
                              impl->name, (long long)i, (long long)n, got, want, tol[i]);
                fail();
            }
        }
    }
    if (impl->release_scratch && scratch) impl->release_scratch(scratch);
    if (impl->release && state) impl->release(state);
    mopt_free(tol);
    mopt_aligned_free(out.data);
    mopt_aligned_free(ref_out.data);
}

static void free_inputs(op_tensor *in, int n_in) {
    for (int k = 0; k < n_in; k++)
        if (in[k].dtype != MOPT_DTYPE_UNDEFINED) mopt_aligned_free(in[k].data);
}

static double gamma_k(int64_t K) {
    double u = ldexp(1.0, -24);
    return (double)K * u / (1.0 - (double)K * u);
}

/* Bound on |impl - ref| for a K-term dot product with sum |a b| = S. */
static double tol_of(int64_t K, double S) {
    double rel = 2 * gamma_k(K);
    if (g_prec == OP_PREC_BF16) rel += ldexp(1.0, -7) + ldexp(1.0, -16);
    return rel * S + 1e-6;
}

/* ---- MatMul ------------------------------------------------------------- */

/* numpy-style bound: 2 gamma_K sum_k |a||b| for each output element. */
static void matmul_bound(const op_tensor *in, int n_in, const ir_shape *y, double *tol) {
    const ir_shape *a = &in[0].shape, *b = &in[1].shape;
    int64_t K = a->dims[a->rank - 1];
    int64_t M = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
    int64_t N = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    /* batch broadcasting: index each output batch back to A's and B's */
    bool int8 = g_prec == OP_PREC_INT8;
    int32_t rb = y->rank - (a->rank >= 2) - (b->rank >= 2);
    int64_t nb = 1;
    for (int32_t i = 0; i < rb; i++)
        nb *= y->dims[i];
    for (int64_t t = 0; t < nb; t++) {
        int64_t oa = 0, ob = 0, rem = t, sa = 1, sb = 1;
        for (int32_t d = rb - 1; d >= 0; d--) {
            int64_t idx = rem % y->dims[d];
            rem /= y->dims[d];
            int32_t da = d - (rb - (a->rank - 2)), db = d - (rb - (b->rank - 2));
            if (da >= 0) {
                oa += (a->dims[da] == 1 ? 0 : idx) * sa;
                sa *= a->dims[da];
            }
            if (db >= 0) {
                ob += (b->dims[db] == 1 ? 0 : idx) * sb;
                sb *= b->dims[db];
            }
        }
        const float *pa = (const float *)in[0].data + oa * M * K;
        const float *pb = (const float *)in[1].data + ob * K * N;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = 0, sbj = 0, q = 0, lo = 0, hi = 0;
                for (int64_t k = 0; k < K; k++) {
                    lo = fmin(lo, pa[i * K + k]);
                    hi = fmax(hi, pa[i * K + k]);
                }
                double qa = (hi - lo) / 255; /* the int8 scale of this row of A */
                for (int64_t k = 0; k < K; k++)
                    sbj = fmax(sbj, fabs(pb[b->rank == 1 ? k : k * N + j]) / int8_wmax());
                for (int64_t k = 0; k < K; k++) {
                    double av = fabs(pa[i * K + k]), bv = fabs(pb[b->rank == 1 ? k : k * N + j]);
                    s += av * bv;
                    q += av * sbj / 2 + bv * qa / 2 + qa * sbj / 4;
                }
                tol[t * M * N + i * N + j] = tol_of(K, s) + (int8 ? q : 0);
            }
    }
}

typedef struct mm_shape {
    int32_t ra;
    int64_t a[5];
    int32_t rb;
    int64_t b[5];
} mm_shape;

static const mm_shape k_mm_shapes[] = {
    {2, {1, 1}, 2, {1, 1}},
    {2, {3, 17}, 2, {17, 129}},
    {2, {129, 3}, 2, {3, 17}},
    {2, {17, 129}, 2, {129, 1}},
    {2, {1, 384}, 2, {384, 33}},
    {3, {2, 17, 33}, 2, {33, 3}},        /* B broadcast over the batch */
    {2, {5, 17}, 3, {3, 17, 4}},         /* A broadcast over the batch */
    {4, {2, 1, 3, 17}, 3, {4, 17, 5}},   /* both broadcast */
    {4, {2, 3, 7, 9}, 4, {2, 3, 9, 11}}, /* matching batches */
    {1, {17}, 2, {17, 3}},               /* 1-D A */
    {3, {2, 3, 17}, 1, {17}},            /* 1-D B */
    {1, {129}, 1, {129}},                /* dot product */
    {3, {4, 1, 8}, 3, {1, 8, 129}},
};

/* int8: only constant 2-D B (the int8 impl refuses the rest) */
static void run_matmul_cases(const op_impl *impl) {
    bool int8 = g_prec == OP_PREC_INT8;
    for (size_t s = 0; s < sizeof k_mm_shapes / sizeof k_mm_shapes[0]; s++) {
        const mm_shape *sh = &k_mm_shapes[s];
        if (int8 && sh->rb != 2) continue;
        for (int variant = 0; variant < 3; variant++) {
            if (int8 && variant == 1) continue;
            /* 0: constant B; 1: B computed at run time; 2: constant B, symbolic A */
            node_case c;
            nc_init(&c, "MatMul", 2);
            op_tensor in[2];
            tensor(&in[0], sh->ra, sh->a);
            tensor(&in[1], sh->rb, sh->b);
            check_impl(&c, impl, in, 2, variant == 1 ? 0u : 2u, variant == 2 ? 1u : 0u,
                       matmul_bound, 1 + (int)(s % 2), false);
            free_inputs(in, 2);
            ir_graph_destroy(c.g);
        }
    }
    if (int8) return;
    /* an empty problem is declined (the reference runs it) */
    node_case c;
    nc_init(&c, "MatMul", 2);
    op_tensor in[2];
    tensor(&in[0], 2, (int64_t[]){0, 5});
    tensor(&in[1], 2, (int64_t[]){5, 3});
    check_impl(&c, impl, in, 2, 2u, 0u, matmul_bound, 1, true);
    free_inputs(in, 2);
    ir_graph_destroy(c.g);
}

/* ---- Gemm --------------------------------------------------------------- */

static bool g_ta, g_tb;
static float g_alpha, g_beta;

static void gemm_bound(const op_tensor *in, int n_in, const ir_shape *y, double *tol) {
    int64_t M = y->dims[0], N = y->dims[1];
    int64_t K = in[0].shape.dims[g_ta ? 0 : 1];
    int64_t lda = in[0].shape.dims[1], ldb = in[1].shape.dims[1];
    const float *A = in[0].data, *B = in[1].data;
    bool int8 = g_prec == OP_PREC_INT8;
    double sa = 0;
    for (int64_t i = 0; i < M * K; i++)
        sa = fmax(sa, fabs(A[i]) / 127);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0, sbj = 0, q = 0;
            for (int64_t k = 0; k < K; k++)
                sbj = fmax(sbj, fabs(g_tb ? B[j * ldb + k] : B[k * ldb + j]) / int8_wmax());
            for (int64_t k = 0; k < K; k++) {
                double a = fabs(g_ta ? A[k * lda + i] : A[i * lda + k]);
                double b = fabs(g_tb ? B[j * ldb + k] : B[k * ldb + j]);
                s += a * b;
                q += a * sbj / 2 + b * sa / 2 + sa * sbj / 4;
            }
            tol[i * N + j] =
                tol_of(K + 2, fabs(g_alpha) * s + fabs(g_beta)) + (int8 ? fabs(g_alpha) * q : 0);
        }
}

static void run_gemm_cases(const op_impl *impl) {
    static const int64_t mkn[][3] = {{1, 1, 1},    {3, 17, 129}, {129, 3, 17},
                                     {17, 129, 3}, {1, 384, 96}, {33, 64, 1}};
    int count = 0;
    for (size_t s = 0; s < sizeof mkn / sizeof mkn[0]; s++)
        for (int t = 0; t < 4; t++)
            for (int cshape = 0; cshape < 6; cshape++) {
                int64_t M = mkn[s][0], K = mkn[s][1], N = mkn[s][2];
                g_ta = t & 1;
                g_tb = (t >> 1) & 1;
                /* int8: no transA; C only as a bias [N] / [1, N] with beta 1 */
                bool int8 = g_prec == OP_PREC_INT8;
                if (int8 && (g_ta || cshape >= 3)) continue;
                g_alpha = (count % 3 == 0) ? 1.f : 0.5f;
                g_beta = (count % 4 == 1 && !int8) ? 2.f : 1.f;
                count++;
                node_case c;
                nc_init(&c, "Gemm", cshape ? 3 : 2);
                attr_int(c.n, "transA", g_ta);
                attr_int(c.n, "transB", g_tb);
                attr_float(c.n, "alpha", g_alpha);
                attr_float(c.n, "beta", g_beta);
                op_tensor in[3];
                int64_t ad[2] = {g_ta ? K : M, g_ta ? M : K}, bd[2] = {g_tb ? N : K, g_tb ? K : N};
                tensor(&in[0], 2, ad);
                tensor(&in[1], 2, bd);
                /* C: none, [N], [1, N], [M, 1], [M, N], scalar */
                if (cshape == 1) tensor(&in[2], 1, (int64_t[]){N});
                if (cshape == 2) tensor(&in[2], 2, (int64_t[]){1, N});
                if (cshape == 3) tensor(&in[2], 2, (int64_t[]){M, 1});
                if (cshape == 4) tensor(&in[2], 2, (int64_t[]){M, N});
                if (cshape == 5) tensor(&in[2], 0, NULL);
                if (!cshape) g_beta = 0;
                unsigned consts = (count % 2) ? 6u : 4u;
                if (g_prec == OP_PREC_INT8) consts |= 2u;
                check_impl(&c, impl, in, cshape ? 3 : 2, consts, (count % 5 == 0) ? 1u : 0u,
                           gemm_bound, 1 + count % 2, false);
                free_inputs(in, cshape ? 3 : 2);
                ir_graph_destroy(c.g);
            }
}

/* ---- Conv --------------------------------------------------------------- */

static int64_t g_conv_red; /* products per output: (C / group) * prod(k) */

static void conv_bound(const op_tensor *in, int n_in, const ir_shape *y, double *tol) {
    /* inputs are in [-1, 1]: sum |x w| <= products per output */
    int64_t n = ir_shape_numel(y);
    for (int64_t i = 0; i < n; i++)
        tol[i] = tol_of(g_conv_red + 1, (double)(g_conv_red + 1));
}

/* The window attributes Conv, ConvTranspose and the pools share (S spatial
 * axes); auto_pad NULL: explicit pads. */
static void attr_window(ir_node *n, int32_t S, const int64_t *strides, const int64_t *dilations,
                        const int64_t *pads, const char *auto_pad) {
    attr_ints(n, "strides", S, strides);
    attr_ints(n, "dilations", S, dilations);
    if (auto_pad)
        attr_str(n, "auto_pad", auto_pad);
    else
        attr_ints(n, "pads", 2 * S, pads);
}

/* One Conv or ConvTranspose case; the output_* fields are ConvTranspose's. */
typedef struct conv_case {
    int32_t rank;
    int64_t x[5], w[5];
    int64_t group;
    int64_t strides[3], dilations[3], pads[6];
    const char *auto_pad; /* NULL: explicit pads */
    bool bias;
    int64_t output_padding[3], output_shape[3];
    bool has_output_shape;
} conv_case;

static const conv_case k_conv_cases[] = {
    {4, {2, 3, 17, 17}, {5, 3, 3, 3}, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, true},
    {4, {1, 6, 13, 11}, {9, 2, 3, 3}, 3, {1, 1}, {2, 2}, {0, 1, 2, 0}, NULL, true},  /* grouped */
    {4, {2, 8, 15, 15}, {8, 1, 3, 3}, 8, {2, 2}, {1, 1}, {0}, "SAME_UPPER", true},   /* dw */
    {4, {1, 32, 9, 9}, {32, 1, 5, 5}, 32, {1, 1}, {1, 1}, {0}, "SAME_LOWER", false}, /* dw */
    {4, {3, 16, 7, 7}, {32, 16, 1, 1}, 1, {1, 1}, {1, 1}, {0}, NULL, true},          /* 1x1 */
    /* 1x1 on a 1x1 image: oneDNN impls run it as a GEMV, the vectorized epilogue */
    {4, {2, 19, 1, 1}, {37, 19, 1, 1}, 1, {1, 1}, {1, 1}, {0}, NULL, true},
    {4, {1, 40, 1, 1}, {131, 40, 1, 1}, 1, {1, 1}, {1, 1}, {0}, NULL, true},
    {4, {1, 16, 12, 12}, {24, 16, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, false},
    {4, {1, 4, 10, 9}, {4, 4, 2, 3}, 1, {3, 2}, {1, 2}, {0}, "VALID", true},
    {3, {2, 4, 29}, {6, 4, 5}, 1, {1}, {3}, {2, 2}, NULL, true}, /* 1-D */
    {3, {1, 6, 17}, {6, 1, 3}, 6, {2}, {1}, {1, 0}, NULL, true}, /* 1-D dw */
    /* 3-D */
    {5, {1, 2, 5, 6, 7}, {3, 2, 2, 3, 3}, 1, {1, 1, 2}, {1, 1, 1}, {0, 1, 1, 0, 1, 1}, NULL, true},
};

/* Checks each case against the reference, twice: variant 1 with a symbolic
 * X at load time (layouts guessed) and 2 threads. Products per output: C /
 * group (Conv: W's dim 1) times the kernel's size; inputs in [-1, 1]. */
static void run_conv_table(const op_impl *impl, const conv_case *cases, size_t n_cases,
                           bool transpose) {
    for (size_t s = 0; s < n_cases; s++) {
        const conv_case *cc = &cases[s];
        int32_t S = cc->rank - 2;
        int n_in = cc->bias ? 3 : 2;
        for (int variant = 0; variant < 2; variant++) {
            node_case c;
            nc_init(&c, transpose ? "ConvTranspose" : "Conv", n_in);
            attr_int(c.n, "group", cc->group);
            attr_window(c.n, S, cc->strides, cc->dilations, cc->pads, cc->auto_pad);
            if (transpose) {
                attr_ints(c.n, "output_padding", S, cc->output_padding);
                if (cc->has_output_shape) attr_ints(c.n, "output_shape", S, cc->output_shape);
            }
            op_tensor in[3];
            tensor(&in[0], cc->rank, cc->x);
            tensor(&in[1], cc->rank, cc->w);
            int64_t bias_c = transpose ? cc->w[1] * cc->group : cc->w[0];
            if (cc->bias) tensor(&in[2], 1, &bias_c);
            g_conv_red = transpose ? cc->x[1] / cc->group : cc->w[1];
            for (int32_t i = 0; i < S; i++)
                g_conv_red *= cc->w[2 + i];
            check_impl(&c, impl, in, n_in, 6u, variant ? 1u : 0u, conv_bound, 1 + variant, false);
            free_inputs(in, n_in);
            ir_graph_destroy(c.g);
        }
    }
}

static void run_conv_cases(const op_impl *impl) {
    run_conv_table(impl, k_conv_cases, sizeof k_conv_cases / sizeof k_conv_cases[0], false);
}

/* ---- mopt.FusedMatMul / mopt.FusedConv ---------------------------------- */

/* Bound for fused products: S = sum_k |a b| is computed by the reference
 * FusedMatMul itself on |A|, |B| (no epilogue); then the f32 (or bf16)
 * product bound on alpha S + |bias| + |residual|, times 1.5 (the largest
 * slope of the activations), plus oneDNN's activation error. */
static double *g_fused_s; /* S per output element, set by the caller */
static double *g_fused_q; /* int8: the quantization bound per element (see top) */
static double g_fused_alpha;
static void fused_bound(const op_tensor *in, int n_in, const ir_shape *y, double *tol) {
    int64_t n = ir_shape_numel(y);
    for (int64_t i = 0; i < n; i++)
        tol[i] = 1.5 * tol_of(g_conv_red + 2, fabs(g_fused_alpha) * g_fused_s[i] + 2) + 2e-5 +
                 (g_fused_q ? 1.5 * fabs(g_fused_alpha) * g_fused_q[i] : 0);
}

static const char *const k_act_names[] = {"",          "Relu",        "LeakyRelu", "Clip",
                                          "HardSwish", "HardSigmoid", "Sigmoid",   "Tanh",
                                          "Gelu",      "GeluTanh"};

static void run_fused_matmul_cases(const op_impl *impl) {
    static const mm_shape shapes[] = {
        {2, {17, 33}, 2, {33, 129}},
        {3, {2, 5, 64}, 2, {64, 48}},
        {4, {2, 3, 7, 16}, 4, {2, 3, 16, 9}},
        {3, {3, 1, 129}, 2, {129, 3}},
    };
    int count = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t a = 0; a < sizeof k_act_names / sizeof k_act_names[0]; a++, count++) {
            const mm_shape *sh = &shapes[s];
            bool ta = count % 3 == 1, tb = count % 2 == 1;
            bool int8 = g_prec == OP_PREC_INT8;
            if (int8 && (ta || sh->rb != 2)) continue;
            bool bias = count % 4 != 3, res = count % 3 != 2;
            g_fused_alpha = count % 5 == 0 ? 0.5 : 1.0;
            int64_t ad[5], bd[5];
            memcpy(ad, sh->a, sizeof ad);
            memcpy(bd, sh->b, sizeof bd);
            if (ta) ad[sh->ra - 2] = sh->a[sh->ra - 1], ad[sh->ra - 1] = sh->a[sh->ra - 2];
            if (tb) bd[sh->rb - 2] = sh->b[sh->rb - 1], bd[sh->rb - 1] = sh->b[sh->rb - 2];
            int64_t K = sh->a[sh->ra - 1], N = sh->b[sh->rb - 1], M = sh->a[sh->ra - 2];
            node_case c;
            nc_init_domain(&c, "FusedMatMul", "mopt", 4);
            attr_int(c.n, "transA", ta);
            attr_int(c.n, "transB", tb);
            attr_float(c.n, "alpha", (float)g_fused_alpha);
            attr_str(c.n, "activation", k_act_names[a]);
            if (strcmp(k_act_names[a], "Clip") == 0) {
                attr_float(c.n, "activation_alpha", -0.5f);
                attr_float(c.n, "activation_beta", 0.75f);
            }
            op_tensor in[4];
            memset(in, 0, sizeof in);
            tensor(&in[0], sh->ra, ad);
            tensor(&in[1], sh->rb, bd);
            if (bias) tensor(&in[2], 1, (int64_t[]){N});
            if (res) tensor(&in[3], 2, (int64_t[]){M, N}); /* broadcast over the batch */
            /* S = |A| @ |B| through a plain FusedMatMul */
            node_case cs;
            nc_init_domain(&cs, "FusedMatMul", "mopt", 2);
            attr_int(cs.n, "transA", ta);
            attr_int(cs.n, "transB", tb);
            op_tensor ain[2], sout;
            for (int k = 0; k < 2; k++) {
                ain[k] = in[k];
                int64_t n = ir_shape_numel(&in[k].shape);
                float *p = mopt_aligned_alloc((size_t)n * sizeof(float));
                for (int64_t i = 0; i < n; i++)
                    p[i] = fabsf(((float *)in[k].data)[i]);
                ain[k].data = p;
            }
            static op_view sview;
            op_ctx sctx = node_ctx(&cs, &sview, true, 1);
            memset(&sout, 0, sizeof sout);
            assert_int_equal(g_real->infer(&sctx, ain, 2, &sout, 1), MOPT_OK);
            int64_t ny = ir_shape_numel(&sout.shape);
            sout.data = mopt_aligned_alloc((size_t)ny * sizeof(float));
            assert_int_equal(ops_run_reference(g_real, &sctx, ain, 2, &sout, 1), MOPT_OK);
            g_fused_s = mopt_malloc((size_t)ny * sizeof(double));
            for (int64_t i = 0; i < ny; i++)
                g_fused_s[i] = ((float *)sout.data)[i];
            g_conv_red = K;
            g_fused_q = NULL;
            if (int8) { /* A dense [..., M, K], B [K, N] or [N, K] */
                g_fused_q = mopt_malloc((size_t)ny * sizeof(double));
                const float *A = in[0].data, *B = in[1].data;
                int64_t na = ir_shape_numel(&in[0].shape);
                double qa = 0;
                for (int64_t i = 0; i < na; i++)
                    qa = fmax(qa, fabs(A[i]) / 127);
                for (int64_t i = 0; i < ny; i++) {
                    int64_t j = i % N, row = i / N % (na / K);
                    double sb = 0, q = 0;
                    for (int64_t k = 0; k < K; k++)
                        sb = fmax(sb, fabs(tb ? B[j * K + k] : B[k * N + j]) / int8_wmax());
                    for (int64_t k = 0; k < K; k++)
                        q += fabs(A[row * K + k]) * sb / 2 +
                             fabs(tb ? B[j * K + k] : B[k * N + j]) * qa / 2 + qa * sb / 4;
                    g_fused_q[i] = q;
                }
            }
            mopt_aligned_free(sout.data);
            free_inputs(ain, 2);
            ir_graph_destroy(cs.g);
            g_real = ops_find("FusedMatMul", "mopt");
            check_impl(&c, impl, in, 4, 2u, count % 7 == 0 ? 1u : 0u, fused_bound, 1 + count % 2,
                       false);
            mopt_free(g_fused_s);
            mopt_free(g_fused_q);
            g_fused_q = NULL;
            free_inputs(in, 4);
            ir_graph_destroy(c.g);
        }
}

static void run_fused_conv_cases(const op_impl *impl) {
    int count = 0;
    for (size_t s = 0; s < sizeof k_conv_cases / sizeof k_conv_cases[0]; s++)
        for (size_t a = 0; a < sizeof k_act_names / sizeof k_act_names[0]; a += 3, count++) {
            const conv_case *cc = &k_conv_cases[s];
            int32_t S = cc->rank - 2;
            node_case c;
            nc_init_domain(&c, "FusedConv", "mopt", 4);
            attr_int(c.n, "group", cc->group);
            attr_ints(c.n, "strides", S, cc->strides);
            attr_ints(c.n, "dilations", S, cc->dilations);
            if (cc->auto_pad)
                attr_str(c.n, "auto_pad", cc->auto_pad);
            else
                attr_ints(c.n, "pads", 2 * S, cc->pads);
            attr_str(c.n, "activation", k_act_names[(a + s) % 10]);
            op_tensor in[4];
            memset(in, 0, sizeof in);
            tensor(&in[0], cc->rank, cc->x);
            tensor(&in[1], cc->rank, cc->w);
            if (cc->bias) tensor(&in[2], 1, (int64_t[]){cc->w[0]});
            /* residual of Y's shape: from the reference's own inference */
            static op_view iview;
            op_ctx ictx = node_ctx(&c, &iview, true, 1);
            op_tensor y;
            memset(&y, 0, sizeof y);
            assert_int_equal(g_real->infer(&ictx, in, 3, &y, 1), MOPT_OK);
            if (count % 2) tensor(&in[3], y.shape.rank, y.shape.dims);
            g_conv_red = cc->w[1];
            for (int32_t i = 0; i < S; i++)
                g_conv_red *= cc->w[2 + i];
            int64_t ny = ir_shape_numel(&y.shape);
            g_fused_s = mopt_malloc((size_t)ny * sizeof(double));
            for (int64_t i = 0; i < ny; i++)
                g_fused_s[i] = (double)g_conv_red; /* inputs in [-1, 1] */
            g_fused_alpha = 1;
            check_impl(&c, impl, in, 4, 6u, 0u, fused_bound, 1 + count % 2, false);
            mopt_free(g_fused_s);
            free_inputs(in, 4);
            ir_graph_destroy(c.g);
        }
}

/* ---- ConvTranspose ------------------------------------------------------ */

/* odd shapes: PP-OCR's 2x2 stride-2 upsampler, groups, asymmetric pads,
 * output_padding, output_shape, dilations, auto_pad, 1-D and 3-D, batch > 1 */
static const conv_case k_ct_cases[] = {
    {4, {1, 16, 20, 20}, {16, 4, 2, 2}, 1, {2, 2}, {1, 1}, {0}, NULL, true},
    {4, {2, 6, 7, 9}, {6, 3, 3, 3}, 2, {2, 1}, {1, 2}, {1, 0, 0, 2}, NULL, true, {1, 0}},
    {3, {3, 4, 11}, {4, 5, 4}, 1, {3}, {1}, {2, 1}, NULL, true, {2}},
    {5,
     {1, 2, 3, 4, 5},
     {2, 3, 2, 3, 2},
     1,
     {1, 2, 2},
     {1, 1, 1},
     {0, 1, 0, 0, 0, 1},
     NULL,
     false,
     {0, 1, 0}},
    {4, {1, 3, 5, 5}, {3, 2, 3, 3}, 1, {2, 2}, {1, 1}, {0}, "SAME_UPPER", false},
    {4, {2, 4, 5, 6}, {4, 2, 3, 3}, 2, {2, 2}, {1, 1}, {0}, NULL, true, {0}, {12, 13}, true},
    {4, {1, 8, 6, 6}, {8, 1, 4, 4}, 8, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, true}, /* depthwise */
};

static void run_ct_cases(const op_impl *impl) {
    run_conv_table(impl, k_ct_cases, sizeof k_ct_cases / sizeof k_ct_cases[0], true);
}

/* ---- MaxPool, AveragePool ------------------------------------------------ */

typedef struct pool_case {
    int32_t rank;
    int64_t x[5], k[3], strides[3], dilations[3], pads[6];
    bool ceil_mode, include_pad;
    const char *auto_pad;
} pool_case;

/* odd shapes: asymmetric pads, ceil_mode (with and without an overhang),
 * dilations, SAME_UPPER, 1-D and 3-D, batch > 1, YOLO's SPPF 5x5 */
static const pool_case k_pool_cases[] = {
    {4, {1, 8, 20, 20}, {5, 5}, {1, 1}, {1, 1}, {2, 2, 2, 2}, false, false, NULL},
    {4, {2, 3, 7, 9}, {3, 2}, {2, 2}, {1, 1}, {1, 0, 0, 1}, true, false, NULL},
    {4, {2, 3, 8, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, true, NULL},
    {4, {1, 4, 9, 11}, {3, 2}, {3, 2}, {1, 1}, {0}, false, false, NULL},
    {4, {1, 2, 10, 9}, {2, 3}, {1, 2}, {2, 1}, {1, 1, 0, 2}, false, true, NULL},
    {3, {3, 5, 17}, {4}, {3}, {1}, {2, 1}, true, false, NULL},
    {5, {1, 2, 5, 6, 7}, {2, 3, 2}, {2, 1, 2}, {1, 1, 1}, {0, 1, 1, 1, 1, 0}, false, true, NULL},
    {4, {1, 3, 7, 7}, {3, 3}, {2, 2}, {1, 1}, {0}, false, true, "SAME_UPPER"},
};

static bool g_pool_avg;
static void pool_bound(const op_tensor *in, int n_in, const ir_shape *y, double *tol) {
    /* max: exact; average: at most 27 terms of |x| <= 1, then a division */
    int64_t n = ir_shape_numel(y);
    for (int64_t i = 0; i < n; i++)
        tol[i] = g_pool_avg ? 2e-6 : 0;
}

static void run_pool_cases(const op_impl *impl, bool avg) {
    g_pool_avg = avg;
    for (size_t s = 0; s < sizeof k_pool_cases / sizeof k_pool_cases[0]; s++) {
        const pool_case *pc = &k_pool_cases[s];
        int32_t S = pc->rank - 2;
        for (int variant = 0; variant < 2; variant++) {
            node_case c;
            nc_init(&c, avg ? "AveragePool" : "MaxPool", 1);
            attr_ints(c.n, "kernel_shape", S, pc->k);
            attr_window(c.n, S, pc->strides, pc->dilations, pc->pads, pc->auto_pad);
            attr_int(c.n, "ceil_mode", pc->ceil_mode);
            if (avg) attr_int(c.n, "count_include_pad", pc->include_pad);
            op_tensor in[1];
            tensor(&in[0], pc->rank, pc->x);
            /* an AveragePool with count_include_pad whose ceil_mode window
             * runs past the declared pads is declined (the reference runs) */
            bool decline = avg && pc->include_pad && pc->ceil_mode;
            check_impl(&c, impl, in, 1, 0u, variant ? 1u : 0u, pool_bound, 1 + variant, decline);
            free_inputs(in, 1);
            ir_graph_destroy(c.g);
        }
    }
}
static void run_maxpool_cases(const op_impl *impl) { run_pool_cases(impl, false); }
static void run_avgpool_cases(const op_impl *impl) { run_pool_cases(impl, true); }

/* ---- impl tests --------------------------------------------------------- */

/* The impl of `op` (domain `domain`) named `name`. */
static const op_impl *find_impl_domain(const char *op, const char *domain, const char *name) {
    const op_def *d = ops_find(op, domain);
    for (int k = 0; d && d->impls && d->impls[k]; k++)
        if (strcmp(d->impls[k]->name, name) == 0) return d->impls[k];
    return NULL;
}

static const op_impl *find_impl(const char *op, const char *name) {
    return find_impl_domain(op, "", name);
}

#ifdef MOPT_HAVE_ONEDNN
/* Runs `cases` on the oneDNN impl of op with precision prec and opt_level
 * level, wanting variant want from its prepare. */
/* The variant wanted for `want` here: oneDNN 2.6 runs bf16 only with its
 * AVX-512 kernels, so under a lower effective ISA (e.g.
 * ONEDNN_MAX_CPU_ISA=AVX2) precision=bf16 is not offered
 * (onednn_glue_variants) and the f32 namesake must take the node
 * ("onednn-bf16-packed" -> "onednn-packed"). */
static const char *variant_here(const char *want) {
    if (!want || onednn_isa_avx512()) return want;
    if (strcmp(want, "onednn-bf16") == 0) return "onednn";
    if (strcmp(want, "onednn-bf16-packed") == 0) return "onednn-packed";
    return want;
}

static void run_variant(void (*cases)(const op_impl *), const char *op, const char *domain,
                        op_precision prec, int level, const char *want) {
    const op_impl *impl = find_impl_domain(op, domain, "onednn");
    assert_non_null(impl);
    g_prec = prec;
    g_opt_level = level;
    g_want = variant_here(want);
    cases(impl);
    g_prec = OP_PREC_FP32;
    g_opt_level = 0;
    g_want = NULL;
}

/* A test that runs `cases` on the oneDNN impl of op (default domain) with
 * precision prec at opt_level 0, wanting variant want. */
#define ONEDNN_CASES_TEST(name, cases, op, prec, want)                                             \
    static void name(void **st) {                                                                  \
        (void)st;                                                                                  \
        run_variant(cases, op, "", prec, 0, want);                                                 \
    }

static void onednn_matmul(void **st) {
    (void)st;
    assert_true(onednn_available());
    run_variant(run_matmul_cases, "MatMul", "", OP_PREC_FP32, 0, "onednn");
}
ONEDNN_CASES_TEST(onednn_gemm, run_gemm_cases, "Gemm", OP_PREC_FP32, "onednn")
ONEDNN_CASES_TEST(onednn_conv, run_conv_cases, "Conv", OP_PREC_FP32, "onednn")

/* precision=bf16 */
ONEDNN_CASES_TEST(onednn_bf16_matmul, run_matmul_cases, "MatMul", OP_PREC_BF16, "onednn-bf16")
ONEDNN_CASES_TEST(onednn_bf16_gemm, run_gemm_cases, "Gemm", OP_PREC_BF16, "onednn-bf16")
ONEDNN_CASES_TEST(onednn_bf16_conv, run_conv_cases, "Conv", OP_PREC_BF16, "onednn-bf16")

/* precision=int8 */
ONEDNN_CASES_TEST(onednn_int8_matmul, run_matmul_cases, "MatMul", OP_PREC_INT8, "onednn-int8")
ONEDNN_CASES_TEST(onednn_int8_gemm, run_gemm_cases, "Gemm", OP_PREC_INT8, "onednn-int8")

/* opt_level 3: the "-packed" variants (weights reordered into oneDNN's layout
 * at build) pass the same cases as the plain ones, where they take the node: a
 * constant B / W that oneDNN really wants in another layout. */
static void run_packed(void (*cases)(const op_impl *), const char *op, const char *domain,
                       op_precision prec, bool must_run) {
    const char *want = variant_here(prec == OP_PREC_BF16 ? "onednn-bf16-packed" : "onednn-packed");
    g_may_step_aside = true;
    g_ran = g_stepped = 0;
    run_variant(cases, op, domain, prec, 3, want);
    print_message("%s %s: %d cases run, %d stepped aside\n", op, want, g_ran, g_stepped);
    if (must_run) assert_true(g_ran > 0);
    g_may_step_aside = false;
}

static void onednn_packed(void **st) {
    (void)st;
    /* oneDNN's matmul wants blocked weights with its AVX-512 kernels (brgemm);
     * elsewhere its preferred layout may be the stored one */
    bool mm = onednn_isa_avx512();
    for (int p = 0; p < 2; p++) {
        op_precision prec = p ? OP_PREC_BF16 : OP_PREC_FP32;
        run_packed(run_matmul_cases, "MatMul", "", prec, mm);
        run_packed(run_gemm_cases, "Gemm", "", prec, mm);
        run_packed(run_conv_cases, "Conv", "", prec, true);
        run_packed(run_fused_matmul_cases, "FusedMatMul", "mopt", prec, mm);
        run_packed(run_fused_conv_cases, "FusedConv", "mopt", prec, true);
    }
}

static void onednn_conv_transpose(void **st) {
    (void)st;
    run_variant(run_ct_cases, "ConvTranspose", "", OP_PREC_FP32, 0, "onednn");
    run_variant(run_ct_cases, "ConvTranspose", "", OP_PREC_BF16, 0, "onednn-bf16");
    for (int p = 0; p < 2; p++)
        run_packed(run_ct_cases, "ConvTranspose", "", p ? OP_PREC_BF16 : OP_PREC_FP32, false);
}

static void onednn_pools(void **st) {
    (void)st;
    run_variant(run_maxpool_cases, "MaxPool", "", OP_PREC_FP32, 0, NULL);
    run_variant(run_avgpool_cases, "AveragePool", "", OP_PREC_FP32, 3, NULL);
}

/* What the model builder does (dispatch.c) for a node at opt_level `level`:
 * the first impl of the op's list that supports it and prepares; *variant:
 * what it chose, *kept: whether it keeps weights of its own. */
static const op_impl *first_impl(node_case *c, const op_tensor *in, int n_in, unsigned const_mask,
                                 int level, const char **variant, bool *kept) {
    op_tensor lin[8], lout;
    for (int k = 0; k < n_in; k++) {
        lin[k] = in[k];
        if (!(const_mask & (1u << k))) lin[k].data = NULL;
    }
    g_opt_level = level;
    static op_view view;
    op_ctx lctx = node_ctx(c, &view, false, 1);
    g_opt_level = 0;
    memset(&lout, 0, sizeof lout);
    assert_int_equal(g_real->infer(&lctx, lin, n_in, &lout, 1), MOPT_OK);
    const op_impl *const *impls = c->n->op->impls;
    for (int k = 0; impls && impls[k]; k++) {
        if (!impls[k]->supports(&lctx, lin, n_in, &lout, 1)) continue;
        void *state = NULL;
        if (impls[k]->prepare) {
            mopt_status st = impls[k]->prepare(&lctx, lin, n_in, &lout, 1, &state);
            if (st == MOPT_ERR_UNSUPPORTED) continue;
            assert_int_equal(st, MOPT_OK);
        }
        *variant = impls[k]->variant ? impls[k]->variant(state) : impls[k]->name;
        *kept = strcmp(impls[k]->backend, "onednn") == 0 && state &&
                ((const onednn_glue_state *)state)->w != NULL;
        if (state && impls[k]->release) impls[k]->release(state);
        return impls[k];
    }
    return NULL;
}

/* opt_level 2 runs a MatMul and a Conv with constant weights on "onednn"
 * (weights read as stored: nothing kept), opt_level 3 on "onednn-packed"
 * (weights reordered at build); both match the reference. */
static void onednn_levels_named_apart(void **st) {
    (void)st;
    const char *names[2][2];
    bool kept[2][2];
    for (int op = 0; op < 2; op++)
        for (int li = 0; li < 2; li++) {
            int level = 2 + li;
            node_case c;
            op_tensor in[3];
            int n_in = op == 0 ? 2 : 3;
            if (op == 0) {
                nc_init(&c, "MatMul", 2);
                tensor(&in[0], 2, (int64_t[]){24, 256});
                tensor(&in[1], 2, (int64_t[]){256, 128});
            } else {
                nc_init(&c, "Conv", 3);
                attr_ints(c.n, "pads", 4, (int64_t[]){1, 1, 1, 1});
                tensor(&in[0], 4, (int64_t[]){1, 64, 14, 14});
                tensor(&in[1], 4, (int64_t[]){64, 64, 3, 3});
                tensor(&in[2], 1, (int64_t[]){64});
                g_conv_red = 64 * 3 * 3;
            }
            unsigned consts = op == 0 ? 2u : 6u;
            const op_impl *impl =
                first_impl(&c, in, n_in, consts, level, &names[op][li], &kept[op][li]);
            assert_non_null(impl);
            g_opt_level = level;
            g_want = names[op][li];
            check_impl(&c, impl, in, n_in, consts, 0u, op == 0 ? matmul_bound : conv_bound, 1,
                       false);
            g_opt_level = 0;
            g_want = NULL;
            free_inputs(in, n_in);
            ir_graph_destroy(c.g);
        }
    for (int op = 0; op < 2; op++) {
        assert_string_equal(names[op][0], "onednn");
        assert_false(kept[op][0]); /* f32 weights used in place: no copy */
    }
    /* a 3x3 stride-1 conv on 64 channels: oneDNN's Winograd kernels where
     * it has them (AVX-512; on Intel from 64 -> 64, onednn.c
     * WINO_INTEL_MIN_HARMONIC), else its direct one with packed weights */
    assert_string_equal(names[1][1], onednn_isa_avx512() ? "onednn-wino" : "onednn-packed");
    assert_true(kept[1][1]);
    if (onednn_isa_avx512()) {
        assert_string_equal(names[0][1], "onednn-packed");
        assert_true(kept[0][1]);
    }
}

/* A Conv under precision int8 with no calibration table runs in f32 (only
 * static int8 has int8 convs): it must get the f32 conv's variant, Winograd
 * included, not a slower direct conv (dynamic int8 on ResNet-18-like was
 * 1.4x its fp32 time before). */
static void onednn_int8_conv_runs_as_fp32(void **st) {
    (void)st;
    const char *names[2];
    bool kept;
    const op_precision precs[2] = {OP_PREC_FP32, OP_PREC_INT8};
    for (int p = 0; p < 2; p++) {
        node_case c;
        op_tensor in[3];
        nc_init(&c, "Conv", 3);
        attr_ints(c.n, "pads", 4, (int64_t[]){1, 1, 1, 1});
        tensor(&in[0], 4, (int64_t[]){1, 64, 14, 14});
        tensor(&in[1], 4, (int64_t[]){64, 64, 3, 3});
        tensor(&in[2], 1, (int64_t[]){64});
        g_prec = precs[p];
        assert_non_null(first_impl(&c, in, 3, 6u, 3, &names[p], &kept));
        g_prec = OP_PREC_FP32;
        free_inputs(in, 3);
        ir_graph_destroy(c.g);
    }
    assert_string_equal(names[1], names[0]);
    assert_string_equal(names[1], onednn_isa_avx512() ? "onednn-wino" : "onednn-packed");
}

static void onednn_fused(void **st) {
    (void)st;
    const op_precision precs[] = {OP_PREC_FP32, OP_PREC_BF16, OP_PREC_INT8};
    const char *names[] = {"onednn", "onednn-bf16", "onednn-int8"};
    for (int p = 0; p < 3; p++) {
        run_variant(run_fused_matmul_cases, "FusedMatMul", "mopt", precs[p], 0, names[p]);
        if (p < 2) run_variant(run_fused_conv_cases, "FusedConv", "mopt", precs[p], 0, names[p]);
    }
}

/* The variant the MatMul impl's prepare picks for precision prec and
 * weights b (constant when b_const). */
static const char *matmul_variant(op_precision prec, int32_t rb, const int64_t *bd, bool b_const) {
    node_case c;
    nc_init(&c, "MatMul", 2);
    op_tensor in[2], out;
    tensor(&in[0], 2, (int64_t[]){3, 4});
    tensor(&in[1], rb, bd);
    void *data = in[1].data;
    if (!b_const) in[1].data = NULL;
    g_prec = prec;
    static op_view view;
    op_ctx ctx = node_ctx(&c, &view, false, 1);
    g_prec = OP_PREC_FP32;
    memset(&out, 0, sizeof out);
    assert_int_equal(g_real->infer(&ctx, in, 2, &out, 1), MOPT_OK);
    const op_impl *impl = find_impl("MatMul", "onednn");
    assert_non_null(impl);
    const char *name = NULL;
    if (impl->supports(&ctx, in, 2, &out, 1)) {
        void *state = NULL;
        assert_int_equal(impl->prepare(&ctx, in, 2, &out, 1, &state), MOPT_OK);
        name = impl->variant(state);
        impl->release(state);
    }
    in[1].data = data;
    free_inputs(in, 2);
    ir_graph_destroy(c.g);
    return name;
}

/* int8 is chosen only for what it can quantize: a constant 2-D B. */
static void onednn_int8_refuses(void **st) {
    (void)st;
    assert_string_equal(matmul_variant(OP_PREC_INT8, 3, (int64_t[]){2, 4, 5}, true), "onednn");
    assert_string_equal(matmul_variant(OP_PREC_INT8, 2, (int64_t[]){4, 5}, true), "onednn-int8");
    assert_string_equal(matmul_variant(OP_PREC_INT8, 2, (int64_t[]){4, 5}, false), "onednn");
    assert_string_equal(matmul_variant(OP_PREC_BF16, 2, (int64_t[]){4, 5}, true),
                        variant_here("onednn-bf16"));
}

/* bf16 stays out of fp32 models, and the impl out of f64 ones. */
static void onednn_bf16_only_when_asked(void **st) {
    (void)st;
    assert_string_equal(matmul_variant(OP_PREC_FP32, 2, (int64_t[]){4, 5}, true), "onednn");
    assert_string_equal(matmul_variant(OP_PREC_BF16, 2, (int64_t[]){4, 5}, false),
                        variant_here("onednn-bf16"));
    const op_impl *impl = find_impl("MatMul", "onednn");
    node_case c;
    nc_init(&c, "MatMul", 2);
    op_tensor in[2], out;
    tensor(&in[0], 2, (int64_t[]){3, 4});
    tensor(&in[1], 2, (int64_t[]){4, 5});
    memset(&out, 0, sizeof out);
    static op_view view;
    op_ctx ctx = node_ctx(&c, &view, false, 1);
    assert_true(impl->supports(&ctx, in, 2, &out, 1));
    in[0].dtype = MOPT_DTYPE_F64;
    assert_false(impl->supports(&ctx, in, 2, &out, 1));
    in[0].dtype = MOPT_DTYPE_F32;
    free_inputs(in, 2);
    ir_graph_destroy(c.g);
}

/* The epilogue at the kernel layer: act(alpha * A B + bias + residual). */
static double act_ref(kn_act act, double x, double alpha, double beta) {
    switch (act) {
    case KN_ACT_NONE: return x;
    case KN_ACT_RELU: return x > 0 ? x : 0;
    case KN_ACT_LEAKY_RELU: return x > 0 ? x : alpha * x;
    case KN_ACT_CLIP: return x < alpha ? alpha : x > beta ? beta : x;
    case KN_ACT_HARD_SWISH: return x * fmax(0, fmin(1, x / 6 + 0.5));
    case KN_ACT_HARD_SIGMOID: return fmax(0, fmin(1, alpha * x + beta));
    case KN_ACT_SIGMOID: return 1 / (1 + exp(-x));
    case KN_ACT_TANH: return tanh(x);
    case KN_ACT_GELU: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case KN_ACT_GELU_TANH: return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case KN_ACT_SWISH: return x / (1 + exp(-x));
    case KN_ACT_COUNT: break;
    }
    return NAN;
}

static void onednn_matmul_epilogues(void **st) {
    (void)st;
    static const int64_t mkn[][3] = {{1, 17, 3}, {17, 129, 33}, {128, 384, 64}, {3, 1, 129}};
    int combo = 0, declined = 0;
    for (size_t s = 0; s < sizeof mkn / sizeof mkn[0]; s++)
        for (int act = KN_ACT_NONE; act <= KN_ACT_SWISH; act++)
            for (int extras = 0; extras < 4; extras++, combo++) {
                int64_t M = mkn[s][0], K = mkn[s][1], N = mkn[s][2];
                /* batch 2 for A, B broadcast; bias [N]; residual [M, N] broadcast over batch */
                float *A = rand_buf(2 * M * K), *B = rand_buf(K * N), *bias = rand_buf(N),
                      *res = rand_buf(M * N), *Y = rand_buf(2 * M * N);
                onednn_matmul_desc d;
                memset(&d, 0, sizeof d);
                onednn_td_dense(&d.a, 3, (int64_t[]){2, M, K});
                onednn_td_dense(&d.b, 3, (int64_t[]){1, K, N});
                onednn_td_dense(&d.y, 3, (int64_t[]){2, M, N});
                d.has_bias = extras & 1;
                onednn_td_dense(&d.bias, 3, (int64_t[]){1, 1, N});
                d.has_residual = (extras >> 1) & 1;
                onednn_td_dense(&d.residual, 3, (int64_t[]){1, M, N});
                d.alpha = (combo % 3 == 0) ? 0.5f : 1.f;
                d.act = (kn_act)act;
                d.act_alpha = act == KN_ACT_CLIP ? -0.5f : 0.2f;
                d.act_beta = act == KN_ACT_CLIP ? 0.75f : 0.5f;
                d.b_const = combo % 2;
                onednn_weights *w = NULL;
                if (combo % 2) assert_int_equal(onednn_matmul_pack(&d, B, 1, &w), MOPT_OK);
                onednn_cache *cache = NULL;
                mopt_status rs = onednn_matmul_run(&cache, &d, w, A, B, bias, res, Y, 1);
                if (rs) print_message("act %d extras %d: %s\n", act, extras, mopt_error_message());
                if (rs == MOPT_ERR_UNSUPPORTED) {
                    /* only when oneDNN would run its reference kernel: here
                     * for a residual broadcast over the batch */
                    assert_non_null(strstr(mopt_error_message(), "reference implementation"));
                    assert_true(d.has_residual);
                    declined++;
                } else {
                    assert_int_equal(rs, MOPT_OK);
                }
                for (int64_t t = 0; t < 2 && rs == MOPT_OK; t++)
                    for (int64_t i = 0; i < M; i++)
                        for (int64_t j = 0; j < N; j++) {
                            double acc = 0, mag = 0;
                            for (int64_t k = 0; k < K; k++) {
                                double p = (double)A[(t * M + i) * K + k] * B[k * N + j];
                                acc += p;
                                mag += fabs(p);
                            }
                            double x = d.alpha * acc, xm = d.alpha * mag;
                            if (d.has_bias) x += bias[j], xm += 1;
                            if (d.has_residual) x += res[i * N + j], xm += 1;
                            double want = act_ref(d.act, x, d.act_alpha, d.act_beta);
                            double got = Y[(t * M + i) * N + j];
                            double tol = 1.5 * gamma_k(K + 2) * xm + 1e-5 * fabs(want) + 1e-6;
                            if (!(fabs(got - want) <= tol)) {
                                print_message("M=%lld K=%lld N=%lld act %d extras %d alpha %g: "
                                              "[%lld,%lld,%lld] = %.9g, expected %.9g (tol %.3g)\n",
                                              (long long)M, (long long)K, (long long)N, act, extras,
                                              (double)d.alpha, (long long)t, (long long)i,
                                              (long long)j, got, want, tol);
                                fail();
                            }
                        }
                onednn_cache_free(cache);
                onednn_weights_free(w);
                mopt_aligned_free(A);
                mopt_aligned_free(B);
                mopt_aligned_free(bias);
                mopt_aligned_free(res);
                mopt_aligned_free(Y);
            }
    print_message("%d of %d epilogue combinations declined (oneDNN's reference kernel)\n", declined,
                  combo);
    assert_true(declined < combo / 2);
}

/* INT8 products in blocks of rows (each block's epilogue while it is in L2)
 * give the same bits as one product then the epilogue: 300 rows in blocks
 * of 64 (a 44-row tail), N 1024, for Y f32 (bias, residual, GELU: the fused
 * row pass; ReLU: the passes), Y a u8 rows block and Y bf16; and the
 * blocked results are the int8 product (close to the f32 one). */
static void onednn_int8_row_blocks(void **st) {
    (void)st;
    assert_true(onednn_available());
    enum { T = 2, M = 150, K = 96, N = 1024, R = T * M };
    float *A = rand_buf(R * K), *B = rand_buf(K * N), *bias = rand_buf(N), *res = rand_buf(R * N);
    size_t ybytes = (size_t)R * (N + CPU_ROWQ_EXTRA) * sizeof(float);
    uint8_t *y[2] = {mopt_aligned_alloc(ybytes), mopt_aligned_alloc(ybytes)};
    for (int v = 0; v < 4; v++) {
        onednn_matmul_desc d;
        memset(&d, 0, sizeof d);
        onednn_td_dense(&d.a, 3, (int64_t[]){T, M, K});
        onednn_td_dense(&d.b, 3, (int64_t[]){1, K, N});
        onednn_td_dense(&d.y, 3, (int64_t[]){T, M, N});
        onednn_td_dense(&d.bias, 3, (int64_t[]){1, 1, N});
        onednn_td_dense(&d.residual, 3, (int64_t[]){T, M, N});
        d.alpha = 1.f;
        d.prec = ONEDNN_INT8;
        d.b_const = true;
        d.has_bias = true;
        d.has_residual = v == 0 || v == 1;
        d.act = v == 1 ? KN_ACT_RELU : v == 3 ? KN_ACT_NONE : KN_ACT_GELU;
        d.y_u8 = v == 2;
        d.y_bf16 = v == 3;
        onednn_weights *w = NULL;
        assert_int_equal(onednn_matmul_pack(&d, B, 1, &w), MOPT_OK);
        for (int blocked = 0; blocked < 2; blocked++) {
            onednn_set_int8_block_bytes(blocked ? 256 << 10 : 0); /* 64 rows of 1024 */
            memset(y[blocked], 0xA5, ybytes);
            onednn_cache *cache = NULL;
            mopt_status rs =
                onednn_matmul_run(&cache, &d, w, A, B, bias, res, (float *)y[blocked], 1);
            if (rs) print_message("variant %d: %s\n", v, mopt_error_message());
            assert_int_equal(rs, MOPT_OK);
            onednn_cache_free(cache);
        }
        size_t n = d.y_u8 ? (size_t)R * (N + CPU_ROWQ_EXTRA)
                          : (size_t)R * N * (d.y_bf16 ? 2 : sizeof(float));
        assert_memory_equal(y[0], y[1], n);
        if (v == 0) /* the int8 product: A's rows to 8 bits, B's columns to 7 or 8 bits */
            for (int64_t i = 0; i < R; i += 37)
                for (int64_t j = 0; j < N; j += 101) {
                    double x = bias[j] + res[i * N + j], lo = 0, hi = 0, bmax = 0, tol = 0;
                    for (int64_t k = 0; k < K; k++) {
                        x += (double)A[i * K + k] * B[k * N + j];
                        lo = fmin(lo, A[i * K + k]), hi = fmax(hi, A[i * K + k]);
                        bmax = fmax(bmax, fabs(B[k * N + j]));
                    }
                    double sa = (hi - lo) / 255, sw = bmax / int8_wmax();
                    for (int64_t k = 0; k < K; k++)
                        tol +=
                            fabs(A[i * K + k]) * sw / 2 + fabs(B[k * N + j]) * sa / 2 + sa * sw / 4;
                    double want = act_ref(KN_ACT_GELU, x, 0, 0), got = ((float *)y[1])[i * N + j];
                    /* GELU's slope is below 1.13 */
                    assert_true(fabs(got - want) <= 1.13 * tol + 1e-5 * (1 + fabs(want)));
                }
        onednn_weights_free(w);
    }
    onednn_set_int8_block_bytes(256 << 10);
    mopt_aligned_free(y[0]);
    mopt_aligned_free(y[1]);
    mopt_aligned_free(A);
    mopt_aligned_free(B);
    mopt_aligned_free(bias);
    mopt_aligned_free(res);
}

/* A bias that is one value (or one per row) rather than one per column, as
 * FusedMatMul's `+ eps` of a mel filterbank: oneDNN's matmul bias made it
 * choose ref:any; it must run on a fast kernel (a binary post-op) and add
 * the broadcast value. Then a problem oneDNN declines (a residual broadcast
 * over the batch, as above) is declined again from the cache with the same
 * message, without asking oneDNN anew (the reference count does not move). */
static void onednn_matmul_scalar_bias(void **st) {
    (void)st;
    const int64_t M = 8, K = 130, N = 24;
    float *A = rand_buf(M * K), *B = rand_buf(K * N), *Y = rand_buf(M * N);
    const float eps[2] = {0.25f, 0.0f};
    for (int pass = 0; pass < 2; pass++) { /* f32 with alpha 1, then alpha 0.5 */
        onednn_matmul_desc d;
        memset(&d, 0, sizeof d);
        onednn_td_dense(&d.a, 2, (int64_t[]){M, K});
        onednn_td_dense(&d.b, 2, (int64_t[]){K, N});
        onednn_td_dense(&d.y, 2, (int64_t[]){M, N});
        d.has_bias = true;
        onednn_td_dense(&d.bias, 2, (int64_t[]){1, 1});
        d.alpha = pass ? 0.5f : 1.f;
        d.b_const = true;
        onednn_cache *cache = NULL;
        long long refs = onednn_ref_count();
        for (int rep = 0; rep < 2; rep++) {
            mopt_status rs = onednn_matmul_run(&cache, &d, NULL, A, B, eps, NULL, Y, 1);
            if (rs) print_message("scalar bias: %s\n", mopt_error_message());
            assert_int_equal(rs, MOPT_OK);
        }
        assert_true(onednn_ref_count() == refs);
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double acc = 0, mag = 0;
                for (int64_t k = 0; k < K; k++) {
                    acc += (double)A[i * K + k] * B[k * N + j];
                    mag += fabs((double)A[i * K + k] * B[k * N + j]);
                }
                double want = d.alpha * acc + eps[0], got = Y[i * N + j];
                assert_true(fabs(got - want) <= 1.5 * gamma_k(K + 2) * (mag + 1) + 1e-6);
            }
        onednn_cache_free(cache);
    }
    /* declined once, then from the cache */
    float *A2 = rand_buf(2 * M * K), *Y2 = rand_buf(2 * M * N), *res = rand_buf(M * N);
    onednn_matmul_desc d;
    memset(&d, 0, sizeof d);
    onednn_td_dense(&d.a, 3, (int64_t[]){2, M, K});
    onednn_td_dense(&d.b, 3, (int64_t[]){1, K, N});
    onednn_td_dense(&d.y, 3, (int64_t[]){2, M, N});
    d.has_residual = true;
    onednn_td_dense(&d.residual, 3, (int64_t[]){1, M, N});
    d.alpha = 1.f;
    onednn_cache *cache = NULL;
    mopt_status rs = onednn_matmul_run(&cache, &d, NULL, A2, B, NULL, res, Y2, 1);
    if (rs == MOPT_ERR_UNSUPPORTED) {
        char first[256];
        snprintf(first, sizeof first, "%s", mopt_error_message());
        long long refs = onednn_ref_count();
        mopt_clear_error();
        assert_int_equal(onednn_matmul_run(&cache, &d, NULL, A2, B, NULL, res, Y2, 1),
                         MOPT_ERR_UNSUPPORTED);
        assert_string_equal(mopt_error_message(), first);
        assert_true(onednn_ref_count() == refs);
    } else { /* a oneDNN that runs it: nothing to decline */
        assert_int_equal(rs, MOPT_OK);
    }
    onednn_cache_free(cache);
    mopt_aligned_free(A);
    mopt_aligned_free(B);
    mopt_aligned_free(Y);
    mopt_aligned_free(A2);
    mopt_aligned_free(Y2);
    mopt_aligned_free(res);
}

/* Conv epilogues: act(conv + bias + residual), residual the full output.
 * The last shape asks for the Winograd kernels (d.wino): on AVX-512 they
 * must run (relu and the residual's sum fused, other activations after the
 * primitive), within the same bound, and give the same bits on 2 threads as
 * on 1 (at batch 2 oneDNN would pick its 2x3 kernel for 2 threads, its 4x3
 * one for 1). */
static void onednn_conv_epilogues(void **st) {
    (void)st;
    /* plain-layout conv (1x1 on 16 channels), a blocked one (3x3 dw), the
     * stem-like 3-channel 3x3, a 3x3 48 -> 64 for Winograd (enough
     * channels for it on Intel too) */
    static const int64_t shapes[][5] = {
        {2, 16, 7, 24, 1}, {1, 32, 9, 32, 32}, {1, 3, 11, 8, 1}, {2, 48, 10, 64, 1}};
    const size_t n_shapes = sizeof shapes / sizeof shapes[0];
    for (size_t s = 0; s < n_shapes; s++)
        for (int act = KN_ACT_NONE; act <= KN_ACT_SWISH; act++)
            for (int extras = 0; extras < 4; extras++) {
                int64_t Nb = shapes[s][0], C = shapes[s][1], H = shapes[s][2], OC = shapes[s][3],
                        G = shapes[s][4];
                bool wino = s == n_shapes - 1;
                int64_t k = G > 1 || C == 3 || wino ? 3 : 1, pad = k / 2, icg = C / G;
                onednn_conv_desc d;
                memset(&d, 0, sizeof d);
                d.S = 2;
                d.batch = Nb;
                d.c_in = C;
                d.c_out = OC;
                d.group = G;
                for (int i = 0; i < 2; i++) {
                    d.in[i] = d.out[i] = H;
                    d.k[i] = k;
                    d.stride[i] = d.dilation[i] = 1;
                    d.pad_l[i] = d.pad_r[i] = pad;
                }
                d.has_bias = extras & 1;
                d.has_residual = (extras >> 1) & 1;
                d.act = (kn_act)act;
                d.act_alpha = act == KN_ACT_CLIP ? -0.5f : 0.2f;
                d.act_beta = act == KN_ACT_CLIP ? 0.75f : 0.5f;
                d.wino = wino;
                bool wino_here = wino && onednn_isa_avx512();
                int64_t ny = Nb * OC * H * H;
                float *X = rand_buf(Nb * C * H * H), *W = rand_buf(OC * icg * k * k),
                      *bias = rand_buf(OC), *res = rand_buf(ny), *Y = rand_buf(ny);
                onednn_weights *w = NULL;
                mopt_status pst = onednn_conv_pack(&d, W, 1, &w);
                if (wino && !wino_here) { /* no Winograd kernel: the direct one */
                    assert_int_equal(pst, MOPT_ERR_UNSUPPORTED);
                    mopt_clear_error();
                    d.wino = false;
                    pst = onednn_conv_pack(&d, W, 1, &w);
                }
                assert_int_equal(pst, MOPT_OK);
                long long winos = onednn_wino_count();
                onednn_cache *cache = NULL;
                assert_int_equal(onednn_conv_run(&cache, &d, w, X, W, bias, res, Y, 1), MOPT_OK);
                assert_int_equal(onednn_wino_count() - winos, wino_here ? 1 : 0);
                if (wino_here) { /* the same bits on 2 threads */
                    float *Y2 = rand_buf(ny);
                    onednn_cache *cache2 = NULL;
                    assert_int_equal(onednn_conv_run(&cache2, &d, w, X, W, bias, res, Y2, 2),
                                     MOPT_OK);
                    assert_int_equal(onednn_wino_count() - winos, 2);
                    assert_memory_equal(Y, Y2, (size_t)ny * sizeof(float));
                    onednn_cache_free(cache2);
                    mopt_aligned_free(Y2);
                }
                for (int64_t n = 0; n < Nb; n++)
                    for (int64_t o = 0; o < OC; o++)
                        for (int64_t y = 0; y < H; y++)
                            for (int64_t x = 0; x < H; x++) {
                                int64_t g = o / (OC / G);
                                double acc = 0, mag = 0;
                                for (int64_t c = 0; c < icg; c++)
                                    for (int64_t ky = 0; ky < k; ky++)
                                        for (int64_t kx = 0; kx < k; kx++) {
                                            int64_t iy = y + ky - pad, ix = x + kx - pad;
                                            if (iy < 0 || iy >= H || ix < 0 || ix >= H) continue;
                                            double p =
                                                (double)
                                                    X[((n * C + g * icg + c) * H + iy) * H + ix] *
                                                W[((o * icg + c) * k + ky) * k + kx];
                                            acc += p;
                                            mag += fabs(p);
                                        }
                                int64_t yi = ((n * OC + o) * H + y) * H + x;
                                if (d.has_bias) acc += bias[o], mag += 1;
                                if (d.has_residual) acc += res[yi], mag += 1;
                                double want = act_ref(d.act, acc, d.act_alpha, d.act_beta);
                                double tol =
                                    1.5 * gamma_k(icg * k * k + 2) * mag + 1e-5 * fabs(want) + 1e-6;
                                if (!(fabs(Y[yi] - want) <= tol)) {
                                    print_message("conv case %zu act %d extras %d: y[%lld] = "
                                                  "%.9g, expected %.9g\n",
                                                  s, act, extras, (long long)yi, (double)Y[yi],
                                                  want);
                                    fail();
                                }
                            }
                onednn_cache_free(cache);
                onednn_weights_free(w);
                mopt_aligned_free(X);
                mopt_aligned_free(W);
                mopt_aligned_free(bias);
                mopt_aligned_free(res);
                mopt_aligned_free(Y);
            }
}
#endif

#ifdef MOPT_HAVE_OPENBLAS
static void openblas_matmul(void **st) {
    (void)st;
    run_matmul_cases(find_impl("MatMul", "openblas"));
}
static void openblas_gemm(void **st) {
    (void)st;
    run_gemm_cases(find_impl("Gemm", "openblas"));
}
static void openblas_fused_matmul(void **st) {
    (void)st;
    const op_def *d = ops_find("FusedMatMul", "mopt");
    const op_impl *impl = NULL;
    for (int k = 0; d && d->impls && d->impls[k]; k++)
        if (strcmp(d->impls[k]->name, "openblas") == 0) impl = d->impls[k];
    assert_non_null(impl);
    run_fused_matmul_cases(impl);
}
#endif

/* Parses node c's attributes (*parsed: whether that passed) and, when they
 * parse, infers its output from the n_in inputs; frees the inputs and c's
 * graph. Returns the first failing status, or MOPT_OK. */
static mopt_status parse_and_infer(node_case *c, op_tensor *in, int n_in, bool *parsed) {
    static op_view view;
    op_view_src src = {.graph = c->g, .runtime = true, .precision = g_prec, .threads = 1};
    mopt_status st = op_view_init(&view, &src, c->n, NULL);
    *parsed = st == MOPT_OK;
    if (!st) {
        op_tensor y;
        memset(&y, 0, sizeof y);
        st = g_real->infer(&view.ctx, in, n_in, &y, 1);
    }
    free_inputs(in, n_in);
    ir_graph_destroy(c->g);
    return st;
}

/* mopt.FusedConv's `layout` (pass_layout.c): a bad set of bits fails its
 * parse, and a blocked X or Y (nChw16c, no padding) needs a known channel
 * count that is a multiple of 16, else inference fails with an error
 * (never a run over a tensor of the wrong size). */
static mopt_status fconv_layout_infer(int64_t layout, int64_t c_in, int64_t c_out, bool *parsed) {
    node_case c;
    nc_init_domain(&c, "FusedConv", "mopt", 4);
    attr_int(c.n, "layout", layout);
    attr_ints(c.n, "pads", 4, (int64_t[]){1, 1, 1, 1});
    op_tensor in[4];
    memset(in, 0, sizeof in);
    tensor(&in[0], 4, (int64_t[]){2, c_in, 8, 8});
    tensor(&in[1], 4, (int64_t[]){c_out, c_in, 3, 3});
    return parse_and_infer(&c, in, 2, parsed);
}

static void fused_conv_layout_checked(void **st) {
    (void)st;
    bool parsed;
    /* both X layouts, both Y layouts, out of range */
    for (int64_t bad = 0; bad < 4; bad++) {
        static const int64_t k_bad[] = {5, 10, 16, -1};
        assert_int_not_equal(fconv_layout_infer(k_bad[bad], 16, 16, &parsed), MOPT_OK);
        assert_false(parsed);
    }
    /* blocked X of 3 channels, blocked Y of 24 */
    assert_int_equal(fconv_layout_infer(CONV_LAYOUT_X_BLK16, 3, 16, &parsed),
                     MOPT_ERR_INVALID_MODEL);
    assert_true(parsed);
    assert_int_equal(fconv_layout_infer(CONV_LAYOUT_Y_BLK16, 16, 24, &parsed),
                     MOPT_ERR_INVALID_MODEL);
    /* fitting ones, and mixes with channels-last */
    assert_int_equal(fconv_layout_infer(CONV_LAYOUT_X_BLK16 | CONV_LAYOUT_Y_BLK16, 32, 16, &parsed),
                     MOPT_OK);
    assert_int_equal(fconv_layout_infer(CONV_LAYOUT_X_BLK16 | CONV_LAYOUT_Y_NHWC, 16, 24, &parsed),
                     MOPT_OK);
    assert_int_equal(fconv_layout_infer(CONV_LAYOUT_X_NHWC | CONV_LAYOUT_Y_BLK16, 3, 16, &parsed),
                     MOPT_OK);
}

/* mopt.ChannelsLastMaxPool and mopt.ChannelsLastGlobalAveragePool with
 * blocked=1 (pass_layout.c's Winograd chains): blocked other than 0 or 1
 * fails the parse, a channel count that does not fill the 16-channel
 * blocks fails inference (never a run over a tensor of the wrong size). */
static mopt_status cl_pool_blocked_infer(const char *op, int64_t blocked, int64_t c, bool *parsed) {
    node_case nc;
    nc_init_domain(&nc, op, "mopt", 1);
    attr_int(nc.n, "blocked", blocked);
    if (strcmp(op, "ChannelsLastMaxPool") == 0)
        attr_ints(nc.n, "kernel_shape", 2, (int64_t[]){3, 3});
    op_tensor in[1];
    memset(in, 0, sizeof in);
    tensor(&in[0], 4, (int64_t[]){2, c, 8, 8});
    return parse_and_infer(&nc, in, 1, parsed);
}

static void cl_pool_blocked_checked(void **st) {
    (void)st;
    static const char *const ops[] = {"ChannelsLastMaxPool", "ChannelsLastGlobalAveragePool"};
    for (int i = 0; i < 2; i++) {
        bool parsed;
        assert_int_not_equal(cl_pool_blocked_infer(ops[i], 2, 32, &parsed), MOPT_OK);
        assert_false(parsed);
        assert_int_equal(cl_pool_blocked_infer(ops[i], 1, 24, &parsed), MOPT_ERR_INVALID_MODEL);
        assert_true(parsed);
        assert_int_equal(cl_pool_blocked_infer(ops[i], 1, 32, &parsed), MOPT_OK);
        assert_int_equal(cl_pool_blocked_infer(ops[i], 0, 24, &parsed), MOPT_OK);
    }
}

static void impl_names_are_informative(void **st) {
    (void)st;
    static const char *const ops[] = {"MatMul", "Gemm", "Conv"};
    for (size_t i = 0; i < 3; i++) {
        const op_def *d = ops_find(ops[i], "");
        assert_non_null(d);
        for (int k = 0; d->impls && d->impls[k]; k++) {
            assert_non_null(strstr(d->impls[k]->name, d->impls[k]->backend));
            assert_non_null(d->impls[k]->supports);
        }
    }
#ifdef MOPT_HAVE_ONEDNN
    /* one oneDNN impl per op: its prepare picks precision and weight layout */
    static const char *const all[][2] = {
        {"MatMul", ""}, {"Gemm", ""}, {"Conv", ""}, {"FusedMatMul", "mopt"}, {"FusedConv", "mopt"}};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        const op_def *d = ops_find(all[i][0], all[i][1]);
        int n = 0;
        for (int k = 0; d->impls && d->impls[k]; k++)
            n += strcmp(d->impls[k]->backend, "onednn") == 0;
        assert_int_equal(n, 1);
        const op_impl *impl = find_impl_domain(all[i][0], all[i][1], "onednn");
        assert_non_null(impl);
        assert_non_null(impl->prepare);
        assert_non_null(impl->variant);
    }
#endif
#ifdef MOPT_HAVE_OPENBLAS
    assert_non_null(find_impl("MatMul", "openblas"));
    assert_non_null(find_impl("Gemm", "openblas"));
#endif
}

/* The cpu kernel of ConvTranspose with kernel == strides (cpu/deconv_cpu.c):
 * PP-OCR det's 24 -> 24 and 24 -> 1 k2 s2 (widths not a multiple of the
 * vector: masked tails), batch 2, taps 1, 6 (3x2) and 16 (4x4) and odd channel
 * counts (an output channel block below 24 accumulators), auto_pad VALID. */
static const conv_case k_unpool_cases[] = {
    {4, {1, 24, 5, 37}, {24, 24, 2, 2}, 1, {2, 2}, {1, 1}, {0}, NULL, true},
    {4, {2, 24, 3, 21}, {24, 1, 2, 2}, 1, {2, 2}, {1, 1}, {0}, NULL, true},
    {4, {2, 3, 4, 17}, {3, 5, 2, 2}, 1, {2, 2}, {1, 1}, {0}, NULL, false},
    {4, {1, 5, 3, 9}, {5, 7, 3, 2}, 1, {3, 2}, {1, 1}, {0}, "VALID", true},
    {4, {1, 2, 4, 4}, {2, 30, 1, 1}, 1, {1, 1}, {1, 1}, {0}, NULL, true},
    {4, {1, 4, 3, 20}, {4, 3, 4, 4}, 1, {4, 4}, {1, 1}, {0}, NULL, true},
    {4, {1, 16, 16, 32}, {16, 8, 2, 2}, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, NULL, true},
};

static void cpu_deconv(void **st) {
    (void)st;
    static const char *const tiers[] = {"avx512", "avx2", "portable"};
    int ran = 0;
    for (int t = 0; t < 3; t++) {
        char name[32];
        snprintf(name, sizeof name, "cpu-%s", tiers[t]);
        const op_impl *impl = find_impl("ConvTranspose", name);
        assert_non_null(impl);
        if (!cpu_kernels_for(tiers[t])) continue; /* a tier this CPU lacks */
        run_conv_table(impl, k_unpool_cases, sizeof k_unpool_cases / sizeof k_unpool_cases[0],
                       true);
        ran++;
        /* the other geometries (pads, groups, output_padding, k != s...) are oneDNN's */
        for (size_t i = 1; i < sizeof k_ct_cases / sizeof k_ct_cases[0]; i++) {
            const conv_case *cc = &k_ct_cases[i];
            node_case c;
            nc_init(&c, "ConvTranspose", 2);
            attr_int(c.n, "group", cc->group);
            attr_window(c.n, cc->rank - 2, cc->strides, cc->dilations, cc->pads, cc->auto_pad);
            attr_ints(c.n, "output_padding", cc->rank - 2, cc->output_padding);
            if (cc->has_output_shape)
                attr_ints(c.n, "output_shape", cc->rank - 2, cc->output_shape);
            op_tensor in[2];
            tensor(&in[0], cc->rank, cc->x);
            tensor(&in[1], cc->rank, cc->w);
            static op_view view;
            op_ctx ctx = node_ctx(&c, &view, false, 1);
            assert_false(impl->supports(&ctx, in, 2, NULL, 1));
            free_inputs(in, 2);
            ir_graph_destroy(c.g);
        }
    }
    assert_true(ran > 0);
}

/* ---- mopt.FusedConv 1x1 on the own GEMM (cpu-pwgemm-avx512) -------------- */

typedef struct pw_case {
    int64_t batch, K, N, h, w;
    int32_t layout; /* CONV_LAYOUT_* bits */
    const char *act;
    bool bias, res;
    int threads;
} pw_case;

/* K and N off multiples of 16/32/64, remainder rows of both tile shapes
 * (6 x 64 above 64 positions, 7 x 32 at or below), blocked and
 * channels-last X/Y, bias/residual and each fused activation, 1 and 2
 * threads, batch > 1 */
static const pw_case k_pw_cases[] = {
    {1, 64, 67, 5, 7, CONV_LAYOUT_X_NHWC | CONV_LAYOUT_Y_NHWC, "Relu", true, true, 1},
    {1, 64, 200, 14, 14, CONV_LAYOUT_X_NHWC | CONV_LAYOUT_Y_NHWC, "HardSwish", true, true, 2},
    {3, 80, 130, 3, 11, CONV_LAYOUT_X_NHWC | CONV_LAYOUT_Y_NHWC, "LeakyRelu", true, false, 2},
    {2, 67, 131, 9, 9, CONV_LAYOUT_X_NHWC | CONV_LAYOUT_Y_NHWC, "", false, true, 1},
    {1, 40, 240, 4, 5, CONV_LAYOUT_X_NHWC | CONV_LAYOUT_Y_NHWC, "HardSigmoid", true, false, 1},
    {2, 64, 96, 6, 6, CONV_LAYOUT_X_BLK16 | CONV_LAYOUT_Y_BLK16, "Clip", true, true, 2},
    {1, 64, 208, 13, 13, CONV_LAYOUT_X_BLK16 | CONV_LAYOUT_Y_BLK16, "HardSwish", true, true, 1},
    {1, 32, 24, 10, 10, CONV_LAYOUT_X_BLK16 | CONV_LAYOUT_Y_NHWC, "", true, true, 2},
    {2, 67, 32, 8, 9, CONV_LAYOUT_X_NHWC | CONV_LAYOUT_Y_BLK16, "Relu", false, true, 1},
    {1, 160, 960, 7, 7, CONV_LAYOUT_X_NHWC | CONV_LAYOUT_Y_NHWC, "HardSwish", true, false, 2},
};

static void pw_node(node_case *c, const pw_case *pc, op_tensor *in) {
    nc_init_domain(c, "FusedConv", "mopt", 4);
    attr_int(c->n, "layout", pc->layout);
    attr_str(c->n, "activation", pc->act);
    if (strcmp(pc->act, "Clip") == 0) {
        attr_float(c->n, "activation_alpha", -0.5f);
        attr_float(c->n, "activation_beta", 0.75f);
    }
    if (strcmp(pc->act, "LeakyRelu") == 0) attr_float(c->n, "activation_alpha", 0.1f);
    if (strcmp(pc->act, "HardSigmoid") == 0) {
        attr_float(c->n, "activation_alpha", 0.3f);
        attr_float(c->n, "activation_beta", 0.4f);
    }
    memset(in, 0, 4 * sizeof *in);
    tensor(&in[0], 4, (int64_t[]){pc->batch, pc->K, pc->h, pc->w});
    tensor(&in[1], 4, (int64_t[]){pc->N, pc->K, 1, 1});
    if (pc->bias) tensor(&in[2], 1, (int64_t[]){pc->N});
    if (pc->res) tensor(&in[3], 4, (int64_t[]){pc->batch, pc->N, pc->h, pc->w});
}

static void cpu_pwconv(void **st) {
    (void)st;
    const op_impl *impl = &ops_impl_cpu_pwconv_avx512;
    assert_non_null(strstr(impl->name, impl->backend));
    g_prec = OP_PREC_FP32;
    if (!cpu_kernels_for("avx512")) { /* AVX-512 only: prepare leaves every node to oneDNN */
        node_case c;
        op_tensor in[4];
        pw_node(&c, &k_pw_cases[1], in);
        static op_view view;
        op_ctx ctx = node_ctx(&c, &view, false, 1);
        const pw_case *pc = &k_pw_cases[1];
        op_tensor y; /* supports checks the residual against Y's shape */
        memset(&y, 0, sizeof y);
        y.dtype = MOPT_DTYPE_F32;
        ir_shape_set(&y.shape, 4, (int64_t[]){pc->batch, pc->N, pc->h, pc->w});
        void *state = NULL;
        assert_true(impl->supports(&ctx, in, 4, &y, 1));
        assert_int_equal(impl->prepare(&ctx, in, 4, &y, 1, &state), MOPT_ERR_UNSUPPORTED);
        free_inputs(in, 4);
        ir_graph_destroy(c.g);
        return;
    }
    for (size_t i = 0; i < sizeof k_pw_cases / sizeof k_pw_cases[0]; i++) {
        const pw_case *pc = &k_pw_cases[i];
        node_case c;
        op_tensor in[4];
        pw_node(&c, pc, in);
        int64_t ny = pc->batch * pc->N * pc->h * pc->w;
        g_conv_red = pc->K;
        g_fused_s = mopt_malloc((size_t)ny * sizeof(double));
        for (int64_t e = 0; e < ny; e++)
            g_fused_s[e] = (double)pc->K; /* inputs in [-1, 1] */
        g_fused_alpha = 1;
        g_fused_q = NULL;
        g_want = NULL;
        /* a NaN in X's first and last element: NaN through every activation
         * (Relu(NaN) = NaN, as the reference's epilogue) */
        ((float *)in[0].data)[0] = NAN;
        ((float *)in[0].data)[pc->batch * pc->K * pc->h * pc->w - 1] = NAN;
        check_impl(&c, impl, in, 4, 6u, 0u, fused_bound, pc->threads, false);
        mopt_free(g_fused_s);
        free_inputs(in, 4);
        ir_graph_destroy(c.g);
    }
}

/* What the rule leaves to oneDNN: prepare says UNSUPPORTED (supports says
 * no for what it can never compute) */
static void cpu_pwconv_declines(void **st) {
    (void)st;
    const op_impl *impl = &ops_impl_cpu_pwconv_avx512;
    const int32_t cl = CONV_LAYOUT_X_NHWC | CONV_LAYOUT_Y_NHWC;
    const int32_t edge = CONV_LAYOUT_X_BLK16 | CONV_LAYOUT_Y_NHWC; /* a chain edge */
    const struct {
        pw_case pc;
        int64_t kh, stride, group;
        bool supported; /* supports() says yes (prepare then declines) */
    } k_no[] = {
        {{1, 64, 128, 8, 8, 0, "Relu", true, false, 1}, 1, 1, 1, true},      /* NCHW */
        {{1, 160, 64, 7, 7, cl, "Relu", true, false, 1}, 1, 1, 1, true},     /* projection */
        {{1, 24, 72, 8, 8, cl, "Relu", true, false, 1}, 1, 1, 1, true},      /* K < 64, ReLU */
        {{1, 64, 128, 57, 56, cl, "Relu", true, false, 1}, 1, 1, 1, true},   /* > 56x56 */
        {{1, 64, 128, 1, 1, cl, "Relu", true, false, 1}, 1, 1, 1, true},     /* the GEMV's */
        {{1, 96, 4, 8, 8, edge, "", true, false, 1}, 1, 1, 1, true},         /* N < 16 */
        {{1, 64, 128, 8, 8, cl, "Relu", true, false, 1}, 3, 1, 1, true},     /* 3x3 */
        {{1, 64, 128, 8, 8, cl, "Relu", true, false, 1}, 1, 2, 1, true},     /* stride 2 */
        {{1, 64, 128, 8, 8, cl, "Relu", true, false, 1}, 1, 1, 2, true},     /* groups */
        {{1, 64, 128, 8, 8, cl, "Sigmoid", true, false, 1}, 1, 1, 1, false}, /* activation */
    };
    for (size_t i = 0; i < sizeof k_no / sizeof k_no[0]; i++) {
        const pw_case *pc = &k_no[i].pc;
        node_case c;
        op_tensor in[4];
        pw_node(&c, pc, in);
        if (k_no[i].kh != 1 || k_no[i].group != 1) {
            mopt_aligned_free(in[1].data);
            tensor(&in[1], 4, (int64_t[]){pc->N, pc->K / k_no[i].group, k_no[i].kh, k_no[i].kh});
            attr_int(c.n, "group", k_no[i].group);
            if (k_no[i].kh == 3) attr_ints(c.n, "pads", 4, (int64_t[]){1, 1, 1, 1});
        }
        if (k_no[i].stride != 1)
            attr_ints(c.n, "strides", 2, (int64_t[]){k_no[i].stride, k_no[i].stride});
        static op_view view;
        g_prec = OP_PREC_FP32;
        op_ctx ctx = node_ctx(&c, &view, false, 1);
        void *state = NULL;
        bool sup = impl->supports(&ctx, in, 4, NULL, 1);
        assert_int_equal(sup, k_no[i].supported);
        if (sup) {
            if (impl->prepare(&ctx, in, 4, NULL, 1, &state) != MOPT_ERR_UNSUPPORTED)
                print_message("pwconv case %zu was taken\n", i);
            assert_null(state);
        }
        /* bf16 and int8 models: oneDNN's variants */
        g_prec = OP_PREC_BF16;
        ctx = node_ctx(&c, &view, false, 1);
        assert_false(impl->supports(&ctx, in, 4, NULL, 1));
        g_prec = OP_PREC_FP32;
        free_inputs(in, 4);
        ir_graph_destroy(c.g);
    }
}

/* ---- MatMul / mopt.FusedMatMul at bf16 on AMX tiles (cpu-amx-bf16) ------ */

typedef struct amx_case {
    int64_t batch, M, K, N; /* A [batch, M, K] */
    const char *act;
    bool bias, res, trans_b;
    float alpha;
    bool a_bf16, res_bf16, y_bf16; /* the runtime's bf16 storage */
} amx_case;

/* M, K, N off the tile multiples (16 rows, 32 K, 32 columns) and across M
 * blocks (300 rows at K 200: two blocks of 256), every activation, bias and
 * residual, alpha, transB, f32 and bf16 A / residual / Y. */
static const amx_case k_amx_cases[] = {
    {1, 1, 7, 5, "", false, false, false, 1.f, false, false, false},
    {1, 33, 31, 17, "Relu", true, true, false, 1.f, false, false, false},
    {2, 23, 65, 70, "LeakyRelu", true, false, true, 0.5f, true, false, true},
    {1, 47, 96, 33, "Clip", true, true, false, 1.f, true, true, true},
    {3, 17, 64, 64, "HardSwish", false, true, true, 1.f, false, true, false},
    {1, 100, 129, 31, "HardSigmoid", true, true, false, 2.f, true, false, false},
    {1, 64, 32, 96, "Sigmoid", true, false, false, 1.f, false, false, true},
    {2, 19, 48, 40, "Tanh", true, true, true, 1.f, true, true, false},
    {1, 300, 200, 129, "Gelu", true, true, false, 1.f, true, true, true},
    {1, 61, 768, 97, "Gelu", true, false, false, 1.f, false, false, false},
    {4, 8, 100, 50, "GeluTanh", true, true, false, 0.25f, false, false, true},
    {1, 35, 77, 45, "Swish", false, true, true, 1.f, true, false, true},
};

static uint16_t amx_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static float amx_from_bf16(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* f32 values rounded to bf16 (what the runtime stores), kept as f32 in
 * ref and as bf16 in *bf when want */
static void amx_round(float *v, int64_t n, bool want, uint16_t **bf) {
    *bf = want ? mopt_aligned_alloc((size_t)n * sizeof(uint16_t)) : NULL;
    for (int64_t i = 0; i < n; i++) {
        uint16_t h = amx_to_bf16(v[i]);
        v[i] = amx_from_bf16(h);
        if (want) (*bf)[i] = h;
    }
}

/* n's activation attributes for act (the parameters every fused-epilogue
 * test uses) */
static void act_attrs(ir_node *n, const char *act) {
    attr_str(n, "activation", act);
    if (strcmp(act, "Clip") == 0) {
        attr_float(n, "activation_alpha", -0.5f);
        attr_float(n, "activation_beta", 0.75f);
    }
    if (strcmp(act, "LeakyRelu") == 0) attr_float(n, "activation_alpha", 0.1f);
    if (strcmp(act, "HardSigmoid") == 0) {
        attr_float(n, "activation_alpha", 0.3f);
        attr_float(n, "activation_beta", 0.4f);
    }
}

/* Runs the prepared impl (state) on rin at 1 and 2 threads into Y of the
 * given dims, f32 or bf16 (filled with NaN first: every element must be
 * written; no fallback to the reference run), then checks the two bit for
 * bit and the first against want within tol; `what` names the case. */
static void amx_run_check(const node_case *nc, op_view *view, const op_impl *impl, void *state,
                          op_tensor *rin, int n_in, int rank, const int64_t *dims, bool y_bf16,
                          const float *want, const double *tol, const char *what) {
    int64_t count = 1;
    for (int i = 0; i < rank; i++)
        count *= dims[i];
    void *got[2];
    size_t esz = y_bf16 ? sizeof(uint16_t) : sizeof(float);
    for (int t = 0; t < 2; t++) {
        op_ctx ctx = node_ctx(nc, view, true, t + 1);
        void *scratch = NULL;
        ctx.state = state;
        ctx.scratch = &scratch;
        op_tensor out;
        memset(&out, 0, sizeof out);
        out.dtype = y_bf16 ? MOPT_DTYPE_BF16 : MOPT_DTYPE_F32;
        ir_shape_set(&out.shape, rank, dims);
        got[t] = out.data = mopt_aligned_alloc((size_t)count * esz);
        memset(out.data, 0xff, (size_t)count * esz);
        g_ref_calls = 0;
        if (impl->run(&ctx, rin, n_in, &out, 1) != MOPT_OK) fail_msg("%s: run declined", what);
        assert_int_equal(g_ref_calls, 0);
        if (impl->release_scratch) impl->release_scratch(scratch);
    }
    if (memcmp(got[0], got[1], (size_t)count * esz) != 0) {
        print_message("%s: differs at 1 and 2 threads\n", what);
        fail();
    }
    for (int64_t i = 0; i < count; i++) {
        double g = y_bf16 ? amx_from_bf16(((uint16_t *)got[0])[i]) : ((float *)got[0])[i];
        if (!(fabs(g - want[i]) <= tol[i])) {
            print_message("%s: element %lld is %.9g, reference %.9g (tol %.3g)\n", what,
                          (long long)i, g, (double)want[i], tol[i]);
            fail();
        }
    }
    for (int t = 0; t < 2; t++)
        mopt_aligned_free(got[t]);
}

static void amx_node(node_case *c, const amx_case *ac, bool fused) {
    nc_init_domain(c, fused ? "FusedMatMul" : "MatMul", fused ? "mopt" : "", fused ? 4 : 2);
    if (!fused) return;
    attr_int(c->n, "transB", ac->trans_b);
    attr_float(c->n, "alpha", ac->alpha);
    act_attrs(c->n, ac->act);
}

/* One case: prepare (B constant, A's batch symbolic), run at 1 and 2
 * threads (bitwise equal), each element against a double product of the
 * bf16-rounded operands with the f32 reference epilogue: within the f32
 * sum's bound 2 gamma_K S, the activations' approximation (2e-6 relative +
 * 1e-6) and, for a bf16 Y, its rounding (2^-8 relative). */
static void amx_check(const op_impl *impl, const amx_case *ac, bool fused) {
    node_case c;
    amx_node(&c, ac, fused);
    int64_t M = ac->batch * ac->M, K = ac->K, N = ac->N;
    op_tensor in[4];
    memset(in, 0, sizeof in);
    tensor(&in[0], 3, (int64_t[]){ac->batch, ac->M, K});
    tensor(&in[1], 2, ac->trans_b ? (int64_t[]){N, K} : (int64_t[]){K, N});
    int n_in = fused ? 4 : 2;
    if (fused && ac->bias) tensor(&in[2], 1, (int64_t[]){N});
    if (fused && ac->res) tensor(&in[3], 3, (int64_t[]){ac->batch, ac->M, N});
    float *a = in[0].data, *b = in[1].data, *res = ac->res && fused ? in[3].data : NULL;
    uint16_t *a16, *res16 = NULL, *bq;
    amx_round(a, M * K, ac->a_bf16, &a16);
    if (res) amx_round(res, M * N, ac->res_bf16, &res16);
    float *bround = mopt_aligned_alloc((size_t)(K * N) * sizeof(float));
    memcpy(bround, b, (size_t)(K * N) * sizeof(float));
    amx_round(bround, K * N, false, &bq);
    /* the reference: double sums of the rounded operands, then f32 epilogue */
    float *want = mopt_aligned_alloc((size_t)(M * N) * sizeof(float));
    double *tol = mopt_malloc((size_t)(M * N) * sizeof(double));
    const float alpha = fused ? ac->alpha : 1.f;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double sum = 0, sabs = 0;
            for (int64_t k = 0; k < K; k++) {
                double bv = ac->trans_b ? bround[j * K + k] : bround[k * N + j];
                sum += (double)a[i * K + k] * bv;
                sabs += fabs((double)a[i * K + k] * bv);
            }
            float v = alpha * (float)sum;
            if (fused && ac->bias) v += ((float *)in[2].data)[j];
            if (res) v += res[i * N + j];
            want[i * N + j] = v;
            tol[i * N + j] = 1.5 * (2 * gamma_k(K) * fabs(alpha) * sabs) + 1e-6;
        }
    if (fused) {
        const fused_matmul_params *fp;
        static op_view pv;
        op_ctx pctx = node_ctx(&c, &pv, false, 1);
        fp = pctx.params;
        ref_activation_f32(want, M * N, &fp->act);
    }
    for (int64_t i = 0; i < M * N; i++)
        tol[i] += 2e-6 * fabs(want[i]) + 1e-6 + (ac->y_bf16 ? ldexp(fabs(want[i]), -8) : 0);
    /* load time: A's batch symbolic, B constant */
    static op_view view;
    op_tensor lin[4];
    memcpy(lin, in, sizeof lin);
    lin[0].data = NULL;
    if (fused) lin[2].data = lin[3].data = NULL;
    lin[0].shape.syms[0] = ir_graph_symbol(c.g, "batch");
    if (fused && ac->res) lin[3].shape.syms[0] = lin[0].shape.syms[0]; /* Y-shaped */
    op_ctx lctx = node_ctx(&c, &view, false, 1);
    void *state = NULL;
    assert_true(impl->supports(&lctx, lin, n_in, NULL, 1));
    assert_int_equal(impl->prepare(&lctx, lin, n_in, NULL, 1, &state), MOPT_OK);
    /* the run: A, the residual and Y as the storage plan gives them */
    lctx.state = state;
    assert_true(impl->bf16_io(&lctx, lin, n_in, true, 0));
    assert_true(impl->bf16_io(&lctx, lin, n_in, false, 0));
    op_tensor rin[4];
    memcpy(rin, in, sizeof rin);
    if (ac->a_bf16) rin[0].dtype = MOPT_DTYPE_BF16, rin[0].data = a16;
    if (res16) rin[3].dtype = MOPT_DTYPE_BF16, rin[3].data = res16;
    char what[160];
    snprintf(what, sizeof what, "%s: %lldx%lldx%lld %s", impl->name, (long long)M, (long long)K,
             (long long)N, ac->act);
    amx_run_check(&c, &view, impl, state, rin, n_in, 3, (int64_t[]){ac->batch, ac->M, N},
                  ac->y_bf16, want, tol, what);
    impl->release(state);
    mopt_aligned_free(a16);
    mopt_aligned_free(res16);
    mopt_aligned_free(bround);
    mopt_aligned_free(want);
    mopt_free(tol);
    free_inputs(in, n_in);
    ir_graph_destroy(c.g);
}

static void cpu_amx_gemm(void **st) {
    (void)st;
    const op_impl *fimpl = &ops_impl_cpu_amx_fused_matmul, *mimpl = &ops_impl_cpu_amx_matmul;
    assert_non_null(strstr(fimpl->name, fimpl->backend));
    g_prec = OP_PREC_BF16;
    g_opt_level = 3;
    if (!cpu_get()->amx_kernels) { /* oneDNN takes every node (also MOPT_AMX=0) */
        node_case c;
        amx_node(&c, &k_amx_cases[1], true);
        op_tensor in[2];
        tensor(&in[0], 2, (int64_t[]){33, 31});
        tensor(&in[1], 2, (int64_t[]){31, 17});
        static op_view view;
        op_ctx ctx = node_ctx(&c, &view, false, 1);
        assert_false(fimpl->supports(&ctx, in, 2, NULL, 1));
        print_message("no AMX-BF16 here: cpu-amx-bf16 checked to decline, not run\n");
        free_inputs(in, 2);
        ir_graph_destroy(c.g);
        g_prec = OP_PREC_FP32;
        g_opt_level = 0;
        return;
    }
    /* sizes below the rule's K, N >= 512 (where it leaves nodes to oneDNN)
     * cover the tails: taken with MOPT_AMX_GEMM=all */
    setenv("MOPT_AMX_GEMM", "all", 1);
    for (size_t i = 0; i < sizeof k_amx_cases / sizeof k_amx_cases[0]; i++)
        amx_check(fimpl, &k_amx_cases[i], true);
    /* each activation where the sum's bound is tight (K = 20, f32 Y):
     * the epilogue's approximations within 2e-6 relative */
    static const char *const acts[] = {"",          "Relu",        "LeakyRelu", "Clip",
                                       "HardSwish", "HardSigmoid", "Sigmoid",   "Tanh",
                                       "Gelu",      "GeluTanh",    "Swish"};
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
        amx_case ac = {1,          37,    20,  35,         acts[i], true,
                       i % 2 == 0, false, 2.f, i % 3 == 0, false,   false};
        amx_check(fimpl, &ac, true);
    }
    for (size_t i = 0; i < sizeof k_amx_cases / sizeof k_amx_cases[0]; i += 3)
        amx_check(mimpl, &k_amx_cases[i], false);
    unsetenv("MOPT_AMX_GEMM");
    /* at the rule's sizes (K 768, N 515; 2 M blocks) without the switch */
    static const amx_case big = {2,    131,   768, 515,  "Gelu", true,
                                 true, false, 1.f, true, true,   true};
    amx_check(fimpl, &big, true);
    g_prec = OP_PREC_FP32;
    g_opt_level = 0;
}

/* What it leaves to oneDNN: other precisions, a transposed A, a B that is
 * not a constant 2-D weight, a bias that is not N values, a residual
 * broadcast to Y, K and N below 512 */
static void cpu_amx_gemm_declines(void **st) {
    (void)st;
    const op_impl *impl = &ops_impl_cpu_amx_fused_matmul;
    for (int i = 0; i < 7; i++) {
        node_case c;
        amx_node(&c, &k_amx_cases[1], true);
        if (i == 1) attr_int(c.n, "transA", 1);
        op_tensor in[4];
        memset(in, 0, sizeof in);
        if (i == 6) { /* A [2, 31, 31], the residual [31, 17] */
            tensor(&in[0], 3, (int64_t[]){2, 31, 31});
            tensor(&in[3], 2, (int64_t[]){31, 17});
            setenv("MOPT_AMX_GEMM", "all", 1);
        } else {
            tensor(&in[0], 2, (int64_t[]){31, 31});
        }
        tensor(&in[1], i == 3 ? 3 : 2, i == 3 ? (int64_t[]){2, 31, 17} : (int64_t[]){31, 17});
        tensor(&in[2], 2, i == 4 ? (int64_t[]){31, 17} : (int64_t[]){1, 17});
        g_prec = i == 0 ? OP_PREC_FP32 : OP_PREC_BF16;
        static op_view view;
        op_ctx ctx = node_ctx(&c, &view, false, 1);
        int n_in = i == 6 ? 4 : 3;
        op_tensor lin[4];
        memcpy(lin, in, sizeof lin);
        lin[0].data = NULL;
        if (i == 2) lin[1].data = NULL;
        void *state = NULL;
        /* 5: K, N below 512 (oneDNN is as fast there): prepare declines */
        assert_int_equal(impl->supports(&ctx, lin, n_in, NULL, 1),
                         i == 5 && cpu_get()->amx_kernels);
        assert_int_equal(impl->prepare(&ctx, lin, n_in, NULL, 1, &state), MOPT_ERR_UNSUPPORTED);
        assert_null(state);
        unsetenv("MOPT_AMX_GEMM");
        free_inputs(in, n_in);
        ir_graph_destroy(c.g);
    }
    g_prec = OP_PREC_FP32;
}

/* ---- mopt.FusedConv 1x1 at bf16 on the AMX GEMM (cpu-amx-bf16) ---------- */

typedef struct amxc_case {
    int64_t batch, K, N, h, w;
    const char *act;
    bool bias, res;
    bool x_bf16, res_bf16, y_bf16; /* the runtime's bf16 storage */
    bool post;                     /* post_scale 1.5, post_shift -0.25 (PP-OCR's affine) */
} amxc_case;

/* K and N off the tile multiples (32), K below one step (3, 16, 24) and
 * across several (72, 120, 200), N from 8 to 960, positions across M blocks
 * (20 x 20 = 400 rows: 256 + 144) and batches, every activation of
 * MobileNet / PP-OCR, bias and residual, the post affine, f32 and bf16 X /
 * residual / Y */
static const amxc_case k_amxc_cases[] = {
    {1, 3, 8, 5, 7, "Relu", true, true, false, false, false},
    {2, 16, 16, 9, 9, "HardSwish", true, false, true, false, true, true},
    {1, 24, 72, 7, 11, "Clip", true, true, true, true, true, true},
    {1, 40, 24, 13, 13, "HardSigmoid", true, false, true, false, false},
    {1, 72, 960, 3, 5, "Sigmoid", true, false, true, false, true},
    {1, 120, 40, 20, 20, "", false, true, true, true, true},
    {3, 16, 960, 4, 3, "Swish", true, true, false, true, true},
    {1, 200, 72, 6, 7, "LeakyRelu", true, true, true, false, true},
    {1, 72, 24, 56, 56, "", true, true, true, true, true},
};

static void amxc_node(node_case *c, const amxc_case *ac, int32_t layout) {
    nc_init_domain(c, "FusedConv", "mopt", 4);
    attr_int(c->n, "layout", layout);
    act_attrs(c->n, ac->act);
    if (ac->post) {
        attr_float(c->n, "post_scale", 1.5f);
        attr_float(c->n, "post_shift", -0.25f);
    }
}

/* One case: prepare (W constant, X's batch and spatial sizes symbolic as in
 * PP-OCR), run at 1 and 2 threads (bitwise equal, every element written),
 * each element against a double sum of the bf16-rounded X and W over the
 * channels-last rows with the f32 reference epilogue (bias, residual,
 * ref_activation_f32), within the f32 sum's bound, the epilogue's
 * approximations and a bf16 Y's rounding. */
static void amxc_check(const amxc_case *ac) {
    const op_impl *impl = &ops_impl_cpu_amx_fused_conv;
    node_case c;
    amxc_node(&c, ac, CONV_LAYOUT_X_NHWC | CONV_LAYOUT_Y_NHWC);
    int64_t hw = ac->h * ac->w, M = ac->batch * hw, K = ac->K, N = ac->N;
    op_tensor in[4];
    memset(in, 0, sizeof in);
    tensor(&in[0], 4, (int64_t[]){ac->batch, K, ac->h, ac->w}); /* stored [batch, h, w, K] */
    tensor(&in[1], 4, (int64_t[]){N, K, 1, 1});
    if (ac->bias) tensor(&in[2], 1, (int64_t[]){N});
    if (ac->res) tensor(&in[3], 4, (int64_t[]){ac->batch, N, ac->h, ac->w});
    float *x = in[0].data, *res = ac->res ? in[3].data : NULL;
    uint16_t *x16, *res16 = NULL, *wq;
    amx_round(x, M * K, ac->x_bf16, &x16);
    if (res) amx_round(res, M * N, ac->res_bf16, &res16);
    float *wround = mopt_aligned_alloc((size_t)(K * N) * sizeof(float));
    memcpy(wround, in[1].data, (size_t)(K * N) * sizeof(float));
    amx_round(wround, K * N, false, &wq);
    float *want = mopt_aligned_alloc((size_t)(M * N) * sizeof(float));
    double *tol = mopt_malloc((size_t)(M * N) * sizeof(double));
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double sum = 0, sabs = 0;
            for (int64_t k = 0; k < K; k++) {
                double p = (double)x[i * K + k] * wround[j * K + k];
                sum += p;
                sabs += fabs(p);
            }
            float v = (float)sum;
            if (ac->bias) v += ((float *)in[2].data)[j];
            if (res) v += res[i * N + j];
            want[i * N + j] = v;
            tol[i * N + j] = 1.5 * (2 * gamma_k(K) * sabs) + 1e-6;
        }
    static op_view pv;
    op_ctx pctx = node_ctx(&c, &pv, false, 1);
    ref_activation_f32(want, M * N, &((const fused_conv_params *)pctx.params)->act);
    ops_fused_conv_post(pctx.params, want, M * N);
    for (int64_t i = 0; i < M * N; i++)
        tol[i] = (ac->post ? 1.5 : 1) * tol[i] + 2e-6 * fabs(want[i]) + 1e-6 +
                 (ac->y_bf16 ? ldexp(fabs(want[i]), -8) : 0);
    /* load time: X's batch and spatial sizes symbolic, W constant */
    static op_view view;
    op_tensor lin[4];
    memcpy(lin, in, sizeof lin);
    lin[0].data = lin[2].data = lin[3].data = NULL;
    lin[0].shape.syms[0] = ir_graph_symbol(c.g, "batch");
    lin[0].shape.syms[2] = ir_graph_symbol(c.g, "h");
    lin[0].shape.syms[3] = ir_graph_symbol(c.g, "w");
    if (ac->res) lin[3].shape = lin[0].shape, lin[3].shape.dims[1] = N;
    op_tensor ly;
    memset(&ly, 0, sizeof ly);
    ly.dtype = MOPT_DTYPE_F32;
    ly.shape = lin[0].shape;
    ly.shape.dims[1] = N;
    op_ctx lctx = node_ctx(&c, &view, false, 1);
    void *state = NULL;
    assert_true(impl->supports(&lctx, lin, 4, &ly, 1));
    assert_int_equal(impl->prepare(&lctx, lin, 4, &ly, 1, &state), MOPT_OK);
    lctx.state = state;
    assert_true(impl->bf16_io(&lctx, lin, 4, true, 0));
    assert_true(impl->bf16_io(&lctx, lin, 4, false, 0));
    assert_true(impl->bf16_io(&lctx, lin, 4, false, 3));
    op_tensor rin[4];
    memcpy(rin, in, sizeof rin);
    if (ac->x_bf16) rin[0].dtype = MOPT_DTYPE_BF16, rin[0].data = x16;
    if (res16) rin[3].dtype = MOPT_DTYPE_BF16, rin[3].data = res16;
    char what[160];
    snprintf(what, sizeof what, "cpu-amx-bf16 conv %lld -> %lld at %lldx%lld %s", (long long)K,
             (long long)N, (long long)ac->h, (long long)ac->w, ac->act);
    amx_run_check(&c, &view, impl, state, rin, 4, 4, (int64_t[]){ac->batch, N, ac->h, ac->w},
                  ac->y_bf16, want, tol, what);
    impl->release(state);
    mopt_aligned_free(x16);
    mopt_aligned_free(res16);
    mopt_aligned_free(wround);
    mopt_aligned_free(want);
    mopt_free(tol);
    free_inputs(in, 4);
    ir_graph_destroy(c.g);
}

static void cpu_amx_conv(void **st) {
    (void)st;
    const op_impl *impl = &ops_impl_cpu_amx_fused_conv;
    assert_non_null(strstr(impl->name, impl->backend));
    g_prec = OP_PREC_BF16;
    g_opt_level = 3;
    if (!cpu_get()->amx_kernels) { /* oneDNN takes every node (also MOPT_AMX=0) */
        node_case c;
        amxc_node(&c, &k_amxc_cases[1], CONV_LAYOUT_X_NHWC | CONV_LAYOUT_Y_NHWC);
        op_tensor in[4];
        memset(in, 0, sizeof in);
        tensor(&in[0], 4, (int64_t[]){1, 16, 9, 9});
        tensor(&in[1], 4, (int64_t[]){16, 16, 1, 1});
        static op_view view;
        op_ctx ctx = node_ctx(&c, &view, false, 1);
        assert_false(impl->supports(&ctx, in, 2, NULL, 1));
        print_message("no AMX-BF16 here: cpu-amx-bf16 (conv) checked to decline, not run\n");
        free_inputs(in, 2);
        ir_graph_destroy(c.g);
    } else {
        setenv("MOPT_AMX_CONV", "all", 1); /* the rule's exclusions too */
        for (size_t i = 0; i < sizeof k_amxc_cases / sizeof k_amxc_cases[0]; i++)
            amxc_check(&k_amxc_cases[i]);
        unsetenv("MOPT_AMX_CONV");
    }
    g_prec = OP_PREC_FP32;
    g_opt_level = 0;
}

/* What it never takes (supports or prepare say no): fp32, NCHW or blocked
 * layouts, a 3x3 kernel, strides 2, pads, groups */
static void cpu_amx_conv_declines(void **st) {
    (void)st;
    const op_impl *impl = &ops_impl_cpu_amx_fused_conv;
    setenv("MOPT_AMX_CONV", "all", 1);
    for (int i = 0; i < 7; i++) {
        node_case c;
        amxc_node(&c, &k_amxc_cases[2],
                  i == 1   ? 0
                  : i == 2 ? CONV_LAYOUT_X_BLK16 | CONV_LAYOUT_Y_BLK16
                           : CONV_LAYOUT_X_NHWC | CONV_LAYOUT_Y_NHWC);
        op_tensor in[4];
        memset(in, 0, sizeof in);
        tensor(&in[0], 4, (int64_t[]){1, 24, 7, 11});
        int64_t kk = i == 3 ? 3 : 1, g = i == 6 ? 2 : 1;
        tensor(&in[1], 4, (int64_t[]){72, 24 / g, kk, kk});
        if (i == 3) attr_ints(c.n, "pads", 4, (int64_t[]){1, 1, 1, 1});
        if (i == 4) attr_ints(c.n, "strides", 2, (int64_t[]){2, 2});
        if (i == 5) attr_ints(c.n, "pads", 4, (int64_t[]){1, 0, 1, 0});
        if (i == 6) attr_int(c.n, "group", 2);
        g_prec = i == 0 ? OP_PREC_FP32 : OP_PREC_BF16;
        static op_view view;
        op_ctx ctx = node_ctx(&c, &view, false, 1);
        void *state = NULL;
        if (impl->supports(&ctx, in, 2, NULL, 1))
            fail_msg("cpu-amx-bf16 conv: case %d supported", i);
        assert_int_equal(impl->prepare(&ctx, in, 2, NULL, 1, &state), MOPT_ERR_UNSUPPORTED);
        assert_null(state);
        free_inputs(in, 2);
        ir_graph_destroy(c.g);
    }
    unsetenv("MOPT_AMX_CONV");
    g_prec = OP_PREC_FP32;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(impl_names_are_informative),
        cmocka_unit_test(fused_conv_layout_checked),
        cmocka_unit_test(cl_pool_blocked_checked),
        cmocka_unit_test(cpu_deconv),
        cmocka_unit_test(cpu_pwconv),
        cmocka_unit_test(cpu_pwconv_declines),
        cmocka_unit_test(cpu_amx_gemm),
        cmocka_unit_test(cpu_amx_gemm_declines),
        cmocka_unit_test(cpu_amx_conv),
        cmocka_unit_test(cpu_amx_conv_declines),
#ifdef MOPT_HAVE_ONEDNN
        cmocka_unit_test(onednn_matmul),
        cmocka_unit_test(onednn_gemm),
        cmocka_unit_test(onednn_conv),
        cmocka_unit_test(onednn_conv_transpose),
        cmocka_unit_test(onednn_pools),
        cmocka_unit_test(onednn_matmul_epilogues),
        cmocka_unit_test(onednn_matmul_scalar_bias),
        cmocka_unit_test(onednn_conv_epilogues),
        cmocka_unit_test(onednn_bf16_matmul),
        cmocka_unit_test(onednn_bf16_gemm),
        cmocka_unit_test(onednn_bf16_conv),
        cmocka_unit_test(onednn_bf16_only_when_asked),
        cmocka_unit_test(onednn_int8_matmul),
        cmocka_unit_test(onednn_int8_gemm),
        cmocka_unit_test(onednn_int8_refuses),
        cmocka_unit_test(onednn_fused),
        cmocka_unit_test(onednn_packed),
        cmocka_unit_test(onednn_int8_row_blocks),
        cmocka_unit_test(onednn_levels_named_apart),
        cmocka_unit_test(onednn_int8_conv_runs_as_fp32),
#endif
#ifdef MOPT_HAVE_OPENBLAS
        cmocka_unit_test(openblas_matmul),
        cmocka_unit_test(openblas_gemm),
        cmocka_unit_test(openblas_fused_matmul),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
