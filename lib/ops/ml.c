/*
 * ml.c — the "ml" op family, the feature-extraction operators of classic
 * machine-learning exports (scikit-learn through onnx): of ONNX's
 * ai.onnx.ml domain Binarizer (x > threshold, f32, f64, i32, i64) and
 * ArrayFeatureExtractor (columns of the last axis picked by int64 indices;
 * a 1-D x gives [1, n]); of the default domain TfIdfVectorizer over i32/i64
 * tokens (pool_strings is UNSUPPORTED). Math in kernels/ref/ml.c.
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

/* ---- TfIdfVectorizer -------------------------------------------------------------- */

enum { TFIDF_MAX_OUT = 1 << 24 }; /* output columns: a bound on ngram_indexes */

typedef struct tfidf_params {
    ref_tfidf_params k; /* its arrays point into the node's attributes */
} tfidf_params;

static mopt_status tfidf_parse(const op_ctx *ctx, void *params) {
    tfidf_params *p = params;
    ref_tfidf_params *k = &p->k;
    if (ir_node_attr(ctx->node, "pool_strings"))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "pool_strings (string tokens) is not supported");
    const int64_t *counts, *idx, *pool;
    int64_t n_counts = ir_node_attr_ints(ctx->node, "ngram_counts", &counts);
    int64_t n_idx = ir_node_attr_ints(ctx->node, "ngram_indexes", &idx);
    int64_t n_pool = ir_node_attr_ints(ctx->node, "pool_int64s", &pool);
    k->min_n = ir_node_attr_int(ctx->node, "min_gram_length", 0);
    k->max_n = ir_node_attr_int(ctx->node, "max_gram_length", 0);
    k->max_skip = ir_node_attr_int(ctx->node, "max_skip_count", 0);
    if (k->min_n < 1 || k->max_n < k->min_n || k->max_n > n_counts)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "min_gram_length %" PRId64 " and max_gram_length %" PRId64
                       " must satisfy 1 <= min <= max <= %" PRId64 " (ngram_counts' length)",
                       k->min_n, k->max_n, n_counts);
    if (k->max_skip < 0 || k->max_skip > (1 << 20))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "max_skip_count %" PRId64 " is out of range",
                       k->max_skip);
    const char *mode = ir_node_attr_string(ctx->node, "mode", "");
    k->mode = strcmp(mode, "TF") == 0 ? 0 : strcmp(mode, "IDF") == 0 ? 1 : 2;
    if (k->mode == 2 && strcmp(mode, "TFIDF") != 0)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "mode '%s' is not TF, IDF or TFIDF", mode);
    /* gram g of size n (counts[n-1] <= start < counts[n]) is number g overall */
    int64_t total = 0;
    for (int64_t i = 0; i < n_counts; i++) {
        int64_t end = i + 1 < n_counts ? counts[i + 1] : n_pool;
        if (counts[i] < 0 || counts[i] > end || end > n_pool)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                           "ngram_counts must rise within pool_int64s (%" PRId64 " values)",
                           n_pool);
        total += (end - counts[i]) / (i + 1);
    }
    if (n_idx != total)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "ngram_indexes has %" PRId64 " values for the pool's %" PRId64 " n-grams",
                       n_idx, total);
    k->out_size = 0;
    for (int64_t i = 0; i < n_idx; i++) {
        if (idx[i] < 0 || idx[i] >= TFIDF_MAX_OUT)
            return op_fail(ctx, idx[i] < 0 ? MOPT_ERR_INVALID_MODEL : MOPT_ERR_LIMIT,
                           "ngram_indexes[%" PRId64 "] is %" PRId64 ", outside [0, %d)", i, idx[i],
                           TFIDF_MAX_OUT);
        if (idx[i] + 1 > k->out_size) k->out_size = idx[i] + 1;
    }
    const float *w;
    int64_t n_w = ir_node_attr_floats(ctx->node, "weights", &w);
    if (n_w > 0 && n_w < k->out_size)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "weights has %" PRId64 " values for %" PRId64 " output columns", n_w,
                       k->out_size);
    k->weights = n_w > 0 ? w : NULL;
    k->pool = pool, k->n_pool = n_pool;
    k->counts = counts, k->n_counts = n_counts;
    k->out_idx = idx;
    return MOPT_OK;
}

static mopt_status tfidf_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    const tfidf_params *p = ctx->params;
    if (in[0].dtype != MOPT_DTYPE_UNDEFINED && in[0].dtype != MOPT_DTYPE_I32 &&
        in[0].dtype != MOPT_DTYPE_I64)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "X of type %s is not supported (i32, i64)",
                       mopt_dtype_name(in[0].dtype));
    const ir_shape *x = &in[0].shape;
    out[0].dtype = MOPT_DTYPE_F32;
    if (x->rank > 2) return op_fail(ctx, MOPT_ERR_SHAPE, "X must be [C] or [N, C]");
    if (x->rank < 0) {
        out[0].shape.rank = -1;
        return MOPT_OK;
    }
    out[0].shape = *x;
    out[0].shape.rank = x->rank == 2 ? 2 : 1;
    out[0].shape.dims[out[0].shape.rank - 1] = p->k.out_size;
    out[0].shape.syms[out[0].shape.rank - 1] = 0;
    return MOPT_OK;
}

static mopt_status tfidf_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    const tfidf_params *p = ctx->params;
    const ir_shape *x = &in[0].shape;
    int64_t rows = x->rank == 2 ? x->dims[0] : 1;
    int64_t cols = x->rank == 0 ? 1 : x->dims[x->rank - 1];
    ref_tfidf(&p->k, in[0].data, in[0].dtype == MOPT_DTYPE_I64, rows, cols, out[0].data);
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"Binarizer", "ai.onnx.ml", 1, 1, 1, 1, binarizer_infer, binarizer_run, NULL,
     OP_PARAMS(binarizer_params, binarizer_parse)},
    {"ArrayFeatureExtractor", "ai.onnx.ml", 2, 2, 1, 1, afe_infer, afe_run, NULL},
    {"TfIdfVectorizer", "", 1, 1, 1, 1, tfidf_infer, tfidf_run, NULL,
     OP_PARAMS(tfidf_params, tfidf_parse)},
};

OP_FAMILY(ml, k_ops)
