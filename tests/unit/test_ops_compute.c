/*
 * test_ops_compute.c — load-time inference of the compute op families
 * (matmul, conv, pool, normalization) on hand-built graphs: symbolic dims
 * propagate, and invalid shapes/attributes fail with the right status and a
 * message naming the node and the shapes. Numerical results are covered by
 * the numpy-checked cases of the ops suite (tests/ops/gen_compute.py).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../test_graph.h"
#include "../test_main.h"
#include "tests/test_attrs.h"

/* Builds the model (takes g): it loads, and its "y" has the shape `want`. */
static void expect_y_shape(ir_graph *g, const char *want) {
    mopt_model *m = NULL;
    assert_int_equal(build(g, &m), MOPT_OK);
    expect_shape(m, "y", want);
    mopt_model_destroy(m);
}

MOPT_TEST(matmul_symbolic_dims_propagate) {
    ir_graph *g = new_graph(17);
    add_input(g, "a", MOPT_DTYPE_F32, "batch,1,3,8");
    add_weight(g, "w", "5,8,4");
    add_named_node(g, "MatMul", "mm", "a w", "y");
    add_output(g, "y");
    expect_y_shape(g, "[batch,5,3,4]");
}

MOPT_TEST(matmul_vector_operands_drop_axes) {
    ir_graph *g = new_graph(13);
    add_input(g, "a", MOPT_DTYPE_F32, "6");
    add_input(g, "b", MOPT_DTYPE_F32, "2,6,n");
    add_named_node(g, "MatMul", "mv", "a b", "y");
    add_output(g, "y");
    expect_y_shape(g, "[2,n]");
}

MOPT_TEST(matmul_inner_mismatch_fails) {
    ir_graph *g = new_graph(13);
    add_input(g, "a", MOPT_DTYPE_F32, "3,4");
    add_input(g, "b", MOPT_DTYPE_F32, "5,6");
    add_named_node(g, "MatMul", "bad_mm", "a b", "y");
    add_output(g, "y");
    expect_load_error(g, MOPT_ERR_SHAPE, "bad_mm", "[3,4]", "[5,6]");
}

MOPT_TEST(matmul_batch_mismatch_fails) {
    ir_graph *g = new_graph(13);
    add_input(g, "a", MOPT_DTYPE_F32, "2,3,4");
    add_input(g, "b", MOPT_DTYPE_F32, "3,4,5");
    add_named_node(g, "MatMul", "bad_batch", "a b", "y");
    add_output(g, "y");
    expect_load_error(g, MOPT_ERR_SHAPE, "bad_batch", "[2,3,4]", "[3,4,5]");
}

MOPT_TEST(gemm_c_not_broadcastable_fails) {
    ir_graph *g = new_graph(13);
    add_input(g, "a", MOPT_DTYPE_F32, "3,4");
    add_input(g, "b", MOPT_DTYPE_F32, "5,4");
    add_input(g, "c", MOPT_DTYPE_F32, "3");
    ir_node *n = add_named_node(g, "Gemm", "fc", "a b c", "y");
    add_output(g, "y");
    attr_int(n, "transB", 1);
    expect_load_error(g, MOPT_ERR_SHAPE, "fc", "[3]", "[3,5]");
}

MOPT_TEST(conv_symbolic_batch_propagates) {
    ir_graph *g = new_graph(13);
    add_input(g, "x", MOPT_DTYPE_F32, "N,6,9,8");
    add_weight(g, "w", "4,3,3,3");
    ir_node *n = add_named_node(g, "Conv", "conv", "x w", "y");
    add_output(g, "y");
    attr_int(n, "group", 2);
    attr_ints(n, "strides", 2, (int64_t[]){2, 2});
    attr_ints(n, "pads", 4, (int64_t[]){1, 1, 1, 1});
    expect_y_shape(g, "[N,4,5,4]");
}

