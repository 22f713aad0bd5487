/*
 * test_bert_plan.h — shared by the storage-plan tests (test_bf16_storage,
 * test_storage_fallback): the BERT test model loaded at a precision and opt
 * level, with an optional int8_exclude list and the precision its nodes fall
 * back to (NULL: the default, fp32).
 */
#ifndef MOPT_TESTS_UNIT_TEST_BERT_PLAN_H
#define MOPT_TESTS_UNIT_TEST_BERT_PLAN_H

#include <mopt/mopt.h>

#define BERT "tests/models/bert/model.onnx"

static inline mopt_model *bert_load(const char *precision, int opt_level, const char *exclude,
                                    const char *fallback) {
    mopt_options *o = NULL;
    mopt_model *m = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_string(o, "precision", precision), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "opt_level", opt_level), MOPT_OK);
    if (exclude) assert_int_equal(mopt_options_set_string(o, "int8_exclude", exclude), MOPT_OK);
    if (exclude && fallback)
        assert_int_equal(mopt_options_set_string(o, "int8_fallback", fallback), MOPT_OK);
    assert_int_equal(mopt_model_load(BERT, o, &m), MOPT_OK);
    mopt_options_destroy(o);
    return m;
}

#endif
