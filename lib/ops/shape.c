/*
 * shape.c — the "shape" operator family: ops that change how a tensor is
 * viewed or that make tensors from shapes: Reshape, Flatten, Squeeze,
 * Unsqueeze, Shape, Size, ConstantOfShape, Range, Constant, Identity,
 * Dropout (the identity; training with ratio > 0 unsupported), Expand, EyeLike.
 *
 * Inference propagates symbolic dims (Reshape's 0 copies a symbol; -1 is
 * solved when the symbols on both sides cancel). Ops whose output bytes are
 * the input bytes (Identity, Reshape, Flatten, Squeeze, Unsqueeze) pass a
 * load-time constant through by pointing out->data at the input's
 * graph-owned data; Constant exposes its attribute data. Data movement works
 * on any dtype by element size; the math lives in kernels/ref.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/ref/ref_logic.h"
#include "kernels/ref/ref_movement.h"
#include "ops/bridge.h"
#include "ops/op_common.h"
#include "ops/ops.h"

/* ---- helpers ------------------------------------------------------------ */

static mopt_status rank_limit(const op_ctx *ctx, int64_t rank) {
    if (rank > IR_MAX_RANK)
        return op_fail(ctx, MOPT_ERR_LIMIT, "output rank %" PRId64 " exceeds the maximum %d", rank,
                       IR_MAX_RANK);
    return MOPT_OK;
}

/* Reads the 1-D shape input s (Reshape's, ConstantOfShape's) into
 * sh[0..*n). *known is false when the values are not known before the run;
 * out's shape is then set: as many unknown dims as s has values, or an
 * unknown rank. */
static mopt_status shape_input(const op_ctx *ctx, const op_tensor *s, op_tensor *out, int64_t *sh,
                               int64_t *n, bool *known) {
    char b1[IR_SHAPE_STR_CAP];
    if (s->shape.rank >= 0 && s->shape.rank != 1)
        return op_fail(ctx, MOPT_ERR_SHAPE, "the shape input must be 1-D, not %s",
                       op_shape_str(ctx, &s->shape, b1));
    *n = 0;
    int r = op_known_ints(ctx, s, "shape", sh, IR_MAX_RANK, n);
    if (r < 0) return MOPT_ERR_SHAPE;
    *known = r > 0;
    if (*known) return MOPT_OK;
    if (s->shape.rank == 1 && s->shape.syms[0] == 0) {
        mopt_status st = rank_limit(ctx, s->shape.dims[0]);
        if (st) return st;
        op_set_unknown_dims(&out->shape, (int32_t)s->shape.dims[0]);
    } else {
        ir_shape_set_unknown(&out->shape);
    }
    return MOPT_OK;
}

/* Output = input bytes (Identity, Reshape, ...). */
static mopt_status run_copy(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    size_t nb = op_nbytes(&in[0]);
    if (nb != op_nbytes(&out[0]))
        return op_fail(ctx, MOPT_ERR_INTERNAL, "input and output sizes differ");
    if (nb) memcpy(out[0].data, in[0].data, nb);
    return MOPT_OK;
}

/* Load-time constant pass-through for byte-identical outputs. */
static void pass_data(const op_ctx *ctx, const op_tensor *in, op_tensor *out) {
    if (!ctx->runtime && in->data && ir_shape_is_concrete(&out->shape)) out->data = in->data;
}

/* Product of dims [lo, hi) of s as one dim: concrete, a single symbol (the
 * others all 1), 0 if any concrete dim is 0, else unknown. */
static mopt_status dims_product(const op_ctx *ctx, const ir_shape *s, int32_t lo, int32_t hi,
                                int64_t *dim, int32_t *sym) {
    int64_t p = 1;
    int32_t n_sym = 0, the_sym = 0;
    bool zero = false;
    for (int32_t i = lo; i < hi; i++) {
        if (s->syms[i] != 0) {
            n_sym++;
            the_sym = s->syms[i];
            continue;
        }
        if (s->dims[i] == 0)
            zero = true;
        else if (p > INT64_MAX / s->dims[i])
            return op_fail(ctx, MOPT_ERR_LIMIT, "dimension product overflows");
        else
            p *= s->dims[i];
    }
    *dim = 0;
    *sym = 0;
    if (zero) return MOPT_OK;
    if (n_sym == 0)
        *dim = p;
    else if (n_sym == 1 && p == 1 && the_sym > 0)
        *sym = the_sym;
    else
        *sym = -1;
    return MOPT_OK;
}

/* ---- Identity ------------------------------------------------------------ */

static mopt_status identity_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                  int n_out) {
    mopt_status st = op_infer_moved(ctx, in, 0, out);
    if (st) return st;
    out[0].shape = in[0].shape;
    pass_data(ctx, &in[0], &out[0]);
    return MOPT_OK;
}

/* ---- OptionalHasElement, OptionalGetElement ------------------------------- */

/* Graphs whose inputs or outputs are optionals or sequences are refused at
 * load, so an optional here is a tensor that is present or a missing input:
 * OptionalHasElement says which, OptionalGetElement is the identity. */
