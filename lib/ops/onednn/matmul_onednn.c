/*
 * matmul_onednn.c — MatMul and Gemm on oneDNN (kernels/onednn): f32, batch
 * dims with broadcasting, 1-D operands, Gemm's transA/transB as strides,
 * alpha as the output scale, C as a fused bias (the [N] case) or
 * accumulated into the output (sum post-op with scale beta). The problem is
 * the node's kn_gemm (matmul.h) given to oneDNN as a matmul descriptor
 * (onednn_matmul_geometry); the primitives are cached per session by shape.
 * Problems oneDNN refuses at run time (and empty ones) are declined
 * (MOPT_ERR_UNSUPPORTED): the executor runs the next impl, then the
 * reference.
 *
 * One impl per op; prepare picks the variant (onednn_glue.h): the weight
 * layout per opt_level (issue 5: prepacking is level 3) — B read in its
 * stored row-major layout straight from the model's buffer ("onednn"), or
 * reordered once at model build into oneDNN's preferred (blocked) layout
 * ("onednn-packed", only when that layout differs) — and the precision:
 * precision=bf16 computes in bf16 (weights converted once at build, in the
 * stored layout resp. the preferred one; activations per run) with f32
 * accumulation and outputs ("onednn-bf16", "onednn-bf16-packed");
 * precision=int8 runs dynamic int8 with constant 2-D B quantized into
 * oneDNN's layout at build, whatever the opt_level ("onednn-int8").
 */
#include "mopt_config.h"
#include "ops/impls.h"

#ifdef MOPT_HAVE_ONEDNN
#include <string.h>

#include "kernels/onednn/onednn.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/matmul.h"
#include "ops/onednn/onednn_glue.h"

static bool is_f32(const op_tensor *t) { return t->dtype == MOPT_DTYPE_F32; }

static bool rank_ok(const ir_shape *s) { return s->rank < 0 || (s->rank >= 1 && s->rank <= 12); }

static int64_t dim_or(const ir_shape *s, int32_t i, int64_t def) {
    return s->syms[i] == 0 ? s->dims[i] : def;
}

static bool empty_problem(const onednn_matmul_desc *d) {
    for (int32_t i = 0; i < d->y.ndims; i++)
        if (d->y.dims[i] == 0) return true;
    return d->a.dims[d->a.ndims - 1] == 0;
}

/* d's a, b, y, alpha for the product of concrete A and B (ops_matmul_gemm).
 * False when oneDNN cannot express it. */
static bool geometry(const ir_shape *a, bool ta, const ir_shape *b, bool tb,
                     onednn_matmul_desc *d) {
    kn_gemm g;
    return ops_matmul_gemm(a, ta, b, tb, &g) && onednn_matmul_geometry(&g, d);
}

/* ---- MatMul ------------------------------------------------------------- */

/* A and B at load time with unknown dims replaced by representative sizes
 * (rows of A 128, K and columns of B 64, batch 1; an unknown K takes the
 * other operand's). */
static void matmul_representative(const ir_shape *a, const ir_shape *b, ir_shape *ra,
                                  ir_shape *rb) {
    *ra = *a;
    *rb = *b;
    for (int32_t i = 0; i < a->rank; i++) {
        int64_t def = a->rank == 1 ? 64 : i == a->rank - 2 ? 128 : i == a->rank - 1 ? 64 : 1;
        ra->dims[i] = dim_or(a, i, def);
        ra->syms[i] = 0;
    }
    for (int32_t i = 0; i < b->rank; i++) {
        rb->dims[i] = dim_or(b, i, b->rank == 1 || i >= b->rank - 2 ? 64 : 1);
        rb->syms[i] = 0;
    }
    int32_t ka = a->rank - 1, kb = b->rank == 1 ? 0 : b->rank - 2;
    bool known_a = a->syms[ka] == 0, known_b = b->syms[kb] == 0;
    if (!known_a && known_b) ra->dims[ka] = rb->dims[kb];
    if (known_a && !known_b) rb->dims[kb] = ra->dims[ka];
}

static bool matmul_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                            int n_out) {
    return onednn_available() && is_f32(&in[0]) && is_f32(&in[1]) && rank_ok(&in[0].shape) &&
           rank_ok(&in[1].shape);
}

