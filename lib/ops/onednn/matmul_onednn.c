/*
 * matmul_onednn.c — MatMul and Gemm on oneDNN (kernels/onednn): f32, batch
 * dims with broadcasting, 1-D operands, Gemm's transA/transB as strides,
 * alpha as the output scale, C as a fused bias (the [N] case) or
 * accumulated into the output (sum post-op with scale beta). The primitives
 * are cached per session by shape. Problems oneDNN refuses at run time (and
 * empty ones) go to the reference run.
 *
 * Weight layout per opt_level (issue 5: prepacking is level 3):
 *  - "onednn" (any level): B is read in its stored row-major layout, straight
 *    from the model's buffer;
 *  - "onednn-packed" (opt_level >= 3, constant B): B is reordered once at
 *    model build into oneDNN's preferred (blocked) layout; when that layout
 *    is the stored one the impl steps aside for "onednn".
 * With precision=bf16 the "onednn-bf16" / "onednn-bf16-packed" impls compute
 * in bf16 (weights converted once at build, in the stored layout resp. the
 * preferred one; activations per run) with f32 accumulation and f32 outputs.
 * With precision=int8 the "onednn-int8" impls run dynamic int8 (constant 2-D
 * B only); they always prepack (B is quantized into oneDNN's layout at build,
 * whatever the opt_level).
 */
#include "mopt_config.h"
#include "ops/impls.h"

#ifdef MOPT_HAVE_ONEDNN
#include <string.h>

#include "kernels/onednn/onednn.h"
#include "ops/onednn/onednn_glue.h"

typedef onednn_glue_mm_state mm_state;

static bool is_f32(const op_tensor *t) { return t->dtype == MOPT_DTYPE_F32; }

static bool rank_ok(const ir_shape *s) { return s->rank < 0 || (s->rank >= 1 && s->rank <= 12); }

static int64_t dim_or(const ir_shape *s, int32_t i, int64_t def) {
    return s->syms[i] == 0 ? s->dims[i] : def;
}

/* Fills d's a, b, y for MatMul operands a and b (numpy semantics), with
 * unknown dims replaced by representative sizes (load time). False when
 * oneDNN cannot express it. */
static bool matmul_geometry(const ir_shape *a, const ir_shape *b, onednn_matmul_desc *d) {
    if (a->rank < 1 || b->rank < 1 || a->rank > 12 || b->rank > 12) return false;
    int64_t ad[12], bd[12], yd[12];
    int32_t na = a->rank < 2 ? 2 : a->rank, nb = b->rank < 2 ? 2 : b->rank;
    int32_t r = na > nb ? na : nb;
    for (int32_t i = 0; i < r; i++)
        ad[i] = bd[i] = 1;
    if (a->rank == 1) {
        ad[r - 1] = dim_or(a, 0, 64);
    } else {
        for (int32_t i = 0; i < a->rank; i++)
            ad[r - a->rank + i] = dim_or(a, i, i == a->rank - 2 ? 128 : i == a->rank - 1 ? 64 : 1);
    }
    if (b->rank == 1) {
        bd[r - 2] = dim_or(b, 0, 64);
    } else {
        for (int32_t i = 0; i < b->rank; i++)
            bd[r - b->rank + i] = dim_or(b, i, i >= b->rank - 2 ? 64 : 1);
    }
    /* an unknown K takes the other operand's */
    bool ka = a->syms[a->rank - 1] == 0, kb = b->syms[b->rank == 1 ? 0 : b->rank - 2] == 0;
    if (!ka && kb) ad[r - 1] = bd[r - 2];
    if (ka && !kb) bd[r - 2] = ad[r - 1];
    if (ad[r - 1] != bd[r - 2]) return false;
    for (int32_t i = 0; i < r - 2; i++) {
        if (ad[i] != bd[i] && ad[i] != 1 && bd[i] != 1) return false;
        yd[i] = ad[i] == 1 ? bd[i] : ad[i];
    }
    yd[r - 2] = ad[r - 2];
    yd[r - 1] = bd[r - 1];
    onednn_td_dense(&d->a, r, ad);
    onednn_td_dense(&d->b, r, bd);
    onednn_td_dense(&d->y, r, yd);
    d->alpha = 1.f;
    return true;
}

