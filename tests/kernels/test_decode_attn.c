/*
 * test_decode_attn.c — mopt.DecodeAttention's kernels (kernels/cpu/
 * decode_attn-impl.h, every tier this machine has) against the reference
 * ref_decode_attention_f32: 1 and many heads, odd and large head dims,
 * Dv != D, key counts 1..N around the block sizes, one and several query
 * rows, batch 2; no mask, a broadcast bool mask (Where with a fill, rows
 * masked whole included) and an additive mask; scores that grow along the
 * keys so that the online softmax rescales; and the edge rows (T = 0, every
 * score -inf). The causal mask given as query positions and a key mask
 * (qpos, kpad: the kv_cache pass's fold) equals the same mask as bool
 * (keep) in the reference, and every tier equals the reference on it, with
 * fills far below the scores (hidden keys skipped) and within them (hidden
 * keys take part), positions past the keys and before the first. The
 * reference itself is checked against a direct two-pass softmax in double.
 * Caches kept as bf16 tiles (kn_kvt_*, the generator's kv_cache_dtype=bf16):
 * the reference reading the tiles equals, bit for bit, the reference on f32
 * rows holding the same bf16 values; every tier's tiles kernel (bf16
 * widened to f32) equals it within float rounding, and the AVX512-BF16
 * kernel (vdpbf16ps: q and the weights rounded to bf16) equals the
 * reference with q rounded to bf16 within the weights' bf16 rounding
 * (2^-8 of the largest |V|), over head dims odd and even, key counts
 * around the tiles and past a chunk, masks, positions and fills.
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
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/decode_attn_tiles.h"
#include "kernels/ref/ref_attention.h"
#include "test_rng.h"

static float frand(float lo, float hi) { return lo + (hi - lo) * (float)(rnd() % 100001) / 1e5f; }

typedef struct problem {
    kn_decode_attn p;
    float *q, *k, *v, *add;
    uint8_t *keep;
} problem;

enum { MASK_NONE, MASK_KEEP, MASK_KEEP_ROWS_EMPTY, MASK_ADD };

/* Random problem; `grow` makes key t's score grow with t, up to ~20 at the
 * last key (the running max rises block after block). */
static void make(problem *x, int64_t B, int64_t H, int64_t M, int64_t T, int64_t D, int64_t Dv,
                 int mask, bool grow) {
    memset(x, 0, sizeof *x);
    kn_decode_attn *p = &x->p;
    p->B = B, p->H = H, p->M = M, p->T = T, p->D = D, p->Dv = Dv;
    p->scale = 1.0f / sqrtf((float)D);
    x->q = malloc((size_t)(B * H * M * D + 1) * sizeof(float));
    x->k = malloc((size_t)(B * T * H * D + 1) * sizeof(float));
    x->v = malloc((size_t)(B * T * H * Dv + 1) * sizeof(float));
    for (int64_t i = 0; i < B * H * M * D; i++)
        x->q[i] = frand(-2, 2);
    for (int64_t b = 0; b < B; b++)
        for (int64_t t = 0; t < T; t++)
            for (int64_t i = 0; i < H * D; i++) {
                float qs = x->q[(b * H + i / D) * M * D + i % D] > 0 ? 1.0f : -1.0f;
                x->k[(b * T + t) * H * D + i] =
                    grow ? 20.0f / (float)T / sqrtf((float)D) * (float)t * qs + frand(-0.01f, 0.01f)
                         : frand(-2, 2);
            }
    for (int64_t i = 0; i < B * T * H * Dv; i++)
        x->v[i] = frand(-3, 3);
    if (mask == MASK_KEEP || mask == MASK_KEEP_ROWS_EMPTY) {
        /* [B, 1, M, T]: a causal limit per row, one row masked whole */
        x->keep = malloc((size_t)(B * M * T + 1));
        for (int64_t b = 0; b < B; b++)
            for (int64_t m = 0; m < M; m++)
                for (int64_t t = 0; t < T; t++)
                    x->keep[(b * M + m) * T + t] =
                        (uint8_t)(t <= T - M + m && !(mask == MASK_KEEP_ROWS_EMPTY && m == 0) &&
                                  (rnd() % 7 != 0 || t == T - M + m));
        p->mask.keep = x->keep;
        p->fill = mask == MASK_KEEP ? -INFINITY : -1e9f;
        p->mask.sb = M * T, p->mask.sh = 0, p->mask.sq = T, p->mask.sk = 1;
    } else if (mask == MASK_ADD) {
        /* [M, T] over every batch and head */
        x->add = malloc((size_t)(M * T + 1) * sizeof(float));
        for (int64_t i = 0; i < M * T; i++)
            x->add[i] = frand(-4, 1);
        p->mask.add = x->add;
        p->mask.sb = 0, p->mask.sh = 0, p->mask.sq = T, p->mask.sk = 1;
    }
    p->q = x->q, p->k = x->k, p->v = x->v;
}

