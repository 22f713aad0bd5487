/*
 * pass_fold_shapes.c — symbolic folding of the shape arithmetic exporters
 * emit (Shape -> Gather -> Unsqueeze -> Concat -> Reshape). Each small int64
 * tensor computed from shapes is tracked as a vector whose entries are
 * numbers or named symbols ("batch", "seq"). Then:
 *   - a vector with only numbers becomes a constant weight;
 *   - a Reshape whose target vector is fully known gets a constant target:
 *     a symbol at the same axis of the input becomes 0 (copy that dim), one
 *     other symbolic entry becomes -1 (inferred);
 * and the shape subgraphs left unused are removed by DCE.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "passes/passes.h"

/* A shape vector: up to IR_MAX_RANK entries (1-D), or a scalar. Entries as
 * in ir_shape: syms 0 = dims[i] is the number, > 0 = symbol, < 0 = unknown. */
typedef struct svec {
    bool known;
    bool scalar;
    ir_shape e;
} svec;

static bool op_is(const ir_node *n, const char *op) {
    return n->domain[0] == '\0' && strcmp(n->op_type, op) == 0;
}

static bool all_numbers(const svec *v) {
    for (int32_t i = 0; i < v->e.rank; i++)
        if (v->e.syms[i] != 0) return false;
    return true;
}

static bool all_known(const svec *v) {
    for (int32_t i = 0; i < v->e.rank; i++)
        if (v->e.syms[i] < 0) return false;
    return true;
}

/* Reads a small constant int tensor (rank <= 1) into an svec. */
static bool from_const(const ir_value *v, svec *out) {
    if (!(v->flags & IR_VALUE_INITIALIZER) || v->shape.rank > 1 || !ir_shape_is_concrete(&v->shape))
        return false;
    if (v->dtype != MOPT_DTYPE_I64 && v->dtype != MOPT_DTYPE_I32) return false;
    int64_t n = ir_shape_numel(&v->shape);
    if (n < 0 || n > IR_MAX_RANK) return false;
    memset(out, 0, sizeof *out);
    out->known = true;
    out->scalar = v->shape.rank == 0;
    out->e.rank = (int32_t)n;
    for (int64_t i = 0; i < n; i++)
        out->e.dims[i] = v->dtype == MOPT_DTYPE_I64 ? ((const int64_t *)v->data)[i]
                                                    : ((const int32_t *)v->data)[i];
    return true;
}

static const svec *input_vec(const ir_graph *g, const ir_node *n, int k, svec *vecs, svec *tmp) {
    if (k >= n->n_inputs || n->inputs[k] < 0) return NULL;
    int32_t v = n->inputs[k];
    if (vecs[v].known) return &vecs[v];
    if (from_const(g->values[v], tmp)) return tmp;
    return NULL;
}

