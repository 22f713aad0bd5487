/*
 * pool.c — the "pool" operator family: MaxPool (kernel_shape, strides, pads,
 * dilations, auto_pad, ceil_mode, the Indices output with storage_order),
 * AveragePool (count_include_pad, ceil_mode, dilations), GlobalMaxPool,
 * GlobalAveragePool and LpPool (p, pads, auto_pad, dilations, ceil_mode),
 * over 1..3 spatial axes. Shape inference, validation and
 * attribute parsing; the math is in kernels/ref/pool.c.
 */
#include <inttypes.h>
#include <string.h>

#include "kernels/ref/ref_pool.h"
#include "ops/bridge.h"
#include "ops/conv.h"
#include "ops/impls.h"
#include "ops/op_common.h"
#include "ops/ops.h"
#include "ops/window.h"

#define DIM_LIMIT ((int64_t)1 << 48)

/* MaxPool and AveragePool attributes. */
typedef struct pool_params {
    op_window_attrs win;
    bool ceil_mode, count_include_pad;
    bool col_major;     /* MaxPool storage_order=1: Indices counted column-major */
    bool channels_last; /* mopt.ChannelsLast*Pool: X and Y [N, spatial..., C] */
} pool_params;

static mopt_status pool_parse(const op_ctx *ctx, void *params) {
    pool_params *p = params;
    mopt_status st = op_window_parse(ctx, true, &p->win);
    if (st) return st;
    p->ceil_mode = ir_node_attr_int(ctx->node, "ceil_mode", 0) != 0;
    p->count_include_pad = ir_node_attr_int(ctx->node, "count_include_pad", 0) != 0;
    int64_t order = ir_node_attr_int(ctx->node, "storage_order", 0);
    if (order != 0 && order != 1)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "storage_order %" PRId64 " is not 0 or 1",
                       order);
    p->col_major = order == 1;
    p->channels_last = strcmp(ctx->def->domain, "mopt") == 0;
    return MOPT_OK;
}

bool ops_pool_channels_last(const op_ctx *ctx) {
    return ((const pool_params *)ctx->params)->channels_last;
}

/* The window of a node with S spatial axes. */
typedef struct pool_attrs {
    int32_t S;
    int64_t k[REF_WIN_MAX], stride[REF_WIN_MAX], dilation[REF_WIN_MAX];
    int64_t pads[2 * REF_WIN_MAX];
    ref_auto_pad auto_pad;
    bool ceil_mode, count_include_pad;
} pool_attrs;

static mopt_status pool_attrs_read(const op_ctx *ctx, int32_t S, pool_attrs *a) {
    const pool_params *p = ctx->params;
    memset(a, 0, sizeof *a);
    a->S = S;
    mopt_status st = op_window_get(ctx, &p->win.kernel_shape, "kernel_shape", S, a->k, NULL);
    if (!st) st = op_window_get(ctx, &p->win.strides, "strides", S, a->stride, NULL);
    if (!st) st = op_window_get(ctx, &p->win.dilations, "dilations", S, a->dilation, NULL);
    if (!st) st = op_window_get(ctx, &p->win.pads, "pads", 2 * S, a->pads, NULL);
    if (st) return st;
    a->auto_pad = p->win.auto_pad;
    a->ceil_mode = p->ceil_mode;
    a->count_include_pad = p->count_include_pad;
    return MOPT_OK;
}

/* Checks X and returns its spatial rank in *S (or -1 when the rank is unknown). */
static mopt_status pool_check_input(const op_ctx *ctx, const op_tensor *x, int32_t min_rank,
                                    int32_t *S) {
    mopt_status st = op_expect_f32(ctx, x, 0);
    if (st) return st;
    char sx[IR_SHAPE_STR_CAP];
    *S = x->shape.rank < 0 ? -1 : x->shape.rank - 2;
    if (x->shape.rank >= 0 && x->shape.rank < min_rank)
        return op_fail(ctx, MOPT_ERR_SHAPE, "X %s must have rank >= %d (N, C, spatial...)",
                       op_shape_str(ctx, &x->shape, sx), (int)min_rank);
    if (*S > REF_WIN_MAX)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "%d spatial dimensions (X %s); at most %d",
                       (int)*S, op_shape_str(ctx, &x->shape, sx), REF_WIN_MAX);
    return MOPT_OK;
}

