/*
 * ml.c — reference kernels of the "ml" op family (ref_ml.h).
 */
#include "kernels/ref/ref_ml.h"

#include <string.h>

int ref_binarizer(mopt_dtype t, const void *x, double threshold, void *y, int64_t n) {
    switch (t) {
    case MOPT_DTYPE_F32:
        for (int64_t i = 0; i < n; i++)
            ((float *)y)[i] = (double)((const float *)x)[i] > threshold ? 1.0f : 0.0f;
        return 0;
    case MOPT_DTYPE_F64:
        for (int64_t i = 0; i < n; i++)
            ((double *)y)[i] = ((const double *)x)[i] > threshold ? 1.0 : 0.0;
        return 0;
    case MOPT_DTYPE_I32:
        for (int64_t i = 0; i < n; i++)
            ((int32_t *)y)[i] = (double)((const int32_t *)x)[i] > threshold;
        return 0;
    case MOPT_DTYPE_I64:
        for (int64_t i = 0; i < n; i++)
            ((int64_t *)y)[i] = (double)((const int64_t *)x)[i] > threshold;
        return 0;
    default: return -1;
    }
}

void ref_array_feature_extract(const void *x, int64_t rows, int64_t cols, const int64_t *idx,
                               int64_t n_idx, size_t esize, void *y) {
    const unsigned char *s = x;
    unsigned char *d = y;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t k = 0; k < n_idx; k++)
            memcpy(d + (size_t)(r * n_idx + k) * esize, s + (size_t)(r * cols + idx[k]) * esize,
                   esize);
}
