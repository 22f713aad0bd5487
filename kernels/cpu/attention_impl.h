/*
 * attention_impl.h — the body of the fused attention kernel, written once
 * with GCC/Clang vector extensions and compiled per ISA: each includer
 * (attention-avx512.c, attention-avx2.c, attention-portable.c) defines
 * ATTN_VLEN (floats per vector: 16, 8, 4), ATTN_FN and ATTN_SCRATCH_FN (the
 * function names) and optionally ATTN_QB / ATTN_NV (register blocking), and
 * is built with its own -m flags, so the vectors become zmm/ymm/xmm.
 *
 * Per (batch, head): K^T and V are packed once into aligned, zero-padded
 * buffers (memory O(S*D)). Per block of ATTN_QB query rows, for each tile of
 * ATTN_KT keys: scores = (scale*Q) K^T into QB x KT registers, mask and
 * causality applied, the online softmax update (new running max, rescale of
 * the running sum and of the output accumulator by exp(old max - new max)),
 * then O_acc += P V. Only one QB x KT tile of scores ever exists. Key tiles
 * wholly beyond the causal limit are skipped.
 *
 * With ATTN_BF16 defined (attention-avx512bf16.c, AVX512-BF16 only) the two
 * products run on vdpbf16ps: K^T is packed once per head as bf16 pairs of
 * consecutive features ([D/2][Sk_pad] x 2), V as pairs of consecutive keys
 * ([Sk_pad/2][Dv_pad] x 2), the scaled query rows are converted once per
 * block and the probabilities once per tile; scores, the softmax, the
 * running sums and the output accumulator stay f32.
 *
 * With CPU_ATTN_QK_INT8 in io (int8 nodes, AVX512-VNNI) Q K^T runs on
 * vpdpbusd instead: each key row of K quantized once per head to s8 with
 * its own scale (max |k| / 127), packed as dwords of four consecutive
 * features ([D/4][Sk_pad]), with the key's sum of quantized values; each
 * scaled query row quantized the same way and offset by 128 to u8, so that
 * score = sq * sk * (sum (q + 128) k - 128 sum k). On cores where vdpbf16ps
 * issues on one port (Intel without AMX) the int8 product takes a fraction
 * of the bf16 one's cycles. With CPU_ATTN_PV_INT8, P V too: V quantized
 * once per head to s8 per column (max |v| / 127 over the keys), packed as
 * dwords of four consecutive keys ([Sk_pad/4][Dv_pad]); each tile's
 * probabilities (in [0, 1]: exp(score - running max)) rounded to u8 steps
 * of 1/255, and the tile's int32 sums added to the f32 accumulator times
 * sv / 255 (the running sums stay f32 from the unrounded P).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef ATTN_BF16
#include <immintrin.h>
#endif

#include "core/alloc.h"
#include "kernels/cpu/cpu_attention.h"

#ifndef ATTN_VLEN
#error "define ATTN_VLEN and ATTN_FN before including attention_impl.h"
#endif

typedef float vf __attribute__((vector_size(ATTN_VLEN * 4)));
typedef int32_t vi __attribute__((vector_size(ATTN_VLEN * 4)));

#ifndef ATTN_QB
#define ATTN_QB 4 /* query rows per block */
#endif
#ifndef ATTN_NV
#define ATTN_NV 4 /* vectors per score-tile row */
#endif
#define ATTN_KT (ATTN_NV * ATTN_VLEN) /* keys per tile */

static inline vf vload(const float *p) {
    vf v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline vf vsplat(float x) { return x - (vf){0}; }

static inline vf vsel(vi m, vf a, vf b) { /* m ? a : b, m lanes all-ones or 0 */
    return (vf)(((vi)a & m) | ((vi)b & ~m));
}

/* exp(x) for x <= 0 (our use: score - running max), ~2 ulp; exactly 0 below
 * -87.33 (and for -inf); NaN stays NaN. */
static inline vf vexp(vf x) {
    const vf lo = vsplat(-87.3365447f);
    vi under = x < lo;
    x = vsel(under, lo, x);
    const vf magic = vsplat(12582912.0f); /* 1.5 * 2^23: round to nearest */
    vf r = x * 1.44269504089f + magic;
    vi n = (vi)r - (vi)magic;
    vf nf = r - magic;
    vf f = x - nf * 0.693359375f;
    f = f - nf * -2.12194440e-4f;
    vf p = vsplat(1.0f / 5040.0f);
    p = p * f + 1.0f / 720.0f;
    p = p * f + 1.0f / 120.0f;
    p = p * f + 1.0f / 24.0f;
    p = p * f + 1.0f / 6.0f;
    p = p * f + 0.5f;
    p = p * f + 1.0f;
    p = p * f + 1.0f;
    vf scale = (vf)((n + 127) << 23);
    return (vf)((vi)(p * scale) & ~under);
}

#ifdef ATTN_BF16 /* tree reductions (the f32 tiers keep their order) */
static inline float hmax(vf v) { return _mm512_reduce_max_ps((__m512)v); }
static inline float hsum(vf v) { return _mm512_reduce_add_ps((__m512)v); }
#else
static inline float hmax(vf v) {
    float m = v[0];
    for (int k = 1; k < ATTN_VLEN; k++)
        m = v[k] > m ? v[k] : m;
    return m;
}

static inline float hsum(vf v) {
    float s = 0.0f;
    for (int k = 0; k < ATTN_VLEN; k++)
        s += v[k];
    return s;
}
#endif

typedef struct attn_scratch {
    vf *kt;    /* [D][Sk_pad / VLEN] K^T, zero-padded (QK_INT8: see ATTN_K8) */
    vf *vp;    /* [Sk_pad][Dv_pad / VLEN] V, zero-padded */
    vf *oacc;  /* [QB][Dv_pad / VLEN] */
    vf *pt;    /* [QB][NV] probabilities of the current tile (bf16: then [QB][KT] bf16) */
    float *qs; /* [QB][D] scaled query rows (bf16: [QB][D/2] pairs, then [16][D/2] for K;
                  AMX: two blocks of [QB][D2] pairs, then [16][D2]) */
    int64_t packed_b, packed_h;
    int64_t q_b, q_h, q_i0; /* AMX: the block whose rows qs's next buffer holds (-1: none) */
    int q_buf;              /* AMX: that buffer, 0 or 1 */
    bool borrowed;          /* buffers carved from the caller's workspace */
    unsigned io;            /* bf16: CPU_ATTN_IO_* (Q, K, V, O stored as bf16) */
} attn_scratch;

#ifdef ATTN_BF16
#ifdef ATTN_AMX /* bf16 feature pairs, zero-padded to whole tiles of 16 */
#define ATTN_D2(p) (((p)->D + 31) / 32 * 16)
#define ATTN_QS_BUFS 2 /* query blocks in qs: the current one and the next */
#else
#define ATTN_D2(p) (((p)->D + 1) / 2) /* bf16 feature pairs */
#define ATTN_QS_BUFS 1
#endif
#define ATTN_D4(p) (((p)->D + 3) / 4) /* int8 feature quads */
/* QK_INT8: kt holds [D4][skp] dwords (4 s8 features of a key), then the
 * keys' float scales [skp], then their int32 128 * sum of quantized values */
#define ATTN_K8_SCALES(s, p, skp) ((float *)((uint32_t *)(s)->kt + ATTN_D4(p) * (skp)))
#define ATTN_K8_CORR(s, p, skp) ((int32_t *)(ATTN_K8_SCALES(s, p, skp) + (skp)))

/* y[0..n) = bf16(x[0..n) * scale), round to nearest even. */
static inline void cvt_bf16(const float *x, int64_t n, float scale, uint16_t *y) {
    const __m512 sc = _mm512_set1_ps(scale);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(y + i),
                            (__m256i)_mm512_cvtneps_pbh(_mm512_mul_ps(_mm512_loadu_ps(x + i), sc)));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        __m256i v = (__m256i)_mm512_cvtneps_pbh(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), sc));
        _mm256_mask_storeu_epi16(y + i, m, v);
    }
}

