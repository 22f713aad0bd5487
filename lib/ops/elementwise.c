/*
 * elementwise.c — the "elementwise" operator family: binary arithmetic with
 * numpy broadcasting (Add Sub Mul Div Pow Mod PRelu, variadic Min Max Sum
 * Mean), unary math and activations (Sqrt Exp Log ... Gelu), and Clip (the
 * attribute form before opset 11, optional min/max inputs from 11), and the
 * activations Shrink, Swish and SwiGLU.
 *
 * Attributes are parsed once into the params of elementwise.h; inference
 * checks types and broadcasts shapes; run calls kernels/ref/elementwise.c. Integer Div/Mod by zero
 * give 0 (never a trap); see ref_elementwise.h.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/ref/ref_elementwise.h"
#include "ops/bridge.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/elementwise.h"
#include "ops/op_common.h"
#include "ops/ops.h"

static const mopt_dtype k_arith_types[] = {MOPT_DTYPE_F32, MOPT_DTYPE_F64, MOPT_DTYPE_I32,
                                           MOPT_DTYPE_I64, MOPT_DTYPE_U64};
static const mopt_dtype k_float_types[] = {MOPT_DTYPE_F32, MOPT_DTYPE_F64};
static const mopt_dtype k_pow_base_types[] = {MOPT_DTYPE_F32, MOPT_DTYPE_F64, MOPT_DTYPE_I32,
                                              MOPT_DTYPE_I64};
static const mopt_dtype k_pow_exp_types[] = {MOPT_DTYPE_F32, MOPT_DTYPE_F64, MOPT_DTYPE_I32,
                                             MOPT_DTYPE_I64, MOPT_DTYPE_U32, MOPT_DTYPE_U64};
static const mopt_dtype k_clip_types[] = {MOPT_DTYPE_F32, MOPT_DTYPE_F64, MOPT_DTYPE_I32,
                                          MOPT_DTYPE_I64, MOPT_DTYPE_I8,  MOPT_DTYPE_U8};

/* ---- binary and variadic ------------------------------------------------ */

typedef struct bin_desc {
    const char *op_type;
    ref_binop op;
    ew_bin_kind kind;
    bool float_only;
} bin_desc;

static const bin_desc k_binops[] = {
    {"Add", REF_BIN_ADD, EW_BIN_PLAIN, false},    {"Sub", REF_BIN_SUB, EW_BIN_PLAIN, false},
    {"Mul", REF_BIN_MUL, EW_BIN_PLAIN, false},    {"Div", REF_BIN_DIV, EW_BIN_PLAIN, false},
    {"Pow", REF_BIN_POW, EW_BIN_PLAIN, false},    {"Mod", REF_BIN_MOD, EW_BIN_PLAIN, false},
    {"PRelu", REF_BIN_PRELU, EW_BIN_PLAIN, true}, {"Min", REF_BIN_MIN, EW_BIN_VARIADIC, false},
    {"Max", REF_BIN_MAX, EW_BIN_VARIADIC, false}, {"Sum", REF_BIN_ADD, EW_BIN_VARIADIC, false},
    {"Mean", REF_BIN_ADD, EW_BIN_MEAN, true},
};

static mopt_status parse_binary(const op_ctx *ctx, void *params) {
    ew_binary_params *p = params;
    const bin_desc *d = OP_ROW(k_binops, ctx->node->op_type);
    if (!d) return op_fail(ctx, MOPT_ERR_INTERNAL, "not a binary elementwise op");
    p->op = d->op;
    p->kind = d->kind;
    p->float_only = d->float_only;
    p->same_shape = ir_node_attr_int(ctx->node, "mopt_same_shape", 0) != 0;
    if (d->op == REF_BIN_MOD) {
        int64_t fm = ir_node_attr_int(ctx->node, "fmod", 0);
        if (fm != 0 && fm != 1)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                           "attribute fmod must be 0 or 1, not %" PRId64, fm);
        if (fm == 1) p->op = REF_BIN_FMOD;
    }
    return MOPT_OK;
}

