/*
 * ref_spatial.h — reference kernels of the "spatial" op family:
 * ConvTranspose and LpPool over 1 to 3 spatial dims (f32).
 */
#ifndef MOPT_KERNELS_REF_SPATIAL_H
#define MOPT_KERNELS_REF_SPATIAL_H

#include <stdint.h>

#define REF_SPATIAL_MAX 6

typedef struct ref_spatial {
    int nd; /* spatial dims */
    int64_t in[REF_SPATIAL_MAX], out[REF_SPATIAL_MAX], k[REF_SPATIAL_MAX];
    int64_t stride[REF_SPATIAL_MAX], dil[REF_SPATIAL_MAX], pad[REF_SPATIAL_MAX]; /* pad: begin */
} ref_spatial;

/* y [n, m, out...] = conv_transpose(x [n, c, in...], w [c, m/group, k...]) + b[m] (b may be
 * NULL). */
void ref_conv_transpose(const ref_spatial *g, int64_t n, int64_t c, int64_t m, int64_t group,
                        const float *x, const float *w, const float *b, float *y);
/* y [n, c, out...] = (sum over the window of |x|^p)^(1/p); padding counts as 0. */
void ref_lp_pool(const ref_spatial *g, int64_t nc, double p, const float *x, float *y);

#endif
