/*
 * test_attention_bf16.c — the AVX512-BF16 fused attention kernel
 * (cpu_attention_bf16_avx512, kernels/cpu/attention_impl.h with ATTN_BF16)
 * against the f32 reference ref_attention_f32: Q, K, V uniform in [-2, 2]
 * (scores of a few units), bshd and bhsd strides, odd D / Dv / Sq / Sk
 * (vector and pair tails), causal with Sk > Sq, additive per-key and
 * broadcast masks, bool masks with fully masked rows, 1 and 2 threads.
 *
 * Bound: bf16 keeps 8 significant bits (relative rounding error <= 2^-9 per
 * operand), so a score s = scale * sum q k is off by at most
 * e_s = 2 * 2^-9 * scale * sum |q||k| (+ f32 noise); the softmax weights
 * move by a factor within exp(+-2 e_s) and P and V are rounded again
 * (2^-9 each): per row, |O - O_ref| <= ((exp(2 e_s) - 1) + 2 * 2^-9)
 * * max|V| + 1e-5 * max|V|, e_s the row's largest over its keys. The test
 * also asserts the products really ran in bf16 (the result is not the f32
 * one bit for bit) and that f32 rows of zeros stay exact zeros. Then the
 * bf16-storage entry (cpu_attention_bf16io_avx512, random subsets of Q, K,
 * V, O in bf16) against the f32-storage kernel on the rounded inputs: equal
 * bit for bit (with AVX512-VNNI, half the time with Q K^T in int8 in both).
 *
 * With AVX512-VNNI, the int8 Q K^T variant (CPU_ATTN_QK_INT8) too: a query
 * row q (scaled) and a key row k are rounded to 8 bits with steps
 * max|q| / 127 and max|k| / 127, so a score is off by at most
 * e_s = D (max|q| max|k| / 254 + max|q| max|k| / 254 + max|q| max|k| / 254^2)
 * (+ f32 noise), then as above with P and V in bf16. That bound is the worst
 * case; the RMS error over all outputs must also stay below 1% of max|V|,
 * and the result must differ from the bf16 kernel's (int8 ran). With P V
 * in int8 too (CPU_ATTN_PV_INT8: P in steps of 1/255, V per column), plus
 * max|V| (Sk / 510 + 1 / 254) (the softmax sum is at least 1).
 *
 * The AMX variant (cpu_attention_bf16_amx / _bf16io_amx, attention-amx.c)
 * runs the same cases and more (several 64-key tiles, Dv over 64 columns,
 * causal rows that see no key) against the same bf16 bound, the same io
 * check, and 1 and 2 threads bit for bit; it is skipped (not passed) where
 * cpu_get() does not report amx_kernels (no AMX, or MOPT_AMX=0).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/cpu.h"
#include "core/half.h"
#include "kernels/cpu/cpu_attention.h"
#include "kernels/ref/ref_attention.h"

#define TEST_RNG_SEED 0xB16A77E57ull
#include "../test_main.h"
#include "test_rng.h"

static float frand(float lo, float hi) {
    return lo + (hi - lo) * (float)(rnd() % 100003) / 100002.0f;
}

enum { MASK_NONE, MASK_ADD_KEYS, MASK_ADD_ROW, MASK_BOOL };

typedef struct tcase {
    int64_t B, H, Sq, Sk, D, Dv;
    bool causal, bshd;
    int mask;
    int threads;
    bool ramp; /* K rows scaled up with the key index: later keys score higher */
} tcase;

static double g_max_rel; /* largest error seen / its bound, over all cases */
static double g_max_rms; /* largest RMS error / max|V| of a case */

/* The kernel under test: the AVX512-BF16 one (with its int8 flags) or AMX. */
typedef bool (*attn_f32_fn)(const attn_params *, const float *, const float *, const float *,
                            float *, int);
typedef bool (*attn_io_fn)(const attn_params *, const void *, const void *, const void *, void *,
                           unsigned, int);
