/*
 * decode_attn-impl.h — body of cpu_decode_attn_f32_<tier> (decode_attn-<tier>.c
 * includes a simd-<tier>.h, then this): mopt.DecodeAttention (kn_decode_attn,
 * kernels.h) for query rows [lo, hi) of B * H * M, reading the token-major
 * caches where they lie. Per row, one pass over the keys in blocks of VW:
 * the block's VW dot products (per key a vector of partial products over
 * the head dim, the VW vectors then summed across lanes at once, one
 * transpose-add tree per block), scale and mask, an online softmax (running
 * max; the accumulator and running sum rescaled when the max grows), and
 * the weighted rows of V added into the accumulator. Each cache row is read
 * once; nothing but one block of scores (VW floats) is stored. D and Dv are
 * at most CPU_DECODE_ATTN_MAX_D and at least 1 (the op glue checks).
 */
#include <math.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/vmath.h"

#define DA_MAXV (CPU_DECODE_ATTN_MAX_D / VW)

#if VW == 8 || VW == 16
/* h[0..8) -> (hsum(h[0]), ..., hsum(h[7])) */
static inline __m256 da_sums8(const __m256 *h) {
    const __m256 t0 = _mm256_hadd_ps(h[0], h[1]), t1 = _mm256_hadd_ps(h[2], h[3]);
    const __m256 t2 = _mm256_hadd_ps(h[4], h[5]), t3 = _mm256_hadd_ps(h[6], h[7]);
    const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
    return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20),
                         _mm256_permute2f128_ps(u0, u1, 0x31));
}
#endif

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

/* x[0..VW) -> the vector of their horizontal sums */
static inline vf da_sums(const vf *x) {
#if VW == 16
    __m256 h[16];
    for (int i = 0; i < 16; i++)
        h[i] = _mm256_add_ps(_mm512_castps512_ps256(x[i]), _mm512_extractf32x8_ps(x[i], 1));
    return _mm512_insertf32x8(_mm512_castps256_ps512(da_sums8(h)), da_sums8(h + 8), 1);
#elif VW == 8
    return da_sums8(x);
#else
    float s[VW];
    for (int i = 0; i < VW; i++)
        s[i] = v_hsum(x[i]);
    return v_load(s);
#endif
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
    float *y = p->y + row * Dv;
    const int64_t moff = b * p->m_sb + h * p->m_sh + m * p->m_sm;
    const int64_t nd = ND, nv = NV;
    const int64_t dt = D - (nd - 1) * VW, vt = Dv - (nv - 1) * VW; /* lanes of the last chunk */
    const bool fix = p->keep || p->add;
    vf qv[DA_MAXV], acc[DA_MAXV];
    for (int64_t c = 0; c + 1 < nd; c++)
        qv[c] = v_load(q + c * VW);
    qv[nd - 1] = v_load_n(q + (nd - 1) * VW, dt);
    for (int64_t c = 0; c < nv; c++)
        acc[c] = v_zero();
    vf lv = v_zero();
    const vf scale = v_set1(p->scale);
    float mrun = -INFINITY, sb[VW];
    for (int64_t j0 = 0; j0 < T; j0 += VW) {
        const int64_t kn = T - j0 < VW ? T - j0 : VW;
        vf part[VW];
        for (int64_t i = 0; i < VW; i++) {
            vf a = v_zero();
            if (i < kn) {
                const float *kr = k + (j0 + i) * hd;
                for (int64_t c = 0; c + 1 < nd; c++)
                    a = v_fmadd(qv[c], v_load(kr + c * VW), a);
                a = v_fmadd(qv[nd - 1], v_load_n(kr + (nd - 1) * VW, dt), a);
            }
            part[i] = a;
        }
        vf s = v_mul(da_sums(part), scale);
        if (fix || kn < VW) {
            v_store(sb, s);
            const int64_t st = p->m_st, at = moff + j0 * st;
            if (p->keep) {
                const uint8_t *kp = p->keep + at;
                const float fill = p->fill;
                for (int64_t i = 0; i < kn; i++)
                    sb[i] = kp[i * st] ? sb[i] : fill;
            } else if (p->add) {
                const float *ap = p->add + at;
                for (int64_t i = 0; i < kn; i++)
                    sb[i] += ap[i * st];
            }
            for (int64_t i = kn; i < VW; i++)
                sb[i] = -INFINITY; /* e^-inf = 0: no weight */
            s = v_load(sb);
        }
        const float bmax = v_hmax(s);
        if (bmax > mrun) {
            if (mrun != -INFINITY) {
                const vf corr = v_set1(expf(mrun - bmax));
                for (int64_t c = 0; c < nv; c++)
                    acc[c] = v_mul(acc[c], corr);
                lv = v_mul(lv, corr);
            }
            mrun = bmax;
        }
        if (mrun == -INFINITY) continue; /* nothing visible yet */
        const vf e = v_exp(v_sub(s, v_set1(mrun)));
        lv = v_add(lv, e);
        /* acc += sum_i e[i] V[j0 + i], one chunk of Dv at a time over the
         * block's keys in four independent sums (no chain through memory;
         * the missing keys of a last block weigh 0, their rows are not read) */
        const float *vb = v + j0 * hdv;
        for (int64_t c = 0; c < nv; c++) {
            const int64_t n = c + 1 < nv ? VW : vt;
            vf a0 = acc[c], a1 = v_zero(), a2 = v_zero(), a3 = v_zero();
            int64_t i = 0;
            for (; i + 4 <= kn; i += 4) {
                const float *r = vb + i * hdv + c * VW;
                a0 = v_fmadd(da_lane(e, i), v_load_n(r, n), a0);
                a1 = v_fmadd(da_lane(e, i + 1), v_load_n(r + hdv, n), a1);
                a2 = v_fmadd(da_lane(e, i + 2), v_load_n(r + 2 * hdv, n), a2);
                a3 = v_fmadd(da_lane(e, i + 3), v_load_n(r + 3 * hdv, n), a3);
            }
            for (; i < kn; i++)
                a0 = v_fmadd(da_lane(e, i), v_load_n(vb + i * hdv + c * VW, n), a0);
            acc[c] = v_add(v_add(a0, a1), v_add(a2, a3));
        }
    }
    /* T = 0: an empty product (zeros); every score -inf: NaN, as Softmax */
    const float inv = T == 0 ? 0.0f : mrun == -INFINITY ? NAN : 1.0f / v_hsum(lv);
    const vf vinv = v_set1(inv);
    for (int64_t c = 0; c + 1 < nv; c++)
        v_store(y + c * VW, v_mul(acc[c], vinv));
    v_store_n(y + (nv - 1) * VW, v_mul(acc[nv - 1], vinv), vt);
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