/* Computes the vector of node n's first output, if it is shape arithmetic. */
static bool eval(const ir_graph *g, const ir_node *n, svec *vecs, svec *res) {
    svec t0, t1;
    memset(res, 0, sizeof *res);
    if (n->n_outputs < 1 || n->outputs[0] < 0) return false;
    if (op_is(n, "Shape")) {
        const ir_shape *s = &g->values[n->inputs[0]]->shape;
        if (s->rank < 0) return false;
        int64_t start = ir_node_attr_int(n, "start", 0), end = ir_node_attr_int(n, "end", s->rank);
        if (start < 0) start += s->rank;
        if (end < 0) end += s->rank;
        if (start < 0) start = 0;
        if (end > s->rank) end = s->rank;
        res->known = true;
        for (int64_t i = start; i < end; i++) {
            res->e.dims[res->e.rank] = s->dims[i];
            res->e.syms[res->e.rank] = s->syms[i];
            res->e.rank++;
        }
        return true;
    }
    if (op_is(n, "Identity") || op_is(n, "Cast")) {
        if (op_is(n, "Cast")) {
            int64_t to = ir_node_attr_int(n, "to", 0);
            if (to != MOPT_DTYPE_I64 && to != MOPT_DTYPE_I32) return false;
        }
        const svec *a = input_vec(g, n, 0, vecs, &t0);
        if (!a) return false;
        *res = *a;
        return true;
    }
    if (op_is(n, "Gather")) {
        const svec *a = input_vec(g, n, 0, vecs, &t0), *ix = input_vec(g, n, 1, vecs, &t1);
        if (!a || a->scalar || !ix || !all_numbers(ix) || ir_node_attr_int(n, "axis", 0) != 0)
            return false;
        res->known = true;
        res->scalar = ix->scalar;
        for (int32_t i = 0; i < ix->e.rank; i++) {
            int64_t k = ix->e.dims[i];
            if (k < 0) k += a->e.rank;
            if (k < 0 || k >= a->e.rank) return false;
            res->e.dims[i] = a->e.dims[k];
            res->e.syms[i] = a->e.syms[k];
        }
        res->e.rank = ix->e.rank;
        return true;
    }
    if (op_is(n, "Unsqueeze") || op_is(n, "Squeeze")) {
        const svec *a = input_vec(g, n, 0, vecs, &t0);
        if (!a) return false;
        *res = *a;
        if (op_is(n, "Unsqueeze")) {
            if (!a->scalar) return false; /* only scalar -> [1] */
            res->scalar = false;
        } else {
            if (a->scalar || a->e.rank != 1) return false;
            res->scalar = true;
        }
        return true;
    }
    if (op_is(n, "Concat")) {
        if (ir_node_attr_int(n, "axis", 0) != 0 && ir_node_attr_int(n, "axis", 0) != -1)
            return false;
        res->known = true;
        for (int32_t k = 0; k < n->n_inputs; k++) {
            const svec *a = input_vec(g, n, k, vecs, &t0);
            if (!a || a->scalar || res->e.rank + a->e.rank > IR_MAX_RANK) return false;
            for (int32_t i = 0; i < a->e.rank; i++) {
                res->e.dims[res->e.rank] = a->e.dims[i];
                res->e.syms[res->e.rank] = a->e.syms[i];
                res->e.rank++;
            }
        }
        return true;
    }
    return false;
}

static int32_t add_const(ir_graph *g, const char *base, mopt_dtype dtype, const svec *v) {
    int32_t idx = ir_graph_new_value(g, base);
    if (idx < 0) return -1;
    ir_value *val = g->values[idx];
    size_t esz = dtype == MOPT_DTYPE_I32 ? 4 : 8;
    size_t n = (size_t)v->e.rank;
    val->data = mopt_aligned_alloc(n ? n * esz : 1);
    if (!val->data) {
        mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory folding shapes");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (dtype == MOPT_DTYPE_I32)
            ((int32_t *)val->data)[i] = (int32_t)v->e.dims[i];
        else
            ((int64_t *)val->data)[i] = v->e.dims[i];
    }
    val->nbytes = n * esz;
    val->dtype = dtype;
    val->flags = IR_VALUE_INITIALIZER;
    int64_t d = (int64_t)n;
    if (v->scalar)
        ir_shape_set_scalar(&val->shape);
    else
        ir_shape_set(&val->shape, 1, &d);
    return idx;
}

/* A constant Reshape target equivalent to the symbolic one, or false. */
static bool reshape_target(const ir_graph *g, const ir_node *n, const svec *t, svec *out) {
    if (ir_node_attr_int(n, "allowzero", 0)) return false;
    const ir_shape *x = &g->values[n->inputs[0]]->shape;
    *out = *t;
    int32_t n_infer = 0;
    for (int32_t i = 0; i < t->e.rank; i++) {
        if (t->e.syms[i] == 0) {
            if (t->e.dims[i] == -1) n_infer++;
            continue;
        }
        out->e.syms[i] = 0;
        if (x->rank < 0 || (x->rank > i && x->syms[i] < 0))
            return false; /* the input's dims are not inferred yet: wait for the next sweep */
        if (x->rank > i && x->syms[i] == t->e.syms[i]) {
            out->e.dims[i] = 0; /* copy the input's dim */
        } else {
            out->e.dims[i] = -1;
            n_infer++;
        }
    }
    return n_infer <= 1;
}

