/*
 * layout.c — the "layout" operator family (domain "mopt"): operators on
 * channels-last data that the layout pass (lib/passes/pass_layout.c) puts
 * where a squeeze-excitation block reads a channels-last activation. Shapes
 * are the logical [N, C, spatial...] ones; only the memory order differs.
 *   mopt.ChannelsLastGlobalAveragePool(X) -> Y: GlobalAveragePool of an X
 *     stored channels-last ([N, spatial..., C]), or with blocked=1 in
 *     oneDNN's blocked layout ([N, C/16, spatial..., 16]: each block of 16
 *     channels a channels-last image); Y [N, C, 1...] (the same bytes in
 *     any layout).
 *   mopt.ChannelsLastScale(X, S) -> Y: Y = X * S with X and Y stored
 *     channels-last and S of X's rank, [N or 1, C or 1, 1...] (plain:
 *     the same bytes in either layout), broadcast over the spatial axes.
 *   mopt.ChannelsLastAffine(X, A, B) -> Y: Y = X * A[c] + B[c] with X and Y
 *     stored channels-last and A, B [C]: an inference BatchNormalization
 *     the layout pass folded into one scale and shift per channel.
 * The runs here are simple loops over contiguous channel rows, the
 * reference; lib/ops/cpu/layout_cpu.c has the cpu impls (kernels/cpu, split
 * over threads).
 */
#include <math.h>

#include "ops/impls.h"
#include "ops/layout.h"
#include "ops/op_common.h"
#include "ops/ops.h"

static mopt_status x_check(const op_ctx *ctx, const op_tensor *x) {
    mopt_status st = op_expect_f32(ctx, x, 0);
    if (st) return st;
    if (x->shape.rank >= 0 && (x->shape.rank < 3 || x->shape.rank > 5)) {
        char sx[IR_SHAPE_STR_CAP];
        return op_fail(ctx, MOPT_ERR_SHAPE, "X %s must have rank 3 to 5 (N, C, spatial...)",
                       op_shape_str(ctx, &x->shape, sx));
    }
    return MOPT_OK;
}

/* N, C and the spatial size of a concrete [N, C, spatial...] shape. */
static void nc_sp(const ir_shape *s, int64_t *n, int64_t *c, int64_t *sp) {
    *n = s->dims[0];
    *c = s->dims[1];
    *sp = 1;
    for (int32_t i = 2; i < s->rank; i++)
        *sp *= s->dims[i];
}

/* ---- mopt.ChannelsLastGlobalAveragePool ----------------------------------- */

static mopt_status gap_parse(const op_ctx *ctx, void *params) {
    clgap_params *p = params;
    int64_t blk = ir_node_attr_int(ctx->node, "blocked", 0);
    if (blk != 0 && blk != 1)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "blocked %lld is not 0 or 1", (long long)blk);
    p->blocked = blk == 1;
    return MOPT_OK;
}

/* The images and channels of a run of gap_run or its cpu impl: blocked,
 * each block of 16 channels is an image of 16. */
void ops_clgap_rows(const op_ctx *ctx, const ir_shape *x, int64_t *n, int64_t *c) {
    *n = x->dims[0];
    *c = x->dims[1];
    if (((const clgap_params *)ctx->params)->blocked) {
        *n *= *c / 16;
        *c = 16;
    }
}

static mopt_status gap_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    mopt_status st = x_check(ctx, &in[0]);
    if (st) return st;
    const ir_shape *xs = &in[0].shape;
    if (((const clgap_params *)ctx->params)->blocked && xs->rank >= 0 &&
        (xs->syms[1] != 0 || xs->dims[1] <= 0 || xs->dims[1] % 16))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "a blocked X needs a known channel count, a multiple of 16");
    out[0].dtype = MOPT_DTYPE_F32;
    out[0].shape = in[0].shape;
    for (int32_t i = 2; i < in[0].shape.rank; i++) {
        out[0].shape.dims[i] = 1;
        out[0].shape.syms[i] = 0;
    }
    return MOPT_OK;
}

static mopt_status gap_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    int64_t n, c, sp;
    nc_sp(&in[0].shape, &n, &c, &sp);
    ops_clgap_rows(ctx, &in[0].shape, &n, &c);
    const float *x = in[0].data;
    float *y = out[0].data;
    float inv = sp > 0 ? 1.0f / (float)sp : 0.0f;
    for (int64_t b = 0; b < n; b++) {
        float *acc = y + b * c;
        for (int64_t ch = 0; ch < c; ch++)
            acc[ch] = 0.0f;
        for (int64_t i = 0; i < sp; i++) {
            const float *row = x + (b * sp + i) * c;
            for (int64_t ch = 0; ch < c; ch++)
                acc[ch] += row[ch];
        }
        for (int64_t ch = 0; ch < c; ch++)
            acc[ch] = sp > 0 ? acc[ch] * inv : NAN;
    }
    return MOPT_OK;
}

/* ---- mopt.ChannelsLastScale ----------------------------------------------- */