static mopt_status has_element_infer(const op_ctx *ctx, const op_tensor *in, int n_in,
                                     op_tensor *out, int n_out) {
    out[0].dtype = MOPT_DTYPE_BOOL;
    ir_shape_set_scalar(&out[0].shape);
    return MOPT_OK;
}

static mopt_status has_element_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                   int n_out) {
    *(uint8_t *)out[0].data = (uint8_t)op_has_input(in, n_in, 0);
    return MOPT_OK;
}

static mopt_status get_element_infer(const op_ctx *ctx, const op_tensor *in, int n_in,
                                     op_tensor *out, int n_out) {
    if (!op_has_input(in, n_in, 0))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "the optional input is empty");
    return identity_infer(ctx, in, n_in, out, n_out);
}

/* ---- Dropout ------------------------------------------------------------- */

/* Dropout is the identity (and its mask all ones) unless training_mode is
 * true and ratio > 0: that draws a random mask, which ONNX leaves to the
 * runtime's generator, and is not implemented. *identity: 1 when the node is
 * known to be the identity, 0 when training_mode or ratio is not known yet
 * (load time). Fails (UNSUPPORTED) when it would draw a mask. */
static mopt_status dropout_identity(const op_ctx *ctx, const op_tensor *in, int n_in,
                                    int *identity) {
    *identity = 0;
    double training = 0, ratio = 0.5;
    if (op_has_input(in, n_in, 2)) {
        if (!in[2].data) return MOPT_OK;
        if (op_read_scalar(ctx, &in[2], "training_mode", &training)) return MOPT_ERR_TYPE;
    }
    if (training == 0) {
        *identity = 1;
        return MOPT_OK;
    }
    if (op_has_input(in, n_in, 1)) {
        if (!in[1].data) return MOPT_OK;
        if (op_read_scalar(ctx, &in[1], "ratio", &ratio)) return MOPT_ERR_TYPE;
    }
    if (!(ratio >= 0 && ratio < 1))
        return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT, "ratio %g is not in [0, 1)", ratio);
    if (ratio != 0)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED,
                       "training_mode=true with ratio %g draws a random mask: not supported "
                       "(inference only)",
                       ratio);
    *identity = 1;
    return MOPT_OK;
}

static mopt_status dropout_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    mopt_status st = op_expect_any(ctx, &in[0], 0);
    if (st) return st;
    int identity;
    if ((st = dropout_identity(ctx, in, n_in, &identity))) return st;
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    if (n_out > 1) {
        if (ctx->opset < 10)
            return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "the mask output needs opset >= 10");
        out[1].dtype = MOPT_DTYPE_BOOL;
        out[1].shape = in[0].shape;
    }
    if (identity) pass_data(ctx, &in[0], &out[0]);
    return MOPT_OK;
}

static mopt_status dropout_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    int identity;
    mopt_status st = dropout_identity(ctx, in, n_in, &identity);
    if (st) return st;
    st = run_copy(ctx, in, n_in, out, n_out);
    if (st) return st;
    if (n_out > 1) {
        size_t nb = op_nbytes(&out[1]);
        if (nb) memset(out[1].data, 1, nb);
    }
    return MOPT_OK;
}

/* ---- Reshape ------------------------------------------------------------- */

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Reshape's allowzero (opset 14+), Flatten's axis */
typedef struct int_attr_params {
    int64_t v;
} int_attr_params;

static mopt_status reshape_parse(const op_ctx *ctx, void *params) {
    ((int_attr_params *)params)->v =
        ctx->opset >= 14 ? ir_node_attr_int(ctx->node, "allowzero", 0) : 0;
    return MOPT_OK;
}

