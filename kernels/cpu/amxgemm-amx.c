/*
 * amxgemm-amx.c — the AMX half of the bf16 GEMM (amxgemm.h), built with
 * -mamx-tile -mamx-bf16 -mavx512bf16 (kernels/meson.build): a register
 * block of 32 rows x 32 columns is four f32 accumulator tiles (0-3), fed by
 * two A tiles (4-5, 16 rows x 32 bf16 each, read with A's stride) and the
 * two B tiles of a packed panel step (6-7). Per work unit (an M block of up
 * to mb rows and a group of panels): per panel, K in chunks of kc (the
 * panel's chunk, kc x 32 bf16, stays in L1 while every 32-row block of the
 * M block passes over it; the M block's rows stay in L2 across panels),
 * the accumulators saved to a stack scratch between chunks; then the
 * epilogue (alpha, bias, residual, activation, FusedConv's post affine, f32
 * or bf16 store) on the panel's scratch, still in L1. When K is one chunk
 * (K <= kc: the pointwise convs) each 32-row block's epilogue follows its
 * product at once, on 4 KB of accumulators (not the M block's 32 KB, which
 * left L1 before its epilogue read it back: 1.2-2x slower at K <= 120).
 * Never called unless cpu_get() reports amx_bf16 and avx512_bf16 and the
 * OS granted the tile state.
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/amxgemm.h"
#include "kernels/cpu/simd-avx512.h"
#include "kernels/cpu/vmath.h"

/* C[32 x 32] (row stride 32 floats) += A[32 rows, steps x 32] B: A's
 * steps packed (two 16 x 32 tiles per step, 2 KB), the panel's steps from
 * bp; C starts at zero when first. */
