/*
 * test_ops_shape.c — unit tests of load-time shape inference for the shape,
 * movement and reduce op families on hand-built graphs: symbolic dims
 * flowing through Reshape (0 copies a symbol, -1 solved when symbols
 * cancel), Transpose, Concat, Squeeze/Unsqueeze, Gather, Slice, ReduceMean,
 * Constant feeding Reshape; and error paths (bad shapes at load, an
 * out-of-range Gather index at run time) that must fail with a message
 * naming the node, never crash; attributes read through an op's declared
 * attribute table (OP_ATTRS). The op cases (tests/ops) check values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../test_graph.h"
#include "../test_main.h"
#include "tests/test_attrs.h"

/* ---- symbolic inference ----------------------------------------------------- */

MOPT_TEST(ops_reshape_symbols) {
    ir_graph *g = new_graph(13);
    add_input(g, "x", MOPT_DTYPE_F32, "batch,seq,768");
    static const int64_t split_heads[] = {0, 0, 12, 64}, merge[] = {0, 0, -1}, flat[] = {-1, 64};
    add_init_i64(g, "s1", 4, split_heads);
    add_init_i64(g, "s2", 3, merge);
    add_init_i64(g, "s3", 2, flat);
    add_input(g, "dyn", MOPT_DTYPE_I64, "3");
    add_node(g, "Reshape", "x s1", "heads");
    add_node(g, "Reshape", "heads s2", "merged");
    add_node(g, "Reshape", "x s3", "flat");
    add_node(g, "Reshape", "x dyn", "dynamic");
    add_output(g, "merged");
    add_output(g, "flat");
    add_output(g, "dynamic");
    mopt_model *m;
    assert_int_equal(build(g, &m), MOPT_OK);
    expect_shape(m, "heads", "[batch,seq,12,64]");
    expect_shape(m, "merged", "[batch,seq,768]"); /* -1 solved: symbols cancel */
    expect_shape(m, "flat", "[?,64]");            /* -1 depends on batch*seq */
    expect_shape(m, "dynamic", "[?,?,?]");        /* shape not constant: rank only */
    mopt_model_destroy(m);
}

MOPT_TEST(ops_movement_symbols) {
    ir_graph *g = new_graph(13);
    add_input(g, "x", MOPT_DTYPE_F32, "batch,seq,16");
    add_input(g, "z", MOPT_DTYPE_F32, "batch,seq,4");
    add_input(g, "idx", MOPT_DTYPE_I64, "n,3");
    static const int64_t perm[] = {0, 2, 1}, one[] = {1}, neg3[] = {-3}, s1[] = {1}, e3[] = {3},
                         zero[] = {0}, big[] = {INT64_MAX}, two[] = {2}, eight[] = {8};
    add_init_i64(g, "ax1", 1, one);
    add_init_i64(g, "axm3", 1, neg3);
    add_init_i64(g, "s1", 1, s1);
    add_init_i64(g, "e3", 1, e3);
    add_init_i64(g, "s0", 1, zero);
    add_init_i64(g, "emax", 1, big);
    add_init_i64(g, "a2", 1, two);
    add_init_i64(g, "e8", 1, eight);
    attr_ints(add_node(g, "Transpose", "x", "t"), "perm", 3, perm);
    attr_int(add_node(g, "Concat", "x z", "cat"), "axis", -1);
    attr_int(add_node(g, "Concat", "x x", "cat0"), "axis", 0);
    add_node(g, "Unsqueeze", "x ax1", "u");
    add_node(g, "Squeeze", "u axm3", "sq");
    attr_int(add_node(g, "Gather", "x idx", "gat"), "axis", 1);
    add_node(g, "Slice", "x s1 e3 ax1", "sl_sym");
    add_node(g, "Slice", "x s0 e8 a2", "sl_fixed");
    add_node(g, "Slice", "x s0 emax ax1", "sl_full");
    ir_node *r = add_node(g, "ReduceMean", "x", "mean");
    static const int64_t last[] = {-1};
    attr_ints(r, "axes", 1, last);
    const char *outs[] = {"t", "cat", "cat0", "sq", "gat", "sl_sym", "sl_fixed", "sl_full", "mean"};
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++)
        add_output(g, outs[i]);
    mopt_model *m;
    if (build(g, &m) != MOPT_OK) fail_msg("%s", mopt_error_message());
    expect_shape(m, "t", "[batch,16,seq]");
    expect_shape(m, "cat", "[batch,seq,20]");
    expect_shape(m, "cat0", "[?,seq,16]");
    expect_shape(m, "u", "[batch,1,seq,16]");
    expect_shape(m, "sq", "[batch,seq,16]");
    expect_shape(m, "gat", "[batch,n,3,16]");
    expect_shape(m, "sl_sym", "[batch,?,16]");
    expect_shape(m, "sl_fixed", "[batch,seq,8]");
    expect_shape(m, "sl_full", "[batch,seq,16]");
    expect_shape(m, "mean", "[batch,seq,1]");
    mopt_model_destroy(m);
}

