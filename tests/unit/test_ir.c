/*
 * test_ir.c — unit tests of the IR: value lookup, node creation, checking
 * (undefined inputs, cycles, double producers) and topological ordering.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../test_main.h"
#include "core/alloc.h"
#include "core/error.h"
#include "ir/ir.h"
#include "passes/passes.h"

static ir_node *add(ir_graph *g, const char *op, const char *name, const char *in0, const char *in1,
                    const char *out) {
    ir_node *n = ir_graph_add_node(g, op, "", name, in1 ? 2 : 1, 1);
    n->inputs[0] = ir_graph_value(g, in0);
    if (in1) n->inputs[1] = ir_graph_value(g, in1);
    n->outputs[0] = ir_graph_value(g, out);
    return n;
}

/* A graph whose one graph input is the value "x". */
static ir_graph *graph_with_input_x(void) {
    ir_graph *g = ir_graph_create();
    assert_non_null(g);
    int32_t x = ir_graph_value(g, "x"); /* may grow g->values: read it after */
    g->values[x]->flags |= IR_VALUE_INPUT;
    return g;
}

MOPT_TEST(ir_value_lookup) {
    ir_graph *g = ir_graph_create();
    assert_non_null(g);
    char name[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "v%d", i);
        assert_int_equal(ir_graph_value(g, name), i);
    }
    assert_int_equal(ir_graph_find_value(g, "v567"), 567);
    assert_int_equal(ir_graph_value(g, "v567"), 567);
    assert_int_equal(ir_graph_find_value(g, "nope"), -1);
    ir_graph_destroy(g);
}

/* ir_graph_check refuses g as an invalid model, with a message naming what. */
static void check_refuses(ir_graph *g, const char *what) {
    assert_int_equal(ir_graph_check(g), MOPT_ERR_INVALID_MODEL);
    assert_non_null(strstr(mopt_error_message(), what));
}

MOPT_TEST(ir_check_sorts_nodes) {
    ir_graph *g = graph_with_input_x();
    add(g, "Relu", "second", "a", NULL, "b");
    add(g, "Relu", "first", "x", NULL, "a");
    assert_int_equal(ir_graph_check(g), MOPT_OK);
    assert_string_equal(g->nodes[0]->name, "first");
    assert_string_equal(g->nodes[1]->name, "second");
    assert_int_equal(g->values[ir_graph_find_value(g, "b")]->producer, 1);
    ir_graph_destroy(g);
}

MOPT_TEST(ir_check_rejects_cycle) {
    ir_graph *g = graph_with_input_x();
    add(g, "Add", "n1", "x", "b", "a");
    add(g, "Relu", "n2", "a", NULL, "b");
    check_refuses(g, "cycle");
    ir_graph_destroy(g);
}

MOPT_TEST(ir_check_rejects_undefined_input) {
    ir_graph *g = ir_graph_create();
    add(g, "Relu", "lonely", "ghost", NULL, "y");
    check_refuses(g, "ghost");
    assert_non_null(strstr(mopt_error_message(), "lonely"));
    ir_graph_destroy(g);
}

MOPT_TEST(ir_check_rejects_double_producer) {
    ir_graph *g = graph_with_input_x();
    add(g, "Relu", "p1", "x", NULL, "y");
    add(g, "Relu", "p2", "x", NULL, "y");
    check_refuses(g, "produced twice");
    ir_graph_destroy(g);
}

MOPT_TEST(ir_shape_format) {
    ir_graph *g = ir_graph_create();
    ir_shape s;
    int64_t d[3] = {0, 0, 768};
    ir_shape_set(&s, 3, d);
    s.syms[0] = ir_graph_symbol(g, "batch");
    s.syms[1] = -1;
    char buf[IR_SHAPE_STR_CAP];
    assert_string_equal(ir_shape_str(&s, g, buf, sizeof buf), "[batch,?,768]");
    assert_int_equal(ir_graph_symbol(g, "batch"), s.syms[0]);
    assert_false(ir_shape_is_concrete(&s));
    assert_int_equal(ir_shape_numel(&s), -1);
    int64_t big[2] = {INT64_MAX / 2, 4};
    assert_int_equal(ir_numel(2, big), -1);
    ir_graph_destroy(g);
}

/* A node's name, op_type and domain and a value's name live in the node's
 * (value's) own block; replacing them frees only what was separately
 * allocated (ASan and glibc reject a free of a pointer into the block). */
MOPT_TEST(ir_strings_replaced) {
    ir_graph *g = ir_graph_create();
    assert_non_null(g);
    ir_node *n = ir_graph_add_node(g, "Relu", "", "first", 1, 1);
    assert_non_null(n);
    assert_string_equal(n->name, "first");
    assert_string_equal(n->op_type, "Relu");
    assert_string_equal(n->domain, "");
    ir_node_set_str(n, &n->op_type, mopt_strdup("Attention"));
    ir_node_set_str(n, &n->domain, mopt_strdup("mopt"));
    ir_node_set_str(n, &n->domain, mopt_strdup("mopt2")); /* a heap string replaced */
    assert_string_equal(n->name, "first");
    assert_string_equal(n->op_type, "Attention");
    assert_string_equal(n->domain, "mopt2");
    ir_node *m = ir_graph_add_node(g, "Add", NULL, NULL, 2, 1);
    assert_non_null(m);
    assert_string_equal(m->name, "");
    assert_string_equal(m->domain, "");
    ir_node_set_str(m, &m->name, mopt_strdup("renamed"));
    int32_t v = ir_graph_value(g, "x");
    assert_true(v >= 0);
    ir_value_set_name(g->values[v], mopt_strdup("x:u8"));
    assert_int_equal(ir_graph_reindex(g), 0);
    assert_int_equal(ir_graph_find_value(g, "x:u8"), v);
    assert_int_equal(ir_graph_find_value(g, "x"), -1);
    ir_value_set_name(g->values[v], mopt_strdup("x2"));
    ir_graph_destroy(g);
}

