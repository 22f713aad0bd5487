/*
 * transpose-impl.h — body of cpu_transpose_x32_<tier> (transpose-<tier>.c
 * includes a simd-<tier>.h, then this): blocked transpose of one matrix of
 * 32-bit elements, 32x32 blocks of 8x8 register tiles (AVX2 shuffles on the
 * AVX2 and AVX-512 tiers, scalar on the portable one). Only moves bits, so it
 * serves f32 and every other 4-byte type.
 */
#include "kernels/cpu/cpu_kernels.h"

#ifdef CPU_HAVE_AVX2_TILE
/* dst[j*ds + i] = src[i*ss + j] for an 8x8 tile. */
static inline void tile8x8(const uint32_t *src, int64_t ss, uint32_t *dst, int64_t ds) {
    const float *s = (const float *)(const void *)src;
    float *d = (float *)(void *)dst;
    __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + ss);
    __m256 r2 = _mm256_loadu_ps(s + 2 * ss), r3 = _mm256_loadu_ps(s + 3 * ss);
    __m256 r4 = _mm256_loadu_ps(s + 4 * ss), r5 = _mm256_loadu_ps(s + 5 * ss);
    __m256 r6 = _mm256_loadu_ps(s + 6 * ss), r7 = _mm256_loadu_ps(s + 7 * ss);
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
    _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(d + ds, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(d + 2 * ds, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(d + 3 * ds, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(d + 4 * ds, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(d + 5 * ds, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(d + 6 * ds, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(d + 7 * ds, _mm256_permute2f128_ps(u3, u7, 0x31));
}
#else
static inline void tile8x8(const uint32_t *src, int64_t ss, uint32_t *dst, int64_t ds) {
    for (int64_t j = 0; j < 8; j++)
        for (int64_t i = 0; i < 8; i++)
            dst[j * ds + i] = src[i * ss + j];
}
#endif

#define TR_BLOCK 32

void CPU_FN(cpu_transpose_x32)(const uint32_t *x, uint32_t *y, int64_t rows, int64_t cols,
                               int64_t c0, int64_t c1) {
    for (int64_t cb = c0; cb < c1; cb += TR_BLOCK) {
        const int64_t ce = cb + TR_BLOCK < c1 ? cb + TR_BLOCK : c1;
        for (int64_t rb = 0; rb < rows; rb += TR_BLOCK) {
            const int64_t re = rb + TR_BLOCK < rows ? rb + TR_BLOCK : rows;
            int64_t c = cb;
            for (; c + 8 <= ce; c += 8) {
                int64_t r = rb;
                for (; r + 8 <= re; r += 8)
                    tile8x8(x + r * cols + c, cols, y + c * rows + r, rows);
                for (int64_t j = c; j < c + 8; j++)
                    for (int64_t i = r; i < re; i++)
                        y[j * rows + i] = x[i * cols + j];
            }
            for (; c < ce; c++)
                for (int64_t i = rb; i < re; i++)
                    y[c * rows + i] = x[i * cols + c];
        }
    }
}
