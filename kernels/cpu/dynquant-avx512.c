/*
 * dynquant-avx512.c — DynamicQuantizeLinear's min/max and quantization
 * passes on AVX-512 (dynquant.h). vmaxps/vminps return their second operand
 * when either is NaN, so max(x, acc) is exactly the scalar
 * "x > acc ? x : acc"; the division is IEEE like the scalar one and
 * vrndscaleps rounds half to even like nearbyintf in the default mode.
 */
#include <immintrin.h>

#include "kernels/cpu/dynquant.h"

void cpu_dyn_minmax_f32_avx512(const float *x, int64_t n, float *mn, float *mx) {
    __m512 lo0 = _mm512_setzero_ps(), lo1 = lo0, hi0 = lo0, hi1 = lo0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512 a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16);
        lo0 = _mm512_min_ps(a, lo0), hi0 = _mm512_max_ps(a, hi0);
        lo1 = _mm512_min_ps(b, lo1), hi1 = _mm512_max_ps(b, hi1);
    }
    if (i < n) {
        /* masked-off lanes read 0, which changes neither */
        const __mmask16 m0 = (__mmask16)(n - i >= 16 ? 0xFFFF : (1u << (n - i)) - 1);
        const __m512 a = _mm512_maskz_loadu_ps(m0, x + i);
        lo0 = _mm512_min_ps(a, lo0), hi0 = _mm512_max_ps(a, hi0);
        if (n - i > 16) {
            const __mmask16 m1 = (__mmask16)((1u << (n - i - 16)) - 1);
            const __m512 b = _mm512_maskz_loadu_ps(m1, x + i + 16);
            lo1 = _mm512_min_ps(b, lo1), hi1 = _mm512_max_ps(b, hi1);
        }
    }
    /* no lane holds NaN or -0, so the order of the final folds does not matter */
    *mn = _mm512_reduce_min_ps(_mm512_min_ps(lo0, lo1));
    *mx = _mm512_reduce_max_ps(_mm512_max_ps(hi0, hi1));
}

static inline __m128i dq16(__m512 x, __m512 s, __m512 z);

void cpu_quantize_u8_cl_avx512(const float *x, int64_t rows, int64_t C, const float *scale,
                               float zp, uint8_t *y) {
    const __m512 z = _mm512_set1_ps(zp), one = _mm512_set1_ps(1.0f);
    const int64_t full = C / 16 * 16;
    const __mmask16 m = (__mmask16)((1u << (C - full)) - 1);
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * C;
        uint8_t *yr = y + r * C;
        for (int64_t c = 0; c < full; c += 16)
            _mm_storeu_si128((__m128i *)(yr + c),
                             dq16(_mm512_loadu_ps(xr + c), _mm512_loadu_ps(scale + c), z));
        if (m) /* masked-off lanes divide 0 by 1 and are not stored */
            _mm_mask_storeu_epi8(yr + full, m,
                                 dq16(_mm512_maskz_loadu_ps(m, xr + full),
                                      _mm512_mask_loadu_ps(one, m, scale + full), z));
    }
}

static inline __m128i dq16(__m512 x, __m512 s, __m512 z) {
    __m512 v =
        _mm512_roundscale_ps(_mm512_div_ps(x, s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v = _mm512_add_ps(v, z);
    /* max(v, 0) is 0 for a NaN v, then the clamp to 255 */
    v = _mm512_min_ps(_mm512_max_ps(v, _mm512_setzero_ps()), _mm512_set1_ps(255.0f));
    return _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(v));
}

void cpu_dyn_quantize_u8_avx512(const float *x, int64_t n, float scale, float zp, uint8_t *y) {
    const __m512 s = _mm512_set1_ps(scale), z = _mm512_set1_ps(zp);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm_storeu_si128((__m128i *)(y + i), dq16(_mm512_loadu_ps(x + i), s, z));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm_mask_storeu_epi8(y + i, m, dq16(_mm512_maskz_loadu_ps(m, x + i), s, z));
    }
}