/* pass_cse on a graph large enough for its bucket sort (over 4096 nodes):
 * pairs of equal Adds (a Neg after some), each later one merged into the
 * earlier one and its consumer rewired. */
MOPT_TEST(cse_merges_pairs_in_large_graph) {
    enum { PAIRS = 3000 };
    ir_graph *g = ir_graph_create();
    assert_non_null(g);
    assert_int_equal(ir_graph_set_opset(g, "", 17), 0);
    int32_t x = ir_graph_value(g, "x");
    assert_true(x >= 0);
    g->values[x]->flags |= IR_VALUE_INPUT;
    int32_t first[PAIRS], later[PAIRS], relu[PAIRS];
    char nm[64];
    for (int i = 0; i < PAIRS; i++) {
        snprintf(nm, sizeof nm, "c%d", i);
        int32_t c = ir_graph_value(g, nm);
        assert_true(c >= 0);
        g->values[c]->flags |= IR_VALUE_INPUT;
        int32_t outs[2];
        for (int k = 0; k < 2; k++) {
            snprintf(nm, sizeof nm, "a%d_%d", i, k);
            outs[k] = ir_graph_value(g, nm);
            ir_node *n = ir_graph_add_node(g, "Add", "", nm, 2, 1);
            assert_non_null(n);
            n->inputs[0] = x, n->inputs[1] = c, n->outputs[0] = outs[k];
        }
        first[i] = outs[0], later[i] = outs[1];
        if (i % 2) { /* a Neg after the pair for odd pairs */
            snprintf(nm, sizeof nm, "mid%d", i);
            ir_node *n = ir_graph_add_node(g, "Neg", "", nm, 1, 1);
            assert_non_null(n);
            n->inputs[0] = c, n->outputs[0] = ir_graph_value(g, nm);
        }
        snprintf(nm, sizeof nm, "r%d", i);
        relu[i] = g->n_nodes;
        ir_node *r = ir_graph_add_node(g, "Relu", "", nm, 1, 1);
        assert_non_null(r);
        r->inputs[0] = later[i], r->outputs[0] = ir_graph_value(g, nm);
    }
    assert_true(g->n_nodes > 4096);
    pass_result res;
    memset(&res, 0, sizeof res);
    assert_int_equal(pass_cse(g, &res), MOPT_OK);
    assert_int_equal(res.rewrites, PAIRS);
    int dead = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        dead += n->dead;
        if (n->dead) { /* only the later Add of a pair */
            assert_string_equal(n->op_type, "Add");
            assert_int_equal(n->outputs[0] == later[atoi(n->name + 1)], 1);
        }
    }
    assert_int_equal(dead, PAIRS);
    for (int i = 0; i < PAIRS; i++)
        assert_int_equal(g->nodes[relu[i]]->inputs[0], first[i]);
    ir_graph_destroy(g);
}

/* ir_graph_reserve sizes the lists and the name index once: adding that
 * many values and nodes grows none of them, and every name is found. */
MOPT_TEST(ir_reserve_then_fill) {
    enum { N = 5000 };
    ir_graph *g = ir_graph_create();
    assert_non_null(g);
    assert_int_equal(ir_graph_value(g, "before"), 0);
    assert_int_equal(ir_graph_reserve(g, N + 1, N), 0);
    const void *values = g->values, *nodes = g->nodes, *hash = g->hash;
    size_t cap = g->hash_cap;
    assert_true(cap >= 2 * (N + 1));
    char nm[32];
    for (int i = 0; i < N; i++) {
        snprintf(nm, sizeof nm, "v%d", i);
        assert_int_equal(ir_graph_value(g, nm), i + 1);
        assert_non_null(ir_graph_add_node(g, "Relu", "", nm, 1, 1));
    }
    assert_ptr_equal(g->values, values);
    assert_ptr_equal(g->nodes, nodes);
    assert_ptr_equal(g->hash, hash);
    assert_int_equal(g->hash_cap, cap);
    assert_int_equal(ir_graph_find_value(g, "before"), 0);
    for (int i = 0; i < N; i += 7) {
        snprintf(nm, sizeof nm, "v%d", i);
        assert_int_equal(ir_graph_find_value(g, nm), i + 1);
    }
    assert_int_equal(ir_graph_find_value(g, "v5000"), -1);
    assert_int_equal(ir_graph_reserve(g, 10, 10), 0); /* smaller: nothing changes */
    assert_int_equal(g->hash_cap, cap);
    ir_graph_destroy(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ir_reserve_then_fill),
        cmocka_unit_test(cse_merges_pairs_in_large_graph),
        cmocka_unit_test(ir_strings_replaced),
        cmocka_unit_test(ir_value_lookup),
        cmocka_unit_test(ir_check_sorts_nodes),
        cmocka_unit_test(ir_check_rejects_cycle),
        cmocka_unit_test(ir_check_rejects_undefined_input),
        cmocka_unit_test(ir_check_rejects_double_producer),
        cmocka_unit_test(ir_shape_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