/* Element off of a tensor stored as f32, or as bf16 when bf. */
static inline const void *elem_at(const void *base, bool bf, int64_t off) {
    return (const char *)base + off * (bf ? 2 : 4);
}

/* y[0..n) = bf16(x[0..n) * scale) for x stored as f32 or (xb) bf16. */
static inline void cvt_any(const void *x, bool xb, int64_t n, float scale, uint16_t *y) {
    if (!xb) {
        cvt_bf16(x, n, scale, y);
        return;
    }
    if (scale == 1.0f) {
        memcpy(y, x, (size_t)n * sizeof *y);
        return;
    }
    const __m512 sc = _mm512_set1_ps(scale);
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512i w = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, (const uint16_t *)x + i));
        __m512 f = _mm512_mul_ps(_mm512_castsi512_ps(_mm512_slli_epi32(w, 16)), sc);
        _mm256_mask_storeu_epi16(y + i, m, (__m256i)_mm512_cvtneps_pbh(f));
    }
}

/* 16 lanes (mask m) of row r from column c, stored as f32 or (bf) bf16. */
static inline __m512 load_any(const void *r, bool bf, int64_t c, __mmask16 m) {
    if (!bf) return _mm512_maskz_loadu_ps(m, (const float *)r + c);
    __m512i w = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, (const uint16_t *)r + c));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}

/* QK_INT8: y[0..n) = round(v / s) + off as bytes, v = x * scale (x stored
 * as f32 or, xb, bf16), s = max |v| / 127 (returned; NaN when a v is NaN, so
 * that the scores are; an all-zero row gives s = 0 and bytes off), the
 * bytes up to the next multiple of 4 = off; *sum (unless NULL) = the sum of
 * round(v / s). */
static inline float quant_row8(const void *x, bool xb, int64_t n, float scale, int off, uint8_t *y,
                               int32_t *sum) {
    const __m512 sc = _mm512_set1_ps(scale);
    __m512 mx = _mm512_setzero_ps();
    __mmask16 nan = 0;
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_mul_ps(load_any(x, xb, i, m), sc);
        nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        mx = _mm512_max_ps(mx, _mm512_abs_ps(v));
    }
    const float amax = _mm512_reduce_max_ps(mx);
    const __m512 inv = _mm512_set1_ps(amax > 0.f && amax <= FLT_MAX ? 127.f / amax : 0.f);
    const __m512i lo = _mm512_set1_epi32(-127), hi = _mm512_set1_epi32(127);
    const __m512i vo = _mm512_set1_epi32(off);
    __m512i acc = _mm512_setzero_si512();
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_mul_ps(_mm512_mul_ps(load_any(x, xb, i, m), sc), inv);
        __m512i q = _mm512_min_epi32(_mm512_max_epi32(_mm512_cvtps_epi32(v), lo), hi);
        acc = _mm512_add_epi32(acc, q);
        _mm512_mask_cvtepi32_storeu_epi8(y + i, m, _mm512_add_epi32(q, vo));
    }
    for (int64_t i = n; i % 4; i++)
        y[i] = (uint8_t)off;
    if (sum) *sum = _mm512_reduce_add_epi32(acc);
    return nan ? NAN : amax / 127.f;
}

/* PV_INT8: vp holds [skp/4][dvp] dwords (lane c: column c of four keys as
 * s8), then the columns' float scales [dvp] */
#define ATTN_V8_SCALES(s, skp, dvp) ((float *)((uint32_t *)(s)->vp + (skp) / 4 * (dvp)))