static mopt_status infer_binary(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    const ew_binary_params *d = ctx->params;
    if (n_in < 1 || (d->kind == EW_BIN_PLAIN && n_in != 2))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "takes %s inputs, not %d",
                       d->kind == EW_BIN_PLAIN ? "2" : "1 or more", n_in);
    mopt_status st = op_require_inputs(ctx, in, n_in);
    if (st) return st;
    mopt_dtype t = MOPT_DTYPE_UNDEFINED;
    if (d->op == REF_BIN_POW) {
        if ((st = op_expect_dtype(ctx, &in[0], 0, k_pow_base_types, OP_COUNT(k_pow_base_types))) ||
            (st = op_expect_dtype(ctx, &in[1], 1, k_pow_exp_types, OP_COUNT(k_pow_exp_types))))
            return st;
        if (in[0].dtype != MOPT_DTYPE_UNDEFINED && in[1].dtype != MOPT_DTYPE_UNDEFINED &&
            !ref_binary_row(REF_BIN_POW, in[0].dtype, in[1].dtype))
            return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "not implemented for %s and %s",
                           mopt_dtype_name(in[0].dtype), mopt_dtype_name(in[1].dtype));
        t = in[0].dtype;
    } else {
        const mopt_dtype *allowed = d->float_only ? k_float_types : k_arith_types;
        int n_allowed = d->float_only ? OP_COUNT(k_float_types) : OP_COUNT(k_arith_types);
        for (int k = 0; k < n_in; k++) {
            if ((st = op_expect_dtype(ctx, &in[k], k, allowed, n_allowed))) return st;
            if (in[k].dtype == MOPT_DTYPE_UNDEFINED) continue;
            if (t == MOPT_DTYPE_UNDEFINED) {
                t = in[k].dtype;
            } else if (in[k].dtype != t) {
                return op_fail(ctx, MOPT_ERR_TYPE,
                               "input types differ: %s and %s (input %d); all inputs must have "
                               "the same type",
                               mopt_dtype_name(t), mopt_dtype_name(in[k].dtype), k);
            }
        }
    }
    ir_shape shape = in[0].shape;
    for (int k = 1; k < n_in; k++)
        if ((st = op_broadcast(ctx, &shape, &in[k].shape, &shape))) return st;
    if (d->same_shape && ir_shape_is_concrete(&shape))
        for (int k = 0; k < n_in; k++)
            if (ir_shape_is_concrete(&in[k].shape) && ir_shape_numel(&in[k].shape) != 1 &&
                !op_same_dims(&in[k].shape, &shape))
                return op_fail(ctx, MOPT_ERR_SHAPE,
                               "input %d would broadcast, but the layout pass keeps this node's "
                               "operands channels-last as of one shape (mopt_same_shape; load "
                               "at opt_level 2 for broadcasting)",
                               k);
    op_set_outputs(out, n_out, t, &shape);
    return MOPT_OK;
}

static mopt_status run_binary(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    const ew_binary_params *d = ctx->params;
    if (n_in < 1 || n_out < 1) return op_fail(ctx, MOPT_ERR_INTERNAL, "bad call");
    ref_binop op = d->op;
    op_tensor *y = &out[0];
    size_t esz = mopt_dtype_size(y->dtype);
    const ir_shape *ys = &y->shape;
    if (n_in == 1) {
        int64_t n = op_numel(y);
        if (n > 0) memcpy(y->data, in[0].data, (size_t)n * esz);
        return MOPT_OK;
    }
    ref_row2_fn row = ref_binary_row(op, in[0].dtype, in[1].dtype);
    if (!row)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "not implemented for %s and %s",
                       mopt_dtype_name(in[0].dtype), mopt_dtype_name(in[1].dtype));
    int64_t sa[IR_MAX_RANK], sb[IR_MAX_RANK], sy[IR_MAX_RANK];
    op_broadcast_strides(&in[0].shape, ys, sa);
    op_broadcast_strides(&in[1].shape, ys, sb);
    ref_broadcast2(row, ys->rank, ys->dims, in[0].data, mopt_dtype_size(in[0].dtype), sa,
                   in[1].data, mopt_dtype_size(in[1].dtype), sb, y->data, esz);
    /* variadic: fold the remaining inputs into the output in place */
    op_strides(ys, sy);
    for (int k = 2; k < n_in; k++) {
        op_broadcast_strides(&in[k].shape, ys, sb);
        ref_broadcast2(row, ys->rank, ys->dims, y->data, esz, sy, in[k].data, esz, sb, y->data,
                       esz);
    }
    if (d->kind == EW_BIN_MEAN) {
        int64_t zero[IR_MAX_RANK] = {0};
        ref_row2_fn div = ref_binary_row(REF_BIN_DIV, y->dtype, y->dtype);
        float nf = (float)n_in;
        double nd = (double)n_in;
        const void *count = y->dtype == MOPT_DTYPE_F32 ? (const void *)&nf : (const void *)&nd;
        if (!div) return op_fail(ctx, MOPT_ERR_INTERNAL, "no division kernel");
        ref_broadcast2(div, ys->rank, ys->dims, y->data, esz, sy, count, esz, zero, y->data, esz);
    }
    return MOPT_OK;
}

