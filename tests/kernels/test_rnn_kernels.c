/*
 * test_rnn_kernels.c — the recurrent kernels of kernels/cpu/cpu_rnn.h (gate
 * panel packing, input projection, fused time step) of every tier this
 * machine runs (capped by MOPT_ISA) against a double-precision reference
 * written here on the unpacked ONNX weights: LSTM with and without
 * peepholes, clip and input_forget, GRU with linear_before_reset 0 and 1,
 * RNN; hidden sizes with vector tails, 1..7 batch rows, inactive rows (a
 * finished sequence), rows without a Y slot, a zero initial state (the
 * skipped product) and several chained steps.
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

#include "../test_main.h"
#include "core/alloc.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/cpu_rnn.h"

typedef struct tier {
    const char *isa;
    int64_t (*vw)(void);
    size_t (*packed_floats)(int64_t, int64_t, int64_t);
    void (*pack)(const float *, int64_t, int64_t, int64_t, float *);
    void (*xproj)(int64_t, int64_t, const float *, int64_t, const float *, int64_t, int64_t,
                  const float *, float *, int64_t, int64_t);
    void (*step)(const cpu_rnn_step_args *);
} tier;

#define TIER(SFX)                                                                                  \
    {                                                                                              \
#SFX, cpu_rnn_vw_##SFX, cpu_rnn_packed_floats_##SFX, cpu_rnn_pack_f32_##SFX,               \
            cpu_rnn_xproj_f32_##SFX, cpu_rnn_step_f32_##SFX                                        \
    }
static const tier k_tiers[] = {TIER(avx512), TIER(avx2), TIER(portable)};
static int g_checks;

static uint64_t g_rng = 0x2545f4914f6cdd1dull;
static float rnd_f(float lo, float hi) {
    g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
    return lo + (hi - lo) * (float)((g_rng >> 40) & 0xffffff) / 16777216.0f;
}
static float *rand_f32(int64_t n, float lo, float hi) {
    float *x = mopt_aligned_alloc((size_t)(n > 0 ? n : 1) * sizeof *x + 64);
    assert_non_null(x);
    for (int64_t i = 0; i < n; i++)
        x[i] = rnd_f(lo, hi);
    return x;
}
static float *zeros(int64_t n) {
    float *x = mopt_aligned_alloc((size_t)(n > 0 ? n : 1) * sizeof *x + 64);
    assert_non_null(x);
    memset(x, 0, (size_t)(n > 0 ? n : 1) * sizeof *x);
    return x;
}
static double sig(double x) { return 1.0 / (1.0 + exp(-x)); }
static double clampd(double x, double c) { return x < -c ? -c : x > c ? c : x; }

static void near(const char *what, const char *isa, int64_t i, double got, double want,
                 double tol) {
    g_checks++;
    if (!(fabs(got - want) <= tol)) {
        printf("%s [%s] at %lld: %.9g, want %.9g\n", what, isa, (long long)i, got, want);
        fail();
    }
}

/* packing puts src[(g*H + j)*K + k] at [j / VW][k][g][j % VW], zeros past H */
MOPT_TEST(pack_layout) {
    for (size_t t = 0; t < 3; t++) {
        const tier *T = &k_tiers[t];
        if (!cpu_kernels_for(T->isa)) continue;
        const int64_t G = 3, H = 21, K = 5, VW = T->vw(), Hb = (H + VW - 1) / VW;
        assert_int_equal(T->packed_floats(G, H, K), (size_t)(Hb * K * G * VW));
        float *src = rand_f32(G * H * K, -1, 1), *dst = zeros(Hb * K * G * VW);
        T->pack(src, G, H, K, dst);
        for (int64_t p = 0; p < Hb; p++)
            for (int64_t k = 0; k < K; k++)
                for (int64_t g = 0; g < G; g++)
                    for (int64_t l = 0; l < VW; l++) {
                        int64_t j = p * VW + l;
                        float want = j < H ? src[(g * H + j) * K + k] : 0.0f;
                        near("pack", T->isa, j, dst[((p * K + k) * G + g) * VW + l], want, 0.0);
                    }
        mopt_aligned_free(src);
        mopt_aligned_free(dst);
    }
}

/* gx = bias + A W^T in the packed layout, over the whole block range and
 * split in two (the split cuts RNN's groups of blocks) */
