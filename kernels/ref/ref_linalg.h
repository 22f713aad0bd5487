/*
 * ref_linalg.h — reference kernels of the "linalg" op family
 * (lib/ops/linalg.c).
 */
#ifndef MOPT_KERNELS_REF_LINALG_H
#define MOPT_KERNELS_REF_LINALG_H

#include <stdint.h>

/* Determinants of count m x m matrices (LU with partial pivoting, double). */
void ref_det(int64_t count, int64_t m, const double *x, double *y, double *scratch);

#endif