/* ---- unary -------------------------------------------------------------- */

typedef struct un_desc {
    const char *op_type;
    ref_unop op;
    float alpha, beta, gamma; /* attribute defaults */
} un_desc;

static const un_desc k_unops[] = {
    {"Sqrt", REF_UN_SQRT, 0, 0, 0},
    {"Exp", REF_UN_EXP, 0, 0, 0},
    {"Log", REF_UN_LOG, 0, 0, 0},
    {"Neg", REF_UN_NEG, 0, 0, 0},
    {"Abs", REF_UN_ABS, 0, 0, 0},
    {"Reciprocal", REF_UN_RECIPROCAL, 0, 0, 0},
    {"Erf", REF_UN_ERF, 0, 0, 0},
    {"Tanh", REF_UN_TANH, 0, 0, 0},
    {"Relu", REF_UN_RELU, 0, 0, 0},
    {"LeakyRelu", REF_UN_LEAKY_RELU, 0.01f, 0, 0},
    {"Sigmoid", REF_UN_SIGMOID, 0, 0, 0},
    {"HardSigmoid", REF_UN_HARD_SIGMOID, 0.2f, 0.5f, 0},
    {"HardSwish", REF_UN_HARD_SWISH, 0, 0, 0},
    {"Floor", REF_UN_FLOOR, 0, 0, 0},
    {"Ceil", REF_UN_CEIL, 0, 0, 0},
    {"Round", REF_UN_ROUND, 0, 0, 0},
    {"Sign", REF_UN_SIGN, 0, 0, 0},
    {"Sin", REF_UN_SIN, 0, 0, 0},
    {"Cos", REF_UN_COS, 0, 0, 0},
    {"Tan", REF_UN_TAN, 0, 0, 0},
    {"Atan", REF_UN_ATAN, 0, 0, 0},
    {"Asin", REF_UN_ASIN, 0, 0, 0},
    {"Acos", REF_UN_ACOS, 0, 0, 0},
    {"Sinh", REF_UN_SINH, 0, 0, 0},
    {"Cosh", REF_UN_COSH, 0, 0, 0},
    {"Asinh", REF_UN_ASINH, 0, 0, 0},
    {"Acosh", REF_UN_ACOSH, 0, 0, 0},
    {"Atanh", REF_UN_ATANH, 0, 0, 0},
    {"Elu", REF_UN_ELU, 1.0f, 0, 0},
    {"Selu", REF_UN_SELU, 1.67326319217681884765625f, 0, 1.05070102214813232421875f},
    {"Softplus", REF_UN_SOFTPLUS, 0, 0, 0},
    {"Softsign", REF_UN_SOFTSIGN, 0, 0, 0},
    {"Celu", REF_UN_CELU, 1.0f, 0, 0},
    {"ThresholdedRelu", REF_UN_THRESHOLDED_RELU, 1.0f, 0, 0},
    {"Gelu", REF_UN_GELU, 0, 0, 0},
    {"Mish", REF_UN_MISH, 0, 0, 0},
};

/* The kernel op for a node (Gelu's `approximate` attribute picks a variant)
 * and its alpha, beta, gamma. */
