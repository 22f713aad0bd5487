/*
 * ref_normalization.h — reference kernels for the "normalization" op family
 * (BatchNormalization, InstanceNormalization, LayerNormalization,
 * RMSNormalization, GroupNormalization, LpNormalization, Softmax,
 * LogSoftmax; MeanVarianceNormalization is computed in lib/ops). Kernels see
 * only pointers, shapes and small parameter structs, never the IR.
 */
#ifndef MOPT_KERNELS_REF_NORMALIZATION_H
#define MOPT_KERNELS_REF_NORMALIZATION_H

#include <stdbool.h>

#include "kernels/ref/ref.h"

/* Inference batch norm: x and y are [n, c, inner];
 * y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c]. */
void ref_batchnorm_f32(int64_t n, int64_t c, int64_t inner, const float *x, const float *scale,
                       const float *bias, const float *mean, const float *var, float eps, float *y);

/* Training batch norm's statistics of x [n, c, inner] per channel: mean and
 * population variance (computed in double, two passes). */
void ref_batchnorm_stats_f32(int64_t n, int64_t c, int64_t inner, const float *x, float *mean,
                             float *var);

/* Instance norm: x and y are [n, c, inner], statistics per (n, c) plane. */
void ref_instancenorm_f32(int64_t n, int64_t c, int64_t inner, const float *x, const float *scale,
                          const float *bias, float eps, float *y);

/* Layer norm over rows: x and y are [outer, inner]; scale and bias (NULL:
 * none) are [inner]. mean and inv_std (each may be NULL) receive [outer]. */
void ref_layernorm_f32(int64_t outer, int64_t inner, const float *x, const float *scale,
                       const float *bias, float eps, float *y, float *mean, float *inv_std);

/* x viewed as [outer, inner]: y = x / sqrt(mean(x^2 over inner) + eps)
 * (RMSNormalization; the caller multiplies by the scale). */
void ref_rms_norm(int64_t outer, int64_t inner, float eps, const float *x, float *y);

/* x [n, c, spatial]: statistics over groups of c/groups channels; scale and
 * bias per channel (per_group: per group). */
void ref_group_norm(int64_t n, int64_t c, int64_t spatial, int64_t groups, float eps,
                    const float *scale, const float *bias, int per_group, const float *x, float *y);

/* x viewed as [outer, len, inner]: y = x / ||x||_p along len (p 1 or 2;
 * a zero norm gives 0). */
void ref_lp_norm(int64_t outer, int64_t len, int64_t inner, int p, const float *x, float *y);

/* Softmax (or log-softmax when `log`) of x viewed as [outer, len, inner]
 * along the middle axis, max-subtracted for stability. scratch holds
 * 2 * inner floats. */
void ref_softmax_f32(int64_t outer, int64_t len, int64_t inner, const float *x, float *y, bool log,
                     float *scratch);

#endif
