/*
 * ref_conv_transpose.h — reference kernel of ConvTranspose over 1 to 3
 * spatial dims (f32).
 */
#ifndef MOPT_KERNELS_REF_CONV_TRANSPOSE_H
#define MOPT_KERNELS_REF_CONV_TRANSPOSE_H

#include <stdint.h>

#include "kernels/ref/ref_conv.h" /* ref_window_nd */

/* y [n, m, out...] = conv_transpose(x [n, c, in...], w [c, m/group, k...]) + b[m] (b may be
 * NULL). */
void ref_conv_transpose(const ref_window_nd *g, int64_t n, int64_t c, int64_t m, int64_t group,
                        const float *x, const float *w, const float *b, float *y);

#endif
