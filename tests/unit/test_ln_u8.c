/*
 * test_ln_u8.c — the int8 producer fusion of LayerNorm (issue 11): at
 * precision=int8 the cpu LayerNorm impls (every tier this CPU has, also
 * under MOPT_ISA=avx2 / portable: tests/unit/meson.build) write Y, or
 * mopt.LayerNormalization's copy of Y (pass_ln_copy.c), as a u8 rows block
 * (kernels/cpu/rowquant.h) with exactly the bytes cpu_rowq_from_f32 makes
 * of the f32 Y they write otherwise, i.e. what the int8 matmul would
 * quantize itself; and on the BERT test model (post-LN: each LayerNorm feeds
 * an int8 matmul and a residual) the pass gives each LayerNorm read by an
 * int8 matmul a copy kept u8, and the model's outputs are bit for bit those
 * of the same model with the copies kept f32 (the matmuls quantizing them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/alloc.h"
#include "core/error.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/rowquant.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/impls.h"
#include "ops/node_view.h"
#include "ops/normalization.h"
#include "runtime/runtime.h"
#include "test_bert_plan.h"
#include "tests/test_main.h"
#include "tests/test_rand.h"

static uint64_t g_rng = 0x243f6a8885a308d3ull;
static float frand(void) { return test_frand(&g_rng); }

enum { ROWS = 37, LEN = 200 };

static void f32_tensor(op_tensor *t, int64_t rows, int64_t len, void *data) {
    memset(t, 0, sizeof *t);
    t->dtype = MOPT_DTYPE_F32;
    int64_t d[2] = {rows, len};
    ir_shape_set(&t->shape, len > 0 ? 2 : 1, len > 0 ? d : &rows);
    t->data = data;
}

static void u8_block(op_tensor *t, uint8_t *data) {
    memset(t, 0, sizeof *t);
    t->dtype = MOPT_DTYPE_U8;
    int64_t d[2] = {ROWS, LEN + CPU_ROWQ_EXTRA};
    ir_shape_set(&t->shape, 2, d);
    t->data = data;
}

/* One tier: Y f32 (and its f32 copy), then Y's copy as a u8 block, then Y
 * itself as a u8 block: the blocks' bytes are cpu_rowq_from_f32's of Y. */
static void check_tier(const op_impl *impl) {
    if (!cpu_kernels_for(impl->name + 4)) return; /* "cpu-<tier>": not on this CPU */
    ir_graph *g = ir_graph_create();
    ir_graph_set_opset(g, "", 17);
    ir_graph_set_opset(g, "mopt", 1);
    ir_node *n = ir_graph_add_node(g, "LayerNormalization", "mopt", "ln", 3, 4);
    assert_non_null(n);
    n->op = ops_find("LayerNormalization", "mopt");
    assert_non_null(n->op);
    n->outputs[0] = ir_graph_value(g, "y");
    n->outputs[LN_COPY_OUT] = ir_graph_value(g, "y_int8");
    static op_view view;
    op_view_src src = {.graph = g, .runtime = true, .precision = OP_PREC_INT8, .threads = 2};
    assert_int_equal(op_view_init(&view, &src, n, NULL), MOPT_OK);
    op_ctx ctx = view.ctx;

    static float x[ROWS * LEN], scale[LEN], bias[LEN], y[ROWS * LEN], copy[ROWS * LEN];
    static float y2[ROWS * LEN], sc[ROWS];
    static int32_t zp[ROWS];
    static uint8_t want[ROWS * (LEN + CPU_ROWQ_EXTRA)], got[ROWS * (LEN + CPU_ROWQ_EXTRA)];
    for (int i = 0; i < ROWS * LEN; i++)
        x[i] = 3.f * frand() + (i % LEN < 7 ? 20.f : 0.f); /* some rows skewed */
    for (int i = 0; i < LEN; i++)
        scale[i] = 1.f + frand(), bias[i] = 0.5f * frand();
    op_tensor in[3], out[4];
    f32_tensor(&in[0], ROWS, LEN, x);
    f32_tensor(&in[1], LEN, 0, scale);
    f32_tensor(&in[2], LEN, 0, bias);
    memset(out, 0, sizeof out);
    f32_tensor(&out[0], ROWS, LEN, y);
    f32_tensor(&out[LN_COPY_OUT], ROWS, LEN, copy);

    /* the storage plan's question: Y and the copy may be u8, not the stats */
    assert_non_null(impl->u8_io);
    assert_true(impl->u8_io(&ctx, in, 3, true, 0));
    assert_true(impl->u8_io(&ctx, in, 3, true, LN_COPY_OUT));
    assert_false(impl->u8_io(&ctx, in, 3, true, 1));
    assert_false(impl->u8_io(&ctx, in, 3, false, 0));
    op_ctx fp = ctx;
    fp.precision = OP_PREC_FP32;
    assert_false(impl->u8_io(&fp, in, 3, true, LN_COPY_OUT));

    void *state = NULL;
    assert_int_equal(impl->prepare(&ctx, in, 3, out, 4, &state), MOPT_OK);
    ctx.state = state;
    /* f32: Y and an identical copy */
    assert_int_equal(impl->run(&ctx, in, 3, out, 4), MOPT_OK);
    assert_memory_equal(y, copy, sizeof y);
    cpu_rowq_from_f32(y, ROWS, LEN, cpu_kernels_for("avx512") != NULL, want, sc, zp);
    /* the copy as a u8 block: Y unchanged, the block cpu_rowq_from_f32's */
    memset(got, 0xA5, sizeof got);
    u8_block(&out[LN_COPY_OUT], got);
    f32_tensor(&out[0], ROWS, LEN, y2);
    assert_int_equal(impl->run(&ctx, in, 3, out, 4), MOPT_OK);
    assert_memory_equal(y, y2, sizeof y);
    assert_memory_equal(want, got, sizeof got);
    /* Y itself as a u8 block (every reader an int8 matmul) */
    memset(got, 0x5A, sizeof got);
    u8_block(&out[0], got);
    f32_tensor(&out[LN_COPY_OUT], ROWS, LEN, copy);
    assert_int_equal(impl->run(&ctx, in, 3, out, 4), MOPT_OK);
    assert_memory_equal(want, got, sizeof got);
    assert_memory_equal(y, copy, sizeof y);
    print_message("%s: u8 rows of Y and of its copy as cpu_rowq_from_f32's\n", impl->name);
    ir_graph_destroy(g);
}

