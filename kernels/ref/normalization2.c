/*
 * normalization2.c — reference kernels of the "normalization2" op family
 * (ref_normalization2.h).
 */
#include "kernels/ref/ref_normalization2.h"

#include <math.h>

void ref_rms_norm(int64_t outer, int64_t inner, float eps, const float *x, float *y) {
    for (int64_t o = 0; o < outer; o++) {
        const float *xo = x + o * inner;
        double ss = 0;
        for (int64_t i = 0; i < inner; i++)
            ss += (double)xo[i] * xo[i];
        double r = 1.0 / sqrt(ss / (double)(inner > 0 ? inner : 1) + eps);
        for (int64_t i = 0; i < inner; i++)
            y[o * inner + i] = (float)(xo[i] * r);
    }
}

void ref_group_norm(int64_t n, int64_t c, int64_t spatial, int64_t groups, float eps,
                    const float *scale, const float *bias, int per_group, const float *x,
                    float *y) {
    int64_t cg = c / groups, len = cg * spatial;
    for (int64_t b = 0; b < n; b++)
        for (int64_t g = 0; g < groups; g++) {
            const float *xg = x + (b * c + g * cg) * spatial;
            float *yg = y + (b * c + g * cg) * spatial;
            double m = 0, v = 0;
            for (int64_t i = 0; i < len; i++)
                m += xg[i];
            m /= (double)(len > 0 ? len : 1);
            for (int64_t i = 0; i < len; i++)
                v += ((double)xg[i] - m) * ((double)xg[i] - m);
            v /= (double)(len > 0 ? len : 1);
            double r = 1.0 / sqrt(v + eps);
            for (int64_t ch = 0; ch < cg; ch++) {
                int64_t k = per_group ? g : g * cg + ch;
                for (int64_t s = 0; s < spatial; s++) {
                    int64_t i = ch * spatial + s;
                    yg[i] = (float)(((double)xg[i] - m) * r * scale[k] + bias[k]);
                }
            }
        }
}

void ref_lp_norm(int64_t outer, int64_t len, int64_t inner, int p, const float *x, float *y) {
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *xo = x + o * len * inner + i;
            float *yo = y + o * len * inner + i;
            double s = 0;
            for (int64_t k = 0; k < len; k++)
                s += p == 1 ? fabs((double)xo[k * inner]) : (double)xo[k * inner] * xo[k * inner];
            if (p == 2) s = sqrt(s);
            for (int64_t k = 0; k < len; k++)
                yo[k * inner] = s == 0 ? 0.0f : (float)(xo[k * inner] / s);
        }
}
