/*
 * resize.c — Resize (opsets 10..19: nearest/linear/cubic, every
 * coordinate_transformation_mode, nearest_mode, cubic_coeff_a,
 * exclude_outside, extrapolation_value, axes, keep_aspect_ratio_policy,
 * antialias for linear/cubic) and the older Upsample (asymmetric, nearest
 * floor or linear). Computed in double, f32 in and out (f16/bf16/f64 via
 * the dtype bridge). Math in kernels/ref/resize.c.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/ref/ref_logic.h"
#include "kernels/ref/ref_resize.h"
#include "ops/bridge.h"
#include "ops/conv.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/impls.h"
#include "ops/op_common.h"
#include "ops/ops.h"

/* keep_aspect_ratio_policy */
typedef enum resize_policy {
    POLICY_STRETCH,
    POLICY_NOT_LARGER,
    POLICY_NOT_SMALLER,
    POLICY_UNKNOWN, /* fails when sizes are given */
} resize_policy;

typedef struct resize_params {
    ref_resize_params k;
    bool upsample; /* the node is an Upsample */
    /* axes (Resize 18+); has_axes: given at all */
    bool has_axes;
    const int64_t *axes;
    int64_t n_axes;
    /* Upsample before opset 9: the scales attribute */
    const float *scales;
    int64_t n_scales;
    resize_policy policy;
    const char *policy_name;
    bool channels_last; /* mopt.ChannelsLastResize: X and Y [N, H, W, C] */
} resize_params;

/* mopt.ChannelsLastResize (pass_layout.c) takes Resize-11+'s inputs and
 * attributes whatever its domain's opset. */
static bool old_form(const op_ctx *ctx, bool upsample) {
    return upsample || (ctx->opset < 11 && strcmp(ctx->def->domain, "mopt") != 0);
}

static mopt_status parse_kernel_params(const op_ctx *ctx, bool upsample, ref_resize_params *p) {
    memset(p, 0, sizeof *p);
    static const op_name_value k_modes[] = {{"nearest", REF_RESIZE_NEAREST},
                                            {"linear", REF_RESIZE_LINEAR},
                                            {"bilinear", REF_RESIZE_LINEAR},
                                            {"cubic", REF_RESIZE_CUBIC}};
    static const op_name_value k_coords[] = {
        {"half_pixel", REF_COORD_HALF_PIXEL},
        {"half_pixel_symmetric", REF_COORD_HALF_PIXEL_SYMMETRIC},
        {"pytorch_half_pixel", REF_COORD_PYTORCH_HALF_PIXEL},
        {"align_corners", REF_COORD_ALIGN_CORNERS},
        {"asymmetric", REF_COORD_ASYMMETRIC},
        {"tf_crop_and_resize", REF_COORD_TF_CROP_AND_RESIZE}};
    static const op_name_value k_nearest[] = {
        {"round_prefer_floor", REF_NEAREST_ROUND_PREFER_FLOOR},
        {"round_prefer_ceil", REF_NEAREST_ROUND_PREFER_CEIL},
        {"floor", REF_NEAREST_FLOOR},
        {"ceil", REF_NEAREST_CEIL}};
    const char *mode = ir_node_attr_string(ctx->node, "mode", "nearest");
    int v;
    if (!op_name_lookup(k_modes, OP_COUNT(k_modes), mode, &v) ||
        (v == REF_RESIZE_CUBIC && upsample))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "unknown mode '%s'", mode);
    p->mode = (ref_resize_mode)v;
    bool old = old_form(ctx, upsample);
    const char *ct =
        old ? "asymmetric"
            : ir_node_attr_string(ctx->node, "coordinate_transformation_mode", "half_pixel");
    if (!op_name_lookup(k_coords, OP_COUNT(k_coords), ct, &v))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "coordinate_transformation_mode '%s'", ct);
    p->coord = (ref_coord)v;
    const char *nm =
        old ? "floor" : ir_node_attr_string(ctx->node, "nearest_mode", "round_prefer_floor");
    if (!op_name_lookup(k_nearest, OP_COUNT(k_nearest), nm, &v))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "unknown nearest_mode '%s'", nm);
    p->nearest = (ref_nearest)v;
    p->cubic_a = ir_node_attr_float(ctx->node, "cubic_coeff_a", -0.75f);
    p->exclude_outside = ir_node_attr_int(ctx->node, "exclude_outside", 0) != 0;
    p->extrapolation = ir_node_attr_float(ctx->node, "extrapolation_value", 0.0f);
    p->antialias = ir_node_attr_int(ctx->node, "antialias", 0) != 0;
    return MOPT_OK;
}

