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

#include "../test_main.h"
#include <mopt/mopt.h>

typedef struct seen {
    int n;
    char ops[8][64];
    mopt_status status[8];
} seen;

static void record(void *user, const char *node, const char *op, mopt_status st, const char *msg) {
    seen *s = user;
    (void)node;
    assert_non_null(msg);
    assert_true(strlen(msg) > 0);
    if (s->n < 8) {
        snprintf(s->ops[s->n], sizeof s->ops[0], "%s", op);
        s->status[s->n] = st;
    }
    s->n++;
}

static int find(const seen *s, const char *op) {
    for (int i = 0; i < s->n && i < 8; i++)
        if (strcmp(s->ops[i], op) == 0) return i;
    return -1;
}

static void check_lists_every_problem(void **state) {
    (void)state;
    seen s = {0};
    size_t n = 0;
    mopt_status st =
        mopt_model_check("tests/unit/data/check_three_problems.onnx", NULL, record, &s, &n);
    assert_int_equal(n, 3);
    assert_int_equal(s.n, 3);
    assert_true(find(&s, "test.unsupported.OtherOp") >= 0 &&
                s.status[find(&s, "test.unsupported.OtherOp")] == MOPT_ERR_UNSUPPORTED);
    assert_true(find(&s, "test.unsupported.NoSuchOp") >= 0 &&
                s.status[find(&s, "test.unsupported.NoSuchOp")] == MOPT_ERR_UNSUPPORTED);
    assert_true(find(&s, "Add") >= 0 && s.status[find(&s, "Add")] == MOPT_ERR_TYPE);
    assert_int_equal(find(&s, "Relu"), -1);
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

static void check_accepts_good_models(void **state) {
    (void)state;
    size_t n = 99;
    assert_int_equal(mopt_model_check("tests/models/gpt/model.onnx", NULL, NULL, NULL, &n),
                     MOPT_OK);
    assert_int_equal(n, 0);
}

static void check_reports_file_errors(void **state) {
    (void)state;
    size_t n = 99;
    assert_int_equal(mopt_model_check("tests/unit/data/no-such-model.onnx", NULL, NULL, NULL, &n),
                     MOPT_ERR_IO);
    assert_int_equal(n, 0);
    assert_int_equal(mopt_model_check(NULL, NULL, NULL, NULL, NULL), MOPT_ERR_INVALID_ARGUMENT);
}

MOPT_TEST_MAIN(cmocka_unit_test(check_lists_every_problem),
               cmocka_unit_test(check_accepts_good_models),
               cmocka_unit_test(check_reports_file_errors))