typedef struct kvariant {
    const char *name;
    attn_f32_fn fn;
    attn_io_fn iofn;
    bool int8; /* runs CPU_ATTN_QK_INT8 / _PV_INT8 (with AVX512-VNNI) */
} kvariant;
static const kvariant k_avx512 = {"bf16", cpu_attention_bf16_avx512, cpu_attention_bf16io_avx512,
                                  true};
static const kvariant k_amx = {"amx", cpu_attention_bf16_amx, cpu_attention_bf16io_amx, false};
static const kvariant *g_k = &k_avx512;

/* x rounded to bf16: bits in h (may be NULL), value in r */
static void round_bf16(const float *x, int64_t n, uint16_t *h, float *r) {
    for (int64_t i = 0; i < n; i++) {
        uint16_t b = bf16_from_f32(x[i]);
        if (h) h[i] = b;
        r[i] = bf16_to_f32(b);
    }
}

/* cpu_attention_bf16io_avx512 with a random subset of Q, K, V, O stored as
 * bf16 equals, bit for bit, the f32-storage kernel on the same inputs rounded
 * to bf16 (its first step anyway) with O rounded after. */
static void io_case(const attn_params *p, const float *Q, const float *K, const float *V,
                    int64_t nq, int64_t nk, int64_t nv, int64_t no, int threads) {
    unsigned io = 1u + (unsigned)(rnd() % 15u);
    unsigned qk8 = g_k->int8 && cpu_get()->avx512_vnni && rnd() % 2 ? CPU_ATTN_QK_INT8 : 0;
    if (qk8 && rnd() % 2) qk8 |= CPU_ATTN_PV_INT8;
    float *qr = malloc((size_t)nq * sizeof *qr), *kr = malloc((size_t)nk * sizeof *kr);
    float *vr = malloc((size_t)nv * sizeof *vr), *o32 = malloc((size_t)no * sizeof *o32);
    float *of = malloc((size_t)no * sizeof *of);
    uint16_t *qh = malloc((size_t)nq * 2), *kh = malloc((size_t)nk * 2);
    uint16_t *vh = malloc((size_t)nv * 2), *oh = malloc((size_t)no * 2);
    assert_true(qr && kr && vr && o32 && of && qh && kh && vh && oh);
    round_bf16(Q, nq, qh, qr), round_bf16(K, nk, kh, kr), round_bf16(V, nv, vh, vr);
    if (qk8)
        assert_true(g_k->iofn(p, qr, kr, vr, o32, qk8, threads));
    else
        assert_true(g_k->fn(p, qr, kr, vr, o32, threads));
    void *out = io & CPU_ATTN_IO_O ? (void *)oh : (void *)of;
    assert_true(g_k->iofn(p, io & CPU_ATTN_IO_Q ? (const void *)qh : qr,
                          io & CPU_ATTN_IO_K ? (const void *)kh : kr,
                          io & CPU_ATTN_IO_V ? (const void *)vh : vr, out, io | qk8, threads));
    for (int64_t b = 0; b < p->B; b++)
        for (int64_t h = 0; h < p->H; h++)
            for (int64_t i = 0; i < p->Sq; i++)
                for (int64_t c = 0; c < p->Dv; c++) {
                    int64_t at = b * p->o_sb + h * p->o_sh + i * p->o_ss + c;
                    if (io & CPU_ATTN_IO_O) {
                        if (oh[at] != bf16_from_f32(o32[at]))
                            fail_msg("io %u: O[%lld] bf16 %04x, expected %04x (%g)", io,
                                     (long long)at, oh[at], bf16_from_f32(o32[at]), o32[at]);
                    } else if (memcmp(&of[at], &o32[at], sizeof(float)) != 0) {
                        fail_msg("io %u: O[%lld] = %g, expected %g", io, (long long)at, of[at],
                                 o32[at]);
                    }
                }
    free(qr), free(kr), free(vr), free(o32), free(of), free(qh), free(kh), free(vh), free(oh);
}

/* What the rows of an output checked so far came to: the largest |error| /
 * bound, the sum of squared errors over n elements, and whether any element
 * differs from the output compared against (`other`). */
typedef struct {
    double max_rel, sq;
    int64_t n;
    bool differs;
} row_err;

