/*
 * normalization2.c — more normalization operators: RMSNormalization
 * (opset 23; scale broadcast like numpy), GroupNormalization (opset 18 with
 * per-group scale/bias, opset 21 per-channel), LpNormalization (p 1 or 2)
 * and MeanVarianceNormalization (axes, default [0, 2, 3]). f32; f16/bf16/f64
 * through the dtype bridge. Math in kernels/ref/normalization2.c.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/ref/ref_elementwise.h"
#include "kernels/ref/ref_normalization2.h"
#include "ops/bridge.h"
#include "ops/ops.h"

static mopt_status same_as_x(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_check) {
    mopt_status st;
    for (int k = 0; k < n_check && k < n_in; k++)
        if (in[k].dtype != MOPT_DTYPE_UNDEFINED &&
            ((st = op_expect_f32(ctx, &in[k], k)) || (k && (st = op_same_dtype(ctx, in, 0, k)))))
            return st;
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

/* ---- RMSNormalization ------------------------------------------------------ */

typedef struct rms_params {
    int64_t axis;
    float epsilon;
} rms_params;

static mopt_status rms_parse(const op_ctx *ctx, void *params) {
    rms_params *p = params;
    p->axis = ir_node_attr_int(ctx->node, "axis", -1);
    p->epsilon = ir_node_attr_float(ctx->node, "epsilon", 1e-5f);
    return MOPT_OK;
}

static mopt_status rms_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    (void)n_out;
    mopt_status st = same_as_x(ctx, in, n_in, out, 2);
    if (st) return st;
    if (in[0].shape.rank >= 0) {
        int32_t ax;
        const rms_params *p = ctx->params;
        if ((st = op_axis(ctx, p->axis, in[0].shape.rank, "axis", &ax))) return st;
        ir_shape tmp;
        if ((st = op_broadcast(ctx, &in[0].shape, &in[1].shape, &tmp))) return st;
        if (tmp.rank != in[0].shape.rank)
            return op_fail(ctx, MOPT_ERR_SHAPE, "scale has a higher rank than X");
    }
    return MOPT_OK;
}

static mopt_status rms_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    (void)n_in, (void)n_out;
    const rms_params *p = ctx->params;
    int32_t ax;
    mopt_status st;
    if ((st = op_axis(ctx, p->axis, in[0].shape.rank, "axis", &ax))) return st;
    int64_t outer = 1, inner = 1;
    for (int32_t a = 0; a < in[0].shape.rank; a++)
        *(a < ax ? &outer : &inner) *= in[0].shape.dims[a];
    ref_rms_norm(outer, inner, p->epsilon, in[0].data, out[0].data);
    /* y *= scale (broadcast) */
    int64_t sy[IR_MAX_RANK], ss[IR_MAX_RANK];
    op_strides(&out[0].shape, sy);
    op_broadcast_strides(&in[1].shape, &out[0].shape, ss);
    ref_row2_fn mul = ref_binary_row(REF_BIN_MUL, MOPT_DTYPE_F32, MOPT_DTYPE_F32);
    ref_broadcast2(mul, out[0].shape.rank, out[0].shape.dims, out[0].data, 4, sy, in[1].data, 4, ss,
                   out[0].data, 4);
    return MOPT_OK;
}

/* ---- GroupNormalization ---------------------------------------------------- */

typedef struct group_params {
    int64_t num_groups; /* > 0 */
    float epsilon;
} group_params;

static mopt_status group_parse(const op_ctx *ctx, void *params) {
    group_params *p = params;
    p->num_groups = ir_node_attr_int(ctx->node, "num_groups", 0);
    if (p->num_groups <= 0) return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "num_groups must be > 0");
    p->epsilon = ir_node_attr_float(ctx->node, "epsilon", 1e-5f);
    return MOPT_OK;
}

static mopt_status group_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    (void)n_out;
    mopt_status st = same_as_x(ctx, in, n_in, out, 3);
    if (st) return st;
    int64_t g = ((const group_params *)ctx->params)->num_groups;
    const ir_shape *x = &in[0].shape;
    if (x->rank >= 0 && x->rank < 2) return op_fail(ctx, MOPT_ERR_SHAPE, "X must be [N, C, ...]");
    if (x->rank >= 2 && x->syms[1] == 0 && x->dims[1] % g)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "C = %" PRId64 " is not a multiple of num_groups = %" PRId64, x->dims[1], g);
    return MOPT_OK;
}

static mopt_status group_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    (void)n_in, (void)n_out;
    const group_params *p = ctx->params;
    int64_t g = p->num_groups;
    const ir_shape *x = &in[0].shape;
    int64_t c = x->dims[1], sp = 1;
    for (int32_t a = 2; a < x->rank; a++)
        sp *= x->dims[a];
    int per_group = op_numel(&in[1]) == g && g != c;
    int64_t want = per_group ? g : c;
    if (op_numel(&in[1]) != want || op_numel(&in[2]) != want)
        return op_fail(ctx, MOPT_ERR_SHAPE, "scale and bias must have C (or num_groups) values");
    if (per_group && ctx->opset >= 21)
        return op_fail(ctx, MOPT_ERR_SHAPE, "scale and bias must have C values (opset 21)");
    ref_group_norm(x->dims[0], c, sp, g, p->epsilon, in[1].data, in[2].data, per_group, in[0].data,
                   out[0].data);
    return MOPT_OK;
}

