/*
 * gemv_cpu.c — the "cpu" backend's M = 1 matrix product (GEMV) for MatMul,
 * Gemm and mopt.FusedMatMul: one row [1, K] (any leading 1s, or Gemm's
 * transposed [K, 1]) times a constant [K, N] weight, f32 at FP32 precision,
 * as in an unrolled recurrent step. kernels/cpu/gemv-*.c stream the weight
 * once (row-major, as stored; a transB weight is transposed into that
 * layout at prepare). Gemm's alpha, beta * C (C of N or 1 values) and
 * FusedMatMul's alpha and epilogue (bias, residual, activation) are applied
 * to the N outputs after. Everything else (M > 1 or unknown at load time,
 * a weight that is not constant, batched B) is left to the impls after it
 * (supports says no); a run whose shapes are not the planned ones declines.
 * At opt_level 3 (or for transB) prepare packs the weight into column
 * panels of GV_COLS, each K rows of its width stored contiguously, so that
 * a panel streams sequentially (weights beyond L2 read ~20% faster than
 * walking the row-major layout panel by panel); below it the weight is
 * read as stored.
 */
#include <string.h>

#include "core/alloc.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/fused.h"
#include "ops/matmul.h"
#include "ops/op_common.h"

#define GV_COLS 128 /* columns per panel and per parallel item */

typedef enum gv_kind { GV_MATMUL, GV_GEMM, GV_FUSED } gv_kind;

typedef struct gv_state {
    const cpu_kernels *k;
    int64_t K, N;
    float *packed; /* column panels (see the top); NULL: the weight as stored */
} gv_state;

static bool gv_f32(const op_tensor *in, int n_in, int k) {
    return k >= n_in || in[k].dtype == MOPT_DTYPE_UNDEFINED || in[k].dtype == MOPT_DTYPE_F32;
}

/* K, N and transB when the node is a covered GEMV. */
static bool gv_geometry(const op_ctx *ctx, gv_kind kind, const op_tensor *in, int n_in, int64_t *K,
                        int64_t *N, bool *trans_b) {
    const ir_shape *a = &in[0].shape, *b = &in[1].shape;
    if (ctx->precision != OP_PREC_FP32 || in[0].dtype != MOPT_DTYPE_F32 ||
        in[1].dtype != MOPT_DTYPE_F32 || !in[1].data || b->rank != 2 || a->rank < 1 ||
        !ir_shape_is_concrete(a) || !ir_shape_is_concrete(b))
        return false;
    for (int k = 2; k < n_in; k++)
        if (!gv_f32(in, n_in, k)) return false;
    bool ta = false;
    *trans_b = false;
    if (kind == GV_GEMM) {
        const gemm_params *p = ctx->params;
        ta = p->trans_a, *trans_b = p->trans_b;
        if (a->rank != 2) return false;
    } else if (kind == GV_FUSED) {
        const fused_matmul_params *p = ctx->params;
        ta = p->trans_a, *trans_b = p->trans_b;
        if (a->rank < 2) return false;
    }
    *K = ta ? a->dims[a->rank - 2] : a->dims[a->rank - 1];
    *N = *trans_b ? b->dims[0] : b->dims[1];
    int64_t kb = *trans_b ? b->dims[1] : b->dims[0];
    if (kb != *K || *K <= 0 || *N <= 0 || ir_shape_numel(a) != *K) return false;
    if (kind == GV_GEMM && op_has_input(in, n_in, 2)) {
        int64_t nc = ir_shape_numel(&in[2].shape);
        if (!ir_shape_is_concrete(&in[2].shape) || (nc != 1 && nc != *N)) return false;
        if (nc == *N && in[2].shape.rank >= 1 && in[2].shape.dims[in[2].shape.rank - 1] != *N)
            return false; /* [N, 1] would not broadcast to [1, N] */
    }
    return true;
}

