/*
 * unique.c — the "unique" op family: ONNX Unique (opset 11, 28): the
 * distinct elements of the flattened input, or the distinct slices along
 * `axis`, sorted ascending or in order of first occurrence (`sorted`), with
 * the optional outputs indices, inverse_indices and counts. Floats compare
 * as numpy.unique does (NaNs equal, last). Every fixed-size numeric dtype
 * and bool natively; f16/bf16 through the float bridge; strings are not
 * supported. The output size depends on the values, so run-time inference
 * runs the kernel (kernels/ref/unique.c).
 */
#include <inttypes.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/ref/ref_unique.h"
#include "ops/bridge.h"
#include "ops/op_common.h"
#include "ops/ops.h"

typedef struct unique_params {
    bool has_axis;
    int64_t axis;
    bool sorted;
} unique_params;

static mopt_status unique_parse(const op_ctx *ctx, void *params) {
    unique_params *p = params;
    const ir_attr *a = ir_node_attr(ctx->node, "axis");
    p->has_axis = a != NULL;
    p->axis = ir_node_attr_int(ctx->node, "axis", 0);
    return op_attr_bool(ctx, "sorted", 1, &p->sorted);
}

/* The comparison kind of a native dtype; false for the others. */
static bool kind_of(mopt_dtype t, ref_unique_kind *k) {
    switch (t) {
    case MOPT_DTYPE_F32: *k = REF_UNIQUE_F32; return true;
    case MOPT_DTYPE_F64: *k = REF_UNIQUE_F64; return true;
    case MOPT_DTYPE_I8: *k = REF_UNIQUE_I8; return true;
    case MOPT_DTYPE_I16: *k = REF_UNIQUE_I16; return true;
    case MOPT_DTYPE_I32: *k = REF_UNIQUE_I32; return true;
    case MOPT_DTYPE_I64: *k = REF_UNIQUE_I64; return true;
    case MOPT_DTYPE_U8:
    case MOPT_DTYPE_BOOL: *k = REF_UNIQUE_U8; return true;
    case MOPT_DTYPE_U16: *k = REF_UNIQUE_U16; return true;
    case MOPT_DTYPE_U32: *k = REF_UNIQUE_U32; return true;
    case MOPT_DTYPE_U64: *k = REF_UNIQUE_U64; return true;
    default: return false;
    }
}

/* The items' layout: [outer, n, inner] (outer = inner = 1 without axis). */
static mopt_status layout(const op_ctx *ctx, const ir_shape *s, int32_t *ax, int64_t *outer,
                          int64_t *n, int64_t *inner) {
    const unique_params *p = ctx->params;
    if (!p->has_axis) {
        *ax = -1;
        *outer = *inner = 1;
        *n = ir_numel(s->rank, s->dims);
        return MOPT_OK;
    }
    mopt_status st = op_axis(ctx, p->axis, s->rank, "axis", ax);
    if (st) return st;
    op_axis_split(s, *ax, outer, n, inner);
    return MOPT_OK;
}

static mopt_status unique_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    (void)n_in;
    const unique_params *p = ctx->params;
    mopt_dtype t = in[0].dtype;
    ref_unique_kind kind = REF_UNIQUE_F32;
    if (t == MOPT_DTYPE_STRING)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "string input not supported");
    if (t != MOPT_DTYPE_UNDEFINED && !kind_of(t, &kind))
        return op_fail(ctx, MOPT_ERR_TYPE, "input 0 has unsupported type %s", mopt_dtype_name(t));
    const ir_shape *xs = &in[0].shape;
    out[0].dtype = t;
    for (int k = 1; k < n_out; k++)
        out[k].dtype = MOPT_DTYPE_I64;
    /* shapes before the values are known: U unknown */
    int32_t ax = -1;
    if (xs->rank < 0) {
        if (p->has_axis)
            ir_shape_set_unknown(&out[0].shape);
        else
            op_set_unknown_dims(&out[0].shape, 1);
        for (int k = 1; k < n_out; k++)
            op_set_unknown_dims(&out[k].shape, 1);
        return MOPT_OK;
    }
    if (p->has_axis) {
        mopt_status st = op_axis(ctx, p->axis, xs->rank, "axis", &ax);
        if (st) return st;
        out[0].shape = *xs;
        out[0].shape.syms[ax] = -1;
    } else {
        op_set_unknown_dims(&out[0].shape, 1);
    }
    for (int k = 1; k < n_out; k++)
        op_set_unknown_dims(&out[k].shape, 1);
    if (n_out > 2) { /* inverse_indices: one per item */
        if (ax >= 0) {
            out[2].shape.dims[0] = xs->dims[ax];
            out[2].shape.syms[0] = xs->syms[ax];
        } else if (ir_shape_is_concrete(xs)) {
            out[2].shape.dims[0] = ir_numel(xs->rank, xs->dims);
            out[2].shape.syms[0] = 0;
        }
    }
    if (!in[0].data || !ir_shape_is_concrete(xs)) return MOPT_OK;
    int64_t outer, n, inner;
    mopt_status st = layout(ctx, xs, &ax, &outer, &n, &inner);
    if (st) return st;
    int64_t U = ref_unique(kind, in[0].data, outer, n, inner, p->sorted, NULL, NULL, NULL);
    if (U < 0)
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory to sort %" PRId64 " items", n);
    if (ax >= 0) {
        out[0].shape.dims[ax] = U;
        out[0].shape.syms[ax] = 0;
    } else {
        out[0].shape.dims[0] = U;
        out[0].shape.syms[0] = 0;
    }
    for (int k = 1; k < n_out; k++)
        if (k != 2) out[k].shape.dims[0] = U, out[k].shape.syms[0] = 0;
    return MOPT_OK;
}

static mopt_status unique_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    (void)n_in;
    const unique_params *p = ctx->params;
    ref_unique_kind kind = REF_UNIQUE_F32;
    kind_of(in[0].dtype, &kind);
    int32_t ax;
    int64_t outer, n, inner;
    mopt_status st = layout(ctx, &in[0].shape, &ax, &outer, &n, &inner);
    if (st) return st;
    /* first occurrences are needed for Y; a scratch array when indices is not an output */
    bool want_first = n_out > 1 && out[1].data;
    int64_t *first = want_first ? out[1].data : mopt_malloc((size_t)n * sizeof(int64_t) + 1);
    if (!first) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for %" PRId64 " items", n);
    int64_t U = ref_unique(kind, in[0].data, outer, n, inner, p->sorted, first,
                           n_out > 2 ? out[2].data : NULL, n_out > 3 ? out[3].data : NULL);
    if (U >= 0) {
        /* Y[:, u, :] = X[:, first[u], :] */
        size_t row = (size_t)inner * op_esize(&in[0]);
        const char *x = in[0].data;
        char *y = out[0].data;
        for (int64_t o = 0; o < outer && row; o++)
            for (int64_t u = 0; u < U; u++)
                memcpy(y + (size_t)(o * U + u) * row, x + (size_t)(o * n + first[u]) * row, row);
    }
    if (!want_first) mopt_free(first);
    if (U < 0)
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory to sort %" PRId64 " items", n);
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"Unique", "", 1, 1, 1, 4, unique_infer, unique_run, NULL, .params_size = sizeof(unique_params),
     .parse = unique_parse, .bridge = &ops_bridge_float},
};

const op_def *ops_family_unique(size_t *count) {
    *count = sizeof k_ops / sizeof k_ops[0];
    return k_ops;
}