static mopt_status window_pool_infer(const op_ctx *ctx, const op_tensor *in, int n_in,
                                     op_tensor *out, int n_out) {
    int32_t S;
    mopt_status st = pool_check_input(ctx, &in[0], 3, &S);
    if (st) return st;
    out[0].dtype = MOPT_DTYPE_F32;
    if (S < 0) {
        ir_shape_set_unknown(&out[0].shape);
        if (n_out > 1) out[1].dtype = MOPT_DTYPE_I64;
        return MOPT_OK;
    }
    pool_attrs a;
    st = pool_attrs_read(ctx, S, &a);
    if (st) return st;
    const ir_shape *x = &in[0].shape;
    ir_shape y = *x;
    for (int32_t i = 0; i < S; i++) {
        if (x->syms[2 + i] != 0) {
            y.syms[2 + i] = -1;
            continue;
        }
        if (x->dims[2 + i] >= DIM_LIMIT) {
            char sx[IR_SHAPE_STR_CAP];
            return op_fail(ctx, MOPT_ERR_LIMIT, "X %s is too large along spatial axis %d",
                           op_shape_str(ctx, x, sx), (int)i);
        }
        int64_t pb = a.pads[i], pe = a.pads[S + i];
        int64_t o = ref_window_out_size(x->dims[2 + i], a.k[i], a.stride[i], a.dilation[i],
                                        a.auto_pad, a.ceil_mode, &pb, &pe);
        if (o <= 0) {
            char sx[IR_SHAPE_STR_CAP];
            return op_fail(
                ctx, MOPT_ERR_SHAPE,
                "output size along spatial axis %d would be %" PRId64 " (X %s, kernel %" PRId64
                ", stride %" PRId64 ", dilation %" PRId64 ", pads %" PRId64 "+%" PRId64 ")",
                (int)i, o, op_shape_str(ctx, x, sx), a.k[i], a.stride[i], a.dilation[i], pb, pe);
        }
        y.dims[2 + i] = o;
    }
    out[0].shape = y;
    if (n_out > 1) { /* an omitted Indices output still gets a type and shape */
        out[1].dtype = MOPT_DTYPE_I64;
        out[1].shape = y;
    }
    return MOPT_OK;
}

mopt_status ops_pool_geometry(const op_ctx *ctx, const ir_shape *x, const ir_shape *y,
                              ref_pool_params *pp) {
    int32_t S = x->rank - 2;
    if (S < 1 || S > REF_WIN_MAX || y->rank != x->rank)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "only 1 to %d spatial dims", REF_WIN_MAX);
    pool_attrs a;
    mopt_status st = pool_attrs_read(ctx, S, &a);
    if (st) return st;
    ref_pool_params p;
    p.planes = x->dims[0] * x->dims[1];
    p.count_include_pad = a.count_include_pad;
    int32_t lead = REF_WIN_MAX - S;
    for (int32_t i = 0; i < REF_WIN_MAX; i++) {
        p.in[i] = p.out[i] = p.k[i] = p.stride[i] = p.dilation[i] = 1;
        p.pad[i] = p.pad_end[i] = 0;
    }
    for (int32_t i = 0; i < S; i++) {
        int64_t pb = a.pads[i], pe = a.pads[S + i];
        ref_window_out_size(x->dims[2 + i], a.k[i], a.stride[i], a.dilation[i], a.auto_pad,
                            a.ceil_mode, &pb, &pe);
        p.in[lead + i] = x->dims[2 + i];
        p.out[lead + i] = y->dims[2 + i];
        p.k[lead + i] = a.k[i];
        p.stride[lead + i] = a.stride[i];
        p.dilation[lead + i] = a.dilation[i];
        p.pad[lead + i] = pb;
        p.pad_end[lead + i] = pe;
    }
    *pp = p;
    return MOPT_OK;
}