MOPT_TEST(xproj_vs_ref) {
    static const int64_t cases[][4] = {/* M K G H */ {1, 17, 4, 37},
                                       {7, 33, 3, 20},
                                       {20, 64, 1, 70},
                                       {13, 5, 4, 16},
                                       {6, 300, 4, 33},
                                       {9, 40, 1, 5}};
    for (size_t t = 0; t < 3; t++) {
        const tier *T = &k_tiers[t];
        if (!cpu_kernels_for(T->isa)) continue;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (int split = 0; split < 2; split++) {
                const int64_t M = cases[c][0], K = cases[c][1], G = cases[c][2], H = cases[c][3];
                const int64_t VW = T->vw(), Hb = (H + VW - 1) / VW, lda = K + 3, ld = Hb * G * VW;
                float *A = rand_f32(M * lda, -1, 1), *W = rand_f32(G * H * K, -1, 1);
                float *b = rand_f32(G * H, -1, 1), *bp = zeros(ld);
                float *Wp = zeros((int64_t)T->packed_floats(G, H, K)), *gx = zeros(M * ld);
                T->pack(W, G, H, K, Wp);
                T->pack(b, G, H, 1, bp);
                const int64_t mid = split ? Hb / 2 + 1 : Hb;
                T->xproj(M, K, A, lda, Wp, G, H, bp, gx, 0, mid < Hb ? mid : Hb);
                if (mid < Hb) T->xproj(M, K, A, lda, Wp, G, H, bp, gx, mid, Hb);
                for (int64_t m = 0; m < M; m++)
                    for (int64_t g = 0; g < G; g++)
                        for (int64_t j = 0; j < H; j++) {
                            double s = b[g * H + j];
                            for (int64_t k = 0; k < K; k++)
                                s += (double)A[m * lda + k] * W[(g * H + j) * K + k];
                            float got = gx[m * ld + ((j / VW) * G + g) * VW + j % VW];
                            near("xproj", T->isa, m * G * H + g * H + j, got, s, 1e-5 * (K + 4));
                        }
                mopt_aligned_free(A);
                mopt_aligned_free(W);
                mopt_aligned_free(b);
                mopt_aligned_free(bp);
                mopt_aligned_free(Wp);
                mopt_aligned_free(gx);
            }
    }
}

typedef struct step_case {
    cpu_rnn_cell cell;
    int64_t N, H;
    bool peep, lbr, input_forget;
    float clip; /* INFINITY: none */
} step_case;

/* One reference step of row r: h (in/out, H) and c (LSTM) from gx [G][H] */
static void ref_row(const step_case *sc, const float *R, const float *gx, const float *P,
                    const float *rbh, double *h, double *c) {
    const int64_t H = sc->H, G = sc->cell == CPU_RNN_LSTM ? 4 : sc->cell == CPU_RNN_GRU ? 3 : 1;
    const double cl = sc->clip;
    double *pre = calloc((size_t)(G * H), sizeof *pre), *hn = calloc((size_t)H, sizeof *hn);
    assert_true(pre && hn);
    for (int64_t g = 0; g < G; g++)
        for (int64_t j = 0; j < H; j++) {
            double s = 0;
            for (int64_t k = 0; k < H; k++)
                s += h[k] * R[(g * H + j) * H + k];
            pre[g * H + j] = s;
        }
    for (int64_t j = 0; j < H; j++) {
        if (sc->cell == CPU_RNN_LSTM) {
            double pi = gx[j] + pre[j], po = gx[H + j] + pre[H + j];
            double pf = gx[2 * H + j] + pre[2 * H + j], pc = gx[3 * H + j] + pre[3 * H + j];
            if (P) pi += P[j] * c[j], pf += P[2 * H + j] * c[j];
            double i = sig(clampd(pi, cl));
            double f = sc->input_forget ? 1.0 - i : sig(clampd(pf, cl));
            double cn = f * c[j] + i * tanh(clampd(pc, cl));
            if (P) po += P[H + j] * cn;
            c[j] = cn;
            hn[j] = sig(clampd(po, cl)) * tanh(cn);
        } else if (sc->cell == CPU_RNN_RNN) {
            hn[j] = tanh(clampd(gx[j] + pre[j], cl));
        } else {
            double z = sig(clampd(gx[j] + pre[j], cl)), r = sig(clampd(gx[H + j] + pre[H + j], cl));
            double rec;
            if (sc->lbr) {
                rec = r * (pre[2 * H + j] + rbh[j]);
            } else {
                rec = rbh[j];
                for (int64_t k = 0; k < H; k++) {
                    double rk = sig(clampd(gx[H + k] + pre[H + k], cl));
                    rec += rk * h[k] * R[(2 * H + j) * H + k];
                }
            }
            double hh = tanh(clampd(gx[2 * H + j] + rec, cl));
            hn[j] = (1.0 - z) * hh + z * h[j];
        }
    }
    memcpy(h, hn, (size_t)H * sizeof *h);
    free(pre);
    free(hn);
}

/* 3 chained steps from a zero state (step 0 skips the product), row 1
 * inactive at step 1, row 2 without a Y slot */