/* PV_INT8: V of head (b, h) quantized per column and packed (ATTN_V8_*). */
static void pack_v8(const attn_params *p, const void *V, bool vb, int64_t voff, attn_scratch *s,
                    int64_t skp, int64_t dvp) {
    uint32_t *vp = (uint32_t *)s->vp;
    float *sv = ATTN_V8_SCALES(s, skp, dvp);
    const __m512i lo = _mm512_set1_epi32(-127), hi = _mm512_set1_epi32(127);
    for (int64_t c = 0; c < dvp; c += 16) {
        int64_t n = p->Dv - c;
        __mmask16 m = n >= 16 ? (__mmask16)0xffff : n > 0 ? (__mmask16)((1u << n) - 1) : 0;
        __m512 mx = _mm512_setzero_ps();
        __mmask16 nan = 0;
        for (int64_t j = 0; j < p->Sk; j++) {
            __m512 v = load_any(elem_at(V, vb, voff + j * p->v_ss), vb, c, m);
            nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
            mx = _mm512_max_ps(mx, _mm512_abs_ps(v));
        }
        /* 127 / max where 0 < max < inf, else 0 (all-zero and infinite columns) */
        __mmask16 ok = _mm512_cmp_ps_mask(mx, _mm512_setzero_ps(), _CMP_GT_OQ) &
                       _mm512_cmp_ps_mask(mx, _mm512_set1_ps(FLT_MAX), _CMP_LE_OQ);
        const __m512 inv = _mm512_maskz_div_ps(ok, _mm512_set1_ps(127.f), mx);
        __m512 scale = _mm512_mul_ps(mx, _mm512_set1_ps(1.f / 127.f));
        _mm512_store_ps(sv + c, _mm512_mask_blend_ps(nan, scale, _mm512_set1_ps(NAN)));
        for (int64_t jj = 0; jj < skp / 4; jj++) {
            __m128i b4[4];
            for (int t = 0; t < 4; t++) {
                int64_t j = 4 * jj + t;
                if (j >= p->Sk) {
                    b4[t] = _mm_setzero_si128();
                    continue;
                }
                __m512 v =
                    _mm512_mul_ps(load_any(elem_at(V, vb, voff + j * p->v_ss), vb, c, m), inv);
                __m512i q = _mm512_min_epi32(_mm512_max_epi32(_mm512_cvtps_epi32(v), lo), hi);
                b4[t] = _mm512_cvtepi32_epi8(q);
            }
            /* lane k (column c + k) = the four keys' bytes */
            __m128i ab0 = _mm_unpacklo_epi8(b4[0], b4[1]), ab1 = _mm_unpackhi_epi8(b4[0], b4[1]);
            __m128i cd0 = _mm_unpacklo_epi8(b4[2], b4[3]), cd1 = _mm_unpackhi_epi8(b4[2], b4[3]);
            __m128i *dst = (__m128i *)(vp + jj * dvp + c);
            _mm_store_si128(dst, _mm_unpacklo_epi16(ab0, cd0));
            _mm_store_si128(dst + 1, _mm_unpackhi_epi16(ab0, cd0));
            _mm_store_si128(dst + 2, _mm_unpacklo_epi16(ab1, cd1));
            _mm_store_si128(dst + 3, _mm_unpackhi_epi16(ab1, cd1));
        }
    }
}

/* QK_INT8: K of head (b, h) quantized per key and packed (ATTN_K8_*). */
static void pack_k8(const attn_params *p, const void *K, bool kb, int64_t koff, attn_scratch *s,
                    int64_t skp) {
    const int64_t D4 = ATTN_D4(p), D2 = ATTN_D2(p);
    uint32_t *kt = (uint32_t *)s->kt;
    float *sk = ATTN_K8_SCALES(s, p, skp);
    int32_t *kc = ATTN_K8_CORR(s, p, skp);
    uint32_t *tmp = (uint32_t *)s->qs + ATTN_QS_BUFS * ATTN_QB * D2; /* [16][D4] */
    const __m512i idx =
        _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                           _mm512_set1_epi32((int)D4));
    for (int64_t j0 = 0; j0 < skp; j0 += 16) {
        for (int64_t t = 0; t < 16; t++) {
            uint32_t *row = tmp + t * D4;
            if (j0 + t < p->Sk) {
                int32_t sum;
                sk[j0 + t] = quant_row8(elem_at(K, kb, koff + (j0 + t) * p->k_ss), kb, p->D, 1.0f,
                                        0, (uint8_t *)row, &sum);
                kc[j0 + t] = 128 * sum;
            } else {
                for (int64_t dd = 0; dd < D4; dd++)
                    row[dd] = 0;
                sk[j0 + t] = 0.f;
                kc[j0 + t] = 0;
            }
        }
        for (int64_t dd = 0; dd < D4; dd++)
            _mm512_store_si512((__m512i *)(kt + dd * skp + j0),
                               _mm512_i32gather_epi32(idx, (const void *)(tmp + dd), 4));
    }
}

#ifdef ATTN_AMX
/* dst[i * ds + t] = src[t * ss + i] for i, t < 16 (dwords; dst rows 64-byte
 * aligned): unpacks of 32- and 64-bit elements, then two rounds of 128-bit
 * lane shuffles. */
