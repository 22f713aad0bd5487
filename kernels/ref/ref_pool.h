/*
 * ref_pool.h — reference kernels for the "pool" op family (MaxPool,
 * AveragePool, GlobalMaxPool, GlobalAveragePool, LpPool). Kernels see only pointers,
 * shapes and small parameter structs, never the IR.
 */
#ifndef MOPT_KERNELS_REF_POOL_H
#define MOPT_KERNELS_REF_POOL_H

#include <stdbool.h>

#include "kernels/ref/ref.h"
#include "kernels/ref/ref_conv.h" /* REF_WIN_MAX, window geometry */

/* A pooling window over `planes` independent planes (batch * channels) of
 * 1..3 spatial axes, passed as 3-D with leading axes of size 1. pad and
 * pad_end are the begin and end paddings; AveragePool divides by the number
 * of taps inside the input, or with count_include_pad by the number inside
 * the padded input (taps past the end padding, possible with ceil_mode,
 * never count). */
typedef struct ref_pool_params {
    int64_t planes;
    int64_t in[REF_WIN_MAX], out[REF_WIN_MAX], k[REF_WIN_MAX];
    int64_t stride[REF_WIN_MAX], dilation[REF_WIN_MAX];
    int64_t pad[REF_WIN_MAX], pad_end[REF_WIN_MAX];
    bool count_include_pad;
} ref_pool_params;

void ref_maxpool_f32(const ref_pool_params *p, const float *x, float *y);
void ref_avgpool_f32(const ref_pool_params *p, const float *x, float *y);
/* MaxPool with its Indices output: y as ref_maxpool_f32 (the first tap
 * inside the input, then any strictly greater one), idx the flat index of
 * that tap in x (plane offset included), with the spatial axes row-major or,
 * col_major (storage_order=1), column-major. A window with no tap inside the
 * input gets -inf and index -1. */
void ref_maxpool_indices_f32(const ref_pool_params *p, const float *x, float *y, int64_t *idx,
                             bool col_major);
/* y[i] = max or mean of x[i * size .. (i + 1) * size), for i < planes. */
void ref_global_maxpool_f32(int64_t planes, int64_t size, const float *x, float *y);
void ref_global_avgpool_f32(int64_t planes, int64_t size, const float *x, float *y);
/* LpPool: y [nc, out...] = (sum over the window of |x|^p)^(1/p) for each of
 * the nc planes of x [nc, in...]; padding counts as 0. */
void ref_lp_pool(const ref_window_nd *g, int64_t nc, double p, const float *x, float *y);

#endif
