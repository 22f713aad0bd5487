/*
 * misc.c — more ONNX operators: BitCast, HannWindow, HammingWindow,
 * BlackmanWindow, LRN, Det, SwiGLU and TensorScatter. Math in
 * kernels/ref/misc.c.
 */
#include <inttypes.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/ref/ref_logic.h"
#include "kernels/ref/ref_misc.h"
#include "ops/ops.h"

/* ---- BitCast ---------------------------------------------------------------------- */

static mopt_status bitcast_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    mopt_dtype to = (mopt_dtype)ir_node_attr_int(ctx->node, "to", 0);
    size_t a = mopt_dtype_size(in[0].dtype), b = mopt_dtype_size(to);
    if (b == 0) return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "target type %d is not supported", to);
    if (in[0].dtype != MOPT_DTYPE_UNDEFINED && a != b)
        return op_fail(ctx, MOPT_ERR_TYPE, "%s and %s differ in size", mopt_dtype_name(in[0].dtype),
                       mopt_dtype_name(to));
    out[0].dtype = to;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

static mopt_status bitcast_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    size_t n = (size_t)op_numel(&in[0]) * mopt_dtype_size(in[0].dtype);
    if (n) memcpy(out[0].data, in[0].data, n);
    if (out[0].dtype == MOPT_DTYPE_BOOL) /* keep bools 0/1 */
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)out[0].data)[i] = ((uint8_t *)out[0].data)[i] != 0;
    return MOPT_OK;
}

/* ---- window functions -------------------------------------------------------------- */

static mopt_status window_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    mopt_dtype t = (mopt_dtype)ir_node_attr_int(ctx->node, "output_datatype", MOPT_DTYPE_F32);
    if (mopt_dtype_size(t) == 0 || t == MOPT_DTYPE_BOOL)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "output_datatype %d is not supported", t);
    out[0].dtype = t;
    out[0].shape.rank = 1;
    out[0].shape.dims[0] = -1;
    out[0].shape.syms[0] = -1;
    if (in[0].data) {
        int64_t n;
        if (op_read_ints(ctx, &in[0], "size", &n, 1) != 1) return MOPT_ERR_INVALID_ARGUMENT;
        if (n < 0) return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT, "size must be >= 0");
        out[0].shape.dims[0] = n;
        out[0].shape.syms[0] = 0;
    }
    return MOPT_OK;
}

static mopt_status window_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    const char *t = ctx->node->op_type;
    ref_window w = strcmp(t, "HannWindow") == 0      ? REF_WIN_HANN
                   : strcmp(t, "HammingWindow") == 0 ? REF_WIN_HAMMING
                                                     : REF_WIN_BLACKMAN;
    int64_t n = out[0].shape.dims[0];
    double *y = mopt_malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!y) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    ref_window_fn(w, n, ir_node_attr_int(ctx->node, "periodic", 1) != 0, y);
    ref_cast(MOPT_DTYPE_F64, y, out[0].dtype, out[0].data, n);
    mopt_free(y);
    return MOPT_OK;
}

/* ---- LRN, SwiGLU ----------------------------------------------------------------------- */

static mopt_status f32_same_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                  int n_out) {
    mopt_status st;
    for (int k = 0; k < n_in; k++)
        if ((st = op_expect_f32(ctx, &in[k], k))) return st;
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

static mopt_status lrn_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    const ir_shape *s = &in[0].shape;
    int64_t size = ir_node_attr_int(ctx->node, "size", 0);
    if (s->rank < 2 || size <= 0)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "needs X [N, C, ...] and size > 0");
    int64_t sp = 1;
    for (int32_t a = 2; a < s->rank; a++)
        sp *= s->dims[a];
    ref_lrn(s->dims[0], s->dims[1], sp, size, ir_node_attr_float(ctx->node, "alpha", 1e-4f),
            ir_node_attr_float(ctx->node, "beta", 0.75f),
            ir_node_attr_float(ctx->node, "bias", 1.0f), in[0].data, out[0].data);
    return MOPT_OK;
}

static mopt_status swiglu_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    if (n_in < 2 || op_numel(&in[1]) != op_numel(&in[0]))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "only the two-input form with equal shapes");
    ref_swiglu(op_numel(&in[0]), ir_node_attr_float(ctx->node, "alpha", 1.0f), in[0].data,
               in[1].data, out[0].data);
    return MOPT_OK;
}

/* ---- Det ------------------------------------------------------------------------------- */

