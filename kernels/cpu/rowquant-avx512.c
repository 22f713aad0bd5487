/*
 * rowquant-avx512.c — the int8 matmul's per-row epilogue on AVX-512
 * (rowquant.h): y = s * (y - z * cw[n]) + bias[n], the same operations in
 * the same order as the scalar loop (no fma: results are identical).
 */
#include <immintrin.h>

#include "kernels/cpu/rowquant.h"

void cpu_dequant_row_avx512(float *y, int64_t N, float s, float zs, const float *cw,
                            const float *bias) {
    const __m512 vs = _mm512_set1_ps(s), vz = _mm512_set1_ps(zs);
    for (int64_t n = 0; n < N; n += 16) {
        const __mmask16 k = (__mmask16)(N - n >= 16 ? 0xFFFF : (1u << (N - n)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(k, y + n);
        __m512 c = _mm512_mul_ps(vz, _mm512_maskz_loadu_ps(k, cw + n));
        v = _mm512_mul_ps(vs, _mm512_sub_ps(v, c));
        v = _mm512_add_ps(v, bias ? _mm512_maskz_loadu_ps(k, bias + n) : _mm512_setzero_ps());
        _mm512_mask_storeu_ps(y + n, k, v);
    }
}