static void drop(problem *x) {
    free(x->q);
    free(x->k);
    free(x->v);
    free(x->add);
    free(x->keep);
}

static const cpu_kernels *tier(int i) {
    static const char *const names[] = {"avx512", "avx2", "portable"};
    return cpu_kernels_for(names[i]);
}

/* Every available tier equals the reference within float rounding: 2e-6
 * absolute + 2e-5 relative, plus `slack` absolute where the scores are
 * large (an ulp of a score of ~20 is 2e-6 relative in its weight, and the
 * sums run in another order; V's entries are up to 3). */
static void check_tol(problem *x, const char *what, float slack) {
    kn_decode_attn p = x->p;
    const int64_t n = p.B * p.H * p.M * p.Dv;
    float *want = malloc((size_t)(n + 1) * sizeof(float)),
          *got = malloc((size_t)(n + 1) * sizeof(float));
    p.y = want;
    ref_decode_attention_f32(&p);
    for (int t = 0; t < 3; t++) {
        const cpu_kernels *k = tier(t);
        if (!k) continue;
        for (int64_t i = 0; i < n; i++)
            got[i] = 12345.0f;
        p.y = got;
        /* rows in two ranges, as the thread split calls it */
        int64_t rows = p.B * p.H * p.M, mid = rows / 2;
        k->decode_attn_f32(&p, 0, mid);
        k->decode_attn_f32(&p, mid, rows);
        for (int64_t i = 0; i < n; i++) {
            if (isnan(want[i])) {
                if (!isnan(got[i]))
                    fail_msg("%s %s: [%lld] %g, want NaN", k->isa, what, (long long)i, got[i]);
                continue;
            }
            float tol = 2e-6f + 2e-5f * fabsf(want[i]) + slack;
            if (!(fabsf(got[i] - want[i]) <= tol))
                fail_msg("%s %s: B%lld H%lld M%lld T%lld D%lld Dv%lld: y[%lld] = %.9g, ref %.9g",
                         k->isa, what, (long long)p.B, (long long)p.H, (long long)p.M,
                         (long long)p.T, (long long)p.D, (long long)p.Dv, (long long)i, got[i],
                         want[i]);
        }
    }
    free(want);
    free(got);
}

static void check(problem *x, const char *what) { check_tol(x, what, 0.0f); }

MOPT_TEST(decode_attn_tiers_equal_reference) {
    static const int64_t Ds[] = {1, 5, 8, 16, 17, 24, 33, 64, 80, 130};
    static const int64_t Ts[] = {1, 2, 7, 8, 15, 16, 17, 31, 33, 64, 100, 257};
    static const int64_t Hs[] = {1, 3, 8};
    static const char *const names[] = {"no mask", "Where mask", "Where mask, empty rows",
                                        "additive mask"};
    int cases = 0;
    for (size_t di = 0; di < sizeof Ds / sizeof *Ds; di++)
        for (size_t ti = 0; ti < sizeof Ts / sizeof *Ts; ti++)
            for (size_t hi = 0; hi < sizeof Hs / sizeof *Hs; hi++) {
                int mask = (int)((di + ti + hi) % 4);
                int64_t M = (ti + hi) % 3 == 0 ? 3 : 1, D = Ds[di];
                int64_t Dv = hi == 1 ? Ds[(di + 3) % (sizeof Ds / sizeof *Ds)] : D;
                if (M > Ts[ti]) M = Ts[ti];
                problem x;
                make(&x, 2, Hs[hi], M, Ts[ti], D, Dv, mask, false);
                check(&x, names[mask]);
                drop(&x);
                cases++;
            }
    assert_int_equal(cases, 10 * 12 * 3);
}