static mopt_status gv_prepare(const char *isa, gv_kind kind, const op_ctx *ctx, const op_tensor *in,
                              int n_in, void **state) {
    int64_t K, N;
    bool tb;
    const cpu_kernels *k = cpu_kernels_for(isa);
    if (!k || !gv_geometry(ctx, kind, in, n_in, &K, &N, &tb)) return MOPT_ERR_UNSUPPORTED;
    gv_state *s = mopt_calloc(1, sizeof *s);
    if (!s) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    s->k = k, s->K = K, s->N = N;
    if (tb || ctx->opt_level >= 3) {
        s->packed = ops_gemv_pack(in[1].data, K, N, tb);
        if (!s->packed) {
            mopt_free(s);
            return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the packed weight");
        }
    }
    *state = s;
    return MOPT_OK;
}

float *ops_gemv_pack(const float *w, int64_t K, int64_t N, bool trans) {
    float *packed = mopt_aligned_alloc((size_t)K * (size_t)N * sizeof(float));
    if (!packed) return NULL;
    for (int64_t n0 = 0; n0 < N; n0 += GV_COLS) {
        int64_t wd = N - n0 < GV_COLS ? N - n0 : GV_COLS;
        float *panel = packed + n0 * K;
        for (int64_t kk = 0; kk < K; kk++)
            for (int64_t c = 0; c < wd; c++)
                panel[kk * wd + c] = trans ? w[(n0 + c) * K + kk] : w[kk * N + n0 + c];
    }
    return packed;
}

static void gv_release(void *state) {
    gv_state *s = state;
    if (s) mopt_aligned_free(s->packed);
    mopt_free(s);
}

typedef struct gv_job {
    const gv_state *s;
    const float *x, *b;
    float *y;
} gv_job;

/* Column panels [lo, hi). */
static void gv_cols(void *arg, int64_t lo, int64_t hi) {
    const gv_job *j = arg;
    const gv_state *s = j->s;
    int64_t n0 = lo * GV_COLS, e = hi * GV_COLS < s->N ? hi * GV_COLS : s->N;
    if (!s->packed) {
        s->k->gemv_f32(j->x, j->b + n0, s->K, s->N, e - n0, j->y + n0);
        return;
    }
    for (; n0 < e; n0 += GV_COLS) {
        int64_t wd = e - n0 < GV_COLS ? e - n0 : GV_COLS;
        s->k->gemv_f32(j->x, j->b + n0 * s->K, s->K, wd, wd, j->y + n0);
    }
}

/* Whether this call is the product prepare planned (shapes fixed at load;
 * checked again because a run must never compute a wrong one). */
static bool gv_same(const op_ctx *ctx, const op_tensor *in, const op_tensor *out) {
    const gv_state *s = ctx->state;
    return op_numel(&in[0]) == s->K && op_numel(&in[1]) == s->K * s->N && op_numel(&out[0]) == s->N;
}

static void gv_run_panels(const gv_state *s, const float *x, const float *b, float *y,
                          int threads) {
    gv_job j = {s, x, b, y};
    int64_t items = (s->N + GV_COLS - 1) / GV_COLS, per = s->K * GV_COLS;
    cpu_parallel_for(threads, items, per >= 65536 ? 1 : 65536 / per, gv_cols, &j);
}

static void gv_product(const op_ctx *ctx, const op_tensor *in, float *y) {
    const gv_state *s = ctx->state;
    gv_run_panels(s, in[0].data, s->packed ? s->packed : in[1].data, y, ctx->threads);
}

void ops_gemv_panels(const cpu_kernels *k, const float *packed, int64_t K, int64_t N,
                     const float *x, float *y, int threads) {
    gv_state s = {k, K, N, (float *)packed};
    gv_run_panels(&s, x, packed, y, threads);
}

typedef struct gv_rows_job {
    const cpu_kernels *k;
    const float *packed, *x;
    int64_t K, N, M;
    float *y;
} gv_rows_job;

/* Column panels [lo, hi) for every row. */
static void gv_rows_cols(void *arg, int64_t lo, int64_t hi) {
    const gv_rows_job *j = arg;
    int64_t e = hi * GV_COLS < j->N ? hi * GV_COLS : j->N;
    for (int64_t n0 = lo * GV_COLS; n0 < e; n0 += GV_COLS) {
        int64_t wd = e - n0 < GV_COLS ? e - n0 : GV_COLS;
        j->k->gemv_rows_f32(j->x, j->K, j->M, j->packed + n0 * j->K, j->K, wd, wd, j->y + n0, j->N);
    }
}

