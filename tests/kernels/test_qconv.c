/*
 * test_qconv.c — kernels/cpu/qconv.h (the integer convolution of
 * ConvInteger/QLinearConv: im2col + int8 GEMM) against ref_conv_s32,
 * bit for bit: 300 random geometries (1-3 spatial axes, groups, strides,
 * dilations, asymmetric pads, sizes around the 12-channel / 32-pixel /
 * 192-pixel blocks), every mix of int8/uint8 data and weights, scalar and
 * per-channel weight zero points, bias, 1 and 3 threads (3: with x packed
 * beforehand by cpu_qconv_pack_x); extreme values
 * whose int32 sums wrap. The portable GEMM always, the VNNI one when
 * cpu_get() reports it (MOPT_ISA caps it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/alloc.h"
#include "core/cpu.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/qconv.h"
#include "kernels/ref/ref_conv_quant.h"

#define TEST_RNG_SEED 0x9E3779B97F4A7C15ull
#include "test_rng.h"

typedef struct gemm_case {
    const char *name;
    cpu_qgemm_fn fn;
} gemm_case;

static int gemms(gemm_case *g) {
    int n = 0;
    g[n++] = (gemm_case){"portable", cpu_qgemm_u8s8_portable};
#if defined(__x86_64__)
    if (cpu_kernels_for("avx512") && cpu_get()->avx512_vnni)
        g[n++] = (gemm_case){"vnni", cpu_qgemm_u8s8_vnni};
#endif
    return n;
}

/* Runs p with args a through every GEMM and thread count, against the reference. */
static void check(const ref_conv_params *p, const ref_qconv_args *a, int *runs) {
    int64_t out_plane = p->out[0] * p->out[1] * p->out[2];
    size_t ny = (size_t)(p->batch * p->c_out * out_plane);
    int32_t *want = mopt_malloc(ny * 4 + 4), *got = mopt_malloc(ny * 4 + 4);
    int32_t *work = mopt_malloc((size_t)ref_conv_s32_work(p) * 4 + 4);
    assert_non_null(want);
    assert_non_null(got);
    assert_non_null(work);
    ref_conv_s32(p, a, want, work);
    gemm_case gc[2];
    int ng = gemms(gc);
    for (int i = 0; i < ng; i++) {
        for (int threads = 1; threads <= 3; threads += 2) {
            void *w = mopt_aligned_alloc(cpu_qconv_work_bytes(p, threads));
            assert_non_null(w);
            memset(got, 0x5A, ny * 4);
            void *xpack = NULL;
            if (threads == 3) { /* x packed beforehand (MatMulInteger's constant B) */
                xpack = mopt_aligned_alloc(cpu_qconv_xpack_bytes(p) + 1);
                assert_non_null(xpack);
                cpu_qconv_pack_x(p, a, xpack);
            }
            cpu_qconv_s32_packed(p, a, xpack, gc[i].fn, threads, w, got);
            mopt_aligned_free(xpack);
            mopt_aligned_free(w);
            for (size_t k = 0; k < ny; k++)
                if (got[k] != want[k]) {
                    fprintf(stderr,
                            "%s, %d threads: y[%zu] = %d, reference %d (n %lld c_in %lld c_out "
                            "%lld group %lld in %lldx%lldx%lld k %lldx%lldx%lld)\n",
                            gc[i].name, threads, k, got[k], want[k], (long long)p->batch,
                            (long long)p->c_in, (long long)p->c_out, (long long)p->group,
                            (long long)p->in[0], (long long)p->in[1], (long long)p->in[2],
                            (long long)p->k[0], (long long)p->k[1], (long long)p->k[2]);
                    fail();
                }
            (*runs)++;
        }
    }
    mopt_free(want);
    mopt_free(got);
    mopt_free(work);
}

/* Output size of one axis, or 0 when no window fits. */
static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe) {
    int64_t span = d * (k - 1) + 1, n = in + pb + pe - span;
    return n < 0 ? 0 : n / s + 1;
}

