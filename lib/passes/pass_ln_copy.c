/*
 * pass_ln_copy.c — precision=int8 (opt_level 3, run by the model build after
 * the pass pipeline): a LayerNormalization whose Y feeds both int8 matmul
 * candidates (mopt.FusedMatMul reading Y as A, with a constant 2-D B, no
 * transA, not in int8_exclude) and other readers (a residual add, a graph
 * output) becomes mopt.LayerNormalization with a 4th output, a copy of Y
 * that those matmuls read instead. The runtime keeps that copy as a u8 rows
 * block (the storage plan, op_impl.u8_io) and the LayerNorm quantizes each
 * row right after normalizing it, so the matmuls do not read Y back and
 * quantize it themselves; the other readers still get Y in f32. The bytes
 * are cpu_rowq_from_f32's of Y: the same as the unfused int8 path.
 * A LayerNorm read only by such matmuls needs no copy: Y itself is kept u8.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "ops/normalization.h"
#include "ops/ops.h"
#include "passes/fusion.h"
#include "passes/passes.h"

/* Node n reads v as A of an int8 matmul (and nowhere else). */
static bool int8_reader(const ir_graph *g, const ir_node *n, int32_t v, const char *exclude) {
    if (n->dead || strcmp(n->domain, "mopt") != 0 || strcmp(n->op_type, "FusedMatMul") != 0 ||
        n->n_inputs < 2 || n->inputs[0] != v || n->inputs[1] < 0)
        return false;
    for (int32_t k = 1; k < n->n_inputs; k++)
        if (n->inputs[k] == v) return false;
    const ir_value *b = g->values[n->inputs[1]];
    return (b->flags & IR_VALUE_INITIALIZER) && b->shape.rank == 2 &&
           ir_node_attr_int(n, "transA", 0) == 0 && !pass_name_listed(exclude, n->name);
}

/* Counts the readers of v: *q int8 matmuls, *other the rest (slots and
 * graph outputs). */
static void count_readers(const ir_graph *g, int32_t v, const char *exclude, int32_t *q,
                          int32_t *other) {
    *q = *other = 0;
    for (int32_t i = 0; i < g->n_outputs; i++)
        *other += g->outputs[i] == v;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (n->dead) continue;
        if (int8_reader(g, n, v, exclude)) {
            (*q)++;
            continue;
        }
        for (int32_t k = 0; k < n->n_inputs; k++)
            *other += n->inputs[k] == v;
    }
}

static mopt_status rewrite(ir_graph *g, int32_t at, const char *exclude) {
    ir_node *n = g->nodes[at];
    int32_t y = n->outputs[0];
    char base[256];
    snprintf(base, sizeof base, "%s/int8", g->values[y]->name);
    int32_t c = ir_graph_new_value(g, base);
    if (c < 0) return MOPT_ERR_OUT_OF_MEMORY;
    int32_t *outs = mopt_realloc(n->outputs, 4 * sizeof *outs);
    char *dom = mopt_strdup("mopt");
    if (!outs || !dom) {
        if (outs) n->outputs = outs;
        mopt_free(dom);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory in pass ln_copy");
    }
    n->outputs = outs;
    for (int32_t k = n->n_outputs; k < 4; k++)
        outs[k] = -1;
    n->n_outputs = 4;
    outs[LN_COPY_OUT] = c;
    ir_node_set_str(n, &n->domain, dom);
    n->op = ops_find("LayerNormalization", "mopt");
    if (!n->op)
        return mopt_fail(MOPT_ERR_INTERNAL, "pass ln_copy: mopt.LayerNormalization is missing");
    ir_value *cv = g->values[c];
    cv->dtype = g->values[y]->dtype;
    cv->shape = g->values[y]->shape;
    cv->producer = at;
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (int8_reader(g, g->nodes[i], y, exclude)) g->nodes[i]->inputs[0] = c;
    return MOPT_OK;
}

mopt_status pass_ln_copy(ir_graph *g, const char *exclude, pass_result *r) {
    int32_t copies = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (n->dead || n->domain[0] || strcmp(n->op_type, "LayerNormalization") != 0 ||
            n->n_outputs < 1 || n->n_outputs > 3 || n->outputs[0] < 0 ||
            g->values[n->outputs[0]]->dtype != MOPT_DTYPE_F32)
            continue;
        /* normalized along the last axis alone: its rows are the u8 block's */
        int32_t rank = g->values[n->outputs[0]]->shape.rank;
        int64_t axis = ir_node_attr_int(n, "axis", -1);
        if (rank < 1 || (axis != -1 && axis != rank - 1)) continue;
        int32_t q, other;
        count_readers(g, n->outputs[0], exclude, &q, &other);
        if (!q || !other) continue;
        if (!copies && !fu_use_mopt_domain(g))
            return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory in pass ln_copy");
        mopt_status st = rewrite(g, i, exclude);
        if (st) return st;
        copies++;
    }
    r->rewrites = copies;
    if (copies) pass_note_add(r, copies, "LayerNorms with a copy of Y for int8 matmuls");
    return MOPT_OK;
}