static mopt_status parse_as(const op_ctx *ctx, resize_params *p, bool upsample) {
    mopt_status st = parse_kernel_params(ctx, upsample, &p->k);
    if (st) return st;
    p->upsample = upsample;
    p->channels_last = strcmp(ctx->def->domain, "mopt") == 0;
    p->has_axes = ir_node_attr(ctx->node, "axes") != NULL;
    p->n_axes = ir_node_attr_ints(ctx->node, "axes", &p->axes);
    p->n_scales = ir_node_attr_floats(ctx->node, "scales", &p->scales);
    static const op_name_value k_policies[] = {{"stretch", POLICY_STRETCH},
                                               {"not_larger", POLICY_NOT_LARGER},
                                               {"not_smaller", POLICY_NOT_SMALLER}};
    p->policy_name = ir_node_attr_string(ctx->node, "keep_aspect_ratio_policy", "stretch");
    int v;
    p->policy = op_name_lookup(k_policies, OP_COUNT(k_policies), p->policy_name, &v)
                    ? (resize_policy)v
                    : POLICY_UNKNOWN;
    return MOPT_OK;
}

static mopt_status resize_parse(const op_ctx *ctx, void *params) {
    return parse_as(ctx, params, false);
}

static mopt_status upsample_parse(const op_ctx *ctx, void *params) {
    return parse_as(ctx, params, true);
}

/* Output dims, per-axis scales and roi. Returns 1 when the sizes/scales are
 * not known yet (load time). */
static int plan(const op_ctx *ctx, const op_tensor *in, int n_in, int64_t *out_dims, double *scales,
                double *roi, mopt_status *st) {
    *st = MOPT_OK;
    const ir_shape *x = &in[0].shape;
    int32_t r = x->rank;
    if (r < 0 || !ir_shape_is_concrete(x)) return 1;
    const resize_params *p = ctx->params;
    bool up = p->upsample, old = old_form(ctx, up);
    int k_scales = old ? 1 : 2, k_sizes = old ? -1 : 3;
    int32_t axes[IR_MAX_RANK];
    int n_axes = r;
    for (int32_t a = 0; a < r; a++)
        axes[a] = a;
    const int64_t *ax_attr = p->axes;
    int64_t n_ax = p->n_axes;
    if (p->has_axes) {
        if (n_ax > r) {
            *st = op_fail(ctx, MOPT_ERR_INVALID_MODEL, "too many axes");
            return 0;
        }
        n_axes = (int)n_ax;
        for (int i = 0; i < n_axes; i++)
            if ((*st = op_axis(ctx, ax_attr[i], r, "axes", &axes[i]))) return 0;
    }
    for (int32_t a = 0; a < r; a++) {
        out_dims[a] = x->dims[a];
        scales[a] = 1.0;
        roi[a] = 0.0;
        roi[r + a] = 1.0;
    }
    if (!old && op_has_input(in, n_in, 1) && op_numel(&in[1]) > 0) {
        if (!in[1].data) return 1;
        double rv[2 * IR_MAX_RANK];
        int64_t nr = op_numel(&in[1]);
        if (nr != 2 * n_axes) {
            *st = op_fail(ctx, MOPT_ERR_SHAPE, "roi must have %d values", 2 * n_axes);
            return 0;
        }
        ref_cast(in[1].dtype, in[1].data, MOPT_DTYPE_F64, rv, nr);
        for (int i = 0; i < n_axes; i++)
            roi[axes[i]] = rv[i], roi[r + axes[i]] = rv[n_axes + i];
    }
    bool have_sizes = k_sizes >= 0 && op_has_input(in, n_in, k_sizes) && op_numel(&in[k_sizes]) > 0;
    bool have_scales = op_has_input(in, n_in, k_scales) && op_numel(&in[k_scales]) > 0;
    if (up && ctx->opset < 9) {
        const float *sa = p->scales;
        int64_t ns = p->n_scales;
        if (ns != r) {
            *st = op_fail(ctx, MOPT_ERR_INVALID_MODEL, "scales must have %d values", (int)r);
            return 0;
        }
        for (int32_t a = 0; a < r; a++) {
            scales[a] = sa[a];
            out_dims[a] = (int64_t)floor((double)x->dims[a] * sa[a]);
        }
        return 0;
    }
    if (have_sizes == have_scales) {
        *st = op_fail(ctx, MOPT_ERR_INVALID_MODEL, "exactly one of scales and sizes must be given");
        return 0;
    }
    if (have_scales) {
        if (!in[k_scales].data) return 1;
        if (op_numel(&in[k_scales]) != n_axes) {
            *st = op_fail(ctx, MOPT_ERR_SHAPE, "scales must have %d values", n_axes);
            return 0;
        }
        float sv[IR_MAX_RANK];
        ref_cast(in[k_scales].dtype, in[k_scales].data, MOPT_DTYPE_F32, sv, n_axes);
        for (int i = 0; i < n_axes; i++) {
            if (!(sv[i] > 0)) {
                *st = op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT, "scales must be > 0");
                return 0;
            }
            scales[axes[i]] = sv[i];
            double od = floor((double)x->dims[axes[i]] * (double)sv[i]);
            if (!(od < 0x1p62)) {
                *st = op_fail(ctx, MOPT_ERR_LIMIT, "scales give an axis of %.0f", od);
                return 0;
            }
            out_dims[axes[i]] = (int64_t)od;
        }
        return 0;
    }
    if (!in[k_sizes].data) return 1;
    int64_t sz[IR_MAX_RANK];
    if (op_read_ints(ctx, &in[k_sizes], "sizes", sz, IR_MAX_RANK) != n_axes) {
        *st = op_fail(ctx, MOPT_ERR_SHAPE, "sizes must have %d values", n_axes);
        return 0;
    }
    if (p->policy == POLICY_STRETCH) {
        for (int i = 0; i < n_axes; i++) {
            out_dims[axes[i]] = sz[i];
            scales[axes[i]] = (double)sz[i] / (double)x->dims[axes[i]];
        }
    } else {
        bool larger = p->policy == POLICY_NOT_SMALLER;
        if (p->policy == POLICY_UNKNOWN) {
            *st = op_fail(ctx, MOPT_ERR_INVALID_MODEL, "keep_aspect_ratio_policy '%s'",
                          p->policy_name);
            return 0;
        }
        double s = larger ? 0 : INFINITY;
        for (int i = 0; i < n_axes; i++) {
            double v = (double)sz[i] / (double)x->dims[axes[i]];
            s = larger ? fmax(s, v) : fmin(s, v);
        }
        for (int i = 0; i < n_axes; i++) {
            scales[axes[i]] = s;
            out_dims[axes[i]] = (int64_t)floor(s * (double)x->dims[axes[i]] + 0.5);
        }
    }
    return 0;
}

