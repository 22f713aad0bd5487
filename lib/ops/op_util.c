/*
 * op_util.c — helpers shared by operator implementations: error messages
 * naming the node, numpy broadcasting over symbolic shapes, axis handling,
 * dtype checks, optional-input tests, element sizes, reading small
 * integer tensors and a run's work buffers.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "ir/ir_subgraph.h"
#include "kernels/kernels.h"
#include "kernels/ref/ref_conv.h"
#include "ops/op_common.h"
#include "ops/ops.h"

/* The geometry's room lives only in this frame (kept out of line), not in
 * every reference run's: a subgraph op nests runs. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static mopt_status
run_with_geom(const op_def *d, const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
              int n_out) {
    _Alignas(max_align_t) unsigned char geom[OP_GEOM_CAP];
    memset(geom, 0, d->geom_size);
    mopt_status st = d->geom(ctx, in, n_in, geom);
    if (st) return st;
    op_ctx with = *ctx;
    with.geom = geom;
    return d->run(&with, in, n_in, out, n_out);
}

mopt_status ops_run_reference(const op_def *d, const op_ctx *ctx, const op_tensor *in, int n_in,
                              op_tensor *out, int n_out) {
    if (!d->geom) return d->run(ctx, in, n_in, out, n_out);
    return run_with_geom(d, ctx, in, n_in, out, n_out);
}

mopt_status op_fail(const op_ctx *ctx, mopt_status status, const char *fmt, ...) {
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mopt_fail(status, "node '%s' (%s): %s", ctx->node->name, ctx->node->op_type, msg);
}

const char *op_shape_str(const op_ctx *ctx, const ir_shape *s, char buf[IR_SHAPE_STR_CAP]) {
    return ir_shape_str(s, ctx->graph, buf, IR_SHAPE_STR_CAP);
}

mopt_status op_broadcast(const op_ctx *ctx, const ir_shape *a, const ir_shape *b, ir_shape *out) {
    if (a->rank < 0 || b->rank < 0) {
        ir_shape_set_unknown(out);
        return MOPT_OK;
    }
    int32_t r = a->rank > b->rank ? a->rank : b->rank;
    ir_shape res;
    memset(&res, 0, sizeof res);
    res.rank = r;
    for (int32_t i = 0; i < r; i++) {
        int32_t ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = 1, db = 1;
        int32_t sa = 0, sb = 0;
        if (ia >= 0) da = a->dims[ia], sa = a->syms[ia];
        if (ib >= 0) db = b->dims[ib], sb = b->syms[ib];
        if (sa == 0 && sb == 0) {
            if (da == db || db == 1)
                res.dims[i] = da;
            else if (da == 1)
                res.dims[i] = db;
            else {
                char bufa[IR_SHAPE_STR_CAP], bufb[IR_SHAPE_STR_CAP];
                return op_fail(
                    ctx, MOPT_ERR_SHAPE,
                    "shapes %s and %s cannot be broadcast (axis %d: %" PRId64 " vs %" PRId64 ")",
                    op_shape_str(ctx, a, bufa), op_shape_str(ctx, b, bufb), (int)i, da, db);
            }
        } else if (sa != 0 && sb != 0) {
            /* equal symbols stay; an unknown dim against a symbol is either
             * 1 or that symbol, so the result is the symbol */
            if (sa == sb)
                res.syms[i] = sa;
            else if (sa > 0 && sb < 0)
                res.syms[i] = sa;
            else if (sa < 0 && sb > 0)
                res.syms[i] = sb;
            else
                res.syms[i] = -1;
        } else if (sa != 0) { /* a symbolic, b fixed */
            if (db == 1)
                res.syms[i] = sa;
            else
                res.dims[i] = db;
        } else {
            if (da == 1)
                res.syms[i] = sb;
            else
                res.dims[i] = da;
        }
    }
    *out = res;
    return MOPT_OK;
}

mopt_status op_axis(const op_ctx *ctx, int64_t axis, int32_t rank, const char *what, int32_t *out) {
    if (axis < -(int64_t)rank || axis >= rank)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "%s %" PRId64 " is out of range for rank %d",
                       what, axis, (int)rank);
    *out = (int32_t)(axis < 0 ? axis + rank : axis);
    return MOPT_OK;
}

