/*
 * matmul_openblas.c — MatMul, Gemm and mopt.FusedMatMul on OpenBLAS
 * (kernels/openblas): the node's product as kernels.h's batched GEMM
 * (kn_gemm, matmul.h) run by oblas_gemm_batched, one cblas_sgemm per batch
 * matrix (the batch dims broadcast by strides, as in the reference); Gemm's
 * C broadcast into the output first and accumulated with beta;
 * FusedMatMul's epilogue is the reference one. Sizes beyond BLAS's 32-bit
 * ints and empty problems are declined (MOPT_ERR_UNSUPPORTED, nothing
 * written): the executor runs the reference. No allocation per run (unlike
 * oneDNN's execute).
 */
#include "mopt_config.h"
#include "ops/impls.h"

#ifdef MOPT_HAVE_OPENBLAS
#include <string.h>

#include "core/log.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/openblas/oblas.h"
#include "ops/fused.h"
#include "ops/kvcache.h"
#include "ops/matmul.h"

static bool is_f32(const op_tensor *t) { return t->dtype == MOPT_DTYPE_F32; }

static bool empty(const kn_gemm *g) { return g->M == 0 || g->N == 0 || g->K == 0; }

/* The op_impl fields every impl here shares: stateless, sgemm-based. */
#define OBLAS_IMPL(supports_fn, run_fn)                                                            \
    { .name = "openblas", .backend = "openblas", .supports = supports_fn, .run = run_fn }

/* MatMul, mopt.CacheMatMul: A and B f32. */
static bool ab_f32_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                            int n_out) {
    return is_f32(&in[0]) && is_f32(&in[1]);
}

/* g on in[0] (A), in[1] (B) into out[0]; UNSUPPORTED when BLAS declines. */
static mopt_status run_gemm(const op_ctx *ctx, const kn_gemm *g, const op_tensor *in,
                            op_tensor *out) {
    return oblas_gemm_batched(g, in[0].data, in[1].data, out[0].data, ctx->threads)
               ? MOPT_OK
               : MOPT_ERR_UNSUPPORTED;
}

static mopt_status matmul_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    kn_gemm g;
    if (!ops_matmul_gemm(&in[0].shape, false, &in[1].shape, false, &g) || empty(&g))
        return MOPT_ERR_UNSUPPORTED;
    ops_matmul_vector_b_as_row(&in[1].shape, &g);
    return run_gemm(ctx, &g, in, out);
}

const op_impl ops_impl_matmul_openblas = OBLAS_IMPL(ab_f32_supports, matmul_run);

static bool gemm_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                          int n_out) {
    bool has_c = op_has_input(in, n_in, 2);
    return is_f32(&in[0]) && is_f32(&in[1]) && (!has_c || is_f32(&in[2]));
}

static mopt_status gemm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    const gemm_params *p = ctx->params;
    bool has_c = op_has_input(in, n_in, 2);
    kn_gemm g;
    if (!ops_matmul_gemm(&in[0].shape, p->trans_a, &in[1].shape, p->trans_b, &g) || empty(&g) ||
        !oblas_fits(g.M * g.K, g.K * g.N, g.M * g.N) || !oblas_fits(g.lda, g.ldb, g.ldc) ||
        !oblas_fits(g.M, g.N, g.K))
        return MOPT_ERR_UNSUPPORTED;
    g.alpha = p->alpha;
    g.beta = p->beta;
    if (has_c && g.beta != 0.f)
        ops_gemm_fill_c(&in[2], &out[0].shape, out[0].data);
    else
        g.beta = 0.f;
    return run_gemm(ctx, &g, in, out);
}

const op_impl ops_impl_gemm_openblas = OBLAS_IMPL(gemm_supports, gemm_run);

/* ---- mopt.FusedMatMul: sgemm per batch matrix, then the reference epilogue */

static bool fmm_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                         int n_out) {
    for (int k = 0; k < n_in && k < 4; k++)
        if (in[k].dtype != MOPT_DTYPE_UNDEFINED && in[k].dtype != MOPT_DTYPE_F32) return false;
    return in[0].shape.rank >= 2 && in[1].shape.rank >= 2;
}

static mopt_status fmm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    const fused_matmul_params *p = ctx->params;
    kn_gemm g;
    if (!ops_matmul_gemm(&in[0].shape, p->trans_a, &in[1].shape, p->trans_b, &g) || empty(&g))
        return MOPT_ERR_UNSUPPORTED;
    g.alpha = p->alpha;
    mopt_status st = run_gemm(ctx, &g, in, out);
    if (st) return st;
    ops_fused_matmul_epilogue(p, in, n_in, out);
    return MOPT_OK;
}

const op_impl ops_impl_fused_matmul_openblas = OBLAS_IMPL(fmm_supports, fmm_run);

/* mopt.CacheMatMul: each head of the token-major cache at row stride
 * heads * head_dim, as oblas_gemm_batched's ldb */
static mopt_status cmm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    kn_gemm g;
    ops_cache_matmul_gemm(ctx->params, &in[0].shape, &in[1].shape, &g);
    if (empty(&g)) return MOPT_ERR_UNSUPPORTED;
    if (g.M == 1 && oblas_gemv_batched(&g, in[0].data, in[1].data, out[0].data, ctx->threads))
        return MOPT_OK; /* a decode step: one query row per head */
    return run_gemm(ctx, &g, in, out);
}

const op_impl ops_impl_cache_matmul_openblas = OBLAS_IMPL(ab_f32_supports, cmm_run);

void ops_openblas_log_core(int n_nodes) {
    bool old = oblas_core_sse_only() && cpu_kernels_for("avx2") != NULL;
    mopt_log(old ? MOPT_LOG_WARNING : MOPT_LOG_INFO,
             "mopt: OpenBLAS runs %d node%s with its '%s' kernels%s", n_nodes,
             n_nodes == 1 ? "" : "s", oblas_core(),
             old ? ": SSE-era kernels on a CPU with AVX2 or AVX-512, slower than they should be "
                   "(this OpenBLAS does not know the CPU); OPENBLAS_CORETYPE=SkylakeX or Haswell, "
                   "set before the process starts, picks its vector kernels"
                 : "");
}

#else
typedef int matmul_openblas_unused; /* ISO C forbids an empty translation unit */
#endif
