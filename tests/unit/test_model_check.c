/*
 * test_model_check.c — mopt_model_check reports every problem node of a
 * model at once (unsupported operators and failing inference alike), and
 * says OK for a model that loads.
 */
#define MOPT_EXPERIMENTAL_API /* profiling, stats, pass report, model check */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <mopt/mopt.h>

#include "../test_check.h"
#include "../test_main.h"

MOPT_TEST(check_lists_every_problem) {
    test_check_seen s = {0};
    size_t n = 0;
    mopt_status st = mopt_model_check("tests/unit/data/check_three_problems.onnx", NULL,
                                      test_check_record, &s, &n);
    assert_int_equal(n, 3);
    assert_int_equal(s.n, 3);
    assert_true(test_check_find(&s, NULL, "test.unsupported.OtherOp") >= 0 &&
                s.status[test_check_find(&s, NULL, "test.unsupported.OtherOp")] ==
                    MOPT_ERR_UNSUPPORTED);
    assert_true(test_check_find(&s, NULL, "test.unsupported.NoSuchOp") >= 0 &&
                s.status[test_check_find(&s, NULL, "test.unsupported.NoSuchOp")] ==
                    MOPT_ERR_UNSUPPORTED);
    assert_true(test_check_find(&s, NULL, "Add") >= 0 &&
                s.status[test_check_find(&s, NULL, "Add")] == MOPT_ERR_TYPE);
    assert_int_equal(test_check_find(&s, NULL, "Relu"), -1);
    /* a problem other than unsupported functionality decides the status */
    assert_int_equal(st, MOPT_ERR_TYPE);
    assert_non_null(strstr(mopt_last_error(), "3 nodes"));
    /* loading stops at the unsupported operators, naming both */
    mopt_model *m = NULL;
    assert_int_equal(mopt_model_load("tests/unit/data/check_three_problems.onnx", NULL, &m),
                     MOPT_ERR_UNSUPPORTED);
    assert_non_null(strstr(mopt_last_error(), "OtherOp"));
    assert_non_null(strstr(mopt_last_error(), "NoSuchOp"));
}

MOPT_TEST(check_accepts_good_models) {
    size_t n = 99;
    assert_int_equal(mopt_model_check("tests/models/gpt/model.onnx", NULL, NULL, NULL, &n),
                     MOPT_OK);
    assert_int_equal(n, 0);
}

MOPT_TEST(check_reports_file_errors) {
    size_t n = 99;
    assert_int_equal(mopt_model_check("tests/unit/data/no-such-model.onnx", NULL, NULL, NULL, &n),
                     MOPT_ERR_IO);
    assert_int_equal(n, 0);
    assert_int_equal(mopt_model_check(NULL, NULL, NULL, NULL, NULL), MOPT_ERR_INVALID_ARGUMENT);
}

MOPT_TEST_MAIN(cmocka_unit_test(check_lists_every_problem),
               cmocka_unit_test(check_accepts_good_models),
               cmocka_unit_test(check_reports_file_errors))