static void random_geometries(void **unused) {
    (void)unused;
    int runs = 0;
    for (int it = 0; it < 300; it++) {
        ref_conv_params p;
        memset(&p, 0, sizeof p);
        int nd = (int)pick(1, 3);
        p.batch = pick(1, 2);
        p.group = rnd() % 4 == 0 ? pick(2, 5) : 1;
        p.c_in = p.group * pick(1, 9);
        p.c_out = p.group * pick(1, 30);
        bool ok = true;
        for (int a = 0; a < REF_WIN_MAX; a++) {
            if (a < REF_WIN_MAX - nd) {
                p.in[a] = p.out[a] = p.k[a] = p.stride[a] = p.dilation[a] = 1;
                continue;
            }
            p.in[a] = nd == 1 ? pick(1, 500) : nd == 2 ? pick(1, 40) : pick(1, 9);
            p.k[a] = pick(1, 4);
            p.stride[a] = pick(1, 3);
            p.dilation[a] = pick(1, 2);
            p.pad[a] = pick(0, 2);
            int64_t pe = pick(0, 2);
            p.out[a] = out_size(p.in[a], p.k[a], p.stride[a], p.dilation[a], p.pad[a], pe);
            if (p.out[a] <= 0) ok = false;
        }
        if (!ok) continue;
        int64_t in_plane = p.in[0] * p.in[1] * p.in[2];
        int64_t nx = p.batch * p.c_in * in_plane;
        int64_t nw = p.c_out * (p.c_in / p.group) * p.k[0] * p.k[1] * p.k[2];
        uint8_t *x = mopt_malloc((size_t)nx), *w = mopt_malloc((size_t)nw);
        int32_t *wzp = mopt_malloc((size_t)p.c_out * 4), *bias = mopt_malloc((size_t)p.c_out * 4);
        assert_true(x && w && wzp && bias);
        for (int64_t i = 0; i < nx; i++)
            x[i] = (uint8_t)rnd();
        for (int64_t i = 0; i < nw; i++)
            w[i] = (uint8_t)rnd();
        ref_qconv_args a = {.x = x, .x_s8 = rnd() & 1, .w = w, .w_s8 = rnd() & 1};
        a.x_zp = a.x_s8 ? (int32_t)pick(-128, 127) : (int32_t)pick(0, 255);
        a.w_zp_per_channel = rnd() & 1;
        for (int64_t m = 0; m < p.c_out; m++) {
            wzp[m] = a.w_s8 ? (int32_t)pick(-128, 127) : (int32_t)pick(0, 255);
            bias[m] = (int32_t)rnd();
        }
        a.w_zp = wzp;
        a.bias = rnd() & 1 ? bias : NULL;
        check(&p, &a, &runs);
        mopt_free(x);
        mopt_free(w);
        mopt_free(wzp);
        mopt_free(bias);
    }
    printf("qconv: %d runs bit-identical to ref_conv_s32\n", runs);
    assert_true(runs > 300);
}

/* Extremes: every product at +-255*255 (or 128*255 for s8), sums far past
 * 2^31 that wrap; the reference and the GEMM must wrap identically. */
static void extreme_values_wrap(void **unused) {
    (void)unused;
    int runs = 0;
    ref_conv_params p = {.batch = 1, .c_in = 2000, .c_out = 13, .group = 1};
    for (int a = 0; a < REF_WIN_MAX; a++) {
        p.in[a] = a == 0 ? 1 : 5;
        p.k[a] = a == 0 ? 1 : 3;
        p.out[a] = a == 0 ? 1 : 5;
        p.stride[a] = p.dilation[a] = 1;
        p.pad[a] = a == 0 ? 0 : 1;
    }
    int64_t nx = p.c_in * 25, nw = p.c_out * p.c_in * 9;
    uint8_t *x = mopt_malloc((size_t)nx), *w = mopt_malloc((size_t)nw);
    int32_t wzp[13];
    assert_true(x && w);
    for (int s = 0; s < 4; s++) {
        bool xs8 = s & 1, ws8 = s & 2;
        memset(x, xs8 ? 0x80 : 0xFF, (size_t)nx); /* -128 or 255 */
        memset(w, ws8 ? 0x7F : 0x00, (size_t)nw); /* 127 or 0 */
        for (int m = 0; m < 13; m++)
            wzp[m] = ws8 ? -128 + m : 255 - m;
        ref_qconv_args a = {.x = x,
                            .x_s8 = xs8,
                            .x_zp = xs8 ? 127 : 0,
                            .w = w,
                            .w_s8 = ws8,
                            .w_zp = wzp,
                            .w_zp_per_channel = true};
        check(&p, &a, &runs);
    }
    mopt_free(x);
    mopt_free(w);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(random_geometries),
                                       cmocka_unit_test(extreme_values_wrap)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
