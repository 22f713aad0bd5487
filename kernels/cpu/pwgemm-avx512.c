/*
 * pwgemm-avx512.c — the tiles of the pointwise-conv GEMM (pwgemm.h) on
 * AVX-512 (built with the avx512 tier's flags, kernels/meson.build): an
 * mr x nr tile of Y is mr x nr/16 zmm accumulators started from bias +
 * residual, one pass over K (a broadcast of X's element times the panel's
 * nr/16 vectors of W^T per row and k), the activation in registers, one
 * store (masked in the last panel's last vector). Each (rows, vectors)
 * shape is its own inlined instance, so the accumulators stay in registers.
 */
#include <immintrin.h>

#include "kernels/cpu/pwgemm.h"

/* Where a tile's operands live: X's element (r, k) at a[r * lda + (k / 16)
 * * kbs + k % 16], Y's (and the residual's) (r, 16 v + j) at c[r * ldc + v
 * * cvs + j]. Channels-last: lda = K, kbs = 16, ldc = N, cvs = 16; nChw16c:
 * lda = ldc = 16, kbs = cvs = 16 hw. */
typedef struct pw_geo {
    int64_t K, lda, kbs, ldc, cvs;
    bool x_flat; /* channels-last X: one flat loop over K */
    kn_act act;
    __m512 alpha, beta;
} pw_geo;

/* lo <= x <= hi keeping NaN: max/min return their second operand when
 * either is NaN (as unary-impl.h's un_clamp) */
static inline __attribute__((always_inline)) __m512 pw_clamp(__m512 x, __m512 lo, __m512 hi) {
    return _mm512_min_ps(hi, _mm512_max_ps(lo, x));
}

/* The activation, NaN kept as in the reference epilogue (Relu(NaN) = NaN) */
static inline __attribute__((always_inline)) __m512 pw_act(const pw_geo *g, __m512 x) {
    const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.f);
    switch (g->act) {
    case KN_ACT_RELU: return _mm512_max_ps(zero, x);
    case KN_ACT_LEAKY_RELU:
        return _mm512_mask_mul_ps(x, _mm512_cmp_ps_mask(x, zero, _CMP_LT_OQ), x, g->alpha);
    case KN_ACT_CLIP: return pw_clamp(x, g->alpha, g->beta);
    case KN_ACT_HARD_SWISH:
        return _mm512_mul_ps(
            x, pw_clamp(_mm512_fmadd_ps(x, _mm512_set1_ps(1.f / 6.f), _mm512_set1_ps(0.5f)), zero,
                        one));
    case KN_ACT_HARD_SIGMOID: return pw_clamp(_mm512_fmadd_ps(x, g->alpha, g->beta), zero, one);
    default: return x;
    }
}

static inline __attribute__((always_inline)) void
pw_tile(const int MR, const int NV, const pw_geo *g, const float *a, const float *b, float *c,
        const float *bias, const float *res, __mmask16 last) {
    __m512 acc[CPU_PW_MR_MAX][4];
    const int64_t K = g->K, lda = g->lda, ldc = g->ldc, cvs = g->cvs;
    for (int v = 0; v < NV; v++) {
        const __mmask16 m = v == NV - 1 ? last : 0xffff;
        const __m512 bv = bias ? _mm512_maskz_loadu_ps(m, bias + 16 * v) : _mm512_setzero_ps();
        for (int r = 0; r < MR; r++)
            acc[r][v] =
                res ? _mm512_add_ps(bv, _mm512_maskz_loadu_ps(m, res + r * ldc + v * cvs)) : bv;
    }
    if (g->x_flat) {
        for (int64_t k = 0; k < K; k++) {
            __m512 bk[4];
            for (int v = 0; v < NV; v++)
                bk[v] = _mm512_loadu_ps(b + k * NV * 16 + 16 * v);
            for (int r = 0; r < MR; r++) {
                const __m512 av = _mm512_set1_ps(a[r * lda + k]);
                for (int v = 0; v < NV; v++)
                    acc[r][v] = _mm512_fmadd_ps(av, bk[v], acc[r][v]);
            }
        }
    } else { /* nChw16c X: K is a multiple of 16 */
        for (int64_t k0 = 0; k0 < K; k0 += 16) {
            const float *ab = a + (k0 / 16) * g->kbs;
            const float *bb = b + k0 * NV * 16;
            for (int k = 0; k < 16; k++) {
                __m512 bk[4];
                for (int v = 0; v < NV; v++)
                    bk[v] = _mm512_loadu_ps(bb + k * NV * 16 + 16 * v);
                for (int r = 0; r < MR; r++) {
                    const __m512 av = _mm512_set1_ps(ab[r * lda + k]);
                    for (int v = 0; v < NV; v++)
                        acc[r][v] = _mm512_fmadd_ps(av, bk[v], acc[r][v]);
                }
            }
        }
    }
    for (int r = 0; r < MR; r++)
        for (int v = 0; v < NV; v++)
            _mm512_mask_storeu_ps(c + r * ldc + v * cvs, v == NV - 1 ? last : 0xffff,
                                  pw_act(g, acc[r][v]));
}

