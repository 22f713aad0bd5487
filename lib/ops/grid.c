/*
 * grid.c — the "grid" operator family: GridSample (opset 16: 4-D X, modes
 * bilinear / nearest / bicubic; opset 20 and 22: N-D X, modes linear /
 * nearest / cubic; either spelling is accepted at any opset; padding zeros /
 * border / reflection; align_corners) and AffineGrid (opset 20: 2-D and 3-D,
 * align_corners). Shape/type inference, validation and attribute parsing;
 * the math is in kernels/ref/grid.c. GridSample's f32 path serves float X
 * (f16/bf16/f64 through the float bridge); nearest also copies X of any
 * fixed-size dtype as it is.
 */
#include <inttypes.h>
#include <string.h>

#include "kernels/ref/ref_grid.h"
#include "kernels/ref/ref_logic.h"
#include "ops/bridge.h"
#include "ops/op_common.h"
#include "ops/ops.h"

static bool known(const ir_shape *s, int32_t i) { return s->rank > i && s->syms[i] == 0; }

/* ---- GridSample ------------------------------------------------------------------ */

typedef struct grid_sample_params {
    ref_grid_mode mode;
    ref_grid_pad pad;
    bool align_corners;
    bool only_2d; /* opset < 20: X must be 4-D */
} grid_sample_params;

static mopt_status grid_sample_parse(const op_ctx *ctx, void *params) {
    grid_sample_params *p = params;
    static const op_name_value k_modes[] = {
        {"nearest", REF_GRID_NEAREST}, {"linear", REF_GRID_LINEAR}, {"bilinear", REF_GRID_LINEAR},
        {"cubic", REF_GRID_CUBIC},     {"bicubic", REF_GRID_CUBIC},
    };
    static const op_name_value k_pads[] = {
        {"zeros", REF_GRID_PAD_ZEROS},
        {"border", REF_GRID_PAD_BORDER},
        {"reflection", REF_GRID_PAD_REFLECTION},
    };
    const char *m = ir_node_attr_string(ctx->node, "mode", ctx->opset < 20 ? "bilinear" : "linear");
    int v;
    if (!op_name_lookup(k_modes, OP_COUNT(k_modes), m, &v))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "unknown mode '%s' (expected linear, nearest or cubic; bilinear and "
                       "bicubic before opset 20)",
                       m);
    p->mode = (ref_grid_mode)v;
    const char *pad = ir_node_attr_string(ctx->node, "padding_mode", "zeros");
    if (!op_name_lookup(k_pads, OP_COUNT(k_pads), pad, &v))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "unknown padding_mode '%s' (expected zeros, border or reflection)", pad);
    p->pad = (ref_grid_pad)v;
    mopt_status st = op_attr_bool(ctx, "align_corners", 0, &p->align_corners);
    if (st) return st;
    p->only_2d = ctx->opset < 20;
    return MOPT_OK;
}

