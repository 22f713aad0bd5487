/*
 * pass_fold_constants.c — evaluates, at load time, every node whose inputs
 * are all weights/constants (Constant nodes included), and Shape/Size nodes
 * whose input shape is fully known, turning their outputs into weights.
 * Results larger than FOLD_MAX_BYTES are left to run time, so a small
 * constant Expand cannot blow up the model; and one sweep adds at most
 * FOLD_MIN_BUDGET or the model's own weight bytes, whichever is larger, so
 * that many such nodes cannot either, nor past the load's memory_limit (the
 * rest runs at run time, under the session's memory_limit).
 */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "ops/bridge.h"
#include "ops/node_view.h"
#include "passes/passes.h"

#define FOLD_MAX_BYTES ((size_t)16 << 20)
#define FOLD_MIN_BUDGET ((size_t)64 << 20)

static bool is_const(const ir_value *v) { return (v->flags & IR_VALUE_INITIALIZER) != 0; }

static bool shape_only_op(const ir_node *n) {
    return n->domain[0] == '\0' &&
           (strcmp(n->op_type, "Shape") == 0 || strcmp(n->op_type, "Size") == 0);
}

/* Tries to fold node n; *folded tells whether it did. Errors only for real
 * failures (a constant computation that fails would fail at run time too).
 * *budget is the number of bytes folding may still add; a node whose
 * outputs exceed it stays. */
static mopt_status fold_node(ir_graph *g, ir_node *n, op_view *v, size_t *budget, bool *folded) {
    *folded = false;
    if (!n->op || n->n_outputs < 1 || n->n_inputs > OP_MAX_IO || n->n_outputs > OP_MAX_IO)
        return MOPT_OK;
    for (int32_t k = 0; k < n->n_attrs; k++)
        if (n->attrs[k].type == IR_ATTR_GRAPH || n->attrs[k].type == IR_ATTR_GRAPHS) return MOPT_OK;
    static const uint8_t dummy[8];
    bool shape_only = shape_only_op(n);
    for (int32_t k = 0; k < n->n_inputs; k++) {
        int32_t vi = n->inputs[k];
        if (vi < 0) continue;
        const ir_value *val = g->values[vi];
        if (shape_only && k == 0) {
            if (val->dtype == MOPT_DTYPE_UNDEFINED || !ir_shape_is_concrete(&val->shape))
                return MOPT_OK;
        } else if (!is_const(val)) {
            return MOPT_OK;
        }
    }
    op_view_src src = {.graph = g, .runtime = true};
    mopt_status st = op_view_init(v, &src, n, NULL);
    if (st) return st;
    op_tensor *in = v->in, *out = v->out;
    for (int32_t k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] >= 0 && !in[k].data) in[k].data = (void *)dummy;
    st = op_view_infer(v);
    if (st) return st;
    size_t sizes[OP_MAX_IO], total = 0;
    for (int32_t k = 0; k < n->n_outputs; k++) {
        int64_t numel = ir_shape_numel(&out[k].shape);
        size_t esz = mopt_dtype_size(out[k].dtype);
        if (numel < 0 || esz == 0 || !mopt_mul_overflow((size_t)numel, esz, &sizes[k]) ||
            sizes[k] > FOLD_MAX_BYTES)
            return MOPT_OK;
        total += sizes[k]; /* at most 64 * FOLD_MAX_BYTES */
    }
    /* nor when the load's memory_limit (core/alloc.h) has no room left */
    if (total > *budget || !mopt_budget_fits(mopt_budget_current(), total)) return MOPT_OK;
    for (int32_t k = 0; k < n->n_outputs; k++) {
        out[k].data = mopt_aligned_alloc(sizes[k] ? sizes[k] : 1);
        if (!out[k].data) {
            for (int32_t j = 0; j < k; j++)
                mopt_aligned_free(out[j].data);
            return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory folding node '%s'", n->name);
        }
    }
    op_bridge_scratch bs = {0};
    st = ops_bridge_may_apply(n->op)
             ? ops_bridge_run(&v->ctx, NULL, &bs, in, n->n_inputs, out, n->n_outputs)
             : ops_run_reference(n->op, &v->ctx, in, n->n_inputs, out, n->n_outputs);
    ops_bridge_scratch_free(&bs);
    if (st) {
        for (int32_t k = 0; k < n->n_outputs; k++)
            mopt_aligned_free(out[k].data);
        return st;
    }
    for (int32_t k = 0; k < n->n_outputs; k++) {
        int32_t vi = n->outputs[k];
        if (vi < 0) {
            mopt_aligned_free(out[k].data);
            continue;
        }
        ir_value *val = g->values[vi];
        if (!(val->flags & IR_VALUE_BORROWED)) mopt_aligned_free(val->data);
        val->flags &= ~(uint32_t)IR_VALUE_BORROWED;
        val->data = out[k].data;
        val->nbytes = sizes[k];
        val->dtype = out[k].dtype;
        val->shape = out[k].shape;
        val->flags |= IR_VALUE_INITIALIZER;
        val->producer = -1;
    }
    n->dead = true;
    *folded = true;
    *budget -= total;
    return MOPT_OK;
}

mopt_status pass_fold_constants(ir_graph *g, pass_result *r) {
    int32_t folded_n = 0, shapes = 0;
    size_t weights = 0;
    for (int32_t i = 0; i < g->n_values; i++)
        if (is_const(g->values[i])) weights += g->values[i]->nbytes; /* all in memory */
    size_t budget = weights > FOLD_MIN_BUDGET ? weights : FOLD_MIN_BUDGET;
    op_view *v = mopt_malloc(sizeof *v);
    if (!v) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory folding constants");
    for (int32_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        if (n->dead) continue;
        bool folded = false;
        mopt_status st = fold_node(g, n, v, &budget, &folded);
        if (st) {
            mopt_free(v);
            return st;
        }
        if (folded) {
            if (shape_only_op(n))
                shapes++;
            else
                folded_n++;
        }
    }
    mopt_free(v);
    r->rewrites = folded_n + shapes;
    pass_note_add(r, folded_n, "constant nodes");
    pass_note_add(r, shapes, "Shape/Size of known shapes");
    return MOPT_OK;
}
