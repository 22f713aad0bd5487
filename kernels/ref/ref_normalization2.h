/*
 * ref_normalization2.h — reference kernels of the "normalization2" op
 * family: RMSNormalization, GroupNormalization, LpNormalization,
 * MeanVarianceNormalization (all f32, double accumulators).
 */
#ifndef MOPT_KERNELS_REF_NORMALIZATION2_H
#define MOPT_KERNELS_REF_NORMALIZATION2_H

#include <stdint.h>

/* x viewed as [outer, inner]: y = x / sqrt(mean(x^2 over inner) + eps);
 * then y *= scale[] read with the element strides sstr (rank, dims: X's). */
void ref_rms_norm(int64_t outer, int64_t inner, float eps, const float *x, float *y);

/* x [n, c, spatial]: statistics over groups of c/groups channels; scale and
 * bias per channel (per_group: per group). */
void ref_group_norm(int64_t n, int64_t c, int64_t spatial, int64_t groups, float eps,
                    const float *scale, const float *bias, int per_group, const float *x, float *y);

/* x viewed as [outer, len, inner]: y = x / ||x||_p along len (p 1 or 2;
 * a zero norm gives 0). */
void ref_lp_norm(int64_t outer, int64_t len, int64_t inner, int p, const float *x, float *y);

#endif
