/*
 * decode_attn-impl.h — body of cpu_decode_attn_f32_<tier> (decode_attn-<tier>.c
 * includes a simd-<tier>.h, then this): mopt.DecodeAttention (kn_decode_attn,
 * kernels.h) for query rows [lo, hi) of B * H * M, reading the token-major
 * caches where they lie. Per row, keys in chunks of DA_CHUNK, two passes
 * each: (1) the scores, VW keys at a time (per key a vector of partial
 * products over the head dim; the VW vectors summed across lanes at once
 * by one transpose-add tree), scaled and masked, into a stack buffer, with
 * their max; (2) the weights exp(s - max) (vmath.h v_exp_weight), their
 * sum, and the weighted rows of V added into the accumulator (each weight
 * broadcast from its register once, two keys into two sums). Between
 * chunks the accumulator is rescaled
 * when the max grows (online softmax), so every K and V row is read once and
 * nothing grows with the past but the loop. Two passes rather than a rescale
 * per block: the block max no longer sits on the critical path of every
 * block (measured ~1.4x at 256 keys). With query positions (a causal mask
 * folded by the kv_cache pass) the loop stops at the row's position; the
 * hidden keys after it, each scored fill, are added at the end only when
 * their weight is not 0 in f32. D and Dv are at most
 * CPU_DECODE_ATTN_MAX_D and at least 1 (the op glue checks).
 */
#include <math.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/vmath.h"

#define DA_MAXV (CPU_DECODE_ATTN_MAX_D / VW)

/* lane i of x in every lane (from the register: a store then narrow loads
 * of the lanes would wait on store forwarding) */
static inline vf da_lane(vf x, int64_t i) {
#if VW == 16
    return _mm512_permutexvar_ps(_mm512_set1_epi32((int)i), x);
#elif VW == 8
    return _mm256_permutevar8x32_ps(x, _mm256_set1_epi32((int)i));
#else
    return v_set1(x[i]);
#endif
}

/* The last vector of a row of n (1..VW) floats: a plain load when it is
 * whole (AVX2's masked load, vmaskmovps, costs more than a load; measured
 * 2-8% on the whole kernel) */
static inline vf da_load_last(const float *p, int64_t n) {
    return n == VW ? v_load(p) : v_load_n(p, n);
}

/* x[0..VW) -> the vector of their horizontal sums */
static inline vf da_sums(const vf *x) {
#if VW == 16
    return v_hsums16(x);
#elif VW == 8
    return v256_hsums8(x);
#else
    float s[VW];
    for (int i = 0; i < VW; i++)
        s[i] = v_hsum(x[i]);
    return v_load(s);
#endif
}

/* Where(keep[0..VW), s, fill) for one whole block of contiguous bytes */
static inline vf da_keep(const uint8_t *keep, vf s, float fill) {
#if VW == 16
    const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)keep);
    return _mm512_mask_blend_ps(_mm_test_epi8_mask(b, b), _mm512_set1_ps(fill), s);
#elif VW == 8
    const __m256i w = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)keep));
    const __m256 drop = _mm256_castsi256_ps(_mm256_cmpeq_epi32(w, _mm256_setzero_si256()));
    return _mm256_blendv_ps(s, _mm256_set1_ps(fill), drop);
#else
    for (int i = 0; i < VW; i++)
        s[i] = keep[i] ? s[i] : fill;
    return s;
#endif
}

/* Scores of one row held at a time: keys go in chunks of DA_CHUNK (16 KB
 * of stack), two passes each, the online rescale between chunks. */
#define DA_CHUNK 4096

/* scores s[0..kn) (kn <= VW) of keys j0.. of one row: dot products, scale,
 * mask; lanes past kn are -inf */
