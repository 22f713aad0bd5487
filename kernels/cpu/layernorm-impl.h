/*
 * layernorm-impl.h — body of cpu_layernorm_f32_<tier> (layernorm-<tier>.c
 * includes a simd-<tier>.h, then this): layer normalization of contiguous
 * rows: float-vector statistics in two passes (the mean, then deviations
 * from it with the corrected two-pass formula, so the mean's rounding does
 * not leak into rows of small variance), then
 * y = (x - mean) * inv_std * scale + bias.
 */
#include <math.h>

#include "kernels/cpu/cpu_kernels.h"

void CPU_FN(cpu_layernorm_f32)(const float *x, const float *scale, const float *bias, float eps,
                               float *y, float *mean, float *inv_std, int64_t rows, int64_t len) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * len;
        float *yr = y + r * len;
        vf s0 = v_zero(), s1 = v_zero();
        int64_t i = 0;
        for (; i + 2 * VW <= len; i += 2 * VW) {
            s0 = v_add(s0, v_load(xr + i));
            s1 = v_add(s1, v_load(xr + i + VW));
        }
        for (; i + VW <= len; i += VW)
            s0 = v_add(s0, v_load(xr + i));
        if (i < len) s1 = v_add(s1, v_load_n(xr + i, len - i));
        const float mu = v_hsum(v_add(s0, s1)) / (float)len;
        const vf m = v_set1(mu);
        /* deviations d = x - mu and their sum: mu's rounding error c = sum(d)/len
         * is taken out of both the variance and the output (corrected two-pass) */
        vf q0 = v_zero(), q1 = v_zero();
        s0 = v_zero(), s1 = v_zero();
        for (i = 0; i + 2 * VW <= len; i += 2 * VW) {
            const vf d0 = v_sub(v_load(xr + i), m), d1 = v_sub(v_load(xr + i + VW), m);
            s0 = v_add(s0, d0);
            s1 = v_add(s1, d1);
            q0 = v_fmadd(d0, d0, q0);
            q1 = v_fmadd(d1, d1, q1);
        }
        for (; i + VW <= len; i += VW) {
            const vf d = v_sub(v_load(xr + i), m);
            s0 = v_add(s0, d);
            q0 = v_fmadd(d, d, q0);
        }
        if (i < len) {
            const vf d = v_sub(v_load_fill(xr + i, len - i, mu), m); /* missing lanes: 0 */
            s1 = v_add(s1, d);
            q1 = v_fmadd(d, d, q1);
        }
        const float c = v_hsum(v_add(s0, s1)) / (float)len;
        float var = v_hsum(v_add(q0, q1)) / (float)len - c * c;
        if (var < 0) var = 0;
        const float rs = 1.0f / sqrtf(var + eps);
        const vf rv = v_set1(rs), cv = v_set1(c);
        for (i = 0; i + VW <= len; i += VW) {
            const vf t = v_mul(v_sub(v_sub(v_load(xr + i), m), cv), rv);
            const vf b = bias ? v_load(bias + i) : v_zero();
            v_store(yr + i, v_fmadd(t, v_load(scale + i), b));
        }
        if (i < len) {
            const int64_t k = len - i;
            const vf t = v_mul(v_sub(v_sub(v_load_n(xr + i, k), m), cv), rv);
            const vf b = bias ? v_load_n(bias + i, k) : v_zero();
            v_store_n(yr + i, v_fmadd(t, v_load_n(scale + i, k), b), k);
        }
        if (mean) mean[r] = mu + c;
        if (inv_std) inv_std[r] = rs;
    }
}
