/*
 * normalization.c — the "normalization" operator family: BatchNormalization
 * (inference mode only), InstanceNormalization, LayerNormalization (opset 17,
 * with the optional Mean/InvStdDev outputs; mopt.LayerNormalization adds a
 * 4th, a copy of Y for int8 matmuls), RMSNormalization (opset 23;
 * scale broadcast like numpy), GroupNormalization (opset 18 with per-group
 * scale/bias, opset 21 per-channel), LpNormalization (p 1 or 2),
 * MeanVarianceNormalization (axes, default [0, 2, 3]), Softmax and
 * LogSoftmax (along `axis` since opset 13, coerced to 2-D at `axis` before).
 * Shape/type inference, validation and attribute parsing (f32; f16/bf16/f64
 * through the dtype bridge); the math is in kernels/ref/normalization.c.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/ref/ref_elementwise.h"
#include "kernels/ref/ref_normalization.h"
#include "ops/bridge.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/normalization.h"
#include "ops/op_common.h"
#include "ops/ops.h"

/* Product of dims [from, to) of a concrete shape. */
static int64_t dims_product(const ir_shape *s, int32_t from, int32_t to) {
    int64_t p = 1;
    for (int32_t i = from; i < to; i++)
        p *= s->dims[i];
    return p;
}

/* Checks that input k is 1-D with as many values as X has channels. */
static mopt_status check_channel_param(const op_ctx *ctx, const op_tensor *in, int k,
                                       const char *what) {
    const ir_shape *x = &in[0].shape, *p = &in[k].shape;
    if (p->rank < 0) return MOPT_OK;
    char sx[IR_SHAPE_STR_CAP], sp[IR_SHAPE_STR_CAP];
    bool bad = p->rank != 1;
    if (!bad && x->rank >= 2 && x->syms[1] == 0 && p->syms[0] == 0 && p->dims[0] != x->dims[1])
        bad = true;
    if (bad)
        return op_fail(ctx, MOPT_ERR_SHAPE, "%s %s must be 1-D with one value per channel of X %s",
                       what, op_shape_str(ctx, p, sp), op_shape_str(ctx, x, sx));
    return MOPT_OK;
}

/* X (input 0) and inputs 1..n_params-1 must be float32; X rank >= min_rank. */
static mopt_status check_channel_op(const op_ctx *ctx, const op_tensor *in, int n_params,
                                    const char *const *names, int32_t min_rank) {
    for (int k = 0; k < n_params; k++) {
        mopt_status st = op_expect_f32(ctx, &in[k], k);
        if (st) return st;
    }
    char sx[IR_SHAPE_STR_CAP];
    if (in[0].shape.rank >= 0 && in[0].shape.rank < min_rank)
        return op_fail(ctx, MOPT_ERR_SHAPE, "X %s must have rank >= %d (N, C, ...)",
                       op_shape_str(ctx, &in[0].shape, sx), (int)min_rank);
    for (int k = 1; k < n_params; k++) {
        mopt_status st = check_channel_param(ctx, in, k, names[k]);
        if (st) return st;
    }
    return MOPT_OK;
}

/* BatchNormalization, InstanceNormalization: epsilon. */
typedef struct eps_params {
    float epsilon;
} eps_params;

static const op_attr_spec k_eps_attrs[] = {OP_ATTR_F32(eps_params, epsilon, "epsilon", 1e-5f)};

/* ---- BatchNormalization ------------------------------------------------- */

/* batchnorm_params: normalization.h (shared with cpu/normalization_cpu.c) */

static mopt_status batchnorm_parse(const op_ctx *ctx, void *params) {
    batchnorm_params *p = params;
    p->epsilon = ir_node_attr_float(ctx->node, "epsilon", 1e-5f);
    p->momentum = ir_node_attr_float(ctx->node, "momentum", 0.9f);
    p->training = ir_node_attr_int(ctx->node, "training_mode", 0) != 0;
    if (p->training && ctx->opset < 14)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "training_mode needs opset >= 14");
    if (ir_node_attr_int(ctx->node, "spatial", 1) == 0)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "spatial=0 is not supported");
    return MOPT_OK;
}

