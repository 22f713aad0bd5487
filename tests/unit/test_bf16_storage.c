/*
 * test_bf16_storage.c — the bf16 storage plan (dispatch.c rt_plan_storage,
 * issue 11): on the BERT test model at precision=bf16, opt_level 3, the
 * tensors between matmuls, attention and LayerNorm are kept bf16 and f32
 * <-> bf16 conversions remain only at the graph's edges (counted); every
 * kept tensor joins nodes of precision bf16 whose impls declared it
 * (op_impl.bf16_io); nothing is kept at fp32 or at opt_level 2; at int8
 * the attention's Q, K, V and output are kept bf16 between the int8
 * matmuls and the (bf16) attention kernel, and int8_exclude nodes falling
 * back to bf16 get it between themselves too; and runs match fp32 closely. Where oneDNN runs
 * without AVX-512 (ONEDNN_MAX_CPU_ISA=AVX2) its matmuls stay f32 and nothing is kept: the counting
 * tests skip there.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../test_main.h"
#include "core/cpu.h"
#include "ir/ir.h"
#include "runtime/runtime.h"
#include "test_bert_plan.h"

/* the exclude list's nodes fall back to bf16 */
static mopt_model *load(const char *precision, int opt_level, const char *exclude) {
    return bert_load(precision, opt_level, exclude, "bf16");
}

static bool bf16_machine(void) {
    const cpu_features *f = cpu_get();
    return f->bf16_compute && f->avx512f && f->avx512bw;
}

MOPT_TEST(encoder_conversions_only_at_edges) {
    if (!bf16_machine()) skip(); /* no bf16 kernels: precision=bf16 runs f32 */
    mopt_model *m = load("bf16", 3, NULL);
    if (!m->bf16_store) {
        mopt_model_destroy(m);
        skip(); /* oneDNN without AVX-512 (ONEDNN_MAX_CPU_ISA): matmuls run f32 */
    }
    int32_t stored, to_bf16, to_f32;
    rt_storage_counts(m, &stored, &to_bf16, &to_f32);
    /* 2 layers x 7 tensors (Q, K, V as one packed product (fuse_qkv),
     * attention out, out-projection + residual, LN1, FFN up, FFN down +
     * residual, LN2), less the last LN2 (a graph output), plus the
     * embeddings' LayerNorm output */
    assert_int_equal(stored, 14);
    assert_int_equal(bert_check_kept(m, false), 14);
    /* edges: the embeddings' LayerNorm reads the f32 sum of two Gathers; the
     * pooler reads the CLS row of last_hidden_state (a graph output) */
    assert_int_equal(to_bf16, 2);
    /* edges: last_hidden_state (LayerNorm) and pooler_output (FusedMatMul) */
    assert_int_equal(to_f32, 2);
    /* every FusedMatMul and Attention of the layers reads bf16 activations */
    const ir_graph *g = m->graph;
    int32_t bf16_reads = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (strcmp(n->op_type, "Attention") && strcmp(n->op_type, "FusedMatMul")) continue;
        if (strstr(n->name, "pool")) continue;
        assert_true(m->bf16_store[n->inputs[0]]);
        bf16_reads++;
    }
    assert_int_equal(bf16_reads, 2 * (4 + 1)); /* QKV, out, FFN up, down; attention */
    mopt_model_destroy(m);
}

MOPT_TEST(nothing_kept_without_bf16) {
    static const bert_config cfgs[] = {{"fp32", 3}, {"bf16", 2}, {"int8", 2}};
    bert_expect_none_kept(cfgs, sizeof cfgs / sizeof cfgs[0], false);
}

/* precision=int8: Q, K, V (one int8 matmul's packed output, fuse_qkv) and
 * the attention's output (read by the int8 out-projection) kept bf16,
 * nothing else */
MOPT_TEST(int8_attention_bf16) {
    if (!bf16_machine()) skip();
    mopt_model *m = load("int8", 3, NULL);
    if (!m->bf16_store) {
        mopt_model_destroy(m);
        skip(); /* no oneDNN int8 matmul here */
    }
    assert_int_equal(bert_check_kept(m, false), 2 * 2);
    const ir_graph *g = m->graph;
    int32_t attention = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (strcmp(n->op_type, "Attention")) continue;
        for (int k = 0; k < 3; k++)
            assert_true(m->bf16_store[n->inputs[k]]);
        assert_true(m->bf16_store[n->outputs[0]]);
        attention++;
    }
    assert_int_equal(attention, 2);
    mopt_model_destroy(m);
}

/* precision=int8 with a layer's matmuls excluded to bf16: tensors between
 * those bf16 nodes may be kept too, never next to an fp32 node */
MOPT_TEST(per_layer_precision) {
    if (!bf16_machine()) skip();
    mopt_model *m = load(
        "int8", 3, "/layers.1/fc1/MatMul,/layers.1/fc2/MatMul,/layers.1/ln1/LayerNormalization");
    int32_t kept = bert_check_kept(m, false);
    int32_t bf16_nodes = 0;
    for (int32_t i = 0; i < m->graph->n_nodes; i++)
        bf16_nodes += m->plans[i].precision == OP_PREC_BF16;
    assert_int_equal(bf16_nodes, 3);
    if (!m->bf16_store) {
        mopt_model_destroy(m);
        skip(); /* oneDNN without AVX-512: the bf16 nodes run f32 */
    }
    /* LN1 -> fc1 (and fc2's residual), fc1 -> fc2, the int8 out-projection
     * -> LN1 of layer 1; the packed Q, K, V and the attention's output of
     * both layers */
    assert_int_equal(kept, 3 + 2 * 2);
    const ir_graph *g = m->graph;
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i]->name, "/layers.1/ln1/LayerNormalization") == 0)
            assert_true(m->bf16_store[g->nodes[i]->inputs[0]]);
    mopt_model_destroy(m);
}

/* bf16 storage runs: outputs close to fp32 (cosine), and equal across runs */
MOPT_TEST(runs_match_fp32) {
    if (!bf16_machine()) skip();
    mopt_model *ms[2] = {load("fp32", 3, NULL), load("bf16", 3, NULL)};
    enum { B = BERT_B, S = BERT_S, H = BERT_H };
    float out[3][B * S * H];
    for (int r = 0; r < 3; r++)
        bert_run(ms[r ? 1 : 0], out[r], 1);
    double dot = 0, na = 0, nb = 0;
    bool differs = false;
    for (int i = 0; i < B * S * H; i++) {
        dot += (double)out[0][i] * out[1][i];
        na += (double)out[0][i] * out[0][i];
        nb += (double)out[1][i] * out[1][i];
        differs |= out[0][i] != out[1][i];
        assert_true(out[1][i] == out[2][i]);
    }
    double cos = dot / sqrt(na * nb);
    print_message("bf16 vs fp32 cosine %.6f\n", cos);
    assert_true(cos >= 0.999);
    assert_true(differs); /* it really ran in bf16 */
    mopt_model_destroy(ms[0]);
    mopt_model_destroy(ms[1]);
}

MOPT_TEST_MAIN(cmocka_unit_test(encoder_conversions_only_at_edges),
               cmocka_unit_test(nothing_kept_without_bf16), cmocka_unit_test(int8_attention_bf16),
               cmocka_unit_test(per_layer_precision), cmocka_unit_test(runs_match_fp32))
