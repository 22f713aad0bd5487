/*
 * rowquant.c — per-row dynamic asymmetric u8 quantization and the int8
 * matmul's epilogue (rowquant.h): scalar C, with the AVX-512 passes of
 * dynquant-avx512.c / rowquant-avx512.c when the caller says the CPU has
 * them.
 */
#include "kernels/cpu/rowquant.h"

#include <math.h>
#include <string.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/dynquant.h"

static void minmax_finite(const float *x, int64_t n, float *mn, float *mx) {
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        if (!isfinite(v)) continue;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
    }
    *mn = lo;
    *mx = hi;
}

/* x times the reciprocal of the scale (inv = 1 / s), as the AVX-512 tier
 * (cpu_quant_row_u8_avx512) does: a divide per element cost a sixth of the
 * int8 matmul's epilogue on Intel cores (vdivps) */
static void quantize_scalar(const float *x, int64_t n, float inv, float z, float qmax, uint8_t *q) {
    for (int64_t i = 0; i < n; i++) {
        float v = nearbyintf(x[i] * inv) + z;
        /* NaN -> 0 (the comparison is false), then the clamp */
        v = v > 0 ? v : 0;
        q[i] = (uint8_t)(v < qmax ? v : qmax);
    }
}

void cpu_quant_row_u8_mm(const float *x, int64_t K, float mn, float mx, int qmax, bool avx512,
                         uint8_t *q, float *scale, int32_t *zp) {
#if !defined(__x86_64__)
    avx512 = false;
#endif
    if (!isfinite(mn) || !isfinite(mx)) minmax_finite(x, K, &mn, &mx); /* an infinity */
    float s = (mx - mn) / (float)qmax;
    if (!(s > 0) || !isfinite(s)) s = 1.f; /* an all-zero row (or a range past FLT_MAX) */
    float z = nearbyintf(-mn / s);
    z = z < 0 ? 0 : z > (float)qmax ? (float)qmax : z;
    *scale = s;
    *zp = (int32_t)z;
    float inv = 1.f / s;
    if (!isfinite(inv)) { /* a subnormal scale: divide (0 * inf would be NaN) */
#if defined(__x86_64__)
        if (avx512 && qmax == 255) {
            cpu_dyn_quantize_u8_avx512(x, K, s, z, q);
            return;
        }
#endif
        for (int64_t i = 0; i < K; i++) {
            float v = nearbyintf(x[i] / s) + z;
            v = v > 0 ? v : 0;
            q[i] = (uint8_t)(v < (float)qmax ? v : (float)qmax);
        }
        return;
    }
#if defined(__x86_64__)
    if (avx512) {
        cpu_quant_row_u8_avx512(x, K, inv, z, (float)qmax, q);
        return;
    }
#endif
    quantize_scalar(x, K, inv, z, (float)qmax, q);
}

void cpu_quant_rows_u8(const float *a, int64_t rows, int64_t K, int64_t lda, int qmax, bool avx512,
                       uint8_t *q, float *scale, int32_t *zp) {
#if !defined(__x86_64__)
    avx512 = false;
#endif
    for (int64_t m = 0; m < rows; m++) {
        const float *x = a + m * lda;
        float mn, mx;
#if defined(__x86_64__)
        if (avx512)
            cpu_dyn_minmax_f32_avx512(x, K, &mn, &mx);
        else
#endif
            minmax_finite(x, K, &mn, &mx);
        cpu_quant_row_u8_mm(x, K, mn, mx, qmax, avx512, q + m * K, scale + m, zp + m);
    }
}

void cpu_dequant_rows(float *y, int64_t rows, int64_t N, int64_t ldy, const float *scale,
                      const int32_t *zp, const float *cw, const float *bias, bool avx512) {
    for (int64_t m = 0; m < rows; m++) {
        float *row = y + m * ldy;
        float s = scale[m], zs = (float)zp[m];
#if defined(__x86_64__)
        if (avx512) {
            cpu_dequant_row_avx512(row, N, s, zs, cw, bias);
            continue;
        }
#endif
        for (int64_t n = 0; n < N; n++)
            row[n] = s * (row[n] - zs * cw[n]) + (bias ? bias[n] : 0.f);
    }
}

void cpu_quantize_u8_cl(const float *x, int64_t rows, int64_t C, const float *scale, float zp,
                        bool avx512, uint8_t *y) {
#if defined(__x86_64__)
    if (avx512) {
        cpu_quantize_u8_cl_avx512(x, rows, C, scale, zp, y);
        return;
    }
#else
    (void)avx512;
#endif
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < C; c++) {
            float v = nearbyintf(x[r * C + c] / scale[c]) + zp;
            y[r * C + c] = (uint8_t)(v != v ? 0.f : fminf(fmaxf(v, 0.f), 255.f));
        }
}

void cpu_quantize_u8(const float *x, int64_t n, float scale, float zp, uint8_t *y) {
#if defined(__x86_64__)
    if (cpu_kernels_for("avx512")) {
        cpu_dyn_quantize_u8_avx512(x, n, scale, zp, y);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) {
        float v = nearbyintf(x[i] / scale) + zp;
        y[i] = (uint8_t)(v != v ? 0.f : fminf(fmaxf(v, 0.f), 255.f));
    }
}

/* ---- the u8 rows block -------------------------------------------------- */

void cpu_rowq_get(const uint8_t *blk, int64_t rows, int64_t K, float *scale, int32_t *zp) {
    const uint8_t *tail = blk + rows * K;
    memcpy(scale, tail, (size_t)rows * sizeof *scale);
    memcpy(zp, tail + rows * (int64_t)sizeof *scale, (size_t)rows * sizeof *zp);
}

void cpu_rowq_put(uint8_t *blk, int64_t rows, int64_t K, const float *scale, const int32_t *zp) {
    uint8_t *tail = blk + rows * K;
    memcpy(tail, scale, (size_t)rows * sizeof *scale);
    memcpy(tail + rows * (int64_t)sizeof *scale, zp, (size_t)rows * sizeof *zp);
}

void cpu_rowq_from_f32(const float *a, int64_t rows, int64_t K, bool avx512, uint8_t *blk,
                       float *scale, int32_t *zp) {
    cpu_quant_rows_u8(a, rows, K, K, 255, avx512, blk, scale, zp);
    cpu_rowq_put(blk, rows, K, scale, zp);
}

void cpu_rowq_to_f32(const uint8_t *blk, int64_t rows, int64_t K, float *y) {
    const uint8_t *tail = blk + rows * K;
    for (int64_t m = 0; m < rows; m++) {
        float s;
        int32_t z;
        memcpy(&s, tail + m * (int64_t)sizeof s, sizeof s);
        memcpy(&z, tail + rows * (int64_t)sizeof s + m * (int64_t)sizeof z, sizeof z);
        for (int64_t k = 0; k < K; k++)
            y[m * K + k] = s * (float)((int32_t)blk[m * K + k] - z);
    }
}
