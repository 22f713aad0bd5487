/*
 * reduce.c — the "reduce" operator family: ReduceSum, ReduceMean, ReduceMax,
 * ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum,
 * ReduceLogSumExp, ArgMax, ArgMin, and Hardmax (1 at the first maximum
 * along an axis).
 *
 * Axes come from the attribute (ReduceSum before opset 13, the others before
 * 18) or from the optional second input (with noop_with_empty_axes).
 * Inference keeps symbols on kept axes. f32 everywhere; int64/int32 for
 * Sum/Max/Min/Prod/SumSquare/L1 and ArgMax/ArgMin. The math lives in
 * kernels/ref/reduce.c.
 */
#include <inttypes.h>
#include <string.h>

#include "kernels/ref/ref_reduce.h"
#include "ops/bridge.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/op_common.h"
#include "ops/ops.h"
#include "ops/reduce.h"

typedef struct reduce_kind {
    const char *op_type;
    ref_reduce_op op;
    bool ints; /* int64/int32 supported */
} reduce_kind;

static const reduce_kind k_kinds[] = {
    {"ReduceSum", REF_REDUCE_SUM, true},         {"ReduceMean", REF_REDUCE_MEAN, false},
    {"ReduceMax", REF_REDUCE_MAX, true},         {"ReduceMin", REF_REDUCE_MIN, true},
    {"ReduceProd", REF_REDUCE_PROD, true},       {"ReduceL1", REF_REDUCE_L1, true},
    {"ReduceL2", REF_REDUCE_L2, false},          {"ReduceSumSquare", REF_REDUCE_SUM_SQUARE, true},
    {"ReduceLogSum", REF_REDUCE_LOG_SUM, false}, {"ReduceLogSumExp", REF_REDUCE_LOG_SUM_EXP, false},
};

static mopt_status reduce_parse(const op_ctx *ctx, void *params) {
    reduce_params *p = params;
    const reduce_kind *kind = OP_ROW(k_kinds, ctx->node->op_type);
    if (!kind) return op_fail(ctx, MOPT_ERR_INTERNAL, "unknown reduction");
    p->op = kind->op;
    p->ints = kind->ints;
    p->axes_input = ctx->opset >= (kind->op == REF_REDUCE_SUM ? 13 : 18);
    p->keep = ir_node_attr_int(ctx->node, "keepdims", 1) != 0;
    p->noop_empty = ir_node_attr_int(ctx->node, "noop_with_empty_axes", 0) != 0;
    p->n_axes = -1;
    if (!p->axes_input) {
        const int64_t *v = NULL;
        int64_t n = ir_node_attr_ints(ctx->node, "axes", &v);
        if (n > IR_MAX_RANK * 2)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "too many axes (%" PRId64 ")", n);
        if (n > 0) {
            p->axes = v;
            p->n_axes = n;
        } /* absent or empty: all axes */
    }
    return MOPT_OK;
}

/* Which axes are reduced: mask[a] for a < rank. Returns 1 (known), 0 (axes
 * input not known at load time), -1 (error, *st set). *noop: the op is an
 * identity (empty axes with noop_with_empty_axes). */
int ops_reduce_mask(const op_ctx *ctx, const op_tensor *in, int n_in, int32_t rank, uint8_t *mask,
                    bool *noop, mopt_status *st) {
    const reduce_params *p = ctx->params;
    int64_t axes[IR_MAX_RANK * 2], n = -1;
    *st = MOPT_OK;
    *noop = false;
    if (!p->axes_input) {
        n = p->n_axes; /* -1: all axes (absent or an empty list) */
        if (n > 0) memcpy(axes, p->axes, (size_t)n * sizeof *axes);
    } else if (n_in > 1 && ctx->node->inputs[1] >= 0) {
        const op_tensor *t = &in[1];
        if (t->shape.rank >= 0 && ir_shape_is_concrete(&t->shape) &&
            ir_shape_numel(&t->shape) == 0) {
            n = 0;
        } else if (!t->data) {
            if (ctx->runtime) {
                *st = op_fail(ctx, MOPT_ERR_INTERNAL, "axes have no data");
                return -1;
            }
            return 0;
        } else {
            n = op_read_ints(ctx, t, "axes", axes, IR_MAX_RANK * 2);
            if (n < 0) {
                *st = MOPT_ERR_INVALID_MODEL;
                return -1;
            }
        }
        if (n == 0) {
            if (p->noop_empty) *noop = true;
            n = -1;
        }
    } else if (p->noop_empty) {
        *noop = true;
    }
    for (int32_t a = 0; a < rank; a++)
        mask[a] = (n < 0 && !*noop) ? 1 : 0;
    for (int64_t i = 0; i < n; i++) {
        int32_t a;
        if ((*st = op_axis(ctx, axes[i], rank, "axis", &a))) return -1;
        mask[a] = 1;
    }
    return 1;
}

