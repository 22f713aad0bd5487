/*
 * gemv-impl.h — body of cpu_gemv_f32_<tier> (gemv-<tier>.c includes a
 * simd-<tier>.h, then this): y[n] = sum_k x[k] * b[k*N + n], the M = 1
 * matrix product against K rows of `width` columns, row stride ld (a
 * column block of a row-major [K, N] weight, ld = N; or one panel of the
 * packed layout, ld = width, read purely sequentially). Memory-bound: b is
 * read once, 8 vectors of columns at a time (8 independent accumulators
 * cover the FMA latency), two rows per step, the columns past the last 8
 * vectors in one more pass (not one pass per vector), each stream
 * prefetched ahead in software. cpu_gemv_rows_f32 is the same
 * product for M = 1..CPU_GEMV_MAX_ROWS rows of x (a 1x1 conv on a 1x1 image
 * or a classifier Gemm at a small batch): 4 rows by 4 vectors of columns
 * per pass (16 accumulators), so b streams once per 4 rows.
 */
#include "kernels/cpu/cpu_kernels.h"

#define GV_PANEL (8 * VW)

/* Software prefetch about GV_PF_BYTES ahead in every column stream: the
 * hardware prefetchers alone leave a weight streamed from L3 short of
 * bandwidth (Xeon model 207, MobileNetV3-like b1's 16 MB of GEMV weights:
 * ~7% less time at 4 KB than without; 1-2 KB and 8-16 KB no better). */
#ifndef GV_PF_BYTES
#define GV_PF_BYTES 4096
#endif
/* Vectors per 64-byte line prefetched (one prefetch per line). */
#define GV_PF_STEP (VW * (int)sizeof(float) >= 64 ? 1 : 64 / (VW * (int)sizeof(float)))

/* Rows ahead to prefetch for a stream of `width` floats per row. */
static inline int64_t gv_pf_rows(int64_t width) {
    int64_t r = GV_PF_BYTES / (width * (int64_t)sizeof(float));
    return r < 2 ? 2 : r;
}

/* Columns [n0, n0 + NV VW) of y in one pass over K (NV <= 8 vectors, the
 * last `wl` lanes wide: VW when full), two rows per step. A full panel of
 * 8 vectors sums both rows into its 8 accumulators (enough to cover the FMA
 * latency); any other keeps the odd rows in accumulators of their own,
 * added at the end. */
static inline __attribute__((always_inline)) void gv_cols(const float *x, const float *b, int64_t K,
                                                          int64_t ld, int64_t n0, int NV,
                                                          int64_t wl, bool full, float *y) {
    const bool split = NV < 8 || !full;
    vf acc[8], odd[8];
    for (int j = 0; j < NV; j++)
        acc[j] = odd[j] = v_zero();
    const float *bp = b + n0;
    const int64_t pf = gv_pf_rows(NV * VW) * ld;
    int64_t k = 0;
    for (; k + 2 <= K; k += 2, bp += 2 * ld) {
        for (int j = 0; j < NV; j += GV_PF_STEP) {
            __builtin_prefetch(bp + pf + j * VW, 0, 3);
            __builtin_prefetch(bp + pf + ld + j * VW, 0, 3);
        }
        const vf x0 = v_set1(x[k]), x1 = v_set1(x[k + 1]);
        for (int j = 0; j < NV; j++)
            acc[j] = v_fmadd(
                x0, full || j < NV - 1 ? v_load(bp + j * VW) : v_load_n(bp + j * VW, wl), acc[j]);
        for (int j = 0; j < NV; j++) {
            const vf bv =
                full || j < NV - 1 ? v_load(bp + ld + j * VW) : v_load_n(bp + ld + j * VW, wl);
            if (split)
                odd[j] = v_fmadd(x1, bv, odd[j]);
            else
                acc[j] = v_fmadd(x1, bv, acc[j]);
        }
    }
    if (k < K) {
        const vf x0 = v_set1(x[k]);
        for (int j = 0; j < NV; j++)
            acc[j] = v_fmadd(
                x0, full || j < NV - 1 ? v_load(bp + j * VW) : v_load_n(bp + j * VW, wl), acc[j]);
    }
    for (int j = 0; j < NV; j++) {
        const vf r = split ? v_add(acc[j], odd[j]) : acc[j];
        if (full || j < NV - 1)
            v_store(y + n0 + j * VW, r);
        else
            v_store_n(y + n0 + j * VW, r, wl);
    }
}

