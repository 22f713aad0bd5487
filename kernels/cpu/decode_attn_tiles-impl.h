/*
 * decode_attn_tiles-impl.h — body of cpu_decode_attn_tiles_<tier>
 * (decode_attn_tiles-<tier>.c includes a simd-<tier>.h, sets DT_BF16 or
 * DT_X86 or neither, then includes this): mopt.DecodeAttention
 * (kn_decode_attn, kernels.h) for query rows [lo, hi) of H * M (B == 1)
 * over a KV cache kept as bf16 tiles (p->kt, p->vt; kn_kvt_k_index and
 * kn_kvt_v_index). Per row, keys in chunks of DT_CHUNK (a multiple of 32),
 * each chunk in three steps:
 *   1. the scores of 16 keys at a time, each lane one key, so no sums
 *      across lanes: DT_BF16 (AVX512-BF16) one vdpbf16ps per pair of dims
 *      (q rounded to bf16 pairs); DT_X86 (AVX2, also run by the avx512
 *      tier) the bf16 pairs widened (even dim: shift, odd dim: mask) into
 *      f32 multiply-adds; portable: scalar widening;
 *   2. the masks (positions: keys past the row's position score fill; key
 *      mask; a bool or f32 mask), the chunk's max (online rescale of the
 *      sums between chunks) and the weights e^(s - max) (vmath.h);
 *   3. the weighted V, per block of dims, 32 keys a tile: DT_BF16 one
 *      vdpbf16ps per dim (the weights rounded to bf16 pairs, their sum kept
 *      in f32), DT_X86 four multiply-adds of the widened halves; the
 *      block's lanes summed once per chunk.
 * Keys in [T, a tile's end) score -inf (weight 0); the tiles' pad is finite
 * (the buffer starts zeroed), so 0 * pad is 0. D and Dv are at most
 * CPU_DECODE_ATTN_MAX_D and at least 1 (the op glue checks).
 */
#include <math.h>
#include <string.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/vmath.h"

#define DT_CHUNK 2048

#if defined(DT_BF16) || defined(DT_X86)
/* bf16 pairs in 32-bit lanes -> the low (even) and high (odd) elements as f32 */
static inline __m256 dt_even(__m256i x) { return _mm256_castsi256_ps(_mm256_slli_epi32(x, 16)); }
static inline __m256 dt_odd(__m256i x) {
    return _mm256_castsi256_ps(_mm256_and_si256(x, _mm256_set1_epi32((int)0xffff0000u)));
}
#endif

#ifdef DT_BF16

/* q as bf16 pairs (q[2r], q[2r+1]) in 32-bit words; an odd D's pad is 0 */
typedef uint32_t dt_q;
static inline void dt_prep_q(const float *q, int64_t D, dt_q *out) {
    for (int64_t r = 0; r < (D + 1) / 2; r++) {
        const __m128 v = _mm_set_ps(0, 0, 2 * r + 1 < D ? q[2 * r + 1] : 0.0f, q[2 * r]);
        const __m128i b = (__m128i)_mm_cvtneps_pbh(v);
        out[r] = (uint32_t)_mm_cvtsi128_si32(b);
    }
}

/* scores of the 16 keys of tile16 `tile` for head h: NP pairs of dims */
static inline __attribute__((always_inline)) __m512 dt_tile_scores(const uint16_t *kt,
                                                                   const dt_q *qp, int64_t NP) {
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0;
    int64_t r = 0;
    for (; r + 3 <= NP; r += 3) {
        s0 = _mm512_dpbf16_ps(s0, (__m512bh)_mm512_set1_epi32((int)qp[r]),
                              (__m512bh)_mm512_loadu_si512(kt + r * 32));
        s1 = _mm512_dpbf16_ps(s1, (__m512bh)_mm512_set1_epi32((int)qp[r + 1]),
                              (__m512bh)_mm512_loadu_si512(kt + r * 32 + 32));
        s2 = _mm512_dpbf16_ps(s2, (__m512bh)_mm512_set1_epi32((int)qp[r + 2]),
                              (__m512bh)_mm512_loadu_si512(kt + r * 32 + 64));
    }
    for (; r < NP; r++)
        s0 = _mm512_dpbf16_ps(s0, (__m512bh)_mm512_set1_epi32((int)qp[r]),
                              (__m512bh)_mm512_loadu_si512(kt + r * 32));
    return _mm512_add_ps(_mm512_add_ps(s0, s1), s2);
}