static mopt_status parse_unary(const op_ctx *ctx, void *params) {
    ew_unary_params *up = params;
    const un_desc *d = OP_ROW(k_unops, ctx->node->op_type);
    if (!d) return op_fail(ctx, MOPT_ERR_INTERNAL, "not a unary elementwise op");
    ref_unop *op = &up->op;
    ref_unary_params *p = &up->p;
    *op = d->op;
    p->alpha = ir_node_attr_float(ctx->node, "alpha", d->alpha);
    p->beta = ir_node_attr_float(ctx->node, "beta", d->beta);
    p->gamma = ir_node_attr_float(ctx->node, "gamma", d->gamma);
    if (d->op == REF_UN_GELU) {
        const char *ap = ir_node_attr_string(ctx->node, "approximate", "none");
        if (strcmp(ap, "tanh") == 0)
            *op = REF_UN_GELU_TANH;
        else if (strcmp(ap, "none") != 0)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                           "attribute approximate must be \"none\" or \"tanh\", not \"%s\"", ap);
    }
    if (d->op == REF_UN_CELU && p->alpha == 0.0f)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "attribute alpha must not be 0");
    return MOPT_OK;
}

static mopt_status infer_unary(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    const ew_unary_params *up = ctx->params;
    if (n_in != 1) return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "takes 1 input, not %d", n_in);
    mopt_status st = op_require_inputs(ctx, in, 1);
    if (st) return st;
    ref_unop op = up->op;
    if (in[0].dtype != MOPT_DTYPE_UNDEFINED && !ref_unary_supported(op, in[0].dtype)) {
        bool int_ok = ref_unary_supported(op, MOPT_DTYPE_I64);
        return op_fail(ctx, MOPT_ERR_TYPE, "input 0 has type %s; expected one of: f32, f64%s",
                       mopt_dtype_name(in[0].dtype), int_ok ? ", i32, i64" : "");
    }
    op_set_outputs(out, n_out, in[0].dtype, &in[0].shape);
    return MOPT_OK;
}

static mopt_status run_unary(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    const ew_unary_params *up = ctx->params;
    if (n_in < 1 || n_out < 1) return op_fail(ctx, MOPT_ERR_INTERNAL, "bad call");
    if (ref_unary(up->op, in[0].dtype, in[0].data, out[0].data, op_numel(&in[0]), &up->p) != 0)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "not implemented for %s",
                       mopt_dtype_name(in[0].dtype));
    return MOPT_OK;
}

/* ---- Clip --------------------------------------------------------------- */

static bool is_int_type(mopt_dtype t) {
    return t == MOPT_DTYPE_I32 || t == MOPT_DTYPE_I64 || t == MOPT_DTYPE_I8 || t == MOPT_DTYPE_U8;
}

/* Clip's min/max attributes (before opset 11). */
static mopt_status parse_clip(const op_ctx *ctx, void *params) {
    ew_unary_params *p = params;
    p->clip = true;
    if (ctx->opset < 11) {
        const ir_attr *lo = ir_node_attr(ctx->node, "min");
        const ir_attr *hi = ir_node_attr(ctx->node, "max");
        if (lo && lo->type == IR_ATTR_FLOAT) p->has_lo = true, p->lo = lo->f;
        if (hi && hi->type == IR_ATTR_FLOAT) p->has_hi = true, p->hi = hi->f;
    }
    return MOPT_OK;
}

static mopt_status infer_clip(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    if (n_in < 1 || n_in > 3)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "takes 1 to 3 inputs, not %d", n_in);
    mopt_status st = op_require_inputs(ctx, in, 1);
    if (st) return st;
    if ((st = op_expect_dtype(ctx, &in[0], 0, k_clip_types, OP_COUNT(k_clip_types)))) return st;
    if (ctx->opset < 11) {
        if (n_in > 1)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                           "takes min/max as attributes before opset 11, not as inputs");
        if (is_int_type(in[0].dtype))
            return op_fail(ctx, MOPT_ERR_TYPE,
                           "input 0 has type %s; before opset 11 only f32 "
                           "and f64 are allowed",
                           mopt_dtype_name(in[0].dtype));
    }
    static const char *const names[3] = {"input", "min", "max"};
    for (int k = 1; k < n_in; k++) {
        if (!op_has_input(in, n_in, k)) continue;
        if ((st = op_same_dtype(ctx, in, 0, k))) return st;
        int64_t n = in[k].shape.rank >= 0 && ir_shape_is_concrete(&in[k].shape)
                        ? ir_shape_numel(&in[k].shape)
                        : 1;
        if (n != 1) {
            char b[IR_SHAPE_STR_CAP];
            return op_fail(ctx, MOPT_ERR_SHAPE, "%s must be a scalar, not %s", names[k],
                           op_shape_str(ctx, &in[k].shape, b));
        }
    }
    op_set_outputs(out, n_out, in[0].dtype, &in[0].shape);
    return MOPT_OK;
}

