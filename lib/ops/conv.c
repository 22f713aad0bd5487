/*
 * conv.c — the "conv" operator family: Conv (1-D, 2-D, 3-D; group incl.
 * depthwise, strides, dilations, pads, auto_pad, optional bias, kernel_shape
 * from the attribute or the weights). Shape/type inference, validation and
 * attribute parsing; the math is ref_conv_f32 in kernels/ref/conv.c.
 */
#include <inttypes.h>
#include <string.h>

#include "kernels/ref/ref_conv.h"
#include "ops/bridge.h"
#include "ops/conv.h"
#include "ops/impls.h"
#include "ops/op_common.h"
#include "ops/ops.h"

#define ATTR_LIMIT ((int64_t)1 << 31) /* keeps window arithmetic far from overflow */
#define DIM_LIMIT ((int64_t)1 << 48)

mopt_status ops_conv_parse(const op_ctx *ctx, void *params) {
    conv_params *p = params;
    p->group = ir_node_attr_int(ctx->node, "group", 1);
    if (p->group < 1 || p->group >= ATTR_LIMIT)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "group %" PRId64 " must be >= 1", p->group);
    return op_window_parse(ctx, false, &p->win);
}

/* Window attributes of a Conv node for S spatial axes. */
typedef struct conv_attrs {
    int32_t S;
    int64_t group;
    bool has_kernel_shape;
    int64_t k[REF_WIN_MAX], stride[REF_WIN_MAX], dilation[REF_WIN_MAX];
    int64_t pads[2 * REF_WIN_MAX];
    ref_auto_pad auto_pad;
} conv_attrs;

static mopt_status conv_attrs_read(const op_ctx *ctx, int32_t S, conv_attrs *a) {
    const conv_params *p = ctx->params;
    memset(a, 0, sizeof *a);
    a->S = S;
    a->group = p->group;
    mopt_status st =
        op_window_get(ctx, &p->win.kernel_shape, "kernel_shape", S, a->k, &a->has_kernel_shape);
    if (!st) st = op_window_get(ctx, &p->win.strides, "strides", S, a->stride, NULL);
    if (!st) st = op_window_get(ctx, &p->win.dilations, "dilations", S, a->dilation, NULL);
    if (!st) st = op_window_get(ctx, &p->win.pads, "pads", 2 * S, a->pads, NULL);
    a->auto_pad = p->win.auto_pad;
    return st;
}

static bool dim_known(const ir_shape *s, int32_t i) { return s->rank > i && s->syms[i] == 0; }

