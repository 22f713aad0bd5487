/*
 * matmul.c — the "matmul" operator family: MatMul (numpy matmul semantics:
 * 1-D operands promoted then their axis removed, broadcasting of the leading
 * batch dims) and Gemm (transA/transB, alpha, beta, optional C broadcast to
 * (M, N)). Shape/type inference, attribute parsing, and the description of
 * a product as kernels.h's batched GEMM (kn_gemm, see matmul.h) that the
 * reference runs with ref_gemm_batched_* (kernels/ref/matmul.c) and the
 * backend impls with their own providers.
 */
#include <inttypes.h>
#include <string.h>

#include "kernels/ref/ref_matmul.h"
#include "ops/bridge.h"
#include "ops/impls.h"
#include "ops/matmul.h"
#include "ops/op_common.h"
#include "ops/ops.h"

static const mopt_dtype k_float_types[] = {MOPT_DTYPE_F32, MOPT_DTYPE_F64};

/* The leading batch dims of a matmul operand: all but the last two axes. */
static void batch_shape(const ir_shape *s, ir_shape *b) {
    memset(b, 0, sizeof *b);
    b->rank = s->rank > 2 ? s->rank - 2 : 0;
    for (int32_t i = 0; i < b->rank; i++)
        ops_copy_dim(b, i, s, i);
}

static mopt_status check_float_pair(const op_ctx *ctx, const op_tensor *in, int i, int j) {
    mopt_status st = op_expect_dtype(ctx, &in[i], i, k_float_types, 2);
    if (!st) st = op_expect_dtype(ctx, &in[j], j, k_float_types, 2);
    if (!st) st = op_same_dtype(ctx, in, i, j);
    return st;
}

mopt_status ops_matmul_batch_dims(const op_ctx *ctx, const ir_shape *a, const ir_shape *b,
                                  ir_shape *batch) {
    ir_shape ba, bb;
    batch_shape(a, &ba);
    batch_shape(b, &bb);
    if (op_broadcast(ctx, &ba, &bb, batch) == MOPT_OK) return MOPT_OK;
    char sa[IR_SHAPE_STR_CAP], sb[IR_SHAPE_STR_CAP];
    return op_fail(ctx, MOPT_ERR_SHAPE, "batch dimensions of A %s and B %s do not broadcast",
                   op_shape_str(ctx, a, sa), op_shape_str(ctx, b, sb));
}

mopt_status ops_matmul_check_k(const op_ctx *ctx, const ir_shape *a, bool ta, const ir_shape *b,
                               bool tb) {
    int32_t ak = ta ? a->rank - 2 : a->rank - 1, bk = tb ? b->rank - 1 : b->rank - 2;
    if (a->syms[ak] == 0 && b->syms[bk] == 0 && a->dims[ak] != b->dims[bk]) {
        char sa[IR_SHAPE_STR_CAP], sb[IR_SHAPE_STR_CAP];
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "inner dimensions differ: A %s (transA=%d) has K=%" PRId64
                       " but B %s (transB=%d) has K=%" PRId64,
                       op_shape_str(ctx, a, sa), (int)ta, a->dims[ak], op_shape_str(ctx, b, sb),
                       (int)tb, b->dims[bk]);
    }
    return MOPT_OK;
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
    ir_shape res;
    if ((st = ops_matmul_batch_dims(ctx, a, b, &res))) return st;
    if (a->rank >= 2) ops_copy_dim(&res, res.rank++, a, a->rank - 2);
    if (b->rank >= 2) ops_copy_dim(&res, res.rank++, b, b->rank - 1);
    out[0].shape = res;
    return MOPT_OK;
}

bool ops_matmul_gemm(const ir_shape *a, bool trans_a, const ir_shape *b, bool trans_b, kn_gemm *g) {
    if (a->rank < 1 || b->rank < 1 || a->rank > IR_MAX_RANK || b->rank > IR_MAX_RANK) return false;
    memset(g, 0, sizeof *g);
    /* the stored matrices: a 1-D A is a row, a 1-D B a column */
    int64_t ar = a->rank >= 2 ? a->dims[a->rank - 2] : 1, ac = a->dims[a->rank - 1];
    int64_t br = b->rank >= 2 ? b->dims[b->rank - 2] : b->dims[0];
    int64_t bc = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    g->trans_a = trans_a;
    g->trans_b = trans_b;
    g->M = trans_a ? ac : ar;
    g->K = trans_a ? ar : ac;
    g->N = trans_b ? br : bc;
    if ((trans_b ? bc : br) != g->K) return false;
    g->lda = ac;
    g->ldb = bc;
    g->ldc = g->N;
    g->alpha = 1.0f;
    ir_shape ba, bb, bo;
    batch_shape(a, &ba);
    batch_shape(b, &bb);
    memset(&bo, 0, sizeof bo);
    bo.rank = ba.rank > bb.rank ? ba.rank : bb.rank;
    for (int32_t i = 0; i < bo.rank; i++) {
        int32_t ia = i - (bo.rank - ba.rank), ib = i - (bo.rank - bb.rank);
        int64_t da = ia >= 0 ? ba.dims[ia] : 1, db = ib >= 0 ? bb.dims[ib] : 1;
        if (da != db && da != 1 && db != 1) return false;
        bo.dims[i] = da == 1 ? db : da;
    }
    int64_t st_a[IR_MAX_RANK], st_b[IR_MAX_RANK], st_c[IR_MAX_RANK];
    op_broadcast_strides(&ba, &bo, st_a);
    op_broadcast_strides(&bb, &bo, st_b);
    op_strides(&bo, st_c);
    g->batch_rank = bo.rank;
    for (int32_t i = 0; i < bo.rank; i++) {
        g->batch[i] = bo.dims[i];
        g->a_bs[i] = st_a[i] * g->M * g->K;
        g->b_bs[i] = st_b[i] * g->K * g->N;
        g->c_bs[i] = st_c[i] * g->M * g->N;
    }
    return true;
}

