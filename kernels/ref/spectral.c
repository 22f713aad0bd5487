/*
 * spectral.c — reference kernels of the "spectral" op family
 * (ref_spectral.h): FFT/DFT in double, DFT along an axis, STFT, mel
 * filter bank.
 */
#include "kernels/ref/ref_spectral.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "core/alloc.h"

static bool is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

int ref_fft_init(ref_fft *f, int64_t n) {
    f->n = n;
    f->tw = mopt_malloc((size_t)n * 2 * sizeof(double));
    f->work = mopt_malloc((size_t)n * 4 * sizeof(double));
    if (!f->tw || !f->work) return -1;
    for (int64_t k = 0; k < n; k++) {
        double a = 2.0 * M_PI * (double)k / (double)n;
        f->tw[2 * k] = cos(a);
        f->tw[2 * k + 1] = sin(a);
    }
    return 0;
}

void ref_fft_free(ref_fft *f) {
    mopt_free(f->tw);
    mopt_free(f->work);
    f->tw = f->work = NULL;
}

/* Iterative radix-2 (n a power of two). */
static void fft_pow2(const ref_fft *f, double sign, const double *x, double *y) {
    int64_t n = f->n;
    int bits = 0;
    while (((int64_t)1 << bits) < n)
        bits++;
    for (int64_t i = 0; i < n; i++) {
        int64_t r = 0;
        for (int b = 0; b < bits; b++)
            r |= ((i >> b) & 1) << (bits - 1 - b);
        y[2 * r] = x[2 * i];
        y[2 * r + 1] = x[2 * i + 1];
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
        int64_t half = len / 2, step = n / len;
        for (int64_t s = 0; s < n; s += len) {
            for (int64_t k = 0; k < half; k++) {
                double wr = f->tw[2 * k * step], wi = sign * f->tw[2 * k * step + 1];
                double *a = y + 2 * (s + k), *b = y + 2 * (s + k + half);
                double tr = b[0] * wr - b[1] * wi, ti = b[0] * wi + b[1] * wr;
                b[0] = a[0] - tr;
                b[1] = a[1] - ti;
                a[0] += tr;
                a[1] += ti;
            }
        }
    }
}

/* Direct O(n^2) DFT with the exact twiddle of (j k mod n). */
static void dft_direct(const ref_fft *f, double sign, const double *x, double *y) {
    int64_t n = f->n;
    for (int64_t k = 0; k < n; k++) {
        double sr = 0, si = 0;
        int64_t idx = 0;
        for (int64_t j = 0; j < n; j++) {
            double wr = f->tw[2 * idx], wi = sign * f->tw[2 * idx + 1];
            sr += x[2 * j] * wr - x[2 * j + 1] * wi;
            si += x[2 * j] * wi + x[2 * j + 1] * wr;
            idx += k;
            if (idx >= n) idx -= n;
        }
        y[2 * k] = sr;
        y[2 * k + 1] = si;
    }
}

void ref_fft_run(const ref_fft *f, bool inverse, const double *x, double *y) {
    double sign = inverse ? 1.0 : -1.0;
    if (is_pow2(f->n))
        fft_pow2(f, sign, x, y);
    else
        dft_direct(f, sign, x, y);
    if (inverse) {
        double s = 1.0 / (double)f->n;
        for (int64_t k = 0; k < 2 * f->n; k++)
            y[k] *= s;
    }
}