static mopt_status matmul_try(const op_ctx *ctx, const op_tensor *in, int n_in,
                              const op_tensor *out, const onednn_glue_variant *v,
                              onednn_weights **w) {
    onednn_matmul_desc d;
    memset(&d, 0, sizeof d);
    ir_shape ra, rb;
    mopt_status st = MOPT_OK;
    if (in[1].data && in[0].shape.rank >= 1 && in[1].shape.rank >= 1) {
        matmul_representative(&in[0].shape, &in[1].shape, &ra, &rb);
        if (geometry(&ra, false, &rb, false, &d) && !empty_problem(&d))
            st = onednn_glue_pack_b(&d, &in[1], v, w);
    }
    return onednn_glue_mm_keep(v, st, w);
}

static mopt_status matmul_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                                  const op_tensor *out, int n_out, void **state) {
    /* int8: constant 2-D B only (quantized once per column, A per run) */
    bool int8_ok = in[1].data && in[1].shape.rank == 2;
    onednn_glue_variant v[5];
    int n = onednn_glue_variants(ctx, int8_ok, in[1].data != NULL, v);
    return onednn_glue_choose(ctx, in, n_in, out, v, n, matmul_try, state);
}

static mopt_status matmul_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    onednn_matmul_desc d;
    memset(&d, 0, sizeof d);
    if (!geometry(&in[0].shape, false, &in[1].shape, false, &d) || empty_problem(&d))
        return MOPT_ERR_UNSUPPORTED;
    onednn_glue_mm_desc(ctx, &d);
    if (!onednn_glue_mm_bf16(ctx, &in[0], NULL, &out[0], &d)) return MOPT_ERR_UNSUPPORTED;
    return onednn_matmul_run((onednn_cache **)ctx->scratch, &d, onednn_glue_weights(ctx),
                             in[0].data, in[1].data, NULL, NULL, out[0].data, ctx->threads);
}

/* bf16 storage: A and Y (B stays as given) */
static bool matmul_bf16_io(const op_ctx *ctx, const op_tensor *in, int n_in, bool output, int k) {
    return onednn_glue_mm_bf16_io(ctx, output, k, -1);
}

const op_impl ops_impl_matmul_onednn =
    ONEDNN_GLUE_IMPL_BF16(matmul_supports, matmul_prepare, matmul_run, matmul_bf16_io);

/* ---- Gemm --------------------------------------------------------------- */

static bool gemm_c_is_bias(const op_tensor *c, int64_t N) {
    const ir_shape *s = &c->shape;
    if (s->rank == 1) return s->syms[0] == 0 && s->dims[0] == N;
    return s->rank == 2 && s->syms[0] == 0 && s->dims[0] == 1 && s->syms[1] == 0 && s->dims[1] == N;
}

static bool gemm_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                          int n_out) {
    bool has_c = op_has_input(in, n_in, 2);
    return onednn_available() && is_f32(&in[0]) && is_f32(&in[1]) && (!has_c || is_f32(&in[2]));
}

static mopt_status gemm_try(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                            const onednn_glue_variant *v, onednn_weights **w) {
    const gemm_params *p = ctx->params;
    const ir_shape *a = &in[0].shape, *b = &in[1].shape;
    mopt_status st = MOPT_OK;
    if (in[1].data && b->rank == 2 && a->rank == 2) {
        /* a representative A: M unknown -> 128 */
        ir_shape ra = *a;
        int32_t m = p->trans_a ? 1 : 0;
        ra.dims[m] = dim_or(a, m, 128);
        ra.syms[m] = 0;
        ra.dims[1 - m] = b->dims[p->trans_b ? 1 : 0];
        ra.syms[1 - m] = 0;
        onednn_matmul_desc d;
        memset(&d, 0, sizeof d);
        if (ra.dims[m] > 0 && b->dims[0] > 0 && b->dims[1] > 0 &&
            geometry(&ra, p->trans_a, b, p->trans_b, &d)) {
            d.alpha = 1.f; /* alpha is the run's business */
            st = onednn_glue_pack_b(&d, &in[1], v, w);
        }
    }
    return onednn_glue_mm_keep(v, st, w);
}

