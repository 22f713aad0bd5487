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

#endif
