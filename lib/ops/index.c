/*
 * index.c — the "index" operator family: ops between masks, indices and
 * dense tensors: NonZero (the indices of non-zero elements), Compress (the
 * slices a boolean mask selects) and OneHot (indices to one-hot rows).
 * Data-moving ops work on any dtype by element size.
 */
#include <string.h>

#include "kernels/ref/ref_logic.h"
#include "ops/bridge.h"
#include "ops/op_common.h"
#include "ops/ops.h"

/* ---- OneHot ------------------------------------------------------------------------------ */

static const mopt_dtype k_num[] = {MOPT_DTYPE_F32, MOPT_DTYPE_F64, MOPT_DTYPE_I8,  MOPT_DTYPE_U8,
                                   MOPT_DTYPE_I16, MOPT_DTYPE_U16, MOPT_DTYPE_I32, MOPT_DTYPE_U32,
                                   MOPT_DTYPE_I64, MOPT_DTYPE_U64, MOPT_DTYPE_F16, MOPT_DTYPE_BF16};

/* OneHot's axis (default -1), normalized against the output's rank when used */
typedef struct onehot_params {
    int64_t axis;
} onehot_params;

static const op_attr_spec k_onehot_attrs[] = {OP_ATTR_I64(onehot_params, axis, "axis", -1)};

static mopt_status onehot_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    mopt_status st;
    if ((st = op_expect_dtype(ctx, &in[0], 0, k_num, OP_COUNT(k_num))) ||
        (st = op_expect_dtype(ctx, &in[1], 1, k_num, OP_COUNT(k_num))))
        return st;
    out[0].dtype = in[2].dtype;
    const ir_shape *s = &in[0].shape;
    if (s->rank < 0 || s->rank + 1 > IR_MAX_RANK) {
        ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    int32_t ax;
    if ((st = op_axis(ctx, ((const onehot_params *)ctx->params)->axis, s->rank + 1, "axis", &ax)))
        return st;
    double depth = -1;
    if (in[1].data && op_read_scalar(ctx, &in[1], "depth", &depth)) return MOPT_ERR_SHAPE;
    if (in[1].data && !(depth >= 1))
        return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT, "depth must be >= 1");
    if (in[1].data && depth >= 0x1p62)
        return op_fail(ctx, MOPT_ERR_LIMIT, "depth %.0f is too large", depth);
    out[0].shape.rank = s->rank + 1;
    for (int32_t a = 0, b = 0; a <= s->rank; a++) {
        if (a == ax) {
            out[0].shape.dims[a] = in[1].data ? (int64_t)depth : -1;
            out[0].shape.syms[a] = in[1].data ? 0 : -1;
        } else {
            out[0].shape.dims[a] = s->dims[b];
            out[0].shape.syms[a] = s->syms[b];
            b++;
        }
    }
    return MOPT_OK;
}

static mopt_status onehot_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    int32_t ax;
    mopt_status st;
    if ((st = op_axis(ctx, ((const onehot_params *)ctx->params)->axis, out[0].shape.rank, "axis",
                      &ax)))
        return st;
    if (op_numel(&in[2]) != 2)
        return op_fail(ctx, MOPT_ERR_SHAPE, "values must hold [off_value, on_value]");
    int64_t depth = out[0].shape.dims[ax], n = op_numel(&in[0]);
    int64_t o, l, inner;
    op_axis_split(&out[0].shape, ax, &o, &l, &inner);
    size_t es = mopt_dtype_size(in[2].dtype);
    const char *vals = in[2].data;
    char *y = out[0].data;
    double *idx = op_work_get(ctx, 0, (size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!idx) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    ref_cast(in[0].dtype, in[0].data, MOPT_DTYPE_F64, idx, n);
    for (int64_t a = 0; a < o; a++)
        for (int64_t d = 0; d < depth; d++)
            for (int64_t b = 0; b < inner; b++) {
                double v = idx[a * inner + b];
                int64_t iv = (int64_t)v; /* truncates, like the reference's astype */
                if (iv < 0) iv += depth;
                memcpy(y + (size_t)((a * depth + d) * inner + b) * es, vals + (iv == d ? es : 0),
                       es);
            }
    op_work_put(ctx, idx);
    return MOPT_OK;
}

/* ---- NonZero ----------------------------------------------------------------------------------
 */

static int64_t count_nonzero(const op_tensor *t) {
    size_t es = mopt_dtype_size(t->dtype);
    int64_t n = op_numel(t), c = 0;
    static const char zero[8] = {0};
    for (int64_t i = 0; i < n; i++) {
        const char *p = (const char *)t->data + (size_t)i * es;
        if (memcmp(p, zero, es) == 0) continue;
        /* -0.0 is zero too */
        if (t->dtype == MOPT_DTYPE_F32 && *(const float *)p == 0) continue;
        if (t->dtype == MOPT_DTYPE_F64 && *(const double *)p == 0) continue;
        if ((t->dtype == MOPT_DTYPE_F16 || t->dtype == MOPT_DTYPE_BF16) &&
            (*(const uint16_t *)p & 0x7fff) == 0)
            continue;
        c++;
    }
    return c;
}