static mopt_status batchnorm_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                   int n_out) {
    const batchnorm_params *p = ctx->params;
    for (int k = 1; k < n_out; k++)
        if (ctx->node->outputs[k] >= 0 && (!p->training || k > 2))
            return op_fail(ctx, MOPT_ERR_UNSUPPORTED,
                           "output %d (statistics) needs training_mode=1 (opset 14+)", k);
    static const char *const names[] = {"X", "scale", "B", "input_mean", "input_var"};
    mopt_status st = check_channel_op(ctx, in, 5, names, 2);
    if (st) return st;
    out[0].dtype = MOPT_DTYPE_F32;
    out[0].shape = in[0].shape;
    /* running_mean, running_var (and omitted outputs) are [C] */
    for (int k = 1; k < n_out; k++) {
        out[k].dtype = MOPT_DTYPE_F32;
        out[k].shape = in[3].shape;
    }
    return MOPT_OK;
}

static mopt_status batchnorm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    const ir_shape *x = &in[0].shape;
    const batchnorm_params *p = ctx->params;
    int64_t n = x->dims[0], c = x->dims[1], inner = dims_product(x, 2, x->rank);
    if (!p->training) {
        ref_batchnorm_f32(n, c, inner, in[0].data, in[1].data, in[2].data, in[3].data, in[4].data,
                          p->epsilon, out[0].data);
        return MOPT_OK;
    }
    float *stats = op_work_get(ctx, 0, (size_t)(c > 0 ? 2 * c : 1) * sizeof(float));
    if (!stats) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for batch statistics");
    float *mean = stats, *var = stats + c;
    ref_batchnorm_stats_f32(n, c, inner, in[0].data, mean, var);
    ref_batchnorm_f32(n, c, inner, in[0].data, in[1].data, in[2].data, mean, var, p->epsilon,
                      out[0].data);
    const float *rm = in[3].data, *rv = in[4].data;
    for (int64_t j = 0; j < c; j++) {
        if (n_out > 1 && out[1].data)
            ((float *)out[1].data)[j] = rm[j] * p->momentum + mean[j] * (1.0f - p->momentum);
        if (n_out > 2 && out[2].data)
            ((float *)out[2].data)[j] = rv[j] * p->momentum + var[j] * (1.0f - p->momentum);
    }
    op_work_put(ctx, stats);
    return MOPT_OK;
}

/* ---- InstanceNormalization ---------------------------------------------- */

