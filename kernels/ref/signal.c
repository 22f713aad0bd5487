/*
 * signal.c — reference kernels of the "signal" op family (ref_signal.h).
 */
#include "kernels/ref/ref_signal.h"

#include <math.h>

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
