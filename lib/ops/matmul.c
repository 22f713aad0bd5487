/*
 * matmul.c — the "matmul" operator family: MatMul (numpy matmul semantics:
 * 1-D operands promoted then their axis removed, broadcasting of the leading
 * batch dims) and Gemm (transA/transB, alpha, beta, optional C broadcast to
 * (M, N)). Shape/type inference and attribute parsing only; the math is
 * ref_gemm_* in kernels/ref/matmul.c.
 */
#include <inttypes.h>
#include <string.h>

#include "kernels/ref/ref_matmul.h"
#include "ops/impls.h"
#include "ops/ops.h"

static const mopt_dtype k_float_types[] = {MOPT_DTYPE_F32, MOPT_DTYPE_F64};

/* Copies axis `i` (dim and symbol) of src to axis `j` of dst. */
static void copy_dim(ir_shape *dst, int32_t j, const ir_shape *src, int32_t i) {
    dst->dims[j] = src->dims[i];
    dst->syms[j] = src->syms[i];
}

/* The leading batch dims of a matmul operand: all but the last two axes. */
static void batch_shape(const ir_shape *s, ir_shape *b) {
    memset(b, 0, sizeof *b);
    b->rank = s->rank > 2 ? s->rank - 2 : 0;
    for (int32_t i = 0; i < b->rank; i++)
        copy_dim(b, i, s, i);
}

static mopt_status check_float_pair(const op_ctx *ctx, const op_tensor *in, int i, int j) {
    mopt_status st = op_expect_dtype(ctx, &in[i], i, k_float_types, 2);
    if (!st) st = op_expect_dtype(ctx, &in[j], j, k_float_types, 2);
    if (!st) st = op_same_dtype(ctx, in, i, j);
    return st;
}

/* ---- MatMul ------------------------------------------------------------- */

static mopt_status matmul_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    mopt_status st = check_float_pair(ctx, in, 0, 1);
    if (st) return st;
    out[0].dtype = in[0].dtype != MOPT_DTYPE_UNDEFINED ? in[0].dtype : in[1].dtype;
    const ir_shape *a = &in[0].shape, *b = &in[1].shape;
    char sa[IR_SHAPE_STR_CAP], sb[IR_SHAPE_STR_CAP];
    if (a->rank == 0 || b->rank == 0)
        return op_fail(ctx, MOPT_ERR_SHAPE, "operands must have rank >= 1; A is %s and B is %s",
                       op_shape_str(ctx, a, sa), op_shape_str(ctx, b, sb));
    if (a->rank < 0 || b->rank < 0) {
        ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    int32_t ka = a->rank - 1, kb = b->rank == 1 ? 0 : b->rank - 2;
    if (a->syms[ka] == 0 && b->syms[kb] == 0 && a->dims[ka] != b->dims[kb])
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "inner dimensions differ: A %s has K=%" PRId64 " but B %s has K=%" PRId64,
                       op_shape_str(ctx, a, sa), a->dims[ka], op_shape_str(ctx, b, sb),
                       b->dims[kb]);
    ir_shape ba, bb, res;
    batch_shape(a, &ba);
    batch_shape(b, &bb);
    st = op_broadcast(ctx, &ba, &bb, &res);
    if (st)
        return op_fail(ctx, MOPT_ERR_SHAPE, "batch dimensions of A %s and B %s do not broadcast",
                       op_shape_str(ctx, a, sa), op_shape_str(ctx, b, sb));
    if (a->rank >= 2) copy_dim(&res, res.rank++, a, a->rank - 2);
    if (b->rank >= 2) copy_dim(&res, res.rank++, b, b->rank - 1);
    out[0].shape = res;
    return MOPT_OK;
}

