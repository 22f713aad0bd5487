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

/* ---- cpu_qrows_u8s8_vnni (qconv.h) ---------------------------------------------
 * R rows (1 or 4, a compile-time constant after inlining) x 4 blocks of 16
 * columns: 4R accumulators, each packed weight vector feeds R vpdpbusd. */

#if CPU_QROWS_NB != 16
#error "the VNNI rows kernel is 16 columns per vector"
#endif

static inline uint32_t qr_quad_at(const uint8_t *a, int64_t K, int64_t k) {
    if (4 * k + 4 <= K) {
        uint32_t v;
        __builtin_memcpy(&v, a + 4 * k, 4);
        return v;
    }
    uint32_t v = 0;
    for (int64_t e = 0; e < 4; e++)
        if (4 * k + e < K) v |= (uint32_t)a[4 * k + e] << (8 * e);
    return v;
}

static inline __attribute__((always_inline)) void qrows_tile(const uint8_t *a, int64_t lda, int R,
                                                             int64_t K, int64_t k4,
                                                             const int8_t *wp, int CB, int32_t *y,
                                                             int64_t ldy) {
    __m512i acc[4][4];
    for (int r = 0; r < R; r++)
        for (int b = 0; b < CB; b++)
            acc[r][b] = _mm512_setzero_si512();
    const int64_t bstride = k4 * CPU_QROWS_NB * 4;
    for (int64_t k = 0; k < k4; k++) {
        __m512i av[4];
        for (int r = 0; r < R; r++)
            av[r] = _mm512_set1_epi32((int)qr_quad_at(a + r * lda, K, k));
        for (int b = 0; b < CB; b++) {
            const __m512i wv = _mm512_loadu_si512(wp + b * bstride + k * CPU_QROWS_NB * 4);
            for (int r = 0; r < R; r++)
                acc[r][b] = _mm512_dpbusd_epi32(acc[r][b], av[r], wv);
        }
    }
    for (int r = 0; r < R; r++)
        for (int b = 0; b < CB; b++)
            _mm512_storeu_si512(y + r * ldy + b * CPU_QROWS_NB, acc[r][b]);
}

void cpu_qrows_u8s8_vnni(const uint8_t *a, int64_t lda, int64_t m, int64_t K, const int8_t *wp,
                         int64_t n, int32_t *y, int64_t ldy) {
    const int64_t k4 = (K + 3) / 4, nb = (n + CPU_QROWS_NB - 1) / CPU_QROWS_NB;
    const int64_t bstride = k4 * CPU_QROWS_NB * 4;
    for (int64_t b0 = 0; b0 < nb; b0 += 4) {
        const int8_t *wb = wp + b0 * bstride;
        int32_t *yb = y + b0 * CPU_QROWS_NB;
        int64_t r = 0;
        if (nb - b0 >= 4) {
            for (; r + 4 <= m; r += 4)
                qrows_tile(a + r * lda, lda, 4, K, k4, wb, 4, yb + r * ldy, ldy);
            for (; r < m; r++)
                qrows_tile(a + r * lda, lda, 1, K, k4, wb, 4, yb + r * ldy, ldy);
        } else {
            for (int64_t b = 0; b < nb - b0; b++)
                for (r = 0; r < m; r++)
                    qrows_tile(a + r * lda, lda, 1, K, k4, wb + b * bstride, 1,
                               yb + r * ldy + b * CPU_QROWS_NB, ldy);
        }
    }
}
