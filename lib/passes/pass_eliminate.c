/*
 * pass_eliminate.c — removes nodes that do nothing at inference time:
 * Identity, Dropout (when its mask is unused), Cast to the type the input
 * already has, Reshape of a Reshape (the inner one is bypassed), and
 * Transpose pairs whose permutations cancel. A node whose output is a graph
 * output is kept (the output name must survive).
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "passes/passes.h"

static bool is_graph_output(const ir_graph *g, int32_t v) {
    return (g->values[v]->flags & IR_VALUE_OUTPUT) != 0;
}

/* Replaces node n (single data output) by its input `src`: later nodes
 * read src where they read n's output. Nodes are visited in topological
 * order, so every consumer comes after n and is redirected when visited
 * (forward[]), one pass in all instead of a sweep of the graph per bypass. */
static bool bypass(ir_graph *g, ir_node *n, int32_t src, int32_t *forward) {
    int32_t out = n->outputs[0];
    if (out < 0 || src < 0 || is_graph_output(g, out)) return false;
    forward[out] = src;
    n->dead = true;
    return true;
}

/* Points node n's inputs at what bypassed values forward to. */
static void redirect_inputs(ir_node *n, const int32_t *forward) {
    for (int32_t k = 0; k < n->n_inputs; k++) {
        int32_t v = n->inputs[k];
        if (v >= 0 && forward[v] >= 0) n->inputs[k] = forward[v];
    }
}

static bool op_is(const ir_node *n, const char *op) {
    return n->domain[0] == '\0' && strcmp(n->op_type, op) == 0;
}

/* perm of a Transpose node, default reversed; returns rank or -1. */
static int32_t transpose_perm(const ir_graph *g, const ir_node *n, int64_t *perm) {
    const int64_t *p = NULL;
    int64_t np = ir_node_attr_ints(n, "perm", &p);
    if (np >= 0) {
        if (np > IR_MAX_RANK) return -1;
        memcpy(perm, p, (size_t)np * sizeof *perm);
        return (int32_t)np;
    }
    int32_t r = g->values[n->inputs[0]]->shape.rank;
    if (r < 0) return -1;
    for (int32_t i = 0; i < r; i++)
        perm[i] = r - 1 - i;
    return r;
}

/* True when the constant shape input of a Reshape has no 0 entry (which
 * would copy a dim from the data input) unless allowzero is set. */
static bool reshape_shape_is_self_contained(const ir_graph *g, const ir_node *n) {
    if (n->n_inputs < 2 || n->inputs[1] < 0) return false;
    const ir_value *s = g->values[n->inputs[1]];
    if (!(s->flags & IR_VALUE_INITIALIZER) || s->dtype != MOPT_DTYPE_I64) return false;
    if (ir_node_attr_int(n, "allowzero", 0)) return true;
    const int64_t *d = s->data;
    size_t cnt = s->nbytes / sizeof(int64_t);
    for (size_t i = 0; i < cnt; i++)
        if (d[i] == 0) return false;
    return true;
}

mopt_status pass_eliminate(ir_graph *g, pass_result *r) {
    size_t nv = (size_t)(g->n_values ? g->n_values : 1);
    int32_t *uses = mopt_malloc(nv * sizeof *uses);
    int32_t *forward = mopt_malloc(nv * sizeof *forward);
    if (!uses || !forward) {
        mopt_free(uses);
        mopt_free(forward);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory in eliminate pass");
    }
    ir_graph_use_counts(g, uses);
    for (size_t v = 0; v < nv; v++)
        forward[v] = -1;
    enum { N_IDENTITY, N_DROPOUT, N_CAST, N_RESHAPE, N_TRANSPOSE };
    int32_t c[PASS_COUNTS_CAP] = {0};
    for (int32_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        if (n->dead) continue;
        redirect_inputs(n, forward); /* a bypassed producer's forward is final */
        if (n->n_inputs < 1 || n->inputs[0] < 0 || n->n_outputs < 1) continue;
        int32_t in = n->inputs[0];
        if (op_is(n, "Identity")) {
            c[N_IDENTITY] += bypass(g, n, in, forward);
        } else if (op_is(n, "Dropout")) {
            bool mask_used = n->n_outputs > 1 && n->outputs[1] >= 0 && uses[n->outputs[1]] > 0;
            /* training_mode (input 2) must be absent or a constant false */
            bool training = false;
            if (n->n_inputs > 2 && n->inputs[2] >= 0) {
                const ir_value *t = g->values[n->inputs[2]];
                training = !(t->flags & IR_VALUE_INITIALIZER) || !t->data ||
                           *(const uint8_t *)t->data != 0;
            }
            if (!mask_used && !training) c[N_DROPOUT] += bypass(g, n, in, forward);
        } else if (op_is(n, "Cast")) {
            const ir_value *v = g->values[in];
            int64_t to = ir_node_attr_int(n, "to", -1);
            if (v->dtype != MOPT_DTYPE_UNDEFINED && (int64_t)v->dtype == to)
                c[N_CAST] += bypass(g, n, in, forward);
        } else if (op_is(n, "Reshape")) {
            const ir_value *v = g->values[in];
            if (v->producer >= 0) {
                ir_node *p = g->nodes[v->producer];
                if (!p->dead && op_is(p, "Reshape") && reshape_shape_is_self_contained(g, n) &&
                    p->inputs[0] >= 0) {
                    n->inputs[0] = p->inputs[0]; /* the inner Reshape dies if now unused */
                    c[N_RESHAPE]++;
                }
            }
        } else if (op_is(n, "Transpose")) {
            const ir_value *v = g->values[in];
            if (v->producer >= 0) {
                ir_node *p = g->nodes[v->producer];
                int64_t p1[IR_MAX_RANK], p2[IR_MAX_RANK];
                if (!p->dead && op_is(p, "Transpose") && p->inputs[0] >= 0) {
                    int32_t r1 = transpose_perm(g, p, p1), r2 = transpose_perm(g, n, p2);
                    bool inverse = r1 > 0 && r1 == r2;
                    for (int32_t k = 0; inverse && k < r1; k++)
                        inverse = p2[k] >= 0 && p2[k] < r1 && p1[p2[k]] == k;
                    if (inverse) c[N_TRANSPOSE] += bypass(g, n, p->inputs[0], forward);
                }
            }
        }
    }
    mopt_free(uses);
    mopt_free(forward);
    static const char *const notes[PASS_COUNTS_CAP] = {
        "Identity", "Dropout", "no-op Cast", "Reshape of Reshape", "inverse Transpose pairs"};
    pass_note_counts(r, c, notes, 0x1fu);
    if (r->rewrites) ir_graph_mark_dead_code(g);
    return MOPT_OK;
}
