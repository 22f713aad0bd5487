/*
 * test_dynquant.c — DynamicQuantizeLinear's AVX-512 passes
 * (kernels/cpu/dynquant.h) through ops_dyn_quant_run against the same run
 * with the reference's scalar loops, bit for bit: random lengths (vector
 * tails), ranges (all positive, all negative, mixed, tiny, huge), values
 * exactly half-way between quanta, NaN, +-inf, -0. Skipped (and says so)
 * on machines without AVX-512.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/alloc.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/dynquant.h"
#include "ops/impls.h"

#include "../test_main.h"
#include "test_rng.h"
static float frand(float lo, float hi) {
    return lo + (hi - lo) * (float)(rnd() % 100003) / 100002.0f;
}

typedef struct dq_out {
    uint8_t *y;
    float scale;
    uint8_t zp;
} dq_out;

static void run(float *x, int64_t n, bool fast, dq_out *o) {
    op_tensor in = {.dtype = MOPT_DTYPE_F32, .data = x};
    in.shape.rank = 1, in.shape.dims[0] = n;
    op_tensor out[3] = {{.dtype = MOPT_DTYPE_U8, .data = o->y},
                        {.dtype = MOPT_DTYPE_F32, .data = &o->scale},
                        {.dtype = MOPT_DTYPE_U8, .data = &o->zp}};
    out[0].shape = in.shape;
#if defined(__x86_64__)
    mopt_status st =
        ops_dyn_quant_run(NULL, &in, 1, out, 3, fast ? cpu_dyn_minmax_f32_avx512 : NULL,
                          fast ? cpu_dyn_quantize_u8_avx512 : NULL);
#else
    (void)fast;
    mopt_status st = ops_dyn_quant_run(NULL, &in, 1, out, 3, NULL, NULL);
#endif
    assert_int_equal(st, MOPT_OK);
}

MOPT_TEST(test_random_bitwise) {
    if (!cpu_kernels_for("avx512")) {
        printf("no AVX-512 on this machine: nothing to compare\n");
        skip();
    }
    int checked = 0;
    for (int it = 0; it < 2000; it++) {
        const int64_t n = it < 100 ? it : 1 + (int64_t)(rnd() % 3000);
        float *x = mopt_malloc((size_t)n * 4 + 4);
        uint8_t *ya = mopt_malloc((size_t)n + 1), *yb = mopt_malloc((size_t)n + 1);
        assert_true(x && ya && yb);
        const int kind = it % 7;
        const float lo = kind == 0 ? 0.0f : kind == 1 ? -5.0f : kind == 4 ? -1e-30f : -3.0f;
        const float hi = kind == 1 ? -0.5f : kind == 4 ? 1e-30f : kind == 5 ? 3e38f : 7.0f;
        for (int64_t i = 0; i < n; i++)
            x[i] = frand(lo, hi);
        if (kind == 3 && n > 4) {
            /* values on the half-way points of the quantization grid */
            float s = (7.0f - -3.0f) / 255.0f;
            for (int64_t i = 0; i < n; i += 3)
                x[i] = s * ((float)(rnd() % 200) + 0.5f) - 3.0f;
        }
        if (kind == 6 && n > 3) {
            x[rnd() % n] = NAN, x[rnd() % n] = -0.0f;
            if (it % 2) x[rnd() % n] = INFINITY;
        }
        dq_out a = {.y = ya}, b = {.y = yb};
        run(x, n, false, &a);
        run(x, n, true, &b);
        if (memcmp(&a.scale, &b.scale, 4) != 0 || a.zp != b.zp ||
            (n && memcmp(ya, yb, (size_t)n) != 0))
            fail_msg("case %d (n %lld, kind %d) differs from the reference", it, (long long)n,
                     kind);
        checked++;
        mopt_free(x), mopt_free(ya), mopt_free(yb);
    }
    assert_int_equal(checked, 2000);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_random_bitwise)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