void ref_dft_f32(const ref_dft_params *p, const ref_fft *f, const float *x, float *y) {
    int64_t n = f->n;
    double *a = f->work, *b = f->work + 2 * n;
    int64_t c_out = p->inverse && p->onesided ? 1 : 2;
    int64_t take = p->len_in < n ? p->len_in : n;
    for (int64_t o = 0; o < p->outer; o++) {
        for (int64_t i = 0; i < p->inner; i++) {
            const float *xs = x + (o * p->len_in * p->inner + i) * p->c_in;
            int64_t xstride = p->inner * p->c_in;
            memset(a, 0, (size_t)(2 * n) * sizeof(double));
            if (p->inverse && p->onesided) {
                /* Hermitian extension of bins 0 .. n/2 (numpy's irfft) */
                int64_t half = n / 2;
                for (int64_t k = 0; k <= half && k < p->len_in; k++) {
                    double re = xs[k * xstride], im = p->c_in == 2 ? xs[k * xstride + 1] : 0.0;
                    if (k == 0 || (n % 2 == 0 && k == half)) im = 0;
                    a[2 * k] = re;
                    a[2 * k + 1] = im;
                    if (k > 0 && n - k != k) {
                        a[2 * (n - k)] = re;
                        a[2 * (n - k) + 1] = -im;
                    }
                }
            } else {
                for (int64_t j = 0; j < take; j++) {
                    a[2 * j] = xs[j * xstride];
                    a[2 * j + 1] = p->c_in == 2 ? xs[j * xstride + 1] : 0.0;
                }
            }
            ref_fft_run(f, p->inverse, a, b);
            float *ys = y + (o * p->len_out * p->inner + i) * c_out;
            int64_t ystride = p->inner * c_out;
            for (int64_t k = 0; k < p->len_out; k++) {
                ys[k * ystride] = (float)b[2 * k];
                if (c_out == 2) ys[k * ystride + 1] = (float)b[2 * k + 1];
            }
        }
    }
}

void ref_stft_f32(const ref_stft_params *p, const ref_fft *f, const float *x, const float *window,
                  float *y) {
    int64_t n = f->n;
    double *a = f->work, *b = f->work + 2 * n;
    for (int64_t bt = 0; bt < p->batch; bt++) {
        for (int64_t t = 0; t < p->frames; t++) {
            const float *xs = x + (bt * p->len + t * p->step) * p->c_in;
            for (int64_t j = 0; j < n; j++) {
                double w = window ? (double)window[j] : 1.0;
                a[2 * j] = (double)xs[j * p->c_in] * w;
                a[2 * j + 1] = p->c_in == 2 ? (double)xs[j * p->c_in + 1] * w : 0.0;
            }
            ref_fft_run(f, false, a, b);
            float *ys = y + (bt * p->frames + t) * p->bins * 2;
            for (int64_t k = 0; k < 2 * p->bins; k++)
                ys[k] = (float)b[k];
        }
    }
}

static double hz_to_mel(double hz) { return 2595.0 * log1p(hz / 700.0) / log(10.0); }
static double mel_to_hz(double mel) { return 700.0 * expm1(mel / 2595.0 * log(10.0)); }

void ref_mel_weight_matrix(int64_t n_mel, int64_t dft_length, int64_t sample_rate, double lower_hz,
                           double upper_hz, double *out) {
    int64_t rows = dft_length / 2 + 1;
    memset(out, 0, (size_t)(rows * n_mel) * sizeof(double));
    double lo = hz_to_mel(lower_hz), hi = hz_to_mel(upper_hz);
    double step = (hi - lo) / (double)(n_mel + 2);
    for (int64_t m = 0; m < n_mel; m++) {
        int64_t pt[3];
        for (int k = 0; k < 3; k++) {
            double hz = mel_to_hz((double)(m + k) * step + lo);
            double bin = floor((double)(dft_length + 1) * hz / (double)sample_rate);
            const double lim = 1099511627776.0; /* 2^40: keeps the ratios, no overflow */
            pt[k] = (int64_t)(bin < -lim ? -lim : (bin > lim ? lim : bin));
        }
        int64_t left = pt[0], center = pt[1], right = pt[2];
        if (center == left) {
            if (center >= 0 && center < rows) out[center * n_mel + m] = 1.0;
        } else {
            for (int64_t j = left > 0 ? left : 0; j <= center && j < rows; j++)
                out[j * n_mel + m] = (double)(j - left) / (double)(center - left);
        }
        if (right > center)
            for (int64_t j = center > 0 ? center : 0; j < right && j < rows; j++)
                out[j * n_mel + m] = (double)(right - j) / (double)(right - center);
    }
}
