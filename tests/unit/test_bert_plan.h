/*
 * test_bert_plan.h — shared by the storage-plan tests (test_bf16_storage,
 * test_storage_fallback): the BERT test model loaded at a precision and opt
 * level, with an optional int8_exclude list and the precision its nodes fall
 * back to (NULL: the default, fp32); the storage plan's invariants, and
 * that configurations keep nothing in a storage; and a run on fixed inputs.
 * Include after <cmocka.h>.
 */
#ifndef MOPT_TESTS_UNIT_TEST_BERT_PLAN_H
#define MOPT_TESTS_UNIT_TEST_BERT_PLAN_H

#include <stdbool.h>

#include <mopt/mopt.h>

#include "ir/ir.h"
#include "runtime/runtime.h"

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

/* Is value v a graph output? */
static inline bool bert_graph_output(const ir_graph *g, int32_t v) {
    for (int32_t k = 0; k < g->n_outputs; k++)
        if (g->outputs[k] == v) return true;
    return false;
}

/* A load configuration: precision and opt level. */
typedef struct {
    const char *precision;
    int opt_level;
} bert_config;

/* Loaded with each of the n configurations, the model keeps nothing in u8
 * storage (u8) or in bf16 storage (!u8); a failure names the configuration. */
static inline void bert_expect_none_kept(const bert_config *cfgs, size_t n, bool u8) {
    for (size_t c = 0; c < n; c++) {
        mopt_model *m = bert_load(cfgs[c].precision, cfgs[c].opt_level, NULL, NULL);
        const bool *store = u8 ? m->u8_store : m->bf16_store;
        mopt_model_destroy(m);
        if (store)
            fail_msg("precision %s, opt_level %d: %s storage kept", cfgs[c].precision,
                     cfgs[c].opt_level, u8 ? "u8" : "bf16");
    }
}

/* Every tensor kept in bf16 (u8: as a u8 rows block) is an f32
 * intermediate (no initializer, no graph output), written by a node that
 * declared the output and read only by nodes that declared the input; none
 * of those nodes runs fp32. u8 also: they all run int8, the tensor is read
 * and not kept bf16 too, and the count is rt_storage_u8_count's. Returns how
 * many are kept. */
static inline int32_t bert_check_kept(const mopt_model *m, bool u8) {
    const ir_graph *g = m->graph;
    const bool *store = u8 ? m->u8_store : m->bf16_store;
    int32_t kept = 0;
    for (int32_t v = 0; store && v < g->n_values; v++) {
        if (!store[v]) continue;
        kept++;
        const ir_value *val = g->values[v];
        assert_int_equal(val->dtype, MOPT_DTYPE_F32);
        assert_false(val->flags & IR_VALUE_INITIALIZER);
        assert_false(bert_graph_output(g, v));
        if (u8) assert_false(m->bf16_store && m->bf16_store[v]);
        assert_true(val->producer >= 0);
        const rt_node_plan *pp = &m->plans[val->producer];
        const ir_node *pn = g->nodes[val->producer];
        if (u8)
            assert_int_equal(pp->precision, OP_PREC_INT8);
        else
            assert_int_not_equal(pp->precision, OP_PREC_FP32);
        for (int32_t k = 0; k < pn->n_outputs; k++)
            if (pn->outputs[k] == v) assert_true((u8 ? pp->u8_out : pp->bf16_out) >> k & 1u);
        int32_t readers = 0;
        for (int32_t i = 0; i < g->n_nodes; i++)
            for (int32_t k = 0; k < g->nodes[i]->n_inputs; k++)
                if (g->nodes[i]->inputs[k] == v) {
                    const rt_node_plan *rp = &m->plans[i];
                    if (u8)
                        assert_int_equal(rp->precision, OP_PREC_INT8);
                    else
                        assert_int_not_equal(rp->precision, OP_PREC_FP32);
                    assert_true((u8 ? rp->u8_in : rp->bf16_in) >> k & 1u);
                    readers++;
                }
        if (u8) assert_true(readers > 0);
    }
    if (u8) assert_int_equal(kept, rt_storage_u8_count(m));
    return kept;
}

/* The test batch: BERT_B sequences of BERT_S tokens; hidden size BERT_H. */
enum { BERT_B = 2, BERT_S = 16, BERT_H = 64 };

/* `runs` runs of one session (the later ones use the memory plan of the
 * first) on fixed token ids and mask; last_hidden_state [BERT_B, BERT_S,
 * BERT_H] into out. */
static inline void bert_run(mopt_model *m, float *out, int runs) {
    enum { B = BERT_B, S = BERT_S, H = BERT_H };
    int64_t ids[B * S], mask[B * S];
    for (int i = 0; i < B * S; i++)
        ids[i] = (i * 37 + 11) % 100, mask[i] = i % S < 13;
    int64_t dims[2] = {B, S}, ydims[3] = {B, S, H}, pdims[2] = {B, H};
    static float pooled[B * H];
    mopt_session *s = NULL;
    assert_int_equal(mopt_session_create(m, NULL, &s), MOPT_OK);
    mopt_tensor *in[2] = {NULL, NULL}, *y[2] = {NULL, NULL};
    assert_int_equal(mopt_tensor_wrap(MOPT_DTYPE_I64, 2, dims, ids, sizeof ids, &in[0]), MOPT_OK);
    assert_int_equal(mopt_tensor_wrap(MOPT_DTYPE_I64, 2, dims, mask, sizeof mask, &in[1]), MOPT_OK);
    assert_int_equal(
        mopt_tensor_wrap(MOPT_DTYPE_F32, 3, ydims, out, (size_t)B * S * H * sizeof(float), &y[0]),
        MOPT_OK);
    assert_int_equal(mopt_tensor_wrap(MOPT_DTYPE_F32, 2, pdims, pooled, sizeof pooled, &y[1]),
                     MOPT_OK);
    for (int r = 0; r < runs; r++)
        assert_int_equal(mopt_session_run(s, 2, NULL, (const mopt_tensor *const *)in, 2, NULL, y),
                         MOPT_OK);
    for (int k = 0; k < 2; k++)
        mopt_tensor_destroy(in[k]), mopt_tensor_destroy(y[k]);
    mopt_session_destroy(s);
}

#endif