MOPT_TEST(conv_channels_vs_group_fails) {
    ir_graph *g = new_graph(13);
    add_input(g, "x", MOPT_DTYPE_F32, "1,6,8,8");
    add_weight(g, "w", "4,2,3,3");
    ir_node *n = add_named_node(g, "Conv", "grouped", "x w", "y");
    add_output(g, "y");
    attr_int(n, "group", 2); /* 2 * 2 = 4 != 6 channels */
    expect_load_error(g, MOPT_ERR_SHAPE, "grouped", "[1,6,8,8]", "[4,2,3,3]");
}

MOPT_TEST(conv_output_channels_vs_group_fails) {
    ir_graph *g = new_graph(13);
    add_input(g, "x", MOPT_DTYPE_F32, "1,6,8,8");
    add_weight(g, "w", "5,2,3,3");
    ir_node *n = add_named_node(g, "Conv", "odd_out", "x w", "y");
    add_output(g, "y");
    attr_int(n, "group", 3);
    expect_load_error(g, MOPT_ERR_SHAPE, "odd_out", "multiple of group", "[5,2,3,3]");
}

MOPT_TEST(conv_kernel_larger_than_input_fails) {
    ir_graph *g = new_graph(13);
    add_input(g, "x", MOPT_DTYPE_F32, "1,1,2,8");
    add_weight(g, "w", "1,1,3,3");
    add_named_node(g, "Conv", "too_small", "x w", "y");
    add_output(g, "y");
    expect_load_error(g, MOPT_ERR_SHAPE, "too_small", "[1,1,2,8]", "[1,1,3,3]");
}

MOPT_TEST(conv_rank_mismatch_fails) {
    ir_graph *g = new_graph(13);
    add_input(g, "x", MOPT_DTYPE_F32, "1,2,8");
    add_weight(g, "w", "1,2,3,3");
    add_named_node(g, "Conv", "ranks", "x w", "y");
    add_output(g, "y");
    expect_load_error(g, MOPT_ERR_SHAPE, "ranks", "[1,2,8]", "[1,2,3,3]");
}

MOPT_TEST(conv_kernel_shape_attr_mismatch_fails) {
    ir_graph *g = new_graph(13);
    add_input(g, "x", MOPT_DTYPE_F32, "1,2,8,8");
    add_weight(g, "w", "1,2,3,3");
    ir_node *n = add_named_node(g, "Conv", "ks", "x w", "y");
    add_output(g, "y");
    attr_ints(n, "kernel_shape", 2, (int64_t[]){3, 2});
    expect_load_error(g, MOPT_ERR_SHAPE, "ks", "kernel_shape", "[1,2,3,3]");
}

MOPT_TEST(conv_bias_size_fails) {
    ir_graph *g = new_graph(13);
    add_input(g, "x", MOPT_DTYPE_F32, "1,2,8,8");
    add_weight(g, "w", "4,2,3,3");
    add_weight(g, "b", "3");
    add_named_node(g, "Conv", "bias", "x w b", "y");
    add_output(g, "y");
    expect_load_error(g, MOPT_ERR_SHAPE, "bias", "[3]", "[4,2,3,3]");
}

MOPT_TEST(maxpool_storage_order_invalid_fails) {
    ir_graph *g = new_graph(13);
    add_input(g, "x", MOPT_DTYPE_F32, "1,2,8,8");
    ir_node *n = add_named_node(g, "MaxPool", "mp", "x", "y idx");
    add_output(g, "y");
    attr_ints(n, "kernel_shape", 2, (int64_t[]){2, 2});
    attr_int(n, "storage_order", 2);
    expect_load_error(g, MOPT_ERR_INVALID_MODEL, "mp", "storage_order 2", NULL);
}

MOPT_TEST(pool_missing_kernel_shape_fails) {
    ir_graph *g = new_graph(13);
    add_input(g, "x", MOPT_DTYPE_F32, "1,2,8,8");
    add_named_node(g, "AveragePool", "ap", "x", "y");
    add_output(g, "y");
    expect_load_error(g, MOPT_ERR_INVALID_MODEL, "ap", "kernel_shape", NULL);
}

