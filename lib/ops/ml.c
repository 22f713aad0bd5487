/*
 * ml.c — the "ml" op family, operators of ONNX's ai.onnx.ml domain that
 * scikit-learn exports put around a model: Binarizer (x > threshold, f32,
 * f64, i32, i64) and ArrayFeatureExtractor (columns of the last axis picked
 * by int64 indices; a 1-D x gives [1, n]). Math in kernels/ref/ml.c.
 */
#include <inttypes.h>
#include <string.h>

#include "kernels/ref/ref_ml.h"
#include "ops/op_common.h"
#include "ops/ops.h"

/* ---- Binarizer ------------------------------------------------------------ */

typedef struct binarizer_params {
    double threshold;
} binarizer_params;

static mopt_status binarizer_parse(const op_ctx *ctx, void *params) {
    ((binarizer_params *)params)->threshold = ir_node_attr_float(ctx->node, "threshold", 0.0f);
    return MOPT_OK;
}

static bool binarizer_type(mopt_dtype t) {
    return t == MOPT_DTYPE_F32 || t == MOPT_DTYPE_F64 || t == MOPT_DTYPE_I32 || t == MOPT_DTYPE_I64;
}

static mopt_status binarizer_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                   int n_out) {
    if (in[0].dtype != MOPT_DTYPE_UNDEFINED && !binarizer_type(in[0].dtype))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "X of type %s is not supported",
                       mopt_dtype_name(in[0].dtype));
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

static mopt_status binarizer_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    const binarizer_params *p = ctx->params;
    if (ref_binarizer(in[0].dtype, in[0].data, p->threshold, out[0].data, op_numel(&in[0])))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "X of type %s is not supported",
                       mopt_dtype_name(in[0].dtype));
    return MOPT_OK;
}

/* ---- ArrayFeatureExtractor ------------------------------------------------------ */

static mopt_status afe_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    if (in[1].dtype != MOPT_DTYPE_UNDEFINED && in[1].dtype != MOPT_DTYPE_I64)
        return op_fail(ctx, MOPT_ERR_TYPE, "Y (the indices) has type %s, not i64",
                       mopt_dtype_name(in[1].dtype));
    if (in[0].dtype != MOPT_DTYPE_UNDEFINED && mopt_dtype_size(in[0].dtype) == 0)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "X of type %s is not supported",
                       mopt_dtype_name(in[0].dtype));
    const ir_shape *x = &in[0].shape, *y = &in[1].shape;
    out[0].dtype = in[0].dtype;
    if (x->rank < 0 || y->rank < 0) {
        out[0].shape.rank = -1;
        return MOPT_OK;
    }
    if (x->rank == 0) return op_fail(ctx, MOPT_ERR_SHAPE, "X must have at least one dimension");
    out[0].shape = *x;
    if (x->rank == 1) { /* a 1-D X is one row */
        out[0].shape.rank = 2;
        out[0].shape.dims[0] = 1, out[0].shape.syms[0] = 0;
    }
    int32_t last = out[0].shape.rank - 1;
    out[0].shape.dims[last] = 0;
    out[0].shape.syms[last] = -1; /* unknown unless Y's shape is concrete */
    if (ir_shape_is_concrete(y))
        out[0].shape.dims[last] = ir_shape_numel(y), out[0].shape.syms[last] = 0;
    return MOPT_OK;
}

static mopt_status afe_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    const ir_shape *x = &in[0].shape;
    int64_t cols = x->dims[x->rank - 1], rows = cols ? op_numel(&in[0]) / cols : 0;
    int64_t n = op_numel(&in[1]);
    const int64_t *idx = in[1].data;
    for (int64_t k = 0; k < n; k++)
        if (idx[k] < 0 || idx[k] >= cols)
            return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT,
                           "index %" PRId64 " (element %" PRId64 " of Y) is outside [0, %" PRId64
                           ") of X's last axis",
                           idx[k], k, cols);
    ref_array_feature_extract(in[0].data, rows, cols, idx, n, mopt_dtype_size(in[0].dtype),
                              out[0].data);
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"Binarizer", "ai.onnx.ml", 1, 1, 1, 1, binarizer_infer, binarizer_run, NULL,
     OP_PARAMS(binarizer_params, binarizer_parse)},
    {"ArrayFeatureExtractor", "ai.onnx.ml", 2, 2, 1, 1, afe_infer, afe_run, NULL},
};

OP_FAMILY(ml, k_ops)
