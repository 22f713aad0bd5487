/*
 * normalization.c — the "normalization" operator family: BatchNormalization
 * (inference mode only), InstanceNormalization, LayerNormalization (opset 17,
 * with the optional Mean/InvStdDev outputs), Softmax and LogSoftmax (along
 * `axis` since opset 13, coerced to 2-D at `axis` before). Shape/type
 * inference, validation and attribute parsing; the math is in
 * kernels/ref/normalization.c.
 */
#include <inttypes.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/ref/ref_normalization.h"
#include "ops/bridge.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/normalization.h"
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

static mopt_status eps_parse(const op_ctx *ctx, void *params) {
    eps_params *p = params;
    p->epsilon = ir_node_attr_float(ctx->node, "epsilon", 1e-5f);
    return MOPT_OK;
}

/* ---- BatchNormalization ------------------------------------------------- */

static mopt_status batchnorm_parse(const op_ctx *ctx, void *params) {
    if (ir_node_attr_int(ctx->node, "training_mode", 0) != 0)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "training_mode=1 is not supported");
    if (ir_node_attr_int(ctx->node, "spatial", 1) == 0)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "spatial=0 is not supported");
    return eps_parse(ctx, params);
}

static mopt_status batchnorm_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                   int n_out) {
    for (int k = 1; k < n_out; k++)
        if (ctx->node->outputs[k] >= 0)
            return op_fail(ctx, MOPT_ERR_UNSUPPORTED,
                           "output %d (training statistics) is not supported", k);
    static const char *const names[] = {"X", "scale", "B", "input_mean", "input_var"};
    mopt_status st = check_channel_op(ctx, in, 5, names, 2);
    if (st) return st;
    out[0].dtype = MOPT_DTYPE_F32;
    out[0].shape = in[0].shape;
    /* omitted statistics outputs still get a type and shape ([C]) */
    for (int k = 1; k < n_out; k++) {
        out[k].dtype = MOPT_DTYPE_F32;
        out[k].shape = in[3].shape;
    }
    return MOPT_OK;
}

static mopt_status batchnorm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    const ir_shape *x = &in[0].shape;
    float eps = ((const eps_params *)ctx->params)->epsilon;
    ref_batchnorm_f32(x->dims[0], x->dims[1], dims_product(x, 2, x->rank), in[0].data, in[1].data,
                      in[2].data, in[3].data, in[4].data, eps, out[0].data);
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

static mopt_status layernorm_parse(const op_ctx *ctx, void *params) {
    layernorm_params *p = params;
    p->axis = ir_node_attr_int(ctx->node, "axis", -1);
    p->epsilon = ir_node_attr_float(ctx->node, "epsilon", 1e-5f);
    return MOPT_OK;
}

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
        for (int32_t i = axis; i < x->rank; i++) {
            out[k].shape.dims[i] = 1;
            out[k].shape.syms[i] = 0;
        }
    }
    return MOPT_OK;
}

/* Returns p's values expanded to the `inner` normalized elements: p->data
 * itself when it already has that many, else a new buffer (*owned). */
static const float *expand_norm_param(const op_tensor *p, const ir_shape *x, int32_t axis,
                                      int64_t inner, float **owned) {
    *owned = NULL;
    if (op_numel(p) == inner) return p->data;
    float *buf = mopt_malloc((size_t)(inner > 0 ? inner : 1) * sizeof(float));
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
    const float *scale = expand_norm_param(&in[1], x, axis, inner, &own_s);
    const float *bias = NULL;
    if (scale && op_has_input(in, n_in, 2))
        bias = expand_norm_param(&in[2], x, axis, inner, &own_b);
    if (!scale || (op_has_input(in, n_in, 2) && !bias)) {
        mopt_free(own_s);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory expanding Scale/B");
    }
    float *mean = n_out > 1 && ctx->node->outputs[1] >= 0 ? out[1].data : NULL;
    float *inv_std = n_out > 2 && ctx->node->outputs[2] >= 0 ? out[2].data : NULL;
    ref_layernorm_f32(outer, inner, in[0].data, scale, bias, eps, out[0].data, mean, inv_std);
    mopt_free(own_s);
    mopt_free(own_b);
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
    float *scratch = inner <= 32 ? small : mopt_malloc((size_t)inner * 2 * sizeof(float));
    if (!scratch) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory for scratch");
    ref_softmax_f32(outer, len, inner, in[0].data, out[0].data, p->log, scratch);
    if (scratch != small) mopt_free(scratch);
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"BatchNormalization", "", 5, 5, 1, 5, batchnorm_infer, batchnorm_run,
     .params_size = sizeof(eps_params), .parse = batchnorm_parse, .bridge = &ops_bridge_float},
    {"InstanceNormalization", "", 3, 3, 1, 1, instancenorm_infer, instancenorm_run,
     .params_size = sizeof(eps_params), .parse = eps_parse, .bridge = &ops_bridge_float},
    {"LayerNormalization", "", 2, 3, 1, 3, layernorm_infer, layernorm_run, ops_cpu_layernorm_impls,
     .params_size = sizeof(layernorm_params), .parse = layernorm_parse,
     .bridge = &ops_bridge_float},
    {"Softmax", "", 1, 1, 1, 1, softmax_infer, softmax_run, ops_cpu_softmax_impls,
     .params_size = sizeof(softmax_params), .parse = softmax_parse, .bridge = &ops_bridge_float},
    {"LogSoftmax", "", 1, 1, 1, 1, softmax_infer, softmax_run, ops_cpu_softmax_impls,
     .params_size = sizeof(softmax_params), .parse = logsoftmax_parse, .bridge = &ops_bridge_float},
};

const op_def *ops_family_normalization(size_t *count) {
    *count = sizeof k_ops / sizeof k_ops[0];
    return k_ops;
}