void ops_matmul_vector_b_as_row(const ir_shape *b, kn_gemm *g) {
    if (b->rank != 1) return;
    g->trans_b = true;
    g->ldb = g->K;
}

static mopt_status matmul_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    kn_gemm g;
    if (!ops_matmul_gemm(&in[0].shape, false, &in[1].shape, false, &g))
        return op_fail(ctx, MOPT_ERR_INTERNAL, "shapes do not make a matrix product");
    ops_matmul_vector_b_as_row(&in[1].shape, &g);
    if (out[0].dtype == MOPT_DTYPE_F32)
        ref_gemm_batched_f32(&g, in[0].data, in[1].data, out[0].data);
    else
        ref_gemm_batched_f64(&g, in[0].data, in[1].data, out[0].data);
    return MOPT_OK;
}

/* ---- Gemm --------------------------------------------------------------- */

static mopt_status gemm_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    mopt_status st = check_float_pair(ctx, in, 0, 1);
    bool has_c = op_has_input(in, n_in, 2);
    if (!st && has_c) st = check_float_pair(ctx, in, 0, 2);
    if (st) return st;
    if (n_in < 3 && ctx->opset < 11)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "input C is required before opset 11");
    out[0].dtype = in[0].dtype != MOPT_DTYPE_UNDEFINED ? in[0].dtype : in[1].dtype;
    const gemm_params *p = ctx->params;
    bool ta = p->trans_a, tb = p->trans_b;
    const ir_shape *a = &in[0].shape, *b = &in[1].shape;
    char sa[IR_SHAPE_STR_CAP], sb[IR_SHAPE_STR_CAP];
    if ((a->rank >= 0 && a->rank != 2) || (b->rank >= 0 && b->rank != 2))
        return op_fail(ctx, MOPT_ERR_SHAPE, "A and B must be 2-D; A is %s and B is %s",
                       op_shape_str(ctx, a, sa), op_shape_str(ctx, b, sb));
    ir_shape y;
    memset(&y, 0, sizeof y);
    y.rank = 2;
    y.syms[0] = y.syms[1] = -1;
    if (a->rank == 2) ops_copy_dim(&y, 0, a, ta ? 1 : 0);
    if (b->rank == 2) ops_copy_dim(&y, 1, b, tb ? 0 : 1);
    if (a->rank == 2 && b->rank == 2 && (st = ops_matmul_check_k(ctx, a, ta, b, tb))) return st;
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

static const op_attr_spec k_gemm_attrs[] = {
    OP_ATTR_NZ(gemm_params, trans_a, "transA", 0),
    OP_ATTR_NZ(gemm_params, trans_b, "transB", 0),
    OP_ATTR_F32(gemm_params, alpha, "alpha", 1.0f),
    OP_ATTR_F32(gemm_params, beta, "beta", 1.0f),
};

static mopt_status gemm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    const gemm_params *p = ctx->params;
    float beta = p->beta;
    bool has_c = op_has_input(in, n_in, 2);
    const ir_shape *y = &out[0].shape;
    int64_t M = y->dims[0], N = y->dims[1];
    kn_gemm g;
    if (!ops_matmul_gemm(&in[0].shape, p->trans_a, &in[1].shape, p->trans_b, &g))
        return op_fail(ctx, MOPT_ERR_INTERNAL, "shapes do not make a matrix product");
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
    g.alpha = p->alpha;
    g.beta = beta;
    if (f32)
        ref_gemm_batched_f32(&g, in[0].data, in[1].data, out[0].data);
    else
        ref_gemm_batched_f64(&g, in[0].data, in[1].data, out[0].data);
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

static int64_t matmul_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                            int n_out) {
    return ops_matmul_flops(&in[0], false, &out[0]);
}

static int64_t gemm_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                          int n_out) {
    const gemm_params *p = ctx->params;
    return ops_matmul_flops(&in[0], p->trans_a, &out[0]);
}

void ops_gemm_fill_c(const op_tensor *c, const ir_shape *y, float *out) {
    int64_t cs[IR_MAX_RANK];
    op_broadcast_strides(&c->shape, y, cs);
    const float *src = c->data;
    int64_t M = y->dims[0], N = y->dims[1];
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++)
            out[i * N + j] = src[i * cs[0] + j * cs[1]];
}

static const op_def k_ops[] = {
    {"MatMul", "", 2, 2, 1, 1, matmul_infer, matmul_run, ops_matmul_impls, .flops = matmul_flops,
     .bridge = &ops_bridge_float},
    {"Gemm", "", 2, 3, 1, 1, gemm_infer, gemm_run, ops_gemm_impls,
     OP_ATTRS(gemm_params, k_gemm_attrs), .flops = gemm_flops, .bridge = &ops_bridge_float},
};

OP_FAMILY(matmul, k_ops)
