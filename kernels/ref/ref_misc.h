/*
 * ref_misc.h — reference kernels of the "misc" op family: window
 * functions, LRN, Det, SwiGLU.
 */
#ifndef MOPT_KERNELS_REF_MISC_H
#define MOPT_KERNELS_REF_MISC_H

#include <stdint.h>

typedef enum ref_window { REF_WIN_HANN, REF_WIN_HAMMING, REF_WIN_BLACKMAN } ref_window;

/* n values of the window in double (periodic: N = n, else n - 1). */
void ref_window_fn(ref_window w, int64_t n, int periodic, double *y);
/* LRN over channels of x [n, c, spatial]. */
void ref_lrn(int64_t n, int64_t c, int64_t spatial, int64_t size, double alpha, double beta,
             double bias, const float *x, float *y);
/* Determinants of count m x m matrices (LU with partial pivoting, double). */
void ref_det(int64_t count, int64_t m, const double *x, double *y, double *scratch);
/* y = a * sigmoid(alpha * a) * b over n elements. */
void ref_swiglu(int64_t n, double alpha, const float *a, const float *b, float *y);

#endif
