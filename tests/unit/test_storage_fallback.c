/*
 * test_storage_fallback.c — the int8 half of the storage plan (dispatch.c
 * plan_u8, issue 11) and the executor's f32 fallback under both halves. On
 * the BERT test model at precision=int8, opt_level 3, the FFN's
 * FusedMatMul+Gelu output is kept as a u8 rows block (kernels/cpu/rowquant.h)
 * between the two int8 matmuls that declared it (op_impl.u8_io), as are
 * the LayerNorms' copies of Y for int8 matmuls (test_ln_u8.c), never at
 * fp32/bf16 or opt_level 2, and not where int8_exclude sends a side to
 * another precision. Then a node whose chosen impl declines at run time (a
 * test impl swapped into its plan) runs its fallbacks on f32 copies: bf16
 * inputs widened and bf16 outputs narrowed back (precision=bf16), u8 rows
 * dequantized for a consumer and quantized after a producer (precision=int8);
 * outputs stay close to fp32 and the declining run was really taken.
 * Without oneDNN's int8/bf16 kernels (no AVX-512 / VNNI) nothing is kept
 * and the tests skip.
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

#include "core/cpu.h"
#include "ir/ir.h"
#include "runtime/runtime.h"
#include "test_bert_plan.h"
#include "tests/test_main.h"

enum { B = BERT_B, S = BERT_S, H = BERT_H };

/* the exclude list's nodes fall back to fp32 */
static mopt_model *load(const char *precision, int opt_level, const char *exclude) {
    return bert_load(precision, opt_level, exclude, NULL);
}

static int32_t node_named(const mopt_model *m, const char *name) {
    for (int32_t i = 0; i < m->graph->n_nodes; i++)
        if (strcmp(m->graph->nodes[i]->name, name) == 0) return i;
    fail_msg("no node '%s'", name);
    return -1;
}

static void ffn_kept_u8(void **state) {
    (void)state;
    mopt_model *m = load("int8", 3, NULL);
    if (!m->u8_store) {
        mopt_model_destroy(m);
        skip(); /* no oneDNN int8 matmul here */
    }
    /* per layer: fc1 (+ Gelu) -> fc2; and the copies of Y of the 4
     * LayerNorms that feed an int8 matmul besides a residual (the
     * embeddings', each layer's first, layer 0's second: pass_ln_copy.c) */
    assert_int_equal(bert_check_kept(m, true), 2 + 4);
    for (int l = 0; l < 2; l++) {
        char name[64];
        snprintf(name, sizeof name, "/layers.%d/fc2/MatMul", l);
        const ir_node *fc2 = m->graph->nodes[node_named(m, name)];
        assert_true(m->u8_store[fc2->inputs[0]]);
    }
    mopt_model_destroy(m);
}

static void nothing_kept_u8_elsewhere(void **state) {
    (void)state;
    static const bert_config cfgs[] = {{"fp32", 3}, {"bf16", 3}, {"int8", 2}};
    bert_expect_none_kept(cfgs, sizeof cfgs / sizeof cfgs[0], true);
}

/* int8_exclude sends layer 1's fc2 to fp32: its input stays f32 */
static void per_layer_precision_u8(void **state) {
    (void)state;
    mopt_model *m = load("int8", 3, "/layers.1/fc2/MatMul");
    if (!m->u8_store) {
        mopt_model_destroy(m);
        skip();
    }
    assert_int_equal(bert_check_kept(m, true), 1 + 4);
    const ir_node *fc2 = m->graph->nodes[node_named(m, "/layers.1/fc2/MatMul")];
    assert_int_equal(m->plans[node_named(m, "/layers.1/fc2/MatMul")].precision, OP_PREC_FP32);
    assert_false(m->u8_store[fc2->inputs[0]]);
    mopt_model_destroy(m);
}

static double cosine(const float *a, const float *b, int n) {
    double dot = 0, na = 0, nb = 0;
    for (int i = 0; i < n; i++) {
        assert_true(isfinite(a[i]) && isfinite(b[i]));
        dot += (double)a[i] * b[i];
        na += (double)a[i] * a[i];
        nb += (double)b[i] * b[i];
    }
    return dot / sqrt(na * nb);
}

/* The test impl: its node's chosen impl as prepared, whose run declines. */
static op_impl g_declining;
static int g_declined;

static mopt_status decline_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    (void)ctx, (void)in, (void)n_in, (void)out, (void)n_out;
    g_declined++;
    return MOPT_ERR_UNSUPPORTED;
}

