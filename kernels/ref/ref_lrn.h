/*
 * ref_lrn.h — reference kernel of LRN (lib/ops/lrn.c).
 */
#ifndef MOPT_KERNELS_REF_LRN_H
#define MOPT_KERNELS_REF_LRN_H

#include <stdint.h>

/* LRN over channels of x [n, c, spatial]. */
void ref_lrn(int64_t n, int64_t c, int64_t spatial, int64_t size, double alpha, double beta,
             double bias, const float *x, float *y);

#endif