static inline void transpose16_store(const uint32_t *src, int64_t ss, uint32_t *dst, int64_t ds) {
    __m512i r[16], t[16];
    for (int i = 0; i < 16; i++)
        r[i] = _mm512_loadu_si512((const void *)(src + i * ss));
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) { /* r[4i + k], 128-bit lane L: column 4L + k of rows 4i.. */
        r[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        r[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        r[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        r[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int k = 0; k < 4; k++) {
        const __m512i u0 = _mm512_shuffle_i32x4(r[k], r[4 + k], 0x88);
        const __m512i u1 = _mm512_shuffle_i32x4(r[k], r[4 + k], 0xdd);
        const __m512i v0 = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0x88);
        const __m512i v1 = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0xdd);
        _mm512_store_si512((__m512i *)(dst + k * ds), _mm512_shuffle_i32x4(u0, v0, 0x88));
        _mm512_store_si512((__m512i *)(dst + (4 + k) * ds), _mm512_shuffle_i32x4(u1, v1, 0x88));
        _mm512_store_si512((__m512i *)(dst + (8 + k) * ds), _mm512_shuffle_i32x4(u0, v0, 0xdd));
        _mm512_store_si512((__m512i *)(dst + (12 + k) * ds), _mm512_shuffle_i32x4(u1, v1, 0xdd));
    }
}

/* V stored as bf16 (v: the head's first row) into vp's pairs: lane c of
 * pair row jj = (V[2jj][c], V[2jj+1][c]), 32 columns at a time by one word
 * permutation of the two rows; rows past Sk and columns past Dv 0. */
static void pack_v_bf16(const attn_params *p, const uint16_t *v, uint32_t *vp, int64_t skp,
                        int64_t dvp) {
    const __m512i lo = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40,
                                        8, 39, 7, 38, 6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
    const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
    for (int64_t jj = 0; jj < skp / 2; jj++) {
        const uint16_t *r0 = 2 * jj < p->Sk ? v + 2 * jj * p->v_ss : NULL;
        const uint16_t *r1 = 2 * jj + 1 < p->Sk ? v + (2 * jj + 1) * p->v_ss : NULL;
        for (int64_t c = 0; c < dvp; c += 32) {
            const int64_t n = p->Dv - c;
            const __mmask32 m = n >= 32 ? (__mmask32)0xffffffffu
                                : n > 0 ? (__mmask32)((1u << n) - 1)
                                        : (__mmask32)0;
            const __m512i a = r0 ? _mm512_maskz_loadu_epi16(m, r0 + c) : _mm512_setzero_si512();
            const __m512i bb = r1 ? _mm512_maskz_loadu_epi16(m, r1 + c) : _mm512_setzero_si512();
            _mm512_store_si512((__m512i *)(vp + jj * dvp + c),
                               _mm512_permutex2var_epi16(a, lo, bb));
            if (c + 16 < dvp)
                _mm512_store_si512((__m512i *)(vp + jj * dvp + c + 16),
                                   _mm512_permutex2var_epi16(a, hi, bb));
        }
    }
}
#endif

static void pack_head(const attn_params *p, int64_t b, int64_t h, const float *K, const float *V,
                      attn_scratch *s, int64_t nkv, int64_t nvd) {
    const bool kb = s->io & CPU_ATTN_IO_K, vb = s->io & CPU_ATTN_IO_V;
    const int64_t koff = b * p->k_sb + h * p->k_sh, voff = b * p->v_sb + h * p->v_sh;
    const int64_t D2 = ATTN_D2(p), skp = nkv * ATTN_VLEN, dvp = nvd * ATTN_VLEN;
    uint32_t *kt = (uint32_t *)s->kt, *vp = (uint32_t *)s->vp;
    /* K^T: 16 keys at a time converted into tmp ([16][D2] pairs), then
     * each pair column gathered into its row of kt */
    uint32_t *tmp = (uint32_t *)s->qs + ATTN_QS_BUFS * ATTN_QB * D2;
    const __m512i idx =
        _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                           _mm512_set1_epi32((int)D2));
    if (s->io & CPU_ATTN_QK_INT8) pack_k8(p, K, kb, koff, s, skp);
    for (int64_t j0 = 0; j0 < skp && !(s->io & CPU_ATTN_QK_INT8); j0 += 16) {
        for (int64_t t = 0; t < 16; t++) {
            uint32_t *row = tmp + t * D2;
            for (int64_t dd = p->D / 2; dd < D2; dd++) /* the pad pairs */
                row[dd] = 0;
            if (j0 + t < p->Sk)
                cvt_any(elem_at(K, kb, koff + (j0 + t) * p->k_ss), kb, p->D, 1.0f, (uint16_t *)row);
            else
                for (int64_t dd = 0; dd < D2; dd++)
                    row[dd] = 0;
        }
#ifdef ATTN_AMX /* D2 whole tiles of 16 pairs: 16 x 16 transposes in registers */
        for (int64_t dd = 0; dd < D2; dd += 16)
            transpose16_store(tmp + dd, D2, kt + dd * skp + j0, skp);
        (void)idx;
#else
        for (int64_t dd = 0; dd < D2; dd++)
            _mm512_store_si512((__m512i *)(kt + dd * skp + j0),
                               _mm512_i32gather_epi32(idx, (const void *)(tmp + dd), 4));
#endif
    }
    /* V: lane c of pair row jj = (V[2jj][c], V[2jj+1][c]) */
    const __m512i ilv = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24,
                                         8, 23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    if (s->io & CPU_ATTN_PV_INT8) pack_v8(p, V, vb, voff, s, skp, dvp);
#ifdef ATTN_AMX /* bf16 V: the words interleaved as they are (the same bits but for signalling     \
                   NaNs, which the round trip through f32 would quiet) */
    if (vb && !(s->io & CPU_ATTN_PV_INT8)) {
        pack_v_bf16(p, (const uint16_t *)V + voff, vp, skp, dvp);
        s->packed_b = b;
        s->packed_h = h;
        return;
    }
#endif
    for (int64_t jj = 0; jj < skp / 2 && !(s->io & CPU_ATTN_PV_INT8); jj++) {
        const void *r0 = 2 * jj < p->Sk ? elem_at(V, vb, voff + 2 * jj * p->v_ss) : NULL;
        const void *r1 = 2 * jj + 1 < p->Sk ? elem_at(V, vb, voff + (2 * jj + 1) * p->v_ss) : NULL;
        for (int64_t c = 0; c < dvp; c += 16) {
            int64_t n = p->Dv - c;
            __mmask16 m = n >= 16 ? (__mmask16)0xffff : n > 0 ? (__mmask16)((1u << n) - 1) : 0;
            __m512 a = r0 ? load_any(r0, vb, c, m) : _mm512_setzero_ps();
            __m512 bb = r1 ? load_any(r1, vb, c, m) : _mm512_setzero_ps();
            __m512i pr = _mm512_permutexvar_epi16(ilv, (__m512i)_mm512_cvtne2ps_pbh(bb, a));
            _mm512_store_si512((__m512i *)(vp + jj * dvp + c), pr);
        }
    }
    s->packed_b = b;
    s->packed_h = h;
}
#else
static void pack_head(const attn_params *p, int64_t b, int64_t h, const float *K, const float *V,
                      attn_scratch *s, int64_t nkv, int64_t nvd) {
    const float *k = K + b * p->k_sb + h * p->k_sh;
    const float *v = V + b * p->v_sb + h * p->v_sh;
    float *kt = (float *)s->kt, *vp = (float *)s->vp;
    int64_t skp = nkv * ATTN_VLEN, dvp = nvd * ATTN_VLEN;
    for (int64_t d = 0; d < p->D; d++) {
        float *row = kt + d * skp;
        for (int64_t j = 0; j < p->Sk; j++)
            row[j] = k[j * p->k_ss + d];
        for (int64_t j = p->Sk; j < skp; j++)
            row[j] = 0.0f;
    }
    for (int64_t j = 0; j < skp; j++) {
        float *row = vp + j * dvp;
        int64_t c = 0;
        if (j < p->Sk) {
            memcpy(row, v + j * p->v_ss, (size_t)p->Dv * sizeof(float));
            c = p->Dv;
        }
        for (; c < dvp; c++)
            row[c] = 0.0f;
    }
    s->packed_b = b;
    s->packed_h = h;
}
#endif

/* O_acc[r][c0 .. c0+NVC) += sum_j P[r][j] * V[j0 + j][c0 ..], all QB rows. */
static inline __attribute__((always_inline)) void pv_block(vf *oacc, const vf *pt, const vf *vp,
                                                           int64_t nvd, int64_t j0, int64_t kn,
                                                           int64_t c0, const int NVC) {
    vf acc[ATTN_QB][4]; /* NVC <= 4 */
    for (int r = 0; r < ATTN_QB; r++)
        for (int c = 0; c < NVC; c++)
            acc[r][c] = oacc[r * nvd + c0 + c];
    const float *pf = (const float *)pt;
    for (int64_t j = 0; j < kn; j++) {
        const vf *vrow = vp + (j0 + j) * nvd + c0;
        vf vv[4];
        for (int c = 0; c < NVC; c++)
            vv[c] = vrow[c];
        for (int r = 0; r < ATTN_QB; r++) {
            float pr = pf[r * ATTN_KT + j];
            for (int c = 0; c < NVC; c++)
                acc[r][c] += pr * vv[c];
        }
    }
    for (int r = 0; r < ATTN_QB; r++)
        for (int c = 0; c < NVC; c++)
            oacc[r * nvd + c0 + c] = acc[r][c];
}

