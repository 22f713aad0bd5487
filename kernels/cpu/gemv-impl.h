/*
 * gemv-impl.h — body of cpu_gemv_f32_<tier> (gemv-<tier>.c includes a
 * simd-<tier>.h, then this): y[n] = sum_k x[k] * b[k*N + n], the M = 1
 * matrix product against K rows of `width` columns, row stride ld (a
 * column block of a row-major [K, N] weight, ld = N; or one panel of the
 * packed layout, ld = width, read purely sequentially). Memory-bound: b is
 * read once, 8 vectors of columns at a time (8 independent accumulators
 * cover the FMA latency), two rows per step. cpu_gemv_rows_f32 is the same
 * product for M = 1..CPU_GEMV_MAX_ROWS rows of x (a 1x1 conv on a 1x1 image
 * or a classifier Gemm at a small batch): 4 rows by 4 vectors of columns
 * per pass (16 accumulators), so b streams once per 4 rows.
 */
#include "kernels/cpu/cpu_kernels.h"

#define GV_PANEL (8 * VW)

/* Columns [n0, n0 + 8 VW) of y. */
static void gv_panel8(const float *x, const float *b, int64_t K, int64_t N, int64_t n0, float *y) {
    vf acc[8];
    for (int j = 0; j < 8; j++)
        acc[j] = v_zero();
    const float *bp = b + n0;
    int64_t k = 0;
    for (; k + 2 <= K; k += 2, bp += 2 * N) {
        const vf x0 = v_set1(x[k]), x1 = v_set1(x[k + 1]);
        for (int j = 0; j < 8; j++)
            acc[j] = v_fmadd(x0, v_load(bp + j * VW), acc[j]);
        for (int j = 0; j < 8; j++)
            acc[j] = v_fmadd(x1, v_load(bp + N + j * VW), acc[j]);
    }
    if (k < K) {
        const vf x0 = v_set1(x[k]);
        for (int j = 0; j < 8; j++)
            acc[j] = v_fmadd(x0, v_load(bp + j * VW), acc[j]);
    }
    for (int j = 0; j < 8; j++)
        v_store(y + n0 + j * VW, acc[j]);
}

/* Columns [n0, end) (fewer than 8 VW): one vector at a time, the last partial. */
static void gv_tail(const float *x, const float *b, int64_t K, int64_t N, int64_t n0, int64_t end,
                    float *y) {
    for (; n0 < end; n0 += VW) {
        const int64_t w = end - n0 < VW ? end - n0 : VW;
        vf a0 = v_zero(), a1 = v_zero();
        const float *bp = b + n0;
        int64_t k = 0;
        if (w == VW) {
            for (; k + 2 <= K; k += 2, bp += 2 * N) {
                a0 = v_fmadd(v_set1(x[k]), v_load(bp), a0);
                a1 = v_fmadd(v_set1(x[k + 1]), v_load(bp + N), a1);
            }
            for (; k < K; k++, bp += N)
                a0 = v_fmadd(v_set1(x[k]), v_load(bp), a0);
            v_store(y + n0, v_add(a0, a1));
        } else {
            for (; k + 2 <= K; k += 2, bp += 2 * N) {
                a0 = v_fmadd(v_set1(x[k]), v_load_n(bp, w), a0);
                a1 = v_fmadd(v_set1(x[k + 1]), v_load_n(bp + N, w), a1);
            }
            for (; k < K; k++, bp += N)
                a0 = v_fmadd(v_set1(x[k]), v_load_n(bp, w), a0);
            v_store_n(y + n0, v_add(a0, a1), w);
        }
    }
}

void CPU_FN(cpu_gemv_f32)(const float *x, const float *b, int64_t K, int64_t ld, int64_t width,
                          float *y) {
    int64_t n0 = 0;
    for (; n0 + GV_PANEL <= width; n0 += GV_PANEL)
        gv_panel8(x, b, K, ld, n0, y);
    if (n0 < width) gv_tail(x, b, K, ld, n0, width, y);
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