/* Reads a Clip bound input (same dtype as x, one element). */
static mopt_status clip_bound(const op_ctx *ctx, const op_tensor *t, const char *what, double *f,
                              int64_t *i) {
    if (!t->data || op_numel(t) != 1)
        return op_fail(ctx, MOPT_ERR_SHAPE, "%s must have exactly one element", what);
    switch (t->dtype) {
    case MOPT_DTYPE_I64: *i = *(const int64_t *)t->data; return MOPT_OK;
    case MOPT_DTYPE_I32: *i = *(const int32_t *)t->data; return MOPT_OK;
    case MOPT_DTYPE_I8: *i = *(const int8_t *)t->data; return MOPT_OK;
    case MOPT_DTYPE_U8: *i = *(const uint8_t *)t->data; return MOPT_OK;
    default: break;
    }
    return op_read_scalar(ctx, t, what, f) ? MOPT_ERR_TYPE : MOPT_OK;
}

static mopt_status run_clip(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    ref_clip_params p = {0};
    mopt_status st;
    if (ctx->opset < 11) {
        const ew_unary_params *cp = ctx->params;
        if (cp->has_lo) p.has_lo = true, p.lo = cp->lo;
        if (cp->has_hi) p.has_hi = true, p.hi = cp->hi;
    } else {
        if (op_has_input(in, n_in, 1)) {
            if ((st = clip_bound(ctx, &in[1], "min", &p.lo, &p.ilo))) return st;
            p.has_lo = true;
        }
        if (op_has_input(in, n_in, 2)) {
            if ((st = clip_bound(ctx, &in[2], "max", &p.hi, &p.ihi))) return st;
            p.has_hi = true;
        }
    }
    if (ref_clip(in[0].dtype, in[0].data, out[0].data, op_numel(&in[0]), &p) != 0)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "not implemented for %s",
                       mopt_dtype_name(in[0].dtype));
    return MOPT_OK;
}

/* ---- Shrink, Swish, SwiGLU ------------------------------------------------ */

/* Shrink's lambd and bias, Swish's and SwiGLU's alpha */
typedef struct act_params {
    float lambd, bias, alpha;
} act_params;

static const op_attr_spec k_shrink_attrs[] = {
    OP_ATTR_F32(act_params, lambd, "lambd", 0.5f),
    OP_ATTR_F32(act_params, bias, "bias", 0.0f),
};

static const op_attr_spec k_alpha_attrs[] = {OP_ATTR_F32(act_params, alpha, "alpha", 1.0f)};

static mopt_status shrink_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    const act_params *p = ctx->params;
    float lambd = p->lambd, bias = p->bias;
    const float *x = in[0].data;
    float *y = out[0].data;
    for (int64_t k = 0, n = op_numel(&in[0]); k < n; k++)
        y[k] = x[k] < -lambd ? x[k] + bias : x[k] > lambd ? x[k] - bias : 0.0f;
    return MOPT_OK;
}

static mopt_status swish_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    double alpha = ((const act_params *)ctx->params)->alpha;
    const float *x = in[0].data;
    float *y = out[0].data;
    for (int64_t k = 0, n = op_numel(&in[0]); k < n; k++)
        y[k] = (float)(x[k] / (1.0 + exp(-alpha * x[k])));
    return MOPT_OK;
}

static mopt_status swiglu_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    if (n_in < 2 || op_numel(&in[1]) != op_numel(&in[0]))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "only the two-input form with equal shapes");
    ref_swiglu(op_numel(&in[0]), ((const act_params *)ctx->params)->alpha, in[0].data, in[1].data,
               out[0].data);
    return MOPT_OK;
}

