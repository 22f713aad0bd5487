/*
 * test_rowquant.c — the int8 matmul's per-row asymmetric u8 quantization
 * and epilogue (kernels/cpu/rowquant.h): against a double-precision scalar
 * reference of the definitions (scale, zero point, |s (q - z) - a| <= s/2,
 * the zero point's share folded back by the column sums), and the AVX-512
 * passes against the scalar ones bit for bit (where the CPU has AVX-512):
 * random lengths (vector tails), rows all positive, all negative, mixed,
 * all zero, with NaN and infinities, for qmax 255 and 127. And the
 * channels-last per-channel quantization of a depthwise convolution's
 * input (cpu_quantize_u8_cl): the scalar loop against the definition,
 * the AVX-512 one against it bit for bit (channel counts with and
 * without a vector tail, scales 1x..1000x apart, NaN and +-inf). And the
 * one-pass epilogue of a row against its passes, bit for bit.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../test_main.h"

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/rowquant.h"

#define TEST_RNG_SEED 0x2545F4914F6CDD1Dull
#include "test_rng.h"
static float frand(float lo, float hi) {
    return lo + (hi - lo) * (float)(rnd() % 100003) / 100002.0f;
}

enum { ROWS = 9, MAXK = 300 };

/* row m: kind m % 5: mixed, all positive, all negative, all zero, mixed with
 * NaN / +-inf sprinkled in */
static void fill(float *a, int64_t K) {
    for (int64_t m = 0; m < ROWS; m++)
        for (int64_t k = 0; k < K; k++) {
            float *v = &a[m * K + k];
            switch (m % 5) {
            case 0: *v = frand(-3.f, 5.f); break;
            case 1: *v = frand(0.01f, 2.f); break;
            case 2: *v = frand(-40.f, -0.5f); break;
            case 3: *v = 0.f; break;
            default:
                *v = frand(-1.f, 1.f);
                if (rnd() % 17 == 0) *v = NAN;
                if (rnd() % 23 == 0) *v = (rnd() & 1) ? INFINITY : -INFINITY;
            }
        }
}

static void check_definition(const float *a, int64_t K, int qmax, const uint8_t *q, const float *s,
                             const int32_t *z) {
    for (int64_t m = 0; m < ROWS; m++) {
        double lo = 0, hi = 0;
        for (int64_t k = 0; k < K; k++)
            if (isfinite(a[m * K + k])) lo = fmin(lo, a[m * K + k]), hi = fmax(hi, a[m * K + k]);
        double want = hi > lo ? (hi - lo) / qmax : 1.0;
        assert_true(fabs(s[m] - want) <= 1e-6 * want);
        assert_true(z[m] >= 0 && z[m] <= qmax);
        assert_true(fabs(z[m] - (-lo / s[m])) <= 0.5 + 1e-4);
        for (int64_t k = 0; k < K; k++) {
            float x = a[m * K + k];
            assert_true(q[m * K + k] <= qmax);
            if (isnan(x)) continue;
            double back = (double)s[m] * (q[m * K + k] - z[m]);
            if (isinf(x)) { /* saturates at the row's end of the range */
                assert_int_equal(q[m * K + k], x > 0 ? qmax : 0);
                continue;
            }
            if (fabs(back - x) > 0.5 * s[m] * (1 + 1e-4) + 1e-7) {
                print_error("row %lld k %lld: x %g back %g s %g z %d\n", (long long)m, (long long)k,
                            x, back, s[m], z[m]);
                fail();
            }
        }
    }
}

MOPT_TEST(test_quant_rows) {
    bool avx512 = cpu_kernels_for("avx512") != NULL;
    if (!avx512) print_message("no AVX-512 here: the scalar passes only\n");
    static float a[ROWS * MAXK];
    static uint8_t q0[ROWS * MAXK], q1[ROWS * MAXK];
    float s0[ROWS], s1[ROWS];
    int32_t z0[ROWS], z1[ROWS];
    for (int iter = 0; iter < 60; iter++) {
        int64_t K = 1 + rnd() % MAXK;
        fill(a, K);
        for (int qmax = 127; qmax <= 255; qmax += 128) {
            cpu_quant_rows_u8(a, ROWS, K, K, qmax, false, q0, s0, z0);
            check_definition(a, K, qmax, q0, s0, z0);
            if (!avx512) continue;
            cpu_quant_rows_u8(a, ROWS, K, K, qmax, true, q1, s1, z1);
            assert_memory_equal(q0, q1, (size_t)(ROWS * K));
            assert_memory_equal(s0, s1, sizeof s0);
            assert_memory_equal(z0, z1, sizeof z0);
        }
    }
}

/* quantize A per row, multiply by s8 B in integers, dequantize: against
 * the double evaluation of s_m (sum_k (q - z_m) w_kn) sw_n + bias_n, and
 * close to the float product A B (the quantization bound). */