MOPT_TEST(pool_ceil_mode_shape) {
    ir_graph *g = new_graph(13);
    add_input(g, "x", MOPT_DTYPE_F32, "N,3,5,7");
    ir_node *n = add_named_node(g, "MaxPool", "mp", "x", "y");
    add_output(g, "y");
    attr_ints(n, "kernel_shape", 2, (int64_t[]){2, 2});
    attr_ints(n, "strides", 2, (int64_t[]){2, 2});
    attr_ints(n, "pads", 4, (int64_t[]){1, 0, 1, 0});
    attr_int(n, "ceil_mode", 1);
    /* H: 5 + 2 pads, ceil -> 4 windows, the last would start in the end pad -> 3;
     * W: ceil(5 / 2) + 1 = 4 */
    expect_y_shape(g, "[N,3,3,4]");
}

MOPT_TEST(batchnorm_training_before_opset14_fails) {
    ir_graph *g = new_graph(13);
    add_input(g, "x", MOPT_DTYPE_F32, "1,2,4,4");
    const char *p[] = {"s", "b", "m", "v"};
    for (int i = 0; i < 4; i++)
        add_weight(g, p[i], "2");
    ir_node *n = add_named_node(g, "BatchNormalization", "bn", "x s b m v", "y");
    add_output(g, "y");
    attr_int(n, "training_mode", 1);
    expect_load_error(g, MOPT_ERR_INVALID_MODEL, "bn", "training_mode needs opset >= 14", NULL);
}

MOPT_TEST(batchnorm_stats_need_training_fails) {
    ir_graph *g = new_graph(15);
    add_input(g, "x", MOPT_DTYPE_F32, "1,2,4,4");
    const char *p[] = {"s", "b", "m", "v"};
    for (int i = 0; i < 4; i++)
        add_weight(g, p[i], "2");
    add_named_node(g, "BatchNormalization", "bn", "x s b m v", "y rm");
    add_output(g, "y");
    expect_load_error(g, MOPT_ERR_UNSUPPORTED, "bn", "needs training_mode=1", NULL);
}

MOPT_TEST(batchnorm_param_size_fails) {
    ir_graph *g = new_graph(15);
    add_input(g, "x", MOPT_DTYPE_F32, "1,3,4,4");
    const char *p[] = {"s", "b", "m", "v"};
    for (int i = 0; i < 4; i++)
        add_weight(g, p[i], i == 2 ? "2" : "3");
    add_named_node(g, "BatchNormalization", "bn", "x s b m v", "y");
    add_output(g, "y");
    expect_load_error(g, MOPT_ERR_SHAPE, "bn", "input_mean", "[1,3,4,4]");
}

MOPT_TEST(layernorm_stats_shapes) {
    ir_graph *g = new_graph(17);
    add_input(g, "x", MOPT_DTYPE_F32, "B,4,6");
    add_weight(g, "s", "4,6");
    ir_node *n = add_named_node(g, "LayerNormalization", "ln", "x s", "y mean istd");
    add_output(g, "y");
    attr_int(n, "axis", -2);
    mopt_model *m = NULL;
    assert_int_equal(build(g, &m), MOPT_OK);
    expect_shape(m, "y", "[B,4,6]");
    expect_shape(m, "mean", "[B,1,1]");
    mopt_model_destroy(m);
}

MOPT_TEST(layernorm_scale_mismatch_fails) {
    ir_graph *g = new_graph(17);
    add_input(g, "x", MOPT_DTYPE_F32, "2,4,6");
    add_weight(g, "s", "4");
    add_named_node(g, "LayerNormalization", "ln", "x s", "y");
    add_output(g, "y");
    expect_load_error(g, MOPT_ERR_SHAPE, "ln", "Scale [4]", "[2,4,6]");
}

MOPT_TEST(softmax_axis_out_of_range_fails) {
    ir_graph *g = new_graph(13);
    add_input(g, "x", MOPT_DTYPE_F32, "2,4");
    ir_node *n = add_named_node(g, "Softmax", "sm", "x", "y");
    add_output(g, "y");
    attr_int(n, "axis", 2);
    expect_load_error(g, MOPT_ERR_INVALID_MODEL, "sm", "axis 2", "rank 2");
}

