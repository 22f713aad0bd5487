/*
 * qlstm-avx512.c — cpu_dq_lstm_gates_avx512 (qlstm.h): DynamicQuantizeLSTM's
 * gates with the default activations, 16 hidden units per vector, the same
 * IEEE operations in the same order as ref_dq_lstm_f32's scalar code (fused
 * multiply-adds where it calls fmaf, separate products and sums elsewhere),
 * so results are bit-identical. The clamps use vmaxps(bound, v) and
 * vminps(bound, v), which return v when v is NaN, as the scalar
 * "v < lo ? lo : v > hi ? hi : v" does. Built in the VNNI library (its
 * AVX-512 flags); call only when cpu_kernels_for("avx512").
 */
#include <immintrin.h>

#include "kernels/cpu/qlstm.h"

static inline __m512 clamp(__m512 v, float lo, float hi) {
    return _mm512_min_ps(_mm512_set1_ps(hi), _mm512_max_ps(_mm512_set1_ps(lo), v));
}

static inline __m512 fma_(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
#define K(x) _mm512_set1_ps(x)

static inline __m512 logistic(__m512 x) {
    const __m512 v = clamp(x, -18.0f, 18.0f), v2 = _mm512_mul_ps(v, v);
    __m512 p = fma_(v2, K(4.37031012579801e-11f), K(1.15627324459942e-07f));
    p = fma_(p, v2, K(6.08574864600143e-05f));
    p = fma_(p, v2, K(8.51377133304701e-03f));
    p = fma_(p, v2, K(2.48287947061529e-01f));
    p = _mm512_mul_ps(p, v);
    __m512 q = fma_(v2, K(6.10247389755681e-13f), K(5.76102136993427e-09f));
    q = fma_(q, v2, K(6.29106785017040e-06f));
    q = fma_(q, v2, K(1.70198817374094e-03f));
    q = fma_(q, v2, K(1.16817656904453e-01f));
    q = fma_(q, v2, K(9.93151921023180e-01f));
    return _mm512_add_ps(_mm512_div_ps(p, q), K(0.5f));
}

static inline __m512 tanh_(__m512 x) {
    const __m512 v = clamp(x, -9.0f, 9.0f), v2 = _mm512_mul_ps(v, v);
    __m512 p = fma_(v2, K(-2.76076847742355e-16f), K(2.00018790482477e-13f));
    p = fma_(p, v2, K(-8.60467152213735e-11f));
    p = fma_(p, v2, K(5.12229709037114e-08f));
    p = fma_(p, v2, K(1.48572235717979e-05f));
    p = fma_(p, v2, K(6.37261928875436e-04f));
    p = fma_(p, v2, K(4.89352455891786e-03f));
    p = _mm512_mul_ps(p, v);
    __m512 q = fma_(v2, K(1.19825839466702e-06f), K(1.18534705686654e-04f));
    q = fma_(q, v2, K(2.26843463243900e-03f));
    q = fma_(q, v2, K(4.89352518554385e-03f));
    return _mm512_div_ps(p, q);
}

void cpu_dq_lstm_gates_avx512(const ref_rnn_params *p, int64_t H, const float *g, const float *P,
                              float *c, float *h) {
    const bool clip = p->has_clip, fi = p->input_forget;
    const float cl = p->clip;
#define CLIP(v) (clip ? clamp(v, -cl, cl) : (v))
    for (int64_t j = 0; j < H; j += 16) {
        const __mmask16 m = (__mmask16)(H - j >= 16 ? 0xFFFF : (1u << (H - j)) - 1);
        const __m512 cb = _mm512_maskz_loadu_ps(m, c + j);
        const __m512 gi = _mm512_maskz_loadu_ps(m, g + j);
        const __m512 go = _mm512_maskz_loadu_ps(m, g + H + j);
        const __m512 gf = _mm512_maskz_loadu_ps(m, g + 2 * H + j);
        const __m512 gc = _mm512_maskz_loadu_ps(m, g + 3 * H + j);
        const __m512 zero = _mm512_setzero_ps();
        const __m512 pi = P ? _mm512_mul_ps(_mm512_maskz_loadu_ps(m, P + j), cb) : zero;
        const __m512 pf = P ? _mm512_mul_ps(_mm512_maskz_loadu_ps(m, P + 2 * H + j), cb) : zero;
        const __m512 i = logistic(CLIP(_mm512_add_ps(gi, pi)));
        const __m512 f = fi ? _mm512_sub_ps(K(1.0f), i) : logistic(CLIP(_mm512_add_ps(gf, pf)));
        const __m512 cc = tanh_(CLIP(gc));
        const __m512 keep = _mm512_mul_ps(cb, f), add = _mm512_mul_ps(i, cc);
        const __m512 cn = _mm512_add_ps(keep, add);
        const __m512 po = P ? _mm512_mul_ps(_mm512_maskz_loadu_ps(m, P + H + j), cn) : zero;
        const __m512 o = logistic(CLIP(_mm512_add_ps(go, po)));
        _mm512_mask_storeu_ps(c + j, m, cn);
        _mm512_mask_storeu_ps(h + j, m, _mm512_mul_ps(o, tanh_(cn)));
    }
#undef CLIP
}
