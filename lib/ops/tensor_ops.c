/*
 * tensor_ops.c — assorted ONNX operators: CumSum, CumProd, TopK, Hardmax,
 * OneHot, SpaceToDepth, DepthToSpace, EyeLike, Shrink, Swish, GatherND,
 * NonZero, Compress and ReverseSequence. Data-moving ops work on any dtype
 * by element size; arithmetic ones on f32 (f16/bf16/f64 through the dtype
 * bridge) and the integer types the kernels list. Math in
 * kernels/ref/tensor_ops.c.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/ref/ref_logic.h"
#include "kernels/ref/ref_tensor_ops.h"
#include "ops/ops.h"

static mopt_status read_one_int(const op_ctx *ctx, const op_tensor *t, const char *what,
                                int64_t *v) {
    int64_t n = op_read_ints(ctx, t, what, v, 1);
    if (n != 1)
        return n < 0 ? MOPT_ERR_INVALID_ARGUMENT
                     : op_fail(ctx, MOPT_ERR_SHAPE, "%s must hold one value", what);
    return MOPT_OK;
}

/* ---- CumSum / CumProd -------------------------------------------------------- */

static const mopt_dtype k_cum[] = {MOPT_DTYPE_F32, MOPT_DTYPE_F64, MOPT_DTYPE_I32,
                                   MOPT_DTYPE_I64, MOPT_DTYPE_U32, MOPT_DTYPE_U64};

static mopt_status cum_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    mopt_status st;
    if ((st = op_expect_dtype(ctx, &in[0], 0, k_cum, OP_COUNT(k_cum))) ||
        (st = op_expect_index(ctx, &in[1], 1)))
        return st;
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

static mopt_status cum_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    int64_t axis;
    int32_t ax;
    mopt_status st;
    if ((st = read_one_int(ctx, &in[1], "axis", &axis)) ||
        (st = op_axis(ctx, axis, in[0].shape.rank, "axis", &ax)))
        return st;
    int64_t o, l, i;
    op_axis_split(&in[0].shape, ax, &o, &l, &i);
    bool prod = strcmp(ctx->node->op_type, "CumProd") == 0;
    if (ref_cumulative(in[0].dtype, prod, ir_node_attr_int(ctx->node, "exclusive", 0) != 0,
                       ir_node_attr_int(ctx->node, "reverse", 0) != 0, o, l, i, in[0].data,
                       out[0].data))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "not implemented for %s",
                       mopt_dtype_name(in[0].dtype));
    return MOPT_OK;
}

/* ---- TopK --------------------------------------------------------------------- */

static const mopt_dtype k_topk[] = {MOPT_DTYPE_F32, MOPT_DTYPE_F64, MOPT_DTYPE_I8,  MOPT_DTYPE_U8,
                                    MOPT_DTYPE_I16, MOPT_DTYPE_U16, MOPT_DTYPE_I32, MOPT_DTYPE_U32,
                                    MOPT_DTYPE_I64, MOPT_DTYPE_U64};

static mopt_status topk_k(const op_ctx *ctx, const op_tensor *in, int n_in, int64_t *k) {
    if (ctx->opset < 10) {
        *k = ir_node_attr_int(ctx->node, "k", -1);
        return MOPT_OK;
    }
    /* in[1] exists only when n_in > 1 (past n_in the array is not filled),
     * and at run time K must be there */
    if (n_in < 2 || (ctx->runtime && !in[1].data))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "input 'K' is required (opset %d)",
                       (int)ctx->opset);
    if (!in[1].data) {
        *k = -1;
        return MOPT_OK;
    }
    return read_one_int(ctx, &in[1], "K", k);
}