#ifdef ATTN_BF16
/* The same with bf16 P ([QB][KT], pairs of keys as u32) and V pairs. */
static inline __attribute__((always_inline)) void pv_block_bf16(vf *oacc, const uint32_t *pb,
                                                                const vf *vp, int64_t nvd,
                                                                int64_t j0, int64_t kn, int64_t c0,
                                                                const int NVC) {
    __m512 acc[ATTN_QB][4]; /* NVC <= 4 */
    for (int r = 0; r < ATTN_QB; r++)
        for (int c = 0; c < NVC; c++)
            acc[r][c] = (__m512)oacc[r * nvd + c0 + c];
    const int64_t kp = (kn + 1) / 2; /* an odd last key pairs with a zero probability */
    for (int64_t jj = 0; jj < kp; jj++) {
        const vf *vrow = vp + (j0 / 2 + jj) * nvd + c0;
        __m512bh vv[4];
        for (int c = 0; c < NVC; c++)
            vv[c] = (__m512bh)vrow[c];
        for (int r = 0; r < ATTN_QB; r++) {
            __m512bh pr = (__m512bh)_mm512_set1_epi32((int)pb[r * (ATTN_KT / 2) + jj]);
            for (int c = 0; c < NVC; c++)
                acc[r][c] = _mm512_dpbf16_ps(acc[r][c], pr, vv[c]);
        }
    }
    for (int r = 0; r < ATTN_QB; r++)
        for (int c = 0; c < NVC; c++)
            oacc[r * nvd + c0 + c] = (vf)acc[r][c];
}

/* PV_INT8: the same with u8 P ([QB][KT] bytes, quads of keys as u32) and s8
 * V quads (ATTN_V8_*): int32 sums of the tile, added times sv / 255. */
static inline __attribute__((always_inline)) void pv_block_i8(vf *oacc, const uint32_t *pq,
                                                              const uint32_t *vp, const float *sv,
                                                              int64_t nvd, int64_t j0, int64_t kn,
                                                              int64_t c0, const int NVC) {
    __m512i acc[ATTN_QB][4]; /* NVC <= 4 */
    for (int r = 0; r < ATTN_QB; r++)
        for (int c = 0; c < NVC; c++)
            acc[r][c] = _mm512_setzero_si512();
    const int64_t dvp = nvd * ATTN_VLEN, kq = (kn + 3) / 4; /* keys past kn have P = 0 */
    for (int64_t jj = 0; jj < kq; jj++) {
        const __m512i *vrow = (const __m512i *)(vp + (j0 / 4 + jj) * dvp) + c0;
        __m512i vv[4];
        for (int c = 0; c < NVC; c++)
            vv[c] = vrow[c];
        for (int r = 0; r < ATTN_QB; r++) {
            __m512i pr = _mm512_set1_epi32((int)pq[r * (ATTN_KT / 4) + jj]);
            for (int c = 0; c < NVC; c++)
                acc[r][c] = _mm512_dpbusd_epi32(acc[r][c], pr, vv[c]);
        }
    }
    for (int c = 0; c < NVC; c++) {
        const __m512 f =
            _mm512_mul_ps(_mm512_load_ps(sv + (c0 + c) * ATTN_VLEN), _mm512_set1_ps(1.f / 255.f));
        for (int r = 0; r < ATTN_QB; r++)
            oacc[r * nvd + c0 + c] = (vf)_mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[r][c]), f,
                                                         (__m512)oacc[r * nvd + c0 + c]);
    }
}
#define PV_BLOCK(NVC)                                                                              \
    do {                                                                                           \
        if (pv8)                                                                                   \
            pv_block_i8(s->oacc, ptb, (const uint32_t *)s->vp, sv8, nvd, j0, kn, c0, NVC);         \
        else                                                                                       \
            pv_block_bf16(s->oacc, ptb, s->vp, nvd, j0, kn, c0, NVC);                              \
    } while (0)
#else
#define PV_BLOCK(NVC) pv_block(s->oacc, s->pt, s->vp, nvd, j0, kn, c0, NVC)
#endif