MOPT_TEST(test_matmul_epilogue) {
    bool avx512 = cpu_kernels_for("avx512") != NULL;
    enum { M = 7, K = 77, N = 37 };
    static float a[M * K], b[K * N], sw[N], cw[N], bias[N], y0[M * N], y1[M * N];
    static int8_t w[K * N];
    static uint8_t q[M * K];
    float s[M];
    int32_t z[M];
    for (int i = 0; i < M * K; i++)
        a[i] = frand(-2.f, 3.f) * (i / K + 1);
    for (int i = 0; i < K * N; i++)
        b[i] = frand(-1.f, 1.f);
    for (int n = 0; n < N; n++) {
        double mx = 0;
        for (int k = 0; k < K; k++)
            mx = fmax(mx, fabs(b[k * N + n]));
        sw[n] = (float)(mx / 127);
        int64_t sum = 0;
        for (int k = 0; k < K; k++) {
            w[k * N + n] = (int8_t)lrintf(b[k * N + n] / sw[n]);
            sum += w[k * N + n];
        }
        cw[n] = sw[n] * (float)sum;
        bias[n] = frand(-1.f, 1.f);
    }
    cpu_quant_rows_u8(a, M, K, K, 255, false, q, s, z);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            int64_t acc = 0;
            for (int k = 0; k < K; k++)
                acc += (int64_t)q[m * K + k] * w[k * N + n];
            y0[m * N + n] = (float)acc * sw[n];
        }
    memcpy(y1, y0, sizeof y0);
    cpu_dequant_rows(y0, M, N, N, s, z, cw, bias, false);
    if (avx512) {
        cpu_dequant_rows(y1, M, N, N, s, z, cw, bias, true);
        assert_memory_equal(y0, y1, sizeof y0);
    }
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double exact = 0, f = 0, tol = 0;
            for (int k = 0; k < K; k++) {
                exact += (double)(q[m * K + k] - z[m]) * w[k * N + n];
                f += (double)a[m * K + k] * b[k * N + n];
                tol += fabs(a[m * K + k]) * sw[n] / 2 + fabs(b[k * N + n]) * s[m] / 2 +
                       s[m] * sw[n] / 4;
            }
            exact = exact * s[m] * sw[n] + bias[n];
            double got = y0[m * N + n];
            assert_true(fabs(got - exact) <= 1e-5 * (fabs(exact) + s[m] * sw[n] * K * 255));
            assert_true(fabs(got - (f + bias[n])) <= tol + 1e-4);
        }
}

/* The u8 rows block (the int8 storage plan's tensors): scales and zero
 * points round-trip through the block's tail, and its values dequantize
 * to within half a step of the rows they came from. */
MOPT_TEST(test_rows_block) {
    bool avx512 = cpu_kernels_for("avx512") != NULL;
    enum { K = 37 }; /* odd: the tail is not 4-byte aligned */
    float a[ROWS * K], back[ROWS * K], s[ROWS], s2[ROWS];
    int32_t z[ROWS], z2[ROWS];
    uint8_t blk[ROWS * (K + CPU_ROWQ_EXTRA)];
    fill(a, K);
    for (int64_t i = 0; i < ROWS * K; i++)
        if (!isfinite(a[i])) a[i] = 0.5f;
    cpu_rowq_from_f32(a, ROWS, K, avx512, blk, s, z);
    cpu_rowq_get(blk, ROWS, K, s2, z2);
    assert_memory_equal(s, s2, sizeof s);
    assert_memory_equal(z, z2, sizeof z);
    cpu_rowq_to_f32(blk, ROWS, K, back);
    for (int64_t m = 0; m < ROWS; m++)
        for (int64_t k = 0; k < K; k++)
            assert_true(fabsf(back[m * K + k] - a[m * K + k]) <= 0.5f * s[m] * (1 + 1e-5f));
}

/* The int8 epilogue's fast erf GELU: error <= 1e-6 max(1, |x|) against
 * the exact GELU in double, at every float in [-8, 8] step 1/512 and at the
 * extremes; NaN stays NaN. */
MOPT_TEST(test_gelu_fast) {
#if defined(__x86_64__)
    if (!cpu_kernels_for("avx512")) skip();
    enum { N = 16 * 512 + 7 };
    static float x[N + 5], y[N + 5];
    for (int i = 0; i < N; i++)
        x[i] = -8.f + (float)i / 512.f;
    x[N] = 1e30f, x[N + 1] = -1e30f, x[N + 2] = NAN, x[N + 3] = 3.999f, x[N + 4] = -0.f;
    memcpy(y, x, sizeof x);
    cpu_gelu_erf_fast_avx512(y, N + 5);
    double worst = 0;
    for (int i = 0; i < N + 5; i++) {
        if (isnan(x[i])) {
            assert_true(isnan(y[i]));
            continue;
        }
        double want = 0.5 * x[i] * (1.0 + erf((double)x[i] / sqrt(2.0)));
        double err = fabs(y[i] - want) / fmax(1.0, fabs((double)x[i]));
        if (err > worst) worst = err;
    }
    print_message("fast GELU: worst error / max(1, |x|) %.3g\n", worst);
    assert_true(worst <= 1e-6);
#else
    skip();
#endif
}