/* Growing scores: the running max rises block after block. */
MOPT_TEST(decode_attn_online_softmax_rescales) {
    static const int64_t Ts[] = {16, 40, 200, 1000};
    for (size_t i = 0; i < sizeof Ts / sizeof *Ts; i++) {
        problem x;
        make(&x, 1, 4, 1, Ts[i], 24, 24, MASK_NONE, true);
        check_tol(&x, "growing scores", 2e-5f);
        drop(&x);
        make(&x, 1, 2, 2, Ts[i], 64, 64, MASK_KEEP, true);
        check_tol(&x, "growing scores, masked", 2e-5f);
        drop(&x);
    }
    /* more keys than one chunk of scores (4096): rescaled between chunks */
    problem x;
    make(&x, 1, 2, 1, 9000, 8, 8, MASK_NONE, true);
    check_tol(&x, "growing scores over chunks", 2e-5f);
    drop(&x);
    make(&x, 1, 1, 2, 8193, 17, 17, MASK_ADD, false);
    check(&x, "additive mask over chunks");
    drop(&x);
}

/* The weights' exp (vmath.h v_exp_weight) on its own: per batch row two
 * keys of head dim 1, scores 0 and x, V rows 0 and 1, so y = w / (1 + w)
 * with w = e^x. Below x = -17.5, 1 + w rounds to 1 and y is w itself:
 * within 2e-7 of e^x (the bound vmath.h states; a degree-4 polynomial or
 * a wrong coefficient is far outside it); above, within 4e-7 of w / (1 +
 * w) (three more roundings). Below about -87.7 the weight is 0 exactly
 * (no subnormals), as for -inf; a NaN score gives NaN. */
MOPT_TEST(decode_attn_weight_accuracy) {
    enum { N = 20000, EXTRA = 4 };
    const int64_t B = N + EXTRA;
    float *q = malloc((size_t)B * sizeof(float)), *k = malloc((size_t)(2 * B) * sizeof(float));
    float *v = malloc((size_t)(2 * B) * sizeof(float)), *y = malloc((size_t)B * sizeof(float));
    for (int64_t b = 0; b < B; b++) {
        /* every 87/N over [-87, 0], jittered so r covers its range */
        double x = -87.0 + 87.0 * (double)b / (N - 1) - 1e-3 * (double)(b % 7);
        if (b >= N) x = (double[]){-90.0, -200.0, -INFINITY, NAN}[b - N];
        if (x > 0) x = 0;
        q[b] = 1.0f, k[2 * b] = 0.0f, k[2 * b + 1] = (float)x;
        v[2 * b] = 0.0f, v[2 * b + 1] = 1.0f;
    }
    kn_decode_attn p = {.B = B, .H = 1, .M = 1, .T = 2, .D = 1, .Dv = 1};
    p.q = q, p.k = k, p.v = v, p.y = y, p.scale = 1.0f, p.fill = -INFINITY;
    int tiers = 0;
    for (int t = 0; t < 3; t++) {
        const cpu_kernels *kt = tier(t);
        if (!kt) continue;
        tiers++;
        kt->decode_attn_f32(&p, 0, B);
        double worst = 0;
        for (int64_t b = 0; b < N; b++) {
            const double x = (double)k[2 * b + 1], w = exp(x);
            const double want = x < -17.5 ? w : w / (1 + w);
            const double err = fabs((double)y[b] - want) / want;
            if (err > worst) worst = err;
            if (!(err <= (x < -17.5 ? 2e-7 : 4e-7)))
                fail_msg("%s: score %.9g: y %.9g, want %.9g (relative error %.3g)", kt->isa, x,
                         (double)y[b], want, err);
        }
        for (int e = 0; e < 3; e++)
            if (y[N + e] != 0.0f)
                fail_msg("%s: score %g: y %g, want 0", kt->isa, (double)k[2 * (N + e) + 1],
                         (double)y[N + e]);
        if (!isnan(y[N + 3])) fail_msg("%s: a NaN score gives %g, want NaN", kt->isa, y[N + 3]);
        printf("%s: weights' exp, max relative error %.3g\n", kt->isa, worst);
    }
    assert_true(tiers >= 1);
    free(q), free(k), free(v), free(y);
}

