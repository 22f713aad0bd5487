/*
 * rnn-impl.h — body of the recurrent kernels of cpu_rnn.h (rnn-<tier>.c
 * includes a simd-<tier>.h, then this). Everything is built on one register
 * tile: MR rows of A against NV weight vectors per k, where vector v of row k
 * sits at b + v * vs + k * ks (a block's G gates: vs = VW, ks = G * VW, one
 * sequential stream; RNN's single gate: NV consecutive blocks, vs = K * VW).
 * Small tiles (the batch-1 time step) keep two accumulator sets over even and
 * odd k so FMA latency stays hidden; the step is bound by streaming the
 * recurrent weights, which the gate-panel layout reads strictly in order.
 */
#include "kernels/cpu/cpu_rnn.h"
#include "kernels/cpu/vmath.h"

#if VW >= 16
#define RNN_MR 6 /* 6 x 4 accumulators of 32 registers */
#elif VW >= 8
#define RNN_MR 3 /* 3 x 4 of 16 */
#else
#define RNN_MR 2
#endif
#define RNN_NV 4
#define RNN_SPLIT (VW >= 16 ? 8 : 4) /* tiles of at most this many vectors split k */

/* n lanes (1..VW) at p */
static inline void rnn_st(float *p, vf v, int64_t n) {
    if (n == VW)
        v_store(p, v);
    else
        v_store_n(p, v, n);
}

/* out[r][v][VW] = sum_k A[r * lda + k] b[v * vs + k * ks] */
static inline __attribute__((always_inline)) void rnn_tile(const int MR, const int NV, int64_t K,
                                                           const float *A, int64_t lda,
                                                           const float *b, int64_t vs, int64_t ks,
                                                           float *out) {
    vf s[RNN_MR][RNN_NV], t[RNN_MR][RNN_NV];
    for (int r = 0; r < MR; r++)
        for (int v = 0; v < NV; v++)
            s[r][v] = t[r][v] = v_zero();
    int64_t k = 0;
    if (MR * NV <= RNN_SPLIT)
        for (; k + 2 <= K; k += 2) {
            const float *bk = b + k * ks;
            for (int r = 0; r < MR; r++) {
                const vf a0 = v_set1(A[r * lda + k]), a1 = v_set1(A[r * lda + k + 1]);
                for (int v = 0; v < NV; v++) {
                    s[r][v] = v_fmadd(a0, v_load(bk + v * vs), s[r][v]);
                    t[r][v] = v_fmadd(a1, v_load(bk + ks + v * vs), t[r][v]);
                }
            }
        }
    for (; k < K; k++) {
        const float *bk = b + k * ks;
        vf w[RNN_NV];
        for (int v = 0; v < NV; v++)
            w[v] = v_load(bk + v * vs);
        for (int r = 0; r < MR; r++) {
            const vf a = v_set1(A[r * lda + k]);
            for (int v = 0; v < NV; v++)
                s[r][v] = v_fmadd(a, w[v], s[r][v]);
        }
    }
    for (int r = 0; r < MR; r++)
        for (int v = 0; v < NV; v++)
            v_store(out + (r * NV + v) * VW,
                    MR * NV <= RNN_SPLIT ? v_add(s[r][v], t[r][v]) : s[r][v]);
}

typedef void (*rnn_tile_fn)(int64_t K, const float *A, int64_t lda, const float *b, int64_t vs,
                            int64_t ks, float *out);
#define RNN_TILE_FN(MR, NV)                                                                        \
    static void rnn_tile_##MR##_##NV(int64_t K, const float *A, int64_t lda, const float *b,       \
                                     int64_t vs, int64_t ks, float *out) {                         \
        rnn_tile(MR, NV, K, A, lda, b, vs, ks, out);                                               \
    }