static mopt_status reshape_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    mopt_status st = op_infer_moved(ctx, in, 1, out);
    if (st) return st;
    const ir_shape *x = &in[0].shape;
    char b1[IR_SHAPE_STR_CAP], b2[IR_SHAPE_STR_CAP];
    int64_t allowzero = ((const int_attr_params *)ctx->params)->v;
    int64_t sh[IR_MAX_RANK], n = 0;
    bool known = false;
    if ((st = shape_input(ctx, &in[1], &out[0], sh, &n, &known)) || !known) return st;
    ir_shape o;
    memset(&o, 0, sizeof o);
    o.rank = (int32_t)n;
    int32_t neg = -1;
    bool has_zero = false;
    for (int32_t i = 0; i < o.rank; i++) {
        int64_t v = sh[i];
        if (v == -1) {
            if (neg >= 0) return op_fail(ctx, MOPT_ERR_SHAPE, "the shape has more than one -1");
            neg = i;
            o.syms[i] = -1;
        } else if (v == 0 && !allowzero) {
            if (x->rank < 0) {
                o.syms[i] = -1;
            } else if (i >= x->rank) {
                return op_fail(ctx, MOPT_ERR_SHAPE,
                               "shape[%d] is 0 (copy the input dim) but the input %s has rank %d",
                               (int)i, op_shape_str(ctx, x, b1), (int)x->rank);
            } else {
                o.dims[i] = x->dims[i];
                o.syms[i] = x->syms[i];
            }
        } else if (v < 0) {
            return op_fail(ctx, MOPT_ERR_SHAPE, "shape[%d] is %" PRId64 "; dims must be >= -1",
                           (int)i, v);
        } else {
            if (v == 0) has_zero = true;
            o.dims[i] = v;
        }
    }
    if (allowzero && has_zero && neg >= 0)
        return op_fail(ctx, MOPT_ERR_SHAPE, "with allowzero=1 the shape cannot hold both 0 and -1");
    /* products of the fixed parts and the symbols of both sides */
    bool in_unknown = x->rank < 0, out_unknown = false;
    int32_t in_syms[IR_MAX_RANK], out_syms[IR_MAX_RANK], n_in_syms = 0, n_out_syms = 0;
    int64_t in_p = 1, out_p = 1;
    bool overflow = false;
    for (int32_t i = 0; !in_unknown && i < x->rank; i++) {
        if (x->syms[i] < 0)
            in_unknown = true;
        else if (x->syms[i] > 0)
            in_syms[n_in_syms++] = x->syms[i];
        else if (x->dims[i] && in_p > INT64_MAX / x->dims[i])
            overflow = true;
        else
            in_p *= x->dims[i];
    }
    for (int32_t i = 0; i < o.rank; i++) {
        if (i == neg) continue;
        if (o.syms[i] < 0)
            out_unknown = true;
        else if (o.syms[i] > 0)
            out_syms[n_out_syms++] = o.syms[i];
        else if (o.dims[i] && out_p > INT64_MAX / o.dims[i])
            overflow = true;
        else
            out_p *= o.dims[i];
    }
    if (overflow) return op_fail(ctx, MOPT_ERR_LIMIT, "shape product overflows");
    bool same_syms = !in_unknown && !out_unknown && n_in_syms == n_out_syms;
    if (same_syms) {
        qsort(in_syms, (size_t)n_in_syms, sizeof in_syms[0], cmp_i32);
        qsort(out_syms, (size_t)n_out_syms, sizeof out_syms[0], cmp_i32);
        same_syms = memcmp(in_syms, out_syms, (size_t)n_in_syms * sizeof in_syms[0]) == 0;
    }
    bool concrete = same_syms && n_in_syms == 0;
    if (neg >= 0) {
        if (same_syms && out_p != 0 && in_p % out_p == 0) {
            o.dims[neg] = in_p / out_p;
            o.syms[neg] = 0;
        } else if (concrete) {
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "cannot reshape %s (%" PRId64
                           " elements) to %s: the -1 cannot be inferred",
                           op_shape_str(ctx, x, b1), in_p, op_shape_str(ctx, &o, b2));
        }
    } else if (same_syms && in_p != out_p) {
        return op_fail(ctx, MOPT_ERR_SHAPE, "cannot reshape %s to %s: element counts differ",
                       op_shape_str(ctx, x, b1), op_shape_str(ctx, &o, b2));
    }
    out[0].shape = o;
    pass_data(ctx, &in[0], &out[0]);
    return MOPT_OK;
}

/* ---- Flatten ------------------------------------------------------------- */

static const op_attr_spec k_flatten_attrs[] = {OP_ATTR_I64(int_attr_params, v, "axis", 1)};

static mopt_status flatten_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    mopt_status st = op_infer_moved(ctx, in, 0, out);
    if (st) return st;
    const ir_shape *x = &in[0].shape;
    int64_t axis = ((const int_attr_params *)ctx->params)->v;
    op_set_unknown_dims(&out[0].shape, 2);
    if (x->rank < 0) return MOPT_OK;
    if (axis < -(int64_t)x->rank || axis > x->rank)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "axis %" PRId64 " is out of range for rank %d",
                       axis, (int)x->rank);
    if (axis < 0) axis += x->rank;
    for (int i = 0; i < 2; i++) {
        int32_t lo = i == 0 ? 0 : (int32_t)axis, hi = i == 0 ? (int32_t)axis : x->rank;
        st = dims_product(ctx, x, lo, hi, &out[0].shape.dims[i], &out[0].shape.syms[i]);
        if (st) return st;
    }
    pass_data(ctx, &in[0], &out[0]);
    return MOPT_OK;
}

/* ---- Squeeze / Unsqueeze ------------------------------------------------- */

/* Squeeze/Unsqueeze: the axes attribute (before opset 13) */
typedef struct squeeze_params {
    const int64_t *axes;
    int64_t n_axes; /* -1: absent */
} squeeze_params;

static mopt_status squeeze_parse(const op_ctx *ctx, void *params) {
    squeeze_params *p = params;
    p->n_axes = -1;
    if (ctx->opset < 13) {
        const int64_t *a = NULL;
        int64_t k = ir_node_attr_ints(ctx->node, "axes", &a);
        if (k > IR_MAX_RANK * 2)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "too many axes (%" PRId64 ")", k);
        p->axes = a;
        p->n_axes = k < 0 ? -1 : k;
    }
    return MOPT_OK;
}

