/*
 * bf16cvt-avx512bf16.c — bf16cvt.h: array conversions between f32 and bf16,
 * on AVX512-BF16 when built with it (kernels/meson.build) and the CPU has it
 * (cpu_get()), else scalar (core/half.h).
 */
#include "kernels/cpu/bf16cvt.h"

#include "core/cpu.h"
#include "core/half.h"

#if defined(__AVX512F__) && defined(__AVX512BF16__)
#include <immintrin.h>

static void to_bf16_avx512(const float *x, uint16_t *y, int64_t n) {
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512i v =
            (__m512i)_mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(x + i));
        _mm512_storeu_si512((void *)(y + i), v);
    }
    for (; i < n; i += 16) {
        int64_t r = n - i;
        __mmask16 m = r >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << r) - 1);
        __m256i v = (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, x + i));
        _mm256_mask_storeu_epi16(y + i, m, v);
    }
}

static void to_f32_avx512(const uint16_t *x, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i += 16) {
        int64_t r = n - i;
        __mmask16 m = r >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << r) - 1);
        __m512i w = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, x + i));
        _mm512_mask_storeu_ps(y + i, m, _mm512_castsi512_ps(_mm512_slli_epi32(w, 16)));
    }
}

bool cpu_bf16cvt_fast(void) { return cpu_get()->avx512_bf16; }
#else
bool cpu_bf16cvt_fast(void) { return false; }
#endif

/* A public conversion: FAST when built with AVX512-BF16 and the CPU has it,
 * else SCALAR element by element. */
#if defined(__AVX512F__) && defined(__AVX512BF16__)
#define CVT_FAST(FAST)                                                                             \
    if (cpu_get()->avx512_bf16) {                                                                  \
        FAST(x, y, n);                                                                             \
        return;                                                                                    \
    }
#else
#define CVT_FAST(FAST)
#endif
#define DEFINE_CVT(NAME, TX, TY, FAST, SCALAR)                                                     \
    void NAME(const TX *x, TY *y, int64_t n) {                                                     \
        CVT_FAST(FAST)                                                                             \
        for (int64_t i = 0; i < n; i++)                                                            \
            y[i] = SCALAR(x[i]);                                                                   \
    }

DEFINE_CVT(cpu_f32_to_bf16, float, uint16_t, to_bf16_avx512, bf16_from_f32)
DEFINE_CVT(cpu_bf16_to_f32, uint16_t, float, to_f32_avx512, bf16_to_f32)