static mopt_status instancenorm_infer(const op_ctx *ctx, const op_tensor *in, int n_in,
                                      op_tensor *out, int n_out) {
    static const char *const names[] = {"input", "scale", "B"};
    mopt_status st = check_channel_op(ctx, in, 3, names, 3);
    if (st) return st;
    out[0].dtype = MOPT_DTYPE_F32;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

static mopt_status instancenorm_run(const op_ctx *ctx, const op_tensor *in, int n_in,
                                    op_tensor *out, int n_out) {
    const ir_shape *x = &in[0].shape;
    float eps = ((const eps_params *)ctx->params)->epsilon;
    ref_instancenorm_f32(x->dims[0], x->dims[1], dims_product(x, 2, x->rank), in[0].data,
                         in[1].data, in[2].data, eps, out[0].data);
    return MOPT_OK;
}

/* ---- LayerNormalization ------------------------------------------------- */

static const op_attr_spec k_layernorm_attrs[] = {
    OP_ATTR_I64(layernorm_params, axis, "axis", -1),
    OP_ATTR_F32(layernorm_params, epsilon, "epsilon", 1e-5f),
};

/* Checks that p broadcasts (unidirectionally) to the normalized dims x[axis:]. */
static mopt_status check_norm_param(const op_ctx *ctx, const ir_shape *x, int32_t axis,
                                    const ir_shape *p, const char *what) {
    if (p->rank < 0) return MOPT_OK;
    bool ok = p->rank <= x->rank - axis;
    for (int32_t i = 0; ok && i < p->rank; i++) {
        int32_t j = x->rank - p->rank + i;
        if (p->syms[i] == 0 && p->dims[i] == 1) continue;
        if (p->syms[i] == 0 && x->syms[j] == 0 && p->dims[i] != x->dims[j]) ok = false;
        if (p->syms[i] > 0 && x->syms[j] > 0 && p->syms[i] != x->syms[j]) ok = false;
    }
    if (ok) return MOPT_OK;
    char sx[IR_SHAPE_STR_CAP], sp[IR_SHAPE_STR_CAP];
    return op_fail(ctx, MOPT_ERR_SHAPE, "%s %s does not broadcast to X %s from axis %d", what,
                   op_shape_str(ctx, p, sp), op_shape_str(ctx, x, sx), (int)axis);
}

static mopt_status layernorm_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                   int n_out) {
    bool has_b = op_has_input(in, n_in, 2);
    mopt_status st = op_expect_f32(ctx, &in[0], 0);
    if (!st) st = op_expect_f32(ctx, &in[1], 1);
    if (!st && has_b) st = op_expect_f32(ctx, &in[2], 2);
    if (st) return st;
    for (int k = 0; k < n_out; k++)
        out[k].dtype = MOPT_DTYPE_F32;
    const ir_shape *x = &in[0].shape;
    if (x->rank < 0) {
        for (int k = 0; k < n_out; k++)
            ir_shape_set_unknown(&out[k].shape);
        return MOPT_OK;
    }
    int32_t axis;
    st = op_axis(ctx, ((const layernorm_params *)ctx->params)->axis, x->rank, "axis", &axis);
    if (!st) st = check_norm_param(ctx, x, axis, &in[1].shape, "Scale");
    if (!st && has_b) st = check_norm_param(ctx, x, axis, &in[2].shape, "B");
    if (st) return st;
    out[0].shape = *x;
    for (int k = 1; k < n_out; k++) {
        out[k].shape = *x;
        if (k == LN_COPY_OUT) continue; /* mopt.LayerNormalization's copy of Y */
        for (int32_t i = axis; i < x->rank; i++) {
            out[k].shape.dims[i] = 1;
            out[k].shape.syms[i] = 0;
        }
    }
    return MOPT_OK;
}

/* Returns p's values expanded to the `inner` normalized elements: p->data
 * itself when it already has that many, else work buffer k (*owned, for
 * op_work_put). */
static const float *expand_norm_param(const op_ctx *ctx, int k, const op_tensor *p,
                                      const ir_shape *x, int32_t axis, int64_t inner,
                                      float **owned) {
    *owned = NULL;
    if (op_numel(p) == inner) return p->data;
    float *buf = op_work_get(ctx, k, (size_t)(inner > 0 ? inner : 1) * sizeof(float));
    if (!buf) return NULL;
    ir_shape norm;
    memset(&norm, 0, sizeof norm);
    norm.rank = x->rank - axis;
    for (int32_t i = 0; i < norm.rank; i++)
        norm.dims[i] = x->dims[axis + i];
    int64_t st[IR_MAX_RANK], idx[IR_MAX_RANK] = {0}, off = 0;
    op_broadcast_strides(&p->shape, &norm, st);
    const float *src = p->data;
    for (int64_t t = 0; t < inner; t++) {
        buf[t] = src[off];
        for (int32_t d = norm.rank - 1; d >= 0; d--) {
            off += st[d];
            if (++idx[d] < norm.dims[d]) break;
            off -= st[d] * norm.dims[d];
            idx[d] = 0;
        }
    }
    *owned = buf;
    return buf;
}