mopt_status op_attr_axis(const op_ctx *ctx, int64_t def, int32_t rank, int32_t *out) {
    return op_axis(ctx, ir_node_attr_int(ctx->node, "axis", def), rank, "axis", out);
}

mopt_status op_expect_dtype(const op_ctx *ctx, const op_tensor *t, int index,
                            const mopt_dtype *allowed, int n_allowed) {
    if (t->dtype == MOPT_DTYPE_UNDEFINED) return MOPT_OK;
    for (int i = 0; i < n_allowed; i++)
        if (t->dtype == allowed[i]) return MOPT_OK;
    if (t->dtype == MOPT_DTYPE_STRING) /* no op computes on strings yet */
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "input %d is a string tensor; not supported",
                       index);
    char list[256];
    size_t len = 0;
    list[0] = '\0';
    for (int i = 0; i < n_allowed && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "",
                                mopt_dtype_name(allowed[i]));
    return op_fail(ctx, MOPT_ERR_TYPE, "input %d has type %s; expected one of: %s", index,
                   mopt_dtype_name(t->dtype), list);
}

mopt_status op_same_dtype(const op_ctx *ctx, const op_tensor *in, int i, int j) {
    if (in[i].dtype == MOPT_DTYPE_UNDEFINED || in[j].dtype == MOPT_DTYPE_UNDEFINED) return MOPT_OK;
    if (in[i].dtype != in[j].dtype)
        return op_fail(ctx, MOPT_ERR_TYPE, "input %d has type %s but input %d has type %s", i,
                       mopt_dtype_name(in[i].dtype), j, mopt_dtype_name(in[j].dtype));
    return MOPT_OK;
}

mopt_status op_expect_f32(const op_ctx *ctx, const op_tensor *t, int index) {
    static const mopt_dtype k_types[] = {MOPT_DTYPE_F32};
    return op_expect_dtype(ctx, t, index, k_types, 1);
}

mopt_status op_expect_float(const op_ctx *ctx, const op_tensor *t, int index) {
    static const mopt_dtype k_types[] = {MOPT_DTYPE_F32, MOPT_DTYPE_F64};
    return op_expect_dtype(ctx, t, index, k_types, 2);
}

mopt_status op_expect_index(const op_ctx *ctx, const op_tensor *t, int index) {
    static const mopt_dtype k_types[] = {MOPT_DTYPE_I64, MOPT_DTYPE_I32};
    return op_expect_dtype(ctx, t, index, k_types, 2);
}

mopt_status op_expect_i64(const op_ctx *ctx, const op_tensor *t, int index) {
    static const mopt_dtype k_types[] = {MOPT_DTYPE_I64};
    return op_expect_dtype(ctx, t, index, k_types, 1);
}

bool op_dtype_sized(mopt_dtype t) { return t != MOPT_DTYPE_STRING && mopt_dtype_size(t) != 0; }

mopt_status op_expect_any(const op_ctx *ctx, const op_tensor *t, int index) {
    if (t->dtype == MOPT_DTYPE_UNDEFINED || op_dtype_sized(t->dtype)) return MOPT_OK;
    return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "input %d has type %s, which is not supported", index,
                   mopt_dtype_name(t->dtype));
}

bool op_has_input(const op_tensor *in, int n_in, int k) {
    return k < n_in && in[k].dtype != MOPT_DTYPE_UNDEFINED;
}

bool op_wired(const op_ctx *ctx, int k) {
    return k < ctx->node->n_inputs && ctx->node->inputs[k] >= 0;
}

mopt_status op_require_inputs(const op_ctx *ctx, const op_tensor *in, int n) {
    if (!ctx->runtime) return MOPT_OK;
    for (int k = 0; k < n; k++)
        if (in[k].dtype == MOPT_DTYPE_UNDEFINED || !in[k].data)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "input %d is missing", k);
    return MOPT_OK;
}

void op_set_outputs(op_tensor *out, int n_out, mopt_dtype dtype, const ir_shape *shape) {
    for (int k = 0; k < n_out; k++) {
        out[k].dtype = dtype;
        out[k].shape = *shape;
    }
}

int64_t op_numel(const op_tensor *t) { return ir_shape_numel(&t->shape); }

size_t op_esize(const op_tensor *t) { return mopt_dtype_size(t->dtype); }