int ops_resize_plan(const op_ctx *ctx, const op_tensor *in, int n_in, int64_t *out_dims,
                    double *scales, double *roi, mopt_status *st) {
    return plan(ctx, in, n_in, out_dims, scales, roi, st);
}

bool ops_resize_channels_last(const op_ctx *ctx) {
    return ((const resize_params *)ctx->params)->channels_last;
}

const ref_resize_params *ops_resize_kernel_params(const op_ctx *ctx) {
    return &((const resize_params *)ctx->params)->k;
}

static mopt_status resize_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    mopt_status st;
    if ((st = op_expect_f32(ctx, &in[0], 0))) return st;
    out[0].dtype = in[0].dtype;
    int64_t od[IR_MAX_RANK];
    double sc[IR_MAX_RANK], roi[2 * IR_MAX_RANK];
    if (plan(ctx, in, n_in, od, sc, roi, &st)) {
        /* an axis with a constant scale of 1 (Resize 11+, no sizes, no axes,
         * no crop) keeps its size, known or symbolic: N and C of an image
         * upsample, so that later passes see them */
        const resize_params *p = ctx->params;
        const float *scales = NULL;
        bool keep = !old_form(ctx, p->upsample) && !p->has_axes && n_in >= 3 &&
                    !op_has_input(in, n_in, 3) && in[2].data && in[2].dtype == MOPT_DTYPE_F32 &&
                    op_numel(&in[2]) == in[0].shape.rank &&
                    p->k.coord != REF_COORD_TF_CROP_AND_RESIZE;
        if (keep) scales = in[2].data;
        out[0].shape = in[0].shape;
        for (int32_t a = 0; a < out[0].shape.rank; a++)
            if (!scales || scales[a] != 1.0f) out[0].shape.syms[a] = -1;
        return MOPT_OK;
    }
    if (st) return st;
    ir_shape_set(&out[0].shape, in[0].shape.rank, od);
    return MOPT_OK;
}

