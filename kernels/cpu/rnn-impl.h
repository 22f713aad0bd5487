/*
 * rnn-impl.h — body of the recurrent kernels of cpu_rnn.h (rnn-<tier>.c
 * includes a simd-<tier>.h, then this). The GEMM keeps 8 independent
 * accumulator chains in registers (4 rows x 2 vectors, or 1 row x 8 vectors
 * for the batch-1 recurrent product) so FMA latency is hidden; the gate
 * kernels read each gate once and write c and h once. With more than 4 rows
 * the GEMM walks B in panels of RNN_PANEL columns that stay in L2.
 */
#include "kernels/cpu/cpu_rnn.h"
#include "kernels/cpu/vmath.h"

/* n lanes (1..VW) at p */
static inline vf rnn_ld(const float *p, int64_t n) { return n == VW ? v_load(p) : v_load_n(p, n); }
static inline void rnn_st(float *p, vf v, int64_t n) {
    if (n == VW)
        v_store(p, v);
    else
        v_store_n(p, v, n);
}

/* rows [0, R) of C, w <= VW columns: the tails */
static void rnn_gemm_narrow(int64_t R, int64_t w, int64_t K, const float *A, int64_t lda,
                            const float *B, int64_t ldb, float *C, int64_t ldc, bool acc) {
    for (int64_t r = 0; r < R; r++) {
        vf s = acc ? rnn_ld(C + r * ldc, w) : v_zero();
        for (int64_t k = 0; k < K; k++)
            s = v_fmadd(v_set1(A[r * lda + k]), rnn_ld(B + k * ldb, w), s);
        rnn_st(C + r * ldc, s, w);
    }
}

/* one row, 8 vectors per block */
static void rnn_gemm_row(int64_t N, int64_t K, const float *A, const float *B, int64_t ldb,
                         float *C, bool acc) {
    int64_t n = 0;
    for (; n + 8 * VW <= N; n += 8 * VW) {
        vf s[8];
        for (int v = 0; v < 8; v++)
            s[v] = acc ? v_load(C + n + v * VW) : v_zero();
        for (int64_t k = 0; k < K; k++) {
            const vf a = v_set1(A[k]);
            const float *b = B + k * ldb + n;
            for (int v = 0; v < 8; v++)
                s[v] = v_fmadd(a, v_load(b + v * VW), s[v]);
        }
        for (int v = 0; v < 8; v++)
            v_store(C + n + v * VW, s[v]);
    }
    for (; n < N; n += VW) {
        int64_t w = N - n < VW ? N - n : VW;
        rnn_gemm_narrow(1, w, K, A, 0, B + n, ldb, C + n, 0, acc);
    }
}

/* four rows, 2 vectors per block */
static void rnn_gemm_rows4(int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                           int64_t ldb, float *C, int64_t ldc, bool acc) {
    int64_t n = 0;
    for (; n + 2 * VW <= N; n += 2 * VW) {
        vf s0[4], s1[4];
        for (int r = 0; r < 4; r++) {
            s0[r] = acc ? v_load(C + r * ldc + n) : v_zero();
            s1[r] = acc ? v_load(C + r * ldc + n + VW) : v_zero();
        }
        for (int64_t k = 0; k < K; k++) {
            const vf b0 = v_load(B + k * ldb + n), b1 = v_load(B + k * ldb + n + VW);
            for (int r = 0; r < 4; r++) {
                const vf a = v_set1(A[r * lda + k]);
                s0[r] = v_fmadd(a, b0, s0[r]);
                s1[r] = v_fmadd(a, b1, s1[r]);
            }
        }
        for (int r = 0; r < 4; r++) {
            v_store(C + r * ldc + n, s0[r]);
            v_store(C + r * ldc + n + VW, s1[r]);
        }
    }
    for (; n < N; n += VW) {
        int64_t w = N - n < VW ? N - n : VW;
        rnn_gemm_narrow(4, w, K, A, lda, B + n, ldb, C + n, ldc, acc);
    }
}

/* Columns per panel of B: the rows of C walk one panel (K x RNN_PANEL floats,
 * 256 KiB at K = 512) while it stays in L2, instead of streaming all of B
 * from L3 or memory once per 4 rows (the input projection of every time
 * step: M = T*N rows). */
#define RNN_PANEL 128

