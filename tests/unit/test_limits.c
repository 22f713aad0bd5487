/*
 * test_limits.c — kernels/limits.h, the sizes the external backends are
 * trusted with (issue 17): the boundaries of each rule, values near 2^31,
 * 2^32 and 2^63 (never an overflow: UBSan builds make that strict), and the
 * oneDNN descriptor check that guards dnnl_primitive_desc_create.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/limits.h"
#include "mopt_config.h"
#ifdef MOPT_HAVE_ONEDNN
#include <dnnl.h>

#include "../test_main.h"
#include "kernels/onednn/onednn.h"
#endif

#define P31 ((int64_t)1 << 31)

MOPT_TEST(limits_tensor_boundaries) {
    char why[160];
    int64_t ok[2] = {P31 - 1, 1}, big[2] = {P31, 1}, prod[2] = {65536, 65536};
    assert_true(kn_limits_tensor(2, ok, NULL, why, sizeof why));
    assert_false(kn_limits_tensor(2, big, NULL, why, sizeof why));
    assert_non_null(strstr(why, "2^31"));
    assert_false(kn_limits_tensor(2, prod, NULL, why, sizeof why));
    int64_t huge[3] = {INT64_MAX, INT64_MAX, 2}, zero[2] = {0, 4};
    assert_false(kn_limits_tensor(3, huge, NULL, why, sizeof why));
    assert_false(kn_limits_tensor(2, zero, NULL, NULL, 0));
    /* offsets: 4 x 4 elements whose row stride reaches 2^31 */
    int64_t dims[2] = {4, 4}, dense[2] = {4, 1}, wide[2] = {P31 / 2, 1}, neg[2] = {-4, 1};
    assert_true(kn_limits_tensor(2, dims, dense, why, sizeof why));
    assert_false(kn_limits_tensor(2, dims, wide, why, sizeof why));
    assert_false(kn_limits_tensor(2, dims, neg, why, sizeof why));
}

MOPT_TEST(limits_window_boundaries) {
    char why[160];
    int64_t in[1] = {8}, k[1] = {3}, s1[1] = {1}, d1[1] = {1}, p0[1] = {0};
    assert_true(kn_limits_window(1, in, k, s1, d1, p0, p0, why, sizeof why));
    int64_t pmax[1] = {8 + 3}, pover[1] = {8 + 3 + 1}, p1e9[1] = {1000000000};
    assert_true(kn_limits_window(1, in, k, s1, d1, pmax, pmax, why, sizeof why));
    assert_false(kn_limits_window(1, in, k, s1, d1, p0, pover, why, sizeof why));
    assert_false(kn_limits_window(1, in, k, s1, d1, p1e9, p1e9, why, sizeof why));
    assert_non_null(strstr(why, "pads"));
    int64_t sbig[1] = {P31}, d30[1] = {(int64_t)1 << 30}, dmax[1] = {INT64_MAX};
    assert_false(kn_limits_window(1, in, k, sbig, d1, p0, p0, why, sizeof why));
    /* extent (3 - 1) * 2^30 + 1 = 2^31 + 1 */
    assert_false(kn_limits_window(1, in, k, s1, d30, p0, p0, why, sizeof why));
    assert_false(kn_limits_window(1, in, k, s1, dmax, p0, p0, why, sizeof why));
    int64_t kmax[1] = {INT64_MAX};
    assert_false(kn_limits_window(1, in, kmax, s1, d1, p0, p0, why, sizeof why));
}

#ifdef MOPT_HAVE_ONEDNN
/* The op descriptor check in front of dnnl_primitive_desc_create: pads of
 * 1e9 on an 8x8 input (the SIGFPE of issue 17) and a 2^32-element source are
 * refused, an ordinary convolution passes. */
MOPT_TEST(limits_onednn_desc) {
    if (!onednn_available()) skip();
    dnnl_memory_desc_t x, w, y;
    dnnl_dims_t xd = {1, 1, 8, 8}, wd = {1, 1, 3, 3}, yd = {1, 1, 6, 6};
    assert_int_equal(dnnl_memory_desc_init_by_tag(&x, 4, xd, dnnl_f32, dnnl_nchw), dnnl_success);
    assert_int_equal(dnnl_memory_desc_init_by_tag(&w, 4, wd, dnnl_f32, dnnl_oihw), dnnl_success);
    assert_int_equal(dnnl_memory_desc_init_by_tag(&y, 4, yd, dnnl_f32, dnnl_nchw), dnnl_success);
    dnnl_dims_t st = {1, 1}, dil = {0, 0}, p0 = {0, 0};
    dnnl_convolution_desc_t cd;
    assert_int_equal(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                                dnnl_convolution_direct, &x, &w,
                                                                NULL, &y, st, dil, p0, p0),
                     dnnl_success);
    char why[256];
    assert_true(onednn_desc_fits(&cd, why, sizeof why));
    cd.padding[0][0] = cd.padding[0][1] = cd.padding[1][0] = cd.padding[1][1] = 1000000000;
    assert_false(onednn_desc_fits(&cd, why, sizeof why));
    assert_non_null(strstr(why, "window"));
    cd.padding[0][0] = cd.padding[0][1] = cd.padding[1][0] = cd.padding[1][1] = 0;
    cd.src_desc.dims[2] = cd.src_desc.dims[3] = 65536;
    assert_false(onednn_desc_fits(&cd, why, sizeof why));
    assert_non_null(strstr(why, "source"));
}
#endif

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(limits_tensor_boundaries),
        cmocka_unit_test(limits_window_boundaries),
#ifdef MOPT_HAVE_ONEDNN
        cmocka_unit_test(limits_onednn_desc),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
