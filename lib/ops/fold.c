/*
 * fold.c — the "fold" op family, the inverses of windowed ops that scatter
 * values back into an image:
 *  - Col2Im (opset 18): columns [N, C * prod(block_shape), L] summed back
 *    into images [N, C, image_shape...] over any number of spatial dims,
 *    with strides, pads and dilations. f32 f64 i32 i64 natively; f16/bf16
 *    and the narrow integers through the bridge.
 *  - MaxUnpool (opset 9, 11, 22): X's values put at their MaxPool indices
 *    in the unpooled shape (kernel_shape, strides, pads); an output_shape
 *    input places that shape in the top-left corner of a larger zero
 *    output, as the ONNX reference does. Any fixed-size dtype (values are
 *    moved, not computed).
 * Math in kernels/ref/fold.c.
 */
#include <inttypes.h>
#include <string.h>

#include "kernels/ref/ref_fold.h"
#include "ops/bridge.h"
#include "ops/ops.h"

#define FOLD_MAX_SPATIAL (IR_MAX_RANK - 2)

/* An ints attribute: values (pointing into the node) and count, 0 when absent. */
typedef struct ints_attr {
    const int64_t *v;
    int64_t n;
} ints_attr;

/* Reads ints attribute `name`, each value in [lo, OP_WINDOW_ATTR_LIMIT). */
static mopt_status read_ints(const op_ctx *ctx, const char *name, int64_t lo, ints_attr *a) {
    a->v = NULL;
    a->n = 0;
    if (!ir_node_attr(ctx->node, name)) return MOPT_OK;
    a->n = ir_node_attr_ints(ctx->node, name, &a->v);
    for (int64_t i = 0; i < a->n; i++)
        if (a->v[i] < lo || a->v[i] >= OP_WINDOW_ATTR_LIMIT)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                           "%s[%" PRId64 "] = %" PRId64 " is outside [%" PRId64 ", 2^31)", name, i,
                           a->v[i], lo);
    return MOPT_OK;
}

/* Fails unless attribute a has `want` values (when given). */
static mopt_status expect_len(const op_ctx *ctx, const char *name, const ints_attr *a,
                              int64_t want) {
    if (a->v && a->n != want)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "%s has %" PRId64 " values; expected %" PRId64,
                       name, a->n, want);
    return MOPT_OK;
}

static int64_t at(const ints_attr *a, int64_t i, int64_t def) { return a->v ? a->v[i] : def; }

/* ---- Col2Im ------------------------------------------------------------------------ */

typedef struct col2im_params {
    ints_attr strides, pads, dilations;
} col2im_params;

static mopt_status col2im_parse(const op_ctx *ctx, void *params) {
    col2im_params *p = params;
    mopt_status st;
    if ((st = read_ints(ctx, "strides", 1, &p->strides)) ||
        (st = read_ints(ctx, "pads", 0, &p->pads)) ||
        (st = read_ints(ctx, "dilations", 1, &p->dilations)))
        return st;
    return MOPT_OK;
}

static bool fold_type(mopt_dtype t, ref_fold_type *k) {
    switch (t) {
    case MOPT_DTYPE_F32: *k = REF_FOLD_F32; return true;
    case MOPT_DTYPE_F64: *k = REF_FOLD_F64; return true;
    case MOPT_DTYPE_I32: *k = REF_FOLD_I32; return true;
    case MOPT_DTYPE_I64: *k = REF_FOLD_I64; return true;
    default: return false;
    }
}

/* The geometry from image_shape and block_shape: *known is 1 when their
 * values are known (g and *C set; *C is -1 when the input's dim 1 is not),
 * 0 when they are not known yet. */
