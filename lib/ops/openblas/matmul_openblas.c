/*
 * matmul_openblas.c — MatMul and Gemm on OpenBLAS (kernels/openblas): f32
 * cblas_sgemm, one call per batch matrix for MatMul (the batch dims
 * broadcast by strides, as in the reference), Gemm's C broadcast into the
 * output first and accumulated with beta; mopt.FusedMatMul as sgemm per
 * batch matrix followed by the reference epilogue. Sizes beyond BLAS's
 * 32-bit ints and empty problems go to the reference run. No allocation
 * per run (unlike oneDNN's execute).
 */
#include "mopt_config.h"
#include "ops/impls.h"

#ifdef MOPT_HAVE_OPENBLAS
#include <string.h>

#include "kernels/openblas/oblas.h"
#include "ops/fused.h"

static bool is_f32(const op_tensor *t) { return t->dtype == MOPT_DTYPE_F32; }

static void batch_shape(const ir_shape *s, ir_shape *b) {
    memset(b, 0, sizeof *b);
    b->rank = s->rank > 2 ? s->rank - 2 : 0;
    for (int32_t i = 0; i < b->rank; i++)
        b->dims[i] = s->dims[i];
}

static bool matmul_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                            int n_out) {
    return is_f32(&in[0]) && is_f32(&in[1]);
}

static mopt_status matmul_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    const ir_shape *a = &in[0].shape, *b = &in[1].shape, *y = &out[0].shape;
    int64_t M = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
    int64_t K = a->dims[a->rank - 1];
    int64_t N = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    if (M == 0 || N == 0 || K == 0 || !oblas_fits(M, N, K) || !oblas_fits(M * K, K * N, M * N))
        return ctx->node->op->run(ctx, in, n_in, out, n_out);
    bool transB = b->rank == 1; /* a K x 1 column read as the transpose of a row */
    int64_t ldb = transB ? K : N;
    ir_shape ba, bb, bo;
    batch_shape(a, &ba);
    batch_shape(b, &bb);
    memset(&bo, 0, sizeof bo);
    bo.rank = y->rank - (a->rank >= 2) - (b->rank >= 2);
    for (int32_t i = 0; i < bo.rank; i++)
        bo.dims[i] = y->dims[i];
    int64_t st_a[IR_MAX_RANK], st_b[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
    op_broadcast_strides(&ba, &bo, st_a);
    op_broadcast_strides(&bb, &bo, st_b);
    int64_t n_batch = ir_shape_numel(&bo);
    if (n_batch < 0) return op_fail(ctx, MOPT_ERR_INTERNAL, "batch shape is not concrete");
    oblas_threads(ctx->threads);
    int64_t off_a = 0, off_b = 0;
    for (int64_t t = 0; t < n_batch; t++) {
        const float *pa = (const float *)in[0].data + off_a * M * K;
        const float *pb = (const float *)in[1].data + off_b * K * N;
        float *pc = (float *)out[0].data + t * M * N;
        oblas_sgemm(M, N, K, pa, K, false, pb, ldb, transB, pc, N, 1.0f, 0.0f);
        for (int32_t d = bo.rank - 1; d >= 0; d--) {
            off_a += st_a[d];
            off_b += st_b[d];
            if (++idx[d] < bo.dims[d]) break;
            off_a -= st_a[d] * bo.dims[d];
            off_b -= st_b[d] * bo.dims[d];
            idx[d] = 0;
        }
    }
    return MOPT_OK;
}

const op_impl ops_impl_matmul_openblas = {
    .name = "openblas",
    .backend = "openblas",
    .supports = matmul_supports,
    .run = matmul_run,
};

static bool gemm_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                          int n_out) {
    bool has_c = n_in > 2 && in[2].dtype != MOPT_DTYPE_UNDEFINED;
    return is_f32(&in[0]) && is_f32(&in[1]) && (!has_c || is_f32(&in[2]));
}

static mopt_status gemm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    bool ta = ir_node_attr_int(ctx->node, "transA", 0) != 0;
    bool tb = ir_node_attr_int(ctx->node, "transB", 0) != 0;
    float alpha = ir_node_attr_float(ctx->node, "alpha", 1.0f);
    float beta = ir_node_attr_float(ctx->node, "beta", 1.0f);
    bool has_c = n_in > 2 && in[2].dtype != MOPT_DTYPE_UNDEFINED;
    const ir_shape *a = &in[0].shape, *b = &in[1].shape, *y = &out[0].shape;
    int64_t M = y->dims[0], N = y->dims[1], K = a->dims[ta ? 0 : 1];
    if (M == 0 || N == 0 || K == 0 || !oblas_fits(M, N, K) ||
        !oblas_fits(a->dims[1], b->dims[1], M * N))
        return ctx->node->op->run(ctx, in, n_in, out, n_out);
    if (has_c && beta != 0.f)
        ops_gemm_fill_c(&in[2], y, out[0].data);
    else
        beta = 0.f;
    oblas_threads(ctx->threads);
    oblas_sgemm(M, N, K, in[0].data, a->dims[1], ta, in[1].data, b->dims[1], tb, out[0].data, N,
                alpha, beta);
    return MOPT_OK;
}