static mopt_status layernorm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    const layernorm_params *p = ctx->params;
    const ir_shape *x = &in[0].shape;
    int32_t axis;
    mopt_status st = op_axis(ctx, p->axis, x->rank, "axis", &axis);
    if (st) return st;
    float eps = p->epsilon;
    int64_t outer = dims_product(x, 0, axis), inner = dims_product(x, axis, x->rank);
    float *own_s = NULL, *own_b = NULL;
    const float *scale = expand_norm_param(ctx, 0, &in[1], x, axis, inner, &own_s);
    const float *bias = NULL;
    if (scale && op_has_input(in, n_in, 2))
        bias = expand_norm_param(ctx, 1, &in[2], x, axis, inner, &own_b);
    if (!scale || (op_has_input(in, n_in, 2) && !bias)) {
        op_work_put(ctx, own_s);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory expanding Scale/B");
    }
    float *mean = n_out > 1 && ctx->node->outputs[1] >= 0 ? out[1].data : NULL;
    float *inv_std = n_out > 2 && ctx->node->outputs[2] >= 0 ? out[2].data : NULL;
    ref_layernorm_f32(outer, inner, in[0].data, scale, bias, eps, out[0].data, mean, inv_std);
    if (n_out > LN_COPY_OUT && ctx->node->outputs[LN_COPY_OUT] >= 0)
        memcpy(out[LN_COPY_OUT].data, out[0].data, (size_t)(outer * inner) * sizeof(float));
    op_work_put(ctx, own_s);
    op_work_put(ctx, own_b);
    return MOPT_OK;
}

/* Inputs 0..n_check-1 (those given) f32 and of X's dtype; Y like X. */
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

static const op_attr_spec k_rms_attrs[] = {
    OP_ATTR_I64(rms_params, axis, "axis", -1),
    OP_ATTR_F32(rms_params, epsilon, "epsilon", 1e-5f),
};

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

static const op_attr_spec k_group_attrs[] = {
    OP_ATTR_I64(group_params, num_groups, "num_groups", 0),
    OP_ATTR_F32(group_params, epsilon, "epsilon", 1e-5f),
};

static mopt_status group_check(const op_ctx *ctx, void *params) {
    if (((group_params *)params)->num_groups <= 0)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "num_groups must be > 0");
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

typedef struct lpnorm_params {
    int64_t axis;
    int p; /* 1 or 2 */
} lpnorm_params;

static mopt_status lpnorm_parse(const op_ctx *ctx, void *params) {
    lpnorm_params *lp = params;
    int64_t p = ir_node_attr_int(ctx->node, "p", 2);
    if (p != 1 && p != 2) return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "p must be 1 or 2");
    lp->p = (int)p;
    lp->axis = ir_node_attr_int(ctx->node, "axis", -1);
    return MOPT_OK;
}

static mopt_status lpnorm_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    (void)n_out;
    mopt_status st = same_as_x(ctx, in, n_in, out, 1);
    if (st) return st;
    int32_t ax;
    if (in[0].shape.rank >= 0)
        return op_axis(ctx, ((const lpnorm_params *)ctx->params)->axis, in[0].shape.rank, "axis",
                       &ax);
    return MOPT_OK;
}

static mopt_status lpnorm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    (void)n_in, (void)n_out;
    const lpnorm_params *p = ctx->params;
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

/* The offset of element i (row-major strides st) with its reduced axes
 * zeroed: the key its mean and variance are kept under. */
static int64_t kept_offset(int64_t i, int32_t rank, const int64_t *st, const bool *red) {
    int64_t key = 0, r = i;
    for (int32_t a = 0; a < rank; a++) {
        int64_t idx = r / st[a];
        r %= st[a];
        if (!red[a]) key += idx * st[a];
    }
    return key;
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
    double *acc = op_work_get(ctx, 0, (size_t)(n > 0 ? n : 1) * 2 * sizeof(double));
    if (!acc) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    memset(acc, 0, (size_t)(n > 0 ? n : 1) * 2 * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        int64_t key = kept_offset(i, x->rank, st_, red);
        acc[2 * key] += xd[i];
        acc[2 * key + 1] += (double)xd[i] * xd[i];
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t key = kept_offset(i, x->rank, st_, red);
        double m = acc[2 * key] / (double)cnt, v = acc[2 * key + 1] / (double)cnt - m * m;
        yd[i] = (float)(((double)xd[i] - m) / sqrt((v > 0 ? v : 0) + 1e-9));
    }
    op_work_put(ctx, acc);
    return MOPT_OK;
}

/* ---- Softmax, LogSoftmax ------------------------------------------------ */

static mopt_status softmax_parse_as(const op_ctx *ctx, softmax_params *p, bool log) {
    p->axis = ir_node_attr_int(ctx->node, "axis", ctx->opset >= 13 ? -1 : 1);
    p->log = log;
    return MOPT_OK;
}

