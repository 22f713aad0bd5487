/*
 * decode_attn_layouts.c — a measurement, not library code (not built by
 * meson; see README.md here): the decode attention of one generator step
 * on kjv-tiny's shape (2 layers, 4 heads of 24, one query row) with the
 * caches in three layouts, against the shipped kernel (the 256-bit body
 * cpu_decode_attn_f32_avx2, which the avx512 impl runs for head dim 24):
 *   - rows_bf16: K and V token-major as now, stored bf16; one 48-byte
 *     load per row, even/odd elements widened by a shift and a mask;
 *   - tiles_f32: K and V in tiles of 16 keys ([tile][head][d][16]): the
 *     scores are 24 multiply-adds of a broadcast q[d] with a tile row (no
 *     horizontal sums), the weighted V 24 multiply-adds into 24 sums over
 *     the keys, summed across lanes once per row;
 *   - tiles_bf16: K in bf16 tiles of 16 keys whose 32-bit lanes hold the
 *     pair (d, d+1) of a key, V in bf16 tiles of 32 keys whose lanes hold
 *     the pair of keys (2j, 2j+1) of a dim: vdpbf16ps does two products
 *     per lane, with q and the weights e^(s - max) rounded to bf16 (their
 *     sum stays f32).
 * Prints the largest difference from the shipped kernel and ns per key and
 * head, hot and with 1.5 MB swept between steps (as the weights sweep the
 * caches), the minimum over 3 rounds of medians of 2000 steps.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/clock_bench.h"
#include "kernels/cpu/simd-avx512.h"
/* the shipped body (its avx512 copy, unused here) for da_sums and the vocabulary */
#include "kernels/cpu/decode_attn-impl.h"

#define HD 4  /* heads */
#define DD 24 /* head dim */
#define CAP 1024

void cpu_decode_attn_f32_avx2(const kn_decode_attn *p, int64_t lo, int64_t hi);

/* y[0..DD) = (sum over lanes of acc[d]) * inv */
static void finish(const __m512 *acc, float inv, float *y) {
    float out[32] __attribute__((aligned(64)));
    __m512 rest[16];
    for (int d = 0; d < 16; d++)
        rest[d] = d < DD - 16 ? acc[16 + d] : _mm512_setzero_ps();
    _mm512_store_ps(out, da_sums(acc));
    _mm512_store_ps(out + 16, da_sums(rest));
    for (int d = 0; d < DD; d++)
        y[d] = out[d] * inv;
}

static uint16_t to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

/* ---- K and V rows in bf16 (D <= 32: one load per row) ---- */
#define EVEN(x) _mm512_castsi512_ps(_mm512_slli_epi32(x, 16))
#define ODD(x) _mm512_castsi512_ps(_mm512_and_si512(x, _mm512_set1_epi32((int)0xFFFF0000u)))
static void rows_bf16(const kn_decode_attn *p, const uint16_t *K, const uint16_t *V) {
    const int64_t T = kn_decode_attn_visible(p, 0, 0), hd = HD * DD;
    const __mmask16 m = (__mmask16)((1u << (DD / 2)) - 1);
    for (int64_t h = 0; h < HD; h++) {
        const float *q = p->q + h * DD;
        float qe[16] = {0}, qo[16] = {0}, buf[CAP + 16];
        for (int d = 0; d < DD; d += 2)
            qe[d / 2] = q[d], qo[d / 2] = q[d + 1];
        const __m512 QE = _mm512_loadu_ps(qe), QO = _mm512_loadu_ps(qo);
        const uint16_t *k = K + h * DD, *v = V + h * DD;
        __m512 vmax = _mm512_set1_ps(-INFINITY);
        for (int64_t j = 0; j < T; j += 16) {
            __m512 part[16];
            const int64_t kn = T - j < 16 ? T - j : 16;
            for (int i = 0; i < 16; i++) {
                const __m512i x = _mm512_maskz_loadu_epi32(i < kn ? m : 0, k + (j + i) * hd);
                part[i] = _mm512_fmadd_ps(QO, ODD(x), _mm512_mul_ps(QE, EVEN(x)));
            }
            __m512 s = _mm512_mul_ps(da_sums(part), _mm512_set1_ps(p->scale));
            s = _mm512_mask_blend_ps((__mmask16)((1u << kn) - 1), _mm512_set1_ps(-INFINITY), s);
            _mm512_storeu_ps(buf + j, s);
            vmax = _mm512_max_ps(vmax, s);
        }
        const __m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(vmax));
        __m512 ae = _mm512_setzero_ps(), ao = ae, lv = ae;
        for (int64_t j = 0; j < T; j += 16) {
            const __m512 e = v_exp_weight(_mm512_sub_ps(_mm512_loadu_ps(buf + j), mx));
            lv = _mm512_add_ps(lv, e);
            _mm512_storeu_ps(buf + j, e);
        }
        for (int64_t i = 0; i < T; i++) {
            const __m512 w = _mm512_set1_ps(buf[i]);
            const __m512i x = _mm512_maskz_loadu_epi32(m, v + i * hd);
            ae = _mm512_fmadd_ps(w, EVEN(x), ae);
            ao = _mm512_fmadd_ps(w, ODD(x), ao);
        }
        float E[16], O[16];
        const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(lv));
        _mm512_storeu_ps(E, _mm512_mul_ps(ae, inv));
        _mm512_storeu_ps(O, _mm512_mul_ps(ao, inv));
        for (int d = 0; d < DD; d += 2)
            p->y[h * DD + d] = E[d / 2], p->y[h * DD + d + 1] = O[d / 2];
    }
}

