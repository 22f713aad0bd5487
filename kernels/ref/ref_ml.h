/*
 * ref_ml.h — reference kernels of the "ml" op family (ONNX's ai.onnx.ml
 * domain): Binarizer and ArrayFeatureExtractor. Never sees the IR.
 */
#ifndef MOPT_KERNELS_REF_ML_H
#define MOPT_KERNELS_REF_ML_H

#include <mopt/mopt.h>
#include <stdint.h>

/* y = x > threshold ? 1 : 0 for n elements of dtype t (f32, f64, i32 or
 * i64; NaN gives 0). Returns 0, or -1 for another dtype. */
int ref_binarizer(mopt_dtype t, const void *x, double threshold, void *y, int64_t n);

/* y[r, k] = x[r, idx[k]] for x viewed as [rows, cols] of esize-byte
 * elements; every idx must lie in [0, cols) (checked by the caller). */
void ref_array_feature_extract(const void *x, int64_t rows, int64_t cols, const int64_t *idx,
                               int64_t n_idx, size_t esize, void *y);

/* TfIdfVectorizer over integer tokens. The pool holds the n-grams:
 * those of size n are pool[counts[n-1] .. counts[n]) (the last up to
 * n_pool), n tokens each; the g-th gram of the pool (all sizes, in order)
 * is counted into column out_idx[g]; only sizes min_n..max_n are counted
 * (counts must rise within the pool: checked by the caller).
 * For each of `rows` rows of `cols` tokens (x as i32 or i64 by is64), for
 * skip distances 1..max_skip+1 and each start position, the tokens at
 * start, start + d, ... form the candidate grams (unigrams with d = 1
 * only, as ONNX's reference); y [rows, out_size] gets the counts (mode 0
 * TF), weight-or-1 when counted (1 IDF) or count times weight-or-1 (2
 * TFIDF). weights may be NULL. */
typedef struct ref_tfidf_params {
    const int64_t *pool, *counts, *out_idx;
    int64_t n_pool, n_counts, min_n, max_n, max_skip, out_size;
    const float *weights;
    int mode;
} ref_tfidf_params;
void ref_tfidf(const ref_tfidf_params *p, const void *x, int is64, int64_t rows, int64_t cols,
               float *y);

/* ai.onnx.ml TreeEnsemble (opset 5), values in double. Node i compares
 * x[feat[i]] with split[i] by mode[i] (0 <=, 1 <, 2 >=, 3 >, 4 ==, 5 !=,
 * 6 member of mem[mem_off[i] .. + mem_len[i]]); NaN goes the true way when
 * missing_true[i] (may be NULL). The true/false successor is node or leaf
 * t_id/f_id as t_leaf/f_leaf say. Each root gives one leaf: its weight
 * goes to target leaf_target of y [rows, n_targets] by agg (0 average,
 * 1 sum, 2 min, 3 max; targets no tree reaches keep 0, or the double
 * range's max (min) as ONNX's reference). Indices must be in range
 * (checked by the caller). Returns 0, or -1 when a walk is longer than
 * n_nodes (a cycle). */
typedef struct ref_tree_ens {
    int64_t n_nodes, n_roots, n_targets;
    const int64_t *feat, *t_id, *t_leaf, *f_id, *f_leaf, *missing_true, *roots, *leaf_target;
    const uint8_t *mode;
    const double *split, *leaf_w, *mem;
    const int64_t *mem_off, *mem_len;
    int agg;
} ref_tree_ens;
int ref_tree_ensemble(const ref_tree_ens *p, const double *x, int64_t rows, int64_t cols,
                      double *y);

#endif