size_t op_nbytes(const op_tensor *t) {
    int64_t n = op_numel(t);
    return n > 0 ? (size_t)n * op_esize(t) : 0;
}

void op_axis_split(const ir_shape *s, int32_t axis, int64_t *outer, int64_t *len, int64_t *inner) {
    *outer = *inner = 1;
    if (len) *len = s->rank ? s->dims[axis] : 1;
    for (int32_t a = 0; a < s->rank; a++)
        if (a < axis)
            *outer *= s->dims[a];
        else if (a > axis)
            *inner *= s->dims[a];
}

void op_set_unknown_dims(ir_shape *s, int32_t rank) {
    memset(s, 0, sizeof *s);
    s->rank = rank;
    for (int32_t i = 0; i < rank; i++)
        s->syms[i] = -1;
}

int op_known_ints(const op_ctx *ctx, const op_tensor *t, const char *what, int64_t *buf,
                  int64_t cap, int64_t *n) {
    if (t->shape.rank >= 0 && ir_shape_is_concrete(&t->shape) && ir_shape_numel(&t->shape) == 0) {
        *n = 0;
        return 1;
    }
    if (!t->data) {
        if (ctx->runtime) {
            op_fail(ctx, MOPT_ERR_INTERNAL, "%s has no data", what);
            return -1;
        }
        return 0;
    }
    int64_t k = op_read_ints(ctx, t, what, buf, cap);
    if (k < 0) return -1;
    *n = k;
    return 1;
}

int64_t op_read_ints(const op_ctx *ctx, const op_tensor *t, const char *what, int64_t *out,
                     int64_t cap) {
    if (!t->data) {
        op_fail(ctx, MOPT_ERR_INTERNAL, "%s has no data", what);
        return -1;
    }
    int64_t n = op_numel(t);
    if (n < 0 || n > cap) {
        op_fail(ctx, MOPT_ERR_SHAPE, "%s has %" PRId64 " elements; at most %" PRId64 " allowed",
                what, n, cap);
        return -1;
    }
    if (t->dtype == MOPT_DTYPE_I64) {
        memcpy(out, t->data, (size_t)n * sizeof(int64_t));
    } else if (t->dtype == MOPT_DTYPE_I32) {
        const int32_t *p = t->data;
        for (int64_t i = 0; i < n; i++)
            out[i] = p[i];
    } else {
        op_fail(ctx, MOPT_ERR_TYPE, "%s must be int32 or int64, not %s", what,
                mopt_dtype_name(t->dtype));
        return -1;
    }
    return n;
}

mopt_status op_window_ints(const op_ctx *ctx, const char *name, int32_t want, int64_t lo,
                           int64_t def, bool required, int64_t *out, bool *present) {
    const int64_t *v = NULL;
    int64_t n = ir_node_attr_ints(ctx->node, name, &v);
    if (present) *present = n >= 0;
    if (n < 0) {
        if (required) return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "attribute %s is required", name);
        for (int32_t i = 0; i < want; i++)
            out[i] = def;
        return MOPT_OK;
    }
    if (n != want)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "attribute %s has %" PRId64 " values; expected %d", name, n, (int)want);
    for (int32_t i = 0; i < want; i++) {
        if (v[i] < lo || v[i] >= OP_WINDOW_ATTR_LIMIT)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                           "attribute %s[%d] = %" PRId64 " is out of range", name, (int)i, v[i]);
        out[i] = v[i];
    }
    return MOPT_OK;
}

_Static_assert(REF_PAD_NOTSET == 0 && REF_PAD_SAME_UPPER == 1 && REF_PAD_SAME_LOWER == 2 &&
                   REF_PAD_VALID == 3,
               "op_window_auto_pad documents these values");

mopt_status op_window_auto_pad(const op_ctx *ctx, int *out) {
    const char *s = ir_node_attr_string(ctx->node, "auto_pad", "NOTSET");
    if (strcmp(s, "NOTSET") == 0)
        *out = REF_PAD_NOTSET;
    else if (strcmp(s, "SAME_UPPER") == 0)
        *out = REF_PAD_SAME_UPPER;
    else if (strcmp(s, "SAME_LOWER") == 0)
        *out = REF_PAD_SAME_LOWER;
    else if (strcmp(s, "VALID") == 0)
        *out = REF_PAD_VALID;
    else
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "unknown auto_pad '%s'", s);
    return MOPT_OK;
}