MOPT_TEST(ops_constant_feeds_reshape) {
    ir_graph *g = new_graph(13);
    add_input(g, "x", MOPT_DTYPE_F32, "n,2,2");
    static const int64_t v[] = {0, -1};
    attr_ints(add_node(g, "Constant", "", "c"), "value_ints", 2, v);
    add_node(g, "Reshape", "x c", "y");
    add_output(g, "y");
    mopt_model *m;
    assert_int_equal(build(g, &m), MOPT_OK);
    expect_shape(m, "c", "[2]");
    expect_shape(m, "y", "[n,4]");
    mopt_model_destroy(m);
}

/* ---- errors ------------------------------------------------------------------ */

/* One node that fails to load, with the status and a message naming it. */
static const graph_case shape_error_cases[] = {
    {.label = "reshape bad count",
     .opset = 13,
     .inputs = {{"x", "2,3", MOPT_DTYPE_F32}},
     .i64s = {{"s", 2, {4, -1}}},
     .node = {"Reshape", NULL, "x s", "y"},
     .status = MOPT_ERR_SHAPE,
     .needles = {"Reshape"}},
    {.label = "concat mismatch",
     .opset = 13,
     .inputs = {{"a", "2,3", MOPT_DTYPE_F32}, {"b", "2,4", MOPT_DTYPE_F32}},
     .node = {"Concat", NULL, "a b", "y"},
     .attrs = {{"axis", 0, {0}}},
     .status = MOPT_ERR_SHAPE,
     .needles = {"axis 1 differs"}},
    {.label = "transpose bad perm",
     .opset = 13,
     .inputs = {{"x", "2,3", MOPT_DTYPE_F32}},
     .node = {"Transpose", NULL, "x", "y"},
     .attrs = {{"perm", 2, {0, 0}}},
     .status = MOPT_ERR_INVALID_MODEL,
     .needles = {"perm"}},
    {.label = "split uneven",
     .opset = 13,
     .inputs = {{"x", "5,2", MOPT_DTYPE_F32}},
     .node = {"Split", NULL, "x", "y0 y1"},
     .graph_outputs = "y0 y1",
     .status = MOPT_ERR_SHAPE,
     .needles = {"evenly"}},
    {.label = "squeeze not one",
     .opset = 11,
     .inputs = {{"x", "2,3", MOPT_DTYPE_F32}},
     .node = {"Squeeze", NULL, "x", "y"},
     .attrs = {{"axes", 1, {1}}},
     .status = MOPT_ERR_SHAPE,
     .needles = {"squeeze axis 1"}},
};

MOPT_TEST(ops_shape_error_cases) {
    graph_cases_check(shape_error_cases, sizeof shape_error_cases / sizeof shape_error_cases[0]);
}