/* T = 0 gives zeros; a row whose every score is -inf gives NaN (as Softmax
 * then MatMul do); a row masked whole with a finite fill averages V. */
MOPT_TEST(decode_attn_edge_rows) {
    problem x;
    make(&x, 1, 2, 1, 0, 8, 8, MASK_NONE, false);
    check(&x, "no keys");
    float y[16];
    x.p.y = y;
    ref_decode_attention_f32(&x.p);
    for (int i = 0; i < 16; i++)
        assert_true(y[i] == 0.0f);
    drop(&x);
    make(&x, 1, 1, 2, 20, 8, 8, MASK_KEEP_ROWS_EMPTY, false);
    x.p.fill = -INFINITY;
    check(&x, "a row with every score -inf");
    x.p.y = y;
    ref_decode_attention_f32(&x.p);
    assert_true(isnan(y[0]) && !isnan(y[8]));
    x.p.fill = -1e9f;
    ref_decode_attention_f32(&x.p);
    for (int c = 0; c < 8; c++) { /* row 0 masked whole: the mean of V */
        double mean = 0;
        for (int t = 0; t < 20; t++)
            mean += x.v[t * 8 + c];
        assert_true(fabs(y[c] - mean / 20) < 1e-5);
    }
    check(&x, "a row masked whole with a finite fill");
    drop(&x);
}

/* qpos [B, M] (or [1, M]) and kpad [B, T]: the reference equals itself
 * with the same mask as keep, bit for bit, and every tier equals it. */
MOPT_TEST(decode_attn_positions_equal_keep_mask) {
    static const int64_t Ts[] = {1, 9, 31, 271, 5000};
    static const float fills[] = {-INFINITY, -1e9f, -0.5f, 3.0f};
    int cases = 0;
    for (size_t ti = 0; ti < sizeof Ts / sizeof *Ts; ti++)
        for (size_t fi = 0; fi < sizeof fills / sizeof *fills; fi++)
            for (int shared = 0; shared < 2; shared++) {
                const int64_t B = 2, H = 3, M = 2, T = Ts[ti], D = ti % 2 ? 24 : 17;
                problem x;
                make(&x, B, H, M, T, D, D, MASK_NONE, fi == 0 && ti == 3);
                int64_t qpos[4], *kpad = malloc((size_t)(B * T) * sizeof(int64_t));
                uint8_t *keep = malloc((size_t)(B * M * T));
                /* the last positions, one past the keys, one before the first */
                qpos[0] = T - 2, qpos[1] = T - 1, qpos[2] = T + 5, qpos[3] = fi == 1 ? -1 : T / 2;
                for (int64_t i = 0; i < B * T; i++)
                    kpad[i] = (ti + fi) % 2 && i % 5 == 1 ? 0 : 7;
                kn_decode_attn p = x.p;
                p.fill = fills[fi];
                p.qpos = qpos, p.qp_sb = shared ? 0 : M, p.qp_sm = 1;
                p.kpad = shared ? NULL : kpad, p.kp_sb = T;
                for (int64_t b = 0; b < B; b++)
                    for (int64_t m = 0; m < M; m++)
                        for (int64_t t = 0; t < T; t++)
                            keep[(b * M + m) * T + t] = (uint8_t)(t <= qpos[b * p.qp_sb + m] &&
                                                                  (!p.kpad || kpad[b * T + t]));
                const int64_t n = B * H * M * D;
                float *want = malloc((size_t)n * sizeof(float)),
                      *got = malloc((size_t)n * sizeof(float));
                kn_decode_attn pk = p;
                pk.qpos = NULL, pk.kpad = NULL, pk.mask.keep = keep;
                pk.mask.sb = M * T, pk.mask.sh = 0, pk.mask.sq = T, pk.mask.sk = 1;
                pk.y = want;
                ref_decode_attention_f32(&pk);
                p.y = got;
                ref_decode_attention_f32(&p);
                assert_memory_equal(want, got, (size_t)n * sizeof(float));
                x.p = p;
                check_tol(&x, "query positions and key mask", fi == 0 && ti == 3 ? 2e-5f : 0.0f);
                free(want), free(got), free(kpad), free(keep);
                drop(&x);
                cases++;
            }
    assert_int_equal(cases, 5 * 4 * 2);
}