static bool empty_problem(const onednn_matmul_desc *d) {
    for (int32_t i = 0; i < d->y.ndims; i++)
        if (d->y.dims[i] == 0) return true;
    return d->a.dims[d->a.ndims - 1] == 0;
}

/* Prepacking (weights in the kernel's own layout) is opt_level 3. */
static bool prepack_level(const op_ctx *ctx) { return ctx->opt_level >= 3; }

/* ---- MatMul ------------------------------------------------------------- */

static bool is_bf16(const op_ctx *ctx) { return onednn_glue_prec_is(ctx, OP_PREC_BF16); }

static bool matmul_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                            int n_out) {
    return onednn_available() && is_f32(&in[0]) && is_f32(&in[1]) && rank_ok(&in[0].shape) &&
           rank_ok(&in[1].shape);
}

static mopt_status matmul_prepare_p(const op_ctx *ctx, const op_tensor *in, onednn_prec prec,
                                    bool plain, void **state) {
    *state = NULL;
    onednn_matmul_desc d;
    memset(&d, 0, sizeof d);
    if (!in[1].data || in[0].shape.rank < 0 || !matmul_geometry(&in[0].shape, &in[1].shape, &d) ||
        empty_problem(&d))
        return MOPT_OK;
    return onednn_glue_pack_b(&d, &in[1], prec, plain, state);
}

static mopt_status matmul_run_p(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out, onednn_prec prec, bool plain) {
    const mm_state *s = ctx->state;
    onednn_matmul_desc d;
    memset(&d, 0, sizeof d);
    if (!matmul_geometry(&in[0].shape, &in[1].shape, &d) || empty_problem(&d))
        return ctx->node->op->run(ctx, in, n_in, out, n_out);
    d.b_const = s != NULL;
    d.prec = prec;
    d.plain_w = plain && prec != ONEDNN_INT8;
    mopt_status st =
        onednn_matmul_run((onednn_cache **)ctx->scratch, &d, s ? s->w : NULL, in[0].data,
                          in[1].data, NULL, NULL, out[0].data, ctx->threads);
    return onednn_glue_or_ref(st, ctx, in, n_in, out, n_out);
}

/* One impl per precision (f32, bf16) and weights layout (stored, packed). */
#define MATMUL_IMPL(ident, iname, prec, plain, sup)                                                \
    static bool ident##_supports(const op_ctx *ctx, const op_tensor *in, int n_in,                 \
                                 const op_tensor *out, int n_out) {                                \
        return (sup) && matmul_supports(ctx, in, n_in, out, n_out);                                \
    }                                                                                              \
    static mopt_status ident##_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,           \
                                       const op_tensor *out, int n_out, void **state) {            \
        mopt_status st = matmul_prepare_p(ctx, in, prec, plain, state);                            \
        return plain ? st : onednn_glue_mm_packed_or_step_aside(st, state);                        \
    }                                                                                              \
    static mopt_status ident##_run(const op_ctx *ctx, const op_tensor *in, int n_in,               \
                                   op_tensor *out, int n_out) {                                    \
        return matmul_run_p(ctx, in, n_in, out, n_out, prec, plain);                               \
    }                                                                                              \
    ONEDNN_GLUE_IMPL_TABLE(ident, iname, onednn_glue_mm_state_release)

MATMUL_IMPL(matmul_onednn, "onednn", ONEDNN_F32, true, true)
MATMUL_IMPL(matmul_onednn_packed, "onednn-packed", ONEDNN_F32, false,
            prepack_level(ctx) && in[1].data)
/* precision=bf16: bf16 operands, f32 accumulation and output. A non-constant
 * B is converted on each run. */
MATMUL_IMPL(matmul_onednn_bf16, "onednn-bf16", ONEDNN_BF16, true, is_bf16(ctx))
MATMUL_IMPL(matmul_onednn_bf16_packed, "onednn-bf16-packed", ONEDNN_BF16, false,
            is_bf16(ctx) && prepack_level(ctx) && in[1].data)

/* precision=int8 (dynamic): constant 2-D B quantized once per column, A per
 * run (see onednn.h); anything else is left to the f32 impls. */
static bool is_int8(const op_ctx *ctx) { return onednn_glue_prec_is(ctx, OP_PREC_INT8); }

