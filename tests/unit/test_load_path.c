/*
 * test_load_path.c — the load path's index structures against their plain
 * definitions, on random graphs:
 *   - the use index (ir_uses): after any mix of replacements, recorded and
 *     direct input edits and dead nodes, replacing through the index leaves
 *     the same inputs as a sweep of the whole graph (ir_graph_replace_uses);
 *   - the memory planner (rt_memplan): no two values alive at the same node
 *     share a byte, and while at most 256 values are alive at once the
 *     placement is exactly the plain greedy one (largest first, lowest
 *     offset between the overlapping ones), written out here in O(n^2).
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
#include "ir/ir.h"
#include "runtime/runtime.h"

static uint32_t rng_state;
static uint32_t rnd(uint32_t n) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state % n;
}

/* A random DAG: n_in graph inputs, n_nodes nodes of 1..3 inputs (earlier
 * values) and one output each; the last `n_out` node outputs are graph
 * outputs, plus `extra_out` random ones. */
static ir_graph *random_graph(int32_t n_in, int32_t n_nodes, int32_t n_out, int32_t extra_out,
                              int32_t window) {
    ir_graph *g = ir_graph_create();
    assert_non_null(g);
    char name[32];
    for (int32_t i = 0; i < n_in; i++) {
        snprintf(name, sizeof name, "in%d", (int)i);
        int32_t v = ir_graph_value(g, name);
        g->values[v]->flags |= IR_VALUE_INPUT;
    }
    g->inputs = mopt_malloc((size_t)n_in * sizeof *g->inputs);
    for (int32_t i = 0; i < n_in; i++)
        g->inputs[i] = i;
    g->n_inputs = n_in;
    for (int32_t i = 0; i < n_nodes; i++) {
        int32_t k_in = 1 + (int32_t)rnd(3);
        snprintf(name, sizeof name, "n%d", (int)i);
        ir_node *n = ir_graph_add_node(g, "Op", "", name, k_in, 1);
        assert_non_null(n);
        for (int32_t k = 0; k < k_in; k++) {
            int32_t avail = g->n_values, lo = avail > window ? avail - window : 0;
            n->inputs[k] = lo + (int32_t)rnd((uint32_t)(avail - lo));
        }
        snprintf(name, sizeof name, "v%d", (int)i);
        n->outputs[0] = ir_graph_value(g, name);
    }
    g->outputs = mopt_malloc((size_t)(n_out + extra_out) * sizeof *g->outputs);
    for (int32_t i = 0; i < n_out + extra_out; i++) {
        int32_t v = i < n_out ? g->n_values - 1 - i : n_in + (int32_t)rnd((uint32_t)n_nodes);
        g->outputs[g->n_outputs++] = v;
        g->values[v]->flags |= IR_VALUE_OUTPUT;
    }
    assert_int_equal(ir_graph_check(g), MOPT_OK);
    return g;
}

static void assert_same_inputs(const ir_graph *a, const ir_graph *b) {
    assert_int_equal(a->n_nodes, b->n_nodes);
    for (int32_t i = 0; i < a->n_nodes; i++) {
        assert_int_equal(a->nodes[i]->n_inputs, b->nodes[i]->n_inputs);
        assert_memory_equal(a->nodes[i]->inputs, b->nodes[i]->inputs,
                            (size_t)a->nodes[i]->n_inputs * sizeof(int32_t));
    }
}

