/*
 * spatial.c — ConvTranspose (groups, strides, dilations, pads,
 * output_padding, output_shape, auto_pad) and LpPool (p, pads, auto_pad,
 * dilations, ceil_mode) over 1 to 3 spatial dims, f32 (f16/bf16/f64 through
 * the dtype bridge). Math in kernels/ref/spatial.c.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/ref/ref_spatial.h"
#include "ops/ops.h"

/* Reads an ints attribute of exactly nd values (or def when absent). */
static mopt_status ints_attr(const op_ctx *ctx, const char *name, int nd, int64_t def, int64_t *out,
                             bool *present) {
    const int64_t *v = NULL;
    int64_t n = ir_node_attr_ints(ctx->node, name, &v);
    bool here = ir_node_attr(ctx->node, name) != NULL;
    if (present) *present = here;
    for (int i = 0; i < nd; i++)
        out[i] = def;
    if (!here) return MOPT_OK;
    if (n != nd)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "attribute %s must have %d values, not %" PRId64, name, nd, n);
    for (int i = 0; i < nd; i++)
        out[i] = v[i];
    return MOPT_OK;
}

/* ---- ConvTranspose ------------------------------------------------------------------ */

static mopt_status ct_geometry(const op_ctx *ctx, const op_tensor *in, ref_spatial *g, int64_t *m) {
    const ir_shape *x = &in[0].shape, *w = &in[1].shape;
    int nd = x->rank - 2;
    if (nd < 1 || nd > 3 || w->rank != x->rank)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "only 1 to 3 spatial dims (X rank %d)",
                       (int)x->rank);
    memset(g, 0, sizeof *g);
    g->nd = nd;
    int64_t group = ir_node_attr_int(ctx->node, "group", 1);
    if (group < 1 || x->dims[1] % group || w->dims[0] != x->dims[1])
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "W [%" PRId64 ", ...] does not fit X channels %" PRId64
                       " with group %" PRId64,
                       w->dims[0], x->dims[1], group);
    *m = w->dims[1] * group;
    int64_t pads[2 * REF_SPATIAL_MAX], op[REF_SPATIAL_MAX], os[REF_SPATIAL_MAX];
    bool has_pads, has_os;
    mopt_status st;
    if ((st = ints_attr(ctx, "strides", nd, 1, g->stride, NULL)) ||
        (st = ints_attr(ctx, "dilations", nd, 1, g->dil, NULL)) ||
        (st = ints_attr(ctx, "output_padding", nd, 0, op, NULL)) ||
        (st = ints_attr(ctx, "output_shape", nd, 0, os, &has_os)) ||
        (st = ints_attr(ctx, "pads", 2 * nd, 0, pads, &has_pads)))
        return st;
    const char *ap = ir_node_attr_string(ctx->node, "auto_pad", "NOTSET");
    bool same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
    for (int i = 0; i < nd; i++) {
        g->in[i] = x->dims[i + 2];
        g->k[i] = w->dims[i + 2];
        if (g->stride[i] < 1 || g->dil[i] < 1)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "strides and dilations must be >= 1");
        int64_t full = g->stride[i] * (g->in[i] - 1) + op[i] + (g->k[i] - 1) * g->dil[i] + 1;
        if (!has_pads && same) { /* the reference: explicit or zero pads otherwise */
            int64_t o = has_os ? os[i] : g->in[i] * g->stride[i];
            int64_t total = full - o;
            bool upper = strcmp(ap, "SAME_UPPER") == 0;
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
    ref_spatial g;
    int64_t m;
    if ((st = ct_geometry(ctx, in, &g, &m))) return st;
    int64_t d[IR_MAX_RANK] = {in[0].shape.dims[0], m};
    for (int i = 0; i < g.nd; i++)
        d[i + 2] = g.out[i];
    ir_shape_set(&out[0].shape, g.nd + 2, d);
    return MOPT_OK;
}

