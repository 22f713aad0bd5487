/*
 * gemv-impl.h — body of cpu_gemv_f32_<tier> (gemv-<tier>.c includes a
 * simd-<tier>.h, then this): y[n] = sum_k x[k] * b[k*N + n], the M = 1
 * matrix product against K rows of `width` columns, row stride ld (a
 * column block of a row-major [K, N] weight, ld = N; or one panel of the
 * packed layout, ld = width, read purely sequentially). Memory-bound: b is
 * read once, 8 vectors of columns at a time (8 independent accumulators
 * cover the FMA latency), two rows per step.
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