void ops_gemv_panels_rows(const cpu_kernels *k, const float *packed, int64_t K, int64_t N,
                          const float *x, int64_t M, float *y, int threads) {
    if (M == 1) {
        ops_gemv_panels(k, packed, K, N, x, y, threads);
        return;
    }
    gv_rows_job j = {k, packed, x, K, N, M, y};
    int64_t items = (N + GV_COLS - 1) / GV_COLS, per = K * GV_COLS * M;
    cpu_parallel_for(threads, items, per >= 65536 ? 1 : 65536 / per, gv_rows_cols, &j);
}

static mopt_status gv_run_matmul(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    if (!gv_same(ctx, in, out)) return MOPT_ERR_UNSUPPORTED;
    gv_product(ctx, in, out[0].data);
    return MOPT_OK;
}

static mopt_status gv_run_gemm(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    if (!gv_same(ctx, in, out)) return MOPT_ERR_UNSUPPORTED;
    const gemm_params *p = ctx->params;
    const gv_state *s = ctx->state;
    float *y = out[0].data;
    gv_product(ctx, in, y);
    ops_gemv_gemm_epilogue(p, in, n_in, y, s->N);
    return MOPT_OK;
}

void ops_gemv_gemm_epilogue(const gemm_params *p, const op_tensor *in, int n_in, float *y,
                            int64_t N) {
    bool has_c = op_has_input(in, n_in, 2) && p->beta != 0.f;
    const float *c = has_c ? in[2].data : NULL;
    int64_t cs = has_c && ir_shape_numel(&in[2].shape) == N ? 1 : 0;
    if (p->alpha != 1.f || has_c)
        for (int64_t n = 0; n < N; n++)
            y[n] = p->alpha * y[n] + (has_c ? p->beta * c[n * cs] : 0.f);
}

static mopt_status gv_run_fused(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    if (!gv_same(ctx, in, out)) return MOPT_ERR_UNSUPPORTED;
    const fused_matmul_params *p = ctx->params;
    const gv_state *s = ctx->state;
    float *y = out[0].data;
    gv_product(ctx, in, y);
    if (p->alpha != 1.f)
        for (int64_t n = 0; n < s->N; n++)
            y[n] *= p->alpha;
    ops_fused_matmul_epilogue(p, in, n_in, out);
    return MOPT_OK;
}

#define GV_IMPLS(OP, KIND, RUN)                                                                    \
    static bool OP##_gv_supports(const op_ctx *ctx, const op_tensor *in, int n_in,                 \
                                 const op_tensor *out, int n_out) {                                \
        int64_t K, N;                                                                              \
        bool tb;                                                                                   \
        return gv_geometry(ctx, KIND, in, n_in, &K, &N, &tb);                                      \
    }                                                                                              \
    GV_TIER(OP, KIND, RUN, avx512)                                                                 \
    GV_TIER(OP, KIND, RUN, avx2)                                                                   \
    GV_TIER(OP, KIND, RUN, portable)
#define GV_TIER(OP, KIND, RUN, TIER)                                                               \
    static mopt_status OP##_gv_prepare_##TIER(const op_ctx *ctx, const op_tensor *in, int n_in,    \
                                              const op_tensor *out, int n_out, void **state) {     \
        return gv_prepare(#TIER, KIND, ctx, in, n_in, state);                                      \
    }                                                                                              \
    const op_impl ops_impl_cpu_gemv_##OP##_##TIER = {"cpu-gemv-" #TIER,                            \
                                                     "cpu",                                        \
                                                     OP##_gv_supports,                             \
                                                     OP##_gv_prepare_##TIER,                       \
                                                     gv_release,                                   \
                                                     RUN,                                          \
                                                     NULL,                                         \
                                                     NULL};

GV_IMPLS(matmul, GV_MATMUL, gv_run_matmul)
GV_IMPLS(gemm, GV_GEMM, gv_run_gemm)
GV_IMPLS(fused_matmul, GV_FUSED, gv_run_fused)
