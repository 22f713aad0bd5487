/*
 * ref_reduce.h — reference kernels for the "reduce" op family (Reduce*,
 * ArgMax/ArgMin). Kernels see only pointers, shapes and small parameter
 * structs, never the IR.
 */
#ifndef MOPT_KERNELS_REF_REDUCE_H
#define MOPT_KERNELS_REF_REDUCE_H

#include "kernels/ref/ref.h"

typedef enum ref_reduce_op {
    REF_REDUCE_SUM = 0,
    REF_REDUCE_MEAN = 1,
    REF_REDUCE_MAX = 2,
    REF_REDUCE_MIN = 3,
    REF_REDUCE_PROD = 4,
    REF_REDUCE_L1 = 5,
    REF_REDUCE_L2 = 6,
    REF_REDUCE_SUM_SQUARE = 7,
    REF_REDUCE_LOG_SUM = 8,
    REF_REDUCE_LOG_SUM_EXP = 9
} ref_reduce_op;

/* Highest rank the reduce kernels accept. */
#define REF_REDUCE_MAX_RANK 8

/* Reduces x (row-major, dims[0..rank)) over the axes a with mask[a] != 0;
 * y holds the kept axes in order (keepdims does not change the layout).
 * Empty reductions give the identity of the operation (0, 1, -inf, +inf;
 * NaN for the mean). f32 accumulates in double. */
void ref_reduce_f32(ref_reduce_op op, const float *x, float *y, int32_t rank, const int64_t *dims,
                    const uint8_t *mask);
/* Integer versions: SUM, MAX, MIN, PROD (wrapping arithmetic), SUM_SQUARE,
 * L1. Other ops are a caller error (y is left untouched). */
void ref_reduce_i64(ref_reduce_op op, const int64_t *x, int64_t *y, int32_t rank,
                    const int64_t *dims, const uint8_t *mask);
void ref_reduce_i32(ref_reduce_op op, const int32_t *x, int32_t *y, int32_t rank,
                    const int64_t *dims, const uint8_t *mask);

/* ArgMax (is_max) / ArgMin over the middle axis of x seen as [outer, n, inner]
 * (n >= 1); y is [outer, inner]. Ties pick the first index, or the last with
 * select_last. A NaN wins over any number (numpy's rule). */
void ref_argreduce_f32(const float *x, int64_t *y, int64_t outer, int64_t n, int64_t inner,
                       int is_max, int select_last);
void ref_argreduce_i64(const int64_t *x, int64_t *y, int64_t outer, int64_t n, int64_t inner,
                       int is_max, int select_last);
void ref_argreduce_i32(const int32_t *x, int64_t *y, int64_t outer, int64_t n, int64_t inner,
                       int is_max, int select_last);

/* Hardmax along len of f32 x [outer, len, inner]: 1 at the first maximum. */
void ref_hardmax(int64_t outer, int64_t len, int64_t inner, const float *x, float *y);

#endif