static mopt_status topk_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    mopt_status st;
    if ((st = op_expect_dtype(ctx, &in[0], 0, k_topk, OP_COUNT(k_topk)))) return st;
    if (n_in > 1 && (st = op_expect_i64(ctx, &in[1], 1))) return st;
    out[0].dtype = in[0].dtype;
    if (n_out > 1) out[1].dtype = MOPT_DTYPE_I64;
    out[0].shape = in[0].shape;
    if (in[0].shape.rank >= 0) {
        int32_t ax;
        if ((st = op_attr_axis(ctx, -1, in[0].shape.rank, &ax))) return st;
        int64_t k;
        if ((st = topk_k(ctx, in, n_in, &k))) return st;
        if (k >= 0 && in[0].shape.syms[ax] == 0 && k > in[0].shape.dims[ax])
            return op_fail(ctx, MOPT_ERR_SHAPE, "K = %" PRId64 " exceeds the axis size %" PRId64, k,
                           in[0].shape.dims[ax]);
        out[0].shape.dims[ax] = k;
        out[0].shape.syms[ax] = k >= 0 ? 0 : -1;
    }
    if (n_out > 1) out[1].shape = out[0].shape;
    return MOPT_OK;
}

static mopt_status topk_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    int32_t ax;
    mopt_status st;
    if ((st = op_attr_axis(ctx, -1, in[0].shape.rank, &ax))) return st;
    int64_t o, l, i, k = out[0].shape.dims[ax];
    op_axis_split(&in[0].shape, ax, &o, &l, &i);
    int64_t *scratch = mopt_malloc((size_t)(l + 1) * sizeof(int64_t));
    int64_t *idx =
        n_out > 1 ? out[1].data : mopt_malloc((size_t)(op_numel(&out[0]) + 1) * sizeof(int64_t));
    int rc = -2;
    if (scratch && idx)
        rc = ref_topk(in[0].dtype, ir_node_attr_int(ctx->node, "largest", 1) != 0, o, l, i, k,
                      in[0].data, out[0].data, idx, scratch);
    mopt_free(scratch);
    if (n_out <= 1) mopt_free(idx);
    if (rc == -2) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    if (rc) return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "not implemented for this dtype");
    return MOPT_OK;
}

/* ---- Hardmax ---------------------------------------------------------------------- */

static mopt_status same_f32_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                  int n_out) {
    mopt_status st = op_expect_f32(ctx, &in[0], 0);
    if (st) return st;
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

static mopt_status hardmax_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    int64_t axis = ir_node_attr_int(ctx->node, "axis", ctx->opset >= 13 ? -1 : 1);
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

/* ---- Shrink, Swish -------------------------------------------------------------------- */

static mopt_status shrink_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    float lambd = ir_node_attr_float(ctx->node, "lambd", 0.5f);
    float bias = ir_node_attr_float(ctx->node, "bias", 0.0f);
    const float *x = in[0].data;
    float *y = out[0].data;
    for (int64_t k = 0, n = op_numel(&in[0]); k < n; k++)
        y[k] = x[k] < -lambd ? x[k] + bias : x[k] > lambd ? x[k] - bias : 0.0f;
    return MOPT_OK;
}

static mopt_status swish_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    double alpha = ir_node_attr_float(ctx->node, "alpha", 1.0f);
    const float *x = in[0].data;
    float *y = out[0].data;
    for (int64_t k = 0, n = op_numel(&in[0]); k < n; k++)
        y[k] = (float)(x[k] / (1.0 + exp(-alpha * x[k])));
    return MOPT_OK;
}

/* ---- OneHot ------------------------------------------------------------------------------ */