static bool matmul_onednn_int8_supports(const op_ctx *ctx, const op_tensor *in, int n_in,
                                        const op_tensor *out, int n_out) {
    return is_int8(ctx) && in[1].data && in[1].shape.rank == 2 &&
           matmul_supports(ctx, in, n_in, out, n_out);
}
static mopt_status matmul_onednn_int8_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                                              const op_tensor *out, int n_out, void **state) {
    return onednn_glue_mm_int8_or_step_aside(matmul_prepare_p(ctx, in, ONEDNN_INT8, false, state),
                                             state);
}
static mopt_status matmul_onednn_int8_run(const op_ctx *ctx, const op_tensor *in, int n_in,
                                          op_tensor *out, int n_out) {
    return matmul_run_p(ctx, in, n_in, out, n_out, ONEDNN_INT8, false);
}

ONEDNN_GLUE_IMPL_TABLE(matmul_onednn_int8, "onednn-int8", onednn_glue_mm_state_release)

/* ---- Gemm --------------------------------------------------------------- */

/* A (M x K, stored K x M when ta) and B (K x N, stored N x K when tb). */
static void gemm_geometry(int64_t M, int64_t N, int64_t K, bool ta, bool tb,
                          onednn_matmul_desc *d) {
    int64_t ad[2] = {M, K}, bd[2] = {K, N}, yd[2] = {M, N};
    onednn_td_dense(&d->a, 2, ad);
    onednn_td_dense(&d->b, 2, bd);
    onednn_td_dense(&d->y, 2, yd);
    if (ta) d->a.strides[0] = 1, d->a.strides[1] = M;
    if (tb) d->b.strides[0] = 1, d->b.strides[1] = K;
    d->alpha = 1.f;
}

static bool gemm_c_is_bias(const op_tensor *c, int64_t N) {
    const ir_shape *s = &c->shape;
    if (s->rank == 1) return s->syms[0] == 0 && s->dims[0] == N;
    return s->rank == 2 && s->syms[0] == 0 && s->dims[0] == 1 && s->syms[1] == 0 && s->dims[1] == N;
}

static bool gemm_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                          int n_out) {
    bool has_c = n_in > 2 && in[2].dtype != MOPT_DTYPE_UNDEFINED;
    return onednn_available() && is_f32(&in[0]) && is_f32(&in[1]) && (!has_c || is_f32(&in[2]));
}

static mopt_status gemm_prepare_p(const op_ctx *ctx, const op_tensor *in, onednn_prec prec,
                                  bool plain, void **state) {
    *state = NULL;
    bool ta = ir_node_attr_int(ctx->node, "transA", 0) != 0;
    bool tb = ir_node_attr_int(ctx->node, "transB", 0) != 0;
    const ir_shape *a = &in[0].shape, *b = &in[1].shape;
    if (!in[1].data || b->rank != 2 || a->rank != 2) return MOPT_OK;
    int64_t K = b->dims[tb ? 1 : 0], N = b->dims[tb ? 0 : 1];
    int64_t M = dim_or(a, ta ? 1 : 0, 128);
    onednn_matmul_desc d;
    memset(&d, 0, sizeof d);
    if (M <= 0 || N <= 0 || K <= 0) return MOPT_OK;
    gemm_geometry(M, N, K, ta, tb, &d);
    return onednn_glue_pack_b(&d, &in[1], prec, plain, state);
}

static mopt_status gemm_run_p(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out, onednn_prec prec, bool plain) {
    const mm_state *s = ctx->state;
    bool ta = ir_node_attr_int(ctx->node, "transA", 0) != 0;
    bool tb = ir_node_attr_int(ctx->node, "transB", 0) != 0;
    float alpha = ir_node_attr_float(ctx->node, "alpha", 1.0f);
    float beta = ir_node_attr_float(ctx->node, "beta", 1.0f);
    bool has_c = n_in > 2 && in[2].dtype != MOPT_DTYPE_UNDEFINED && beta != 0.f;
    const ir_shape *y = &out[0].shape;
    int64_t M = y->dims[0], N = y->dims[1], K = in[0].shape.dims[ta ? 0 : 1];
    if (M == 0 || N == 0 || K == 0) return ctx->node->op->run(ctx, in, n_in, out, n_out);
    onednn_matmul_desc d;
    memset(&d, 0, sizeof d);
    gemm_geometry(M, N, K, ta, tb, &d);
    d.alpha = alpha;
    d.b_const = s != NULL;
    d.prec = prec;
    d.plain_w = plain && prec != ONEDNN_INT8;
    const float *bias = NULL;
    if (has_c && beta == 1.f && gemm_c_is_bias(&in[2], N)) {
        int64_t bd[2] = {1, N};
        onednn_td_dense(&d.bias, 2, bd);
        d.has_bias = true;
        bias = in[2].data;
    } else if (has_c) {
        ops_gemm_fill_c(&in[2], y, out[0].data);
        d.sum_beta = beta;
    }
    mopt_status st =
        onednn_matmul_run((onednn_cache **)ctx->scratch, &d, s ? s->w : NULL, in[0].data,
                          in[1].data, bias, NULL, out[0].data, ctx->threads);
    return onednn_glue_or_ref(st, ctx, in, n_in, out, n_out);
}