/* A tile's 16 scores from position i * 16: lanes at T and past get -inf;
 * stored at buf + i * 16, their max kept in vmax. */
static void put_scores(float *buf, int64_t i, int64_t T, __m512 s, __m512 *vmax) {
    const int64_t left = T - i * 16;
    if (left < 16)
        s = _mm512_mask_blend_ps((__mmask16)(left <= 0 ? 0 : (1u << left) - 1),
                                 _mm512_set1_ps(-INFINITY), s);
    _mm512_store_ps(buf + i * 16, s);
    *vmax = _mm512_max_ps(*vmax, s);
}

/* ---- K and V in f32 tiles of 16 keys: [tile][head][d][16] ---- */
static int64_t tile_at(int64_t t, int64_t h, int64_t d) {
    return ((t / 16 * HD + h) * DD + d) * 16 + t % 16;
}
static void tiles_f32(const kn_decode_attn *p, const float *Kt, const float *Vt) {
    const int64_t T = kn_decode_attn_visible(p, 0, 0), nt = (T + 15) / 16;
    for (int64_t h = 0; h < HD; h++) {
        const float *q = p->q + h * DD;
        float buf[CAP + 16] __attribute__((aligned(64)));
        __m512 vmax = _mm512_set1_ps(-INFINITY);
        for (int64_t i = 0; i < nt; i++) {
            const float *kt = Kt + (i * HD + h) * DD * 16;
            __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
            for (int d = 0; d < DD; d += 4) {
                s0 = _mm512_fmadd_ps(_mm512_set1_ps(q[d]), _mm512_load_ps(kt + d * 16), s0);
                s1 =
                    _mm512_fmadd_ps(_mm512_set1_ps(q[d + 1]), _mm512_load_ps(kt + d * 16 + 16), s1);
                s2 =
                    _mm512_fmadd_ps(_mm512_set1_ps(q[d + 2]), _mm512_load_ps(kt + d * 16 + 32), s2);
                s3 =
                    _mm512_fmadd_ps(_mm512_set1_ps(q[d + 3]), _mm512_load_ps(kt + d * 16 + 48), s3);
            }
            const __m512 s =
                _mm512_mul_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)),
                              _mm512_set1_ps(p->scale));
            put_scores(buf, i, T, s, &vmax);
        }
        const __m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(vmax));
        __m512 acc[DD], lv = _mm512_setzero_ps();
        for (int d = 0; d < DD; d++)
            acc[d] = _mm512_setzero_ps();
        for (int64_t i = 0; i < nt; i++) {
            const __m512 e = v_exp_weight(_mm512_sub_ps(_mm512_load_ps(buf + i * 16), mx));
            lv = _mm512_add_ps(lv, e);
            const float *vt = Vt + (i * HD + h) * DD * 16;
            for (int d = 0; d < DD; d++)
                acc[d] = _mm512_fmadd_ps(e, _mm512_load_ps(vt + d * 16), acc[d]);
        }
        finish(acc, 1.0f / _mm512_reduce_add_ps(lv), p->y + h * DD);
    }
}

