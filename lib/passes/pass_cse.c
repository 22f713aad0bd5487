/*
 * pass_cse.c — common-subexpression elimination: two live nodes with the
 * same operator, inputs and attributes compute the same values, so the later
 * one's outputs are replaced by the earlier one's. Nodes with subgraphs and
 * non-deterministic operators are never merged; nodes writing graph outputs
 * are kept.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "passes/passes.h"

typedef struct sig {
    uint64_t hash;
    int32_t node;
} sig;

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 1099511628211ull; }

static uint64_t node_hash(const ir_node *n) {
    uint64_t h = 1469598103934665603ull;
    for (const char *p = n->op_type; *p; p++)
        h = mix(h, (unsigned char)*p);
    for (const char *p = n->domain; *p; p++)
        h = mix(h, (unsigned char)*p);
    h = mix(h, (uint64_t)n->n_inputs);
    for (int32_t k = 0; k < n->n_inputs; k++)
        h = mix(h, (uint64_t)(int64_t)n->inputs[k]);
    h = mix(h, (uint64_t)n->n_outputs);
    h = mix(h, (uint64_t)n->n_attrs);
    return h;
}

static int cmp_sig(const void *a, const void *b) {
    const sig *x = a, *y = b;
    if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
    return x->node - y->node;
}

static bool mergeable(const ir_node *n) {
    if (n->n_outputs < 1) return false;
    static const char *const k_random[] = {
        "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
        "Multinomial",  "Bernoulli",     "Dropout"};
    for (size_t i = 0; i < sizeof k_random / sizeof k_random[0]; i++)
        if (strcmp(n->op_type, k_random[i]) == 0) return false;
    for (int32_t k = 0; k < n->n_attrs; k++)
        if (n->attrs[k].type == IR_ATTR_GRAPH || n->attrs[k].type == IR_ATTR_GRAPHS) return false;
    return true;
}

static bool same_node(const ir_node *a, const ir_node *b) {
    if (strcmp(a->op_type, b->op_type) || strcmp(a->domain, b->domain)) return false;
    if (a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs || a->n_attrs != b->n_attrs)
        return false;
    if (memcmp(a->inputs, b->inputs, (size_t)a->n_inputs * sizeof *a->inputs) != 0) return false;
    for (int32_t k = 0; k < a->n_attrs; k++) {
        const ir_attr *other = ir_node_attr(b, a->attrs[k].name);
        if (!other || !ir_attr_equal(&a->attrs[k], other)) return false;
    }
    return true;
}

mopt_status pass_cse(ir_graph *g, pass_result *r) {
    int32_t merged = 0;
    sig *sigs = mopt_malloc((size_t)(g->n_nodes ? g->n_nodes : 1) * sizeof *sigs);
    if (!sigs) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory in CSE");
    /* Iterate to a fixed point: merging two nodes can make their consumers
     * identical. Each round is O(n log n). */
    for (int round = 0; round < 16; round++) {
        int32_t n_sigs = 0, merged_round = 0;
        for (int32_t i = 0; i < g->n_nodes; i++) {
            const ir_node *n = g->nodes[i];
            if (!n->dead && mergeable(n)) sigs[n_sigs++] = (sig){node_hash(n), i};
        }
        qsort(sigs, (size_t)n_sigs, sizeof *sigs, cmp_sig);
        for (int32_t a = 0; a < n_sigs; a++) {
            ir_node *first = g->nodes[sigs[a].node];
            if (first->dead) continue;
            for (int32_t b = a + 1; b < n_sigs && sigs[b].hash == sigs[a].hash; b++) {
                ir_node *dup = g->nodes[sigs[b].node];
                if (dup->dead || !same_node(first, dup)) continue;
                bool writes_output = false;
                for (int32_t k = 0; k < dup->n_outputs; k++)
                    if (dup->outputs[k] >= 0 &&
                        (g->values[dup->outputs[k]]->flags & IR_VALUE_OUTPUT))
                        writes_output = true;
                bool outputs_match = true;
                for (int32_t k = 0; k < dup->n_outputs; k++)
                    if (dup->outputs[k] >= 0 && first->outputs[k] < 0) outputs_match = false;
                if (writes_output || !outputs_match) continue;
                for (int32_t k = 0; k < dup->n_outputs; k++)
                    if (dup->outputs[k] >= 0)
                        ir_graph_replace_uses(g, dup->outputs[k], first->outputs[k]);
                dup->dead = true;
                merged_round++;
            }
        }
        merged += merged_round;
        if (!merged_round) break;
    }
    mopt_free(sigs);
    r->rewrites = merged;
    pass_note_add(r, merged, "duplicate nodes merged");
    return MOPT_OK;
}
