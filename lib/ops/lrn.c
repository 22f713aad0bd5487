/*
 * lrn.c — LRN, local response normalization: each element divided by a
 * power of the sum of squares over `size` neighbouring channels of X
 * [N, C, ...] (f32). Its own family until the normalization families are
 * regrouped. Math in kernels/ref/lrn.c.
 */
#include "kernels/ref/ref_lrn.h"
#include "ops/bridge.h"
#include "ops/op_common.h"
#include "ops/ops.h"

/* ---- LRN ------------------------------------------------------------------------------- */

typedef struct lrn_params {
    int64_t size;
    float alpha, beta, bias;
} lrn_params;

static const op_attr_spec k_lrn_attrs[] = {
    OP_ATTR_I64(lrn_params, size, "size", 0),
    OP_ATTR_F32(lrn_params, alpha, "alpha", 1e-4f),
    OP_ATTR_F32(lrn_params, beta, "beta", 0.75f),
    OP_ATTR_F32(lrn_params, bias, "bias", 1.0f),
};

static mopt_status lrn_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    const ir_shape *s = &in[0].shape;
    const lrn_params *p = ctx->params;
    int64_t size = p->size;
    if (s->rank < 2 || size <= 0)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "needs X [N, C, ...] and size > 0");
    int64_t sp = 1;
    for (int32_t a = 2; a < s->rank; a++)
        sp *= s->dims[a];
    ref_lrn(s->dims[0], s->dims[1], sp, size, p->alpha, p->beta, p->bias, in[0].data, out[0].data);
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"LRN", "", 1, 1, 1, 1, op_infer_all_f32_like_input0, lrn_run, NULL,
     OP_ATTRS(lrn_params, k_lrn_attrs), .bridge = &ops_bridge_float},
};

OP_FAMILY(lrn, k_ops)