static void run_step_case(const tier *T, const step_case *sc) {
    const int64_t N = sc->N, H = sc->H, VW = T->vw(), Hb = (H + VW - 1) / VW, Hp = Hb * VW;
    const int64_t G = sc->cell == CPU_RNN_LSTM ? 4 : sc->cell == CPU_RNN_GRU ? 3 : 1;
    const int steps = 3;
    float *R = rand_f32(G * H * H, -0.4f, 0.4f), *Rp = zeros((int64_t)T->packed_floats(G, H, H));
    T->pack(R, G, H, H, Rp);
    float *P = sc->peep ? rand_f32(3 * H, -1, 1) : NULL, *Pp = zeros(3 * Hp);
    if (P) T->pack(P, 3, H, 1, Pp);
    float *rbh = rand_f32(H, -1, 1), *rbhp = zeros(Hp);
    memcpy(rbhp, rbh, (size_t)H * sizeof *rbh);
    float *gx = rand_f32(steps * N * G * H, -2, 2), *gxp = zeros(steps * N * Hb * G * VW);
    for (int64_t i = 0; i < steps * N; i++)
        T->pack(gx + i * G * H, G, H, 1, gxp + i * Hb * G * VW);
    float *hb[2] = {zeros(N * Hp), zeros(N * Hp)}, *c = zeros(N * Hp);
    float *Y = zeros(steps * N * H), *work = zeros(2 * N * Hp);
    double *h = calloc((size_t)(N * H), sizeof *h), *cr = calloc((size_t)(N * H), sizeof *cr);
    assert_true(h && cr);
    const float *gxr[8];
    float *yr[8];
    for (int s = 0; s < steps; s++) {
        for (int64_t r = 0; r < N; r++) {
            bool active = !(s == 1 && r == 1);
            gxr[r] = active ? gxp + (s * N + r) * Hb * G * VW : NULL;
            yr[r] = active && r != 2 ? Y + (s * N + r) * H : NULL;
        }
        cpu_rnn_step_args a = {.cell = sc->cell,
                               .N = N,
                               .H = H,
                               .R = Rp,
                               .h = hb[s & 1],
                               .h_zero = s == 0,
                               .h_out = hb[(s + 1) & 1],
                               .c = c,
                               .gx = gxr,
                               .y = yr,
                               .P = P ? Pp : NULL,
                               .rbh = rbhp,
                               .lbr = sc->lbr,
                               .work = work,
                               .clip = sc->clip,
                               .input_forget = sc->input_forget};
        T->step(&a);
        for (int64_t r = 0; r < N; r++)
            if (gxr[r]) ref_row(sc, R, gx + (s * N + r) * G * H, P, rbh, h + r * H, cr + r * H);
        const float *ho = hb[(s + 1) & 1];
        for (int64_t r = 0; r < N; r++)
            for (int64_t j = 0; j < Hp; j++) {
                const double want = j < H ? h[r * H + j] : 0.0; /* padding stays 0 */
                near("step h", T->isa, (s * N + r) * Hp + j, ho[r * Hp + j], want,
                     2e-5 * (1 + H / 16));
                if (sc->cell == CPU_RNN_LSTM)
                    near("step c", T->isa, (s * N + r) * Hp + j, c[r * Hp + j],
                         j < H ? cr[r * H + j] : 0.0, 2e-5 * (1 + H / 16));
                if (j < H)
                    near("step y", T->isa, (s * N + r) * H + j, Y[(s * N + r) * H + j],
                         yr[r] ? h[r * H + j] : 0.0, 2e-5 * (1 + H / 16));
            }
    }
    mopt_aligned_free(R);
    mopt_aligned_free(Rp);
    mopt_aligned_free(P);
    mopt_aligned_free(Pp);
    mopt_aligned_free(rbh);
    mopt_aligned_free(rbhp);
    mopt_aligned_free(gx);
    mopt_aligned_free(gxp);
    mopt_aligned_free(hb[0]);
    mopt_aligned_free(hb[1]);
    mopt_aligned_free(c);
    mopt_aligned_free(Y);
    mopt_aligned_free(work);
    free(h);
    free(cr);
}

MOPT_TEST(step_vs_ref) {
    static const int64_t hs[] = {1, 5, 17, 37, 64};
    static const int64_t ns[] = {1, 3, 7};
    for (size_t t = 0; t < 3; t++) {
        if (!cpu_kernels_for(k_tiers[t].isa)) continue;
        for (size_t hi = 0; hi < sizeof hs / sizeof hs[0]; hi++)
            for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
                const int64_t H = hs[hi], N = ns[ni];
                const step_case cases[] = {
                    {CPU_RNN_LSTM, N, H, false, false, false, INFINITY},
                    {CPU_RNN_LSTM, N, H, true, false, false, 0.9f},
                    {CPU_RNN_LSTM, N, H, true, false, true, INFINITY},
                    {CPU_RNN_GRU, N, H, false, true, false, INFINITY},
                    {CPU_RNN_GRU, N, H, false, false, false, INFINITY},
                    {CPU_RNN_GRU, N, H, false, false, false, 0.7f},
                    {CPU_RNN_RNN, N, H, false, false, false, INFINITY},
                    {CPU_RNN_RNN, N, H, false, false, false, 0.5f},
                };
                for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
                    run_step_case(&k_tiers[t], &cases[c]);
            }
    }
}

static int report(void **state) {
    (void)state;
    printf("[ CHECKS   ] %d values compared\n", g_checks);
    return 0;
}

MOPT_TEST_MAIN_WITH(NULL, report, cmocka_unit_test(pack_layout), cmocka_unit_test(xproj_vs_ref),
                    cmocka_unit_test(step_vs_ref))
