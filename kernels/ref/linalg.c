/*
 * linalg.c — reference kernels of the "linalg" op family (ref_linalg.h).
 */
#include "kernels/ref/ref_linalg.h"

#include <math.h>
#include <string.h>

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
