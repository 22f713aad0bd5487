/*
 * ref_tensor_ops.h — reference kernels of the "tensor_ops" family: CumSum,
 * CumProd, TopK, Hardmax and the index-moving ops (SpaceToDepth,
 * DepthToSpace, GatherND, ReverseSequence). Elements are moved by size;
 * arithmetic is per dtype.
 */
#ifndef MOPT_KERNELS_REF_TENSOR_OPS_H
#define MOPT_KERNELS_REF_TENSOR_OPS_H

#include <mopt/mopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* x viewed as [outer, len, inner]; running sum (prod) along len. f32, f64,
 * i32, i64, u32, u64. Returns -1 for other dtypes. */
int ref_cumulative(mopt_dtype t, bool prod, bool exclusive, bool reverse, int64_t outer,
                   int64_t len, int64_t inner, const void *x, void *y);

/* TopK along len of x [outer, len, inner]: k values and int64 indices
 * ([outer, k, inner]); ties keep the lower index first. f32 f64 i8..u64.
 * scratch holds len int64. Returns -1 for other dtypes. */
int ref_topk(mopt_dtype t, bool largest, int64_t outer, int64_t len, int64_t inner, int64_t k,
             const void *x, void *values, int64_t *indices, int64_t *scratch);

/* Hardmax along len of f32 x [outer, len, inner]: 1 at the first maximum. */
void ref_hardmax(int64_t outer, int64_t len, int64_t inner, const float *x, float *y);

/* DepthToSpace (to_space) or SpaceToDepth of [n, c, h, w] (input dims),
 * mode crd (else dcr), elements of es bytes. */
void ref_depth_space(bool to_space, bool crd, int64_t b, int64_t n, int64_t c, int64_t h, int64_t w,
                     size_t es, const void *x, void *y);

#endif