/* The axes of Squeeze/Unsqueeze: attribute before opset 13, input 1 since.
 * Returns 1 (known, *n set; *n = -1 when absent), 0 (input wired but values
 * unknown; *n = element count or -1), or -1 (error). */
static int squeeze_axes(const op_ctx *ctx, const op_tensor *in, int n_in, int64_t *axes,
                        int64_t *n) {
    if (ctx->opset < 13) {
        const squeeze_params *p = ctx->params;
        if (p->n_axes > 0) memcpy(axes, p->axes, (size_t)p->n_axes * sizeof *axes);
        *n = p->n_axes;
        return 1;
    }
    if (!op_wired(ctx, 1)) {
        *n = -1;
        return 1;
    }
    int r = op_known_ints(ctx, &in[1], "axes", axes, IR_MAX_RANK * 2, n);
    if (r == 0) {
        const ir_shape *s = &in[1].shape;
        *n = (s->rank == 1 && s->syms[0] == 0) ? s->dims[0] : (s->rank == 0 ? 1 : -1);
    }
    return r;
}

/* The start of Squeeze's and Unsqueeze's inference: Y takes X's dtype, its
 * shape unknown until set; the axes as squeeze_axes reads them (*r). */
static mopt_status squeeze_start(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int64_t *axes, int64_t *n, int *r) {
    mopt_status st = op_infer_moved(ctx, in, 0, out);
    if (st) return st;
    *n = 0;
    *r = squeeze_axes(ctx, in, n_in, axes, n);
    if (*r < 0) return MOPT_ERR_INVALID_MODEL;
    ir_shape_set_unknown(&out[0].shape);
    return MOPT_OK;
}

static mopt_status squeeze_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    const ir_shape *x = &in[0].shape;
    int64_t axes[IR_MAX_RANK * 2], n;
    int r;
    mopt_status st = squeeze_start(ctx, in, n_in, out, axes, &n, &r);
    if (st || x->rank < 0) return st;
    if (r == 0) {
        if (n >= 0 && n <= x->rank) op_set_unknown_dims(&out[0].shape, x->rank - (int32_t)n);
        return MOPT_OK;
    }
    bool drop[IR_MAX_RANK] = {false};
    char b1[IR_SHAPE_STR_CAP];
    if (n < 0) { /* all dims of size 1 */
        for (int32_t i = 0; i < x->rank; i++) {
            if (x->syms[i] != 0) return MOPT_OK; /* unknown whether it is 1 */
            drop[i] = x->dims[i] == 1;
        }
    } else {
        for (int64_t k = 0; k < n; k++) {
            int32_t a;
            if ((st = op_axis(ctx, axes[k], x->rank, "axis", &a))) return st;
            if (drop[a]) return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "axis %d repeats", (int)a);
            if (x->syms[a] == 0 && x->dims[a] != 1)
                return op_fail(ctx, MOPT_ERR_SHAPE,
                               "cannot squeeze axis %d of %s: its size is not 1", (int)a,
                               op_shape_str(ctx, x, b1));
            drop[a] = true;
        }
    }
    ir_shape o;
    memset(&o, 0, sizeof o);
    for (int32_t i = 0; i < x->rank; i++) {
        if (drop[i]) continue;
        o.dims[o.rank] = x->dims[i];
        o.syms[o.rank] = x->syms[i];
        o.rank++;
    }
    out[0].shape = o;
    pass_data(ctx, &in[0], &out[0]);
    return MOPT_OK;
}

static mopt_status unsqueeze_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                   int n_out) {
    const ir_shape *x = &in[0].shape;
    int64_t axes[IR_MAX_RANK * 2], n;
    int r;
    mopt_status st = squeeze_start(ctx, in, n_in, out, axes, &n, &r);
    if (st) return st;
    if (r == 1 && n < 0) return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "axes are required");
    if (x->rank < 0) return MOPT_OK;
    int64_t rank = x->rank + (n < 0 ? 0 : n);
    if ((st = rank_limit(ctx, rank))) return st;
    if (r == 0) {
        if (n >= 0) op_set_unknown_dims(&out[0].shape, (int32_t)rank);
        return MOPT_OK;
    }
    bool ins[IR_MAX_RANK] = {false};
    for (int64_t k = 0; k < n; k++) {
        int32_t a;
        if ((st = op_axis(ctx, axes[k], (int32_t)rank, "axis", &a))) return st;
        if (ins[a]) return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "axis %d repeats", (int)a);
        ins[a] = true;
    }
    ir_shape o;
    memset(&o, 0, sizeof o);
    o.rank = (int32_t)rank;
    for (int32_t i = 0, j = 0; i < o.rank; i++) {
        if (ins[i]) {
            o.dims[i] = 1;
        } else {
            o.dims[i] = x->dims[j];
            o.syms[i] = x->syms[j];
            j++;
        }
    }
    out[0].shape = o;
    pass_data(ctx, &in[0], &out[0]);
    return MOPT_OK;
}

