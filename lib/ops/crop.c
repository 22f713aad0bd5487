/*
 * crop.c — the "crop" op family: CenterCropPad (opset 18): each listed axis
 * (attribute axes, default all) of the input is centre-cropped or
 * zero-padded to the size the `shape` input gives it. Any fixed-size
 * dtype (bytes are moved); strings are not supported. Math in
 * kernels/ref/crop.c.
 */
#include <inttypes.h>
#include <string.h>

#include "kernels/ref/ref_crop.h"
#include "ops/bridge.h"
#include "ops/ops.h"

typedef struct crop_params {
    const int64_t *axes; /* NULL: every axis */
    int64_t n_axes;
} crop_params;

static mopt_status crop_parse(const op_ctx *ctx, void *params) {
    crop_params *p = params;
    if (ir_node_attr(ctx->node, "axes")) p->n_axes = ir_node_attr_ints(ctx->node, "axes", &p->axes);
    if (p->axes && p->n_axes > IR_MAX_RANK)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "axes has %" PRId64 " values; at most %d",
                       p->n_axes, IR_MAX_RANK);
    return MOPT_OK;
}

/* The axes, normalized against rank and checked for repeats; *n set. */
static mopt_status crop_axes(const op_ctx *ctx, int32_t rank, int32_t *axes, int *n) {
    const crop_params *p = ctx->params;
    if (!p->axes) {
        for (int32_t a = 0; a < rank; a++)
            axes[a] = a;
        *n = rank;
        return MOPT_OK;
    }
    bool seen[IR_MAX_RANK] = {false};
    for (int64_t i = 0; i < p->n_axes; i++) {
        mopt_status st = op_axis(ctx, p->axes[i], rank, "axes", &axes[i]);
        if (st) return st;
        if (seen[axes[i]])
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "axis %d appears twice in axes",
                           (int)axes[i]);
        seen[axes[i]] = true;
    }
    *n = (int)p->n_axes;
    return MOPT_OK;
}

static mopt_status crop_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    (void)n_in, (void)n_out;
    mopt_status st;
    if ((st = op_expect_any(ctx, &in[0], 0)) || (st = op_expect_index(ctx, &in[1], 1))) return st;
    out[0].dtype = in[0].dtype;
    const ir_shape *xs = &in[0].shape;
    if (xs->rank < 0) {
        ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    int32_t axes[IR_MAX_RANK];
    int na = 0;
    if ((st = crop_axes(ctx, xs->rank, axes, &na))) return st;
    const ir_shape *ss = &in[1].shape;
    if (ss->rank >= 0 && (ss->rank != 1 || (ss->syms[0] == 0 && ss->dims[0] != na)))
        return op_fail(ctx, MOPT_ERR_SHAPE, "shape must be 1-D with one value per axis (%d values)",
                       na);
    out[0].shape = *xs;
    int64_t sh[IR_MAX_RANK], n;
    int known = op_known_ints(ctx, &in[1], "shape", sh, IR_MAX_RANK, &n);
    if (known < 0) return MOPT_ERR_SHAPE;
    if (!known) {
        for (int i = 0; i < na; i++)
            out[0].shape.syms[axes[i]] = -1;
        return MOPT_OK;
    }
    if (n != na)
        return op_fail(ctx, MOPT_ERR_SHAPE, "shape has %" PRId64 " values for %d axes", n, na);
    for (int i = 0; i < na; i++) {
        if (sh[i] < 0)
            return op_fail(ctx, MOPT_ERR_SHAPE, "shape[%d] = %" PRId64 " is negative", i, sh[i]);
        out[0].shape.dims[axes[i]] = sh[i];
        out[0].shape.syms[axes[i]] = 0;
    }
    return MOPT_OK;
}

static mopt_status crop_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    (void)ctx, (void)n_in, (void)n_out;
    ref_center_crop_pad(op_esize(&in[0]), in[0].shape.rank, in[0].shape.dims, out[0].shape.dims,
                        in[0].data, out[0].data);
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"CenterCropPad", "", 2, 2, 1, 1, crop_infer, crop_run, NULL,
     .params_size = sizeof(crop_params), .parse = crop_parse, .bridge = &ops_bridge_float},
};

const op_def *ops_family_crop(size_t *count) {
    *count = sizeof k_ops / sizeof k_ops[0];
    return k_ops;
}
