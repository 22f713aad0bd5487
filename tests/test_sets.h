/*
 * test_sets.h — the tensors of a case folder's data set, for the cmocka
 * runners that use <mopt/mopt.h> (tests/case_runner.c, tests/passes):
 * loading DIR/input_K.npy (or output_K) for K = 0, 1, ... and comparing an
 * f32 output with its reference element by element. Include after <cmocka.h>
 * and <mopt/mopt.h>.
 */
#ifndef MOPT_TESTS_TEST_SETS_H
#define MOPT_TESTS_TEST_SETS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "test_paths.h"

/* Loads DIR/PREFIX_0.npy, PREFIX_1.npy, ... into out until one is missing,
 * at most max; with pb, DIR/PREFIX_K.pb stands in for a missing .npy. A file
 * that cannot be read fails the test. Returns the count. */
static inline int test_load_set(const char *dir, const char *prefix, int pb, mopt_tensor **out,
                                int max) {
    int n = 0;
    for (; n < max; n++) {
        char p[1200];
        snprintf(p, sizeof p, "%s/%s_%d.npy", dir, prefix, n);
        if (pb && !file_exists(p)) snprintf(p, sizeof p, "%s/%s_%d.pb", dir, prefix, n);
        if (!file_exists(p)) break;
        out[n] = NULL;
        if (mopt_tensor_load(p, &out[n]) != MOPT_OK)
            fail_msg("cannot read %s: %s", p, mopt_last_error());
    }
    return n;
}

/* Asserts that got is f32 and of want's shape; then the index of the first
 * element of got farther than tol + tol * |w| from w, want's (f32) element,
 * or -1 when there is none. */
static inline int64_t test_f32_mismatch(const mopt_tensor *got, const mopt_tensor *want,
                                        double tol) {
    assert_int_equal(mopt_tensor_dtype(got), MOPT_DTYPE_F32);
    assert_int_equal(mopt_tensor_rank(got), mopt_tensor_rank(want));
    for (int i = 0; i < mopt_tensor_rank(got); i++)
        assert_int_equal(mopt_tensor_dim(got, i), mopt_tensor_dim(want, i));
    const float *g = mopt_tensor_data_const(got), *w = mopt_tensor_data_const(want);
    int64_t n = mopt_tensor_element_count(want);
    for (int64_t i = 0; i < n; i++) {
        double err = fabs((double)g[i] - (double)w[i]);
        if (!(err <= tol + tol * fabs((double)w[i]))) return i;
    }
    return -1;
}

#endif
