/*
 * attention_amx_block.h — the query block of attention_impl.h's AMX variant
 * (ATTN_AMX; attention-amx.c), included by attention_impl.h in place of the
 * register-tile query block. Per block of 32 query rows:
 *   1. the scores against every key the block sees, on AMX tiles
 *      (tdpbf16ps; per step two row tiles x two key tiles, four 16 x 16 f32
 *      accumulators, so each K tile loaded serves 32 rows) into a
 *      [32][Sk_pad] f32 buffer (s->pt);
 *   2. per row, in zmm: causality and the mask (invisible keys -inf), the
 *      row's maximum, exp(score - max) summed in f32 and rounded to bf16
 *      pairs of keys, written in place over the row's first half;
 *   3. O = P V on tiles (two row tiles x two 16-column tiles of Dv at a time,
 *      A = P, B = the V pairs), then each row times 1 / its sum.
 * So the softmax is exact per block (no running max: the block keeps one row
 * of scores per query, O(Sk) memory per thread) and the accumulators stay in
 * tiles for all the keys. Scores and P rounding as the AVX512-BF16 variant:
 * products in bf16, sums and softmax in f32, not the same bits.
 */
#if ATTN_QB != 32 || ATTN_KT % 32
#error "the AMX variant computes blocks of 32 query rows, 32 keys per step"
#endif
/* Keys per chunk of a row: rows up to this long take one pass (exact
 * softmax); longer ones are cut into chunks, with a running max, the sums
 * and the accumulator rescaled between chunks (online softmax), so that the
 * score buffer stays [32][ATTN_AMX_KC] f32 (64 KiB at 512). */
#ifndef ATTN_AMX_KC
#define ATTN_AMX_KC 512
#endif
#if ATTN_AMX_KC % 64
#error "ATTN_AMX_KC: a multiple of 64"
#endif

/* Tiles 0-3: accumulators; 4, 5: A; 6, 7: B (amx_tiles.h's configuration). */

/* sc[32][kend] (f32, row stride ss) for keys [0, kend) of kt, kend a multiple
 * of 32: qs [32][D2] bf16 pairs times K^T pairs [D2][skp] (D2 a multiple of
 * 16). Two row tiles
 * x two key tiles per step, so that each K tile loaded serves 32 rows. */
static void amx_scores(const uint32_t *qs, int64_t D2, const uint32_t *kt, int64_t skp,
                       int64_t kend, float *sc, int64_t ss) {
    const int64_t ks = skp * 4, os = ss * 4;
    for (int64_t j0 = 0; j0 < kend; j0 += 32) {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
        for (int64_t dd = 0; dd < D2; dd += 16) {
            const uint32_t *kb = kt + dd * skp + j0;
            _tile_loadd(4, qs + dd, D2 * 4);
            _tile_loadd(6, kb, ks);
            _tile_dpbf16ps(0, 4, 6);
            _tile_loadd(7, kb + 16, ks);
            _tile_dpbf16ps(1, 4, 7);
            _tile_loadd(5, qs + 16 * D2 + dd, D2 * 4);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
        }
        _tile_stored(0, sc + j0, os);
        _tile_stored(1, sc + j0 + 16, os);
        _tile_stored(2, sc + 16 * ss + j0, os);
        _tile_stored(3, sc + 16 * ss + j0 + 16, os);
    }
}

/* oacc [32][dvp] (f32) = P [32][kp] (bf16 pairs, row stride skp dwords) times
 * the V pairs [kp/2][dvp] (kp a multiple of 32; P is 0 for keys a row does
 * not see and V's pad rows are 0): two row tiles x two column tiles at a
 * time. */
static void amx_pv(float *oacc, const uint32_t *pb, int64_t skp, const uint32_t *vp, int64_t dvp,
                   int64_t kp) {
    const int64_t os = dvp * 4, ps = skp * 4;
    for (int64_t c0 = 0; c0 < dvp; c0 += 32) {
        const bool two = dvp - c0 >= 32;
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
        for (int64_t j = 0; j < kp; j += 32) {
            const uint32_t *vb = vp + j / 2 * dvp + c0;
            _tile_loadd(4, pb + j / 2, ps);
            _tile_loadd(6, vb, os);
            _tile_dpbf16ps(0, 4, 6);
            _tile_loadd(5, pb + 16 * skp + j / 2, ps);
            _tile_dpbf16ps(2, 5, 6);
            if (two) {
                _tile_loadd(7, vb + 16, os);
                _tile_dpbf16ps(1, 4, 7);
                _tile_dpbf16ps(3, 5, 7);
            }
        }
        _tile_stored(0, oacc + c0, os);
        _tile_stored(2, oacc + 16 * dvp + c0, os);
        if (two) {
            _tile_stored(1, oacc + c0 + 16, os);
            _tile_stored(3, oacc + 16 * dvp + c0 + 16, os);
        }
    }
}