static mopt_status det_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    mopt_status st = op_expect_f32(ctx, &in[0], 0);
    if (st) return st;
    out[0].dtype = in[0].dtype;
    const ir_shape *s = &in[0].shape;
    if (s->rank < 0) {
        ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    if (s->rank < 2 || (s->syms[s->rank - 1] == 0 && s->syms[s->rank - 2] == 0 &&
                        s->dims[s->rank - 1] != s->dims[s->rank - 2]))
        return op_fail(ctx, MOPT_ERR_SHAPE, "input must be [..., M, M]");
    out[0].shape = *s;
    out[0].shape.rank -= 2;
    return MOPT_OK;
}

static mopt_status det_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    int64_t m = in[0].shape.dims[in[0].shape.rank - 1], n = op_numel(&in[0]);
    int64_t count = op_numel(&out[0]);
    /* no matrices: nothing to do (and m * m, unbounded by n then, could be
     * huge: a [0, 1e5, 1e5] input asked for 80 GB of scratch) */
    if (count == 0) return MOPT_OK;
    double *x = mopt_malloc((size_t)(n + m * m + count + 1) * sizeof(double));
    if (!x) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    double *scratch = x + n, *y = scratch + m * m;
    ref_cast(MOPT_DTYPE_F32, in[0].data, MOPT_DTYPE_F64, x, n);
    ref_det(count, m, x, y, scratch);
    ref_cast(MOPT_DTYPE_F64, y, MOPT_DTYPE_F32, out[0].data, count);
    mopt_free(x);
    return MOPT_OK;
}

/* ---- TensorScatter ------------------------------------------------------------------------ */

static mopt_status tscatter_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                  int n_out) {
    mopt_status st = op_same_dtype(ctx, in, 0, 1);
    if (st) return st;
    const char *mode = ir_node_attr_string(ctx->node, "mode", "linear");
    if (strcmp(mode, "linear") != 0 && strcmp(mode, "circular") != 0)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "mode must be linear or circular");
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

static mopt_status tscatter_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    const ir_shape *c = &in[0].shape, *u = &in[1].shape;
    int32_t ax;
    mopt_status st = op_attr_axis(ctx, -2, c->rank, &ax);
    if (st) return st;
    if (u->rank != c->rank || ax < 1)
        return op_fail(ctx, MOPT_ERR_SHAPE, "update must have the cache's rank; axis > 0");
    for (int32_t a = 0; a < c->rank; a++)
        if (a == ax ? u->dims[a] > c->dims[a] : u->dims[a] != c->dims[a])
            return op_fail(ctx, MOPT_ERR_SHAPE, "update does not fit the cache on axis %d", (int)a);
    bool circ = strcmp(ir_node_attr_string(ctx->node, "mode", "linear"), "circular") == 0;
    size_t es = mopt_dtype_size(in[0].dtype);
    memcpy(out[0].data, in[0].data, (size_t)op_numel(&in[0]) * es);
    int64_t outer, inner, batch = c->dims[0];
    op_axis_split(c, ax, &outer, NULL, &inner);
    int64_t maxlen = c->dims[ax], len = u->dims[ax];
    for (int64_t o = 0; o < outer; o++) {
        int64_t b = o / (outer / (batch > 0 ? batch : 1));
        int64_t w = 0;
        if (op_has_input(in, n_in, 2)) {
            const op_tensor *wi = &in[2];
            w = wi->dtype == MOPT_DTYPE_I64 ? ((const int64_t *)wi->data)[b]
                                            : ((const int32_t *)wi->data)[b];
        }
        for (int64_t s = 0; s < len; s++) {
            int64_t pos = w + s;
            if (circ) pos = ((pos % maxlen) + maxlen) % maxlen;
            if (pos < 0 || pos >= maxlen)
                return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT,
                               "write index %" PRId64 " out of range", pos);
            memcpy((char *)out[0].data + (size_t)((o * maxlen + pos) * inner) * es,
                   (const char *)in[1].data + (size_t)((o * len + s) * inner) * es,
                   (size_t)inner * es);
        }
    }
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"BitCast", "", 1, 1, 1, 1, bitcast_infer, bitcast_run, NULL},
    {"HannWindow", "", 1, 1, 1, 1, window_infer, window_run, NULL},
    {"HammingWindow", "", 1, 1, 1, 1, window_infer, window_run, NULL},
    {"BlackmanWindow", "", 1, 1, 1, 1, window_infer, window_run, NULL},
    {"LRN", "", 1, 1, 1, 1, f32_same_infer, lrn_run, NULL},
    {"SwiGLU", "", 1, 2, 1, 1, f32_same_infer, swiglu_run, NULL},
    {"Det", "", 1, 1, 1, 1, det_infer, det_run, NULL},
    {"TensorScatter", "", 2, 3, 1, 1, tscatter_infer, tscatter_run, NULL},
};

const op_def *ops_family_misc(size_t *count) {
    *count = sizeof k_ops / sizeof k_ops[0];
    return k_ops;
}