mopt_status ops_conv_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    static const mopt_dtype f32[] = {MOPT_DTYPE_F32};
    bool has_b = op_has_input(in, n_in, 2);
    mopt_status st = op_expect_dtype(ctx, &in[0], 0, f32, 1);
    if (!st) st = op_expect_dtype(ctx, &in[1], 1, f32, 1);
    if (!st && has_b) st = op_expect_dtype(ctx, &in[2], 2, f32, 1);
    if (st) return st;
    out[0].dtype = MOPT_DTYPE_F32;
    const ir_shape *x = &in[0].shape, *w = &in[1].shape;
    char sx[IR_SHAPE_STR_CAP], sw[IR_SHAPE_STR_CAP], sb[IR_SHAPE_STR_CAP];
    int32_t rank;
    if ((st = op_spatial_rank(ctx, x, "W", w, "", &rank))) return st;
    if (rank < 0) {
        ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    if (rank - 2 > REF_WIN_MAX)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "%d spatial dimensions (X %s); at most %d",
                       (int)(rank - 2), op_shape_str(ctx, x, sx), REF_WIN_MAX);
    conv_attrs a;
    st = conv_attrs_read(ctx, rank - 2, &a);
    if (st) return st;
    /* channels vs group, weights vs input */
    if (dim_known(x, 1) && dim_known(w, 1) && x->dims[1] != w->dims[1] * a.group)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "X %s has %" PRId64 " channels but W %s with group %" PRId64
                       " expects %" PRId64,
                       op_shape_str(ctx, x, sx), x->dims[1], op_shape_str(ctx, w, sw), a.group,
                       w->dims[1] * a.group);
    if (dim_known(w, 0) && w->dims[0] % a.group != 0)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "W %s has %" PRId64 " output channels, not a multiple of group %" PRId64,
                       op_shape_str(ctx, w, sw), w->dims[0], a.group);
    if (has_b && in[2].shape.rank >= 0) {
        const ir_shape *b = &in[2].shape;
        if (b->rank != 1 || (dim_known(b, 0) && dim_known(w, 0) && b->dims[0] != w->dims[0]))
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "B %s must be 1-D with one value per output "
                           "channel of W %s",
                           op_shape_str(ctx, b, sb), op_shape_str(ctx, w, sw));
    }
    bool k_known[REF_WIN_MAX];
    for (int32_t i = 0; i < a.S; i++) {
        k_known[i] = a.has_kernel_shape;
        if (dim_known(w, 2 + i)) {
            if (a.has_kernel_shape && a.k[i] != w->dims[2 + i])
                return op_fail(ctx, MOPT_ERR_SHAPE,
                               "kernel_shape[%d] = %" PRId64 " does not match W %s", (int)i, a.k[i],
                               op_shape_str(ctx, w, sw));
            if (w->dims[2 + i] < 1 || w->dims[2 + i] >= ATTR_LIMIT)
                return op_fail(ctx, MOPT_ERR_SHAPE, "W %s has an invalid kernel size",
                               op_shape_str(ctx, w, sw));
            a.k[i] = w->dims[2 + i];
            k_known[i] = true;
        }
    }
    ir_shape y;
    memset(&y, 0, sizeof y);
    y.rank = rank;
    y.syms[0] = y.syms[1] = -1;
    if (x->rank >= 0) y.dims[0] = x->dims[0], y.syms[0] = x->syms[0];
    if (w->rank >= 0) y.dims[1] = w->dims[0], y.syms[1] = w->syms[0];
    for (int32_t i = 0; i < a.S; i++) {
        y.syms[2 + i] = -1;
        if (!dim_known(x, 2 + i) || !k_known[i]) continue;
        if (x->dims[2 + i] >= DIM_LIMIT)
            return op_fail(ctx, MOPT_ERR_LIMIT, "X %s is too large along spatial axis %d",
                           op_shape_str(ctx, x, sx), (int)i);
        int64_t pb = a.pads[i], pe = a.pads[a.S + i];
        int64_t o = ref_window_out_size(x->dims[2 + i], a.k[i], a.stride[i], a.dilation[i],
                                        a.auto_pad, false, &pb, &pe);
        if (o <= 0)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "output size along spatial axis %d would be %" PRId64
                           " (X %s, W %s, stride %" PRId64 ", dilation %" PRId64 ", pads %" PRId64
                           "+%" PRId64 ")",
                           (int)i, o, op_shape_str(ctx, x, sx), op_shape_str(ctx, w, sw),
                           a.stride[i], a.dilation[i], pb, pe);
        y.dims[2 + i] = o;
        y.syms[2 + i] = 0;
    }
    out[0].shape = y;
    return MOPT_OK;
}

