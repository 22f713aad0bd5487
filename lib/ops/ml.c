/*
 * ml.c — the "ml" op family, the feature-extraction operators of classic
 * machine-learning exports (scikit-learn through onnx): of ONNX's
 * ai.onnx.ml domain Binarizer (x > threshold, f32, f64, i32, i64) and
 * ArrayFeatureExtractor (columns of the last axis picked by int64 indices;
 * a 1-D x gives [1, n]), TreeEnsemble (opset 5; post_transform NONE only,
 * as ONNX's reference); of the default domain TfIdfVectorizer over i32/i64
 * tokens (pool_strings is UNSUPPORTED). Math in kernels/ref/ml.c.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/ref/ref_logic.h"
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

/* ---- TreeEnsemble (ai.onnx.ml 5) ------------------------------------------------------- */

enum { TREE_MAX_TARGETS = 1 << 24 };

typedef struct tree_params {
    int64_t n_nodes, n_leaves, n_roots, n_targets, n_mem;
    const int64_t *feat, *t_id, *t_leaf, *f_id, *f_leaf, *missing, *roots, *leaf_target;
    const ir_tensor *modes, *splits, *weights, *mem;
    int agg;
} tree_params;

/* Pre-order walk of every tree (true branch first), the order in which
 * membership_values lists the sets of the member nodes: gives each node
 * its set (mem_off/mem_len, may be NULL) and fails on a node reached
 * twice (a cycle or a shared subtree). mem is membership_values as double
 * (NULL when absent); seen has n_nodes entries, stack 2 n_nodes + 2 (a
 * node may be pushed by two parents before the second pop fails). */
static mopt_status tree_walk(const op_ctx *ctx, const tree_params *p, const uint8_t *modes,
                             const double *mem, int64_t *stack, uint8_t *seen, int64_t *mem_off,
                             int64_t *mem_len) {
    memset(seen, 0, (size_t)p->n_nodes);
    int64_t cursor = 0;
    for (int64_t k = 0; k < p->n_roots; k++) {
        int64_t r = p->roots[k], top = 0;
        if (p->t_leaf[r] && p->f_leaf[r] && p->t_id[r] == p->f_id[r]) continue;
        stack[top++] = r;
        while (top > 0) {
            int64_t i = stack[--top];
            if (seen[i])
                return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                               "tree node %" PRId64 " is reached twice (a cycle or a shared "
                               "subtree)",
                               i);
            seen[i] = 1;
            if (modes[i] == 6) {
                int64_t start = cursor;
                while (cursor < p->n_mem && !isnan(mem[cursor]))
                    cursor++;
                if (cursor >= p->n_mem)
                    return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                                   "membership_values has no NaN-ended set for member node "
                                   "%" PRId64,
                                   i);
                if (mem_off) mem_off[i] = start, mem_len[i] = cursor - start;
                cursor++;
            }
            if (!p->f_leaf[i]) stack[top++] = p->f_id[i];
            if (!p->t_leaf[i]) stack[top++] = p->t_id[i];
        }
    }
    return MOPT_OK;
}