static inline __attribute__((always_inline)) void dt_scores_n(const kn_decode_attn *p,
                                                              const dt_q *qp, int64_t h, int64_t c0,
                                                              int64_t cn, float *buf,
                                                              const int64_t NP) {
    const __m512 sc = _mm512_set1_ps(p->scale);
    for (int64_t j = 0; j < cn; j += 16) {
        const uint16_t *kt = p->kt + ((c0 + j) / 16 * p->H + h) * NP * 32;
        _mm512_store_ps(buf + j, _mm512_mul_ps(dt_tile_scores(kt, qp, NP), sc));
    }
}

/* y[d0 .. d0 + nb) += the weights w[0 .. cn) (cn a multiple of 32) times V
 * of keys c0 .. c0 + cn, dims d0 .. d0 + nb (nb <= 32: up to 32 sums in
 * registers, so a head dim of 24 is one pass over the tiles) */
static inline __attribute__((always_inline)) void dt_v_block(const kn_decode_attn *p, int64_t h,
                                                             int64_t c0, int64_t cn, const float *w,
                                                             int64_t d0, const int64_t nb,
                                                             float *y) {
    __m512 acc[32];
    for (int i = 0; i < 32; i++)
        acc[i] = _mm512_setzero_ps();
    const int64_t Dv = p->Dv;
    for (int64_t j = 0; j < cn; j += 32) {
        const __m512bh ep =
            _mm512_cvtne2ps_pbh(_mm512_load_ps(w + j + 16), _mm512_load_ps(w + j)); /* e_k */
        const uint16_t *vt = p->vt + (((c0 + j) / 32 * p->H + h) * Dv + d0) * 32;
        for (int64_t d = 0; d < nb; d++)
            acc[d] = _mm512_dpbf16_ps(acc[d], ep, (__m512bh)_mm512_loadu_si512(vt + d * 32));
    }
    for (int64_t b = 0; b < nb; b += 16) {
        const __m512 s = v_hsums16(acc + b);
        const int64_t n = nb - b < 16 ? nb - b : 16;
        const __mmask16 m = (__mmask16)((1u << n) - 1);
        _mm512_mask_storeu_ps(y + d0 + b, m,
                              _mm512_add_ps(_mm512_maskz_loadu_ps(m, y + d0 + b), s));
    }
}

static void dt_v(const kn_decode_attn *p, int64_t h, int64_t c0, int64_t cn, const float *w,
                 float *y) {
    if (p->Dv == 24) {
        dt_v_block(p, h, c0, cn, w, 0, 24, y);
        return;
    }
    int64_t d0 = 0;
    for (; d0 + 32 <= p->Dv; d0 += 32)
        dt_v_block(p, h, c0, cn, w, d0, 32, y);
    if (p->Dv - d0 == 16)
        dt_v_block(p, h, c0, cn, w, d0, 16, y);
    else if (d0 < p->Dv)
        dt_v_block(p, h, c0, cn, w, d0, p->Dv - d0, y);
}

#elif defined(DT_X86)
typedef float dt_q;
static inline void dt_prep_q(const float *q, int64_t D, dt_q *out) {
    for (int64_t d = 0; d < D; d++)
        out[d] = q[d];
    if (D % 2) out[D] = 0.0f;
}

static inline __attribute__((always_inline)) void dt_scores_n(const kn_decode_attn *p,
                                                              const dt_q *q, int64_t h, int64_t c0,
                                                              int64_t cn, float *buf,
                                                              const int64_t NP) {
    const __m256 sc = _mm256_set1_ps(p->scale);
    for (int64_t j = 0; j < cn; j += 16) {
        const uint16_t *kt = p->kt + ((c0 + j) / 16 * p->H + h) * NP * 32;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, b0 = a0, b1 = a0;
        for (int64_t r = 0; r < NP; r++) {
            const __m256 qe = _mm256_set1_ps(q[2 * r]), qo = _mm256_set1_ps(q[2 * r + 1]);
            const __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)(kt + r * 32));
            const __m256i x1 =
                _mm256_loadu_si256((const __m256i *)(const void *)(kt + r * 32 + 16));
            a0 = _mm256_fmadd_ps(qe, dt_even(x0), a0);
            b0 = _mm256_fmadd_ps(qo, dt_odd(x0), b0);
            a1 = _mm256_fmadd_ps(qe, dt_even(x1), a1);
            b1 = _mm256_fmadd_ps(qo, dt_odd(x1), b1);
        }
        _mm256_store_ps(buf + j, _mm256_mul_ps(_mm256_add_ps(a0, b0), sc));
        _mm256_store_ps(buf + j + 8, _mm256_mul_ps(_mm256_add_ps(a1, b1), sc));
    }
}