/* ---- bf16 tiles, vdpbf16ps: K [tile16][head][d/2][16 keys][2 dims], V
 * [tile32][head][d][16][2 keys] ---- */
static int64_t ktb_at(int64_t t, int64_t h, int64_t d) {
    return (((t / 16 * HD + h) * (DD / 2) + d / 2) * 16 + t % 16) * 2 + d % 2;
}
static int64_t vtb_at(int64_t t, int64_t h, int64_t d) {
    return (((t / 32 * HD + h) * DD + d) * 16 + t % 32 / 2) * 2 + t % 2;
}
__attribute__((target("avx512bf16"))) static void
tiles_bf16(const kn_decode_attn *p, const uint16_t *Kt, const uint16_t *Vt) {
    const int64_t T = kn_decode_attn_visible(p, 0, 0), nt = (T + 31) / 32 * 2;
    for (int64_t h = 0; h < HD; h++) {
        const float *q = p->q + h * DD;
        __m512i qp[DD / 2];
        for (int r = 0; r < DD / 2; r++)
            qp[r] = _mm512_set1_epi32(
                (int)((uint32_t)to_bf16(q[2 * r]) | (uint32_t)to_bf16(q[2 * r + 1]) << 16));
        float buf[CAP + 32] __attribute__((aligned(64)));
        __m512 vmax = _mm512_set1_ps(-INFINITY);
        for (int64_t i = 0; i < nt; i++) {
            const uint16_t *kt = Kt + (i * HD + h) * DD * 16;
            __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0;
            for (int r = 0; r < DD / 2; r += 3) {
                s0 =
                    _mm512_dpbf16_ps(s0, (__m512bh)qp[r], (__m512bh)_mm512_load_si512(kt + r * 32));
                s1 = _mm512_dpbf16_ps(s1, (__m512bh)qp[r + 1],
                                      (__m512bh)_mm512_load_si512(kt + r * 32 + 32));
                s2 = _mm512_dpbf16_ps(s2, (__m512bh)qp[r + 2],
                                      (__m512bh)_mm512_load_si512(kt + r * 32 + 64));
            }
            __m512 s =
                _mm512_mul_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), s2), _mm512_set1_ps(p->scale));
            put_scores(buf, i, T, s, &vmax);
        }
        const __m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(vmax));
        __m512 acc[DD], lv = _mm512_setzero_ps();
        for (int d = 0; d < DD; d++)
            acc[d] = _mm512_setzero_ps();
        for (int64_t i = 0; i < nt; i += 2) {
            const __m512 e0 = v_exp_weight(_mm512_sub_ps(_mm512_load_ps(buf + i * 16), mx));
            const __m512 e1 = v_exp_weight(_mm512_sub_ps(_mm512_load_ps(buf + i * 16 + 16), mx));
            const __m512bh ep = _mm512_cvtne2ps_pbh(e1, e0); /* element k: e_k */
            lv = _mm512_add_ps(lv, _mm512_add_ps(e0, e1));
            const uint16_t *vt = Vt + (i / 2 * HD + h) * DD * 32;
            for (int d = 0; d < DD; d++)
                acc[d] = _mm512_dpbf16_ps(acc[d], ep, (__m512bh)_mm512_load_si512(vt + d * 32));
        }
        finish(acc, 1.0f / _mm512_reduce_add_ps(lv), p->y + h * DD);
    }
}

static float frand(void) { return (float)rand() / (float)RAND_MAX - 0.5f; }

