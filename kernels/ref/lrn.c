/*
 * lrn.c — reference kernel of LRN (ref_lrn.h).
 */
#include "kernels/ref/ref_lrn.h"

#include <math.h>

void ref_lrn(int64_t n, int64_t c, int64_t spatial, int64_t size, double alpha, double beta,
             double bias, const float *x, float *y) {
    int64_t c1 = (size - 1) / 2, c2 = (size - 1 + 1) / 2 + 1; /* floor, ceil + 1 */
    for (int64_t b = 0; b < n; b++)
        for (int64_t ch = 0; ch < c; ch++) {
            int64_t lo = ch - c1 < 0 ? 0 : ch - c1, hi = ch + c2 > c ? c : ch + c2;
            for (int64_t s = 0; s < spatial; s++) {
                double sq = 0;
                for (int64_t k = lo; k < hi; k++) {
                    double v = x[(b * c + k) * spatial + s];
                    sq += v * v;
                }
                int64_t e = (b * c + ch) * spatial + s;
                y[e] = (float)(x[e] / pow(bias + alpha / (double)size * sq, beta));
            }
        }
}