static const mopt_dtype k_num[] = {MOPT_DTYPE_F32, MOPT_DTYPE_F64, MOPT_DTYPE_I8,  MOPT_DTYPE_U8,
                                   MOPT_DTYPE_I16, MOPT_DTYPE_U16, MOPT_DTYPE_I32, MOPT_DTYPE_U32,
                                   MOPT_DTYPE_I64, MOPT_DTYPE_U64, MOPT_DTYPE_F16, MOPT_DTYPE_BF16};

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
    if ((st = op_attr_axis(ctx, -1, s->rank + 1, &ax))) return st;
    double depth = -1;
    if (in[1].data && op_read_scalar(ctx, &in[1], "depth", &depth)) return MOPT_ERR_SHAPE;
    if (in[1].data && !(depth >= 1))
        return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT, "depth must be >= 1");
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
    if ((st = op_attr_axis(ctx, -1, out[0].shape.rank, &ax))) return st;
    if (op_numel(&in[2]) != 2)
        return op_fail(ctx, MOPT_ERR_SHAPE, "values must hold [off_value, on_value]");
    int64_t depth = out[0].shape.dims[ax], n = op_numel(&in[0]);
    int64_t o, l, inner;
    op_axis_split(&out[0].shape, ax, &o, &l, &inner);
    size_t es = mopt_dtype_size(in[2].dtype);
    const char *vals = in[2].data;
    char *y = out[0].data;
    double *idx = mopt_malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
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
    mopt_free(idx);
    return MOPT_OK;
}

/* ---- SpaceToDepth / DepthToSpace ------------------------------------------------------ */

static mopt_status ds_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    bool to_space = strcmp(ctx->node->op_type, "DepthToSpace") == 0;
    int64_t b = ir_node_attr_int(ctx->node, "blocksize", 0);
    if (b <= 0) return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "blocksize must be > 0");
    const char *mode = ir_node_attr_string(ctx->node, "mode", "DCR");
    if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "mode must be DCR or CRD");
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    const ir_shape *s = &in[0].shape;
    if (s->rank < 0) return MOPT_OK;
    if (s->rank != 4) return op_fail(ctx, MOPT_ERR_SHAPE, "input must be 4-D [N, C, H, W]");
    ir_shape *o = &out[0].shape;
    if (to_space) {
        if (s->syms[1] == 0 && s->dims[1] % (b * b))
            return op_fail(ctx, MOPT_ERR_SHAPE, "C must be a multiple of blocksize^2");
        o->dims[1] /= b * b, o->dims[2] *= b, o->dims[3] *= b;
    } else {
        if ((s->syms[2] == 0 && s->dims[2] % b) || (s->syms[3] == 0 && s->dims[3] % b))
            return op_fail(ctx, MOPT_ERR_SHAPE, "H and W must be multiples of blocksize");
        o->dims[1] *= b * b, o->dims[2] /= b, o->dims[3] /= b;
    }
    for (int a = 1; a < 4; a++)
        if (o->syms[a]) o->syms[a] = -1;
    return MOPT_OK;
}

static mopt_status ds_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                          int n_out) {
    bool to_space = strcmp(ctx->node->op_type, "DepthToSpace") == 0;
    bool crd = strcmp(ir_node_attr_string(ctx->node, "mode", "DCR"), "CRD") == 0;
    const int64_t *d = in[0].shape.dims;
    ref_depth_space(to_space, crd, ir_node_attr_int(ctx->node, "blocksize", 1), d[0], d[1], d[2],
                    d[3], mopt_dtype_size(in[0].dtype), in[0].data, out[0].data);
    return MOPT_OK;
}

/* ---- EyeLike -------------------------------------------------------------------------- */

static mopt_status eye_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    const ir_attr *dt = ir_node_attr(ctx->node, "dtype");
    out[0].dtype = dt ? (mopt_dtype)dt->i : in[0].dtype;
    if (dt && mopt_dtype_size(out[0].dtype) == 0)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "dtype %d is not supported", (int)dt->i);
    out[0].shape = in[0].shape;
    if (in[0].shape.rank >= 0 && in[0].shape.rank != 2)
        return op_fail(ctx, MOPT_ERR_SHAPE, "input must be 2-D");
    return MOPT_OK;
}

static mopt_status eye_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    int64_t k = ir_node_attr_int(ctx->node, "k", 0);
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

/* ---- GatherND ------------------------------------------------------------------------------- */