static mopt_status grid_sample_infer(const op_ctx *ctx, const op_tensor *in, int n_in,
                                     op_tensor *out, int n_out) {
    const grid_sample_params *p = ctx->params;
    static const mopt_dtype floats[] = {MOPT_DTYPE_F32, MOPT_DTYPE_F64, MOPT_DTYPE_F16,
                                        MOPT_DTYPE_BF16};
    /* nearest copies X as it is, so its grid may be any float type (converted
     * in run); the other modes compute in f32 (the bridge converts) */
    mopt_status st = p->mode == REF_GRID_NEAREST ? op_expect_dtype(ctx, &in[1], 1, floats, 4)
                                                 : op_expect_f32(ctx, &in[1], 1);
    if (st) return st;
    if (p->mode == REF_GRID_NEAREST) {
        st = op_expect_any(ctx, &in[0], 0);
    } else if (in[0].dtype != MOPT_DTYPE_UNDEFINED && in[0].dtype != MOPT_DTYPE_F32) {
        /* TYPE lets the float bridge take f16/bf16/f64 X */
        return op_fail(ctx, MOPT_ERR_TYPE,
                       "X has type %s: %s sampling takes float X (any type with mode nearest)",
                       mopt_dtype_name(in[0].dtype),
                       p->mode == REF_GRID_LINEAR ? "linear" : "cubic");
    }
    if (st) return st;
    out[0].dtype = in[0].dtype;
    const ir_shape *x = &in[0].shape, *g = &in[1].shape;
    char sx[IR_SHAPE_STR_CAP], sg[IR_SHAPE_STR_CAP];
    int32_t rank;
    if ((st = op_spatial_rank(ctx, x, "grid", g, " and N, spatial..., r", &rank))) return st;
    if (rank < 0) {
        ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    int32_t r = rank - 2;
    if (p->only_2d && r != 2)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "X %s: GridSample before opset 20 samples 4-D X (N, C, H, W) only",
                       op_shape_str(ctx, x, sx));
    if (r > REF_GRID_MAX)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "%d spatial dimensions (X %s); at most %d",
                       (int)r, op_shape_str(ctx, x, sx), REF_GRID_MAX);
    if (known(g, r + 1) && g->dims[r + 1] != r)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "grid %s must end in %d (one coordinate per spatial axis of X %s)",
                       op_shape_str(ctx, g, sg), (int)r, op_shape_str(ctx, x, sx));
    if (known(g, 0) && known(x, 0) && g->dims[0] != x->dims[0])
        return op_fail(ctx, MOPT_ERR_SHAPE, "grid %s and X %s have different batch sizes",
                       op_shape_str(ctx, g, sg), op_shape_str(ctx, x, sx));
    ir_shape y;
    memset(&y, 0, sizeof y);
    y.rank = rank;
    for (int32_t i = 0; i < rank; i++)
        y.syms[i] = -1;
    if (x->rank >= 0) {
        y.dims[0] = x->dims[0], y.syms[0] = x->syms[0];
        y.dims[1] = x->dims[1], y.syms[1] = x->syms[1];
    } else if (g->rank >= 0) {
        y.dims[0] = g->dims[0], y.syms[0] = g->syms[0];
    }
    if (g->rank >= 0)
        for (int32_t i = 0; i < r; i++)
            y.dims[2 + i] = g->dims[1 + i], y.syms[2 + i] = g->syms[1 + i];
    out[0].shape = y;
    return MOPT_OK;
}

static mopt_status grid_sample_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                   int n_out) {
    const grid_sample_params *p = ctx->params;
    const ir_shape *x = &in[0].shape;
    ref_grid_sample_params k = {.r = x->rank - 2,
                                .n = x->dims[0],
                                .c = x->dims[1],
                                .mode = p->mode,
                                .pad = p->pad,
                                .align_corners = p->align_corners};
    k.n_out = 1;
    for (int32_t i = 0; i < k.r; i++) {
        k.in[i] = x->dims[2 + i];
        k.n_out *= out[0].shape.dims[2 + i];
    }
    if (op_numel(&out[0]) == 0) return MOPT_OK;
    int64_t plane = 1;
    for (int32_t i = 0; i < k.r; i++)
        plane *= k.in[i];
    if (plane == 0) {
        /* nothing to sample from: every tap is outside, whatever the padding */
        memset(out[0].data, 0, op_nbytes(&out[0]));
        return MOPT_OK;
    }
    if (p->mode == REF_GRID_NEAREST &&
        (in[0].dtype != MOPT_DTYPE_F32 || in[1].dtype != MOPT_DTYPE_F32)) {
        const float *grid = in[1].data;
        float *conv = NULL;
        if (in[1].dtype != MOPT_DTYPE_F32) {
            int64_t ng = op_numel(&in[1]);
            conv = op_work_get(ctx, 0, (size_t)ng * sizeof(float));
            if (!conv) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the grid");
            ref_cast(in[1].dtype, in[1].data, MOPT_DTYPE_F32, conv, ng);
            grid = conv;
        }
        ref_grid_sample_nearest_bytes(&k, in[0].data, op_esize(&in[0]), grid, out[0].data);
        op_work_put(ctx, conv);
        return MOPT_OK;
    }
    int64_t taps = ref_grid_sample_taps(&k);
    int64_t *off = op_work_get(ctx, 0, (size_t)taps * sizeof *off);
    double *w = op_work_get(ctx, 1, (size_t)taps * sizeof *w);
    if (!off || !w) {
        op_work_put(ctx, off);
        op_work_put(ctx, w);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for %" PRId64 " taps", taps);
    }
    ref_grid_sample_f32(&k, in[0].data, in[1].data, out[0].data, off, w);
    op_work_put(ctx, off);
    op_work_put(ctx, w);
    return MOPT_OK;
}

/* ---- AffineGrid ------------------------------------------------------------------ */

typedef struct affine_grid_params {
    bool align_corners;
} affine_grid_params;

static const op_attr_spec k_affine_grid_attrs[] = {
    OP_ATTR_BOOL(affine_grid_params, align_corners, "align_corners", 0)};

