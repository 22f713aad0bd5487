/*
 * ref_sort.h — reference kernels of the "sort" op family (lib/ops/sort.c):
 * TopK.
 */
#ifndef MOPT_KERNELS_REF_SORT_H
#define MOPT_KERNELS_REF_SORT_H

#include <mopt/mopt.h>
#include <stdbool.h>
#include <stdint.h>

/* TopK along len of x [outer, len, inner]: k values and int64 indices
 * ([outer, k, inner]); ties keep the lower index first. f32 f64 i8..u64.
 * scratch holds len int64. Returns -1 for other dtypes. */
int ref_topk(mopt_dtype t, bool largest, int64_t outer, int64_t len, int64_t inner, int64_t k,
             const void *x, void *values, int64_t *indices, int64_t *scratch);

#endif
