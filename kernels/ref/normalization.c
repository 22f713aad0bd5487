/*
 * normalization.c — portable reference kernels for the "normalization" op
 * family (declared in ref_normalization.h). Statistics are accumulated in
 * double; softmax subtracts the max. The oracle for faster backends; never
 * sees the IR.
 */
#include <math.h>

#include "kernels/ref/ref_normalization.h"

void ref_batchnorm_f32(int64_t n, int64_t c, int64_t inner, const float *x, const float *scale,
                       const float *bias, const float *mean, const float *var, float eps,
                       float *y) {
    for (int64_t j = 0; j < c; j++) {
        const float a = scale[j] / sqrtf(var[j] + eps);
        const float b = bias[j] - mean[j] * a;
        for (int64_t i = 0; i < n; i++) {
            const float *xp = x + (i * c + j) * inner;
            float *yp = y + (i * c + j) * inner;
            for (int64_t k = 0; k < inner; k++)
                yp[k] = xp[k] * a + b;
        }
    }
}

void ref_batchnorm_stats_f32(int64_t n, int64_t c, int64_t inner, const float *x, float *mean,
                             float *var) {
    double count = (double)n * (double)inner;
    for (int64_t j = 0; j < c; j++) {
        double s = 0.0, q = 0.0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < inner; k++)
                s += x[(i * c + j) * inner + k];
        double m = count > 0 ? s / count : 0.0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < inner; k++) {
                double d = x[(i * c + j) * inner + k] - m;
                q += d * d;
            }
        mean[j] = (float)m;
        var[j] = count > 0 ? (float)(q / count) : 0.0f;
    }
}

/* Mean and 1 / sqrt(var + eps) of v[0..len), two-pass in double. */
static void moments(const float *v, int64_t len, float eps, double *mean, double *inv_std) {
    double s = 0.0;
    for (int64_t k = 0; k < len; k++)
        s += v[k];
    const double m = len > 0 ? s / (double)len : 0.0;
    double q = 0.0;
    for (int64_t k = 0; k < len; k++) {
        const double d = v[k] - m;
        q += d * d;
    }
    *mean = m;
    *inv_std = 1.0 / sqrt((len > 0 ? q / (double)len : 0.0) + (double)eps);
}

void ref_instancenorm_f32(int64_t n, int64_t c, int64_t inner, const float *x, const float *scale,
                          const float *bias, float eps, float *y) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < c; j++) {
            const float *xp = x + (i * c + j) * inner;
            float *yp = y + (i * c + j) * inner;
            double m, r;
            moments(xp, inner, eps, &m, &r);
            const double a = scale[j] * r, b = bias[j] - m * a;
            for (int64_t k = 0; k < inner; k++)
                yp[k] = (float)(xp[k] * a + b);
        }
}

void ref_layernorm_f32(int64_t outer, int64_t inner, const float *x, const float *scale,
                       const float *bias, float eps, float *y, float *mean, float *inv_std) {
    for (int64_t i = 0; i < outer; i++) {
        const float *xp = x + i * inner;
        float *yp = y + i * inner;
        double m, r;
        moments(xp, inner, eps, &m, &r);
        for (int64_t k = 0; k < inner; k++) {
            float v = (float)((xp[k] - m) * r) * scale[k];
            yp[k] = bias ? v + bias[k] : v;
        }
        if (mean) mean[i] = (float)m;
        if (inv_std) inv_std[i] = (float)r;
    }
}

void ref_softmax_f32(int64_t outer, int64_t len, int64_t inner, const float *x, float *y, bool log,
                     float *scratch) {
    float *mx = scratch, *sum = scratch + inner;
    for (int64_t o = 0; o < outer; o++) {
        const float *xb = x + o * len * inner;
        float *yb = y + o * len * inner;
        /* rows of `inner` values, reduced along `len`, so that memory streams */
        for (int64_t i = 0; i < inner; i++)
            mx[i] = -INFINITY, sum[i] = 0.0f;
        for (int64_t k = 0; k < len; k++) {
            const float *xr = xb + k * inner;
            for (int64_t i = 0; i < inner; i++)
                if (xr[i] > mx[i]) mx[i] = xr[i];
        }
        for (int64_t k = 0; k < len; k++) {
            const float *xr = xb + k * inner;
            float *yr = yb + k * inner;
            for (int64_t i = 0; i < inner; i++) {
                const float e = expf(xr[i] - mx[i]);
                if (!log) yr[i] = e;
                sum[i] += e;
            }
        }
        if (log) {
            for (int64_t i = 0; i < inner; i++)
                sum[i] = mx[i] + logf(sum[i]);
            for (int64_t k = 0; k < len; k++) {
                const float *xr = xb + k * inner;
                float *yr = yb + k * inner;
                for (int64_t i = 0; i < inner; i++)
                    yr[i] = xr[i] - sum[i];
            }
        } else {
            for (int64_t i = 0; i < inner; i++)
                sum[i] = 1.0f / sum[i];
            for (int64_t k = 0; k < len; k++) {
                float *yr = yb + k * inner;
                for (int64_t i = 0; i < inner; i++)
                    yr[i] *= sum[i];
            }
        }
    }
}

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