#define RNN_TILE_ROW(MR) RNN_TILE_FN(MR, 1) RNN_TILE_FN(MR, 2) RNN_TILE_FN(MR, 3) RNN_TILE_FN(MR, 4)
#define RNN_TILE_REF(MR)                                                                           \
    { rnn_tile_##MR##_1, rnn_tile_##MR##_2, rnn_tile_##MR##_3, rnn_tile_##MR##_4 }
RNN_TILE_ROW(1)
RNN_TILE_ROW(2)
#if RNN_MR >= 3
RNN_TILE_ROW(3)
#endif
#if RNN_MR >= 6
RNN_TILE_ROW(4)
RNN_TILE_ROW(5)
RNN_TILE_ROW(6)
#endif
static const rnn_tile_fn k_tiles[RNN_MR][RNN_NV] = {
    RNN_TILE_REF(1), RNN_TILE_REF(2),
#if RNN_MR >= 3
    RNN_TILE_REF(3),
#endif
#if RNN_MR >= 6
    RNN_TILE_REF(4), RNN_TILE_REF(5), RNN_TILE_REF(6),
#endif
};

static void rnn_tile_any(int64_t mr, int64_t nv, int64_t K, const float *A, int64_t lda,
                         const float *b, int64_t vs, int64_t ks, float *out) {
    k_tiles[mr - 1][nv - 1](K, A, lda, b, vs, ks, out);
}

static inline int64_t rnn_blocks(int64_t H) { return (H + VW - 1) / VW; }

/* rows per tile so that M rows come in equal tiles of at most RNN_MR
 * (20 rows: 5 5 5 5, not 6 6 6 2; 8: 4 4) */
static inline int64_t rnn_even_rows(int64_t M) {
    const int64_t tiles = (M + RNN_MR - 1) / RNN_MR;
    return tiles > 0 ? (M + tiles - 1) / tiles : 1;
}

int64_t CPU_FN(cpu_rnn_vw)(void) { return VW; }

size_t CPU_FN(cpu_rnn_packed_floats)(int64_t G, int64_t H, int64_t K) {
    return (size_t)(rnn_blocks(H) * K * G * VW);
}

void CPU_FN(cpu_rnn_pack_f32)(const float *src, int64_t G, int64_t H, int64_t K, float *dst) {
    for (int64_t p = 0; p < rnn_blocks(H); p++)
        for (int64_t k = 0; k < K; k++)
            for (int64_t g = 0; g < G; g++)
                for (int64_t l = 0; l < VW; l++, dst++) {
                    int64_t j = p * VW + l;
                    *dst = j < H ? src[(g * H + j) * K + k] : 0.0f;
                }
}

/* Blocks per tile and the vector placement of a G-gate matrix with K rows:
 * one block's gates, or (G == 1) up to RNN_NV consecutive blocks. */
static inline int64_t rnn_tile_blocks(int64_t G, int64_t p, int64_t p1) {
    return G > 1 ? 1 : (p1 - p < RNN_NV ? p1 - p : RNN_NV);
}

void CPU_FN(cpu_rnn_xproj_f32)(int64_t M, int64_t K, const float *A, int64_t lda, const float *Wp,
                               int64_t G, int64_t H, const float *bias, float *gx, int64_t p0,
                               int64_t p1) {
    const int64_t GV = G * VW, ld = rnn_blocks(H) * GV;
    /* rows in chunks whose A stays in L2 while every panel of the range walks it */
    int64_t mc = (64 * 1024 / (K > 0 ? K : 1)) / RNN_MR * RNN_MR;
    if (mc < RNN_MR) mc = RNN_MR;
    float tmp[RNN_MR * RNN_NV * VW] __attribute__((aligned(64)));
    for (int64_t m0 = 0; m0 < M; m0 += mc) {
        const int64_t m1 = M - m0 < mc ? M : m0 + mc;
        for (int64_t p = p0; p < p1;) {
            const int64_t nb = rnn_tile_blocks(G, p, p1), nv = G > 1 ? G : nb;
            const float *b = Wp + p * K * GV;
            const int64_t vs = G > 1 ? VW : K * VW;
            const int64_t rows = rnn_even_rows(m1 - m0);
            for (int64_t m = m0; m < m1; m += rows) {
                const int64_t mr = m1 - m < rows ? m1 - m : rows;
                rnn_tile_any(mr, nv, K, A + m * lda, lda, b, vs, GV, tmp);
                for (int64_t r = 0; r < mr; r++)
                    for (int64_t v = 0; v < nv; v++) {
                        const int64_t o = p * GV + v * VW;
                        v_store(gx + (m + r) * ld + o,
                                v_add(v_load(tmp + (r * nv + v) * VW), v_load(bias + o)));
                    }
            }
            p += nb;
        }
    }
}

/* clamp keeping NaN (v_max(lo, NaN) and v_min(hi, NaN) are NaN) */
static inline vf rnn_clamp(vf v, vf lo, vf hi) { return v_min(hi, v_max(lo, v)); }

typedef struct rnn_consts {
    vf lo, hi, one;
} rnn_consts;

/* LSTM on block p of one row; acc = the block's 4 recurrent products */
static inline void lstm_block(const cpu_rnn_step_args *a, const rnn_consts *q, int64_t r, int64_t p,
                              const float *acc) {
    const int64_t Hp = rnn_blocks(a->H) * VW, o = r * Hp + p * VW;
    const float *gx = a->gx[r] + p * 4 * VW;
    float *c = a->c + o;
    const vf cp = v_load(c);
    vf pi = v_add(v_load(gx), v_load(acc));
    vf po = v_add(v_load(gx + VW), v_load(acc + VW));
    vf pf = v_add(v_load(gx + 2 * VW), v_load(acc + 2 * VW));
    const vf pc = v_add(v_load(gx + 3 * VW), v_load(acc + 3 * VW));
    const float *P = a->P ? a->P + p * 3 * VW : NULL;
    if (P) {
        pi = v_fmadd(v_load(P), cp, pi);
        pf = v_fmadd(v_load(P + 2 * VW), cp, pf);
    }
    const vf i = v_sigmoid(rnn_clamp(pi, q->lo, q->hi));
    const vf f = a->input_forget ? v_sub(q->one, i) : v_sigmoid(rnn_clamp(pf, q->lo, q->hi));
    const vf cn = v_add(v_mul(f, cp), v_mul(i, v_tanh(rnn_clamp(pc, q->lo, q->hi))));
    if (P) po = v_fmadd(v_load(P + VW), cn, po);
    const vf og = v_sigmoid(rnn_clamp(po, q->lo, q->hi));
    const vf hn = v_mul(og, v_tanh(cn));
    v_store(c, cn);
    v_store(a->h_out + o, hn);
    if (a->y[r]) {
        const int64_t w = a->H - p * VW;
        rnn_st(a->y[r] + p * VW, hn, w < VW ? w : VW);
    }
}

/* h_out = (1 - z) hh + z h for block p of row r, and the row's y */
static inline void gru_finish(const cpu_rnn_step_args *a, int64_t r, int64_t p, vf z, vf hh) {
    const int64_t o = r * rnn_blocks(a->H) * VW + p * VW;
    const vf hn = v_fmadd(z, v_sub(v_load(a->h + o), hh), hh);
    v_store(a->h_out + o, hn);
    if (a->y[r]) {
        const int64_t w = a->H - p * VW;
        rnn_st(a->y[r] + p * VW, hn, w < VW ? w : VW);
    }
}

/* The cells of blocks [p, p + nb) of rows [r0, r0 + mr); acc[r][v][VW] from
 * the tile (NULL: products are zero). GRU without linear_before_reset: phase
 * 1 (z, r) here; phase 2 is gru_lbr0_out. */
static void step_cells(const cpu_rnn_step_args *a, const rnn_consts *q, int64_t r0, int64_t mr,
                       int64_t p, int64_t nb, int64_t nv, const float *acc) {
    static const float zero[RNN_NV * VW] __attribute__((aligned(64)));
    const int64_t Hp = rnn_blocks(a->H) * VW;
    for (int64_t r = r0; r < r0 + mr; r++) {
        if (!a->gx[r]) continue;
        const float *ar = acc ? acc + (r - r0) * nv * VW : zero;
        switch (a->cell) {
        case CPU_RNN_LSTM: lstm_block(a, q, r, p, ar); break;
        case CPU_RNN_RNN:
            for (int64_t v = 0; v < nb; v++) {
                const vf pre = v_add(v_load(a->gx[r] + (p + v) * VW), v_load(ar + v * VW));
                const vf hn = v_tanh(rnn_clamp(pre, q->lo, q->hi));
                v_store(a->h_out + r * Hp + (p + v) * VW, hn);
                if (a->y[r]) {
                    const int64_t w = a->H - (p + v) * VW;
                    rnn_st(a->y[r] + (p + v) * VW, hn, w < VW ? w : VW);
                }
            }
            break;
        case CPU_RNN_GRU: {
            const float *gx = a->gx[r] + p * 3 * VW;
            const vf z = v_sigmoid(rnn_clamp(v_add(v_load(gx), v_load(ar)), q->lo, q->hi));
            const vf rg =
                v_sigmoid(rnn_clamp(v_add(v_load(gx + VW), v_load(ar + VW)), q->lo, q->hi));
            if (a->lbr) {
                const vf rec = v_mul(rg, v_add(v_load(ar + 2 * VW), v_load(a->rbh + p * VW)));
                gru_finish(a, r, p, z,
                           v_tanh(rnn_clamp(v_add(v_load(gx + 2 * VW), rec), q->lo, q->hi)));
            } else {
                const int64_t o = r * Hp + p * VW;
                v_store(a->work + o, z);
                v_store(a->work + a->N * Hp + o, v_mul(rg, v_load(a->h + o)));
            }
            break;
        }
        }
    }
}

/* inactive rows carry h over */
static void carry_inactive(const cpu_rnn_step_args *a) {
    const int64_t Hp = rnn_blocks(a->H) * VW;
    for (int64_t r = 0; r < a->N; r++)
        if (!a->gx[r])
            for (int64_t j = 0; j < Hp; j += VW)
                v_store(a->h_out + r * Hp + j, v_load(a->h + r * Hp + j));
}

void CPU_FN(cpu_rnn_step_f32)(const cpu_rnn_step_args *a) {
    const int64_t H = a->H, Hb = rnn_blocks(H), Hp = Hb * VW, N = a->N;
    const int64_t G = a->cell == CPU_RNN_LSTM ? 4 : a->cell == CPU_RNN_GRU ? 3 : 1, GV = G * VW;
    const bool lbr0 = a->cell == CPU_RNN_GRU && !a->lbr;
    const rnn_consts q = {v_set1(-a->clip), v_set1(a->clip), v_set1(1.0f)};
    float tmp[RNN_MR * RNN_NV * VW] __attribute__((aligned(64)));
    const int64_t rows = rnn_even_rows(N);
    for (int64_t p = 0; p < Hb;) {
        const int64_t nb = rnn_tile_blocks(G, p, Hb);
        /* GRU without linear_before_reset: z and r only in this pass */
        const int64_t nv = G > 1 ? (lbr0 ? 2 : G) : nb;
        const float *b = a->R + p * H * GV;
        for (int64_t r0 = 0; r0 < N; r0 += rows) {
            const int64_t mr = N - r0 < rows ? N - r0 : rows;
            if (!a->h_zero)
                rnn_tile_any(mr, nv, H, a->h + r0 * Hp, Hp, b, G > 1 ? VW : H * VW, GV, tmp);
            step_cells(a, &q, r0, mr, p, nb, nv, a->h_zero ? NULL : tmp);
        }
        p += nb;
    }
    if (lbr0) {
        /* phase 2: hh = tanh(gxh + (r (.) h) Rh + Rbh) */
        const float *zs = a->work, *rh = a->work + N * Hp;
        for (int64_t p = 0; p < Hb; p++)
            for (int64_t r0 = 0; r0 < N; r0 += rows) {
                const int64_t mr = N - r0 < rows ? N - r0 : rows;
                if (!a->h_zero)
                    rnn_tile_any(mr, 1, H, rh + r0 * Hp, Hp, a->R + p * H * GV + 2 * VW, VW, GV,
                                 tmp);
                for (int64_t r = r0; r < r0 + mr; r++) {
                    if (!a->gx[r]) continue;
                    const vf rec = v_add(a->h_zero ? v_zero() : v_load(tmp + (r - r0) * VW),
                                         v_load(a->rbh + p * VW));
                    const vf pre = v_add(v_load(a->gx[r] + p * GV + 2 * VW), rec);
                    gru_finish(a, r, p, v_load(zs + r * Hp + p * VW),
                               v_tanh(rnn_clamp(pre, q.lo, q.hi)));
                }
            }
    }
    carry_inactive(a);
}