MOPT_TEST(uses_match_sweep) {
    for (uint32_t seed = 1; seed <= 40; seed++) {
        rng_state = seed * 2654435761u;
        int32_t n_nodes = 20 + (int32_t)rnd(200);
        ir_graph *ref = random_graph(3, n_nodes, 2, 0, 8);
        rng_state = seed * 2654435761u;
        assert_int_equal(20 + (int32_t)rnd(200), n_nodes); /* the same draws: the same graph */
        ir_graph *g = random_graph(3, n_nodes, 2, 0, 8);
        assert_same_inputs(ref, g);
        ir_uses u;
        assert_int_equal(ir_uses_build(&u, g), MOPT_OK);
        int32_t replaced = 0;
        for (int step = 0; step < 300; step++) {
            uint32_t what = rnd(10);
            int32_t nv = g->n_values;
            if (what < 5) { /* replace all uses of a value by another (maybe a new one) */
                int32_t from = (int32_t)rnd((uint32_t)nv), to = (int32_t)rnd((uint32_t)nv);
                if (rnd(8) == 0) {
                    char name[32];
                    snprintf(name, sizeof name, "new%d", step);
                    to = ir_graph_value(g, name);
                    assert_int_equal(ir_graph_value(ref, name), to);
                }
                ir_graph_replace_uses(ref, from, to);
                assert_int_equal(ir_uses_replace(&u, g, from, to), MOPT_OK);
                replaced++;
            } else if (what < 7) { /* a recorded edit: an input reads another value */
                int32_t i = (int32_t)rnd((uint32_t)g->n_nodes);
                int32_t k = (int32_t)rnd((uint32_t)g->nodes[i]->n_inputs);
                int32_t v = (int32_t)rnd((uint32_t)g->n_values);
                if (!ref->nodes[i]->dead) ref->nodes[i]->inputs[k] = v;
                if (!g->nodes[i]->dead)
                    assert_int_equal(ir_uses_set_input(&u, g, i, k, v), MOPT_OK);
            } else if (what < 8) { /* a direct edit that removes a use */
                int32_t i = (int32_t)rnd((uint32_t)g->n_nodes);
                int32_t k = (int32_t)rnd((uint32_t)g->nodes[i]->n_inputs);
                ref->nodes[i]->inputs[k] = -1;
                g->nodes[i]->inputs[k] = -1;
            } else if (what < 9) { /* a node dies: its inputs stay as they are */
                int32_t i = (int32_t)rnd((uint32_t)g->n_nodes);
                ref->nodes[i]->dead = true;
                g->nodes[i]->dead = true;
            } else { /* replace by "no value" */
                int32_t from = (int32_t)rnd((uint32_t)nv);
                ir_graph_replace_uses(ref, from, -1);
                assert_int_equal(ir_uses_replace(&u, g, from, -1), MOPT_OK);
            }
            assert_same_inputs(ref, g);
        }
        assert_true(replaced > 0);
        ir_uses_free(&u);
        ir_graph_destroy(ref);
        ir_graph_destroy(g);
    }
}

/* The plain greedy placement, O(n^2): what rt_memplan must reproduce. */
/* Each value's last use: the index of the last node reading it, n_nodes for
 * a graph output, -1 when unread (release with free). */
static int32_t *last_uses(const ir_graph *g) {
    int32_t *last = malloc((size_t)g->n_values * sizeof *last);
    assert_non_null(last);
    for (int32_t v = 0; v < g->n_values; v++)
        last[v] = -1;
    for (int32_t i = 0; i < g->n_nodes; i++)
        for (int32_t k = 0; k < g->nodes[i]->n_inputs; k++)
            if (g->nodes[i]->inputs[k] >= 0) last[g->nodes[i]->inputs[k]] = i;
    for (int32_t i = 0; i < g->n_outputs; i++)
        last[g->outputs[i]] = g->n_nodes;
    return last;
}

static size_t reference_plan(const ir_graph *g, const size_t *sizes, int64_t *offsets) {
    int32_t nv = g->n_values;
    int32_t *first = calloc((size_t)nv, sizeof *first), *last = last_uses(g);
    size_t *sz = calloc((size_t)nv, sizeof *sz);
    int32_t *order = calloc((size_t)nv, sizeof *order);
    bool *done = calloc((size_t)nv, sizeof *done);
    int32_t n = 0;
    for (int32_t v = 0; v < nv; v++)
        offsets[v] = -1;
    for (int32_t v = 0; v < nv; v++) {
        if (!sizes[v] || g->values[v]->producer < 0) continue;
        first[v] = g->values[v]->producer;
        if (last[v] < first[v]) last[v] = first[v];
        sz[v] = (sizes[v] + 63) & ~(size_t)63;
        order[n++] = v;
    }
    /* largest first, ties by value index (selection: small inputs only) */
    for (int32_t a = 0; a < n; a++)
        for (int32_t b = a + 1; b < n; b++)
            if (sz[order[b]] > sz[order[a]] ||
                (sz[order[b]] == sz[order[a]] && order[b] < order[a])) {
                int32_t t = order[a];
                order[a] = order[b];
                order[b] = t;
            }
    size_t total = 0;
    for (int32_t a = 0; a < n; a++) {
        int32_t v = order[a];
        size_t off = 0;
        for (bool moved = true; moved;) { /* lowest offset clear of every overlapping one */
            moved = false;
            for (int32_t w = 0; w < nv; w++) {
                if (!done[w] || first[w] > last[v] || first[v] > last[w]) continue;
                if ((size_t)offsets[w] < off + sz[v] && off < (size_t)offsets[w] + sz[w]) {
                    off = (size_t)offsets[w] + sz[w];
                    moved = true;
                }
            }
        }
        offsets[v] = (int64_t)off;
        done[v] = true;
        if (off + sz[v] > total) total = off + sz[v];
    }
    free(first);
    free(last);
    free(sz);
    free(order);
    free(done);
    return total;
}