static mopt_status softmax_parse(const op_ctx *ctx, void *params) {
    return softmax_parse_as(ctx, params, false);
}

static mopt_status logsoftmax_parse(const op_ctx *ctx, void *params) {
    return softmax_parse_as(ctx, params, true);
}

static mopt_status softmax_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    mopt_status st = op_expect_f32(ctx, &in[0], 0);
    if (st) return st;
    out[0].dtype = MOPT_DTYPE_F32;
    out[0].shape = in[0].shape;
    if (in[0].shape.rank < 0) return MOPT_OK;
    int32_t axis;
    return op_axis(ctx, ((const softmax_params *)ctx->params)->axis, in[0].shape.rank, "axis",
                   &axis);
}

static mopt_status softmax_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    const softmax_params *p = ctx->params;
    const ir_shape *x = &in[0].shape;
    int32_t axis;
    mopt_status st = op_axis(ctx, p->axis, x->rank, "axis", &axis);
    if (st) return st;
    if (op_numel(&in[0]) == 0) return MOPT_OK;
    int64_t outer = dims_product(x, 0, axis), len, inner;
    if (ctx->opset >= 13) {
        len = x->dims[axis];
        inner = dims_product(x, axis + 1, x->rank);
    } else { /* coerced to 2-D [outer, len] */
        len = dims_product(x, axis, x->rank);
        inner = 1;
    }
    float small[64];
    float *scratch = inner <= 32 ? small : op_work_get(ctx, 0, (size_t)inner * 2 * sizeof(float));
    if (!scratch) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory for scratch");
    ref_softmax_f32(outer, len, inner, in[0].data, out[0].data, p->log, scratch);
    if (scratch != small) op_work_put(ctx, scratch);
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"BatchNormalization", "", 5, 5, 1, 5, batchnorm_infer, batchnorm_run, ops_cpu_batchnorm_impls,
     OP_PARAMS(batchnorm_params, batchnorm_parse), .bridge = &ops_bridge_float},
    {"InstanceNormalization", "", 3, 3, 1, 1, instancenorm_infer, instancenorm_run,
     OP_ATTRS(eps_params, k_eps_attrs), .bridge = &ops_bridge_float},
    {"LayerNormalization", "", 2, 3, 1, 3, layernorm_infer, layernorm_run, ops_cpu_layernorm_impls,
     OP_ATTRS(layernorm_params, k_layernorm_attrs), .bridge = &ops_bridge_float},
    /* Y's copy for int8 matmuls as a 4th output (lib/passes/pass_ln_copy.c) */
    {"LayerNormalization", "mopt", 2, 3, 4, 4, layernorm_infer, layernorm_run,
     ops_cpu_layernorm_impls, OP_ATTRS(layernorm_params, k_layernorm_attrs)},
    {"RMSNormalization", "", 2, 2, 1, 1, rms_infer, rms_run, NULL,
     OP_ATTRS(rms_params, k_rms_attrs), .bridge = &ops_bridge_float},
    {"GroupNormalization", "", 3, 3, 1, 1, group_infer, group_run, NULL,
     OP_ATTRS(group_params, k_group_attrs), .parse = group_check, .bridge = &ops_bridge_float},
    {"LpNormalization", "", 1, 1, 1, 1, lpnorm_infer, lpnorm_run, NULL,
     OP_PARAMS(lpnorm_params, lpnorm_parse), .bridge = &ops_bridge_float},
    {"MeanVarianceNormalization", "", 1, 1, 1, 1, mvn_infer, mvn_run, NULL,
     OP_PARAMS(mvn_params, mvn_parse), .bridge = &ops_bridge_float},
    {"Softmax", "", 1, 1, 1, 1, softmax_infer, softmax_run, ops_cpu_softmax_impls,
     OP_PARAMS(softmax_params, softmax_parse), .bridge = &ops_bridge_float},
    {"LogSoftmax", "", 1, 1, 1, 1, softmax_infer, softmax_run, ops_cpu_softmax_impls,
     OP_PARAMS(softmax_params, logsoftmax_parse), .bridge = &ops_bridge_float},
};

OP_FAMILY(normalization, k_ops)