MOPT_TEST(ops_gather_index_out_of_range) {
    ir_graph *g = new_graph(13);
    add_input(g, "x", MOPT_DTYPE_F32, "2,3");
    add_input(g, "i", MOPT_DTYPE_I64, "2");
    attr_int(add_node(g, "Gather", "x i", "y"), "axis", 1);
    add_output(g, "y");
    mopt_model *m;
    assert_int_equal(build(g, &m), MOPT_OK);
    mopt_session *s;
    assert_int_equal(mopt_session_create(m, NULL, &s), MOPT_OK);
    float xd[6] = {0};
    int64_t xdims[] = {2, 3}, idims[] = {2};
    int64_t good[] = {-3, 2}, bad[] = {1, 3};
    mopt_tensor *in[2], *out = NULL;
    assert_int_equal(mopt_tensor_wrap(MOPT_DTYPE_F32, 2, xdims, xd, sizeof xd, &in[0]), MOPT_OK);
    assert_int_equal(mopt_tensor_wrap(MOPT_DTYPE_I64, 1, idims, good, sizeof good, &in[1]),
                     MOPT_OK);
    assert_int_equal(mopt_session_run(s, 2, NULL, (const mopt_tensor *const *)in, 1, NULL, &out),
                     MOPT_OK);
    mopt_tensor_destroy(out);
    out = NULL;
    mopt_tensor_destroy(in[1]);
    assert_int_equal(mopt_tensor_wrap(MOPT_DTYPE_I64, 1, idims, bad, sizeof bad, &in[1]), MOPT_OK);
    mopt_status st = mopt_session_run(s, 2, NULL, (const mopt_tensor *const *)in, 1, NULL, &out);
    assert_int_equal(st, MOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mopt_last_error(), "Gather"));
    assert_non_null(strstr(mopt_last_error(), "index 3"));
    assert_null(out);
    mopt_tensor_destroy(in[0]);
    mopt_tensor_destroy(in[1]);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
}

/* Attributes read through an op's declared table (lib/ops/ops.h OP_ATTRS):
 * defaults, given values, a 0/1 attribute out of range, and the op's own
 * check running after the table. */
MOPT_TEST(ops_attr_table) {
    ir_graph *g = new_graph(13);
    add_input(g, "x", MOPT_DTYPE_F32, "2,3,4");
    add_node(g, "Flatten", "x", "f1");                      /* axis 1 by default */
    attr_int(add_node(g, "Flatten", "x", "f2"), "axis", 2); /* OP_ATTR_I64 */
    ir_node *am = add_node(g, "ArgMax", "x", "am");         /* keepdims 0: nonzero test */
    attr_int(am, "axis", 1);
    attr_int(am, "keepdims", 0);
    attr_int(add_node(g, "ArgMin", "x", "an"), "axis", -1); /* keepdims 1 by default */
    const char *outs[] = {"f1", "f2", "am", "an"};
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++)
        add_output(g, outs[i]);
    mopt_model *m;
    assert_int_equal(build(g, &m), MOPT_OK);
    expect_shape(m, "f1", "[2,12]");
    expect_shape(m, "f2", "[6,4]");
    expect_shape(m, "am", "[2,4]");
    expect_shape(m, "an", "[2,3,1]");
    mopt_model_destroy(m);

    g = new_graph(20);
    add_input(g, "theta", MOPT_DTYPE_F32, "1,2,3");
    add_init_i64(g, "size", 4, (const int64_t[]){1, 1, 4, 4});
    attr_int(add_node(g, "AffineGrid", "theta size", "grid"), "align_corners", 2);
    add_output(g, "grid");
    expect_load_error(g, MOPT_ERR_INVALID_MODEL, "align_corners must be 0 or 1, not 2");

    g = new_graph(21);
    add_input(g, "x", MOPT_DTYPE_F32, "1,4,3");
    add_input(g, "s", MOPT_DTYPE_F32, "4");
    add_input(g, "b", MOPT_DTYPE_F32, "4");
    attr_int(add_node(g, "GroupNormalization", "x s b", "y"), "num_groups", 0);
    add_output(g, "y");
    expect_load_error(g, MOPT_ERR_INVALID_MODEL, "num_groups must be > 0");
}

MOPT_TEST_MAIN(cmocka_unit_test(ops_reshape_symbols), cmocka_unit_test(ops_movement_symbols),
               cmocka_unit_test(ops_constant_feeds_reshape),
               cmocka_unit_test(ops_shape_error_cases),
               cmocka_unit_test(ops_gather_index_out_of_range), cmocka_unit_test(ops_attr_table))