static mopt_status col2im_geometry(const op_ctx *ctx, const op_tensor *in, ref_col2im_geom *g,
                                   int64_t *C, int *known) {
    const col2im_params *p = ctx->params;
    int64_t image[FOLD_MAX_SPATIAL + 1], block[FOLD_MAX_SPATIAL + 1], ni, nb;
    int ki = op_known_ints(ctx, &in[1], "image_shape", image, FOLD_MAX_SPATIAL, &ni);
    int kb = ki < 0 ? -1 : op_known_ints(ctx, &in[2], "block_shape", block, FOLD_MAX_SPATIAL, &nb);
    *known = 0;
    if (ki < 0 || kb < 0) return MOPT_ERR_SHAPE;
    if (ki == 0 || kb == 0) return MOPT_OK;
    if (ni != nb || ni < 1)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "image_shape and block_shape must have the same number (>= 1) of values, "
                       "not %" PRId64 " and %" PRId64,
                       ni, nb);
    mopt_status st;
    if ((st = expect_len(ctx, "strides", &p->strides, ni)) ||
        (st = expect_len(ctx, "pads", &p->pads, 2 * ni)) ||
        (st = expect_len(ctx, "dilations", &p->dilations, ni)))
        return st;
    memset(g, 0, sizeof *g);
    g->nd = (int)ni;
    int64_t K = 1, L = 1;
    for (int d = 0; d < g->nd; d++) {
        if (image[d] < 1 || block[d] < 1 || image[d] >= OP_WINDOW_ATTR_LIMIT ||
            block[d] >= OP_WINDOW_ATTR_LIMIT)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "image_shape[%d] = %" PRId64 " and block_shape[%d] = %" PRId64
                           " must be in [1, 2^31)",
                           d, image[d], d, block[d]);
        g->image[d] = image[d];
        g->block[d] = block[d];
        g->stride[d] = at(&p->strides, d, 1);
        g->dil[d] = at(&p->dilations, d, 1);
        g->pad[d] = at(&p->pads, d, 0);
        int64_t padded = image[d] + g->pad[d] + at(&p->pads, d + ni, 0);
        int64_t span = padded - g->dil[d] * (block[d] - 1) - 1;
        if (span < 0)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "block_shape[%d] = %" PRId64 " (dilation %" PRId64
                           ") does not fit the padded image size %" PRId64,
                           d, block[d], g->dil[d], padded);
        g->blocks[d] = span / g->stride[d] + 1;
        K *= block[d];
        L *= g->blocks[d];
    }
    *known = 1;
    *C = -1;
    const ir_shape *xs = &in[0].shape;
    if (xs->rank != 3) return MOPT_OK; /* unknown rank */
    if (xs->syms[1] == 0) {
        if (xs->dims[1] % K)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "input dim 1 (%" PRId64
                           ") is not a multiple of prod(block_shape) = %" PRId64,
                           xs->dims[1], K);
        *C = xs->dims[1] / K;
    }
    if (xs->syms[2] == 0 && xs->dims[2] != L)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "input dim 2 (%" PRId64 ") must be the number of blocks, %" PRId64,
                       xs->dims[2], L);
    return MOPT_OK;
}