static mopt_status nonzero_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    if (in[0].dtype == MOPT_DTYPE_STRING)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "string input not supported");
    out[0].dtype = MOPT_DTYPE_I64;
    out[0].shape.rank = 2;
    out[0].shape.dims[0] = in[0].shape.rank >= 0 ? (in[0].shape.rank ? in[0].shape.rank : 1) : -1;
    out[0].shape.syms[0] = in[0].shape.rank >= 0 ? 0 : -1;
    out[0].shape.dims[1] = -1;
    out[0].shape.syms[1] = -1;
    if (in[0].data && in[0].shape.rank >= 0 && ir_shape_is_concrete(&in[0].shape)) {
        out[0].shape.dims[1] = count_nonzero(&in[0]);
        out[0].shape.syms[1] = 0;
    }
    return MOPT_OK;
}

static mopt_status nonzero_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    const ir_shape *s = &in[0].shape;
    int32_t r = s->rank ? s->rank : 1;
    int64_t nnz = out[0].shape.dims[1], n = op_numel(&in[0]), st[IR_MAX_RANK], c = 0;
    op_strides(s, st);
    size_t es = mopt_dtype_size(in[0].dtype);
    int64_t *y = out[0].data;
    for (int64_t i = 0; i < n && c < nnz; i++) {
        op_tensor one = in[0];
        one.data = (char *)in[0].data + (size_t)i * es;
        ir_shape_set_scalar(&one.shape);
        if (!count_nonzero(&one)) continue;
        int64_t rem = i;
        for (int32_t a = 0; a < r; a++) {
            int64_t v = s->rank ? rem / st[a] : 0;
            if (s->rank) rem %= st[a];
            y[a * nnz + c] = v;
        }
        c++;
    }
    return MOPT_OK;
}

/* ---- Compress ------------------------------------------------------------------------------- */

static int64_t compress_count(const op_tensor *cond, int64_t limit) {
    const uint8_t *c = cond->data;
    int64_t n = op_numel(cond), k = 0;
    for (int64_t i = 0; i < n && i < limit; i++)
        k += c[i] != 0;
    return k;
}

/* Compress's axis: absent (flattened) or given */
typedef struct compress_params {
    bool has_axis;
    int64_t axis;
} compress_params;

static const op_attr_spec k_compress_attrs[] = {
    OP_ATTR_I64_OPT(compress_params, has_axis, axis, "axis")};

static mopt_status compress_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                  int n_out) {
    static const mopt_dtype k_bool[] = {MOPT_DTYPE_BOOL};
    mopt_status st = op_expect_dtype(ctx, &in[1], 1, k_bool, 1);
    if (st) return st;
    out[0].dtype = in[0].dtype;
    const compress_params *p = ctx->params;
    const ir_shape *s = &in[0].shape;
    if (s->rank < 0) {
        ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    int32_t ax = -1;
    if (p->has_axis && (st = op_axis(ctx, p->axis, s->rank, "axis", &ax))) return st;
    if (ax < 0) {
        out[0].shape.rank = 1;
        out[0].shape.dims[0] = -1;
        out[0].shape.syms[0] = -1;
    } else {
        out[0].shape = *s;
        out[0].shape.dims[ax] = -1;
        out[0].shape.syms[ax] = -1;
    }
    if (in[1].data && ir_shape_is_concrete(s)) {
        int64_t lim = ax < 0 ? ir_shape_numel(s) : s->dims[ax];
        out[0].shape.dims[ax < 0 ? 0 : ax] = compress_count(&in[1], lim);
        out[0].shape.syms[ax < 0 ? 0 : ax] = 0;
    }
    return MOPT_OK;
}

static mopt_status compress_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    const compress_params *p = ctx->params;
    const ir_shape *s = &in[0].shape;
    size_t es = mopt_dtype_size(in[0].dtype);
    const uint8_t *c = in[1].data;
    int64_t nc = op_numel(&in[1]);
    const char *x = in[0].data;
    char *y = out[0].data;
    if (!p->has_axis) {
        for (int64_t i = 0, n = op_numel(&in[0]); i < n && i < nc; i++)
            if (c[i]) memcpy(y, x + (size_t)i * es, es), y += es;
        return MOPT_OK;
    }
    int32_t ax;
    mopt_status st = op_axis(ctx, p->axis, s->rank, "axis", &ax);
    if (st) return st;
    int64_t o, l, inner;
    op_axis_split(s, ax, &o, &l, &inner);
    for (int64_t a = 0; a < o; a++)
        for (int64_t j = 0; j < l && j < nc; j++)
            if (c[j]) {
                memcpy(y, x + (size_t)((a * l + j) * inner) * es, (size_t)inner * es);
                y += (size_t)inner * es;
            }
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"OneHot", "", 3, 3, 1, 1, onehot_infer, onehot_run, NULL,
     OP_ATTRS(onehot_params, k_onehot_attrs), .bridge = &ops_bridge_float},
    {"NonZero", "", 1, 1, 1, 1, nonzero_infer, nonzero_run, .bridge = &ops_bridge_float},
    {"Compress", "", 2, 2, 1, 1, compress_infer, compress_run, NULL,
     OP_ATTRS(compress_params, k_compress_attrs), .bridge = &ops_bridge_float},
};

OP_FAMILY(index, k_ops)
