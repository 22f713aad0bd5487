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

#endif