/* ---- registry ----------------------------------------------------------- */

/* BR: the op's dtype bridging rule (ops_bridge_<BR>, bridge.h) */
#define BIN_ROW(name, max_in, impls, BR)                                                           \
    {                                                                                              \
        name, "", max_in == 2 ? 2 : 1, max_in, 1, 1, infer_binary, run_binary, impls,              \
            OP_PARAMS(ew_binary_params, parse_binary), .bridge = &ops_bridge_##BR                  \
    }
#define UN_ROW(name, impls, BR)                                                                    \
    {                                                                                              \
        name, "", 1, 1, 1, 1, infer_unary, run_unary, impls,                                       \
            OP_PARAMS(ew_unary_params, parse_unary), .bridge = &ops_bridge_##BR                    \
    }
#define BIN(name, BR) BIN_ROW(name, 2, NULL, BR)
#define VAR(name, BR) BIN_ROW(name, 64, NULL, BR)
#define UN(name, BR) UN_ROW(name, NULL, BR)
/* ops with kernels/cpu implementations (ops_cpu.h) */
#define BIN_CPU(name, BR) BIN_ROW(name, 2, ops_cpu_binary_impls, BR)
#define VAR_CPU(name, BR) BIN_ROW(name, 64, ops_cpu_binary_impls, BR)
#define UN_CPU(name, BR) UN_ROW(name, ops_cpu_unary_impls, BR)

static const op_def k_ops[] = {
    BIN_CPU("Add", wrap_arith),
    BIN_CPU("Sub", wrap_arith),
    BIN_CPU("Mul", wrap_arith),
    BIN_CPU("Div", arith),
    BIN_CPU("Pow", float),
    BIN("Mod", arith),
    BIN("PRelu", float),
    VAR_CPU("Min", arith),
    VAR_CPU("Max", arith),
    VAR("Sum", wrap_arith),
    VAR("Mean", float),
    UN_CPU("Sqrt", float),
    UN_CPU("Exp", float),
    UN("Log", float),
    UN_CPU("Neg", wrap_arith),
    UN_CPU("Abs", arith),
    UN_CPU("Reciprocal", float),
    UN_CPU("Erf", float),
    UN_CPU("Tanh", float),
    UN_CPU("Relu", float),
    UN_CPU("LeakyRelu", float),
    UN_CPU("Sigmoid", float),
    UN_CPU("HardSigmoid", float),
    UN_CPU("HardSwish", float),
    UN("Floor", float),
    UN("Ceil", float),
    UN("Round", float),
    UN("Sign", arith),
    UN("Sin", float),
    UN("Cos", float),
    UN("Tan", float),
    UN("Atan", float),
    UN("Asin", float),
    UN("Acos", float),
    UN("Sinh", float),
    UN("Cosh", float),
    UN("Asinh", float),
    UN("Acosh", float),
    UN("Atanh", float),
    UN("Elu", float),
    UN("Selu", float),
    UN("Softplus", float),
    UN("Softsign", float),
    UN("Celu", float),
    UN("ThresholdedRelu", float),
    UN_CPU("Gelu", float),
    UN("Mish", float),
    {"Clip", "", 1, 3, 1, 1, infer_clip, run_clip, ops_cpu_unary_impls,
     OP_PARAMS(ew_unary_params, parse_clip), .bridge = &ops_bridge_arith},
    {"Shrink", "", 1, 1, 1, 1, op_infer_f32_like_input0, shrink_run, NULL,
     OP_ATTRS(act_params, k_shrink_attrs), .bridge = &ops_bridge_float},
    {"Swish", "", 1, 1, 1, 1, op_infer_f32_like_input0, swish_run, NULL,
     OP_ATTRS(act_params, k_alpha_attrs), .bridge = &ops_bridge_float},
    {"SwiGLU", "", 1, 2, 1, 1, op_infer_all_f32_like_input0, swiglu_run, NULL,
     OP_ATTRS(act_params, k_alpha_attrs), .bridge = &ops_bridge_float},
};

OP_FAMILY(elementwise, k_ops)