const op_impl ops_impl_gemm_openblas = {
    .name = "openblas",
    .backend = "openblas",
    .supports = gemm_supports,
    .run = gemm_run,
};

/* ---- mopt.FusedMatMul: sgemm per batch matrix, then the reference epilogue */

static bool fmm_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                         int n_out) {
    ref_act_params act;
    if (fused_read_activation(ctx, &act)) {
        mopt_clear_error();
        return false;
    }
    for (int k = 0; k < n_in && k < 4; k++)
        if (in[k].dtype != MOPT_DTYPE_UNDEFINED && in[k].dtype != MOPT_DTYPE_F32) return false;
    return in[0].shape.rank >= 2 && in[1].shape.rank >= 2;
}

static mopt_status fmm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    ref_act_params act;
    mopt_status st = fused_read_activation(ctx, &act);
    if (st) return st;
    bool ta = ir_node_attr_int(ctx->node, "transA", 0) != 0;
    bool tb = ir_node_attr_int(ctx->node, "transB", 0) != 0;
    float alpha = ir_node_attr_float(ctx->node, "alpha", 1.0f);
    const ir_shape *a = &in[0].shape, *b = &in[1].shape, *y = &out[0].shape;
    int64_t M = y->dims[y->rank - 2], N = y->dims[y->rank - 1];
    int64_t K = ta ? a->dims[a->rank - 2] : a->dims[a->rank - 1];
    if (M == 0 || N == 0 || K == 0 || !oblas_fits(M, N, K) || !oblas_fits(M * K, K * N, M * N))
        return ctx->node->op->run(ctx, in, n_in, out, n_out);
    int64_t lda = ta ? M : K, ldb = tb ? K : N;
    ir_shape ba, bb, bo;
    batch_shape(a, &ba);
    batch_shape(b, &bb);
    batch_shape(y, &bo);
    int64_t st_a[IR_MAX_RANK], st_b[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
    op_broadcast_strides(&ba, &bo, st_a);
    op_broadcast_strides(&bb, &bo, st_b);
    int64_t n_batch = ir_shape_numel(&bo);
    if (n_batch < 0) return op_fail(ctx, MOPT_ERR_INTERNAL, "batch shape is not concrete");
    oblas_threads(ctx->threads);
    int64_t off_a = 0, off_b = 0;
    for (int64_t t = 0; t < n_batch; t++) {
        const float *pa = (const float *)in[0].data + off_a * M * K;
        const float *pb = (const float *)in[1].data + off_b * K * N;
        oblas_sgemm(M, N, K, pa, lda, ta, pb, ldb, tb, (float *)out[0].data + t * M * N, N, alpha,
                    0.0f);
        for (int32_t d = bo.rank - 1; d >= 0; d--) {
            off_a += st_a[d];
            off_b += st_b[d];
            if (++idx[d] < bo.dims[d]) break;
            off_a -= st_a[d] * bo.dims[d];
            off_b -= st_b[d] * bo.dims[d];
            idx[d] = 0;
        }
    }
    ref_addend bias, res;
    memset(&bias, 0, sizeof bias);
    memset(&res, 0, sizeof res);
    if (n_in > 2 && in[2].dtype != MOPT_DTYPE_UNDEFINED) {
        bias.data = in[2].data;
        op_broadcast_strides(&in[2].shape, y, bias.strides);
    }
    if (n_in > 3 && in[3].dtype != MOPT_DTYPE_UNDEFINED) {
        res.data = in[3].data;
        op_broadcast_strides(&in[3].shape, y, res.strides);
    }
    ref_epilogue_f32(y->rank, y->dims, out[0].data, &bias, &res, &act);
    return MOPT_OK;
}

const op_impl ops_impl_fused_matmul_openblas = {
    .name = "openblas",
    .backend = "openblas",
    .supports = fmm_supports,
    .run = fmm_run,
};

#else
typedef int matmul_openblas_unused; /* ISO C forbids an empty translation unit */
#endif
