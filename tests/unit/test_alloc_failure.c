/*
 * test_alloc_failure.c — SQLite-style allocation-failure injection: loads a
 * model, creates a session and runs it while the N-th allocation fails, for
 * every N until the whole sequence succeeds. Every failure must come back
 * as MOPT_ERR_OUT_OF_MEMORY with a message — never a crash, and (under ASan)
 * never a leak.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../test_main.h"

#include "core/alloc.h"
#include <mopt/mopt.h>

#define MODEL "tests/models/cnn/model.onnx"
#define INPUT "tests/models/cnn/test_data_set_0/input_0.npy"

/* One attempt; returns the status of the first failing step. */
static mopt_status attempt(const mopt_tensor *in) {
    mopt_model *m = NULL;
    mopt_session *s = NULL;
    mopt_tensor *out = NULL;
    mopt_status st = mopt_model_load(MODEL, NULL, &m);
    if (st == MOPT_OK) st = mopt_session_create(m, NULL, &s);
    if (st == MOPT_OK) st = mopt_session_run(s, 1, NULL, &in, 1, NULL, &out);
    mopt_tensor_destroy(out);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
    return st;
}

MOPT_TEST(alloc_failure_every_step) {
    mopt_tensor *in = NULL;
    assert_int_equal(mopt_tensor_load(INPUT, &in), MOPT_OK);
    int failures = 0, n = 0;
    for (; n < 200000; n += (n < 2000 ? 1 : 13)) {
        mopt_alloc_fail_after(n);
        mopt_status st = attempt(in);
        mopt_alloc_fail_after(-1);
        if (st == MOPT_OK) break;
        if (st != MOPT_ERR_OUT_OF_MEMORY)
            fail_msg("allocation %d failing gave status '%s' (%s), not out of memory", n,
                     mopt_status_string(st), mopt_last_error());
        assert_true(strlen(mopt_last_error()) > 0);
        failures++;
    }
    printf("[ INFO     ] %d injected failures handled; the run needs %d allocations\n", failures,
           n);
    assert_true(failures > 10);
    assert_int_equal(attempt(in), MOPT_OK);
    mopt_tensor_destroy(in);
}

MOPT_TEST_MAIN(cmocka_unit_test(alloc_failure_every_step))