/* Checks row (b, h, i) of O against the reference R: no NaN, 0 where R is 0
 * on the fully masked row (MASK_BOOL's row 1), every |O - R| <= bound (a
 * failure names `what`, the case and the element); adds to *e. */
static void check_row(const attn_params *p, const tcase *t, const char *what, const float *O,
                      const float *R, const float *other, int64_t b, int64_t h, int64_t i,
                      double bound, row_err *e) {
    for (int64_t c = 0; c < p->Dv; c++) {
        int64_t at = b * p->o_sb + h * p->o_sh + i * p->o_ss + c;
        assert_false(isnan(O[at]));
        double err = fabs((double)O[at] - R[at]);
        if (R[at] == 0.0f && t->mask == MASK_BOOL && i == 1) assert_true(O[at] == 0.0f);
        if (err > bound)
            fail_msg("%s: B%lld H%lld Sq%lld Sk%lld D%lld Dv%lld causal%d mask%d: O[%lld] = %g, "
                     "ref %g, |err| %g > bound %g",
                     what, (long long)p->B, (long long)p->H, (long long)p->Sq, (long long)p->Sk,
                     (long long)p->D, (long long)p->Dv, t->causal, t->mask, (long long)at, O[at],
                     R[at], err, bound);
        if (err / bound > e->max_rel) e->max_rel = err / bound;
        if (O[at] != other[at]) e->differs = true;
        e->sq += err * err, e->n++;
    }
}

static double g_max_rel8, g_max_rms8; /* the int8 Q K^T variant's */

/* Q K^T in int8 (CPU_ATTN_QK_INT8, f32 storage) against the reference R;
 * O16 holds the bf16 kernel's output on entry (the int8 one must differ). */
static void qk8_case(const attn_params *p, const float *Q, const float *K, const float *V,
                     const float *R, const float *O16, int64_t no, float vmax, const tcase *t,
                     unsigned flags) {
    float *O = malloc((size_t)no * sizeof *O);
    assert_non_null(O);
    for (int64_t i = 0; i < no; i++)
        O[i] = NAN;
    assert_true(cpu_attention_bf16io_avx512(p, Q, K, V, O, flags, t->threads));
    /* P V in int8: P off by <= 1/510 per key, V by <= max|V| / 254, and the
     * softmax sum is >= 1 */
    double pv = flags & CPU_ATTN_PV_INT8 ? (double)p->Sk / 510.0 + 1.0 / 254.0 : 0.0;
    row_err e = {0};
    for (int64_t b = 0; b < p->B; b++)
        for (int64_t h = 0; h < p->H; h++) {
            double kmax = 0.0;
            for (int64_t j = 0; j < p->Sk; j++)
                for (int64_t d = 0; d < p->D; d++)
                    kmax = fmax(kmax, fabs(K[b * p->k_sb + h * p->k_sh + j * p->k_ss + d]));
            for (int64_t i = 0; i < p->Sq; i++) {
                const float *q = Q + b * p->q_sb + h * p->q_sh + i * p->q_ss;
                double qmax = 0.0;
                for (int64_t d = 0; d < p->D; d++)
                    qmax = fmax(qmax, fabs(q[d] * p->scale));
                double qk = qmax * kmax, es = (double)p->D * qk * (2.0 / 254 + 1.0 / (254.0 * 254));
                es += 2.0 * ldexp(1.0, -20) * p->D * qk; /* f32 noise */
                double bound =
                    ((exp(2.0 * es) - 1.0) * (1.0 + pv) + 2.0 * ldexp(1.0, -9) + pv + 1e-5) *
                    (double)vmax;
                check_row(p, t, "int8 QK", O, R, O16, b, h, i, bound, &e);
            }
        }
    if (e.max_rel > g_max_rel8) g_max_rel8 = e.max_rel;
    double rms = e.n ? sqrt(e.sq / (double)e.n) : 0.0;
    if (rms > 0.01 * vmax) fail_msg("int8 QK: RMS error %g > 1%% of max|V| %g", rms, vmax);
    if (rms / vmax > g_max_rms8) g_max_rms8 = rms / vmax;
    /* the bf16 kernel keeps more bits than 8: some output moves (a single
     * key or a zero-size head aside, where both are exact) */
    if (p->Sk > 1 && p->D > 1) assert_true(e.differs);
    free(O);
}