#ifndef ATTN_AMX
/* One block of up to QB query rows [i0, i0 + nb) of head (b, h). */
static void query_block(const attn_params *p, int64_t b, int64_t h, int64_t i0, int64_t nb,
                        const float *Q, float *O, attn_scratch *s, int64_t nkv, int64_t nvd) {
    const int64_t D = p->D, Sk = p->Sk;
    float m[ATTN_QB], l[ATTN_QB];
    int64_t limit[ATTN_QB]; /* last visible key per row */
#ifdef ATTN_BF16
    const int64_t D2 = ATTN_D2(p);
    const uint32_t *qs32 = (const uint32_t *)s->qs;
    uint32_t *ptb = (uint32_t *)(s->pt + ATTN_QB * ATTN_NV);
    const bool qk8 = s->io & CPU_ATTN_QK_INT8, pv8 = s->io & CPU_ATTN_PV_INT8;
    const int64_t D4 = ATTN_D4(p), skp = nkv * ATTN_VLEN;
    const float *sv8 = pv8 ? ATTN_V8_SCALES(s, skp, nvd * ATTN_VLEN) : NULL;
    float sq[ATTN_QB]; /* QK_INT8: the query rows' scales */
#endif
    for (int r = 0; r < ATTN_QB; r++) {
        m[r] = -INFINITY;
        l[r] = 0.0f;
        limit[r] = -1;
#ifdef ATTN_BF16
        uint32_t *qrow = (uint32_t *)s->qs + r * (qk8 ? D4 : D2);
        for (int64_t dd = D / 2; dd < D2 && !qk8; dd++) /* the pad features */
            qrow[dd] = 0;
        sq[r] = 0.f;
        if (r < nb) {
            limit[r] = p->causal ? i0 + r + (Sk - p->Sq) : Sk - 1;
            if (limit[r] > Sk - 1) limit[r] = Sk - 1;
            bool qb = s->io & CPU_ATTN_IO_Q;
            const void *qsrc = elem_at(Q, qb, b * p->q_sb + h * p->q_sh + (i0 + r) * p->q_ss);
            if (qk8)
                sq[r] = quant_row8(qsrc, qb, D, p->scale, 128, (uint8_t *)qrow, NULL);
            else
                cvt_any(qsrc, qb, D, p->scale, (uint16_t *)qrow);
        } else if (qk8) {
            for (int64_t dd = 0; dd < D4; dd++)
                qrow[dd] = 0;
        } else {
            for (int64_t dd = 0; dd < D2; dd++)
                qrow[dd] = 0;
        }
#else
        const float *q = Q + b * p->q_sb + h * p->q_sh;
        float *qs = s->qs + r * D;
        if (r < nb) {
            limit[r] = p->causal ? i0 + r + (Sk - p->Sq) : Sk - 1;
            if (limit[r] > Sk - 1) limit[r] = Sk - 1;
            const float *qr = q + (i0 + r) * p->q_ss;
            for (int64_t d = 0; d < D; d++)
                qs[d] = qr[d] * p->scale;
        } else {
            for (int64_t d = 0; d < D; d++)
                qs[d] = 0.0f;
        }
#endif
        for (int64_t c = 0; c < nvd; c++)
            s->oacc[r * nvd + c] = vsplat(0.0f);
    }
    int64_t last = -1; /* last key any row of the block sees */
    for (int r = 0; r < nb; r++)
        last = limit[r] > last ? limit[r] : last;
    const int64_t moff = b * p->mask.sb + h * p->mask.sh;
    float *ptf = (float *)s->pt;
    for (int64_t j0 = 0; j0 <= last; j0 += ATTN_KT) {
        /* scores of the tile: acc[r][c] = sum_d qs[r][d] * K^T[d][j0 + c*VLEN ..] */
        vf acc[ATTN_QB][ATTN_NV];
        for (int r = 0; r < ATTN_QB; r++)
            for (int c = 0; c < ATTN_NV; c++)
                acc[r][c] = vsplat(0.0f);
        const vf *kt = s->kt + j0 / ATTN_VLEN;
#ifdef ATTN_BF16
        if (qk8) { /* u8 x s8 sums, then sq * sk * (sum - 128 sum k) */
            __m512i iacc[ATTN_QB][ATTN_NV];
            for (int r = 0; r < ATTN_QB; r++)
                for (int c = 0; c < ATTN_NV; c++)
                    iacc[r][c] = _mm512_setzero_si512();
            for (int64_t dd = 0; dd < D4; dd++) {
                const __m512i *krow = (const __m512i *)((const uint32_t *)s->kt + dd * skp + j0);
                __m512i kv[ATTN_NV];
                for (int c = 0; c < ATTN_NV; c++)
                    kv[c] = krow[c];
                for (int r = 0; r < ATTN_QB; r++) {
                    __m512i qv = _mm512_set1_epi32((int)qs32[r * D4 + dd]);
                    for (int c = 0; c < ATTN_NV; c++)
                        iacc[r][c] = _mm512_dpbusd_epi32(iacc[r][c], qv, kv[c]);
                }
            }
            const float *sk = ATTN_K8_SCALES(s, p, skp) + j0;
            const int32_t *kc = ATTN_K8_CORR(s, p, skp) + j0;
            for (int c = 0; c < ATTN_NV; c++) {
                const __m512 skv = _mm512_load_ps(sk + c * ATTN_VLEN);
                const __m512i kcv = _mm512_load_si512(kc + c * ATTN_VLEN);
                for (int r = 0; r < ATTN_QB; r++)
                    acc[r][c] =
                        (vf)_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(iacc[r][c], kcv)),
                                          _mm512_mul_ps(skv, _mm512_set1_ps(sq[r])));
            }
        }
        for (int64_t dd = 0; dd < D2 && !qk8; dd++) {
            const vf *krow = kt + dd * nkv;
            __m512bh kv[ATTN_NV];
            for (int c = 0; c < ATTN_NV; c++)
                kv[c] = (__m512bh)krow[c];
            for (int r = 0; r < ATTN_QB; r++) {
                __m512bh qv = (__m512bh)_mm512_set1_epi32((int)qs32[r * D2 + dd]);
                for (int c = 0; c < ATTN_NV; c++)
                    acc[r][c] = (vf)_mm512_dpbf16_ps((__m512)acc[r][c], qv, kv[c]);
            }
        }
#else
        for (int64_t d = 0; d < D; d++) {
            const vf *krow = kt + d * nkv;
            vf kv[ATTN_NV];
            for (int c = 0; c < ATTN_NV; c++)
                kv[c] = krow[c];
            for (int r = 0; r < ATTN_QB; r++) {
                float qv = s->qs[r * D + d];
                for (int c = 0; c < ATTN_NV; c++)
                    acc[r][c] += qv * kv[c];
            }
        }
#endif
        int64_t kn = last + 1 - j0 < ATTN_KT ? last + 1 - j0 : ATTN_KT; /* keys used */
        for (int r = 0; r < ATTN_QB; r++) {
            vf *prow = s->pt + r * ATTN_NV;
            if (r >= nb || limit[r] < j0) { /* row sees nothing of this tile */
                for (int c = 0; c < ATTN_NV; c++)
                    prow[c] = vsplat(0.0f);
                continue;
            }
            const int64_t mrow = moff + (i0 + r) * p->mask.sq;
            bool whole = limit[r] >= j0 + ATTN_KT - 1 && !p->mask.keep &&
                         (!p->mask.add || p->mask.sk == 1 || p->mask.sk == 0);
            if (whole) {
                if (p->mask.add && p->mask.sk == 1) {
                    for (int c = 0; c < ATTN_NV; c++)
                        acc[r][c] += vload(p->mask.add + mrow + j0 + c * ATTN_VLEN);
                } else if (p->mask.add) {
                    float mv = p->mask.add[mrow];
                    for (int c = 0; c < ATTN_NV; c++)
                        acc[r][c] += mv;
                }
            } else { /* partial tile: fix the scores one by one */
                float *sr = ptf + r * ATTN_KT;
                for (int c = 0; c < ATTN_NV; c++)
                    prow[c] = acc[r][c];
                for (int64_t j = 0; j < ATTN_KT; j++) {
                    int64_t key = j0 + j;
                    if (key > limit[r] ||
                        (p->mask.keep && !p->mask.keep[mrow + key * p->mask.sk])) {
                        sr[j] = -INFINITY;
                    } else if (p->mask.add) {
                        sr[j] += p->mask.add[mrow + key * p->mask.sk];
                    }
                }
                for (int c = 0; c < ATTN_NV; c++)
                    acc[r][c] = prow[c];
            }
            /* online softmax update */
            vf vmax = acc[r][0];
            for (int c = 1; c < ATTN_NV; c++) {
                vi gt = acc[r][c] > vmax;
                vmax = vsel(gt, acc[r][c], vmax);
            }
            float tmax = hmax(vmax);
            float mnew = tmax > m[r] ? tmax : m[r];
            if (mnew == -INFINITY) { /* nothing visible yet */
                for (int c = 0; c < ATTN_NV; c++)
                    prow[c] = vsplat(0.0f);
                continue;
            }
            if (mnew != m[r]) {
                float corr = m[r] == -INFINITY ? 0.0f : expf(m[r] - mnew);
                l[r] *= corr;
                vf *o = s->oacc + r * nvd;
                for (int64_t c = 0; c < nvd; c++)
                    o[c] *= corr;
                m[r] = mnew;
            }
            vf vsum = vsplat(0.0f);
            for (int c = 0; c < ATTN_NV; c++) {
                vf e = vexp(acc[r][c] - mnew);
                prow[c] = e;
                vsum += e;
            }
            l[r] += hsum(vsum);
        }
