/*
 * deform_conv.c — the "deform_conv" operator family: DeformConv (opset 19
 * and 22; 1-D to 3-D; group, offset_group, kernel_shape, strides, pads,
 * dilations; optional bias and mask). The window attributes and the output
 * shape are Conv's (conv.h, impls.h); shape checks of offset and mask, and
 * the math in kernels/ref/deform_conv.c (f16/bf16/f64 through the float
 * bridge).
 */
#include <inttypes.h>
#include <string.h>

#include "kernels/ref/ref_deform_conv.h"
#include "ops/bridge.h"
#include "ops/conv.h"
#include "ops/impls.h"
#include "ops/ops.h"

/* Starts with a conv_params so that Conv's inference and geometry read it. */
typedef struct deform_conv_params {
    conv_params conv;
    int64_t offset_group;
} deform_conv_params;

enum { DX, DW, DOFFSET, DB, DMASK };

static bool known(const ir_shape *s, int32_t i) { return s->rank > i && s->syms[i] == 0; }

static mopt_status deform_conv_parse(const op_ctx *ctx, void *params) {
    deform_conv_params *p = params;
    mopt_status st = ops_conv_parse(ctx, &p->conv);
    if (st) return st;
    p->offset_group = ir_node_attr_int(ctx->node, "offset_group", 1);
    if (p->offset_group < 1 || p->offset_group >= OP_WINDOW_ATTR_LIMIT)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "offset_group %" PRId64 " must be >= 1",
                       p->offset_group);
    return MOPT_OK;
}

/* offset (per = S displacements) or mask (per = 1): [N, offset_group * K *
 * per, out...] against X, W and Y. */
static mopt_status check_side(const op_ctx *ctx, const op_tensor *t, const char *what, int64_t per,
                              const ir_shape *x, const ir_shape *w, const ir_shape *y) {
    const deform_conv_params *p = ctx->params;
    const ir_shape *s = &t->shape;
    char ss[IR_SHAPE_STR_CAP], sy[IR_SHAPE_STR_CAP];
    if (s->rank < 0 || y->rank < 0) return MOPT_OK;
    if (s->rank != y->rank)
        return op_fail(ctx, MOPT_ERR_SHAPE, "%s %s must have the rank of the output %s", what,
                       op_shape_str(ctx, s, ss), op_shape_str(ctx, y, sy));
    if (known(s, 0) && known(x, 0) && s->dims[0] != x->dims[0])
        return op_fail(ctx, MOPT_ERR_SHAPE, "%s %s and X have different batch sizes", what,
                       op_shape_str(ctx, s, ss));
    int64_t K = 1;
    bool k_known = true;
    for (int32_t i = 2; i < w->rank; i++) {
        k_known = k_known && known(w, i);
        K *= w->dims[i];
    }
    if (w->rank >= 0 && k_known && known(s, 1) && s->dims[1] != p->offset_group * K * per)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "%s %s must have offset_group (%" PRId64 ") x %" PRId64
                       " kernel taps x %" PRId64 " = %" PRId64 " channels",
                       what, op_shape_str(ctx, s, ss), p->offset_group, K, per,
                       p->offset_group * K * per);
    for (int32_t i = 2; i < s->rank; i++)
        if (known(s, i) && known(y, i) && s->dims[i] != y->dims[i])
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "%s %s must have the output's spatial size (output %s)", what,
                           op_shape_str(ctx, s, ss), op_shape_str(ctx, y, sy));
    return MOPT_OK;
}

static mopt_status deform_conv_infer(const op_ctx *ctx, const op_tensor *in, int n_in,
                                     op_tensor *out, int n_out) {
    const deform_conv_params *p = ctx->params;
    mopt_status st = op_expect_f32(ctx, &in[DX], DX);
    if (!st) st = op_expect_f32(ctx, &in[DW], DW);
    if (!st) st = op_expect_f32(ctx, &in[DOFFSET], DOFFSET);
    if (!st && op_has_input(in, n_in, DB)) st = op_expect_f32(ctx, &in[DB], DB);
    if (!st && op_has_input(in, n_in, DMASK)) st = op_expect_f32(ctx, &in[DMASK], DMASK);
    if (st) return st;
    const ir_shape *x = &in[DX].shape, *w = &in[DW].shape;
    char sx[IR_SHAPE_STR_CAP];
    if (known(x, 1) && x->dims[1] % p->offset_group != 0)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "X %s has %" PRId64 " channels, not a multiple of offset_group %" PRId64,
                       op_shape_str(ctx, x, sx), x->dims[1], p->offset_group);
    /* Conv's inference: X, W and B */
    op_tensor cin[3] = {in[DX], in[DW], {MOPT_DTYPE_UNDEFINED, {0}, NULL}};
    if (op_has_input(in, n_in, DB)) cin[2] = in[DB];
    st = ops_conv_infer(ctx, cin, 3, out, 1);
    if (st) return st;
    const ir_shape *y = &out[0].shape;
    st = check_side(ctx, &in[DOFFSET], "offset", y->rank >= 2 ? y->rank - 2 : 0, x, w, y);
    if (!st && op_has_input(in, n_in, DMASK)) st = check_side(ctx, &in[DMASK], "mask", 1, x, w, y);
    return st;
}

static mopt_status deform_conv_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                   int n_out) {
    const deform_conv_params *p = ctx->params;
    ref_deform_conv_params k = {.S = in[DX].shape.rank - 2, .offset_group = p->offset_group};
    int64_t pad_end[REF_WIN_MAX];
    mopt_status st = ops_conv_geometry(ctx, &in[DX].shape, &in[DW].shape, &k.conv, pad_end);
    if (st) return st;
    if (op_numel(&out[0]) == 0) return MOPT_OK;
    int64_t nwork = ref_deform_conv_work(&k);
    float *col = op_work_get(ctx, 0, (size_t)(nwork > 0 ? nwork : 1) * sizeof(float));
    if (!col)
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for %" PRId64 " sampled values",
                       nwork);
    ref_deform_conv_f32(&k, in[DX].data, in[DW].data, in[DOFFSET].data,
                        op_has_input(in, n_in, DMASK) ? in[DMASK].data : NULL,
                        op_has_input(in, n_in, DB) ? in[DB].data : NULL, out[0].data, col);
    op_work_put(ctx, col);
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"DeformConv", "", 3, 5, 1, 1, deform_conv_infer, deform_conv_run, NULL,
     .params_size = sizeof(deform_conv_params), .parse = deform_conv_parse,
     .bridge = &ops_bridge_float},
};

const op_def *ops_family_deform_conv(size_t *count) {
    *count = sizeof k_ops / sizeof k_ops[0];
    return k_ops;
}