/* The reference against a direct softmax in double. */
MOPT_TEST(decode_attn_reference_is_softmax) {
    problem x;
    make(&x, 2, 3, 2, 37, 11, 7, MASK_ADD, false);
    kn_decode_attn p = x.p;
    float y[2 * 3 * 2 * 7];
    p.y = y;
    ref_decode_attention_f32(&p);
    for (int64_t b = 0; b < 2; b++)
        for (int64_t h = 0; h < 3; h++)
            for (int64_t m = 0; m < 2; m++) {
                double s[37], mx = -INFINITY, sum = 0;
                for (int64_t t = 0; t < 37; t++) {
                    double d = 0;
                    for (int64_t i = 0; i < 11; i++)
                        d += (double)x.q[((b * 3 + h) * 2 + m) * 11 + i] *
                             x.k[((b * 37 + t) * 3 + h) * 11 + i];
                    s[t] = d * p.scale + x.add[m * 37 + t];
                    mx = fmax(mx, s[t]);
                }
                for (int64_t t = 0; t < 37; t++)
                    sum += (s[t] = exp(s[t] - mx));
                for (int64_t c = 0; c < 7; c++) {
                    double o = 0;
                    for (int64_t t = 0; t < 37; t++)
                        o += s[t] / sum * x.v[((b * 37 + t) * 3 + h) * 7 + c];
                    assert_true(fabs(o - y[((b * 3 + h) * 2 + m) * 7 + c]) < 1e-5 + 1e-5 * fabs(o));
                }
            }
    drop(&x);
}

