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

#define F32 MOPT_DTYPE_F32
/* BatchNormalization's scale, bias, mean and var */
#define BN_PARAMS(spec_m, spec)                                                                    \
    {                                                                                              \
        {"s", spec}, {"b", spec}, {"m", spec_m}, { "v", spec }                                     \
    }

/* One node of the compute families: the shapes it infers, or the status and
 * the message (naming the node and the shapes) it fails with. */
static const graph_case compute_cases[] = {
    {.label = "matmul symbolic dims propagate",
     .opset = 17,
     .inputs = {{"a", "batch,1,3,8", F32}},
     .weights = {{"w", "5,8,4"}},
     .node = {"MatMul", "mm", "a w", "y"},
     .shapes = {{"y", "[batch,5,3,4]"}}},
    {.label = "matmul vector operands drop axes",
     .opset = 13,
     .inputs = {{"a", "6", F32}, {"b", "2,6,n", F32}},
     .node = {"MatMul", "mv", "a b", "y"},
     .shapes = {{"y", "[2,n]"}}},
    {.label = "matmul inner mismatch fails",
     .opset = 13,
     .inputs = {{"a", "3,4", F32}, {"b", "5,6", F32}},
     .node = {"MatMul", "bad_mm", "a b", "y"},
     .status = MOPT_ERR_SHAPE,
     .needles = {"bad_mm", "[3,4]", "[5,6]"}},
    {.label = "matmul batch mismatch fails",
     .opset = 13,
     .inputs = {{"a", "2,3,4", F32}, {"b", "3,4,5", F32}},
     .node = {"MatMul", "bad_batch", "a b", "y"},
     .status = MOPT_ERR_SHAPE,
     .needles = {"bad_batch", "[2,3,4]", "[3,4,5]"}},
    {.label = "gemm C not broadcastable fails",
     .opset = 13,
     .inputs = {{"a", "3,4", F32}, {"b", "5,4", F32}, {"c", "3", F32}},
     .node = {"Gemm", "fc", "a b c", "y"},
     .attrs = {{"transB", 0, {1}}},
     .status = MOPT_ERR_SHAPE,
     .needles = {"fc", "[3]", "[3,5]"}},
    {.label = "conv symbolic batch propagates",
     .opset = 13,
     .inputs = {{"x", "N,6,9,8", F32}},
     .weights = {{"w", "4,3,3,3"}},
     .node = {"Conv", "conv", "x w", "y"},
     .attrs = {{"group", 0, {2}}, {"strides", 2, {2, 2}}, {"pads", 4, {1, 1, 1, 1}}},
     .shapes = {{"y", "[N,4,5,4]"}}},
    {.label = "conv channels vs group fails", /* 2 * 2 = 4 != 6 channels */
     .opset = 13,
     .inputs = {{"x", "1,6,8,8", F32}},
     .weights = {{"w", "4,2,3,3"}},
     .node = {"Conv", "grouped", "x w", "y"},
     .attrs = {{"group", 0, {2}}},
     .status = MOPT_ERR_SHAPE,
     .needles = {"grouped", "[1,6,8,8]", "[4,2,3,3]"}},
    {.label = "conv output channels vs group fails",
     .opset = 13,
     .inputs = {{"x", "1,6,8,8", F32}},
     .weights = {{"w", "5,2,3,3"}},
     .node = {"Conv", "odd_out", "x w", "y"},
     .attrs = {{"group", 0, {3}}},
     .status = MOPT_ERR_SHAPE,
     .needles = {"odd_out", "multiple of group", "[5,2,3,3]"}},
    {.label = "conv kernel larger than input fails",
     .opset = 13,
     .inputs = {{"x", "1,1,2,8", F32}},
     .weights = {{"w", "1,1,3,3"}},
     .node = {"Conv", "too_small", "x w", "y"},
     .status = MOPT_ERR_SHAPE,
     .needles = {"too_small", "[1,1,2,8]", "[1,1,3,3]"}},
    {.label = "conv rank mismatch fails",
     .opset = 13,
     .inputs = {{"x", "1,2,8", F32}},
     .weights = {{"w", "1,2,3,3"}},
     .node = {"Conv", "ranks", "x w", "y"},
     .status = MOPT_ERR_SHAPE,
     .needles = {"ranks", "[1,2,8]", "[1,2,3,3]"}},
    {.label = "conv kernel_shape attribute mismatch fails",
     .opset = 13,
     .inputs = {{"x", "1,2,8,8", F32}},
     .weights = {{"w", "1,2,3,3"}},
     .node = {"Conv", "ks", "x w", "y"},
     .attrs = {{"kernel_shape", 2, {3, 2}}},
     .status = MOPT_ERR_SHAPE,
     .needles = {"ks", "kernel_shape", "[1,2,3,3]"}},
    {.label = "conv bias size fails",
     .opset = 13,
     .inputs = {{"x", "1,2,8,8", F32}},
     .weights = {{"w", "4,2,3,3"}, {"b", "3"}},
     .node = {"Conv", "bias", "x w b", "y"},
     .status = MOPT_ERR_SHAPE,
     .needles = {"bias", "[3]", "[4,2,3,3]"}},
    {.label = "maxpool storage_order invalid fails",
     .opset = 13,
     .inputs = {{"x", "1,2,8,8", F32}},
     .node = {"MaxPool", "mp", "x", "y idx"},
     .attrs = {{"kernel_shape", 2, {2, 2}}, {"storage_order", 0, {2}}},
     .status = MOPT_ERR_INVALID_MODEL,
     .needles = {"mp", "storage_order 2"}},
    {.label = "pool missing kernel_shape fails",
     .opset = 13,
     .inputs = {{"x", "1,2,8,8", F32}},
     .node = {"AveragePool", "ap", "x", "y"},
     .status = MOPT_ERR_INVALID_MODEL,
     .needles = {"ap", "kernel_shape"}},
    /* H: 5 + 2 pads, ceil -> 4 windows, the last would start in the end pad -> 3;
     * W: ceil(5 / 2) + 1 = 4 */
    {.label = "pool ceil_mode shape",
     .opset = 13,
     .inputs = {{"x", "N,3,5,7", F32}},
     .node = {"MaxPool", "mp", "x", "y"},
     .attrs = {{"kernel_shape", 2, {2, 2}},
               {"strides", 2, {2, 2}},
               {"pads", 4, {1, 0, 1, 0}},
               {"ceil_mode", 0, {1}}},
     .shapes = {{"y", "[N,3,3,4]"}}},
    {.label = "batchnorm training before opset 14 fails",
     .opset = 13,
     .inputs = {{"x", "1,2,4,4", F32}},
     .weights = BN_PARAMS("2", "2"),
     .node = {"BatchNormalization", "bn", "x s b m v", "y"},
     .attrs = {{"training_mode", 0, {1}}},
     .status = MOPT_ERR_INVALID_MODEL,
     .needles = {"bn", "training_mode needs opset >= 14"}},
    {.label = "batchnorm stats need training fails",
     .opset = 15,
     .inputs = {{"x", "1,2,4,4", F32}},
     .weights = BN_PARAMS("2", "2"),
     .node = {"BatchNormalization", "bn", "x s b m v", "y rm"},
     .status = MOPT_ERR_UNSUPPORTED,
     .needles = {"bn", "needs training_mode=1"}},
    {.label = "batchnorm param size fails",
     .opset = 15,
     .inputs = {{"x", "1,3,4,4", F32}},
     .weights = BN_PARAMS("2", "3"),
     .node = {"BatchNormalization", "bn", "x s b m v", "y"},
     .status = MOPT_ERR_SHAPE,
     .needles = {"bn", "input_mean", "[1,3,4,4]"}},
    {.label = "layernorm stats shapes",
     .opset = 17,
     .inputs = {{"x", "B,4,6", F32}},
     .weights = {{"s", "4,6"}},
     .node = {"LayerNormalization", "ln", "x s", "y mean istd"},
     .attrs = {{"axis", 0, {-2}}},
     .shapes = {{"y", "[B,4,6]"}, {"mean", "[B,1,1]"}}},
    {.label = "layernorm scale mismatch fails",
     .opset = 17,
     .inputs = {{"x", "2,4,6", F32}},
     .weights = {{"s", "4"}},
     .node = {"LayerNormalization", "ln", "x s", "y"},
     .status = MOPT_ERR_SHAPE,
     .needles = {"ln", "Scale [4]", "[2,4,6]"}},
    {.label = "softmax axis out of range fails",
     .opset = 13,
     .inputs = {{"x", "2,4", F32}},
     .node = {"Softmax", "sm", "x", "y"},
     .attrs = {{"axis", 0, {2}}},
     .status = MOPT_ERR_INVALID_MODEL,
     .needles = {"sm", "axis 2", "rank 2"}},
};