int op_read_scalar(const op_ctx *ctx, const op_tensor *t, const char *what, double *out) {
    if (!t->data) {
        op_fail(ctx, MOPT_ERR_INTERNAL, "%s has no data", what);
        return -1;
    }
    if (op_numel(t) != 1) {
        op_fail(ctx, MOPT_ERR_SHAPE, "%s must have exactly one element", what);
        return -1;
    }
    switch (t->dtype) {
    case MOPT_DTYPE_F32: *out = *(const float *)t->data; return 0;
    case MOPT_DTYPE_F64: *out = *(const double *)t->data; return 0;
    case MOPT_DTYPE_I64: *out = (double)*(const int64_t *)t->data; return 0;
    case MOPT_DTYPE_I32: *out = *(const int32_t *)t->data; return 0;
    case MOPT_DTYPE_I8: *out = *(const int8_t *)t->data; return 0;
    case MOPT_DTYPE_U8: *out = *(const uint8_t *)t->data; return 0;
    case MOPT_DTYPE_BOOL: *out = *(const uint8_t *)t->data; return 0;
    default: break;
    }
    op_fail(ctx, MOPT_ERR_TYPE, "%s has unsupported type %s", what, mopt_dtype_name(t->dtype));
    return -1;
}

void op_strides(const ir_shape *s, int64_t *strides) {
    int64_t st = 1;
    for (int32_t i = s->rank - 1; i >= 0; i--) {
        strides[i] = st;
        st *= s->dims[i];
    }
}

void op_broadcast_strides(const ir_shape *in, const ir_shape *out, int64_t *strides) {
    int64_t own[IR_MAX_RANK];
    op_strides(in, own);
    int32_t off = out->rank - in->rank;
    for (int32_t i = 0; i < out->rank; i++) {
        int32_t j = i - off;
        strides[i] = (j < 0 || in->dims[j] == 1) ? 0 : own[j];
    }
}

int32_t op_mask_bad_axis(const ir_shape *mask, const ir_shape *scores) {
    if (mask->rank < 0) return -1;
    if (mask->rank > 4) return -2;
    for (int32_t i = 0; i < mask->rank; i++) {
        int32_t a = scores->rank - mask->rank + i;
        if (mask->syms[i] == 0 && mask->dims[i] != 1 && scores->syms[a] == 0 &&
            mask->dims[i] != scores->dims[a])
            return i;
    }
    return -1;
}

void op_attn_mask_bind(const op_tensor *mask, const int64_t scores[4], kn_attn_mask *m) {
    ir_shape target;
    ir_shape_set(&target, 4, scores);
    int64_t st[IR_MAX_RANK];
    op_broadcast_strides(&mask->shape, &target, st);
    m->sb = st[0], m->sh = st[1], m->sq = st[2], m->sk = st[3];
    if (mask->dtype == MOPT_DTYPE_BOOL)
        m->keep = mask->data;
    else
        m->add = mask->data;
}

mopt_status op_infer_f32_like_input0(const op_ctx *ctx, const op_tensor *in, int n_in,
                                     op_tensor *out, int n_out) {
    (void)n_in, (void)n_out;
    mopt_status st = op_expect_f32(ctx, &in[0], 0);
    if (st) return st;
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

mopt_status op_infer_all_f32_like_input0(const op_ctx *ctx, const op_tensor *in, int n_in,
                                         op_tensor *out, int n_out) {
    (void)n_out;
    mopt_status st;
    for (int k = 0; k < n_in; k++)
        if ((st = op_expect_f32(ctx, &in[k], k))) return st;
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

mopt_status op_read_one_int(const op_ctx *ctx, const op_tensor *t, const char *what, int64_t *v) {
    int64_t n = op_read_ints(ctx, t, what, v, 1);
    if (n != 1)
        return n < 0 ? MOPT_ERR_INVALID_ARGUMENT
                     : op_fail(ctx, MOPT_ERR_SHAPE, "%s must hold one value", what);
    return MOPT_OK;
}

bool op_attr_int_opt(const op_ctx *ctx, const char *name, int64_t *v) {
    const ir_attr *a = ir_node_attr(ctx->node, name);
    *v = a ? a->i : 0;
    return a != NULL;
}

mopt_status op_infer_moved(const op_ctx *ctx, const op_tensor *in, int n_index, op_tensor *out) {
    mopt_status st = op_expect_any(ctx, &in[0], 0);
    for (int k = 1; k <= n_index && !st; k++)
        st = op_expect_index(ctx, &in[k], k);
    if (!st) out[0].dtype = in[0].dtype;
    return st;
}

mopt_status op_attr_bool(const op_ctx *ctx, const char *name, int64_t def, bool *out) {
    int64_t v = ir_node_attr_int(ctx->node, name, def);
    if (v != 0 && v != 1)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "%s must be 0 or 1, not %" PRId64, name, v);
    *out = v == 1;
    return MOPT_OK;
}

bool op_name_lookup(const op_name_value *t, int n, const char *s, int *value) {
    for (int i = 0; i < n; i++)
        if (strcmp(t[i].name, s) == 0) {
            *value = t[i].value;
            return true;
        }
    return false;
}

bool op_str_eq_ci(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
        char y = *b >= 'A' && *b <= 'Z' ? (char)(*b + 32) : *b;
        if (x != y) return false;
    }
    return *a == *b;
}