static mopt_status gnd_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    mopt_status st = op_expect_i64(ctx, &in[1], 1);
    if (st) return st;
    out[0].dtype = in[0].dtype;
    const ir_shape *d = &in[0].shape, *ix = &in[1].shape;
    int64_t b = ir_node_attr_int(ctx->node, "batch_dims", 0);
    if (d->rank < 0 || ix->rank < 0 || ix->syms[ix->rank - 1] != 0) {
        ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    int64_t k = ix->dims[ix->rank - 1];
    if (b < 0 || b >= ix->rank || b >= d->rank || k < 1 || b + k > d->rank)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "indices last dim %" PRId64 " and batch_dims %" PRId64
                       " do not fit data of rank %d",
                       k, b, (int)d->rank);
    int32_t r = ix->rank - 1 + d->rank - (int32_t)(b + k);
    if (r > IR_MAX_RANK) return op_fail(ctx, MOPT_ERR_SHAPE, "output rank too large");
    out[0].shape.rank = r;
    int32_t o = 0;
    for (int32_t a = 0; a < ix->rank - 1; a++, o++)
        out[0].shape.dims[o] = ix->dims[a], out[0].shape.syms[o] = ix->syms[a];
    for (int32_t a = (int32_t)(b + k); a < d->rank; a++, o++)
        out[0].shape.dims[o] = d->dims[a], out[0].shape.syms[o] = d->syms[a];
    return MOPT_OK;
}

static mopt_status gnd_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    const ir_shape *d = &in[0].shape, *ix = &in[1].shape;
    int64_t b = ir_node_attr_int(ctx->node, "batch_dims", 0);
    int64_t k = ix->dims[ix->rank - 1];
    int64_t ds[IR_MAX_RANK];
    op_strides(d, ds);
    int64_t slice = 1, batch = 1, per_batch = 1;
    for (int32_t a = (int32_t)(b + k); a < d->rank; a++)
        slice *= d->dims[a];
    for (int32_t a = 0; a < b; a++)
        batch *= ix->dims[a];
    for (int32_t a = (int32_t)b; a < ix->rank - 1; a++)
        per_batch *= ix->dims[a];
    size_t es = mopt_dtype_size(in[0].dtype);
    const int64_t *idx = in[1].data;
    char *y = out[0].data;
    for (int64_t p = 0; p < batch * per_batch; p++) {
        int64_t off = (p / per_batch) * (b > 0 ? ds[b - 1] : 0);
        for (int64_t j = 0; j < k; j++) {
            int64_t v = idx[p * k + j], dim = d->dims[b + j];
            if (v < 0) v += dim;
            if (v < 0 || v >= dim)
                return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT,
                               "index %" PRId64 " out of range for axis %d of size %" PRId64,
                               idx[p * k + j], (int)(b + j), dim);
            off += v * ds[b + j];
        }
        memcpy(y + (size_t)(p * slice) * es, (const char *)in[0].data + (size_t)off * es,
               (size_t)slice * es);
    }
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