void CPU_FN(cpu_rnn_gemm_f32)(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                              const float *B, int64_t ldb, float *C, int64_t ldc, bool acc) {
    const int64_t panel = M <= 4 ? N : RNN_PANEL; /* B is read once anyway */
    for (int64_t n0 = 0; n0 < N; n0 += panel) {
        const int64_t w = N - n0 < panel ? N - n0 : panel;
        int64_t m = 0;
        for (; m + 4 <= M; m += 4)
            rnn_gemm_rows4(w, K, A + m * lda, lda, B + n0, ldb, C + m * ldc + n0, ldc, acc);
        for (; m < M; m++)
            rnn_gemm_row(w, K, A + m * lda, B + n0, ldb, C + m * ldc + n0, acc);
    }
}

/* clamp keeping NaN (v_max(lo, NaN) and v_min(hi, NaN) are NaN) */
static inline vf rnn_clamp(vf v, vf lo, vf hi) { return v_min(hi, v_max(lo, v)); }

void CPU_FN(cpu_lstm_cell_f32)(int64_t H, const float *gx, const float *gh, const float *P,
                               float clip, bool input_forget, float *c, float *h) {
    const vf lo = v_set1(-clip), hi = v_set1(clip), one = v_set1(1.0f);
    for (int64_t j = 0; j < H; j += VW) {
        const int64_t w = H - j < VW ? H - j : VW;
        const vf cp = rnn_ld(c + j, w);
        vf pi = v_add(rnn_ld(gx + j, w), rnn_ld(gh + j, w));
        vf po = v_add(rnn_ld(gx + H + j, w), rnn_ld(gh + H + j, w));
        vf pf = v_add(rnn_ld(gx + 2 * H + j, w), rnn_ld(gh + 2 * H + j, w));
        const vf pc = v_add(rnn_ld(gx + 3 * H + j, w), rnn_ld(gh + 3 * H + j, w));
        if (P) {
            pi = v_fmadd(rnn_ld(P + j, w), cp, pi);
            pf = v_fmadd(rnn_ld(P + 2 * H + j, w), cp, pf);
        }
        const vf i = v_sigmoid(rnn_clamp(pi, lo, hi));
        const vf f = input_forget ? v_sub(one, i) : v_sigmoid(rnn_clamp(pf, lo, hi));
        const vf cn = v_add(v_mul(f, cp), v_mul(i, v_tanh(rnn_clamp(pc, lo, hi))));
        if (P) po = v_fmadd(rnn_ld(P + H + j, w), cn, po);
        const vf o = v_sigmoid(rnn_clamp(po, lo, hi));
        rnn_st(c + j, cn, w);
        rnn_st(h + j, v_mul(o, v_tanh(cn)), w);
    }
}

void CPU_FN(cpu_gru_zr_f32)(int64_t H, const float *gx, const float *gh, float clip, float *zr) {
    const vf lo = v_set1(-clip), hi = v_set1(clip);
    for (int64_t j = 0; j < 2 * H; j += VW) {
        const int64_t w = 2 * H - j < VW ? 2 * H - j : VW;
        const vf p = v_add(rnn_ld(gx + j, w), rnn_ld(gh + j, w));
        rnn_st(zr + j, v_sigmoid(rnn_clamp(p, lo, hi)), w);
    }
}

void CPU_FN(cpu_gru_out_f32)(int64_t H, const float *gxh, const float *ghh, const float *rbh,
                             const float *r, const float *z, float clip, float *h) {
    const vf lo = v_set1(-clip), hi = v_set1(clip);
    for (int64_t j = 0; j < H; j += VW) {
        const int64_t w = H - j < VW ? H - j : VW;
        vf rec = rnn_ld(ghh + j, w);
        if (rbh) rec = v_add(rec, rnn_ld(rbh + j, w));
        if (r) rec = v_mul(rnn_ld(r + j, w), rec);
        const vf hh = v_tanh(rnn_clamp(v_add(rnn_ld(gxh + j, w), rec), lo, hi));
        const vf hp = rnn_ld(h + j, w);
        /* (1 - z) hh + z h */
        rnn_st(h + j, v_fmadd(rnn_ld(z + j, w), v_sub(hp, hh), hh), w);
    }
}

void CPU_FN(cpu_rnn_tanh_f32)(int64_t H, const float *gx, const float *gh, float clip, float *h) {
    const vf lo = v_set1(-clip), hi = v_set1(clip);
    for (int64_t j = 0; j < H; j += VW) {
        const int64_t w = H - j < VW ? H - j : VW;
        const vf p = v_add(rnn_ld(gx + j, w), rnn_ld(gh + j, w));
        rnn_st(h + j, v_tanh(rnn_clamp(p, lo, hi)), w);
    }
}