static void tiers(void **state) {
    (void)state;
    check_tier(&ops_impl_cpu_layernorm_avx512);
    check_tier(&ops_impl_cpu_layernorm_avx2);
    check_tier(&ops_impl_cpu_layernorm_portable);
}

enum { B = BERT_B, S = BERT_S, H = BERT_H };

/* The LayerNorms' copies kept u8 (quantized by the LayerNorm) or f32 (then
 * quantized by the int8 matmul): the same outputs, bit for bit. */
static void bert_fused_equals_unfused(void **state) {
    (void)state;
    mopt_model *m = bert_load("int8", 3, NULL, NULL);
    const ir_graph *g = m->graph;
    int32_t copies = 0, kept = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (strcmp(n->op_type, "LayerNormalization") != 0 || strcmp(n->domain, "mopt") != 0)
            continue;
        assert_int_equal(n->n_outputs, 4);
        copies++;
        kept += m->u8_store && m->u8_store[n->outputs[LN_COPY_OUT]];
    }
    /* the embeddings' LayerNorm and each layer's first one feed an int8
     * matmul (Q/K/V; fc1) and a residual */
    assert_true(copies >= 2);
    if (!kept) {
        mopt_model_destroy(m);
        skip(); /* no oneDNN int8 matmul here: the copies stay f32 */
    }
    assert_int_equal(kept, copies);
    static float fused[B * S * H], unfused[B * S * H];
    bert_run(m, fused, 1);
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (strcmp(n->domain, "mopt") == 0 && strcmp(n->op_type, "LayerNormalization") == 0)
            m->u8_store[n->outputs[LN_COPY_OUT]] = false;
    }
    bert_run(m, unfused, 1);
    assert_memory_equal(fused, unfused, sizeof fused);
    mopt_model_destroy(m);
}

/* LayerNorms of the mopt domain in a loaded model */
static int32_t mopt_lns(const mopt_model *m) {
    int32_t c = 0;
    for (int32_t i = 0; i < m->graph->n_nodes; i++)
        c += strcmp(m->graph->nodes[i]->domain, "mopt") == 0 &&
             strcmp(m->graph->nodes[i]->op_type, "LayerNormalization") == 0;
    return c;
}

/* no copy at fp32 or bf16, nor at int8 below opt_level 3; one fewer where
 * int8_exclude keeps layer 0's fc1 (the only int8 reader of its LayerNorm)
 * in FP32 */
static void no_copy_elsewhere(void **state) {
    (void)state;
    const char *prec[3] = {"fp32", "bf16", "int8"};
    for (int i = 0; i < 3; i++) {
        mopt_model *m = bert_load(prec[i], i == 2 ? 2 : 3, NULL, NULL);
        assert_int_equal(mopt_lns(m), 0);
        mopt_model_destroy(m);
    }
    mopt_model *all = bert_load("int8", 3, NULL, NULL);
    mopt_model *ex = bert_load("int8", 3, "/layers.0/fc1/MatMul", NULL);
    assert_int_equal(mopt_lns(ex), mopt_lns(all) - 1);
    mopt_model_destroy(all);
    mopt_model_destroy(ex);
}

MOPT_TEST_MAIN(cmocka_unit_test(tiers), cmocka_unit_test(bert_fused_equals_unfused),
               cmocka_unit_test(no_copy_elsewhere))