static inline void amx_block(const uint16_t *ap, const uint16_t *bp, int64_t steps, float *c,
                             bool first) {
    if (first) {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
    } else {
        _tile_loadd(0, c, 128);
        _tile_loadd(1, c + 16, 128);
        _tile_loadd(2, c + 16 * 32, 128);
        _tile_loadd(3, c + 16 * 32 + 16, 128);
    }
    for (int64_t s = 0; s < steps; s++) {
        _tile_loadd(4, ap + s * 1024, 64);
        _tile_loadd(6, bp + s * 1024, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_loadd(7, bp + s * 1024 + 512, 64);
        _tile_dpbf16ps(1, 4, 7);
        _tile_loadd(5, ap + s * 1024 + 512, 64);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, c, 128);
    _tile_stored(1, c + 16, 128);
    _tile_stored(2, c + 16 * 32, 128);
    _tile_stored(3, c + 16 * 32 + 16, 128);
}

static inline vf clamp(vf x, vf lo, vf hi) {
    /* NaN stays NaN (the reference's compares) */
    return v_sel(v_lt(x, lo), lo, v_sel(v_gt(x, hi), hi, x));
}

/* GELU, exact (erf) form, cheaper than vmath.h's v_gelu_erf (two thirds of
 * its operations; FFN1 + GELU of a BERT-like h768 layer ran 1.03x
 * oneDNN's time with v_gelu_erf, its product alone 0.81-0.90x):
 * 1 + erf(z) from erfc(|z|) = t P(t) e^(-z^2), t = 1 / (1 + 0.3275911
 * |z|) (Abramowitz-Stegun 7.1.26, |error| <= 1.5e-7, relative in the
 * tail), 1/(1 + p|z|) by rcp14 and one Newton step. Measured against
 * erff on a grid of [-10, 10] in tests/unit/test_kernels.c (cpu_amx_gemm). */
static inline vf amx_gelu_erf(vf x) {
    const vf z = v_mul(x, v_set1(0.70710678118654752440f));
    const vf a = v_abs(z);
    const vf d = v_fmadd(a, v_set1(0.3275911f), v_set1(1.0f));
    vf t = _mm512_rcp14_ps(d);
    t = v_mul(t, v_fnmadd(d, t, v_set1(2.0f)));
    vf q = v_set1(1.061405429f);
    q = v_fmadd(q, t, v_set1(-1.453152027f));
    q = v_fmadd(q, t, v_set1(1.421413741f));
    q = v_fmadd(q, t, v_set1(-0.284496736f));
    q = v_fmadd(q, t, v_set1(0.254829592f));
    const vf erfc = v_mul(v_mul(q, t), v_exp_weight(v_neg(v_mul(a, a))));
    const vf f = v_sel(v_lt(z, v_zero()), erfc, v_sub(v_set1(2.0f), erfc));
    return v_sel(v_isnan(x), x, v_mul(v_mul(v_set1(0.5f), x), f));
}

static inline __attribute__((always_inline)) vf amx_act(const cpu_amx_plan *p, vf x) {
    switch (p->act) {
    case KN_ACT_RELU: return v_max(v_zero(), x); /* NaN: the second operand */
    case KN_ACT_LEAKY_RELU: return v_sel(v_lt(x, v_zero()), v_mul(x, v_set1(p->act_alpha)), x);
    case KN_ACT_CLIP: return clamp(x, v_set1(p->act_alpha), v_set1(p->act_beta));
    case KN_ACT_HARD_SWISH:
        return v_mul(x,
                     clamp(v_fmadd(x, v_set1(1.0f / 6.0f), v_set1(0.5f)), v_zero(), v_set1(1.0f)));
    case KN_ACT_HARD_SIGMOID:
        return clamp(v_fmadd(x, v_set1(p->act_alpha), v_set1(p->act_beta)), v_zero(), v_set1(1.0f));
    case KN_ACT_SIGMOID: return v_sigmoid(x);
    case KN_ACT_TANH: return v_tanh(x);
    case KN_ACT_SWISH: return v_mul(x, v_sigmoid(x));
    case KN_ACT_GELU: return amx_gelu_erf(x);
    case KN_ACT_GELU_TANH: return v_gelu_tanh(x);
    default: return x;
    }
}

static inline vf load_bf16(const uint16_t *p, __mmask16 m) {
    __m256i h = _mm256_maskz_loadu_epi16(m, p);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

static inline void store_bf16(uint16_t *p, vf v, __mmask16 m) {
    _mm256_mask_storeu_epi16(p, m, (__m256i)_mm512_cvtneps_pbh(v));
}

/* Y rows [m0, m0 + rows), columns [n0, n0 + 32) ∩ [0, N) from the panel's
 * accumulators c (row stride 32), one activation per case (hoisted switch) */
static inline __attribute__((always_inline)) void
amx_epilogue_act(const cpu_amx_plan *p, const float *c, int64_t m0, int64_t rows, int64_t n0,
                 const void *res, bool res_bf16, void *y, bool y_bf16, kn_act act) {
    const int64_t N = p->N;
    const vf alpha = v_set1(p->alpha);
    for (int h = 0; h < 2; h++) {
        int64_t cols = N - n0 - 16 * h;
        if (cols <= 0) break;
        const __mmask16 m = cols >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << cols) - 1u);
        const int64_t col = n0 + 16 * h;
        const vf bias = p->bias ? _mm512_maskz_loadu_ps(m, p->bias + col) : v_zero();
        for (int64_t r = 0; r < rows; r++) {
            const int64_t off = (m0 + r) * N + col;
            vf v = v_fmadd(v_load(c + r * 32 + 16 * h), alpha, bias);
            if (res)
                v = v_add(v, res_bf16 ? load_bf16((const uint16_t *)res + off, m)
                                      : _mm512_maskz_loadu_ps(m, (const float *)res + off));
            cpu_amx_plan q = *p;
            q.act = act;
            v = amx_act(&q, v);
            if (p->post) v = v_fmadd(v, v_set1(p->post_scale), v_set1(p->post_shift));
            if (y_bf16)
                store_bf16((uint16_t *)y + off, v, m);
            else
                _mm512_mask_storeu_ps((float *)y + off, m, v);
        }
    }
}

#define AMX_EPI_CASE(A)                                                                            \
    case A: amx_epilogue_act(p, c, m0, rows, n0, res, res_bf16, y, y_bf16, A); break;

static void amx_epilogue(const cpu_amx_plan *p, const float *c, int64_t m0, int64_t rows,
                         int64_t n0, const void *res, bool res_bf16, void *y, bool y_bf16) {
    switch (p->act) {
        AMX_EPI_CASE(KN_ACT_RELU)
        AMX_EPI_CASE(KN_ACT_LEAKY_RELU)
        AMX_EPI_CASE(KN_ACT_CLIP)
        AMX_EPI_CASE(KN_ACT_HARD_SWISH)
        AMX_EPI_CASE(KN_ACT_HARD_SIGMOID)
        AMX_EPI_CASE(KN_ACT_SIGMOID)
        AMX_EPI_CASE(KN_ACT_TANH)
        AMX_EPI_CASE(KN_ACT_SWISH)
        AMX_EPI_CASE(KN_ACT_GELU)
        AMX_EPI_CASE(KN_ACT_GELU_TANH)
    default: amx_epilogue_act(p, c, m0, rows, n0, res, res_bf16, y, y_bf16, KN_ACT_NONE); break;
    }
}