/* exp(x - m) for x <= m (a score, its row's max), given ml2 = m * log2(e)
 * rounded to f32: 2^y, y = x log2(e) - ml2 (one fused rounding; ml2's
 * rounding is a factor common to the row, which the normalisation cancels),
 * n = round(y), f = y - n in [-1/2, 1/2], 2^f by a degree-4 polynomial
 * (fitted to relative error, < 2.7e-6: far below P's bf16 rounding), scalef
 * by n. 9 operations against 12 for Cody-Waite and a degree-6 Taylor.
 * Exactly 0 for y < -126 (and -inf); NaN stays NaN. */
static inline __m512 amx_exp(__m512 x, __m512 ml2) {
    const __m512 y = _mm512_fmsub_ps(x, _mm512_set1_ps(1.44269504089f), ml2);
    const __mmask16 ok = _mm512_cmp_ps_mask(y, _mm512_set1_ps(-126.0f), _CMP_NLT_UQ);
    const __m512 n = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 f = _mm512_sub_ps(y, n);
    __m512 e = _mm512_set1_ps(0.009570099413394928f);
    e = _mm512_fmadd_ps(e, f, _mm512_set1_ps(0.05591786280274391f));
    e = _mm512_fmadd_ps(e, f, _mm512_set1_ps(0.240247443318367f));
    e = _mm512_fmadd_ps(e, f, _mm512_set1_ps(0.6931217908859253f));
    e = _mm512_fmadd_ps(e, f, _mm512_set1_ps(0.9999992847442627f));
    return _mm512_maskz_scalef_ps(ok, e, n);
}

/* Pass 1 of amx_row_softmax: the invisible keys of the row's chunk -inf and
 * the additive mask added, in place; returns the lanes' maxima. */
static inline __m512 amx_row_mask(const attn_params *p, float *sr, int64_t k0, int64_t kn,
                                  int64_t lim, int64_t mrow) {
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    __m512 vmax = ninf;
    int64_t j = 0;
    /* the keys all visible, with no keep mask and an additive one (if any)
     * contiguous over keys (BERT's [B,1,1,S]): as below, without the masks */
    const int64_t nfull = lim + 1 - k0 < kn ? (lim + 1 - k0) & ~(int64_t)15 : kn;
    if (!p->mask.keep && p->mask.add && p->mask.sk == 1) {
        const float *ma = p->mask.add + mrow + k0;
        for (; j < nfull; j += 16) {
            const __m512 v = _mm512_add_ps(_mm512_load_ps(sr + j), _mm512_loadu_ps(ma + j));
            _mm512_store_ps(sr + j, v);
            vmax = _mm512_max_ps(vmax, v);
        }
    } else if (!p->mask.keep && !p->mask.add) {
        for (; j < nfull; j += 16)
            vmax = _mm512_max_ps(vmax, _mm512_load_ps(sr + j));
    }
    for (; j < kn; j += 16) {
        const int64_t key = k0 + j, nvis = lim + 1 - key;
        __mmask16 vis = nvis >= 16 ? (__mmask16)0xffff
                        : nvis > 0 ? (__mmask16)((1u << nvis) - 1)
                                   : (__mmask16)0;
        __m512 v = _mm512_load_ps(sr + j);
        if (vis && p->mask.keep) {
            if (p->mask.sk == 1) {
                __m128i k8 = _mm_maskz_loadu_epi8(vis, p->mask.keep + mrow + key);
                vis &= _mm_test_epi8_mask(k8, k8);
            } else {
                for (int t = 0; t < 16; t++)
                    if (((vis >> t) & 1) && !p->mask.keep[mrow + (key + t) * p->mask.sk])
                        vis &= (__mmask16) ~(1u << t);
            }
        }
        if (vis && p->mask.add) {
            if (p->mask.sk == 1) {
                v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(vis, p->mask.add + mrow + key));
            } else if (p->mask.sk == 0) {
                v = _mm512_add_ps(v, _mm512_set1_ps(p->mask.add[mrow]));
            } else {
                float a[16] = {0};
                for (int t = 0; t < 16; t++)
                    if ((vis >> t) & 1) a[t] = p->mask.add[mrow + (key + t) * p->mask.sk];
                v = _mm512_add_ps(v, _mm512_loadu_ps(a));
            }
        }
        v = _mm512_mask_blend_ps(vis, ninf, v);
        _mm512_store_ps(sr + j, v);
        vmax = _mm512_max_ps(vmax, v);
    }
    return vmax;
}

