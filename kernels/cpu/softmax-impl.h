/*
 * softmax-impl.h — body of cpu_softmax_f32_<tier> (softmax-<tier>.c includes
 * a simd-<tier>.h, then this): softmax or log-softmax of contiguous rows, in
 * three passes over each row (max; exp and sum, stored; scale), with the max
 * subtracted. As in the reference kernel a NaN, or an infinity that meets
 * another (inf - inf), anywhere in a row makes the whole row NaN.
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
