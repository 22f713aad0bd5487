/*
 * test_passes.c — what the level-1 passes must achieve on the exported test
 * models (their outputs are checked against ONNX Runtime at every opt_level
 * by the models suite): constants folded, duplicate nodes merged, and the
 * shape arithmetic torch emits (Shape -> Gather -> Unsqueeze -> Concat ->
 * Reshape) folded away although it depends on the symbolic batch and seq.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <mopt/mopt.h>

#include "../test_main.h"

static mopt_model *load(const char *path, int opt_level) {
    mopt_options *o = NULL;
    mopt_model *m = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "opt_level", opt_level), MOPT_OK);
    if (mopt_model_load(path, o, &m) != MOPT_OK) fail_msg("%s: %s", path, mopt_last_error());
    mopt_options_destroy(o);
    return m;
}

static int count_op(const mopt_model *m, const char *op) {
    int n = 0;
    for (size_t i = 0; i < mopt_model_node_count(m); i++)
        n += strcmp(mopt_model_node_op_type(m, i), op) == 0;
    return n;
}

MOPT_TEST(passes_fold_bert_shape_arithmetic) {
    mopt_model *m0 = load("tests/models/bert/model.onnx", 0);
    mopt_model *m1 = load("tests/models/bert/model.onnx", 1);
    size_t before = mopt_model_node_count(m0), after = mopt_model_node_count(m1);
    printf("[ INFO     ] bert: %zu nodes at opt_level 0, %zu at opt_level 1\n", before, after);
    assert_true(count_op(m0, "Shape") > 0);
    assert_true(count_op(m0, "Constant") > 0);
    /* One Shape stays: seq = Shape(input_ids)[1] is the end of the Slice of
     * the position-id table, a value only known at run time. */
    assert_int_equal(count_op(m1, "Shape"), 1);
    const char *gone[] = {"Concat", "Constant"};
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++)
        if (count_op(m1, gone[i]) != 0)
            fail_msg("%d %s nodes left at opt_level 1", count_op(m1, gone[i]), gone[i]);
    assert_int_equal(count_op(m1, "Reshape"), count_op(m0, "Reshape"));
    assert_true(after * 10 <= before * 4); /* at least 60% fewer nodes */
    /* the symbolic input shapes survive optimization */
    assert_string_equal(mopt_model_io_dim_name(m1, MOPT_INPUT, 0, 1), "seq");
    assert_string_equal(mopt_model_io_dim_name(m1, MOPT_OUTPUT, 0, 0), "batch");
    mopt_model_destroy(m0);
    mopt_model_destroy(m1);
}

MOPT_TEST(passes_opt_level_zero_changes_nothing) {
    mopt_model *m0 = load("tests/models/gpt/model.onnx", 0);
    assert_int_equal(mopt_model_node_count(m0), 247); /* as exported (tests/models/README.md) */
    mopt_model *m1 = load("tests/models/gpt/model.onnx", 1);
    assert_true(mopt_model_node_count(m1) < 200);
    assert_int_equal(count_op(m1, "Constant"), 0);
    mopt_model_destroy(m0);
    mopt_model_destroy(m1);
}

MOPT_TEST_MAIN(cmocka_unit_test(passes_fold_bert_shape_arithmetic),
               cmocka_unit_test(passes_opt_level_zero_changes_nothing))
