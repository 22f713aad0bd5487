/*
 * ref_spectral.h — reference kernels of the "spectral" op family
 * (lib/ops/spectral.c): the discrete Fourier transform (any length: radix-2
 * FFT for powers of two, a direct DFT with an exact twiddle table
 * otherwise; double precision inside), DFT along one axis of a real or
 * complex tensor (forward, inverse, one-sided both ways), STFT, and the mel
 * filter bank of MelWeightMatrix. Kernels never see the IR.
 */
#ifndef MOPT_KERNELS_REF_SPECTRAL_H
#define MOPT_KERNELS_REF_SPECTRAL_H

#include <stdbool.h>
#include <stdint.h>

/* A transform of length n: twiddles and scratch, made once per call. */
typedef struct ref_fft {
    int64_t n;
    double *tw;   /* n pairs (cos, sin) of 2 pi k / n */
    double *work; /* 4 n doubles: two complex vectors */
} ref_fft;

/* 0, or -1 when out of memory (f is then safe to free). n >= 1. */
int ref_fft_init(ref_fft *f, int64_t n);
void ref_fft_free(ref_fft *f);

/* y = DFT(x) (e^{-i}) or, inverse, (1/n) sum e^{+i}: x, y are n complex
 * values interleaved (re, im); x and y must not overlap. */
void ref_fft_run(const ref_fft *f, bool inverse, const double *x, double *y);

/* DFT along one axis of x viewed as [outer, len_in, inner, c_in] (c_in 1:
 * real, 2: complex) into y [outer, len_out, inner, c_out]: the signal is
 * the first min(len_in, n) values, zero-padded to n = f->n.
 *  forward:            c_out 2, len_out n (or n/2+1 when onesided)
 *  inverse:            c_out 2, len_out n, scaled by 1/n
 *  inverse + onesided: len_in bins of a Hermitian spectrum -> a real
 *                      signal (c_out 1, len_out n), as numpy's irfft. */
typedef struct ref_dft_params {
    int64_t outer, len_in, inner, c_in, len_out;
    bool inverse, onesided;
} ref_dft_params;
void ref_dft_f32(const ref_dft_params *p, const ref_fft *f, const float *x, float *y);

/* STFT of x [batch, len, c_in] into y [batch, frames, bins, 2]: frame t is
 * x[t * step .. t * step + n) times window (NULL: ones); bins is n or
 * n/2+1 (one-sided). */
typedef struct ref_stft_params {
    int64_t batch, len, c_in, frames, step, bins;
} ref_stft_params;
void ref_stft_f32(const ref_stft_params *p, const ref_fft *f, const float *x, const float *window,
                  float *y);

/* MelWeightMatrix: [dft_length / 2 + 1, n_mel] triangular filters, row
 * major, in double (the ONNX definition: n_mel + 2 points equally spaced
 * in mel between the edges, mapped to DFT bins by
 * floor((dft_length + 1) * hz / sample_rate)). Points outside the matrix
 * are left out. */
void ref_mel_weight_matrix(int64_t n_mel, int64_t dft_length, int64_t sample_rate, double lower_hz,
                           double upper_hz, double *out);

#endif