/* Row sr of scores for keys [k0, k0 + kn) (kn a multiple of 32) of a query
 * whose last visible key is lim and whose mask row starts at mrow: invisible
 * keys (past lim, or masked out) -inf, the additive mask added; the running
 * max *m moves to include the chunk's; P = exp(score - *m) as bf16 pairs in
 * place (dwords [0, kn/2) of the row); *l = *l * corr + the f32 sum of the
 * (unrounded) P. Returns corr, the factor of what was summed before
 * (exp(old max - new max); 0 before any visible key). */
static float amx_row_softmax(const attn_params *p, float *sr, int64_t k0, int64_t kn, int64_t lim,
                             int64_t mrow, float *m, float *l) {
    const __m512 vmax = amx_row_mask(p, sr, k0, kn, lim, mrow);
    uint32_t *pr = (uint32_t *)sr;
    const float cmax = _mm512_reduce_max_ps(vmax);
    const float mnew = cmax > *m ? cmax : *m;
    if (mnew == -INFINITY) { /* nothing visible yet */
        for (int64_t j = 0; j < kn / 2; j += 16)
            _mm512_store_si512((__m512i *)(pr + j), _mm512_setzero_si512());
        return 0.0f;
    }
    const float corr = *m == -INFINITY ? 0.0f : mnew == *m ? 1.0f : expf(*m - mnew);
    *m = mnew;
    const __m512 ml2 = _mm512_set1_ps(mnew * 1.44269504089f);
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    for (int64_t j = 0; j < kn; j += 32) { /* both halves read before the pairs are written */
        __m512 e0 = amx_exp(_mm512_load_ps(sr + j), ml2);
        __m512 e1 = amx_exp(_mm512_load_ps(sr + j + 16), ml2);
        s0 = _mm512_add_ps(s0, e0);
        s1 = _mm512_add_ps(s1, e1);
        _mm512_store_si512((__m512i *)(pr + j / 2), (__m512i)_mm512_cvtne2ps_pbh(e1, e0));
    }
    *l = *l * corr + _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
    return corr;
}

/* Rows [i0, i0 + 32) of head (b, h) (those < Sq) as scaled bf16 pairs into
 * qs [32][D2] (pad pairs and rows 0). */
static void amx_load_q(const attn_params *p, int64_t b, int64_t h, int64_t i0, const float *Q,
                       const attn_scratch *s, uint32_t *qs) {
    const int64_t D = p->D, D2 = ATTN_D2(p);
    const bool qb = s->io & CPU_ATTN_IO_Q;
    for (int64_t r = 0; r < ATTN_QB; r++) {
        uint32_t *qrow = qs + r * D2;
        if (i0 + r < p->Sq) {
            for (int64_t dd = D / 2; dd < D2; dd++) /* the pad features */
                qrow[dd] = 0;
            cvt_any(elem_at(Q, qb, b * p->q_sb + h * p->q_sh + (i0 + r) * p->q_ss), qb, D, p->scale,
                    (uint16_t *)qrow);
        } else {
            for (int64_t dd = 0; dd < D2; dd++)
                qrow[dd] = 0;
        }
    }
}

/* One block of up to 32 query rows [i0, i0 + nb) of head (b, h). Its query
 * rows come from qs's next buffer when the previous block put them there
 * (s->q_*), else are converted now; this block converts the next block's
 * rows between the softmax and P V, so that neither tile load of freshly
 * stored data (P, the rows) waits for the stores. */