static inline __attribute__((always_inline)) vf da_scores(const kn_decode_attn *p, const vf *qv,
                                                          const float *k, int64_t hd, int64_t moff,
                                                          const int64_t *kp, int64_t j0, int64_t kn,
                                                          const int64_t ND, int64_t dt) {
    vf part[VW];
    for (int64_t i = 0; i < VW; i++) {
        vf a = v_zero();
        if (i < kn) {
            const float *kr = k + (j0 + i) * hd;
            for (int64_t c = 0; c + 1 < ND; c++)
                a = v_fmadd(qv[c], v_load(kr + c * VW), a);
            a = v_fmadd(qv[ND - 1], da_load_last(kr + (ND - 1) * VW, dt), a);
        }
        part[i] = a;
    }
    vf s = v_mul(da_sums(part), v_set1(p->scale));
    if (kn == VW && p->mask.sk == 1 && p->mask.keep)
        return da_keep(p->mask.keep + moff + j0, s, p->fill);
    if (kn == VW && p->mask.sk == 1 && p->mask.add)
        return v_add(s, v_load(p->mask.add + moff + j0));
    if (!p->mask.keep && !p->mask.add && !kp && kn == VW) return s;
    float sb[VW];
    v_store(sb, s);
    if (kp)
        for (int64_t i = 0; i < kn; i++)
            sb[i] = kp[j0 + i] ? sb[i] : p->fill;
    const int64_t st = p->mask.sk, at = moff + j0 * st;
    if (p->mask.keep) {
        const uint8_t *keep = p->mask.keep + at;
        for (int64_t i = 0; i < kn; i++)
            sb[i] = keep[i * st] ? sb[i] : p->fill;
    } else if (p->mask.add) {
        const float *ap = p->mask.add + at;
        for (int64_t i = 0; i < kn; i++)
            sb[i] += ap[i * st];
    }
    for (int64_t i = kn; i < VW; i++)
        sb[i] = -INFINITY; /* e^-inf = 0: no weight */
    return v_load(sb);
}

/* The online softmax's running max *mrun raised to m when m is larger: the
 * sums so far (acc, acc2: NV vectors each; lv), relative to the old max,
 * are scaled by e^(old - m). */
static inline __attribute__((always_inline)) void da_raise_max(float m, float *mrun, vf *acc,
                                                               vf *acc2, vf *lv, const int64_t NV) {
    if (!(m > *mrun)) return;
    if (*mrun != -INFINITY) {
        const vf corr = v_set1(expf(*mrun - m));
        for (int64_t c = 0; c < NV; c++) {
            acc[c] = v_mul(acc[c], corr);
            acc2[c] = v_mul(acc2[c], corr);
        }
        *lv = v_mul(*lv, corr);
    }
    *mrun = m;
}

/* One row; ND and NV are the vectors per row of K and V (constants in the
 * specialized copies, so that their loops unroll). */