/* Runs m with node `name`'s chosen impl declining; out gets the output.
 * Returns the node's plan (for what it keeps). */
static const rt_node_plan *run_declining(mopt_model *m, const char *name, float *out) {
    rt_node_plan *p = &m->plans[node_named(m, name)];
    assert_non_null(p->impl);
    const op_impl *chosen = p->impl;
    g_declining = *chosen;
    g_declining.run = decline_run;
    g_declined = 0;
    p->impl = &g_declining;
    bert_run(m, out, 2);
    p->impl = chosen;
    assert_int_equal(g_declined, 2); /* it was asked, and declined, on both runs */
    return p;
}

/* The fp32 model (*fp) and the model at `precision` (bf16 or int8, which
 * keeps tensors in bf16 or u8 storage), loaded at opt_level 3 and run into
 * ref and normal. Skips the test when the precision keeps nothing (no bf16
 * kernels, no oneDNN int8 matmul here). */
static mopt_model *load_both(const char *precision, mopt_model **fp, float *ref, float *normal) {
    *fp = load("fp32", 3, NULL);
    mopt_model *m = load(precision, 3, NULL);
    if (!(strcmp(precision, "int8") == 0 ? m->u8_store : m->bf16_store)) {
        mopt_model_destroy(*fp);
        mopt_model_destroy(m);
        skip();
    }
    bert_run(*fp, ref, 2);
    bert_run(m, normal, 2);
    return m;
}

/* precision=bf16: an out-projection FusedMatMul reads bf16 A and residual
 * and writes bf16; declined, the reference runs on f32 copies */
static void bf16_fallback_f32(void **state) {
    (void)state;
    static float ref[B * S * H], normal[B * S * H], declined[B * S * H];
    mopt_model *fp, *m = load_both("bf16", &fp, ref, normal);
    const char *name = "/layers.0/attn/out/MatMul";
    const ir_node *n = m->graph->nodes[node_named(m, name)];
    assert_true(m->bf16_store[n->inputs[0]] && m->bf16_store[n->outputs[0]]);
    run_declining(m, name, declined);
    double c_ref = cosine(ref, declined, B * S * H), c_norm = cosine(normal, declined, B * S * H);
    print_message("bf16, out-projection declined: cosine vs fp32 %.6f, vs bf16 %.6f\n", c_ref,
                  c_norm);
    assert_true(c_ref >= 0.999);
    assert_true(c_norm >= 0.999);
    mopt_model_destroy(fp);
    mopt_model_destroy(m);
}

/* precision=int8: fc2 reads a u8 rows block, fc1 writes one; each declined
 * in turn, the reference runs on f32 (fc2's input dequantized, fc1's output
 * quantized after it) */
static void u8_fallback_f32(void **state) {
    (void)state;
    static float ref[B * S * H], normal[B * S * H], declined[B * S * H];
    mopt_model *fp, *m = load_both("int8", &fp, ref, normal);
    double c_int8 = cosine(ref, normal, B * S * H);
    print_message("int8 with u8 storage: cosine vs fp32 %.6f\n", c_int8);
    assert_true(c_int8 >= 0.999);
    const char *names[2] = {"/layers.1/fc2/MatMul", "/layers.0/fc1/MatMul"};
    for (int t = 0; t < 2; t++) {
        const ir_node *n = m->graph->nodes[node_named(m, names[t])];
        assert_true(t == 0 ? m->u8_store[n->inputs[0]] : m->u8_store[n->outputs[0]]);
        run_declining(m, names[t], declined);
        double c_ref = cosine(ref, declined, B * S * H);
        double c_norm = cosine(normal, declined, B * S * H);
        print_message("int8, %s declined: cosine vs fp32 %.6f, vs int8 %.6f\n", names[t], c_ref,
                      c_norm);
        assert_true(c_ref >= 0.999);
        assert_true(c_norm >= 0.999);
        /* the node ran in f32 instead: not the int8 result bit for bit */
        assert_memory_not_equal(normal, declined, sizeof normal);
    }
    mopt_model_destroy(fp);
    mopt_model_destroy(m);
}

MOPT_TEST_MAIN(cmocka_unit_test(ffn_kept_u8), cmocka_unit_test(nothing_kept_u8_elsewhere),
               cmocka_unit_test(per_layer_precision_u8), cmocka_unit_test(bf16_fallback_f32),
               cmocka_unit_test(u8_fallback_f32))