/* ---- Shape / Size -------------------------------------------------------- */

/* Shape's start and end (opset 15+) */
typedef struct shape_params {
    int64_t start, end;
    bool has_end; /* else the rank */
} shape_params;

static mopt_status shape_parse(const op_ctx *ctx, void *params) {
    shape_params *p = params;
    if (ctx->opset >= 15) {
        const ir_attr *e = ir_node_attr(ctx->node, "end");
        p->start = ir_node_attr_int(ctx->node, "start", 0);
        p->has_end = e && e->type == IR_ATTR_INT;
        p->end = p->has_end ? e->i : 0;
    }
    return MOPT_OK;
}

static void shape_range(const op_ctx *ctx, int32_t rank, int64_t *start, int64_t *end) {
    const shape_params *p = ctx->params;
    int64_t s = p->start, e = p->has_end ? p->end : rank;
    if (s < 0) s += rank;
    if (e < 0) e += rank;
    s = s < 0 ? 0 : (s > rank ? rank : s);
    e = e < 0 ? 0 : (e > rank ? rank : e);
    *start = s;
    *end = e > s ? e : s;
}

static mopt_status shape_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    out[0].dtype = MOPT_DTYPE_I64;
    op_set_unknown_dims(&out[0].shape, 1);
    if (in[0].shape.rank < 0) return MOPT_OK;
    int64_t s, e;
    shape_range(ctx, in[0].shape.rank, &s, &e);
    out[0].shape.dims[0] = e - s;
    out[0].shape.syms[0] = 0;
    return MOPT_OK;
}

static mopt_status shape_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    int64_t s, e;
    shape_range(ctx, in[0].shape.rank, &s, &e);
    int64_t *y = out[0].data;
    for (int64_t i = s; i < e; i++)
        y[i - s] = in[0].shape.dims[i];
    return MOPT_OK;
}

static mopt_status size_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    out[0].dtype = MOPT_DTYPE_I64;
    ir_shape_set_scalar(&out[0].shape);
    return MOPT_OK;
}

static mopt_status size_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    int64_t n = op_numel(&in[0]);
    if (n < 0) return op_fail(ctx, MOPT_ERR_LIMIT, "element count overflows");
    *(int64_t *)out[0].data = n;
    return MOPT_OK;
}

/* ---- ConstantOfShape ----------------------------------------------------- */

static const float k_zero_f32 = 0.0f;

/* ConstantOfShape's value: its dtype and one element (the node's or k_zero_f32) */
typedef struct cos_params {
    mopt_dtype dtype;
    const void *value;
} cos_params;

static mopt_status cos_value(const op_ctx *ctx, mopt_dtype *dtype, const void **value) {
    const ir_attr *a = ir_node_attr(ctx->node, "value");
    *dtype = MOPT_DTYPE_F32;
    *value = &k_zero_f32;
    if (!a) return MOPT_OK;
    if (a->type != IR_ATTR_TENSOR || !a->t)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "attribute 'value' must be a tensor");
    const ir_tensor *t = a->t;
    if (ir_numel(t->rank, t->dims) != 1 || !t->data)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "attribute 'value' must hold one element");
    if (!op_dtype_sized(t->dtype))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "value type %s is not supported",
                       mopt_dtype_name(t->dtype));
    *dtype = t->dtype;
    *value = t->data;
    return MOPT_OK;
}

static mopt_status cos_parse(const op_ctx *ctx, void *params) {
    cos_params *p = params;
    return cos_value(ctx, &p->dtype, &p->value);
}

static mopt_status cos_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    out[0].dtype = ((const cos_params *)ctx->params)->dtype;
    mopt_status st = op_expect_i64(ctx, &in[0], 0);
    if (st) return st;
    int64_t sh[IR_MAX_RANK], n = 0;
    bool known = false;
    if ((st = shape_input(ctx, &in[0], &out[0], sh, &n, &known)) || !known) return st;
    for (int64_t i = 0; i < n; i++)
        if (sh[i] < 0)
            return op_fail(ctx, MOPT_ERR_SHAPE, "shape[%d] is negative (%" PRId64 ")", (int)i,
                           sh[i]);
    if (ir_numel((int32_t)n, sh) < 0) return op_fail(ctx, MOPT_ERR_LIMIT, "size overflows");
    ir_shape_set(&out[0].shape, (int32_t)n, sh);
    return MOPT_OK;
}

static mopt_status cos_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    const cos_params *p = ctx->params;
    ref_fill(out[0].data, mopt_dtype_size(p->dtype), op_numel(&out[0]), p->value);
    return MOPT_OK;
}

/* ---- Range --------------------------------------------------------------- */

static bool range_int(mopt_dtype t) {
    return t == MOPT_DTYPE_I64 || t == MOPT_DTYPE_I32 || t == MOPT_DTYPE_I16;
}