#define GV_TAIL(NV)                                                                                \
    case NV:                                                                                       \
        if (wl == VW)                                                                              \
            gv_cols(x, b, K, ld, n0, NV, VW, true, y);                                             \
        else                                                                                       \
            gv_cols(x, b, K, ld, n0, NV, wl, false, y);                                            \
        break;

void CPU_FN(cpu_gemv_f32)(const float *x, const float *b, int64_t K, int64_t ld, int64_t width,
                          float *y) {
    int64_t n0 = 0;
    for (; n0 + GV_PANEL <= width; n0 += GV_PANEL)
        gv_cols(x, b, K, ld, n0, 8, VW, true, y);
    if (n0 == width) return;
    const int nv = (int)((width - n0 + VW - 1) / VW);
    const int64_t wl = width - n0 - (int64_t)(nv - 1) * VW;
    switch (nv) {
        GV_TAIL(1)
        GV_TAIL(2)
        GV_TAIL(3)
        GV_TAIL(4)
        GV_TAIL(5)
        GV_TAIL(6)
        GV_TAIL(7)
        GV_TAIL(8)
    default: break;
    }
}

/* Rows [m0, m0 + 4) of y (rows past M repeat row M - 1 and are not
 * stored), columns [n0, n0 + 4 VW). */
static void gv_rows4_panel4(const float *const *xr, int mr, const float *b, int64_t K, int64_t ld,
                            int64_t n0, float *const *yr) {
    vf acc[4][4];
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < 4; j++)
            acc[r][j] = v_zero();
    const float *bp = b + n0;
    for (int64_t k = 0; k < K; k++, bp += ld) {
        const vf b0 = v_load(bp), b1 = v_load(bp + VW), b2 = v_load(bp + 2 * VW),
                 b3 = v_load(bp + 3 * VW);
        for (int r = 0; r < 4; r++) {
            const vf xv = v_set1(xr[r][k]);
            acc[r][0] = v_fmadd(xv, b0, acc[r][0]);
            acc[r][1] = v_fmadd(xv, b1, acc[r][1]);
            acc[r][2] = v_fmadd(xv, b2, acc[r][2]);
            acc[r][3] = v_fmadd(xv, b3, acc[r][3]);
        }
    }
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < 4; j++)
            v_store(yr[r] + n0 + j * VW, acc[r][j]);
}

/* As gv_rows4_panel4 for columns [n0, end), fewer than 4 VW: one vector at
 * a time, the last partial. */
static void gv_rows4_tail(const float *const *xr, int mr, const float *b, int64_t K, int64_t ld,
                          int64_t n0, int64_t end, float *const *yr) {
    for (; n0 < end; n0 += VW) {
        const int64_t w = end - n0 < VW ? end - n0 : VW;
        vf acc[4] = {v_zero(), v_zero(), v_zero(), v_zero()};
        const float *bp = b + n0;
        for (int64_t k = 0; k < K; k++, bp += ld) {
            const vf bv = w == VW ? v_load(bp) : v_load_n(bp, w);
            for (int r = 0; r < 4; r++)
                acc[r] = v_fmadd(v_set1(xr[r][k]), bv, acc[r]);
        }
        for (int r = 0; r < mr; r++)
            v_store_n(yr[r] + n0, acc[r], w);
    }
}

void CPU_FN(cpu_gemv_rows_f32)(const float *x, int64_t ldx, int64_t M, const float *b, int64_t K,
                               int64_t ld, int64_t width, float *y, int64_t ldy) {
    for (int64_t m0 = 0; m0 < M; m0 += 4) {
        const int mr = M - m0 < 4 ? (int)(M - m0) : 4;
        const float *xr[4];
        float *yr[4];
        for (int r = 0; r < 4; r++) {
            const int64_t m = r < mr ? m0 + r : M - 1;
            xr[r] = x + m * ldx;
            yr[r] = y + m * ldy;
        }
        int64_t n0 = 0;
        for (; n0 + 4 * VW <= width; n0 += 4 * VW)
            gv_rows4_panel4(xr, mr, b, K, ld, n0, yr);
        if (n0 < width) gv_rows4_tail(xr, mr, b, K, ld, n0, width, yr);
    }
}