static mopt_status ct_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                          int n_out) {
    ref_spatial g;
    int64_t m;
    mopt_status st = ct_geometry(ctx, in, &g, &m);
    if (st) return st;
    if (op_has_input(in, n_in, 2) && op_numel(&in[2]) != m)
        return op_fail(ctx, MOPT_ERR_SHAPE, "B must have %" PRId64 " values", m);
    ref_conv_transpose(&g, in[0].shape.dims[0], in[0].shape.dims[1], m,
                       ir_node_attr_int(ctx->node, "group", 1), in[0].data, in[1].data,
                       op_has_input(in, n_in, 2) ? in[2].data : NULL, out[0].data);
    return MOPT_OK;
}

/* ---- LpPool ------------------------------------------------------------------------- */

static mopt_status lp_geometry(const op_ctx *ctx, const ir_shape *x, ref_spatial *g) {
    int nd = x->rank - 2;
    if (nd < 1 || nd > 3) return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "only 1 to 3 spatial dims");
    memset(g, 0, sizeof *g);
    g->nd = nd;
    int64_t pads[2 * REF_SPATIAL_MAX];
    bool has_k;
    mopt_status st;
    if ((st = ints_attr(ctx, "kernel_shape", nd, 0, g->k, &has_k)) ||
        (st = ints_attr(ctx, "strides", nd, 1, g->stride, NULL)) ||
        (st = ints_attr(ctx, "dilations", nd, 1, g->dil, NULL)) ||
        (st = ints_attr(ctx, "pads", 2 * nd, 0, pads, NULL)))
        return st;
    if (!has_k) return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "kernel_shape is required");
    const char *ap = ir_node_attr_string(ctx->node, "auto_pad", "NOTSET");
    bool ceil_mode = ir_node_attr_int(ctx->node, "ceil_mode", 0) != 0;
    for (int i = 0; i < nd; i++) {
        int64_t in = x->dims[i + 2], ke = (g->k[i] - 1) * g->dil[i] + 1, s = g->stride[i];
        if (g->k[i] < 1 || s < 1 || g->dil[i] < 1)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "kernel, strides, dilations must be >= 1");
        g->in[i] = in;
        if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
            int64_t o = (in + s - 1) / s, total = (o - 1) * s + ke - in;
            if (total < 0) total = 0;
            g->pad[i] = strcmp(ap, "SAME_UPPER") == 0 ? total / 2 : total - total / 2;
            g->out[i] = o;
        } else if (strcmp(ap, "VALID") == 0) {
            g->pad[i] = 0;
            g->out[i] = in >= ke ? (in - ke) / s + 1 : 0;
        } else {
            int64_t span = in + pads[i] + pads[i + nd] - ke;
            g->pad[i] = pads[i];
            if (span < 0) return op_fail(ctx, MOPT_ERR_SHAPE, "kernel larger than padded input");
            g->out[i] = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
            if (ceil_mode && (g->out[i] - 1) * s >= in + pads[i]) g->out[i]--;
        }
    }
    return MOPT_OK;
}

static mopt_status lp_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    mopt_status st = op_expect_f32(ctx, &in[0], 0);
    if (st) return st;
    out[0].dtype = in[0].dtype;
    const ir_shape *x = &in[0].shape;
    if (x->rank < 0 || !ir_shape_is_concrete(x)) {
        out[0].shape = *x;
        for (int32_t a = 2; a < x->rank; a++)
            out[0].shape.syms[a] = -1;
        return MOPT_OK;
    }
    ref_spatial g;
    if ((st = lp_geometry(ctx, x, &g))) return st;
    out[0].shape = *x;
    for (int i = 0; i < g.nd; i++)
        out[0].shape.dims[i + 2] = g.out[i];
    return MOPT_OK;
}

static mopt_status lp_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                          int n_out) {
    ref_spatial g;
    mopt_status st = lp_geometry(ctx, &in[0].shape, &g);
    if (st) return st;
    int64_t p = ir_node_attr_int(ctx->node, "p", 2);
    if (p < 1) return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "p must be >= 1");
    ref_lp_pool(&g, in[0].shape.dims[0] * in[0].shape.dims[1], (double)p, in[0].data, out[0].data);
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"ConvTranspose", "", 2, 3, 1, 1, ct_infer, ct_run, NULL},
    {"LpPool", "", 1, 1, 1, 1, lp_infer, lp_run, NULL},
};

const op_def *ops_family_spatial(size_t *count) {
    *count = sizeof k_ops / sizeof k_ops[0];
    return k_ops;
}