static int64_t read_int_scalar(const op_tensor *t) {
    switch (t->dtype) {
    case MOPT_DTYPE_I64: return *(const int64_t *)t->data;
    case MOPT_DTYPE_I32: return *(const int32_t *)t->data;
    default: return *(const int16_t *)t->data;
    }
}

/* Number of elements of Range into *n; LIMIT, or for delta 0 / no finite
 * count INVALID_MODEL at load (constants) and INVALID_ARGUMENT at run (the
 * values may come from the caller's inputs). */
static mopt_status range_count(const op_ctx *ctx, const op_tensor *in, int64_t *n) {
    mopt_status st, bad = ctx->runtime ? MOPT_ERR_INVALID_ARGUMENT : MOPT_ERR_INVALID_MODEL;
    if (range_int(in[0].dtype)) {
        int64_t s = read_int_scalar(&in[0]), l = read_int_scalar(&in[1]),
                d = read_int_scalar(&in[2]);
        if (d == 0) return op_fail(ctx, bad, "delta is 0");
        *n = 0;
        if (d > 0 ? l <= s : l >= s) return MOPT_OK;
        uint64_t diff = d > 0 ? (uint64_t)l - (uint64_t)s : (uint64_t)s - (uint64_t)l;
        uint64_t step = d > 0 ? (uint64_t)d : (uint64_t)0 - (uint64_t)d;
        uint64_t c = diff / step + (diff % step != 0);
        if (c > ((uint64_t)1 << 40))
            return op_fail(ctx, MOPT_ERR_LIMIT, "Range would have %" PRIu64 " elements", c);
        *n = (int64_t)c;
        return MOPT_OK;
    }
    double s, l, d;
    if ((st = op_read_scalar(ctx, &in[0], "start", &s)) ||
        (st = op_read_scalar(ctx, &in[1], "limit", &l)) ||
        (st = op_read_scalar(ctx, &in[2], "delta", &d)))
        return st;
    if (in[0].dtype == MOPT_DTYPE_F32) /* the difference in the tensor's precision */
        s = (double)((float)l - (float)s), l = 0;
    else
        s = l - s, l = 0;
    double c = d != 0 ? ceil(s / d) : NAN;
    if (!(c == c) || isinf(c) || d == 0)
        return op_fail(ctx, bad, "start, limit and delta give no finite count");
    *n = 0;
    if (c <= 0) return MOPT_OK;
    if (c > (double)((int64_t)1 << 40))
        return op_fail(ctx, MOPT_ERR_LIMIT, "Range would have %.0f elements", c);
    *n = (int64_t)c;
    return MOPT_OK;
}

static mopt_status range_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    static const mopt_dtype k_types[] = {MOPT_DTYPE_F32, MOPT_DTYPE_F64, MOPT_DTYPE_I64,
                                         MOPT_DTYPE_I32, MOPT_DTYPE_I16};
    mopt_status st = MOPT_OK;
    for (int k = 0; k < 3 && !st; k++) {
        st = op_expect_dtype(ctx, &in[k], k, k_types, 5);
        if (!st && k) st = op_same_dtype(ctx, in, 0, k);
        if (!st && in[k].shape.rank >= 0 && ir_shape_is_concrete(&in[k].shape) &&
            ir_shape_numel(&in[k].shape) != 1)
            st = op_fail(ctx, MOPT_ERR_SHAPE, "input %d must be a scalar", k);
    }
    if (st) return st;
    out[0].dtype = in[0].dtype;
    op_set_unknown_dims(&out[0].shape, 1);
    if (!in[0].data || !in[1].data || !in[2].data || in[0].dtype == MOPT_DTYPE_UNDEFINED)
        return MOPT_OK;
    int64_t n = 0;
    if ((st = range_count(ctx, in, &n))) return st;
    out[0].shape.dims[0] = n;
    out[0].shape.syms[0] = 0;
    return MOPT_OK;
}

static mopt_status range_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    int64_t n = out[0].shape.dims[0];
    if (range_int(in[0].dtype)) {
        int64_t s = read_int_scalar(&in[0]), d = read_int_scalar(&in[2]);
        for (int64_t i = 0; i < n; i++) {
            int64_t v = (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d);
            if (in[0].dtype == MOPT_DTYPE_I64)
                ((int64_t *)out[0].data)[i] = v;
            else if (in[0].dtype == MOPT_DTYPE_I32)
                ((int32_t *)out[0].data)[i] = (int32_t)v;
            else
                ((int16_t *)out[0].data)[i] = (int16_t)v;
        }
    } else if (in[0].dtype == MOPT_DTYPE_F32) {
        float s = *(const float *)in[0].data, d = *(const float *)in[2].data;
        float *y = out[0].data;
        for (int64_t i = 0; i < n; i++)
            y[i] = s + (float)i * d;
    } else {
        double s = *(const double *)in[0].data, d = *(const double *)in[2].data;
        double *y = out[0].data;
        for (int64_t i = 0; i < n; i++)
            y[i] = s + (double)i * d;
    }
    return MOPT_OK;
}

/* ---- Constant ------------------------------------------------------------ */