static inline __attribute__((always_inline)) void da_row_n(const kn_decode_attn *p, int64_t row,
                                                           const int64_t ND, const int64_t NV) {
    const int64_t H = p->H, M = p->M, D = p->D, Dv = p->Dv, T = p->T;
    const int64_t b = row / (H * M), h = row / M % H, m = row % M;
    const int64_t hd = H * D, hdv = H * Dv;
    const float *q = p->q + row * D;
    const float *k = p->k + b * T * hd + h * D;
    const float *v = p->v + b * T * hdv + h * Dv;
    const int64_t moff = b * p->mask.sb + h * p->mask.sh + m * p->mask.sq;
    /* keys past the row's position are hidden (the tail below) */
    const int64_t tv = kn_decode_attn_visible(p, b, m);
    const int64_t *kp = p->kpad ? p->kpad + b * p->kp_sb : NULL;
    const int64_t dt = D - (ND - 1) * VW, vt = Dv - (NV - 1) * VW; /* lanes of the last chunk */
    float buf[DA_CHUNK];
    vf qv[DA_MAXV], acc[DA_MAXV], acc2[DA_MAXV];
    for (int64_t c = 0; c + 1 < ND; c++)
        qv[c] = v_load(q + c * VW);
    qv[ND - 1] = v_load_n(q + (ND - 1) * VW, dt);
    for (int64_t c = 0; c < NV; c++)
        acc[c] = acc2[c] = v_zero();
    vf lv = v_zero();
    float mrun = -INFINITY;
    for (int64_t c0 = 0; c0 < tv; c0 += DA_CHUNK) {
        const int64_t cn = tv - c0 < DA_CHUNK ? tv - c0 : DA_CHUNK;
        /* pass 1: the chunk's scores and their max */
        vf vmax = v_set1(-INFINITY);
        for (int64_t j = 0; j < cn; j += VW) {
            const vf s =
                da_scores(p, qv, k, hd, moff, kp, c0 + j, cn - j < VW ? cn - j : VW, ND, dt);
            v_store(buf + j, s);
            vmax = v_max(vmax, s);
        }
        da_raise_max(v_hmax(vmax), &mrun, acc, acc2, &lv, NV);
        if (mrun == -INFINITY) continue; /* nothing visible yet */
        /* pass 2: weights, their sum, and the weighted rows of V, two keys
         * at a time into two sums (each weight broadcast once) */
        const vf mx = v_set1(mrun);
        for (int64_t j = 0; j < cn; j += VW) {
            const int64_t kn = cn - j < VW ? cn - j : VW;
            const vf e = v_exp_weight(v_sub(v_load(buf + j), mx));
            lv = v_add(lv, e);
            const float *vb = v + (c0 + j) * hdv;
            int64_t i = 0;
            for (; i + 2 <= kn; i += 2) {
                const vf w0 = da_lane(e, i), w1 = da_lane(e, i + 1);
                const float *r0 = vb + i * hdv, *r1 = r0 + hdv;
                for (int64_t c = 0; c + 1 < NV; c++) {
                    acc[c] = v_fmadd(w0, v_load(r0 + c * VW), acc[c]);
                    acc2[c] = v_fmadd(w1, v_load(r1 + c * VW), acc2[c]);
                }
                acc[NV - 1] = v_fmadd(w0, da_load_last(r0 + (NV - 1) * VW, vt), acc[NV - 1]);
                acc2[NV - 1] = v_fmadd(w1, da_load_last(r1 + (NV - 1) * VW, vt), acc2[NV - 1]);
            }
            if (i < kn) {
                const vf w0 = da_lane(e, i);
                const float *r0 = vb + i * hdv;
                for (int64_t c = 0; c + 1 < NV; c++)
                    acc[c] = v_fmadd(w0, v_load(r0 + c * VW), acc[c]);
                acc[NV - 1] = v_fmadd(w0, da_load_last(r0 + (NV - 1) * VW, vt), acc[NV - 1]);
            }
        }
    }
    /* the hidden keys past the position, each scored fill: their weight
     * e^(fill - max) is 0 in f32 (and they are skipped) unless the visible
     * scores are within ~104 of fill */
    float lextra = 0.0f;
    if (tv < T && p->fill > -INFINITY) {
        const float f = p->fill;
        da_raise_max(f, &mrun, acc, acc2, &lv, NV);
        const float w = expf(f - mrun);
        if (w > 0.0f) {
            const vf wv = v_set1(w);
            lextra = (float)(T - tv) * w;
            for (int64_t t = tv; t < T; t++) {
                const float *r0 = v + t * hdv;
                for (int64_t c = 0; c + 1 < NV; c++)
                    acc[c] = v_fmadd(wv, v_load(r0 + c * VW), acc[c]);
                acc[NV - 1] = v_fmadd(wv, da_load_last(r0 + (NV - 1) * VW, vt), acc[NV - 1]);
            }
        }
    }
    /* T = 0: an empty product (zeros); every score -inf: NaN, as Softmax */
    const float inv = T == 0 ? 0.0f : mrun == -INFINITY ? NAN : 1.0f / (v_hsum(lv) + lextra);
    const vf vinv = v_set1(inv);
    float *y = p->y + row * Dv;
    for (int64_t c = 0; c + 1 < NV; c++)
        v_store(y + c * VW, v_mul(v_add(acc[c], acc2[c]), vinv));
    v_store_n(y + (NV - 1) * VW, v_mul(v_add(acc[NV - 1], acc2[NV - 1]), vinv), vt);
}

#define DA_ROWS(ND, NV)                                                                            \
    for (int64_t r = lo; r < hi; r++)                                                              \
        da_row_n(p, r, ND, NV);

void CPU_FN(cpu_decode_attn_f32)(const kn_decode_attn *p, int64_t lo, int64_t hi) {
    const int64_t nd = (p->D + VW - 1) / VW, nv = (p->Dv + VW - 1) / VW;
    /* head dims up to 4 vectors with D = Dv: unrolled copies */
    if (nd == nv && nd == 1) {
        DA_ROWS(1, 1)
    } else if (nd == nv && nd == 2) {
        DA_ROWS(2, 2)
    } else if (nd == nv && nd == 3) {
        DA_ROWS(3, 3)
    } else if (nd == nv && nd == 4) {
        DA_ROWS(4, 4)
    } else {
        DA_ROWS(nd, nv)
    }
}
