/*
 * test_oom.h — allocation-failure sweeps for cmocka tests: run one step with
 * the n-th allocation failing (core/alloc.h's mopt_alloc_fail_after), for
 * n = 0, 1, ... until the step succeeds. Include after <cmocka.h>.
 */
#ifndef MOPT_TESTS_TEST_OOM_H
#define MOPT_TESTS_TEST_OOM_H

#include <stdint.h>

#include "core/alloc.h"
#include <mopt/mopt.h>

/* One attempt: frees what it made when it succeeds, and asserts that it left
 * nothing behind when it fails. */
typedef mopt_status (*oom_step)(void *ctx);

/* Runs step(ctx) with allocation n failing for n = 0 .. max_n - 1 and stops at
 * the first success; every failure must be MOPT_ERR_OUT_OF_MEMORY. Returns
 * the number of failures. */
static inline int oom_sweep(oom_step step, void *ctx, int64_t max_n) {
    int failures = 0;
    for (int64_t n = 0; n < max_n; n++) {
        mopt_alloc_fail_after(n);
        mopt_status st = step(ctx);
        mopt_alloc_fail_after(-1);
        if (st == MOPT_OK) break;
        assert_int_equal(st, MOPT_ERR_OUT_OF_MEMORY);
        failures++;
    }
    return failures;
}

#endif