#ifdef ATTN_BF16
        if (pv8) /* P to u8 (steps of 1/255), keys in order (quads as u32) */
            for (int r = 0; r < ATTN_QB; r++)
                for (int c = 0; c < ATTN_NV; c++)
                    _mm_store_si128((__m128i *)((uint8_t *)ptb + r * ATTN_KT + c * ATTN_VLEN),
                                    _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(
                                        (__m512)s->pt[r * ATTN_NV + c], _mm512_set1_ps(255.f)))));
        for (int r = 0; r < ATTN_QB && !pv8; r++) /* P to bf16, keys in order (pairs as u32) */
            for (int c = 0; c < ATTN_NV; c += 2)
                _mm512_store_si512((__m512i *)(ptb + r * (ATTN_KT / 2) + c * (ATTN_VLEN / 2)),
                                   (__m512i)_mm512_cvtne2ps_pbh((__m512)s->pt[r * ATTN_NV + c + 1],
                                                                (__m512)s->pt[r * ATTN_NV + c]));
#endif
        /* O_acc += P V over the used keys, four vectors of Dv at a time */
        int64_t c0 = 0;
        for (; c0 + 4 <= nvd; c0 += 4)
            PV_BLOCK(4);
        switch (nvd - c0) {
        case 3: PV_BLOCK(3); break;
        case 2: PV_BLOCK(2); break;
        case 1: PV_BLOCK(1); break;
        default: break;
        }
    }
#ifdef ATTN_BF16
    if (s->io & CPU_ATTN_IO_O) { /* rows rounded to bf16 */
        uint16_t *o16 = (uint16_t *)O + b * p->o_sb + h * p->o_sh;
        for (int64_t r = 0; r < nb; r++) {
            /* a NaN sum (NaN scores) gives a NaN row, as when P V carries it */
            const __m512 inv = _mm512_set1_ps(l[r] > 0.0f    ? 1.0f / l[r]
                                              : l[r] == l[r] ? 0.0f
                                                             : NAN);
            const float *acc = (const float *)(s->oacc + r * nvd);
            uint16_t *orow = o16 + (i0 + r) * p->o_ss;
            for (int64_t c = 0; c < p->Dv; c += 16) {
                int64_t n = p->Dv - c;
                __mmask16 mk = n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
                __m512 y = _mm512_mul_ps(_mm512_maskz_loadu_ps(mk, acc + c), inv);
                _mm256_mask_storeu_epi16(orow + c, mk, (__m256i)_mm512_cvtneps_pbh(y));
            }
        }
        return;
    }
#endif
    float *o = O + b * p->o_sb + h * p->o_sh;
    for (int64_t r = 0; r < nb; r++) {
#ifdef ATTN_BF16 /* a NaN sum gives a NaN row, as when P V carries it */
        float inv = l[r] > 0.0f ? 1.0f / l[r] : l[r] == l[r] ? 0.0f : NAN;
#else
        float inv = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
#endif
        const float *acc = (const float *)(s->oacc + r * nvd);
        float *orow = o + (i0 + r) * p->o_ss;
        for (int64_t c = 0; c < p->Dv; c++)
            orow[c] = acc[c] * inv;
    }
}

#else
#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/attention_amx_block.h"
#endif /* !ATTN_AMX */

static void scratch_free(attn_scratch *s) {
    if (s->borrowed) {
        memset(s, 0, sizeof *s);
        return;
    }
    mopt_aligned_free(s->kt);
    mopt_aligned_free(s->vp);
    mopt_aligned_free(s->oacc);
    mopt_aligned_free(s->pt);
    mopt_aligned_free(s->qs);
    memset(s, 0, sizeof *s);
}

/* Bytes of the packed K^T (*a) and V (*b) of one head; false on overflow. */
static bool pack_bytes(const attn_params *p, int64_t nkv, int64_t nvd, size_t *a, size_t *b) {
    size_t vb = sizeof(vf);
#ifdef ATTN_BF16 /* K^T: D/2 rows of pairs (QK_INT8: D/4 of quads, 2 of scales and sums) */
    return mopt_mul_overflow((size_t)ATTN_D2(p) + 2, (size_t)nkv, a) &&
           mopt_mul_overflow(*a, vb, a) &&
           mopt_mul_overflow((size_t)nkv * (ATTN_VLEN / 2), (size_t)(nvd ? nvd : 1), b) &&
           mopt_mul_overflow(*b, vb, b);
#else
    return mopt_mul_overflow((size_t)(p->D ? p->D : 1), (size_t)nkv, a) &&
           mopt_mul_overflow(*a, vb, a) &&
           mopt_mul_overflow((size_t)nkv * ATTN_VLEN, (size_t)(nvd ? nvd : 1), b) &&
           mopt_mul_overflow(*b, vb, b);
#endif
}

#define ATTN_ROUND64(x) (((x) + 63) & ~(size_t)63)

