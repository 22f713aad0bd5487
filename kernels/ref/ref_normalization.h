/*
 * ref_normalization.h — reference kernels for the "normalization" op family
 * (BatchNormalization, InstanceNormalization, LayerNormalization, Softmax,
 * LogSoftmax). Kernels see only pointers, shapes and small parameter structs,
 * never the IR.
 */
#ifndef MOPT_KERNELS_REF_NORMALIZATION_H
#define MOPT_KERNELS_REF_NORMALIZATION_H

#include <stdbool.h>

#include "kernels/ref/ref.h"

/* Inference batch norm: x and y are [n, c, inner];
 * y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c]. */
void ref_batchnorm_f32(int64_t n, int64_t c, int64_t inner, const float *x, const float *scale,
                       const float *bias, const float *mean, const float *var, float eps, float *y);

/* Instance norm: x and y are [n, c, inner], statistics per (n, c) plane. */
void ref_instancenorm_f32(int64_t n, int64_t c, int64_t inner, const float *x, const float *scale,
                          const float *bias, float eps, float *y);

/* Layer norm over rows: x and y are [outer, inner]; scale and bias (NULL:
 * none) are [inner]. mean and inv_std (each may be NULL) receive [outer]. */
void ref_layernorm_f32(int64_t outer, int64_t inner, const float *x, const float *scale,
                       const float *bias, float eps, float *y, float *mean, float *inv_std);

/* Softmax (or log-softmax when `log`) of x viewed as [outer, len, inner]
 * along the middle axis, max-subtracted for stability. scratch holds
 * 2 * inner floats. */
void ref_softmax_f32(int64_t outer, int64_t len, int64_t inner, const float *x, float *y, bool log,
                     float *scratch);

#endif