void *op_work_get(const op_ctx *ctx, int k, size_t bytes) {
    if (!bytes) bytes = 1;
    op_work *w = ctx->work;
    if (!w) return mopt_aligned_alloc(bytes);
    if (w->cap[k] < bytes) {
        void *p = mopt_aligned_alloc(bytes);
        if (!p) return NULL;
        mopt_aligned_free(w->buf[k]);
        w->buf[k] = p;
        w->cap[k] = bytes;
    }
    return w->buf[k];
}

void op_work_put(const op_ctx *ctx, void *p) {
    if (!ctx->work) mopt_aligned_free(p);
}

void op_work_free(op_work *w) {
    for (int k = 0; k < OP_WORK_BUFS; k++)
        mopt_aligned_free(w->buf[k]);
    memset(w, 0, sizeof *w);
}

bool op_same_dims(const ir_shape *a, const ir_shape *b) {
    if (a->rank != b->rank) return false;
    for (int32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

int op_inplace_residual3(const op_ctx *ctx, const op_tensor *in, int n_in) {
    (void)ctx;
    return op_has_input(in, n_in, 3) ? 3 : -1;
}

bool op_residual_fits(const op_tensor *r, const ir_shape *y) {
    const ir_shape *s = &r->shape;
    if (r->dtype != MOPT_DTYPE_F32 || s->rank != y->rank) return false;
    for (int32_t i = 0; i < s->rank; i++)
        if (s->syms[i] != y->syms[i] || (s->syms[i] == 0 && s->dims[i] != y->dims[i])) return false;
    return true;
}

mopt_status op_formal_inputs(const op_ctx *ctx, int want, const char *names, int32_t *n_caps) {
    const ir_node *n = ctx->node;
    *n_caps = ir_node_captures(n);
    if (n->n_inputs - *n_caps != want)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "takes %d input%s (%s), got %d", want,
                       want == 1 ? "" : "s", names, (int)(n->n_inputs - *n_caps));
    return MOPT_OK;
}

mopt_status op_spatial_rank(const op_ctx *ctx, const ir_shape *x, const char *what,
                            const ir_shape *w, const char *layout, int32_t *rank) {
    *rank = x->rank >= 0 ? x->rank : w->rank;
    if (*rank < 0) return MOPT_OK;
    char sx[IR_SHAPE_STR_CAP], sw[IR_SHAPE_STR_CAP];
    if (*rank < 3 || (x->rank >= 0 && w->rank >= 0 && x->rank != w->rank))
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "X %s and %s %s must have the same rank, at least 3 (N, C, spatial...%s)",
                       op_shape_str(ctx, x, sx), what, op_shape_str(ctx, w, sw), layout);
    return MOPT_OK;
}

const void *op_row_of(const void *rows, int n, size_t stride, size_t at, const char *op_type) {
    for (int i = 0; i < n; i++) {
        const char *row = (const char *)rows + (size_t)i * stride;
        const char *name;
        memcpy(&name, row + at, sizeof name);
        if (name[0] == op_type[0] && strcmp(name, op_type) == 0) return row;
    }
    return NULL;
}