static mopt_status col2im_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    (void)n_in, (void)n_out;
    mopt_status st;
    ref_fold_type ft;
    if (in[0].dtype == MOPT_DTYPE_STRING)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "string input not supported");
    if (in[0].dtype != MOPT_DTYPE_UNDEFINED && !fold_type(in[0].dtype, &ft))
        return op_fail(ctx, MOPT_ERR_TYPE, "input 0 has unsupported type %s",
                       mopt_dtype_name(in[0].dtype));
    if ((st = op_expect_i64(ctx, &in[1], 1)) || (st = op_expect_i64(ctx, &in[2], 2))) return st;
    const ir_shape *xs = &in[0].shape;
    if (xs->rank >= 0 && xs->rank != 3)
        return op_fail(ctx, MOPT_ERR_SHAPE, "input must have rank 3 [N, C * prod(block), L]");
    for (int k = 1; k <= 2; k++)
        if (in[k].shape.rank >= 0 && in[k].shape.rank != 1)
            return op_fail(ctx, MOPT_ERR_SHAPE, "%s must be 1-D",
                           k == 1 ? "image_shape" : "block_shape");
    out[0].dtype = in[0].dtype;
    ref_col2im_geom g;
    int64_t C = -1;
    int known;
    if ((st = col2im_geometry(ctx, in, &g, &C, &known))) return st;
    ir_shape *s = &out[0].shape;
    if (!known) {
        const ir_shape *is = &in[1].shape;
        if (is->rank == 1 && is->syms[0] == 0 && is->dims[0] <= FOLD_MAX_SPATIAL)
            op_set_unknown_dims(s, (int32_t)(2 + is->dims[0]));
        else
            ir_shape_set_unknown(s);
        if (s->rank >= 1 && xs->rank == 3) s->dims[0] = xs->dims[0], s->syms[0] = xs->syms[0];
        return MOPT_OK;
    }
    int64_t d[IR_MAX_RANK] = {xs->rank == 3 ? xs->dims[0] : -1, C};
    for (int i = 0; i < g.nd; i++)
        d[2 + i] = g.image[i];
    ir_shape_set(s, 2 + g.nd, d);
    s->syms[0] = xs->rank == 3 ? xs->syms[0] : -1;
    s->syms[1] = C >= 0 ? 0 : -1;
    return MOPT_OK;
}

static mopt_status col2im_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    (void)n_in, (void)n_out;
    ref_col2im_geom g;
    int64_t C;
    int known;
    mopt_status st = col2im_geometry(ctx, in, &g, &C, &known);
    if (st) return st;
    ref_fold_type t = REF_FOLD_F32;
    fold_type(in[0].dtype, &t);
    ref_col2im(t, &g, in[0].shape.dims[0], C, in[0].data, out[0].data);
    return MOPT_OK;
}

/* ---- MaxUnpool --------------------------------------------------------------------- */

typedef struct unpool_params {
    ints_attr kernel, strides, pads;
} unpool_params;

static mopt_status unpool_parse(const op_ctx *ctx, void *params) {
    unpool_params *p = params;
    mopt_status st;
    if ((st = read_ints(ctx, "kernel_shape", 1, &p->kernel)) ||
        (st = read_ints(ctx, "strides", 1, &p->strides)) ||
        (st = read_ints(ctx, "pads", 0, &p->pads)))
        return st;
    if (!p->kernel.v || p->kernel.n < 1)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "attribute kernel_shape is required");
    if (p->kernel.n > FOLD_MAX_SPATIAL)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "kernel_shape has %" PRId64 " dims; at most %d",
                       p->kernel.n, FOLD_MAX_SPATIAL);
    if ((st = expect_len(ctx, "strides", &p->strides, p->kernel.n)) ||
        (st = expect_len(ctx, "pads", &p->pads, 2 * p->kernel.n)))
        return st;
    return MOPT_OK;
}

/* The unpooled size of spatial dim d from X's size there. */
static int64_t unpooled(const unpool_params *p, int d, int64_t x) {
    return (x - 1) * at(&p->strides, d, 1) - at(&p->pads, d, 0) - at(&p->pads, d + p->kernel.n, 0) +
           p->kernel.v[d];
}