/* The five per-thread buffers' sizes; false on overflow. */
static bool scratch_sizes(const attn_params *p, int64_t nkv, int64_t nvd, size_t sz[5]) {
    size_t vb = sizeof(vf);
    if (!pack_bytes(p, nkv, nvd, &sz[0], &sz[1])) return false;
    sz[2] = (size_t)ATTN_QB * (size_t)(nvd ? nvd : 1) * vb;
    sz[3] = (size_t)ATTN_QB * ATTN_NV * vb;
    sz[4] = (size_t)ATTN_QB * (size_t)(p->D ? p->D : 1) * sizeof(float);
#ifdef ATTN_BF16
    sz[3] += (size_t)ATTN_QB * ATTN_KT * sizeof(uint16_t); /* bf16 P */
    if (p->D > (int64_t)(INT32_MAX / 16)) return false;    /* K's gather offsets are int32 */
    sz[4] = (size_t)(ATTN_QS_BUFS * ATTN_QB + 16) * (size_t)(ATTN_D2(p) > 0 ? ATTN_D2(p) : 1) *
            sizeof(uint32_t);
#endif
#ifdef ATTN_AMX /* pt: a row of scores (then P in place) per query of the block, up                \
                  to ATTN_AMX_KC keys; oacc: the accumulator, then a chunk's P V */
    const int64_t kcv = nkv < ATTN_AMX_KC / ATTN_VLEN ? nkv : ATTN_AMX_KC / ATTN_VLEN;
    sz[3] = (size_t)ATTN_QB * sizeof(vf) * (size_t)(kcv ? kcv : 1);
    sz[2] *= 2;
#endif
    return true;
}

size_t ATTN_SCRATCH_FN(const attn_params *p, size_t *tile_bytes) {
    const int64_t nkv = (p->Sk + ATTN_KT - 1) / ATTN_KT * ATTN_NV;
    const int64_t nvd = (p->Dv + ATTN_VLEN - 1) / ATTN_VLEN;
    size_t sz[5], total = 0;
    if (tile_bytes) *tile_bytes = (size_t)ATTN_QB * ATTN_NV * sizeof(vf);
    if (!scratch_sizes(p, nkv, nvd, sz)) return 0;
#ifdef ATTN_AMX
    if (tile_bytes) *tile_bytes = sz[3];
#endif
    for (int i = 0; i < 5; i++) {
        if (sz[i] > SIZE_MAX / 2 - total) return 0;
        total += ATTN_ROUND64(sz[i]);
    }
    return total;
}

/* Per-thread buffers: carved from the caller's workspace when it is big
 * enough (s->borrowed), else allocated. */
static bool scratch_alloc(attn_scratch *s, const attn_params *p, int64_t nkv, int64_t nvd,
                          int tid) {
    memset(s, 0, sizeof *s);
    s->packed_b = s->packed_h = -1;
    s->q_b = s->q_h = s->q_i0 = -1;
    size_t sz[5];
    if (!scratch_sizes(p, nkv, nvd, sz)) return false;
    if (p->work && p->work_per_thread >= ATTN_SCRATCH_FN(p, NULL)) {
        char *base = (char *)p->work + (size_t)tid * p->work_per_thread;
        void **slots[5] = {(void **)&s->kt, (void **)&s->vp, (void **)&s->oacc, (void **)&s->pt,
                           (void **)&s->qs};
        for (int i = 0; i < 5; i++) {
            *slots[i] = base;
            base += ATTN_ROUND64(sz[i]);
        }
        s->borrowed = true;
        return true;
    }
    s->kt = mopt_aligned_alloc(sz[0]);
    s->vp = mopt_aligned_alloc(sz[1]);
    s->oacc = mopt_aligned_alloc(sz[2]);
    s->pt = mopt_aligned_alloc(sz[3]);
    s->qs = mopt_aligned_alloc(sz[4]);
    if (!s->kt || !s->vp || !s->oacc || !s->pt || !s->qs) {
        scratch_free(s);
        return false;
    }
    return true;
}

#ifdef ATTN_BF16
static bool attn_body(const attn_params *p, const float *Q, const float *K, const float *V,
                      float *O, unsigned io, int threads);

bool ATTN_FN(const attn_params *p, const float *Q, const float *K, const float *V, float *O,
             int threads) {
    return attn_body(p, Q, K, V, O, 0, threads);
}

bool ATTN_IO_FN(const attn_params *p, const void *Q, const void *K, const void *V, void *O,
                unsigned io, int threads) {
    return attn_body(p, Q, K, V, O, io, threads);
}

static bool attn_body(const attn_params *p, const float *Q, const float *K, const float *V,
                      float *O, unsigned io, int threads) {
#else
bool ATTN_FN(const attn_params *p, const float *Q, const float *K, const float *V, float *O,
             int threads) {
#endif
    if (p->B <= 0 || p->H <= 0 || p->Sq <= 0 || p->Dv <= 0) return true;
    const int64_t nkv = (p->Sk + ATTN_KT - 1) / ATTN_KT * ATTN_NV; /* vectors per K^T row */
    const int64_t nvd = (p->Dv + ATTN_VLEN - 1) / ATTN_VLEN;       /* vectors per V row */
    const int64_t nqb = (p->Sq + ATTN_QB - 1) / ATTN_QB;           /* query blocks per head */
    const int64_t heads = p->B * p->H;
    if (threads < 1) threads = 1;
    /* split a head's query blocks into chunks when there are fewer heads
     * than threads (each chunk packs its head's K/V itself) */
    int64_t nchunk = (2 * (int64_t)threads + heads - 1) / heads;
    if (threads == 1 || nchunk < 1) nchunk = 1;
    if (nchunk > nqb) nchunk = nqb;
    const int64_t ntask = heads * nchunk;
    int n_threads = (int64_t)threads < ntask ? threads : (int)ntask;
    bool failed = false;
#ifdef _OPENMP
#pragma omp parallel num_threads(n_threads) if (n_threads > 1)
#endif
    {
        attn_scratch s;
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        bool ok = scratch_alloc(&s, p, nkv, nvd, tid);
#ifdef ATTN_BF16
        s.io = io;
#endif
#ifdef ATTN_AMX /* this thread's tiles */
        s.io = io & ~(CPU_ATTN_QK_INT8 | CPU_ATTN_PV_INT8);
        amx_tiles_config();
#endif
        if (!ok) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            failed = true;
        }
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (int64_t t = 0; t < ntask; t++) {
            if (!ok) continue;
            int64_t head = t / nchunk, chunk = t % nchunk;
            int64_t b = head / p->H, h = head % p->H;
            int64_t qb0 = nqb * chunk / nchunk, qb1 = nqb * (chunk + 1) / nchunk;
            if (s.packed_b != b || s.packed_h != h) pack_head(p, b, h, K, V, &s, nkv, nvd);
            for (int64_t qb = qb0; qb < qb1; qb++) {
                int64_t i0 = qb * ATTN_QB;
                int64_t nb = p->Sq - i0 < ATTN_QB ? p->Sq - i0 : ATTN_QB;
                query_block(p, b, h, i0, nb, Q, O, &s, nkv, nvd);
            }
        }
        if (ok) scratch_free(&s);
#ifdef ATTN_AMX
        _tile_release();
#endif
    }
    (void)n_threads;
    return !failed;
}