/* Rows [m0, m1) of A into the packed block ap (see amx_block), zero beyond
 * K and from m1 to the next multiple of 32. */
static void amx_pack_a(const cpu_amx_plan *p, const cpu_amx_io *io, int64_t m0, int64_t m1,
                       uint16_t *ap) {
    const int64_t steps = p->Kp / CPU_AMX_KS, K = p->K;
    const int64_t rows = (m1 - m0 + CPU_AMX_MR - 1) / CPU_AMX_MR * CPU_AMX_MR;
    for (int64_t r = 0; r < rows; r++) {
        uint16_t *d = ap + (r / CPU_AMX_MR) * steps * 1024 + (r % CPU_AMX_MR) * 32;
        if (m0 + r >= m1) {
            for (int64_t s = 0; s < steps; s++)
                _mm512_storeu_si512(d + s * 1024, _mm512_setzero_si512());
            continue;
        }
        for (int64_t s = 0; s < steps; s++) {
            const int64_t k = s * CPU_AMX_KS, n = K - k < 32 ? K - k : 32;
            const __mmask32 m = n == 32 ? (__mmask32)0xffffffffu : (__mmask32)((1u << n) - 1u);
            __m512i v;
            if (io->a_bf16) {
                v = _mm512_maskz_loadu_epi16(m, (const uint16_t *)io->a + (m0 + r) * io->lda + k);
            } else {
                const float *x = (const float *)io->a + (m0 + r) * io->lda + k;
                const __mmask16 lo = (__mmask16)m, hi = (__mmask16)(m >> 16);
                v = (__m512i)_mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(hi, x + 16),
                                                 _mm512_maskz_loadu_ps(lo, x));
            }
            _mm512_storeu_si512(d + s * 1024, v);
        }
    }
}

void cpu_amx_run(const cpu_amx_plan *p, const cpu_amx_io *io, int64_t u0, int64_t u1,
                 void *scratch) {
    if (u0 >= u1) return;
    amx_tiles_config();
    float *c = scratch;
    uint16_t *ap = (uint16_t *)(c + p->mb * 32);
    const int64_t panels = p->Np / CPU_AMX_NR, groups = (panels + p->pg - 1) / p->pg;
    const int64_t steps_all = p->Kp / CPU_AMX_KS, steps_kc = p->kc / CPU_AMX_KS;
    int64_t packed_m0 = -1;
    for (int64_t u = u0; u < u1; u++) {
        const int64_t m0 = u / groups * p->mb, g = u % groups;
        const int64_t m1 = m0 + p->mb < io->M ? m0 + p->mb : io->M;
        const int64_t p1 = (g + 1) * p->pg < panels ? (g + 1) * p->pg : panels;
        if (m0 != packed_m0) amx_pack_a(p, io, m0, m1, ap);
        packed_m0 = m0;
        for (int64_t pn = g * p->pg; pn < p1; pn++) {
            const uint16_t *bpan = p->bp + pn * CPU_AMX_NR * p->Kp;
            if (steps_all <= steps_kc) {
                /* one K chunk (small K: the 1x1 convs): each 32-row block's
                 * epilogue right after its product, on 4 KB of
                 * accumulators still in L1 (the same sums: the same bits) */
                for (int64_t r = 0; r < m1 - m0; r += CPU_AMX_MR) {
                    amx_block(ap + r / CPU_AMX_MR * steps_all * 1024, bpan, steps_all, c, true);
                    const int64_t rows = m1 - m0 - r < CPU_AMX_MR ? m1 - m0 - r : CPU_AMX_MR;
                    amx_epilogue(p, c, m0 + r, rows, pn * CPU_AMX_NR, io->res, io->res_bf16, io->y,
                                 io->y_bf16);
                }
                continue;
            }
            for (int64_t s0 = 0; s0 < steps_all; s0 += steps_kc) {
                const int64_t steps = steps_all - s0 < steps_kc ? steps_all - s0 : steps_kc;
                for (int64_t r = 0; r < m1 - m0; r += CPU_AMX_MR)
                    amx_block(ap + (r / CPU_AMX_MR * steps_all + s0) * 1024, bpan + s0 * 1024,
                              steps, c + r * 32, s0 == 0);
            }
            amx_epilogue(p, c, m0, m1 - m0, pn * CPU_AMX_NR, io->res, io->res_bf16, io->y,
                         io->y_bf16);
        }
    }
    _tile_release();
}
