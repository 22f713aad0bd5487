/*
 * rowquant-avx512.c — the int8 matmul's per-row epilogue on AVX-512
 * (rowquant.h): y = s * (y - z * cw[n]) + bias[n], the same operations in
 * the same order as the scalar loop (no fma: results are identical); and
 * its fast erf GELU (cpu_gelu_erf_fast_avx512); and the whole epilogue of
 * one row in one pass (cpu_epilogue_row_avx512).
 */
#include <immintrin.h>

#include "kernels/cpu/rowquant.h"

/* Lanes k of y[n..] dequantized: s * (y - zs * cw[n]) + bias[n] (bias may
 * be NULL), in the scalar loop's order. */
static inline __m512 dequant16(__mmask16 k, const float *y, __m512 vs, __m512 vz, const float *cw,
                               const float *bias, int64_t n) {
    __m512 v = _mm512_maskz_loadu_ps(k, y + n);
    __m512 c = _mm512_mul_ps(vz, _mm512_maskz_loadu_ps(k, cw + n));
    v = _mm512_mul_ps(vs, _mm512_sub_ps(v, c));
    return _mm512_add_ps(v, bias ? _mm512_maskz_loadu_ps(k, bias + n) : _mm512_setzero_ps());
}

void cpu_dequant_row_avx512(float *y, int64_t N, float s, float zs, const float *cw,
                            const float *bias) {
    const __m512 vs = _mm512_set1_ps(s), vz = _mm512_set1_ps(zs);
    for (int64_t n = 0; n < N; n += 16) {
        const __mmask16 k = (__mmask16)(N - n >= 16 ? 0xFFFF : (1u << (N - n)) - 1);
        _mm512_mask_storeu_ps(y + n, k, dequant16(k, y, vs, vz, cw, bias, n));
    }
}

/* x * 0.5 * (1 + erf(x / sqrt 2)) of 16 lanes, erf(z) = z P(z^2) / Q(z^2)
 * on z clamped to [-4, 4]: the rational approximation of Eigen's and XLA's
 * float erf (absolute error 7e-8 in exact arithmetic). The clamps keep NaN
 * (min/max return their second operand). */
static inline __m512 gelu16(__m512 x) {
    const __m512 lo = _mm512_set1_ps(-4.f), hi = _mm512_set1_ps(4.f);
    const __m512 a13 = _mm512_set1_ps(-2.72614225801306e-10f),
                 a11 = _mm512_set1_ps(2.77068142495902e-08f),
                 a9 = _mm512_set1_ps(-2.10102402082508e-06f),
                 a7 = _mm512_set1_ps(-5.69250639462346e-05f),
                 a5 = _mm512_set1_ps(-7.34990630326855e-04f),
                 a3 = _mm512_set1_ps(-2.95459980854025e-03f),
                 a1 = _mm512_set1_ps(-1.60960333262415e-02f);
    const __m512 b8 = _mm512_set1_ps(-1.45660718464996e-05f),
                 b6 = _mm512_set1_ps(-2.13374055278905e-04f),
                 b4 = _mm512_set1_ps(-1.68282697438203e-03f),
                 b2 = _mm512_set1_ps(-7.37332916720468e-03f),
                 b0 = _mm512_set1_ps(-1.42647390514189e-02f);
    const __m512 rsqrt2 = _mm512_set1_ps(0.70710678118654752440f), half = _mm512_set1_ps(0.5f);
    {
        const __m512 z = _mm512_max_ps(lo, _mm512_min_ps(hi, _mm512_mul_ps(x, rsqrt2)));
        const __m512 z2 = _mm512_mul_ps(z, z);
        __m512 p = _mm512_fmadd_ps(a13, z2, a11);
        p = _mm512_fmadd_ps(p, z2, a9);
        p = _mm512_fmadd_ps(p, z2, a7);
        p = _mm512_fmadd_ps(p, z2, a5);
        p = _mm512_fmadd_ps(p, z2, a3);
        p = _mm512_fmadd_ps(p, z2, a1);
        p = _mm512_mul_ps(p, z);
        __m512 q = _mm512_fmadd_ps(b8, z2, b6);
        q = _mm512_fmadd_ps(q, z2, b4);
        q = _mm512_fmadd_ps(q, z2, b2);
        q = _mm512_fmadd_ps(q, z2, b0);
        const __m512 erf = _mm512_div_ps(p, q);
        const __m512 hx = _mm512_mul_ps(half, x);
        return _mm512_fmadd_ps(hx, erf, hx);
    }
}

void cpu_quant_row_u8_avx512(const float *x, int64_t n, float inv, float z, float qmax,
                             uint8_t *q) {
    const __m512 vi = _mm512_set1_ps(inv), vz = _mm512_set1_ps(z), vq = _mm512_set1_ps(qmax);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 k = (__mmask16)(n - i >= 16 ? 0xFFFF : (1u << (n - i)) - 1);
        __m512 v = _mm512_roundscale_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), vi),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        v = _mm512_add_ps(v, vz);
        /* max(v, 0) is 0 for a NaN v, then the clamp to qmax */
        v = _mm512_min_ps(_mm512_max_ps(v, _mm512_setzero_ps()), vq);
        _mm_mask_storeu_epi8(q + i, k, _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(v)));
    }
}

void cpu_gelu_erf_fast_avx512(float *y, int64_t n) {
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 k = (__mmask16)(n - i >= 16 ? 0xFFFF : (1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, k, gelu16(_mm512_maskz_loadu_ps(k, y + i)));
    }
}

void cpu_epilogue_row_avx512(float *y, int64_t N, float s, float zs, const float *cw,
                             const float *bias, const float *res, bool gelu, float *mn, float *mx) {
    const __m512 vs = _mm512_set1_ps(s), vz = _mm512_set1_ps(zs);
    __m512 lo = _mm512_setzero_ps(), hi = lo;
    for (int64_t n = 0; n < N; n += 16) {
        const __mmask16 k = (__mmask16)(N - n >= 16 ? 0xFFFF : (1u << (N - n)) - 1);
        __m512 v = dequant16(k, y, vs, vz, cw, bias, n);
        if (res) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, res + n));
        if (gelu) v = gelu16(v);
        _mm512_mask_storeu_ps(y + n, k, v);
        /* masked-off lanes are 0 (maskz loads: GELU(0) = 0), NaN lanes keep
         * the running value (min/max return their second operand) */
        lo = _mm512_min_ps(v, lo), hi = _mm512_max_ps(v, hi);
    }
    if (mn) *mn = _mm512_reduce_min_ps(lo), *mx = _mm512_reduce_max_ps(hi);
}