static mopt_status compress_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                  int n_out) {
    static const mopt_dtype k_bool[] = {MOPT_DTYPE_BOOL};
    mopt_status st = op_expect_dtype(ctx, &in[1], 1, k_bool, 1);
    if (st) return st;
    out[0].dtype = in[0].dtype;
    const ir_attr *axa = ir_node_attr(ctx->node, "axis");
    const ir_shape *s = &in[0].shape;
    if (s->rank < 0) {
        ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    int32_t ax = -1;
    if (axa && (st = op_axis(ctx, axa->i, s->rank, "axis", &ax))) return st;
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
    const ir_attr *axa = ir_node_attr(ctx->node, "axis");
    const ir_shape *s = &in[0].shape;
    size_t es = mopt_dtype_size(in[0].dtype);
    const uint8_t *c = in[1].data;
    int64_t nc = op_numel(&in[1]);
    const char *x = in[0].data;
    char *y = out[0].data;
    if (!axa) {
        for (int64_t i = 0, n = op_numel(&in[0]); i < n && i < nc; i++)
            if (c[i]) memcpy(y, x + (size_t)i * es, es), y += es;
        return MOPT_OK;
    }
    int32_t ax;
    mopt_status st = op_axis(ctx, axa->i, s->rank, "axis", &ax);
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

/* ---- ReverseSequence ------------------------------------------------------------------------ */

static mopt_status revseq_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    mopt_status st = op_expect_index(ctx, &in[1], 1);
    if (st) return st;
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    if (in[0].shape.rank >= 0 && in[0].shape.rank < 2)
        return op_fail(ctx, MOPT_ERR_SHAPE, "input must have rank >= 2");
    return MOPT_OK;
}

static mopt_status revseq_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    int64_t ba = ir_node_attr_int(ctx->node, "batch_axis", 1);
    int64_t ta = ir_node_attr_int(ctx->node, "time_axis", 0);
    if (!((ba == 0 && ta == 1) || (ba == 1 && ta == 0)))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "batch_axis/time_axis must be 0 and 1");
    const ir_shape *s = &in[0].shape;
    int64_t nb = s->dims[ba], nt = s->dims[ta], inner = 1, lens[4096];
    for (int32_t a = 2; a < s->rank; a++)
        inner *= s->dims[a];
    if (nb > 4096) return op_fail(ctx, MOPT_ERR_LIMIT, "batch too large");
    if (op_read_ints(ctx, &in[1], "sequence_lens", lens, 4096) != nb)
        return op_fail(ctx, MOPT_ERR_SHAPE, "sequence_lens must have %" PRId64 " values", nb);
    size_t es = mopt_dtype_size(in[0].dtype);
    for (int64_t b = 0; b < nb; b++)
        for (int64_t t = 0; t < nt; t++) {
            int64_t len = lens[b] < 0 ? 0 : lens[b] > nt ? nt : lens[b];
            int64_t src_t = t < len ? len - 1 - t : t;
            int64_t dst = ba == 0 ? b * nt + t : t * nb + b;
            int64_t src = ba == 0 ? b * nt + src_t : src_t * nb + b;
            memcpy((char *)out[0].data + (size_t)(dst * inner) * es,
                   (const char *)in[0].data + (size_t)(src * inner) * es, (size_t)inner * es);
        }
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"CumSum", "", 2, 2, 1, 1, cum_infer, cum_run, NULL},
    {"CumProd", "", 2, 2, 1, 1, cum_infer, cum_run, NULL},
    {"TopK", "", 1, 2, 1, 2, topk_infer, topk_run, NULL},
    {"Hardmax", "", 1, 1, 1, 1, same_f32_infer, hardmax_run, NULL},
    {"Shrink", "", 1, 1, 1, 1, same_f32_infer, shrink_run, NULL},
    {"Swish", "", 1, 1, 1, 1, same_f32_infer, swish_run, NULL},
    {"OneHot", "", 3, 3, 1, 1, onehot_infer, onehot_run, NULL},
    {"SpaceToDepth", "", 1, 1, 1, 1, ds_infer, ds_run, NULL},
    {"DepthToSpace", "", 1, 1, 1, 1, ds_infer, ds_run, NULL},
    {"EyeLike", "", 1, 1, 1, 1, eye_infer, eye_run, NULL},
    {"GatherND", "", 2, 2, 1, 1, gnd_infer, gnd_run, NULL},
    {"NonZero", "", 1, 1, 1, 1, nonzero_infer, nonzero_run, NULL},
    {"Compress", "", 2, 2, 1, 1, compress_infer, compress_run, NULL},
    {"ReverseSequence", "", 2, 2, 1, 1, revseq_infer, revseq_run, NULL},
};

const op_def *ops_family_tensor_ops(size_t *count) {
    *count = sizeof k_ops / sizeof k_ops[0];
    return k_ops;
}