/* ---- the reference run's geometry (ops_run_reference) ----------------------- */

typedef struct {
    int64_t n;
} fake_geom;

static int g_fake_runs;

static mopt_status fake_geometry(const op_ctx *ctx, const op_tensor *in, int n_in, void *geom) {
    (void)ctx, (void)n_in;
    fake_geom *g = geom;
    assert_int_equal(g->n, 0); /* handed over zeroed */
    g->n = in[0].shape.dims[0];
    return g->n > 0 ? MOPT_OK : MOPT_ERR_SHAPE;
}

static mopt_status fake_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    (void)in, (void)n_in, (void)out, (void)n_out;
    g_fake_runs++;
    const fake_geom *g = ctx->geom;
    return g && g->n == 3 ? MOPT_OK : MOPT_ERR_INTERNAL;
}

MOPT_TEST(reference_run_gets_its_geometry) {
    const op_def d = {"Fake", "",   1,        1,    1,
                      1,      NULL, fake_run, NULL, OP_GEOM(fake_geom, fake_geometry)};
    op_ctx ctx = {.def = &d, .runtime = true};
    op_tensor in = {.dtype = MOPT_DTYPE_F32}, out = {.dtype = MOPT_DTYPE_F32};
    ir_shape_set(&in.shape, 1, (int64_t[]){3});
    g_fake_runs = 0;
    assert_int_equal(ops_run_reference(&d, &ctx, &in, 1, &out, 1), MOPT_OK);
    assert_int_equal(g_fake_runs, 1);
    assert_null(ctx.geom); /* the caller's view is left as it was */
    in.shape.dims[0] = 0;  /* the geometry fails: run is not called */
    assert_int_equal(ops_run_reference(&d, &ctx, &in, 1, &out, 1), MOPT_ERR_SHAPE);
    assert_int_equal(g_fake_runs, 1);
}

/* Every registered op declares a geometry function exactly when it declares
 * a geometry size. */
MOPT_TEST(geometry_rows_are_whole) {
    int with = 0;
    for (size_t i = 0; i < ops_count(); i++) {
        const op_def *d = ops_at(i);
        assert_true((d->geom != NULL) == (d->geom_size > 0));
        assert_true(d->geom_size <= OP_GEOM_CAP);
        with += d->geom != NULL;
    }
    /* LSTM GRU RNN NMS Einsum RotaryEmbedding DFT STFT LinearAttention
     * CausalConvWithState */
    assert_true(with >= 10);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reference_run_gets_its_geometry),
        cmocka_unit_test(geometry_rows_are_whole),
        cmocka_unit_test(matmul_symbolic_dims_propagate),
        cmocka_unit_test(matmul_vector_operands_drop_axes),
        cmocka_unit_test(matmul_inner_mismatch_fails),
        cmocka_unit_test(matmul_batch_mismatch_fails),
        cmocka_unit_test(gemm_c_not_broadcastable_fails),
        cmocka_unit_test(conv_symbolic_batch_propagates),
        cmocka_unit_test(conv_channels_vs_group_fails),
        cmocka_unit_test(conv_output_channels_vs_group_fails),
        cmocka_unit_test(conv_kernel_larger_than_input_fails),
        cmocka_unit_test(conv_rank_mismatch_fails),
        cmocka_unit_test(conv_kernel_shape_attr_mismatch_fails),
        cmocka_unit_test(conv_bias_size_fails),
        cmocka_unit_test(maxpool_storage_order_invalid_fails),
        cmocka_unit_test(pool_missing_kernel_shape_fails),
        cmocka_unit_test(pool_ceil_mode_shape),
        cmocka_unit_test(batchnorm_training_before_opset14_fails),
        cmocka_unit_test(batchnorm_stats_need_training_fails),
        cmocka_unit_test(batchnorm_param_size_fails),
        cmocka_unit_test(layernorm_stats_shapes),
        cmocka_unit_test(layernorm_scale_mismatch_fails),
        cmocka_unit_test(softmax_axis_out_of_range_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