static void run_case(const tcase *t) {
    attn_params p;
    memset(&p, 0, sizeof p);
    p.B = t->B, p.H = t->H, p.Sq = t->Sq, p.Sk = t->Sk, p.D = t->D, p.Dv = t->Dv;
    p.scale = 1.0f / sqrtf((float)t->D);
    p.causal = t->causal;
    int64_t nq = p.B * p.H * p.Sq * p.D, nk = p.B * p.H * p.Sk * p.D;
    int64_t nv = p.B * p.H * p.Sk * p.Dv, no = p.B * p.H * p.Sq * p.Dv;
    if (t->bshd) { /* [B, S, H, D] */
        p.q_sb = p.Sq * p.H * p.D, p.q_sh = p.D, p.q_ss = p.H * p.D;
        p.k_sb = p.Sk * p.H * p.D, p.k_sh = p.D, p.k_ss = p.H * p.D;
        p.v_sb = p.Sk * p.H * p.Dv, p.v_sh = p.Dv, p.v_ss = p.H * p.Dv;
        p.o_sb = p.Sq * p.H * p.Dv, p.o_sh = p.Dv, p.o_ss = p.H * p.Dv;
    } else { /* [B, H, S, D] */
        p.q_sb = p.H * p.Sq * p.D, p.q_sh = p.Sq * p.D, p.q_ss = p.D;
        p.k_sb = p.H * p.Sk * p.D, p.k_sh = p.Sk * p.D, p.k_ss = p.D;
        p.v_sb = p.H * p.Sk * p.Dv, p.v_sh = p.Sk * p.Dv, p.v_ss = p.Dv;
        p.o_sb = p.H * p.Sq * p.Dv, p.o_sh = p.Sq * p.Dv, p.o_ss = p.Dv;
    }
    float *Q = malloc((size_t)nq * sizeof *Q), *K = malloc((size_t)nk * sizeof *K);
    float *V = malloc((size_t)nv * sizeof *V), *O = malloc((size_t)no * sizeof *O);
    float *R = malloc((size_t)no * sizeof *R), *madd = NULL;
    uint8_t *mbool = NULL;
    assert_non_null(Q), assert_non_null(K), assert_non_null(V), assert_non_null(O),
        assert_non_null(R);
    for (int64_t i = 0; i < nq; i++)
        Q[i] = frand(-2.f, 2.f);
    for (int64_t i = 0; i < nk; i++)
        K[i] = frand(-2.f, 2.f);
    if (t->ramp) /* the running max moves from one key chunk to the next */
        for (int64_t b = 0; b < p.B; b++)
            for (int64_t h = 0; h < p.H; h++)
                for (int64_t j = 0; j < p.Sk; j++)
                    for (int64_t d = 0; d < p.D; d++)
                        K[b * p.k_sb + h * p.k_sh + j * p.k_ss + d] *=
                            1.f + 2.f * (float)j / (float)p.Sk;
    float vmax = 0.f;
    for (int64_t i = 0; i < nv; i++) {
        V[i] = frand(-2.f, 2.f);
        vmax = fmaxf(vmax, fabsf(V[i]));
    }
    if (t->mask == MASK_ADD_KEYS) { /* [B, 1, 1, Sk]: padding-style, some keys -1e4 */
        madd = malloc((size_t)(p.B * p.Sk) * sizeof *madd);
        assert_non_null(madd);
        for (int64_t i = 0; i < p.B * p.Sk; i++)
            madd[i] = rnd() % 5 == 0 ? -10000.f : frand(-1.f, 1.f);
        p.mask.add = madd, p.mask.sb = p.Sk, p.mask.sh = 0, p.mask.sq = 0, p.mask.sk = 1;
    } else if (t->mask == MASK_ADD_ROW) { /* [Sq, Sk] broadcast over B, H */
        madd = malloc((size_t)(p.Sq * p.Sk) * sizeof *madd);
        assert_non_null(madd);
        for (int64_t i = 0; i < p.Sq * p.Sk; i++)
            madd[i] = frand(-3.f, 3.f);
        p.mask.add = madd, p.mask.sb = 0, p.mask.sh = 0, p.mask.sq = p.Sk, p.mask.sk = 1;
    } else if (t->mask == MASK_BOOL) { /* [B, H, Sq, Sk], row 1 fully masked */
        int64_t n = p.B * p.H * p.Sq * p.Sk;
        mbool = malloc((size_t)n);
        assert_non_null(mbool);
        for (int64_t i = 0; i < n; i++)
            mbool[i] = (i / p.Sk) % p.Sq == 1 ? 0 : rnd() % 3 != 0;
        p.mask.keep = mbool, p.mask.sb = p.H * p.Sq * p.Sk, p.mask.sh = p.Sq * p.Sk,
        p.mask.sq = p.Sk, p.mask.sk = 1;
    }
    assert_true(ref_attention_f32(&p, Q, K, V, R));
    for (int64_t i = 0; i < no; i++)
        O[i] = NAN;
    assert_true(g_k->fn(&p, Q, K, V, O, t->threads));
    if (g_k == &k_amx) { /* the other thread count: the same bits */
        float *O2 = malloc((size_t)no * sizeof *O2);
        assert_non_null(O2);
        assert_true(g_k->fn(&p, Q, K, V, O2, 3 - t->threads));
        if (memcmp(O, O2, (size_t)no * sizeof *O) != 0)
            fail_msg("amx: 1 and 2 threads differ (B%lld H%lld Sq%lld Sk%lld D%lld Dv%lld)",
                     (long long)p.B, (long long)p.H, (long long)p.Sq, (long long)p.Sk,
                     (long long)p.D, (long long)p.Dv);
        free(O2);
    }
    row_err e = {0};
    for (int64_t b = 0; b < p.B; b++)
        for (int64_t h = 0; h < p.H; h++)
            for (int64_t i = 0; i < p.Sq; i++) {
                const float *q = Q + b * p.q_sb + h * p.q_sh + i * p.q_ss;
                double es = 0.0;
                for (int64_t j = 0; j < p.Sk; j++) {
                    const float *k = K + b * p.k_sb + h * p.k_sh + j * p.k_ss;
                    double a = 0.0;
                    for (int64_t d = 0; d < p.D; d++)
                        a += fabs((double)q[d] * k[d]);
                    es = fmax(es, 2.0 * ldexp(1.0, -9) * p.scale * a);
                }
                double bound = ((exp(2.0 * es) - 1.0) + 2.0 * ldexp(1.0, -9) + 1e-5) * (double)vmax;
                check_row(&p, t, g_k->name, O, R, R, b, h, i, bound, &e);
            }
    if (e.max_rel > g_max_rel) g_max_rel = e.max_rel;
    /* and on average: the RMS error well under the worst-case bound (bf16
     * rounding of scores, P and V: a few 2^-9 of max|V|) */
    double rms = e.n ? sqrt(e.sq / (double)e.n) / vmax : 0.0;
    if (rms > g_max_rms) g_max_rms = rms;
    if (rms > 0.004)
        fail_msg("%s: RMS error / max|V| %g > 0.004 (Sq%lld Sk%lld D%lld Dv%lld)", g_k->name, rms,
                 (long long)p.Sq, (long long)p.Sk, (long long)p.D, (long long)p.Dv);
    assert_true(e.differs); /* the products ran in bf16, not f32 */
    if (g_k->int8 && cpu_get()->avx512_vnni) {
        qk8_case(&p, Q, K, V, R, O, no, vmax, t, CPU_ATTN_QK_INT8);
        qk8_case(&p, Q, K, V, R, O, no, vmax, t, CPU_ATTN_QK_INT8 | CPU_ATTN_PV_INT8);
    }
    io_case(&p, Q, K, V, nq, nk, nv, no, t->threads);
    free(Q), free(K), free(V), free(O), free(R), free(madd), free(mbool);
}