int main(int argc, char **argv) {
    const int64_t T = argc > 1 ? atoll(argv[1]) : 271, n = CAP * HD * DD, reps = 2000;
    if (T < 1 || T > CAP) return 2;
    float *q = malloc(HD * DD * sizeof(float)), *y = malloc(HD * DD * sizeof(float));
    float *k[2], *v[2], *kt[2], *vt[2];
    uint16_t *kb[2], *vb[2], *ktb[2], *vtb[2];
    for (int i = 0; i < HD * DD; i++)
        q[i] = 2 * frand();
    for (int l = 0; l < 2; l++) {
        k[l] = aligned_alloc(64, n * 4), v[l] = aligned_alloc(64, n * 4);
        kt[l] = aligned_alloc(64, n * 4), vt[l] = aligned_alloc(64, n * 4);
        kb[l] = aligned_alloc(64, n * 2 + 64), vb[l] = aligned_alloc(64, n * 2 + 64);
        ktb[l] = aligned_alloc(64, n * 2), vtb[l] = aligned_alloc(64, n * 2);
        for (int64_t t = 0; t < CAP; t++)
            for (int64_t h = 0; h < HD; h++)
                for (int64_t d = 0; d < DD; d++) {
                    const int64_t r = (t * HD + h) * DD + d;
                    k[l][r] = frand(), v[l][r] = frand();
                    kt[l][tile_at(t, h, d)] = k[l][r], vt[l][tile_at(t, h, d)] = v[l][r];
                    kb[l][r] = to_bf16(k[l][r]), vb[l][r] = to_bf16(v[l][r]);
                    ktb[l][ktb_at(t, h, d)] = kb[l][r], vtb[l][vtb_at(t, h, d)] = vb[l][r];
                }
    }
    const size_t ev_n = 1536 * 256;
    float *ev = malloc(ev_n * sizeof(float));
    for (size_t i = 0; i < ev_n; i++)
        ev[i] = 1.0f;
    static const char *const names[] = {"shipped f32 (avx2 body)", "rows_bf16", "tiles_f32",
                                        "tiles_bf16"};
    const int nv = __builtin_cpu_supports("avx512bf16") ? 4 : 3;
    int64_t qpos = T - 1, *tm = malloc(reps * sizeof(int64_t));
    double res[4][2] = {{0}};
    float want[HD * DD];
    volatile float sink = 0;
    for (int round = 0; round < 3; round++)
        for (int vi = 0; vi < nv; vi++)
            for (int sw = 0; sw < 2; sw++) {
                for (int64_t r = 0; r < reps; r++) {
                    if (sw) sink += bench_sweep(ev, ev_n);
                    const int64_t t0 = bench_now_ns();
                    for (int l = 0; l < 2; l++) {
                        kn_decode_attn p = {.B = 1, .H = HD, .M = 1, .T = T, .D = DD, .Dv = DD};
                        p.q = q, p.k = k[l], p.v = v[l], p.y = y, p.qpos = &qpos;
                        p.scale = 1.0f / sqrtf(DD), p.fill = -INFINITY;
                        if (vi == 0) cpu_decode_attn_f32_avx2(&p, 0, HD);
                        if (vi == 1) rows_bf16(&p, kb[l], vb[l]);
                        if (vi == 2) tiles_f32(&p, kt[l], vt[l]);
                        if (vi == 3) tiles_bf16(&p, ktb[l], vtb[l]);
                    }
                    tm[r] = bench_now_ns() - t0;
                }
                qsort(tm, (size_t)reps, sizeof *tm, bench_cmp_i64);
                const double x = (double)tm[reps / 2] / (double)(2 * T * HD);
                if (round == 0 || x < res[vi][sw]) res[vi][sw] = x;
                if (round == 0 && sw == 0) { /* layer 1's y, as the loop left it */
                    float md = 0;
                    if (vi == 0) memcpy(want, y, sizeof want);
                    for (int i = 0; i < HD * DD; i++)
                        md = fmaxf(md, fabsf(y[i] - want[i]));
                    printf("%-24s max |y - shipped| %.3g\n", names[vi], (double)md);
                }
            }
    printf("T %lld: ns per key and head (hot / swept)\n", (long long)T);
    for (int vi = 0; vi < nv; vi++)
        printf("%-24s %.2f / %.2f\n", names[vi], res[vi][0], res[vi][1]);
    return sink < 0;
}
