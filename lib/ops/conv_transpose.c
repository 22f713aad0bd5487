/*
 * conv_transpose.c — ConvTranspose (groups, strides, dilations, pads,
 * output_padding, output_shape, auto_pad) over 1 to 3 spatial dims, f32
 * (f16/bf16/f64 through the dtype bridge). Math in
 * kernels/ref/conv_transpose.c; faster: lib/ops/onednn/conv_transpose_onednn.c.
 */
#include <inttypes.h>
#include <string.h>

#include "kernels/ref/ref_conv_transpose.h"
#include "ops/bridge.h"
#include "ops/impls.h"
#include "ops/op_common.h"
#include "ops/ops.h"
#include "ops/window.h"

typedef struct ct_params {
    int64_t group;
    op_ints_attr strides, dilations, output_padding, output_shape, pads;
    ref_auto_pad auto_pad; /* VALID and unknown values: explicit (or zero) pads */
} ct_params;

static mopt_status ct_parse(const op_ctx *ctx, void *params) {
    ct_params *p = params;
    p->group = ir_node_attr_int(ctx->node, "group", 1);
    op_ints_attr_parse(ctx, "strides", &p->strides);
    op_ints_attr_parse(ctx, "dilations", &p->dilations);
    op_ints_attr_parse(ctx, "output_padding", &p->output_padding);
    op_ints_attr_parse(ctx, "output_shape", &p->output_shape);
    op_ints_attr_parse(ctx, "pads", &p->pads);
    p->auto_pad = op_window_auto_pad_lenient(ctx);
    return MOPT_OK;
}

static mopt_status ct_geometry(const op_ctx *ctx, const op_tensor *in, ref_window_nd *g,
                               int64_t *m) {
    const ir_shape *x = &in[0].shape, *w = &in[1].shape;
    int nd = x->rank - 2;
    if (nd < 1 || nd > 3 || w->rank != x->rank)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "only 1 to 3 spatial dims (X rank %d)",
                       (int)x->rank);
    memset(g, 0, sizeof *g);
    g->nd = nd;
    const ct_params *p = ctx->params;
    int64_t group = p->group;
    if (group < 1 || x->dims[1] % group || w->dims[0] != x->dims[1])
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "W [%" PRId64 ", ...] does not fit X channels %" PRId64
                       " with group %" PRId64,
                       w->dims[0], x->dims[1], group);
    *m = w->dims[1] * group;
    int64_t pads[2 * REF_WIN_MAX], op[REF_WIN_MAX], os[REF_WIN_MAX];
    bool has_pads = p->pads.present, has_os = p->output_shape.present;
    mopt_status st;
    if ((st = op_ints_attr_get(ctx, &p->strides, "strides", nd, 1, g->stride)) ||
        (st = op_ints_attr_get(ctx, &p->dilations, "dilations", nd, 1, g->dil)) ||
        (st = op_ints_attr_get(ctx, &p->output_padding, "output_padding", nd, 0, op)) ||
        (st = op_ints_attr_get(ctx, &p->output_shape, "output_shape", nd, 0, os)) ||
        (st = op_ints_attr_get(ctx, &p->pads, "pads", 2 * nd, 0, pads)))
        return st;
    bool same = p->auto_pad == REF_PAD_SAME_UPPER || p->auto_pad == REF_PAD_SAME_LOWER;
    for (int i = 0; i < nd; i++) {
        g->in[i] = x->dims[i + 2];
        g->k[i] = w->dims[i + 2];
        if (g->stride[i] < 1 || g->dil[i] < 1 || op[i] < 0)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                           "strides and dilations must be >= 1, output_padding >= 0");
        /* every term below 2^30 keeps `full` below 2^62 */
        const int64_t lim = (int64_t)1 << 30;
        if (g->stride[i] >= lim || g->dil[i] >= lim || g->in[i] >= lim || g->k[i] >= lim ||
            op[i] >= lim)
            return op_fail(ctx, MOPT_ERR_LIMIT,
                           "axis %d: input, kernel, strides, dilations and output_padding must "
                           "be below 2^30",
                           i);
        int64_t full = g->stride[i] * (g->in[i] - 1) + op[i] + (g->k[i] - 1) * g->dil[i] + 1;
        if (!has_pads && same) { /* the reference: explicit or zero pads otherwise */
            int64_t o = has_os ? os[i] : g->in[i] * g->stride[i];
            int64_t total = full - o;
            bool upper = p->auto_pad == REF_PAD_SAME_UPPER;
            g->pad[i] = upper ? total / 2 : total - total / 2;
            g->out[i] = o;
        } else {
            g->pad[i] = pads[i];
            g->out[i] = has_os ? os[i] : full - pads[i] - pads[i + nd];
        }
        if (g->out[i] < 0) return op_fail(ctx, MOPT_ERR_SHAPE, "negative output size");
    }
    return MOPT_OK;
}

