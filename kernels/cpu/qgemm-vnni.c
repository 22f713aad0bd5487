/*
 * qgemm-vnni.c — cpu_qgemm_u8s8_vnni (qconv.h): the u8 x s8 GEMM of the
 * integer convolution on AVX512-VNNI (vpdpbusd: four u8*s8 products summed
 * into each int32 lane, no saturation, so sums wrap modulo 2^32 exactly as
 * the reference's). Micro-tile: CPU_QGEMM_MR output channels x 32 pixels
 * (24 accumulators); the pixels are the vector lanes, so rows store
 * straight into the NCHW output. Built with its own -m flags
 * (kernels/meson.build); called only when cpu_get() reports VNNI.
 */
#include <immintrin.h>

#include "kernels/cpu/qconv.h"

#if CPU_QGEMM_NR != 32
#error "the VNNI micro-tile is 32 pixels wide"
#endif

static inline __m512i epilogue(__m512i acc, __m512i c, __m512i z, __m512i sx) {
    return _mm512_sub_epi32(_mm512_add_epi32(acc, c), _mm512_mullo_epi32(z, sx));
}

void cpu_qgemm_u8s8_vnni(const uint8_t *a, const int32_t *w, int64_t k4, int64_t np, int64_t m,
                         const int32_t *rowc, const int32_t *zw, const int32_t *sx, int32_t *y,
                         int64_t ldy) {
    enum { MR = CPU_QGEMM_MR };
    for (int64_t p0 = 0; p0 < np; p0 += 32) {
        const int64_t pn = np - p0 < 32 ? np - p0 : 32;
        const __mmask16 k0 = pn >= 16 ? 0xFFFF : (__mmask16)((1u << pn) - 1u);
        const __mmask16 k1 = pn >= 32 ? 0xFFFF : pn <= 16 ? 0 : (__mmask16)((1u << (pn - 16)) - 1u);
        const __m512i sx0 = _mm512_loadu_si512(sx + p0), sx1 = _mm512_loadu_si512(sx + p0 + 16);
        for (int64_t m0 = 0; m0 < m; m0 += MR) {
            const int32_t *wb = w + (m0 / MR) * k4 * MR;
            __m512i c0[MR], c1[MR];
            /* every loop over r fully unrolled: the accumulators stay in registers */
#pragma GCC unroll 12
            for (int r = 0; r < MR; r++)
                c0[r] = c1[r] = _mm512_setzero_si512();
            const uint8_t *ak = a + p0 * 4;
            for (int64_t k = 0; k < k4; k++, ak += CPU_QCONV_TILE * 4, wb += MR) {
                const __m512i a0 = _mm512_loadu_si512(ak), a1 = _mm512_loadu_si512(ak + 64);
#pragma GCC unroll 12
                for (int r = 0; r < MR; r++) {
                    const __m512i wv = _mm512_set1_epi32(wb[r]);
                    c0[r] = _mm512_dpbusd_epi32(c0[r], a0, wv);
                    c1[r] = _mm512_dpbusd_epi32(c1[r], a1, wv);
                }
            }
            const int64_t mn = m - m0 < MR ? m - m0 : MR;
#pragma GCC unroll 12
            for (int r = 0; r < MR; r++) {
                if (r >= mn) break;
                const __m512i c = _mm512_set1_epi32(rowc[m0 + r]),
                              z = _mm512_set1_epi32(zw[m0 + r]);
                int32_t *yr = y + (m0 + r) * ldy + p0;
                _mm512_mask_storeu_epi32(yr, k0, epilogue(c0[r], c, z, sx0));
                _mm512_mask_storeu_epi32(yr + 16, k1, epilogue(c1[r], c, z, sx1));
            }
        }
    }
}