/* (a0..a7, b0..b7) -> even lanes (a0 a2 a4 a6 b0 b2 b4 b6) and odd lanes */
static inline void dt_split(const float *w, __m256 *even, __m256 *odd) {
    const __m256 a = _mm256_load_ps(w), b = _mm256_load_ps(w + 8);
    *even = _mm256_castpd_ps(
        _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xd8));
    *odd = _mm256_castpd_ps(
        _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xdd)), 0xd8));
}

static inline __attribute__((always_inline)) void dt_v_block(const kn_decode_attn *p, int64_t h,
                                                             int64_t c0, int64_t cn, const float *w,
                                                             int64_t d0, const int64_t nb,
                                                             float *y) {
    __m256 acc[8];
    for (int i = 0; i < 8; i++)
        acc[i] = _mm256_setzero_ps();
    const int64_t Dv = p->Dv;
    for (int64_t j = 0; j < cn; j += 32) {
        __m256 we0, wo0, we1, wo1;
        dt_split(w + j, &we0, &wo0);
        dt_split(w + j + 16, &we1, &wo1);
        const uint16_t *vt = p->vt + (((c0 + j) / 32 * p->H + h) * Dv + d0) * 32;
        for (int64_t d = 0; d < nb; d++) {
            const __m256i r0 = _mm256_loadu_si256((const __m256i *)(const void *)(vt + d * 32));
            const __m256i r1 =
                _mm256_loadu_si256((const __m256i *)(const void *)(vt + d * 32 + 16));
            __m256 a = _mm256_fmadd_ps(we0, dt_even(r0), acc[d]);
            a = _mm256_fmadd_ps(wo0, dt_odd(r0), a);
            a = _mm256_fmadd_ps(we1, dt_even(r1), a);
            acc[d] = _mm256_fmadd_ps(wo1, dt_odd(r1), a);
        }
    }
    float s[8];
    _mm256_storeu_ps(s, v256_hsums8(acc));
    for (int64_t d = 0; d < nb; d++)
        y[d0 + d] += s[d];
}

static void dt_v(const kn_decode_attn *p, int64_t h, int64_t c0, int64_t cn, const float *w,
                 float *y) {
    int64_t d0 = 0;
    for (; d0 + 8 <= p->Dv; d0 += 8)
        dt_v_block(p, h, c0, cn, w, d0, 8, y);
    if (d0 < p->Dv) dt_v_block(p, h, c0, cn, w, d0, p->Dv - d0, y);
}

#endif

#if defined(DT_BF16) || defined(DT_X86)
/* the scores of keys c0 .. c0 + cn (a multiple of 16) of head h, with the
 * common head dims (pairs of dims: 12, 16, 32) as constants for the compiler */
