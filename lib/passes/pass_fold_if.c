/*
 * pass_fold_if.c — an If whose condition is known at load is replaced by
 * the branch it selects:
 *
 *     c (constant) ──► If ──► y          x ──► [then_branch nodes] ──► Identity ──► y
 *     x ────────────┘  (then_branch,
 *                       else_branch)
 *
 * The branch's nodes move into the enclosing graph (their attributes, and
 * nested subgraphs with them, are moved, not copied); its inputs (the If's
 * captured values, ir_subgraph.h) become the values the If read; its
 * initializers move along under fresh names; each If output is an Identity
 * of the branch's output, which `eliminate` removes unless it is a graph
 * output. The later passes then optimize the inlined nodes with the rest.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "ir/ir_subgraph.h"
#include "ops/ops.h"
#include "passes/passes.h"

/* The condition of If node n when it is a one-element bool constant:
 * 1 true, 0 false, -1 unknown. */
static int known_condition(const ir_graph *g, const ir_node *n) {
    if (n->n_inputs < 1 || n->inputs[0] < 0) return -1;
    const ir_value *c = g->values[n->inputs[0]];
    if (!(c->flags & IR_VALUE_INITIALIZER) || c->dtype != MOPT_DTYPE_BOOL || !c->data ||
        ir_shape_numel(&c->shape) != 1)
        return -1;
    return *(const uint8_t *)c->data ? 1 : 0;
}

/* Moves branch b of If node n into g (n is then dead). */
static mopt_status inline_branch(ir_graph *g, ir_node *n, ir_graph *b) {
    int32_t caps = ir_node_captures(n);
    if (b->n_inputs != caps || n->n_inputs != 1 + caps || b->n_outputs != n->n_outputs)
        return MOPT_OK; /* not the shape a bound If has: leave it to run time */
    const op_def *identity = ops_find("Identity", "");
    if (!identity) return mopt_fail(MOPT_ERR_INTERNAL, "no Identity operator");
    int32_t *map = mopt_malloc((size_t)(b->n_values ? b->n_values : 1) * sizeof *map);
    if (!map) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory folding If '%s'", n->name);
    for (int32_t v = 0; v < b->n_values; v++)
        map[v] = -1;
    for (int32_t k = 0; k < b->n_inputs; k++)
        map[b->inputs[k]] = n->inputs[1 + k];
    mopt_status st = MOPT_OK;
    for (int32_t v = 0; v < b->n_values && !st; v++) {
        ir_value *bv = b->values[v];
        if (map[v] >= 0 || !(bv->producer >= 0 || (bv->flags & IR_VALUE_INITIALIZER))) continue;
        int32_t nv = ir_graph_new_value(g, bv->name);
        if (nv < 0) {
            st = MOPT_ERR_OUT_OF_MEMORY;
            break;
        }
        ir_value *ov = g->values[nv];
        ov->dtype = bv->dtype;
        if (ir_shape_translate(&bv->shape, b, g, &ov->shape)) {
            st = MOPT_ERR_OUT_OF_MEMORY;
            break;
        }
        if (bv->flags & IR_VALUE_INITIALIZER) {
            ov->data = bv->data;
            ov->nbytes = bv->nbytes;
            ov->flags |= IR_VALUE_INITIALIZER | (bv->flags & IR_VALUE_BORROWED);
            bv->data = NULL;
            bv->nbytes = 0;
        }
        map[v] = nv;
    }
    for (int32_t i = 0; i < b->n_nodes && !st; i++) {
        ir_node *bn = b->nodes[i];
        ir_node *nn =
            ir_graph_add_node(g, bn->op_type, bn->domain, bn->name, bn->n_inputs, bn->n_outputs);
        if (!nn) {
            st = MOPT_ERR_OUT_OF_MEMORY;
            break;
        }
        for (int32_t k = 0; k < bn->n_inputs; k++)
            nn->inputs[k] = bn->inputs[k] >= 0 ? map[bn->inputs[k]] : -1;
        for (int32_t k = 0; k < bn->n_outputs; k++)
            nn->outputs[k] = bn->outputs[k] >= 0 ? map[bn->outputs[k]] : -1;
        nn->attrs = bn->attrs;
        nn->n_attrs = bn->n_attrs;
        bn->attrs = NULL;
        bn->n_attrs = 0;
        nn->op = bn->op;
    }
    for (int32_t k = 0; k < n->n_outputs && !st; k++) {
        if (n->outputs[k] < 0) continue;
        ir_node *id = ir_graph_add_node(g, "Identity", "", n->name, 1, 1);
        if (!id) {
            st = MOPT_ERR_OUT_OF_MEMORY;
            break;
        }
        id->inputs[0] = map[b->outputs[k]];
        id->outputs[0] = n->outputs[k];
        id->op = identity;
    }
    n->dead = true;
    mopt_free(map);
    return st;
}

mopt_status pass_fold_if(ir_graph *g, pass_result *r) {
    int32_t folded[2] = {0, 0};
    int32_t n_nodes = g->n_nodes; /* the inlined nodes are not visited */
    for (int32_t i = 0; i < n_nodes; i++) {
        ir_node *n = g->nodes[i];
        if (n->dead || n->domain[0] || strcmp(n->op_type, "If") != 0) continue;
        int c = known_condition(g, n);
        if (c < 0) continue;
        const ir_attr *a = ir_node_attr(n, c ? "then_branch" : "else_branch");
        if (!a || a->type != IR_ATTR_GRAPH || !a->g) continue;
        mopt_status st = inline_branch(g, n, a->g);
        if (st) return mopt_fail_context(st, "folding If '%s'", n->name);
        if (n->dead) folded[c]++;
    }
    if (!folded[0] && !folded[1]) return MOPT_OK;
    /* the inlined nodes were appended: back to topological order */
    mopt_status st = ir_graph_compact(g);
    if (!st) st = ir_graph_check(g);
    if (st) return st;
    r->rewrites = folded[0] + folded[1];
    pass_note_add(r, folded[1], "If to then_branch");
    pass_note_add(r, folded[0], "If to else_branch");
    return MOPT_OK;
}