static mopt_status unpool_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    (void)n_out;
    const unpool_params *p = ctx->params;
    mopt_status st;
    if (in[0].dtype == MOPT_DTYPE_STRING)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "string input not supported");
    if ((st = op_expect_any(ctx, &in[0], 0)) || (st = op_expect_i64(ctx, &in[1], 1))) return st;
    bool has_os = op_has_input(in, n_in, 2);
    if (has_os && (st = op_expect_i64(ctx, &in[2], 2))) return st;
    const int32_t rank = (int32_t)p->kernel.n + 2;
    const ir_shape *xs = &in[0].shape, *is = &in[1].shape;
    char b1[IR_SHAPE_STR_CAP], b2[IR_SHAPE_STR_CAP];
    if (xs->rank >= 0 && xs->rank != rank)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "X %s must have rank %d (kernel_shape has %" PRId64 " dims)",
                       op_shape_str(ctx, xs, b1), (int)rank, p->kernel.n);
    if (xs->rank >= 0 && is->rank >= 0) {
        bool same = is->rank == xs->rank;
        for (int32_t d = 0; same && d < rank; d++)
            same = !(xs->syms[d] == 0 && is->syms[d] == 0 && xs->dims[d] != is->dims[d]);
        if (!same)
            return op_fail(ctx, MOPT_ERR_SHAPE, "I %s must have X's shape %s",
                           op_shape_str(ctx, is, b2), op_shape_str(ctx, xs, b1));
    }
    out[0].dtype = in[0].dtype;
    ir_shape inner;
    op_set_unknown_dims(&inner, rank);
    for (int32_t d = 0; xs->rank == rank && d < rank; d++) {
        if (xs->syms[d] != 0) continue;
        inner.dims[d] = d < 2 ? xs->dims[d] : unpooled(p, d - 2, xs->dims[d]);
        inner.syms[d] = 0;
        if (inner.dims[d] < 0)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "the unpooled size of dim %d is negative (%" PRId64 ")", (int)d,
                           inner.dims[d]);
    }
    if (!has_os) {
        for (int32_t d = 0; xs->rank == rank && d < 2; d++)
            inner.syms[d] = xs->syms[d];
        out[0].shape = inner;
        return MOPT_OK;
    }
    int64_t os[IR_MAX_RANK + 1], n;
    int known = op_known_ints(ctx, &in[2], "output_shape", os, IR_MAX_RANK, &n);
    if (known < 0) return MOPT_ERR_SHAPE;
    if (!known) {
        op_set_unknown_dims(&out[0].shape, rank);
        return MOPT_OK;
    }
    if (n != rank)
        return op_fail(ctx, MOPT_ERR_SHAPE, "output_shape has %" PRId64 " values; expected %d", n,
                       (int)rank);
    for (int32_t d = 0; d < rank; d++)
        if (inner.syms[d] == 0 && os[d] < inner.dims[d])
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "output_shape[%d] = %" PRId64
                           " is smaller than the unpooled size %" PRId64,
                           (int)d, os[d], inner.dims[d]);
    ir_shape_set(&out[0].shape, rank, os);
    return MOPT_OK;
}

static mopt_status unpool_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    (void)n_in, (void)n_out;
    const unpool_params *p = ctx->params;
    const ir_shape *xs = &in[0].shape;
    int64_t inner[IR_MAX_RANK];
    for (int32_t d = 0; d < xs->rank; d++)
        inner[d] = d < 2 ? xs->dims[d] : unpooled(p, d - 2, xs->dims[d]);
    int64_t n = op_numel(&in[0]);
    int64_t bad = ref_max_unpool(op_esize(&in[0]), xs->rank, inner, out[0].shape.dims, n,
                                 in[0].data, in[1].data, out[0].data);
    if (bad >= 0) {
        int64_t total = 1;
        for (int32_t d = 0; d < xs->rank; d++)
            total *= inner[d];
        return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT,
                       "I[%" PRId64 "] = %" PRId64 " is outside the unpooled tensor [0, %" PRId64
                       ")",
                       bad, ((const int64_t *)in[1].data)[bad], total);
    }
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"Col2Im", "", 3, 3, 1, 1, col2im_infer, col2im_run, NULL, .params_size = sizeof(col2im_params),
     .parse = col2im_parse, .bridge = &ops_bridge_wrap_arith},
    {"MaxUnpool", "", 2, 3, 1, 1, unpool_infer, unpool_run, NULL,
     .params_size = sizeof(unpool_params), .parse = unpool_parse, .bridge = &ops_bridge_float},
};

const op_def *ops_family_fold(size_t *count) {
    *count = sizeof k_ops / sizeof k_ops[0];
    return k_ops;
}