/* The constant's dtype, shape and bytes (owned by the node). */
typedef struct constant_params {
    mopt_dtype dtype;
    ir_shape shape;
    void *data;
} constant_params;

static mopt_status constant_get(const op_ctx *ctx, mopt_dtype *dtype, ir_shape *shape,
                                void **data) {
    const ir_node *n = ctx->node;
    const ir_attr *found = NULL;
    for (int32_t i = 0; i < n->n_attrs; i++) {
        const ir_attr *a = &n->attrs[i];
        if (strcmp(a->name, "value") && strcmp(a->name, "value_float") &&
            strcmp(a->name, "value_floats") && strcmp(a->name, "value_int") &&
            strcmp(a->name, "value_ints") && strcmp(a->name, "sparse_value") &&
            strcmp(a->name, "value_string") && strcmp(a->name, "value_strings"))
            continue;
        if (found)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "has both '%s' and '%s'", found->name,
                           a->name);
        found = a;
    }
    if (!found) return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "has no value attribute");
    ir_attr *a = (ir_attr *)found; /* the node owns it; exposing it is allowed */
    memset(shape, 0, sizeof *shape);
    if (!strcmp(a->name, "value") && a->type == IR_ATTR_TENSOR && a->t) {
        if (!op_dtype_sized(a->t->dtype))
            return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "value type %s is not supported",
                           mopt_dtype_name(a->t->dtype));
        *dtype = a->t->dtype;
        ir_shape_set(shape, a->t->rank, a->t->dims);
        *data = a->t->data;
    } else if (!strcmp(a->name, "value_float") && a->type == IR_ATTR_FLOAT) {
        *dtype = MOPT_DTYPE_F32;
        *data = &a->f;
    } else if (!strcmp(a->name, "value_int") && a->type == IR_ATTR_INT) {
        *dtype = MOPT_DTYPE_I64;
        *data = &a->i;
    } else if (!strcmp(a->name, "value_floats") && a->type == IR_ATTR_FLOATS) {
        *dtype = MOPT_DTYPE_F32;
        shape->rank = 1;
        shape->dims[0] = (int64_t)a->n;
        *data = a->n ? a->floats : NULL;
    } else if (!strcmp(a->name, "value_ints") && a->type == IR_ATTR_INTS) {
        *dtype = MOPT_DTYPE_I64;
        shape->rank = 1;
        shape->dims[0] = (int64_t)a->n;
        *data = a->n ? a->ints : NULL;
    } else {
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "attribute '%s' is not supported", a->name);
    }
    int64_t numel = ir_shape_numel(shape);
    if (numel < 0) return op_fail(ctx, MOPT_ERR_LIMIT, "constant size overflows");
    if (numel > 0 && !*data) return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "constant has no data");
    return MOPT_OK;
}

static mopt_status constant_parse(const op_ctx *ctx, void *params) {
    constant_params *p = params;
    return constant_get(ctx, &p->dtype, &p->shape, &p->data);
}

static mopt_status constant_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                  int n_out) {
    const constant_params *p = ctx->params;
    out[0].dtype = p->dtype;
    out[0].shape = p->shape;
    if (!ctx->runtime) out[0].data = p->data;
    return MOPT_OK;
}

static mopt_status constant_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    const constant_params *p = ctx->params;
    size_t nb = op_nbytes(&out[0]);
    if (nb) memcpy(out[0].data, p->data, nb);
    return MOPT_OK;
}

/* ---- Expand -------------------------------------------------------------- */

static mopt_status expand_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    mopt_status st = op_expect_any(ctx, &in[0], 0);
    if (!st) st = op_expect_i64(ctx, &in[1], 1);
    if (st) return st;
    out[0].dtype = in[0].dtype;
    char b1[IR_SHAPE_STR_CAP];
    if (in[1].shape.rank >= 0 && in[1].shape.rank != 1)
        return op_fail(ctx, MOPT_ERR_SHAPE, "the shape input must be 1-D, not %s",
                       op_shape_str(ctx, &in[1].shape, b1));
    int64_t sh[IR_MAX_RANK], n = 0;
    int r = op_known_ints(ctx, &in[1], "shape", sh, IR_MAX_RANK, &n);
    if (r < 0) return MOPT_ERR_SHAPE;
    if (r == 0) {
        ir_shape_set_unknown(&out[0].shape);
        if (in[1].shape.rank == 1 && in[1].shape.syms[0] == 0 && in[0].shape.rank >= 0) {
            int64_t rank =
                in[1].shape.dims[0] > in[0].shape.rank ? in[1].shape.dims[0] : in[0].shape.rank;
            if ((st = rank_limit(ctx, rank))) return st;
            op_set_unknown_dims(&out[0].shape, (int32_t)rank);
        }
        return MOPT_OK;
    }
    ir_shape target;
    for (int64_t i = 0; i < n; i++)
        if (sh[i] < 0)
            return op_fail(ctx, MOPT_ERR_SHAPE, "shape[%d] is negative (%" PRId64 ")", (int)i,
                           sh[i]);
    ir_shape_set(&target, (int32_t)n, sh);
    st = op_broadcast(ctx, &in[0].shape, &target, &out[0].shape);
    if (st) return st;
    if (ir_shape_is_concrete(&out[0].shape) && ir_shape_numel(&out[0].shape) < 0)
        return op_fail(ctx, MOPT_ERR_LIMIT, "output size overflows");
    return MOPT_OK;
}