/* The geometries every bf16 variant is checked on (the AMX one adds its own). */
static const tcase k_common_cases[] = {
    {1, 1, 1, 1, 1, 1, false, false, MASK_NONE, 1},
    {2, 2, 128, 128, 64, 64, false, true, MASK_ADD_KEYS, 1}, /* bert_tiny-like */
    {2, 2, 128, 128, 64, 64, false, false, MASK_NONE, 2},
    {1, 3, 37, 67, 7, 5, false, false, MASK_NONE, 1},      /* odd everything */
    {1, 2, 33, 129, 33, 17, true, true, MASK_NONE, 2},     /* causal, Sk > Sq */
    {2, 1, 65, 65, 16, 48, true, false, MASK_ADD_ROW, 1},  /* causal + mask */
    {1, 2, 19, 70, 9, 80, false, false, MASK_BOOL, 1},     /* bool, one row masked */
    {1, 1, 5, 300, 128, 65, true, true, MASK_ADD_KEYS, 2}, /* long keys, wide heads */
    {3, 1, 2, 1, 3, 3, false, false, MASK_ADD_ROW, 1},     /* one key */
};

MOPT_TEST(bf16_attention_vs_ref) {
    if (!cpu_get()->avx512_bf16) skip();
    for (size_t i = 0; i < sizeof k_common_cases / sizeof k_common_cases[0]; i++)
        run_case(&k_common_cases[i]);
    /* random geometries */
    for (int n = 0; n < 25; n++) {
        tcase t = {pick(1, 2),  pick(1, 3), pick(1, 40), pick(1, 150),    pick(1, 70),
                   pick(1, 70), rnd() & 1,  rnd() & 1,   (int)pick(0, 3), (int)pick(1, 2)};
        run_case(&t);
    }
    print_message("largest error / bound: %.3f, largest RMS / max|V| %.4f\n", g_max_rel, g_max_rms);
    if (cpu_get()->avx512_vnni)
        print_message("int8 Q K^T: largest error / bound %.3f, largest RMS / max|V| %.4f\n",
                      g_max_rel8, g_max_rms8);
}