#define GEMM_IMPL(ident, iname, prec, plain, sup)                                                  \
    static bool ident##_supports(const op_ctx *ctx, const op_tensor *in, int n_in,                 \
                                 const op_tensor *out, int n_out) {                                \
        return (sup) && gemm_supports(ctx, in, n_in, out, n_out);                                  \
    }                                                                                              \
    static mopt_status ident##_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,           \
                                       const op_tensor *out, int n_out, void **state) {            \
        mopt_status st = gemm_prepare_p(ctx, in, prec, plain, state);                              \
        return plain ? st : onednn_glue_mm_packed_or_step_aside(st, state);                        \
    }                                                                                              \
    static mopt_status ident##_run(const op_ctx *ctx, const op_tensor *in, int n_in,               \
                                   op_tensor *out, int n_out) {                                    \
        return gemm_run_p(ctx, in, n_in, out, n_out, prec, plain);                                 \
    }                                                                                              \
    ONEDNN_GLUE_IMPL_TABLE(ident, iname, onednn_glue_mm_state_release)

GEMM_IMPL(gemm_onednn, "onednn", ONEDNN_F32, true, true)
GEMM_IMPL(gemm_onednn_packed, "onednn-packed", ONEDNN_F32, false, prepack_level(ctx) && in[1].data)
GEMM_IMPL(gemm_onednn_bf16, "onednn-bf16", ONEDNN_BF16, true, is_bf16(ctx))
GEMM_IMPL(gemm_onednn_bf16_packed, "onednn-bf16-packed", ONEDNN_BF16, false,
          is_bf16(ctx) && prepack_level(ctx) && in[1].data)

static bool gemm_onednn_int8_supports(const op_ctx *ctx, const op_tensor *in, int n_in,
                                      const op_tensor *out, int n_out) {
    /* C only as a bias along N (the int8 epilogue adds nothing else) */
    bool has_c = n_in > 2 && in[2].dtype != MOPT_DTYPE_UNDEFINED;
    float beta = ir_node_attr_float(ctx->node, "beta", 1.0f);
    bool tb = ir_node_attr_int(ctx->node, "transB", 0) != 0;
    const ir_shape *b = &in[1].shape;
    if (has_c && beta != 0.f &&
        (beta != 1.f || b->rank != 2 || !gemm_c_is_bias(&in[2], b->dims[tb ? 0 : 1])))
        return false;
    return is_int8(ctx) && in[1].data && ir_node_attr_int(ctx->node, "transA", 0) == 0 &&
           gemm_supports(ctx, in, n_in, out, n_out);
}
static mopt_status gemm_onednn_int8_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                                            const op_tensor *out, int n_out, void **state) {
    return onednn_glue_mm_int8_or_step_aside(gemm_prepare_p(ctx, in, ONEDNN_INT8, false, state),
                                             state);
}
static mopt_status gemm_onednn_int8_run(const op_ctx *ctx, const op_tensor *in, int n_in,
                                        op_tensor *out, int n_out) {
    return gemm_run_p(ctx, in, n_in, out, n_out, ONEDNN_INT8, false);
}

ONEDNN_GLUE_IMPL_TABLE(gemm_onednn_int8, "onednn-int8", onednn_glue_mm_state_release)

#else
typedef int matmul_onednn_unused; /* ISO C forbids an empty translation unit */
#endif
