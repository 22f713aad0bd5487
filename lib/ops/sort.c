/*
 * sort.c — the "sort" operator family: TopK (the k largest or smallest
 * values along an axis and their int64 indices, ties in index order; K as
 * an attribute before opset 10, an input since). Math in kernels/ref/sort.c.
 */
#include <inttypes.h>

#include "kernels/ref/ref_sort.h"
#include "ops/bridge.h"
#include "ops/op_common.h"
#include "ops/ops.h"

/* ---- TopK --------------------------------------------------------------------- */

static const mopt_dtype k_topk[] = {MOPT_DTYPE_F32, MOPT_DTYPE_F64, MOPT_DTYPE_I8,  MOPT_DTYPE_U8,
                                    MOPT_DTYPE_I16, MOPT_DTYPE_U16, MOPT_DTYPE_I32, MOPT_DTYPE_U32,
                                    MOPT_DTYPE_I64, MOPT_DTYPE_U64};

typedef struct topk_params {
    int64_t axis; /* normalized against the input's rank when used */
    bool largest;
    int64_t k; /* the k attribute (before opset 10; -1 when absent) */
} topk_params;

static mopt_status topk_parse(const op_ctx *ctx, void *params) {
    topk_params *p = params;
    p->axis = ir_node_attr_int(ctx->node, "axis", -1);
    p->largest = ir_node_attr_int(ctx->node, "largest", 1) != 0;
    p->k = ctx->opset < 10 ? ir_node_attr_int(ctx->node, "k", -1) : -1;
    if (ctx->opset < 10 && p->k < 0)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "attribute k must be given and >= 0 before opset 10 (k = %" PRId64 ")",
                       p->k);
    return MOPT_OK;
}

static mopt_status topk_k(const op_ctx *ctx, const op_tensor *in, int n_in, int64_t *k) {
    if (ctx->opset < 10) {
        *k = ((const topk_params *)ctx->params)->k;
        return MOPT_OK;
    }
    /* in[1] exists only when n_in > 1 (past n_in the array is not filled),
     * and at run time K must be there */
    if (n_in < 2 || (ctx->runtime && !in[1].data))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "input 'K' is required (opset %d)",
                       (int)ctx->opset);
    if (!in[1].data) {
        *k = -1;
        return MOPT_OK;
    }
    mopt_status st = op_read_one_int(ctx, &in[1], "K", k);
    if (!st && *k < 0) return op_fail(ctx, MOPT_ERR_SHAPE, "K = %" PRId64 " is negative", *k);
    return st;
}

static mopt_status topk_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    mopt_status st;
    if ((st = op_expect_dtype(ctx, &in[0], 0, k_topk, OP_COUNT(k_topk)))) return st;
    if (n_in > 1 && (st = op_expect_i64(ctx, &in[1], 1))) return st;
    out[0].dtype = in[0].dtype;
    if (n_out > 1) out[1].dtype = MOPT_DTYPE_I64;
    out[0].shape = in[0].shape;
    if (in[0].shape.rank >= 0) {
        int32_t ax;
        if ((st = op_axis(ctx, ((const topk_params *)ctx->params)->axis, in[0].shape.rank, "axis",
                          &ax)))
            return st;
        int64_t k;
        if ((st = topk_k(ctx, in, n_in, &k))) return st;
        if (k >= 0 && in[0].shape.syms[ax] == 0 && k > in[0].shape.dims[ax])
            return op_fail(ctx, MOPT_ERR_SHAPE, "K = %" PRId64 " exceeds the axis size %" PRId64, k,
                           in[0].shape.dims[ax]);
        out[0].shape.dims[ax] = k;
        out[0].shape.syms[ax] = k >= 0 ? 0 : -1;
    }
    if (n_out > 1) out[1].shape = out[0].shape;
    return MOPT_OK;
}

static mopt_status topk_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    int32_t ax;
    mopt_status st;
    if ((st =
             op_axis(ctx, ((const topk_params *)ctx->params)->axis, in[0].shape.rank, "axis", &ax)))
        return st;
    int64_t o, l, i, k = out[0].shape.dims[ax];
    op_axis_split(&in[0].shape, ax, &o, &l, &i);
    int64_t *scratch = op_work_get(ctx, 0, (size_t)(l + 1) * sizeof(int64_t));
    int64_t *idx = n_out > 1
                       ? out[1].data
                       : op_work_get(ctx, 1, (size_t)(op_numel(&out[0]) + 1) * sizeof(int64_t));
    int rc = -2;
    if (scratch && idx)
        rc = ref_topk(in[0].dtype, ((const topk_params *)ctx->params)->largest, o, l, i, k,
                      in[0].data, out[0].data, idx, scratch);
    op_work_put(ctx, scratch);
    if (n_out <= 1) op_work_put(ctx, idx);
    if (rc == -2) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    if (rc) return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "not implemented for this dtype");
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"TopK", "", 1, 2, 1, 2, topk_infer, topk_run, NULL, OP_PARAMS(topk_params, topk_parse),
     .bridge = &ops_bridge_arith},
};

OP_FAMILY(sort, k_ops)
