/*
 * loss.c — reference kernels of the "loss" op family (ref_loss.h).
 */
#include "kernels/ref/ref_loss.h"

#include <math.h>

int ref_nll_loss(const ref_nll_params *p, const float *x, const int64_t *target,
                 const float *weight, float *y, int64_t *bad) {
    double sum = 0, wsum = 0;
    for (int64_t i = 0; i < p->n; i++)
        for (int64_t j = 0; j < p->d; j++) {
            int64_t t = target[i * p->d + j];
            float l = 0, w = 0;
            if (!(p->has_ignore && t == p->ignore_index)) {
                if (t < 0 || t >= p->c) {
                    *bad = t;
                    return -1;
                }
                w = weight ? weight[t] : 1.0f;
                l = -x[(i * p->c + t) * p->d + j] * w;
            }
            if (p->reduction == REF_RED_NONE) y[i * p->d + j] = l;
            sum += l;
            wsum += w;
        }
    if (p->reduction == REF_RED_SUM) y[0] = (float)sum;
    if (p->reduction == REF_RED_MEAN) {
        if (weight || p->has_ignore)
            y[0] = (float)(sum / wsum);
        else
            y[0] = (float)(sum / (double)(p->n * p->d));
    }
    return 0;
}

void ref_log_softmax_axis1(int64_t n, int64_t c, int64_t d, const float *x, float *y) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < d; j++) {
            const float *xi = x + i * c * d + j;
            float *yi = y + i * c * d + j;
            double m = -INFINITY, s = 0;
            for (int64_t k = 0; k < c; k++)
                if (xi[k * d] > m) m = xi[k * d];
            for (int64_t k = 0; k < c; k++)
                s += exp((double)xi[k * d] - m);
            double ls = log(s);
            for (int64_t k = 0; k < c; k++)
                yi[k * d] = (float)((double)xi[k * d] - m - ls);
        }
}