mopt_status ops_conv_transpose_geometry(const op_ctx *ctx, const op_tensor *in, ref_window_nd *g,
                                        int64_t *c_out, int64_t *group) {
    *group = ((const ct_params *)ctx->params)->group;
    return ct_geometry(ctx, in, g, c_out);
}

/* true when every value of a (absent: none) is v */
static bool ints_all(const op_ints_attr *a, int64_t n, int64_t v) {
    if (!a->present) return true;
    if (a->n != n) return false;
    for (int64_t i = 0; i < n; i++)
        if (a->v[i] != v) return false;
    return true;
}

bool ops_conv_transpose_unpool(const op_ctx *ctx, const ir_shape *w, int64_t *kh, int64_t *kw) {
    const ct_params *p = ctx->params;
    if (p->group != 1 || w->rank != 4 || p->output_shape.present) return false;
    *kh = w->dims[2];
    *kw = w->dims[3];
    if (*kh < 1 || *kw < 1 || !ints_all(&p->dilations, 2, 1) || !ints_all(&p->pads, 4, 0) ||
        !ints_all(&p->output_padding, 2, 0) || !p->strides.present || p->strides.n != 2)
        return false;
    return p->strides.v[0] == *kh && p->strides.v[1] == *kw;
}

static mopt_status ct_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    mopt_status st;
    for (int k = 0; k < 3 && k < n_in; k++)
        if (op_has_input(in, n_in, k) &&
            ((st = op_expect_f32(ctx, &in[k], k)) || (k && (st = op_same_dtype(ctx, in, 0, k)))))
            return st;
    out[0].dtype = in[0].dtype;
    if (in[0].shape.rank < 0 || in[1].shape.rank < 0 || !ir_shape_is_concrete(&in[0].shape) ||
        !ir_shape_is_concrete(&in[1].shape)) {
        if (in[0].shape.rank >= 0)
            op_set_unknown_dims(&out[0].shape, in[0].shape.rank);
        else
            ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    ref_window_nd g;
    int64_t m = 0;
    if ((st = ct_geometry(ctx, in, &g, &m))) return st;
    int64_t d[IR_MAX_RANK] = {in[0].shape.dims[0], m};
    for (int i = 0; i < g.nd; i++)
        d[i + 2] = g.out[i];
    ir_shape_set(&out[0].shape, g.nd + 2, d);
    return MOPT_OK;
}

static mopt_status ct_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                          int n_out) {
    ref_window_nd g;
    int64_t m = 0;
    mopt_status st = ct_geometry(ctx, in, &g, &m);
    if (st) return st;
    if (op_has_input(in, n_in, 2) && op_numel(&in[2]) != m)
        return op_fail(ctx, MOPT_ERR_SHAPE, "B must have %" PRId64 " values", m);
    ref_conv_transpose(&g, in[0].shape.dims[0], in[0].shape.dims[1], m,
                       ((const ct_params *)ctx->params)->group, in[0].data, in[1].data,
                       op_has_input(in, n_in, 2) ? in[2].data : NULL, out[0].data);
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"ConvTranspose", "", 2, 3, 1, 1, ct_infer, ct_run, ops_conv_transpose_impls,
     OP_PARAMS(ct_params, ct_parse), .bridge = &ops_bridge_float},
};

OP_FAMILY(conv_transpose, k_ops)
