/*
 * misc.c — reference kernels of the "misc" op family (ref_misc.h).
 */
#include "kernels/ref/ref_misc.h"

#include <math.h>
#include <string.h>

void ref_window_fn(ref_window w, int64_t n, int periodic, double *y) {
    double N = periodic ? (double)n : (double)(n - 1);
    for (int64_t i = 0; i < n; i++) {
        double k = (double)i;
        switch (w) {
        case REF_WIN_HANN: {
            double s = sin(k * M_PI / N);
            y[i] = s * s;
            break;
        }
        case REF_WIN_HAMMING: {
            double a = 25.0 / 46.0;
            y[i] = a - cos(k * M_PI * 2 / N) * (1 - a);
            break;
        }
        default:
            y[i] = cos(k * (M_PI * 2) / N) * -0.5 + cos(k * (M_PI * 4) / N) * 0.08 + 0.42;
            break;
        }
    }
}

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

void ref_det(int64_t count, int64_t m, const double *x, double *y, double *a) {
    for (int64_t t = 0; t < count; t++) {
        memcpy(a, x + t * m * m, (size_t)(m * m) * sizeof(double));
        double det = 1;
        for (int64_t col = 0; col < m; col++) {
            int64_t piv = col;
            for (int64_t r = col + 1; r < m; r++)
                if (fabs(a[r * m + col]) > fabs(a[piv * m + col])) piv = r;
            if (a[piv * m + col] == 0) {
                det = 0;
                break;
            }
            if (piv != col) {
                for (int64_t k = 0; k < m; k++) {
                    double tmp = a[col * m + k];
                    a[col * m + k] = a[piv * m + k];
                    a[piv * m + k] = tmp;
                }
                det = -det;
            }
            det *= a[col * m + col];
            for (int64_t r = col + 1; r < m; r++) {
                double f = a[r * m + col] / a[col * m + col];
                for (int64_t k = col; k < m; k++)
                    a[r * m + k] -= f * a[col * m + k];
            }
        }
        y[t] = det;
    }
}

void ref_swiglu(int64_t n, double alpha, const float *a, const float *b, float *y) {
    for (int64_t i = 0; i < n; i++) {
        float sg = (float)(1.0 / (1.0 + exp(-alpha * a[i])));
        y[i] = (a[i] * sg) * b[i];
    }
}