MOPT_TEST(compute_op_cases) {
    graph_cases_check(compute_cases, sizeof compute_cases / sizeof compute_cases[0]);
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

static bool domain_default(const char *d) { return !d || !*d || strcmp(d, "ai.onnx") == 0; }

/* ops_find (an index) gives what a scan of the registry in table order gives:
 * the first op of that type whose domain matches ("ai.onnx" and "" alike). */
MOPT_TEST(find_matches_table_order) {
    size_t n = ops_count();
    assert_true(n > 100);
    for (size_t i = 0; i < n; i++) {
        const op_def *d = ops_at(i);
        const op_def *first = NULL;
        for (size_t j = 0; j <= i && !first; j++) {
            const op_def *e = ops_at(j);
            bool same = domain_default(e->domain)
                            ? domain_default(d->domain)
                            : !domain_default(d->domain) && strcmp(e->domain, d->domain) == 0;
            if (strcmp(e->op_type, d->op_type) == 0 && same) first = e;
        }
        assert_ptr_equal(ops_find(d->op_type, d->domain ? d->domain : ""), first);
        if (domain_default(d->domain)) {
            assert_ptr_equal(ops_find(d->op_type, "ai.onnx"), first);
            assert_ptr_equal(ops_find(d->op_type, NULL), first);
            assert_null(ops_find(d->op_type, "no.such.domain"));
        }
    }
    assert_null(ops_find("NoSuchOp", ""));
    assert_null(ops_find("", ""));
    assert_null(ops_find("zzz", ""));
    assert_null(ops_find("AAA", ""));
    assert_non_null(ops_find("Relu", ""));
    assert_non_null(ops_find("Attention", "mopt"));
}

MOPT_TEST_MAIN(cmocka_unit_test(reference_run_gets_its_geometry),
               cmocka_unit_test(geometry_rows_are_whole), cmocka_unit_test(compute_op_cases),
               cmocka_unit_test(find_matches_table_order))
