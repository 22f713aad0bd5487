/*
 * test_run.h — one run of a loaded model through the public API, for the
 * tests that use <mopt/mopt.h> only: test_run_once(m, o, in, &out) makes a
 * session of its own (options o, NULL: the defaults; its creation failing
 * fails the test), runs the one input `in` for the model's first output and
 * destroys the session. It returns the run's status; on MOPT_OK *out holds
 * the output (the caller destroys it), else NULL. Include after <cmocka.h>
 * and <mopt/mopt.h>.
 */
#ifndef MOPT_TESTS_TEST_RUN_H
#define MOPT_TESTS_TEST_RUN_H

static inline mopt_status test_run_once(const mopt_model *m, const mopt_options *o,
                                        const mopt_tensor *in, mopt_tensor **out) {
    mopt_session *s = NULL;
    *out = NULL;
    assert_int_equal(mopt_session_create(m, o, &s), MOPT_OK);
    mopt_status st = mopt_session_run(s, 1, NULL, &in, 1, NULL, out);
    mopt_session_destroy(s);
    return st;
}

#endif