/* The epilogue of one row in one pass (cpu_epilogue_row_avx512) against
 * its passes one after the other (dequantization, + residual, fast GELU)
 * bit for bit, with and without bias, residual and GELU, over random
 * lengths (vector tails) and rows with NaN and infinities; its min/max
 * then quantize the row (cpu_quant_row_u8_mm) as cpu_quant_rows_u8 does. */
MOPT_TEST(test_epilogue_row_fused) {
#if defined(__x86_64__)
    if (!cpu_kernels_for("avx512")) skip();
    static float y[ROWS * MAXK], want[MAXK], got[MAXK], cw[MAXK], bias[MAXK], res[ROWS * MAXK];
    static uint8_t q0[MAXK], q1[MAXK];
    for (int iter = 0; iter < 40; iter++) {
        int64_t N = 1 + rnd() % MAXK;
        fill(y, N);
        fill(res, N);
        for (int64_t n = 0; n < N; n++)
            cw[n] = frand(-3.f, 3.f), bias[n] = frand(-1.f, 1.f);
        int flags = iter % 8; /* bias, residual, GELU */
        for (int64_t m = 0; m < ROWS; m++) {
            float s = frand(0.001f, 0.1f), zs = (float)(rnd() % 256);
            const float *b = flags & 1 ? bias : NULL, *r = flags & 2 ? res + m * N : NULL;
            memcpy(want, y + m * N, (size_t)N * sizeof(float));
            cpu_dequant_row_avx512(want, N, s, zs, cw, b);
            if (r)
                for (int64_t n = 0; n < N; n++)
                    want[n] += r[n];
            if (flags & 4) cpu_gelu_erf_fast_avx512(want, N);
            memcpy(got, y + m * N, (size_t)N * sizeof(float));
            float mn = 1.f, mx = -1.f;
            cpu_epilogue_row_avx512(got, N, s, zs, cw, b, r, flags & 4, &mn, &mx);
            assert_memory_equal(want, got, (size_t)N * sizeof(float));
            float s0, s1;
            int32_t z0, z1;
            cpu_quant_rows_u8(want, 1, N, N, 255, true, q0, &s0, &z0);
            cpu_quant_row_u8_mm(got, N, mn, mx, 255, true, q1, &s1, &z1);
            assert_memory_equal(q0, q1, (size_t)N);
            assert_memory_equal(&s0, &s1, sizeof s0);
            assert_int_equal(z0, z1);
        }
    }
#else
    skip();
#endif
}

MOPT_TEST(test_quantize_channels_last) {
    bool avx512 = cpu_kernels_for("avx512") != NULL;
    static const int64_t cs[] = {1, 7, 16, 33, 240, 480};
    enum { R = 37, CMAX = 480 };
    float *x = malloc((size_t)R * CMAX * sizeof *x), scale[CMAX];
    uint8_t *q = malloc((size_t)R * CMAX), *qv = malloc((size_t)R * CMAX + 16);
    assert_non_null(x);
    assert_non_null(q);
    assert_non_null(qv);
    for (size_t t = 0; t < sizeof cs / sizeof cs[0]; t++) {
        int64_t C = cs[t];
        for (int64_t c = 0; c < C; c++)
            scale[c] = 0.001f * powf(1000.f, (float)c / (float)(C > 1 ? C - 1 : 1));
        for (int64_t i = 0; i < R * C; i++) {
            float s = scale[i % C];
            x[i] = frand(-140.f, 140.f) * s;
            if (i % 97 == 5) x[i] = NAN;
            if (i % 89 == 3) x[i] = i % 2 ? INFINITY : -INFINITY;
            if (i % 13 == 0) x[i] = (float)(int)(x[i] / s) * s + 0.5f * s; /* halfway cases */
        }
        float zp = (float)(t * 37 % 256);
        cpu_quantize_u8_cl(x, R, C, scale, zp, false, q);
        for (int64_t i = 0; i < R * C; i++) {
            float v = nearbyintf(x[i] / scale[i % C]) + zp;
            uint8_t want = (uint8_t)(v != v ? 0.f : fminf(fmaxf(v, 0.f), 255.f));
            if (q[i] != want)
                fail_msg("C %lld: q[%lld] %u, want %u", (long long)C, (long long)i, q[i], want);
        }
        if (avx512) {
            memset(qv, 0xAB, (size_t)R * CMAX + 16);
            cpu_quantize_u8_cl(x, R, C, scale, zp, true, qv);
            assert_memory_equal(q, qv, (size_t)(R * C));
            assert_int_equal(qv[R * C], 0xAB); /* nothing written past the end */
        }
    }
    free(x);
    free(q);
    free(qv);
}

MOPT_TEST_MAIN(cmocka_unit_test(test_quant_rows), cmocka_unit_test(test_matmul_epilogue),
               cmocka_unit_test(test_rows_block), cmocka_unit_test(test_gelu_fast),
               cmocka_unit_test(test_quantize_channels_last),
               cmocka_unit_test(test_epilogue_row_fused))