static mopt_status tree_parse(const op_ctx *ctx, void *params) {
    tree_params *p = params;
    const ir_node *n = ctx->node;
    int64_t post = ir_node_attr_int(n, "post_transform", 0);
    if (post != 0)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "post_transform %" PRId64 " is not supported",
                       post);
    int64_t agg = ir_node_attr_int(n, "aggregate_function", 1);
    if (agg < 0 || agg > 3)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "aggregate_function %" PRId64 " is unknown",
                       agg);
    p->agg = (int)agg;
    p->n_targets = ir_node_attr_int(n, "n_targets", 0);
    if (p->n_targets < 1 || p->n_targets > TREE_MAX_TARGETS)
        return op_fail(ctx, p->n_targets < 1 ? MOPT_ERR_INVALID_MODEL : MOPT_ERR_LIMIT,
                       "n_targets %" PRId64 " is outside [1, %d]", p->n_targets, TREE_MAX_TARGETS);
    p->n_nodes = ir_node_attr_ints(n, "nodes_featureids", &p->feat);
    int64_t c1 = ir_node_attr_ints(n, "nodes_truenodeids", &p->t_id);
    int64_t c2 = ir_node_attr_ints(n, "nodes_trueleafs", &p->t_leaf);
    int64_t c3 = ir_node_attr_ints(n, "nodes_falsenodeids", &p->f_id);
    int64_t c4 = ir_node_attr_ints(n, "nodes_falseleafs", &p->f_leaf);
    int64_t c5 = ir_node_attr_ints(n, "nodes_missing_value_tracks_true", &p->missing);
    p->n_roots = ir_node_attr_ints(n, "tree_roots", &p->roots);
    p->n_leaves = ir_node_attr_ints(n, "leaf_targetids", &p->leaf_target);
    p->modes = ir_node_attr_tensor(n, "nodes_modes");
    p->splits = ir_node_attr_tensor(n, "nodes_splits");
    p->weights = ir_node_attr_tensor(n, "leaf_weights");
    p->mem = ir_node_attr_tensor(n, "membership_values");
    if (c5 <= 0) p->missing = NULL, c5 = 0; /* absent (-1) or empty */
    int64_t nn = p->n_nodes;
    if (nn < 1 || c1 != nn || c2 != nn || c3 != nn || c4 != nn || (c5 && c5 != nn) || !p->modes ||
        !p->splits || ir_numel(p->modes->rank, p->modes->dims) != nn ||
        ir_numel(p->splits->rank, p->splits->dims) != nn)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "the nodes_* attributes (featureids, modes, splits, true/false node ids "
                       "and leafs, missing_value_tracks_true) must all have one value per node");
    if (p->modes->dtype != MOPT_DTYPE_U8)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "nodes_modes must be a u8 tensor, not %s",
                       mopt_dtype_name(p->modes->dtype));
    if (!p->weights || p->n_leaves < 1 ||
        ir_numel(p->weights->rank, p->weights->dims) != p->n_leaves)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "leaf_targetids and leaf_weights must have one value per leaf");
    if (p->n_roots < 1) return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "tree_roots is empty");
    const ir_tensor *ft[3] = {p->splits, p->weights, p->mem};
    for (int k = 0; k < 3; k++)
        if (ft[k] && ft[k]->dtype != MOPT_DTYPE_F32 && ft[k]->dtype != MOPT_DTYPE_F64 &&
            ft[k]->dtype != MOPT_DTYPE_F16)
            return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "a %s tensor attribute is not supported",
                           mopt_dtype_name(ft[k]->dtype));
    const uint8_t *modes = p->modes->data;
    int64_t n_member = 0;
    for (int64_t i = 0; i < nn; i++) {
        if (modes[i] > 6)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "nodes_modes[%" PRId64 "] is %u", i,
                           (unsigned)modes[i]);
        n_member += modes[i] == 6;
        if (p->feat[i] < 0)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "nodes_featureids[%" PRId64 "] is negative",
                           i);
        for (int b = 0; b < 2; b++) {
            int64_t id = b ? p->f_id[i] : p->t_id[i], leaf = b ? p->f_leaf[i] : p->t_leaf[i];
            if (id < 0 || id >= (leaf ? p->n_leaves : nn))
                return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                               "node %" PRId64 "'s %s successor %" PRId64 " is not a %s", i,
                               b ? "false" : "true", id, leaf ? "leaf" : "node");
        }
    }
    for (int64_t k = 0; k < p->n_roots; k++)
        if (p->roots[k] < 0 || p->roots[k] >= nn)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "tree_roots[%" PRId64 "] is not a node", k);
    for (int64_t k = 0; k < p->n_leaves; k++)
        if (p->leaf_target[k] < 0 || p->leaf_target[k] >= p->n_targets)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                           "leaf_targetids[%" PRId64 "] is outside [0, %" PRId64 ")", k,
                           p->n_targets);
    if (n_member && !p->mem)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "member nodes without membership_values");
    p->n_mem = p->mem ? ir_numel(p->mem->rank, p->mem->dims) : 0;
    /* the walk: no cycle, and a set for every member node */
    double *mem = mopt_malloc((size_t)(p->n_mem + 1) * sizeof(double));
    int64_t *stack = mopt_malloc((size_t)(2 * nn + 2) * sizeof(int64_t));
    uint8_t *seen = mopt_malloc((size_t)nn);
    mopt_status st = MOPT_OK;
    if (!mem || !stack || !seen)
        st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory to check the trees");
    else {
        if (p->mem) ref_cast(p->mem->dtype, p->mem->data, MOPT_DTYPE_F64, mem, p->n_mem);
        st = tree_walk(ctx, p, modes, mem, stack, seen, NULL, NULL);
    }
    mopt_free(mem), mopt_free(stack), mopt_free(seen);
    return st;
}