mopt_status ops_conv_geometry(const op_ctx *ctx, const ir_shape *x, const ir_shape *w,
                              ref_conv_params *p, int64_t *pad_end) {
    int32_t S = x->rank - 2;
    conv_attrs a;
    mopt_status st = conv_attrs_read(ctx, S, &a);
    if (st) return st;
    p->batch = x->dims[0];
    p->c_in = x->dims[1];
    p->c_out = w->dims[0];
    p->group = a.group;
    int32_t lead = REF_WIN_MAX - S;
    for (int32_t i = 0; i < REF_WIN_MAX; i++) {
        p->in[i] = p->out[i] = p->k[i] = p->stride[i] = p->dilation[i] = 1;
        p->pad[i] = pad_end[i] = 0;
    }
    for (int32_t i = 0; i < S; i++) {
        int64_t pb = a.pads[i], pe = a.pads[S + i];
        int64_t k = w->dims[2 + i];
        int64_t o = ref_window_out_size(x->dims[2 + i], k, a.stride[i], a.dilation[i], a.auto_pad,
                                        false, &pb, &pe);
        if (o <= 0) {
            char sx[IR_SHAPE_STR_CAP], sw[IR_SHAPE_STR_CAP];
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "X %s and W %s give no output along spatial axis %d",
                           op_shape_str(ctx, x, sx), op_shape_str(ctx, w, sw), (int)i);
        }
        p->in[lead + i] = x->dims[2 + i];
        p->out[lead + i] = o;
        p->k[lead + i] = k;
        p->stride[lead + i] = a.stride[i];
        p->dilation[lead + i] = a.dilation[i];
        p->pad[lead + i] = pb;
        pad_end[lead + i] = pe;
    }
    return MOPT_OK;
}

mopt_status ops_conv_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                         int n_out) {
    ref_conv_params p;
    int64_t pad_end[REF_WIN_MAX];
    mopt_status st = ops_conv_geometry(ctx, &in[0].shape, &in[1].shape, &p, pad_end);
    if (st) return st;
    bool has_b = op_has_input(in, n_in, 2);
    if (p.c_out == 0 || p.batch == 0) return MOPT_OK;
    ref_conv_f32(&p, in[0].data, in[1].data, has_b ? in[2].data : NULL, out[0].data);
    return MOPT_OK;
}

void ops_conv_relayout(const float *src, float *dst, int64_t n, int64_t c, int64_t n_sp,
                       bool to_nhwc) {
    for (int64_t b = 0; b < n; b++) {
        const float *s = src + b * c * n_sp;
        float *d = dst + b * c * n_sp;
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t i = 0; i < n_sp; i++) {
                if (to_nhwc)
                    d[i * c + ch] = s[ch * n_sp + i];
                else
                    d[ch * n_sp + i] = s[i * c + ch];
            }
    }
}

void ops_conv_relayout_blk(const float *src, float *dst, int64_t n, int64_t c, int64_t n_sp,
                           bool to_blk) {
    for (int64_t b = 0; b < n; b++) {
        const float *s = src + b * c * n_sp;
        float *d = dst + b * c * n_sp;
        for (int64_t ch = 0; ch < c; ch++) {
            /* block ch / CONV_BLK, lane ch % CONV_BLK */
            int64_t base = ch / CONV_BLK * n_sp * CONV_BLK + ch % CONV_BLK;
            for (int64_t i = 0; i < n_sp; i++) {
                if (to_blk)
                    d[base + i * CONV_BLK] = s[ch * n_sp + i];
                else
                    d[ch * n_sp + i] = s[base + i * CONV_BLK];
            }
        }
    }
}

bool ops_conv_layout_valid(int64_t layout) {
    if (layout < 0 || layout > (CONV_LAYOUT_X | CONV_LAYOUT_Y)) return false;
    return (layout & CONV_LAYOUT_X) != CONV_LAYOUT_X && (layout & CONV_LAYOUT_Y) != CONV_LAYOUT_Y;
}

/* 2 multiply-adds per weight of a group and output element. */
int64_t ops_conv_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                       int n_out) {
    int64_t numel = ir_shape_numel(&out[0].shape);
    if (numel <= 0 || in[1].shape.rank < 3) return 0;
    int64_t per_out = 1; /* weights per output element: C_in/group * kernel */
    for (int32_t i = 1; i < in[1].shape.rank; i++)
        per_out *= in[1].shape.dims[i];
    return 2 * numel * per_out;
}

static const op_def k_ops[] = {
    {"Conv", "", 2, 3, 1, 1, ops_conv_infer, ops_conv_run, ops_conv_impls,
     OP_PARAMS(conv_params, ops_conv_parse), .flops = ops_conv_flops, .bridge = &ops_bridge_float},
};

OP_FAMILY(conv, k_ops)