/* The shape of x with the axes in mask removed (or kept as 1 with keep). */
static void reduced_shape(const ir_shape *x, const uint8_t *mask, bool keep, ir_shape *out) {
    ir_shape o;
    memset(&o, 0, sizeof o);
    for (int32_t a = 0; a < x->rank; a++) {
        if (!mask[a]) {
            o.dims[o.rank] = x->dims[a];
            o.syms[o.rank] = x->syms[a];
            o.rank++;
        } else if (keep) {
            o.dims[o.rank++] = 1;
        }
    }
    *out = o;
}

static mopt_status reduce_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    static const mopt_dtype k_float[] = {MOPT_DTYPE_F32};
    static const mopt_dtype k_all[] = {MOPT_DTYPE_F32, MOPT_DTYPE_I64, MOPT_DTYPE_I32};
    const reduce_params *kind = ctx->params;
    mopt_status st = kind->ints ? op_expect_dtype(ctx, &in[0], 0, k_all, 3)
                                : op_expect_dtype(ctx, &in[0], 0, k_float, 1);
    if (!st && n_in > 1) st = op_expect_i64(ctx, &in[1], 1);
    if (st) return st;
    out[0].dtype = in[0].dtype;
    const ir_shape *x = &in[0].shape;
    bool keep = kind->keep;
    ir_shape_set_unknown(&out[0].shape);
    if (x->rank < 0) return MOPT_OK;
    uint8_t mask[IR_MAX_RANK];
    bool noop;
    int r = ops_reduce_mask(ctx, in, n_in, x->rank, mask, &noop, &st);
    if (r < 0) return st;
    if (r == 0) {
        if (keep) op_set_unknown_dims(&out[0].shape, x->rank);
        return MOPT_OK;
    }
    reduced_shape(x, mask, keep, &out[0].shape);
    return MOPT_OK;
}

static mopt_status reduce_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    const reduce_params *kind = ctx->params;
    const ir_shape *x = &in[0].shape;
    uint8_t mask[IR_MAX_RANK];
    bool noop;
    mopt_status st;
    if (ops_reduce_mask(ctx, in, n_in, x->rank, mask, &noop, &st) != 1)
        return st ? st : op_fail(ctx, MOPT_ERR_INTERNAL, "axes unknown at run time");
    int64_t n_out_el = op_numel(&out[0]);
    if (n_out_el == 0) return MOPT_OK;
    if (noop) {
        memcpy(out[0].data, in[0].data, (size_t)n_out_el * mopt_dtype_size(in[0].dtype));
        return MOPT_OK;
    }
    switch (in[0].dtype) {
    case MOPT_DTYPE_F32:
        ref_reduce_f32(kind->op, in[0].data, out[0].data, x->rank, x->dims, mask);
        return MOPT_OK;
    case MOPT_DTYPE_I64:
        if (!kind->ints) break;
        ref_reduce_i64(kind->op, in[0].data, out[0].data, x->rank, x->dims, mask);
        return MOPT_OK;
    case MOPT_DTYPE_I32:
        if (!kind->ints) break;
        ref_reduce_i32(kind->op, in[0].data, out[0].data, x->rank, x->dims, mask);
        return MOPT_OK;
    default: break;
    }
    return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "type %s is not supported",
                   mopt_dtype_name(in[0].dtype));
}

/* ---- ArgMax / ArgMin ------------------------------------------------------- */

typedef struct arg_params {
    int64_t axis; /* normalized against the input's rank when used */
    bool keep;    /* keepdims */
    int is_max;   /* ArgMax; else ArgMin */
    int last;     /* select_last_index (opset 12+) */
} arg_params;

static const op_attr_spec k_arg_attrs[] = {
    OP_ATTR_I64(arg_params, axis, "axis", 0),
    OP_ATTR_NZ(arg_params, keep, "keepdims", 1),
};

/* What the table cannot say: the op type and an attribute of opset 12+. */
static mopt_status arg_kind(const op_ctx *ctx, void *params) {
    arg_params *p = params;
    p->is_max = !strcmp(ctx->node->op_type, "ArgMax");
    p->last = ctx->opset >= 12 && ir_node_attr_int(ctx->node, "select_last_index", 0) != 0;
    return MOPT_OK;
}