static mopt_status tree_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    const tree_params *p = ctx->params;
    if (in[0].dtype != MOPT_DTYPE_UNDEFINED && in[0].dtype != MOPT_DTYPE_F32 &&
        in[0].dtype != MOPT_DTYPE_F64)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "X of type %s is not supported",
                       mopt_dtype_name(in[0].dtype));
    const ir_shape *x = &in[0].shape;
    out[0].dtype = in[0].dtype;
    if (x->rank < 0) {
        out[0].shape.rank = -1;
        return MOPT_OK;
    }
    if (x->rank != 2) return op_fail(ctx, MOPT_ERR_SHAPE, "X must be [N, F]");
    out[0].shape = *x;
    out[0].shape.dims[1] = p->n_targets, out[0].shape.syms[1] = 0;
    return MOPT_OK;
}

static mopt_status tree_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    const tree_params *p = ctx->params;
    int64_t rows = in[0].shape.dims[0], cols = in[0].shape.dims[1], nn = p->n_nodes;
    for (int64_t i = 0; i < nn; i++)
        if (p->feat[i] >= cols)
            return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT,
                           "node %" PRId64 " reads feature %" PRId64 " of X's %" PRId64, i,
                           p->feat[i], cols);
    size_t n_x = (size_t)(rows * cols), n_y = (size_t)(rows * p->n_targets);
    double *x = mopt_malloc((n_x ? n_x : 1) * sizeof(double));
    double *y = mopt_malloc((n_y ? n_y : 1) * sizeof(double));
    double *split = mopt_malloc((size_t)nn * sizeof(double));
    double *w = mopt_malloc((size_t)p->n_leaves * sizeof(double));
    double *mem = mopt_malloc((size_t)(p->n_mem + 1) * sizeof(double));
    int64_t *off = mopt_calloc((size_t)nn * 4 + 2, sizeof(int64_t)); /* off, len, stack */
    uint8_t *seen = mopt_malloc((size_t)nn);
    mopt_status st = MOPT_OK;
    if (!x || !y || !split || !w || !mem || !off || !seen) {
        st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
        goto done;
    }
    ref_cast(in[0].dtype, in[0].data, MOPT_DTYPE_F64, x, (int64_t)n_x);
    ref_cast(p->splits->dtype, p->splits->data, MOPT_DTYPE_F64, split, nn);
    ref_cast(p->weights->dtype, p->weights->data, MOPT_DTYPE_F64, w, p->n_leaves);
    if (p->mem) ref_cast(p->mem->dtype, p->mem->data, MOPT_DTYPE_F64, mem, p->n_mem);
    int64_t *len = off + nn, *stack = len + nn;
    if ((st = tree_walk(ctx, p, p->modes->data, mem, stack, seen, off, len))) goto done;
    ref_tree_ens k = {.n_nodes = nn,
                      .n_roots = p->n_roots,
                      .n_targets = p->n_targets,
                      .feat = p->feat,
                      .t_id = p->t_id,
                      .t_leaf = p->t_leaf,
                      .f_id = p->f_id,
                      .f_leaf = p->f_leaf,
                      .missing_true = p->missing,
                      .roots = p->roots,
                      .leaf_target = p->leaf_target,
                      .mode = p->modes->data,
                      .split = split,
                      .leaf_w = w,
                      .mem = mem,
                      .mem_off = off,
                      .mem_len = len,
                      .agg = p->agg};
    if (ref_tree_ensemble(&k, x, rows, cols, y)) {
        st = op_fail(ctx, MOPT_ERR_INVALID_MODEL, "a tree walk is longer than its nodes");
        goto done;
    }
    ref_cast(MOPT_DTYPE_F64, y, out[0].dtype, out[0].data, (int64_t)n_y);
done:
    mopt_free(x), mopt_free(y), mopt_free(split), mopt_free(w), mopt_free(mem);
    mopt_free(off), mopt_free(seen);
    return st;
}

static const op_def k_ops[] = {
    {"Binarizer", "ai.onnx.ml", 1, 1, 1, 1, binarizer_infer, binarizer_run, NULL,
     OP_PARAMS(binarizer_params, binarizer_parse)},
    {"ArrayFeatureExtractor", "ai.onnx.ml", 2, 2, 1, 1, afe_infer, afe_run, NULL},
    {"TreeEnsemble", "ai.onnx.ml", 1, 1, 1, 1, tree_infer, tree_run, NULL,
     OP_PARAMS(tree_params, tree_parse)},
    {"TfIdfVectorizer", "", 1, 1, 1, 1, tfidf_infer, tfidf_run, NULL,
     OP_PARAMS(tfidf_params, tfidf_parse)},
};

OP_FAMILY(ml, k_ops)