/* The AMX variant: the same cases, and ones for its own blocking (blocks of
 * 32 query rows in two row tiles, 32-key steps, 32-column accumulator
 * groups, features padded to 32, a row buffer of scores per query, rows
 * over 512 keys in chunks with a running max). */
MOPT_TEST(amx_attention_vs_ref) {
    if (!cpu_get()->amx_kernels || !cpu_attention_amx_built()) skip();
    g_k = &k_amx;
    g_max_rel = g_max_rms = 0.0;
    const tcase cases[] = {
        {1, 2, 40, 600, 100, 130, false, true, MASK_ADD_KEYS, 2}, /* many tiles, Dv > 128 */
        {1, 1, 50, 20, 64, 64, true, false, MASK_BOOL, 1},        /* causal, rows seeing nothing */
        {2, 1, 33, 97, 65, 33, true, true, MASK_ADD_ROW, 2},      /* D just past 64 */
        {1, 1, 17, 1000, 24, 24, false, false, MASK_BOOL, 1},     /* long rows, bool mask */
        {1, 1, 70, 1100, 64, 64, true, true, MASK_ADD_KEYS, 2},   /* rows in 3 key chunks */
        {1, 2, 33, 1500, 64, 64, false, false, MASK_NONE, 1, true}, /* max moving across them */
        {1, 1, 700, 700, 32, 40, true, false, MASK_BOOL, 1},        /* early rows: 1 chunk */
    };
    for (size_t i = 0; i < sizeof k_common_cases / sizeof k_common_cases[0]; i++)
        run_case(&k_common_cases[i]);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
    for (int n = 0; n < 25; n++) {
        tcase t = {pick(1, 2),   pick(1, 3), pick(1, 70), pick(1, 300),    pick(1, 140),
                   pick(1, 140), rnd() & 1,  rnd() & 1,   (int)pick(0, 3), (int)pick(1, 2)};
        run_case(&t);
    }
    print_message("amx: largest error / bound: %.3f, largest RMS / max|V| %.4f\n", g_max_rel,
                  g_max_rms);
    g_k = &k_avx512;
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(bf16_attention_vs_ref),
                                       cmocka_unit_test(amx_attention_vs_ref)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
