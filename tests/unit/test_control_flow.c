/*
 * test_control_flow.c — control flow through the public API: an If with a
 * constant condition is folded into its branch by the pass `fold_if` (pass
 * report, node list, same outputs as the unfolded model at opt_level 0);
 * problems inside subgraphs are named by their path in mopt_model_check
 * and in load errors; the option inspect_only loads a model that cannot
 * run, for queries only. Models: tests/unit/gen_control_models.py. (Results of
 * If/Loop/Scan against numpy and ORT: tests/ops/data/control.)
 */
#define MOPT_EXPERIMENTAL_API /* the pass report and model check */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <mopt/mopt.h>

#include "../test_check.h"
#include "../test_main.h"

#define IF_CONST "tests/unit/data/control_if_const.onnx"
#define CHECK_NESTED "tests/unit/data/control_check_nested.onnx"
#define LOOP_SHAPE_ERROR "tests/unit/data/control_loop_shape_error.onnx"

static mopt_model *load_at(const char *path, int opt_level) {
    mopt_options *o = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "opt_level", opt_level), MOPT_OK);
    mopt_model *m = NULL;
    mopt_status st = mopt_model_load(path, o, &m);
    if (st) fprintf(stderr, "load: %s\n", mopt_last_error());
    assert_int_equal(st, MOPT_OK);
    mopt_options_destroy(o);
    return m;
}

static bool has_op(const mopt_model *m, const char *op) {
    for (size_t i = 0; i < mopt_model_node_count(m); i++)
        if (strcmp(mopt_model_node_op_type(m, i), op) == 0) return true;
    return false;
}

/* Runs the one-input, one-output model on x[4]. */
static void run4(const mopt_model *m, const float *x, float *y) {
    mopt_session *s = NULL;
    assert_int_equal(mopt_session_create(m, NULL, &s), MOPT_OK);
    int64_t dims[1] = {4};
    mopt_tensor *in = NULL, *out = NULL;
    assert_int_equal(mopt_tensor_wrap(MOPT_DTYPE_F32, 1, dims, (void *)x, 4 * sizeof *x, &in),
                     MOPT_OK);
    const mopt_tensor *ins[1] = {in};
    assert_int_equal(mopt_session_run(s, 1, NULL, ins, 1, NULL, &out), MOPT_OK);
    assert_int_equal(mopt_tensor_element_count(out), 4);
    memcpy(y, mopt_tensor_data(out), 4 * sizeof *y);
    mopt_tensor_destroy(out);
    mopt_tensor_destroy(in);
    mopt_session_destroy(s);
}

MOPT_TEST(if_with_constant_condition_is_folded) {
    const float x[4] = {0.25f, -3.0f, 7.5f, 1.0f};
    float folded[4], unfolded[4];
    mopt_model *m0 = load_at(IF_CONST, 0);
    assert_true(has_op(m0, "If")); /* opt_level 0: no pass, the If runs */
    run4(m0, x, unfolded);
    mopt_model_destroy(m0);

    mopt_model *m1 = load_at(IF_CONST, 1);
    assert_false(has_op(m1, "If"));
    assert_true(has_op(m1, "Add")); /* then_branch's node, now in the main graph */
    assert_false(has_op(m1, "Sub"));
    const char *rep = mopt_model_pass_report(m1);
    const char *line = strstr(rep, "fold_if");
    assert_non_null(line);
    assert_non_null(strstr(line, "1 If to then_branch"));
    run4(m1, x, folded);
    mopt_model_destroy(m1);
    for (int i = 0; i < 4; i++) {
        assert_true(folded[i] == x[i] + 1.5f); /* then_branch: x + k, k = 1.5 */
        assert_true(folded[i] == unfolded[i]);
    }
}

MOPT_TEST(check_names_nested_problems_by_path) {
    test_check_seen s = {0};
    size_t n = 0;
    mopt_status st = mopt_model_check(CHECK_NESTED, NULL, test_check_record, &s, &n);
    assert_int_equal(st, MOPT_ERR_UNSUPPORTED);
    assert_int_equal(n, 2);
    assert_int_equal(s.n, 2);
    int a = test_check_find(&s, "If_32/then_branch/LSTM_7", NULL);
    int b = test_check_find(&s, "Loop_1/body/If_2/else_branch/Bad_3", NULL);
    assert_true(a >= 0 && b >= 0);
    assert_string_equal(s.ops[a], "test.unsupported.NoSuchOp");
    assert_string_equal(s.ops[b], "test.unsupported.AlsoMissing");
    assert_int_equal(s.status[a], MOPT_ERR_UNSUPPORTED);
    /* loading names them the same way, all at once */
    mopt_model *m = NULL;
    assert_int_equal(mopt_model_load(CHECK_NESTED, NULL, &m), MOPT_ERR_UNSUPPORTED);
    assert_null(m);
    assert_non_null(strstr(mopt_last_error(), "'If_32/then_branch/LSTM_7'"));
    assert_non_null(strstr(mopt_last_error(), "'Loop_1/body/If_2/else_branch/Bad_3'"));
}

MOPT_TEST(body_error_is_the_loops_with_its_path) {
    test_check_seen s = {0};
    size_t n = 0;
    assert_int_equal(mopt_model_check(LOOP_SHAPE_ERROR, NULL, test_check_record, &s, &n),
                     MOPT_ERR_SHAPE);
    assert_int_equal(n, 1);
    assert_string_equal(s.nodes[0], "Loop_9");
    assert_int_equal(s.status[0], MOPT_ERR_SHAPE);
    mopt_model *m = NULL;
    assert_int_equal(mopt_model_load(LOOP_SHAPE_ERROR, NULL, &m), MOPT_ERR_SHAPE);
    assert_non_null(strstr(mopt_last_error(), "Loop_9/body"));
    assert_non_null(strstr(mopt_last_error(), "Add_5"));
}

MOPT_TEST(inspect_only_loads_a_model_that_cannot_run) {
    mopt_options *o = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "inspect_only", 1), MOPT_OK);
    mopt_model *m = NULL;
    assert_int_equal(mopt_model_load(CHECK_NESTED, o, &m), MOPT_OK);
    assert_int_equal(mopt_model_io_count(m, MOPT_INPUT), 3);
    assert_int_equal(mopt_model_io_count(m, MOPT_OUTPUT), 2);
    assert_int_equal(mopt_model_node_count(m), 2);
    assert_true(has_op(m, "If") && has_op(m, "Loop"));
    mopt_session *s = NULL;
    assert_int_equal(mopt_session_create(m, NULL, &s), MOPT_ERR_UNSUPPORTED);
    assert_null(s);
    assert_non_null(strstr(mopt_last_error(), "2 nodes cannot run"));
    assert_int_equal(mopt_model_save(m, "/tmp/never-written.mopt"), MOPT_ERR_UNSUPPORTED);
    mopt_model_destroy(m);
    /* a model without problems loads for real with the option */
    m = NULL;
    assert_int_equal(mopt_model_load(IF_CONST, o, &m), MOPT_OK);
    assert_int_equal(mopt_session_create(m, NULL, &s), MOPT_OK);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
    mopt_options_destroy(o);
}

MOPT_TEST_MAIN(cmocka_unit_test(if_with_constant_condition_is_folded),
               cmocka_unit_test(check_names_nested_problems_by_path),
               cmocka_unit_test(body_error_is_the_loops_with_its_path),
               cmocka_unit_test(inspect_only_loads_a_model_that_cannot_run))