/* ---- LpNormalization --------------------------------------------------------- */

typedef struct lp_params {
    int64_t axis;
    int p; /* 1 or 2 */
} lp_params;

static mopt_status lp_parse(const op_ctx *ctx, void *params) {
    lp_params *lp = params;
    int64_t p = ir_node_attr_int(ctx->node, "p", 2);
    if (p != 1 && p != 2) return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "p must be 1 or 2");
    lp->p = (int)p;
    lp->axis = ir_node_attr_int(ctx->node, "axis", -1);
    return MOPT_OK;
}

static mopt_status lp_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    (void)n_out;
    mopt_status st = same_as_x(ctx, in, n_in, out, 1);
    if (st) return st;
    int32_t ax;
    if (in[0].shape.rank >= 0)
        return op_axis(ctx, ((const lp_params *)ctx->params)->axis, in[0].shape.rank, "axis", &ax);
    return MOPT_OK;
}

static mopt_status lp_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                          int n_out) {
    (void)n_in, (void)n_out;
    const lp_params *p = ctx->params;
    int32_t ax;
    mopt_status st;
    if ((st = op_axis(ctx, p->axis, in[0].shape.rank, "axis", &ax))) return st;
    int64_t outer, len, inner;
    op_axis_split(&in[0].shape, ax, &outer, &len, &inner);
    ref_lp_norm(outer, len, inner, p->p, in[0].data, out[0].data);
    return MOPT_OK;
}

/* ---- MeanVarianceNormalization -------------------------------------------- */

typedef struct mvn_params {
    const int64_t *axes; /* the node's attribute, or [0, 2, 3] when absent */
    int64_t n_axes;
} mvn_params;

static mopt_status mvn_parse(const op_ctx *ctx, void *params) {
    mvn_params *p = params;
    static const int64_t k_def[] = {0, 2, 3};
    p->n_axes = ir_node_attr_ints(ctx->node, "axes", &p->axes);
    if (!ir_node_attr(ctx->node, "axes")) p->axes = k_def, p->n_axes = 3;
    return MOPT_OK;
}

static mopt_status mvn_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    (void)n_out;
    return same_as_x(ctx, in, n_in, out, 1);
}

static mopt_status mvn_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    (void)n_in, (void)n_out;
    const ir_shape *x = &in[0].shape;
    const mvn_params *p = ctx->params;
    const int64_t *axes = p->axes;
    int64_t n_axes = p->n_axes;
    bool red[IR_MAX_RANK] = {false};
    for (int64_t i = 0; i < n_axes; i++) {
        int32_t a;
        mopt_status st = op_axis(ctx, axes[i], x->rank, "axes", &a);
        if (st) return st;
        red[a] = true;
    }
    /* per kept index: mean and variance over the reduced axes (generic walk) */
    int64_t n = op_numel(&in[0]), st_[IR_MAX_RANK];
    op_strides(x, st_);
    int64_t cnt = 1;
    for (int32_t a = 0; a < x->rank; a++)
        if (red[a]) cnt *= x->dims[a];
    const float *xd = in[0].data;
    float *yd = out[0].data;
    double *acc = mopt_calloc((size_t)(n > 0 ? n : 1) * 2, sizeof(double));
    if (!acc) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    /* key of an element: its offset with reduced axes zeroed */
    for (int64_t i = 0; i < n; i++) {
        int64_t key = 0, r = i;
        for (int32_t a = 0; a < x->rank; a++) {
            int64_t idx = r / st_[a];
            r %= st_[a];
            if (!red[a]) key += idx * st_[a];
        }
        acc[2 * key] += xd[i];
        acc[2 * key + 1] += (double)xd[i] * xd[i];
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t key = 0, r = i;
        for (int32_t a = 0; a < x->rank; a++) {
            int64_t idx = r / st_[a];
            r %= st_[a];
            if (!red[a]) key += idx * st_[a];
        }
        double m = acc[2 * key] / (double)cnt, v = acc[2 * key + 1] / (double)cnt - m * m;
        yd[i] = (float)(((double)xd[i] - m) / sqrt((v > 0 ? v : 0) + 1e-9));
    }
    mopt_free(acc);
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"RMSNormalization", "", 2, 2, 1, 1, rms_infer, rms_run, NULL,
     .params_size = sizeof(rms_params), .parse = rms_parse, .bridge = &ops_bridge_float},
    {"GroupNormalization", "", 3, 3, 1, 1, group_infer, group_run, NULL,
     .params_size = sizeof(group_params), .parse = group_parse, .bridge = &ops_bridge_float},
    {"LpNormalization", "", 1, 1, 1, 1, lp_infer, lp_run, NULL, .params_size = sizeof(lp_params),
     .parse = lp_parse, .bridge = &ops_bridge_float},
    {"MeanVarianceNormalization", "", 1, 1, 1, 1, mvn_infer, mvn_run, NULL,
     .params_size = sizeof(mvn_params), .parse = mvn_parse, .bridge = &ops_bridge_float},
};

const op_def *ops_family_normalization2(size_t *count) {
    *count = sizeof k_ops / sizeof k_ops[0];
    return k_ops;
}
