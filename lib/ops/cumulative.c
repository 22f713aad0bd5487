/*
 * cumulative.c — the "cumulative" operator family: running sums and
 * products along an axis (CumSum, CumProd; exclusive and reverse), on f32
 * f64 i32 i64 u32 u64 (CumSum also on narrower ints and halves through the
 * dtype bridge). Math in kernels/ref/cumulative.c.
 */
#include <string.h>

#include "kernels/ref/ref_cumulative.h"
#include "ops/bridge.h"
#include "ops/op_common.h"
#include "ops/ops.h"

/* ---- CumSum / CumProd -------------------------------------------------------- */

static const mopt_dtype k_cum[] = {MOPT_DTYPE_F32, MOPT_DTYPE_F64, MOPT_DTYPE_I32,
                                   MOPT_DTYPE_I64, MOPT_DTYPE_U32, MOPT_DTYPE_U64};

typedef struct cum_params {
    bool prod; /* CumProd; else CumSum */
    bool exclusive, reverse;
} cum_params;

static const op_attr_spec k_cum_attrs[] = {
    OP_ATTR_NZ(cum_params, exclusive, "exclusive", 0),
    OP_ATTR_NZ(cum_params, reverse, "reverse", 0),
};

static mopt_status cum_kind(const op_ctx *ctx, void *params) {
    ((cum_params *)params)->prod = strcmp(ctx->node->op_type, "CumProd") == 0;
    return MOPT_OK;
}

static mopt_status cum_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    mopt_status st;
    if ((st = op_expect_dtype(ctx, &in[0], 0, k_cum, OP_COUNT(k_cum))) ||
        (st = op_expect_index(ctx, &in[1], 1)))
        return st;
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

static mopt_status cum_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    int64_t axis;
    int32_t ax;
    mopt_status st;
    if ((st = op_read_one_int(ctx, &in[1], "axis", &axis)) ||
        (st = op_axis(ctx, axis, in[0].shape.rank, "axis", &ax)))
        return st;
    int64_t o, l, i;
    op_axis_split(&in[0].shape, ax, &o, &l, &i);
    const cum_params *p = ctx->params;
    if (ref_cumulative(in[0].dtype, p->prod, p->exclusive, p->reverse, o, l, i, in[0].data,
                       out[0].data))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "not implemented for %s",
                       mopt_dtype_name(in[0].dtype));
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"CumSum", "", 2, 2, 1, 1, cum_infer, cum_run, NULL, OP_ATTRS(cum_params, k_cum_attrs),
     .parse = cum_kind, .bridge = &ops_bridge_wrap_arith},
    {"CumProd", "", 2, 2, 1, 1, cum_infer, cum_run, NULL, OP_ATTRS(cum_params, k_cum_attrs),
     .parse = cum_kind, .bridge = &ops_bridge_float},
};

OP_FAMILY(cumulative, k_ops)