/* f32 -> bf16, round to nearest even (as KVAppend's bf16_from_f32) */
static uint16_t to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static float from_bf16(uint16_t b) {
    const uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* x (B == 1) with its K and V rows rounded to bf16 in place, and the same
 * values as tiles of capacity cap (the buffer zeroed first, as the
 * generator's); returns the two tile buffers through kt, vt. */
static void make_tiles(problem *x, int64_t cap, uint16_t **kt, uint16_t **vt) {
    const kn_decode_attn *p = &x->p;
    const int64_t H = p->H, D = p->D, Dv = p->Dv;
    *kt = calloc((size_t)kn_kvt_elems(cap, H, D), sizeof(uint16_t));
    *vt = calloc((size_t)kn_kvt_elems(cap, H, Dv), sizeof(uint16_t));
    for (int64_t t = 0; t < p->T; t++)
        for (int64_t h = 0; h < H; h++) {
            for (int64_t d = 0; d < D; d++) {
                float *k = &x->k[(t * H + h) * D + d];
                const uint16_t b = to_bf16(*k);
                *k = from_bf16(b);
                (*kt)[kn_kvt_k_index(H, D, t, h, d)] = b;
            }
            for (int64_t d = 0; d < Dv; d++) {
                float *v = &x->v[(t * H + h) * Dv + d];
                const uint16_t b = to_bf16(*v);
                *v = from_bf16(b);
                (*vt)[kn_kvt_v_index(H, Dv, t, h, d)] = b;
            }
        }
    /* the keys past T of the last tile hold other finite values (a longer
     * request's), which must get no weight */
    for (int64_t t = p->T; t < (p->T + 31) / 32 * 32 && t < cap; t++)
        for (int64_t h = 0; h < H; h++) {
            for (int64_t d = 0; d < D; d++)
                (*kt)[kn_kvt_k_index(H, D, t, h, d)] = to_bf16(100.0f);
            for (int64_t d = 0; d < Dv; d++)
                (*vt)[kn_kvt_v_index(H, Dv, t, h, d)] = to_bf16(-50.0f);
        }
}

/* the largest |tiles kernel - reference| / max |V| seen, per kernel */
static double g_tiles_worst[4];

/* One tiles case: the checks of the header comment. Returns how many
 * kernels ran. */
static int check_tiles(problem *x, const char *what, float slack) {
    const int64_t cap = (x->p.T + 31) / 32 * 32 + 32;
    uint16_t *kt, *vt;
    make_tiles(x, cap, &kt, &vt);
    kn_decode_attn rows = x->p, tiles = x->p;
    tiles.k = tiles.v = NULL;
    tiles.kt = kt, tiles.vt = vt;
    const int64_t n = rows.H * rows.M * rows.Dv, rn = rows.H * rows.M;
    float *want = malloc((size_t)(n + 1) * sizeof(float)),
          *got = malloc((size_t)(n + 1) * sizeof(float));
    rows.y = want;
    ref_decode_attention_f32(&rows);
    tiles.y = got;
    ref_decode_attention_f32(&tiles);
    assert_memory_equal(want, got, (size_t)n * sizeof(float));
    float vmax = 0;
    for (int64_t i = 0; i < rows.T * rows.H * rows.Dv; i++)
        vmax = fmaxf(vmax, fabsf(x->v[i]));
    int ran = 0;
    for (int t = 0; t < 4; t++) {
        const char *isa = t < 3 ? tier(t) ? tier(t)->isa : NULL : "avx512bf16";
        cpu_decode_attn_fn fn = t < 3 ? tier(t) ? tier(t)->decode_attn_tiles : NULL
                                : cpu_decode_attn_tiles_bf16_ok() ? cpu_decode_attn_tiles_avx512bf16
                                                                  : NULL;
        if (!fn) continue;
        float *ref = want;
        float *qb = NULL, *want_b = NULL;
        if (t == 3) { /* the reference with q rounded to bf16 */
            qb = malloc((size_t)(rn * rows.D) * sizeof(float));
            want_b = malloc((size_t)(n + 1) * sizeof(float));
            for (int64_t i = 0; i < rn * rows.D; i++)
                qb[i] = from_bf16(to_bf16(x->q[i]));
            kn_decode_attn r = rows;
            r.q = qb, r.y = want_b;
            ref_decode_attention_f32(&r);
            ref = want_b;
        }
        for (int64_t i = 0; i < n; i++)
            got[i] = 12345.0f;
        kn_decode_attn p = tiles;
        p.y = got;
        fn(&p, 0, rn / 2);
        fn(&p, rn / 2, rn);
        ran++;
        for (int64_t i = 0; i < n; i++) {
            if (isnan(ref[i])) {
                if (!isnan(got[i]))
                    fail_msg("tiles %s %s: [%lld] %g, want NaN", isa, what, (long long)i, got[i]);
                continue;
            }
            float tol = 2e-6f + 2e-5f * fabsf(ref[i]) + slack;
            if (t == 3) tol += vmax / 256.0f + slack * 10;
            g_tiles_worst[t] = fmax(g_tiles_worst[t], fabs((double)got[i] - ref[i]) / vmax);
            if (!(fabsf(got[i] - ref[i]) <= tol))
                fail_msg("tiles %s %s: H%lld M%lld T%lld D%lld Dv%lld: y[%lld] = %.9g, ref %.9g",
                         isa, what, (long long)p.H, (long long)p.M, (long long)p.T, (long long)p.D,
                         (long long)p.Dv, (long long)i, got[i], ref[i]);
        }
        free(qb);
        free(want_b);
    }
    free(want);
    free(got);
    free(kt);
    free(vt);
    return ran;
}

MOPT_TEST(decode_attn_tiles_equal_reference) {
    static const int64_t Ds[] = {1, 5, 8, 16, 17, 24, 33, 64, 130};
    static const int64_t Ts[] = {1, 2, 15, 16, 17, 31, 32, 33, 100, 271};
    static const char *const names[] = {"no mask", "Where mask", "Where mask, empty rows",
                                        "additive mask"};
    int cases = 0, ran = 0;
    for (size_t di = 0; di < sizeof Ds / sizeof *Ds; di++)
        for (size_t ti = 0; ti < sizeof Ts / sizeof *Ts; ti++) {
            const int mask = (int)((di + ti) % 4);
            const int64_t H = ti % 2 ? 4 : 1, D = Ds[di];
            const int64_t Dv = ti % 3 == 1 ? Ds[(di + 2) % (sizeof Ds / sizeof *Ds)] : D;
            const int64_t M = ti % 3 == 0 && Ts[ti] >= 3 ? 3 : 1;
            problem x;
            make(&x, 1, H, M, Ts[ti], D, Dv, mask, false);
            ran += check_tiles(&x, names[mask], 0.0f);
            drop(&x);
            cases++;
        }
    assert_int_equal(cases, 9 * 10);
    assert_true(ran >= cases); /* at least the portable kernel everywhere */
    static const char *const isas[] = {"avx512", "avx2", "portable", "avx512bf16"};
    for (int t = 0; t < 4; t++)
        printf("tiles %s: max |y - ref| / max |V| = %.3g\n", isas[t], g_tiles_worst[t]);
}

/* Positions (the generator's causal fold), a key mask and fills; growing
 * scores; more keys than one chunk (2048) of the tiles kernels. */
MOPT_TEST(decode_attn_tiles_positions_and_chunks) {
    static const int64_t Ts[] = {9, 271, 2100};
    static const float fills[] = {-INFINITY, -1e9f, -0.5f};
    for (size_t ti = 0; ti < sizeof Ts / sizeof *Ts; ti++)
        for (size_t fi = 0; fi < sizeof fills / sizeof *fills; fi++) {
            const int64_t H = 4, M = 3, T = Ts[ti], D = fi == 1 ? 17 : 24;
            problem x;
            make(&x, 1, H, M, T, D, D, MASK_NONE, fi == 0);
            int64_t qpos[3] = {T - 1, T / 2, fi == 1 ? -1 : T + 3};
            int64_t *kpad = malloc((size_t)T * sizeof(int64_t));
            for (int64_t i = 0; i < T; i++)
                kpad[i] = fi == 2 && i % 5 == 1 ? 0 : 1;
            x.p.fill = fills[fi];
            x.p.qpos = qpos, x.p.qp_sb = 0, x.p.qp_sm = 1;
            x.p.kpad = fi == 2 ? kpad : NULL, x.p.kp_sb = 0;
            assert_true(check_tiles(&x, "positions", fi == 0 ? 2e-5f : 0.0f) >= 1);
            free(kpad);
            drop(&x);
        }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decode_attn_reference_is_softmax),
        cmocka_unit_test(decode_attn_tiers_equal_reference),
        cmocka_unit_test(decode_attn_online_softmax_rescales),
        cmocka_unit_test(decode_attn_weight_accuracy),
        cmocka_unit_test(decode_attn_edge_rows),
        cmocka_unit_test(decode_attn_positions_equal_keep_mask),
        cmocka_unit_test(decode_attn_tiles_equal_reference),
        cmocka_unit_test(decode_attn_tiles_positions_and_chunks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