#define PW_NV(MR, NV)                                                                              \
    case NV:                                                                                       \
        pw_tile(MR, NV, g, a, b, c, bias, res, last);                                              \
        break;
#define PW_MR(MR)                                                                                  \
    case MR:                                                                                       \
        switch (nv) {                                                                              \
            PW_NV(MR, 1)                                                                           \
            PW_NV(MR, 2)                                                                           \
            PW_NV(MR, 3)                                                                           \
            PW_NV(MR, 4)                                                                           \
        default: break;                                                                            \
        }                                                                                          \
        break;

/* One tile of mr rows (<= CPU_PW_MR_MAX) and nv vectors (<= 4; at most 28
 * accumulators are ever asked for) */
static void pw_tile_any(int mr, int nv, const pw_geo *g, const float *a, const float *b, float *c,
                        const float *bias, const float *res, __mmask16 last) {
    switch (mr) {
        PW_MR(1)
        PW_MR(2)
        PW_MR(3)
        PW_MR(4)
        PW_MR(5)
        PW_MR(6)
        PW_MR(7)
        PW_MR(8)
        PW_MR(9)
        PW_MR(10)
        PW_MR(11)
        PW_MR(12)
        PW_MR(13)
        PW_MR(14)
    default: break;
    }
}

void cpu_pw_run_avx512(const cpu_pw_plan *p, const float *x, const float *res, float *y, int64_t u0,
                       int64_t u1) {
    const int64_t hw = p->hw, K = p->K, N = p->N;
    const int64_t panels = (N + p->nr - 1) / p->nr, tiles = (hw + p->mr - 1) / p->mr;
    pw_geo g = {.K = K,
                .lda = p->x_blk ? 16 : K,
                .kbs = p->x_blk ? 16 * hw : 16,
                .ldc = p->y_blk ? 16 : N,
                .cvs = p->y_blk ? 16 * hw : 16,
                .x_flat = !p->x_blk,
                .act = p->act,
                .alpha = _mm512_set1_ps(p->alpha),
                .beta = _mm512_set1_ps(p->beta)};
    for (int64_t u = u0; u < u1; u++) {
        const int64_t img = u / (panels * tiles), pn = u / tiles % panels, t = u % tiles;
        const int64_t n0 = pn * p->nr, m0 = t * p->mr;
        const int64_t wn = N - n0 >= p->nr ? p->nr : N - n0;
        const int nv = (int)((wn + 15) / 16);
        const __mmask16 last = (__mmask16)(wn % 16 ? (1u << (wn % 16)) - 1 : 0xffff);
        const int mr = (int)(hw - m0 < p->mr ? hw - m0 : p->mr);
        const int64_t yo = img * hw * N + (n0 / 16) * g.cvs + m0 * g.ldc;
        pw_tile_any(mr, nv, &g, x + img * hw * K + m0 * g.lda, p->wp + n0 * K, y + yo,
                    p->bias ? p->bias + n0 : NULL, res ? res + yo : NULL, last);
    }
}