static mopt_status expand_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    int64_t strides[IR_MAX_RANK];
    if (op_numel(&out[0]) == 0) return MOPT_OK;
    op_broadcast_strides(&in[0].shape, &out[0].shape, strides);
    ref_copy_strided(out[0].data, in[0].data, op_esize(&in[0]), out[0].shape.rank,
                     out[0].shape.dims, strides);
    return MOPT_OK;
}

/* ---- table ---------------------------------------------------------------- */

/* ---- EyeLike -------------------------------------------------------------------------- */

typedef struct eye_params {
    bool has_dtype; /* else input 0's */
    int64_t dtype;
    int64_t k;
} eye_params;

static const op_attr_spec k_eye_attrs[] = {
    OP_ATTR_I64_OPT(eye_params, has_dtype, dtype, "dtype"),
    OP_ATTR_I64(eye_params, k, "k", 0),
};

static mopt_status eye_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    const eye_params *p = ctx->params;
    out[0].dtype = p->has_dtype ? (mopt_dtype)p->dtype : in[0].dtype;
    if (p->has_dtype && mopt_dtype_size(out[0].dtype) == 0)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "dtype %d is not supported", (int)p->dtype);
    out[0].shape = in[0].shape;
    if (in[0].shape.rank >= 0 && in[0].shape.rank != 2)
        return op_fail(ctx, MOPT_ERR_SHAPE, "input must be 2-D");
    return MOPT_OK;
}

static mopt_status eye_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    int64_t k = ((const eye_params *)ctx->params)->k;
    int64_t r = out[0].shape.dims[0], c = out[0].shape.dims[1];
    size_t es = mopt_dtype_size(out[0].dtype);
    memset(out[0].data, 0, (size_t)(r * c) * es);
    double one = 1.0;
    char v[8];
    ref_cast(MOPT_DTYPE_F64, &one, out[0].dtype, v, 1);
    for (int64_t i = 0; i < r; i++)
        if (i + k >= 0 && i + k < c)
            memcpy((char *)out[0].data + (size_t)(i * c + i + k) * es, v, es);
    return MOPT_OK;
}

/* Shape, Size, ConstantOfShape, Constant and EyeLike name their output type: never
 * bridged; the others through f32 (bridge.h) */
static const op_def k_shape_ops[] = {
    {"Identity", "", 1, 1, 1, 1, identity_infer, run_copy, .bridge = &ops_bridge_float},
    {"OptionalHasElement", "", 0, 1, 1, 1, has_element_infer, has_element_run},
    {"OptionalGetElement", "", 1, 1, 1, 1, get_element_infer, run_copy,
     .bridge = &ops_bridge_float},
    {"Dropout", "", 1, 3, 1, 2, dropout_infer, dropout_run, .bridge = &ops_bridge_float},
    {"Reshape", "", 2, 2, 1, 1, reshape_infer, run_copy, NULL,
     OP_PARAMS(int_attr_params, reshape_parse), .bridge = &ops_bridge_float},
    {"Flatten", "", 1, 1, 1, 1, flatten_infer, run_copy, NULL,
     OP_ATTRS(int_attr_params, k_flatten_attrs), .bridge = &ops_bridge_float},
    {"Squeeze", "", 1, 2, 1, 1, squeeze_infer, run_copy, NULL,
     OP_PARAMS(squeeze_params, squeeze_parse), .bridge = &ops_bridge_float},
    {"Unsqueeze", "", 1, 2, 1, 1, unsqueeze_infer, run_copy, NULL,
     OP_PARAMS(squeeze_params, squeeze_parse), .bridge = &ops_bridge_float},
    {"Shape", "", 1, 1, 1, 1, shape_infer, shape_run, NULL, OP_PARAMS(shape_params, shape_parse)},
    {"Size", "", 1, 1, 1, 1, size_infer, size_run},
    {"ConstantOfShape", "", 1, 1, 1, 1, cos_infer, cos_run, NULL, OP_PARAMS(cos_params, cos_parse)},
    {"Range", "", 3, 3, 1, 1, range_infer, range_run, .bridge = &ops_bridge_float},
    {"Constant", "", 0, 0, 1, 1, constant_infer, constant_run, NULL,
     OP_PARAMS(constant_params, constant_parse)},
    {"Expand", "", 2, 2, 1, 1, expand_infer, expand_run, .bridge = &ops_bridge_float},
    {"EyeLike", "", 1, 1, 1, 1, eye_infer, eye_run, NULL, OP_ATTRS(eye_params, k_eye_attrs)},
};

OP_FAMILY(shape, k_shape_ops)