static mopt_status affine_grid_infer(const op_ctx *ctx, const op_tensor *in, int n_in,
                                     op_tensor *out, int n_out) {
    mopt_status st = op_expect_f32(ctx, &in[0], 0);
    if (!st) st = op_expect_i64(ctx, &in[1], 1);
    if (st) return st;
    out[0].dtype = MOPT_DTYPE_F32;
    const ir_shape *th = &in[0].shape, *sz = &in[1].shape;
    char s1[IR_SHAPE_STR_CAP], s2[IR_SHAPE_STR_CAP];
    if (th->rank >= 0 && th->rank != 3)
        return op_fail(ctx, MOPT_ERR_SHAPE, "theta %s must be (N, 2, 3) or (N, 3, 4)",
                       op_shape_str(ctx, th, s1));
    if (sz->rank >= 0 && sz->rank != 1)
        return op_fail(ctx, MOPT_ERR_SHAPE, "size %s must be 1-D: (N, C, H, W) or (N, C, D, H, W)",
                       op_shape_str(ctx, sz, s2));
    int32_t r = -1; /* spatial axes: 2 or 3 */
    if (known(th, 1)) {
        r = (int32_t)th->dims[1];
        if ((r != 2 && r != 3) || (known(th, 2) && th->dims[2] != r + 1))
            return op_fail(ctx, MOPT_ERR_SHAPE, "theta %s must be (N, 2, 3) or (N, 3, 4)",
                           op_shape_str(ctx, th, s1));
    }
    if (known(sz, 0)) {
        if (sz->dims[0] != 4 && sz->dims[0] != 5)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "size %s must have 4 (N, C, H, W) or 5 (N, C, D, H, W) values",
                           op_shape_str(ctx, sz, s2));
        if (r >= 0 && sz->dims[0] - 2 != r)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "theta %s does not fit a size of %" PRId64 " values",
                           op_shape_str(ctx, th, s1), sz->dims[0]);
        r = (int32_t)sz->dims[0] - 2;
    }
    if (r < 0) {
        ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    ir_shape y;
    memset(&y, 0, sizeof y);
    y.rank = r + 2;
    for (int32_t i = 0; i < y.rank; i++)
        y.syms[i] = -1;
    y.dims[r + 1] = r;
    y.syms[r + 1] = 0;
    if (th->rank >= 0) y.dims[0] = th->dims[0], y.syms[0] = th->syms[0];
    if (in[1].data) {
        int64_t v[5];
        int64_t n = op_read_ints(ctx, &in[1], "size", v, 5);
        if (n < 0) return MOPT_ERR_INVALID_ARGUMENT;
        if (n != r + 2)
            return op_fail(ctx, MOPT_ERR_SHAPE, "size has %" PRId64 " values; theta %s needs %d", n,
                           op_shape_str(ctx, th, s1), (int)r + 2);
        for (int32_t i = 0; i < n; i++)
            if (v[i] < 0)
                return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT, "size[%d] = %" PRId64 " is negative",
                               (int)i, v[i]);
        if (known(th, 0) && v[0] != th->dims[0])
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "size[0] = %" PRId64 " but theta %s has N = %" PRId64, v[0],
                           op_shape_str(ctx, th, s1), th->dims[0]);
        y.dims[0] = v[0], y.syms[0] = 0;
        for (int32_t i = 0; i < r; i++)
            y.dims[1 + i] = v[2 + i], y.syms[1 + i] = 0;
    }
    out[0].shape = y;
    return MOPT_OK;
}

static mopt_status affine_grid_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                   int n_out) {
    const affine_grid_params *p = ctx->params;
    int32_t r = out[0].shape.rank - 2;
    int64_t size[3];
    for (int32_t i = 0; i < r; i++)
        size[i] = out[0].shape.dims[1 + i];
    if (op_numel(&out[0]) == 0) return MOPT_OK;
    ref_affine_grid_f32(out[0].shape.dims[0], r, size, p->align_corners, in[0].data, out[0].data);
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"GridSample", "", 2, 2, 1, 1, grid_sample_infer, grid_sample_run, NULL,
     OP_PARAMS(grid_sample_params, grid_sample_parse), .bridge = &ops_bridge_float},
    {"AffineGrid", "", 2, 2, 1, 1, affine_grid_infer, affine_grid_run, NULL,
     OP_ATTRS(affine_grid_params, k_affine_grid_attrs), .bridge = &ops_bridge_float},
};

const op_def *ops_family_grid(size_t *count) {
    *count = sizeof k_ops / sizeof k_ops[0];
    return k_ops;
}