static mopt_status sweep(ir_graph *g, int32_t *n_const_out, int32_t *n_reshape_out);

/* Sweeps until nothing changes, re-inferring shapes in between: a Reshape
 * made constant gives its consumers symbolic shapes, which later Reshape
 * targets (computed from those consumers' Shape) need. */
mopt_status pass_fold_shapes(ir_graph *g, pass_result *r) {
    int32_t n_const = 0, n_reshape = 0;
    for (int iter = 0; iter < 8; iter++) {
        int32_t c = 0, rs = 0;
        mopt_status st = sweep(g, &c, &rs);
        if (st) return st;
        n_const += c;
        n_reshape += rs;
        if (!c && !rs) break;
        ir_graph_mark_dead_code(g);
        st = ir_graph_compact(g);
        if (!st) st = passes_infer_graph(g);
        if (st) return st;
    }
    r->rewrites = n_const + n_reshape;
    pass_note_add(r, n_const, "shape values made constant");
    pass_note_add(r, n_reshape, "Reshape targets made constant");
    return MOPT_OK;
}

static mopt_status sweep(ir_graph *g, int32_t *n_const_out, int32_t *n_reshape_out) {
    /* room for the values added below (at most one constant per node);
     * their entries stay unknown and are read from their data */
    svec *vecs = mopt_calloc((size_t)g->n_values + (size_t)g->n_nodes + 1, sizeof *vecs);
    if (!vecs) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory folding shapes");
    ir_uses uses = {0}; /* built at the first rewrite */
    mopt_status st = MOPT_OK;
    int32_t n_const = 0, n_reshape = 0;
    for (int32_t i = 0; i < g->n_nodes && !st; i++) {
        ir_node *n = g->nodes[i];
        if (n->dead) continue;
        svec res;
        if (eval(g, n, vecs, &res)) {
            int32_t v = n->outputs[0];
            ir_value *val = g->values[v];
            if ((val->dtype == MOPT_DTYPE_I64 || val->dtype == MOPT_DTYPE_I32) &&
                n->n_outputs == 1) {
                vecs[v] = res;
                if (all_numbers(&res) && !(val->flags & IR_VALUE_OUTPUT)) {
                    int32_t c = add_const(g, val->name, val->dtype, &res);
                    if (c < 0) {
                        st = MOPT_ERR_OUT_OF_MEMORY;
                        break;
                    }
                    if (!uses.head) st = ir_uses_build(&uses, g);
                    if (!st) st = ir_uses_replace(&uses, g, v, c);
                    if (st) break;
                    n->dead = true;
                    n_const++;
                }
            }
            continue;
        }
        if (op_is(n, "Reshape") && n->n_inputs >= 2 && n->inputs[1] >= 0) {
            int32_t s = n->inputs[1];
            if ((g->values[s]->flags & IR_VALUE_INITIALIZER) || !vecs[s].known) continue;
            if (!all_known(&vecs[s]) || vecs[s].scalar) continue;
            svec target;
            if (!reshape_target(g, n, &vecs[s], &target)) continue;
            char base[256];
            snprintf(base, sizeof base, "%s_shape", n->name[0] ? n->name : "reshape");
            int32_t c = add_const(g, base, MOPT_DTYPE_I64, &target);
            if (c < 0) {
                st = MOPT_ERR_OUT_OF_MEMORY;
                break;
            }
            if (!uses.head) st = ir_uses_build(&uses, g);
            if (!st) st = ir_uses_set_input(&uses, g, i, 1, c);
            n_reshape++;
        }
    }
    ir_uses_free(&uses);
    mopt_free(vecs);
    *n_const_out = n_const;
    *n_reshape_out = n_reshape;
    return st;
}