/* No two planned values alive at a common node share a byte. */
static void assert_plan_valid(const ir_graph *g, const size_t *sizes, const int64_t *offsets,
                              size_t arena) {
    int32_t nv = g->n_values;
    int32_t *last = last_uses(g);
    for (int32_t v = 0; v < nv; v++) {
        int32_t fv = g->values[v]->producer;
        if (!sizes[v] || fv < 0) {
            assert_int_equal(offsets[v], -1);
            continue;
        }
        assert_true(offsets[v] >= 0 && offsets[v] % 64 == 0);
        assert_true((size_t)offsets[v] + sizes[v] <= arena);
        int32_t lv = last[v] > fv ? last[v] : fv;
        for (int32_t w = v + 1; w < nv; w++) {
            int32_t fw = g->values[w]->producer;
            if (!sizes[w] || fw < 0) continue;
            int32_t lw = last[w] > fw ? last[w] : fw;
            if (fw > lv || fv > lw) continue;
            bool disjoint = (size_t)offsets[v] + sizes[v] <= (size_t)offsets[w] ||
                            (size_t)offsets[w] + sizes[w] <= (size_t)offsets[v];
            assert_true(disjoint);
        }
    }
    free(last);
}

MOPT_TEST(memplan_matches_greedy) {
    for (uint32_t seed = 1; seed <= 60; seed++) {
        rng_state = seed * 40503u + 7u;
        int32_t n_nodes = 10 + (int32_t)rnd(300);
        /* wide reuse windows give long lifetimes; a few extra outputs live to the end */
        ir_graph *g =
            random_graph(2, n_nodes, 1 + (int32_t)rnd(3), (int32_t)rnd(6), 1 + (int32_t)rnd(64));
        size_t *sizes = calloc((size_t)g->n_values, sizeof *sizes);
        int64_t *got = calloc((size_t)g->n_values, sizeof *got);
        int64_t *want = calloc((size_t)g->n_values, sizeof *want);
        for (int32_t v = 0; v < g->n_values; v++)
            sizes[v] = rnd(5) == 0 ? 0 : 1 + rnd(rnd(2) ? 5000 : 300000);
        size_t arena = 0;
        assert_int_equal(rt_memplan(g, sizes, NULL, got, &arena, NULL), MOPT_OK);
        assert_plan_valid(g, sizes, got, arena);
        size_t want_arena = reference_plan(g, sizes, want);
        assert_int_equal(arena, want_arena);
        assert_memory_equal(got, want, (size_t)g->n_values * sizeof *got);
        free(sizes);
        free(got);
        free(want);
        ir_graph_destroy(g);
    }
}

/* Thousands of values alive at once (every node output is a graph output):
 * the planner stacks values past the overlap cap; the plan stays valid and
 * no larger than the sum of the sizes. */
MOPT_TEST(memplan_wide_graph) {
    rng_state = 12345u;
    int32_t n_nodes = 3000;
    ir_graph *g = random_graph(1, n_nodes, n_nodes, 0, 4);
    size_t *sizes = calloc((size_t)g->n_values, sizeof *sizes);
    int64_t *got = calloc((size_t)g->n_values, sizeof *got);
    size_t sum = 0;
    for (int32_t v = 0; v < g->n_values; v++) {
        sizes[v] = 1 + rnd(1000);
        if (g->values[v]->producer >= 0) sum += (sizes[v] + 63) & ~(size_t)63;
    }
    size_t arena = 0;
    assert_int_equal(rt_memplan(g, sizes, NULL, got, &arena, NULL), MOPT_OK);
    assert_plan_valid(g, sizes, got, arena);
    assert_true(arena <= sum);
    free(sizes);
    free(got);
    ir_graph_destroy(g);
}

MOPT_TEST_MAIN(cmocka_unit_test(uses_match_sweep), cmocka_unit_test(memplan_matches_greedy),
               cmocka_unit_test(memplan_wide_graph))