static mopt_status matmul_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    const ir_shape *a = &in[0].shape, *b = &in[1].shape, *y = &out[0].shape;
    int64_t M = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
    int64_t K = a->dims[a->rank - 1];
    int64_t N = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    /* a 1-D B is a K x 1 column: read it as the transpose of a 1 x K row so
     * that the kernel takes its dot-product path */
    bool transB = b->rank == 1;
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
    int64_t off_a = 0, off_b = 0;
    for (int64_t t = 0; t < n_batch; t++) {
        if (out[0].dtype == MOPT_DTYPE_F32) {
            const float *pa = (const float *)in[0].data + off_a * M * K;
            const float *pb = (const float *)in[1].data + off_b * K * N;
            float *pc = (float *)out[0].data + t * M * N;
            ref_gemm_f32(M, N, K, pa, K, false, pb, ldb, transB, pc, N, 1.0f, 0.0f);
        } else {
            const double *pa = (const double *)in[0].data + off_a * M * K;
            const double *pb = (const double *)in[1].data + off_b * K * N;
            double *pc = (double *)out[0].data + t * M * N;
            ref_gemm_f64(M, N, K, pa, K, false, pb, ldb, transB, pc, N, 1.0, 0.0);
        }
        /* advance the batch index, odometer style */
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

/* ---- Gemm --------------------------------------------------------------- */

static mopt_status gemm_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    mopt_status st = check_float_pair(ctx, in, 0, 1);
    bool has_c = n_in > 2 && in[2].dtype != MOPT_DTYPE_UNDEFINED;
    if (!st && has_c) st = check_float_pair(ctx, in, 0, 2);
    if (st) return st;
    if (n_in < 3 && ctx->opset < 11)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "input C is required before opset 11");
    out[0].dtype = in[0].dtype != MOPT_DTYPE_UNDEFINED ? in[0].dtype : in[1].dtype;
    bool ta = ir_node_attr_int(ctx->node, "transA", 0) != 0;
    bool tb = ir_node_attr_int(ctx->node, "transB", 0) != 0;
    const ir_shape *a = &in[0].shape, *b = &in[1].shape;
    char sa[IR_SHAPE_STR_CAP], sb[IR_SHAPE_STR_CAP];
    if ((a->rank >= 0 && a->rank != 2) || (b->rank >= 0 && b->rank != 2))
        return op_fail(ctx, MOPT_ERR_SHAPE, "A and B must be 2-D; A is %s and B is %s",
                       op_shape_str(ctx, a, sa), op_shape_str(ctx, b, sb));
    ir_shape y;
    memset(&y, 0, sizeof y);
    y.rank = 2;
    y.syms[0] = y.syms[1] = -1;
    if (a->rank == 2) copy_dim(&y, 0, a, ta ? 1 : 0);
    if (b->rank == 2) copy_dim(&y, 1, b, tb ? 0 : 1);
    if (a->rank == 2 && b->rank == 2) {
        int32_t ka = ta ? 0 : 1, kb = tb ? 1 : 0;
        if (a->syms[ka] == 0 && b->syms[kb] == 0 && a->dims[ka] != b->dims[kb])
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "inner dimensions differ: A %s (transA=%d) has K=%" PRId64
                           " but B %s (transB=%d) has K=%" PRId64,
                           op_shape_str(ctx, a, sa), (int)ta, a->dims[ka], op_shape_str(ctx, b, sb),
                           (int)tb, b->dims[kb]);
    }
    if (has_c && in[2].shape.rank >= 0) {
        const ir_shape *c = &in[2].shape;
        bool ok = c->rank <= 2;
        for (int32_t i = 0; ok && i < c->rank; i++) {
            int32_t j = i + 2 - c->rank;
            if (c->syms[i] == 0 && c->dims[i] == 1) continue;
            if (c->syms[i] == 0 && y.syms[j] == 0 && c->dims[i] != y.dims[j]) ok = false;
            if (c->syms[i] > 0 && y.syms[j] > 0 && c->syms[i] != y.syms[j]) ok = false;
        }
        if (!ok)
            return op_fail(ctx, MOPT_ERR_SHAPE, "C %s cannot be broadcast to the output %s",
                           op_shape_str(ctx, c, sa), op_shape_str(ctx, &y, sb));
    }
    out[0].shape = y;
    return MOPT_OK;
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
    int64_t lda = a->dims[1], ldb = b->dims[1];
    bool f32 = out[0].dtype == MOPT_DTYPE_F32;
    if (has_c) {
        /* Y = broadcast(C), then Y = alpha * A'B' + beta * Y */
        int64_t cs[IR_MAX_RANK];
        op_broadcast_strides(&in[2].shape, y, cs);
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                int64_t o = i * cs[0] + j * cs[1];
                if (f32)
                    ((float *)out[0].data)[i * N + j] = ((const float *)in[2].data)[o];
                else
                    ((double *)out[0].data)[i * N + j] = ((const double *)in[2].data)[o];
            }
    } else {
        beta = 0;
    }
    if (f32)
        ref_gemm_f32(M, N, K, in[0].data, lda, ta, in[1].data, ldb, tb, out[0].data, N, alpha,
                     beta);
    else
        ref_gemm_f64(M, N, K, in[0].data, lda, ta, in[1].data, ldb, tb, out[0].data, N, alpha,
                     beta);
    return MOPT_OK;
}

/* 2 M N K per product: the output's elements times K. */
int64_t ops_matmul_flops(const op_tensor *a, bool trans_a, const op_tensor *y) {
    int64_t numel = ir_shape_numel(&y->shape);
    if (numel <= 0 || a->shape.rank < 1) return 0;
    int64_t k = trans_a && a->shape.rank >= 2 ? a->shape.dims[a->shape.rank - 2]
                                               : a->shape.dims[a->shape.rank - 1];
    return 2 * numel * k;
}

static int64_t matmul_flops(const op_ctx *ctx, const op_tensor *in, int n_in,
                            const op_tensor *out, int n_out) {
    return ops_matmul_flops(&in[0], false, &out[0]);
}

static int64_t gemm_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                          int n_out) {
    return ops_matmul_flops(&in[0], ir_node_attr_int(ctx->node, "transA", 0) != 0, &out[0]);
}

static const op_def k_ops[] = {
    {"MatMul", "", 2, 2, 1, 1, matmul_infer, matmul_run, ops_matmul_impls, .flops = matmul_flops},
    {"Gemm", "", 2, 3, 1, 1, gemm_infer, gemm_run, ops_gemm_impls, .flops = gemm_flops},
};

const op_def *ops_family_matmul(size_t *count) {
    *count = sizeof k_ops / sizeof k_ops[0];
    return k_ops;
}