static mopt_status resize_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    const ref_resize_params *p = &((const resize_params *)ctx->params)->k;
    mopt_status st;
    int64_t od[IR_MAX_RANK];
    double sc[IR_MAX_RANK], roi[2 * IR_MAX_RANK];
    if (plan(ctx, in, n_in, od, sc, roi, &st) || st)
        return st ? st : op_fail(ctx, MOPT_ERR_INTERNAL, "sizes unknown at run time");
    const ir_shape *x = &in[0].shape;
    int32_t r = x->rank;
    /* axes that shrink (or keep their size) first, then those that grow:
     * the intermediates then never exceed max(input, output) elements,
     * whereas in axis order [1, N] -> [N, 1] went through [N, N] (20 GB of
     * scratch for N = 50000). The passes are separable and commute. */
    int32_t order[IR_MAX_RANK], n_order = 0;
    for (int32_t pass = 0; pass < 2; pass++)
        for (int32_t a = 0; a < r; a++)
            if ((od[a] > x->dims[a]) == (pass == 1)) order[n_order++] = a;
    /* largest intermediate: every prefix of the ordered axes resized */
    int64_t cur[IR_MAX_RANK], cap = op_numel(&in[0]);
    for (int32_t a = 0; a < r; a++)
        cur[a] = x->dims[a];
    for (int32_t k = 0; k < r; k++) {
        int32_t a = order[k];
        cur[a] = od[a];
        int64_t n = 1;
        for (int32_t b = 0; b < r; b++)
            n *= cur[b];
        if (n > cap) cap = n;
    }
    double *A = op_work_get(ctx, 0, (size_t)cap * sizeof(double));
    double *B = op_work_get(ctx, 1, (size_t)cap * sizeof(double));
    if (!A || !B) {
        op_work_put(ctx, A), op_work_put(ctx, B);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    }
    ref_cast(MOPT_DTYPE_F32, in[0].data, MOPT_DTYPE_F64, A, op_numel(&in[0]));
    for (int32_t a = 0; a < r; a++)
        cur[a] = x->dims[a];
    for (int32_t k = 0; k < r; k++) {
        int32_t a = order[k];
        bool identity =
            od[a] == x->dims[a] && sc[a] == 1.0 && p->coord != REF_COORD_TF_CROP_AND_RESIZE;
        if (identity) continue;
        int64_t outer = 1, inner = 1;
        for (int32_t b = 0; b < a; b++)
            outer *= cur[b];
        for (int32_t b = a + 1; b < r; b++)
            inner *= cur[b];
        if (cur[a] == 0 || od[a] == 0 || outer == 0 || inner == 0) {
            cur[a] = od[a];
            continue;
        }
        if (ref_resize_axis(p, outer, cur[a], od[a], inner, sc[a], roi[a], roi[r + a], A, B)) {
            op_work_put(ctx, A), op_work_put(ctx, B);
            return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the antialias taps");
        }
        cur[a] = od[a];
        double *t = A;
        A = B, B = t;
    }
    ref_cast(MOPT_DTYPE_F64, A, MOPT_DTYPE_F32, out[0].data, op_numel(&out[0]));
    op_work_put(ctx, A), op_work_put(ctx, B);
    return MOPT_OK;
}

/* mopt.ChannelsLastResize: the reference works on plain copies */
static mopt_status cl_resize_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    if (in[0].shape.rank != 4 || out[0].shape.rank != 4)
        return op_fail(ctx, MOPT_ERR_SHAPE, "a channels-last Resize needs 4-D X and Y");
    int64_t n = in[0].shape.dims[0], c = in[0].shape.dims[1];
    int64_t nx = op_numel(&in[0]), ny = op_numel(&out[0]);
    /* work buffers 2 and 3: resize_run uses 0 and 1 */
    float *tx = op_work_get(ctx, 2, (size_t)nx * sizeof(float) + 1);
    float *ty = op_work_get(ctx, 3, (size_t)ny * sizeof(float) + 1);
    if (!tx || !ty) {
        op_work_put(ctx, tx);
        op_work_put(ctx, ty);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory for a channels-last copy");
    }
    int64_t nc = n * c;
    if (nc > 0) ops_conv_relayout(in[0].data, tx, n, c, nx / nc, false);
    op_tensor pin[4], pout = out[0];
    for (int k = 0; k < n_in && k < 4; k++)
        pin[k] = in[k];
    pin[0].data = tx;
    pout.data = ty;
    mopt_status st = resize_run(ctx, pin, n_in, &pout, n_out);
    if (!st && nc > 0) ops_conv_relayout(ty, out[0].data, n, c, ny / nc, true);
    op_work_put(ctx, tx);
    op_work_put(ctx, ty);
    return st;
}

static const op_def k_ops[] = {
    {"Resize", "", 1, 4, 1, 1, resize_infer, resize_run, ops_cpu_resize_impls,
     OP_PARAMS(resize_params, resize_parse), .bridge = &ops_bridge_float},
    {"Upsample", "", 1, 2, 1, 1, resize_infer, resize_run, ops_cpu_resize_impls,
     OP_PARAMS(resize_params, upsample_parse), .bridge = &ops_bridge_float},
    /* the layout pass's (pass_layout.c): nearest Resize on channels-last X and Y */
    {"ChannelsLastResize", "mopt", 1, 4, 1, 1, resize_infer, cl_resize_run, ops_cpu_resize_impls,
     OP_PARAMS(resize_params, resize_parse)},
};

OP_FAMILY(resize, k_ops)