static void dt_scores(const kn_decode_attn *p, const dt_q *qp, int64_t h, int64_t c0, int64_t cn,
                      float *buf) {
    const int64_t np = (p->D + 1) / 2;
    if (np == 12)
        dt_scores_n(p, qp, h, c0, cn, buf, 12);
    else if (np == 16)
        dt_scores_n(p, qp, h, c0, cn, buf, 16);
    else if (np == 32)
        dt_scores_n(p, qp, h, c0, cn, buf, 32);
    else
        dt_scores_n(p, qp, h, c0, cn, buf, np);
}
#else /* portable: scalar widening */
typedef float dt_q;
static inline void dt_prep_q(const float *q, int64_t D, dt_q *out) {
    for (int64_t d = 0; d < D; d++)
        out[d] = q[d];
}
static inline float dt_wide(uint16_t x) {
    const uint32_t u = (uint32_t)x << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static void dt_scores(const kn_decode_attn *p, const dt_q *q, int64_t h, int64_t c0, int64_t cn,
                      float *buf) {
    for (int64_t j = 0; j < cn; j++) {
        float s = 0.0f;
        for (int64_t d = 0; d < p->D; d++)
            s += q[d] * dt_wide(p->kt[kn_kvt_k_index(p->H, p->D, c0 + j, h, d)]);
        buf[j] = s * p->scale;
    }
}
static void dt_v(const kn_decode_attn *p, int64_t h, int64_t c0, int64_t cn, const float *w,
                 float *y) {
    for (int64_t j = 0; j < cn; j++) {
        if (w[j] == 0.0f) continue; /* masked lanes and pad keys */
        for (int64_t d = 0; d < p->Dv; d++)
            y[d] += w[j] * dt_wide(p->vt[kn_kvt_v_index(p->H, p->Dv, c0 + j, h, d)]);
    }
}
#endif

/* the masks of keys c0 .. c0 + cn of row (h, m) on their scores */
static void dt_mask(const kn_decode_attn *p, int64_t h, int64_t m, int64_t tv, int64_t c0,
                    int64_t cn, float *buf) {
    for (int64_t j = tv > c0 ? tv - c0 : 0; j < cn; j++)
        buf[j] = p->fill; /* past the row's position */
    if (p->kpad)
        for (int64_t j = 0; j < cn; j++)
            if (p->kpad[c0 + j] == 0) buf[j] = p->fill;
    const int64_t moff = h * p->mask.sh + m * p->mask.sq;
    if (p->mask.keep)
        for (int64_t j = 0; j < cn; j++)
            buf[j] = p->mask.keep[moff + (c0 + j) * p->mask.sk] ? buf[j] : p->fill;
    if (p->mask.add)
        for (int64_t j = 0; j < cn; j++)
            buf[j] += p->mask.add[moff + (c0 + j) * p->mask.sk];
}

static void dt_row(const kn_decode_attn *p, int64_t row) {
    const int64_t H = p->H, M = p->M, T = p->T, Dv = p->Dv;
    const int64_t h = row / M % H, m = row % M;
    const int64_t tv = kn_decode_attn_visible(p, 0, m);
    /* keys past the position score fill: skipped when their weight is 0 */
    const int64_t tend = tv < T && p->fill > -INFINITY ? T : tv;
    _Alignas(64) float buf[DT_CHUNK];
    _Alignas(64) float y[CPU_DECODE_ATTN_MAX_D];
    dt_q qp[CPU_DECODE_ATTN_MAX_D + 1];
    dt_prep_q(p->q + row * p->D, p->D, qp);
    for (int64_t d = 0; d < Dv; d++)
        y[d] = 0.0f;
    vf lv = v_zero();
    float mrun = -INFINITY;
    const bool masked = p->kpad || p->mask.keep || p->mask.add;
    for (int64_t c0 = 0; c0 < tend; c0 += DT_CHUNK) {
        const int64_t cn = tend - c0 < DT_CHUNK ? tend - c0 : DT_CHUNK;
        const int64_t cw = (cn + 31) / 32 * 32; /* whole V tiles */
        dt_scores(p, qp, h, c0, cw, buf);
        if (masked || tv < c0 + cn) dt_mask(p, h, m, tv, c0, cn, buf);
        for (int64_t j = cn; j < cw; j++)
            buf[j] = -INFINITY; /* past T: no weight */
        vf vmax = v_set1(-INFINITY);
        for (int64_t j = 0; j < cw; j += VW)
            vmax = v_max(vmax, v_load(buf + j));
        const float cmax = v_hmax(vmax);
        if (cmax > mrun) {
            if (mrun != -INFINITY) {
                const float corr = expf(mrun - cmax);
                for (int64_t d = 0; d < Dv; d++)
                    y[d] *= corr;
                lv = v_mul(lv, v_set1(corr));
            }
            mrun = cmax;
        }
        if (mrun == -INFINITY) continue; /* nothing visible yet */
        const vf mx = v_set1(mrun);
        for (int64_t j = 0; j < cw; j += VW) {
            const vf e = v_exp_weight(v_sub(v_load(buf + j), mx));
            lv = v_add(lv, e);
            v_store(buf + j, e);
        }
        dt_v(p, h, c0, cw, buf, y);
    }
    /* T = 0: an empty product (zeros); every score -inf: NaN, as Softmax */
    const float inv = T == 0 ? 0.0f : mrun == -INFINITY ? NAN : 1.0f / v_hsum(lv);
    float *out = p->y + row * Dv;
    for (int64_t d = 0; d < Dv; d++)
        out[d] = y[d] * inv;
}

void CPU_FN(cpu_decode_attn_tiles)(const kn_decode_attn *p, int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; r++)
        dt_row(p, r);
}