/* S: X's rank, [N or 1, C or 1, 1...] (unknown dims accepted at load time). */
static mopt_status scale_check(const op_ctx *ctx, const ir_shape *x, const ir_shape *s) {
    if (x->rank < 0 || s->rank < 0) return MOPT_OK;
    bool ok = s->rank == x->rank;
    for (int32_t i = 0; ok && i < s->rank; i++) {
        if (s->syms[i] != 0 || s->dims[i] < 0) {
            ok = i < 2 && (s->syms[i] == x->syms[i] || s->syms[i] < 0 || x->syms[i] < 0);
            continue;
        }
        if (i >= 2)
            ok = s->dims[i] == 1;
        else
            ok = s->dims[i] == 1 || x->syms[i] != 0 || x->dims[i] < 0 || s->dims[i] == x->dims[i];
    }
    if (ok) return MOPT_OK;
    char sx[IR_SHAPE_STR_CAP], ss[IR_SHAPE_STR_CAP];
    return op_fail(ctx, MOPT_ERR_SHAPE, "S %s must be [N or 1, C or 1, 1...] for X %s",
                   op_shape_str(ctx, s, ss), op_shape_str(ctx, x, sx));
}

static mopt_status scale_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    mopt_status st = x_check(ctx, &in[0]);
    if (!st) st = op_expect_f32(ctx, &in[1], 1);
    if (!st) st = scale_check(ctx, &in[0].shape, &in[1].shape);
    if (st) return st;
    out[0].dtype = MOPT_DTYPE_F32;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

static mopt_status scale_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    mopt_status st = scale_check(ctx, &in[0].shape, &in[1].shape);
    if (st) return st;
    int64_t n, c, sp;
    nc_sp(&in[0].shape, &n, &c, &sp);
    const ir_shape *ss = &in[1].shape;
    bool s_batch = ss->dims[0] != 1, s_chan = ss->dims[1] != 1;
    const float *x = in[0].data, *s = in[1].data;
    float *y = out[0].data;
    for (int64_t b = 0; b < n; b++) {
        const float *sb = s + (s_batch ? b * (s_chan ? c : 1) : 0);
        for (int64_t i = 0; i < sp; i++) {
            const float *xr = x + (b * sp + i) * c;
            float *yr = y + (b * sp + i) * c;
            if (s_chan)
                for (int64_t ch = 0; ch < c; ch++)
                    yr[ch] = xr[ch] * sb[ch];
            else
                for (int64_t ch = 0; ch < c; ch++)
                    yr[ch] = xr[ch] * sb[0];
        }
    }
    return MOPT_OK;
}

static int64_t scale_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                           int n_out) {
    return ir_shape_numel(&out[0].shape);
}

/* ---- mopt.ChannelsLastAffine ---------------------------------------------- */

static mopt_status affine_check(const op_ctx *ctx, const op_tensor *in) {
    mopt_status st = x_check(ctx, &in[0]);
    for (int k = 1; !st && k < 3; k++) {
        st = op_expect_f32(ctx, &in[k], k);
        const ir_shape *x = &in[0].shape, *p = &in[k].shape;
        if (st || x->rank < 0 || p->rank < 0) continue;
        bool ok = p->rank == 1 && (p->syms[0] != 0 || x->syms[1] != 0 || p->dims[0] < 0 ||
                                   x->dims[1] < 0 || p->dims[0] == x->dims[1]);
        if (!ok) {
            char sx[IR_SHAPE_STR_CAP], sp[IR_SHAPE_STR_CAP];
            st = op_fail(ctx, MOPT_ERR_SHAPE, "%s %s must be [C] for X %s", k == 1 ? "A" : "B",
                         op_shape_str(ctx, p, sp), op_shape_str(ctx, x, sx));
        }
    }
    return st;
}

static mopt_status affine_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    mopt_status st = affine_check(ctx, in);
    if (st) return st;
    out[0].dtype = MOPT_DTYPE_F32;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

static mopt_status affine_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    mopt_status st = affine_check(ctx, in);
    if (st) return st;
    int64_t n, c, sp;
    nc_sp(&in[0].shape, &n, &c, &sp);
    const float *x = in[0].data, *a = in[1].data, *b = in[2].data;
    float *y = out[0].data;
    for (int64_t r = 0; r < n * sp; r++) {
        const float *xr = x + r * c;
        float *yr = y + r * c;
        for (int64_t ch = 0; ch < c; ch++)
            yr[ch] = xr[ch] * a[ch] + b[ch];
    }
    return MOPT_OK;
}

static int64_t affine_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                            int n_out) {
    return 2 * ir_shape_numel(&out[0].shape);
}

/* Domain "mopt": never bridged. */
static const op_def k_ops[] = {
    {"ChannelsLastGlobalAveragePool", "mopt", 1, 1, 1, 1, gap_infer, gap_run, ops_cpu_clgap_impls,
     OP_PARAMS(clgap_params, gap_parse)},
    {"ChannelsLastScale", "mopt", 2, 2, 1, 1, scale_infer, scale_run, ops_cpu_clscale_impls,
     .flops = scale_flops},
    {"ChannelsLastAffine", "mopt", 3, 3, 1, 1, affine_infer, affine_run, ops_cpu_claffine_impls,
     .flops = affine_flops},
};

OP_FAMILY(layout, k_ops)
