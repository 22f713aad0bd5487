/*
 * ref_cumulative.h — reference kernels of the "cumulative" op family
 * (lib/ops/cumulative.c): CumSum, CumProd.
 */
#ifndef MOPT_KERNELS_REF_CUMULATIVE_H
#define MOPT_KERNELS_REF_CUMULATIVE_H

#include <mopt/mopt.h>
#include <stdbool.h>
#include <stdint.h>

/* x viewed as [outer, len, inner]; running sum (prod) along len. f32, f64,
 * i32, i64, u32, u64. Returns -1 for other dtypes. */
int ref_cumulative(mopt_dtype t, bool prod, bool exclusive, bool reverse, int64_t outer,
                   int64_t len, int64_t inner, const void *x, void *y);

#endif