static void query_block(const attn_params *p, int64_t b, int64_t h, int64_t i0, int64_t nb,
                        const float *Q, float *O, attn_scratch *s, int64_t nkv, int64_t nvd) {
    const int64_t Sk = p->Sk, D2 = ATTN_D2(p);
    const int64_t skp = nkv * ATTN_VLEN, dvp = nvd * ATTN_VLEN;
    float *sc = (float *)s->pt, *oacc = (float *)s->oacc;
    int buf = s->q_buf;
    if (s->q_b != b || s->q_h != h || s->q_i0 != i0) {
        buf = 0;
        amx_load_q(p, b, h, i0, Q, s, (uint32_t *)s->qs);
    }
    const uint32_t *qs = (const uint32_t *)s->qs + buf * ATTN_QB * D2;
    int64_t limit[ATTN_QB], last = -1; /* last visible key per row, of the block */
    for (int r = 0; r < ATTN_QB; r++) {
        limit[r] = -1;
        if (r < nb) {
            limit[r] = p->causal ? i0 + r + (Sk - p->Sq) : Sk - 1;
            if (limit[r] > Sk - 1) limit[r] = Sk - 1;
            last = limit[r] > last ? limit[r] : last;
        }
    }
    const int64_t kend = (last + 32) / 32 * 32;               /* keys seen: whole tiles of 32 */
    const int64_t ss = skp < ATTN_AMX_KC ? skp : ATTN_AMX_KC; /* score row stride */
    const int64_t moff = b * p->mask.sb + h * p->mask.sh;
    float m[ATTN_QB], l[ATTN_QB], corr[ATTN_QB];
    for (int r = 0; r < ATTN_QB; r++)
        m[r] = -INFINITY, l[r] = 0.0f;
    float *pvt = oacc + ATTN_QB * dvp; /* a later chunk's P V, before it is added */
    for (int64_t k0 = 0; k0 < kend || k0 == 0; k0 += ATTN_AMX_KC) {
        const int64_t kn = kend - k0 < ATTN_AMX_KC ? kend - k0 : ATTN_AMX_KC;
        if (kn > 0) amx_scores(qs, D2, (const uint32_t *)s->kt + k0, skp, kn, sc, ss);
        for (int r = 0; r < ATTN_QB; r++) {
            float *sr = sc + r * ss;
            if (r < nb) {
                corr[r] = amx_row_softmax(p, sr, k0, kn, limit[r], moff + (i0 + r) * p->mask.sq,
                                          &m[r], &l[r]);
            } else { /* rows past the block: P = 0 */
                for (int64_t j = 0; j < kn / 2; j++)
                    ((uint32_t *)sr)[j] = 0;
            }
        }
        if (k0 == 0 && i0 + ATTN_QB < p->Sq) { /* the next block's rows */
            amx_load_q(p, b, h, i0 + ATTN_QB, Q, s, (uint32_t *)s->qs + (1 - buf) * ATTN_QB * D2);
            s->q_b = b, s->q_h = h, s->q_i0 = i0 + ATTN_QB, s->q_buf = 1 - buf;
        }
        if (k0 == 0) { /* the first chunk's P V is the accumulator */
            if (kn > 0) {
                amx_pv(oacc, (const uint32_t *)sc, ss, (const uint32_t *)s->vp, dvp, kn);
            } else {
                for (int64_t k = 0; k < ATTN_QB * dvp; k++)
                    oacc[k] = 0.0f;
            }
            continue;
        }
        /* later chunks (rows longer than ATTN_AMX_KC keys): O = O * corr + P V */
        amx_pv(pvt, (const uint32_t *)sc, ss, (const uint32_t *)s->vp + k0 / 2 * dvp, dvp, kn);
        for (int64_t r = 0; r < nb; r++) {
            const __m512 c = _mm512_set1_ps(corr[r]);
            for (int64_t c0 = 0; c0 < dvp; c0 += 16)
                _mm512_store_ps(oacc + r * dvp + c0,
                                _mm512_fmadd_ps(_mm512_load_ps(oacc + r * dvp + c0), c,
                                                _mm512_load_ps(pvt + r * dvp + c0)));
        }
    }
    for (int64_t r = 0; r < nb; r++) {
        /* a NaN sum (NaN scores) gives a NaN row, as when P V carries it */
        const __m512 inv = _mm512_set1_ps(l[r] > 0.0f ? 1.0f / l[r] : l[r] == l[r] ? 0.0f : NAN);
        const float *acc = oacc + r * dvp;
        if (s->io & CPU_ATTN_IO_O) { /* rounded to bf16 */
            uint16_t *orow = (uint16_t *)O + b * p->o_sb + h * p->o_sh + (i0 + r) * p->o_ss;
            for (int64_t c = 0; c < p->Dv; c += 16) {
                int64_t n = p->Dv - c;
                __mmask16 mk = n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
                __m512 y = _mm512_mul_ps(_mm512_maskz_loadu_ps(mk, acc + c), inv);
                _mm256_mask_storeu_epi16(orow + c, mk, (__m256i)_mm512_cvtneps_pbh(y));
            }
        } else {
            float *orow = O + b * p->o_sb + h * p->o_sh + (i0 + r) * p->o_ss;
            for (int64_t c = 0; c < p->Dv; c += 16) {
                int64_t n = p->Dv - c;
                __mmask16 mk = n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
                _mm512_mask_storeu_ps(orow + c, mk,
                                      _mm512_mul_ps(_mm512_maskz_loadu_ps(mk, acc + c), inv));
            }
        }
    }
}