static mopt_status gemm_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                                const op_tensor *out, int n_out, void **state) {
    const gemm_params *p = ctx->params;
    /* int8: constant B, A not transposed, C only as a bias along N (the int8
     * epilogue adds nothing else) */
    bool has_c = op_has_input(in, n_in, 2);
    const ir_shape *b = &in[1].shape;
    bool int8_ok =
        in[1].data && !p->trans_a &&
        !(has_c && p->beta != 0.f &&
          (p->beta != 1.f || b->rank != 2 || !gemm_c_is_bias(&in[2], b->dims[p->trans_b ? 0 : 1])));
    onednn_glue_variant v[5];
    int n = onednn_glue_variants(ctx, int8_ok, in[1].data != NULL, v);
    mopt_status st = onednn_glue_choose(ctx, in, n_in, out, v, n, gemm_try, state);
    /* M = 1 at run time (a classifier head at batch 1): a GEMV on panels of
     * constant B, with C a bias, a scalar or absent */
    const ir_shape *a = &in[0].shape;
    int32_t kb = p->trans_b ? 1 : 0;
    if (!st && in[1].data && b->rank == 2 && a->rank == 2 && !p->trans_a &&
        (!has_c || p->beta == 0.f || gemm_c_is_bias(&in[2], b->dims[1 - kb]) ||
         (ir_shape_is_concrete(&in[2].shape) && ir_shape_numel(&in[2].shape) == 1)))
        st = onednn_glue_gemv_pack(ctx, *state, in[1].data, b->dims[kb], b->dims[1 - kb],
                                   p->trans_b);
    if (st) {
        onednn_glue_release(*state);
        *state = NULL;
    }
    return st;
}

/* Gemm as a GEMV (see gemm_prepare): y = alpha * x B + beta * C. */
static mopt_status gemm_gemv(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out) {
    const gemm_params *p = ctx->params;
    const onednn_glue_state *s = ctx->state;
    const ir_shape *a = &in[0].shape, *y = &out[0].shape;
    if (a->rank != 2 || a->dims[0] != 1 || a->dims[1] != s->gemv_K || y->dims[1] != s->gemv_N)
        return MOPT_ERR_UNSUPPORTED;
    onednn_glue_gemv(ctx, in[0].data, out[0].data);
    ops_gemv_gemm_epilogue(p, in, n_in, out[0].data, s->gemv_N);
    return MOPT_OK;
}

static mopt_status gemm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    const gemm_params *p = ctx->params;
    bool has_c = op_has_input(in, n_in, 2) && p->beta != 0.f;
    const ir_shape *y = &out[0].shape;
    int64_t M = y->dims[0], N = y->dims[1], K = in[0].shape.dims[p->trans_a ? 0 : 1];
    onednn_matmul_desc d;
    memset(&d, 0, sizeof d);
    if (M == 0 || N == 0 || K == 0 ||
        !geometry(&in[0].shape, p->trans_a, &in[1].shape, p->trans_b, &d))
        return MOPT_ERR_UNSUPPORTED;
    const onednn_glue_state *s = ctx->state;
    if (M == 1 && s->gemv && gemm_gemv(ctx, in, n_in, out) == MOPT_OK) return MOPT_OK;
    d.alpha = p->alpha;
    onednn_glue_mm_desc(ctx, &d);
    const float *bias = NULL;
    if (has_c && p->beta == 1.f && gemm_c_is_bias(&in[2], N)) {
        int64_t bd[2] = {1, N};
        onednn_td_dense(&d.bias, 2, bd);
        d.has_bias = true;
        bias = in[2].data;
    } else if (has_c) {
        /* a refusal below leaves Y holding C: the fallback overwrites all of it */
        ops_gemm_fill_c(&in[2], y, out[0].data);
        d.sum_beta = p->beta;
    }
    return onednn_matmul_run((onednn_cache **)ctx->scratch, &d, onednn_glue_weights(ctx),
                             in[0].data, in[1].data, bias, NULL, out[0].data, ctx->threads);
}

const op_impl ops_impl_gemm_onednn = ONEDNN_GLUE_IMPL(gemm_supports, gemm_prepare, gemm_run);

#else
typedef int matmul_onednn_unused; /* ISO C forbids an empty translation unit */
#endif
