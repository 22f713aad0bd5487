/*
 * softmax-impl.h — body of cpu_softmax_f32_<tier> (softmax-<tier>.c includes
 * a simd-<tier>.h, then this): softmax or log-softmax of contiguous rows, in
 * three passes over each row (max; exp and sum, stored; scale), with the max
 * subtracted. As in the reference kernel a NaN, or an infinity that meets
 * another (inf - inf), anywhere in a row makes the whole row NaN.
 * cpu_softmax_cols_f32: the same along a strided axis (a Softmax whose axis
 * is not the last, e.g. YOLOv8's DFL [1, 16, 4, A] on axis 1), vectorized
 * across the contiguous columns: max, exp and sum, scale, each a pass over
 * the `len` rows of a block of columns.
 */
#include <math.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/vmath.h"

static void softmax_row(const float *x, float *y, int64_t n, bool log) {
    vf m0 = v_set1(-INFINITY), m1 = m0;
    int64_t i = 0;
    for (; i + 2 * VW <= n; i += 2 * VW) {
        m0 = v_max(m0, v_load(x + i));
        m1 = v_max(m1, v_load(x + i + VW));
    }
    for (; i + VW <= n; i += VW)
        m0 = v_max(m0, v_load(x + i));
    if (i < n) m1 = v_max(m1, v_load_fill(x + i, n - i, -INFINITY));
    const float mx = v_hmax(v_max(m0, m1));
    const vf m = v_set1(mx);
    vf s0 = v_zero(), s1 = v_zero();
    for (i = 0; i + 2 * VW <= n; i += 2 * VW) {
        const vf e0 = v_exp(v_sub(v_load(x + i), m));
        const vf e1 = v_exp(v_sub(v_load(x + i + VW), m));
        if (!log) {
            v_store(y + i, e0);
            v_store(y + i + VW, e1);
        }
        s0 = v_add(s0, e0);
        s1 = v_add(s1, e1);
    }
    for (; i + VW <= n; i += VW) {
        const vf e = v_exp(v_sub(v_load(x + i), m));
        if (!log) v_store(y + i, e);
        s0 = v_add(s0, e);
    }
    if (i < n) {
        /* the missing lanes read -inf and add e^-inf = 0 */
        const vf e = v_exp(v_sub(v_load_fill(x + i, n - i, -INFINITY), m));
        if (!log) v_store_n(y + i, e, n - i);
        s1 = v_add(s1, e);
    }
    const float sum = v_hsum(v_add(s0, s1));
    if (log) {
        const vf lse = v_set1(mx + logf(sum));
        for (i = 0; i + VW <= n; i += VW)
            v_store(y + i, v_sub(v_load(x + i), lse));
        if (i < n) v_store_n(y + i, v_sub(v_load_n(x + i, n - i), lse), n - i);
    } else {
        const vf inv = v_set1(1.0f / sum);
        for (i = 0; i + VW <= n; i += VW)
            v_store(y + i, v_mul(v_load(y + i), inv));
        if (i < n) v_store_n(y + i, v_mul(v_load_n(y + i, n - i), inv), n - i);
    }
}

void CPU_FN(cpu_softmax_f32)(const float *x, float *y, int64_t rows, int64_t len, bool log) {
    for (int64_t r = 0; r < rows; r++)
        softmax_row(x + r * len, y + r * len, len, log);
}

/* Columns [c, c + w) (w <= VW) of one [len, stride] block: the max, exp and
 * sum, and scale passes, one vector per row. */
static void softmax_cols_vec(const float *x, float *y, int64_t len, int64_t stride, int64_t w,
                             bool log) {
    const bool full = w == VW;
    vf m = v_set1(-INFINITY);
    for (int64_t r = 0; r < len; r++)
        m = v_max(m, full ? v_load(x + r * stride) : v_load_n(x + r * stride, w));
    vf s = v_zero();
    for (int64_t r = 0; r < len; r++) {
        const vf xv = full ? v_load(x + r * stride) : v_load_n(x + r * stride, w);
        const vf e = v_exp(v_sub(xv, m));
        if (!log) {
            if (full)
                v_store(y + r * stride, e);
            else
                v_store_n(y + r * stride, e, w);
        }
        s = v_add(s, e);
    }
    if (log) {
        float ms[VW], ss[VW];
        v_store(ms, m);
        v_store(ss, s);
        for (int64_t i = 0; i < VW; i++)
            ms[i] += logf(ss[i]);
        const vf lse = v_load(ms);
        for (int64_t r = 0; r < len; r++) {
            const vf xv = full ? v_load(x + r * stride) : v_load_n(x + r * stride, w);
            if (full)
                v_store(y + r * stride, v_sub(xv, lse));
            else
                v_store_n(y + r * stride, v_sub(xv, lse), w);
        }
        return;
    }
    const vf inv = v_div(v_set1(1.0f), s);
    for (int64_t r = 0; r < len; r++) {
        if (full)
            v_store(y + r * stride, v_mul(v_load(y + r * stride), inv));
        else
            v_store_n(y + r * stride, v_mul(v_load_n(y + r * stride, w), inv), w);
    }
}

void CPU_FN(cpu_softmax_cols_f32)(const float *x, float *y, int64_t len, int64_t stride,
                                  int64_t cols, bool log) {
    for (int64_t c = 0; c < cols; c += VW)
        softmax_cols_vec(x + c, y + c, len, stride, cols - c < VW ? cols - c : VW, log);
}