static mopt_status window_pool_run(const op_ctx *ctx, const op_tensor *in, op_tensor *out,
                                   bool is_max) {
    ref_pool_params p;
    mopt_status st = ops_pool_geometry(ctx, &in[0].shape, &out[0].shape, &p);
    if (st) return st;
    const float *x = in[0].data;
    float *y = out[0].data, *tx = NULL, *ty = NULL;
    int64_t n = in[0].shape.dims[0], c = in[0].shape.dims[1];
    int64_t nc = n * c;
    int64_t sx = nc > 0 ? op_numel(&in[0]) / nc : 0, sy = nc > 0 ? op_numel(&out[0]) / nc : 0;
    if (ops_pool_channels_last(ctx)) { /* the reference works on plain copies */
        tx = op_work_get(ctx, 0, (size_t)op_numel(&in[0]) * sizeof(float));
        ty = op_work_get(ctx, 1, (size_t)op_numel(&out[0]) * sizeof(float));
        if (!tx || !ty) {
            op_work_put(ctx, tx);
            op_work_put(ctx, ty);
            return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory for a channels-last copy");
        }
        ops_conv_relayout(x, tx, n, c, sx, false);
        x = tx;
        y = ty;
    }
    if (is_max)
        ref_maxpool_f32(&p, x, y);
    else
        ref_avgpool_f32(&p, x, y);
    if (ty) ops_conv_relayout(ty, out[0].data, n, c, sy, true);
    op_work_put(ctx, tx);
    op_work_put(ctx, ty);
    return MOPT_OK;
}

static mopt_status maxpool_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    if (n_out > 1 && out[1].data && out[1].dtype == MOPT_DTYPE_I64) {
        ref_pool_params p;
        mopt_status st = ops_pool_geometry(ctx, &in[0].shape, &out[0].shape, &p);
        if (st) return st;
        ref_maxpool_indices_f32(&p, in[0].data, out[0].data, out[1].data,
                                ((const pool_params *)ctx->params)->col_major);
        return MOPT_OK;
    }
    return window_pool_run(ctx, in, out, true);
}

static mopt_status avgpool_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    return window_pool_run(ctx, in, out, false);
}

/* ---- global pools ------------------------------------------------------- */

static mopt_status global_pool_infer(const op_ctx *ctx, const op_tensor *in, int n_in,
                                     op_tensor *out, int n_out) {
    int32_t S;
    mopt_status st = pool_check_input(ctx, &in[0], 2, &S);
    if (st) return st;
    out[0].dtype = MOPT_DTYPE_F32;
    out[0].shape = in[0].shape;
    for (int32_t i = 0; i < S; i++) {
        out[0].shape.dims[2 + i] = 1;
        out[0].shape.syms[2 + i] = 0;
    }
    return MOPT_OK;
}

static mopt_status global_pool_run(const op_tensor *in, op_tensor *out, bool is_max) {
    const ir_shape *x = &in[0].shape;
    int64_t planes = x->dims[0] * x->dims[1];
    int64_t size = 1;
    for (int32_t i = 2; i < x->rank; i++)
        size *= x->dims[i];
    if (is_max)
        ref_global_maxpool_f32(planes, size, in[0].data, out[0].data);
    else
        ref_global_avgpool_f32(planes, size, in[0].data, out[0].data);
    return MOPT_OK;
}

static mopt_status global_maxpool_run(const op_ctx *ctx, const op_tensor *in, int n_in,
                                      op_tensor *out, int n_out) {
    return global_pool_run(in, out, true);
}

static mopt_status global_avgpool_run(const op_ctx *ctx, const op_tensor *in, int n_in,
                                      op_tensor *out, int n_out) {
    return global_pool_run(in, out, false);
}

/* ---- LpPool ------------------------------------------------------------- */

typedef struct lppool_params {
    op_ints_attr kernel_shape, strides, dilations, pads;
    ref_auto_pad auto_pad; /* unknown values: NOTSET */
    bool ceil_mode;
    int64_t p; /* checked (>= 1) by the run */
} lppool_params;

static mopt_status lppool_parse(const op_ctx *ctx, void *params) {
    lppool_params *p = params;
    op_ints_attr_parse(ctx, "kernel_shape", &p->kernel_shape);
    op_ints_attr_parse(ctx, "strides", &p->strides);
    op_ints_attr_parse(ctx, "dilations", &p->dilations);
    op_ints_attr_parse(ctx, "pads", &p->pads);
    p->auto_pad = op_window_auto_pad_lenient(ctx);
    p->ceil_mode = ir_node_attr_int(ctx->node, "ceil_mode", 0) != 0;
    p->p = ir_node_attr_int(ctx->node, "p", 2);
    return MOPT_OK;
}