static mopt_status arg_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    static const mopt_dtype k_types[] = {MOPT_DTYPE_F32, MOPT_DTYPE_I64, MOPT_DTYPE_I32};
    mopt_status st = op_expect_dtype(ctx, &in[0], 0, k_types, 3);
    if (st) return st;
    out[0].dtype = MOPT_DTYPE_I64;
    const ir_shape *x = &in[0].shape;
    ir_shape_set_unknown(&out[0].shape);
    if (x->rank < 0) return MOPT_OK;
    if (x->rank == 0) return op_fail(ctx, MOPT_ERR_SHAPE, "input must have rank >= 1");
    const arg_params *p = ctx->params;
    int32_t axis;
    if ((st = op_axis(ctx, p->axis, x->rank, "axis", &axis))) return st;
    if (x->syms[axis] == 0 && x->dims[axis] == 0) {
        char b1[IR_SHAPE_STR_CAP];
        return op_fail(ctx, MOPT_ERR_SHAPE, "cannot reduce the empty axis %d of %s", (int)axis,
                       op_shape_str(ctx, x, b1));
    }
    bool keep = p->keep;
    uint8_t mask[IR_MAX_RANK] = {0};
    mask[axis] = 1;
    reduced_shape(x, mask, keep, &out[0].shape);
    return MOPT_OK;
}

static mopt_status arg_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    const ir_shape *x = &in[0].shape;
    const arg_params *p = ctx->params;
    int32_t axis;
    mopt_status st = op_axis(ctx, p->axis, x->rank, "axis", &axis);
    if (st) return st;
    int is_max = p->is_max, last = p->last;
    int64_t outer, inner, n = x->dims[axis];
    op_axis_split(x, axis, &outer, NULL, &inner);
    if (op_numel(&out[0]) == 0) return MOPT_OK;
    switch (in[0].dtype) {
    case MOPT_DTYPE_F32:
        ref_argreduce_f32(in[0].data, out[0].data, outer, n, inner, is_max, last);
        break;
    case MOPT_DTYPE_I64:
        ref_argreduce_i64(in[0].data, out[0].data, outer, n, inner, is_max, last);
        break;
    case MOPT_DTYPE_I32:
        ref_argreduce_i32(in[0].data, out[0].data, outer, n, inner, is_max, last);
        break;
    default:
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "type %s is not supported",
                       mopt_dtype_name(in[0].dtype));
    }
    return MOPT_OK;
}

/* ---- Hardmax ---------------------------------------------------------------------- */

/* Hardmax's axis: default -1 from opset 13, 1 before */
typedef struct hardmax_params {
    int64_t axis;
} hardmax_params;

static mopt_status hardmax_parse(const op_ctx *ctx, void *params) {
    ((hardmax_params *)params)->axis =
        ir_node_attr_int(ctx->node, "axis", ctx->opset >= 13 ? -1 : 1);
    return MOPT_OK;
}

static mopt_status hardmax_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    int64_t axis = ((const hardmax_params *)ctx->params)->axis;
    int32_t ax;
    mopt_status st = op_axis(ctx, axis, in[0].shape.rank, "axis", &ax);
    if (st) return st;
    int64_t o, l, i;
    op_axis_split(&in[0].shape, ax, &o, &l, &i);
    if (ctx->opset < 13) { /* coerced to 2-D [outer, rest] */
        l *= i;
        i = 1;
    }
    ref_hardmax(o, l, i, in[0].data, out[0].data);
    return MOPT_OK;
}

/* BR: the op's dtype bridging rule (ops_bridge_<BR>, bridge.h) */
#define REDUCE(name, impls, BR)                                                                    \
    {                                                                                              \
        name, "", 1, 2, 1, 1, reduce_infer, reduce_run, impls,                                     \
            OP_PARAMS(reduce_params, reduce_parse), .bridge = &ops_bridge_##BR                     \
    }
#define ARG(name)                                                                                  \
    {                                                                                              \
        name, "", 1, 1, 1, 1, arg_infer, arg_run, NULL, OP_ATTRS(arg_params, k_arg_attrs),         \
            .parse = arg_kind, .bridge = &ops_bridge_compare                                       \
    }

static const op_def k_reduce_ops[] = {
    REDUCE("ReduceSum", ops_cpu_reduce_impls, wrap_arith),
    REDUCE("ReduceMean", ops_cpu_reduce_impls, float),
    REDUCE("ReduceMax", ops_cpu_reduce_impls, minmax_bool),
    REDUCE("ReduceMin", ops_cpu_reduce_impls, minmax_bool),
    REDUCE("ReduceProd", NULL, wrap_arith),
    REDUCE("ReduceL1", NULL, arith),
    REDUCE("ReduceL2", NULL, float),
    REDUCE("ReduceSumSquare", NULL, wrap_arith),
    REDUCE("ReduceLogSum", NULL, float),
    REDUCE("ReduceLogSumExp", NULL, float),
    ARG("ArgMax"),
    ARG("ArgMin"),
    {"Hardmax", "", 1, 1, 1, 1, op_infer_f32_like_input0, hardmax_run, NULL,
     OP_PARAMS(hardmax_params, hardmax_parse), .bridge = &ops_bridge_float},
};

OP_FAMILY(reduce, k_reduce_ops)