static mopt_status lppool_geometry(const op_ctx *ctx, const ir_shape *x, ref_window_nd *g) {
    int nd = x->rank - 2;
    if (nd < 1 || nd > 3) return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "only 1 to 3 spatial dims");
    memset(g, 0, sizeof *g);
    g->nd = nd;
    const lppool_params *p = ctx->params;
    int64_t pads[2 * REF_WIN_MAX];
    bool has_k = p->kernel_shape.present;
    mopt_status st;
    if ((st = op_ints_attr_get(ctx, &p->kernel_shape, "kernel_shape", nd, 0, g->k)) ||
        (st = op_ints_attr_get(ctx, &p->strides, "strides", nd, 1, g->stride)) ||
        (st = op_ints_attr_get(ctx, &p->dilations, "dilations", nd, 1, g->dil)) ||
        (st = op_ints_attr_get(ctx, &p->pads, "pads", 2 * nd, 0, pads)))
        return st;
    if (!has_k) return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "kernel_shape is required");
    ref_auto_pad ap = p->auto_pad;
    bool ceil_mode = p->ceil_mode;
    for (int i = 0; i < nd; i++) {
        int64_t in = x->dims[i + 2], s = g->stride[i];
        if (g->k[i] < 1 || s < 1 || g->dil[i] < 1)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "kernel, strides, dilations must be >= 1");
        if (g->k[i] >= ((int64_t)1 << 31) || g->dil[i] >= ((int64_t)1 << 31))
            return op_fail(ctx, MOPT_ERR_LIMIT, "kernel and dilations must be below 2^31");
        int64_t ke = (g->k[i] - 1) * g->dil[i] + 1;
        g->in[i] = in;
        if (ap == REF_PAD_SAME_UPPER || ap == REF_PAD_SAME_LOWER) {
            int64_t o = (in + s - 1) / s, total = (o - 1) * s + ke - in;
            if (total < 0) total = 0;
            g->pad[i] = ap == REF_PAD_SAME_UPPER ? total / 2 : total - total / 2;
            g->out[i] = o;
        } else if (ap == REF_PAD_VALID) {
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

static mopt_status lppool_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
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
    ref_window_nd g;
    if ((st = lppool_geometry(ctx, x, &g))) return st;
    out[0].shape = *x;
    for (int i = 0; i < g.nd; i++)
        out[0].shape.dims[i + 2] = g.out[i];
    return MOPT_OK;
}

static mopt_status lppool_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    ref_window_nd g;
    mopt_status st = lppool_geometry(ctx, &in[0].shape, &g);
    if (st) return st;
    int64_t p = ((const lppool_params *)ctx->params)->p;
    if (p < 1) return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "p must be >= 1");
    ref_lp_pool(&g, in[0].shape.dims[0] * in[0].shape.dims[1], (double)p, in[0].data, out[0].data);
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"MaxPool", "", 1, 1, 1, 2, window_pool_infer, maxpool_run, ops_maxpool_impls,
     OP_PARAMS(pool_params, pool_parse), .bridge = &ops_bridge_via_f32},
    {"AveragePool", "", 1, 1, 1, 1, window_pool_infer, avgpool_run, ops_avgpool_impls,
     OP_PARAMS(pool_params, pool_parse), .bridge = &ops_bridge_float},
    {"GlobalMaxPool", "", 1, 1, 1, 1, global_pool_infer, global_maxpool_run,
     .bridge = &ops_bridge_float},
    {"GlobalAveragePool", "", 1, 1, 1, 1, global_pool_infer, global_avgpool_run,
     ops_cpu_gavgpool_impls, .bridge = &ops_bridge_float},
    {"LpPool", "", 1, 1, 1, 1, lppool_infer, lppool_run, NULL,
     OP_PARAMS(lppool_params, lppool_parse), .bridge = &ops_bridge_float},
    /* the layout pass's (pass_layout.c): the same on channels-last X and Y */
    {"ChannelsLastMaxPool", "mopt", 1, 1, 1, 1, window_pool_infer, maxpool_run, ops_maxpool_impls,
     OP_PARAMS(pool_params, pool_parse)},
    {"ChannelsLastAveragePool", "mopt", 1, 1, 1, 1, window_pool_infer, avgpool_run,
     ops_avgpool_impls, OP_PARAMS(pool_params, pool_parse)},
};

OP_FAMILY(pool, k_ops)
