/*
 * ir_subgraph.c — enumerating a node's subgraphs and binding their
 * outer-scope reads (see ir_subgraph.h). Pure IR: knows no operator.
 */
#include "ir/ir_subgraph.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

int32_t ir_node_subgraph_count(const ir_node *n) {
    int32_t c = 0;
    for (int32_t k = 0; k < n->n_attrs; k++) {
        const ir_attr *a = &n->attrs[k];
        if (a->type == IR_ATTR_GRAPH && a->g) c++;
        if (a->type == IR_ATTR_GRAPHS) c += (int32_t)a->n;
    }
    return c;
}

ir_graph *ir_node_subgraph(const ir_node *n, int32_t k, const char **attr_name) {
    for (int32_t i = 0; i < n->n_attrs; i++) {
        const ir_attr *a = &n->attrs[i];
        if (a->type == IR_ATTR_GRAPH && a->g) {
            if (k-- == 0) {
                if (attr_name) *attr_name = a->name;
                return a->g;
            }
        } else if (a->type == IR_ATTR_GRAPHS) {
            if ((size_t)k < a->n) {
                if (attr_name) *attr_name = a->name;
                return a->graphs[k];
            }
            k -= (int32_t)a->n;
        }
    }
    return NULL;
}

int32_t ir_node_captures(const ir_node *n) {
    const ir_attr *a = ir_node_attr(n, IR_CAPTURES_ATTR);
    if (!a || a->type != IR_ATTR_INT || a->i < 0 || a->i > n->n_inputs) return 0;
    return (int32_t)a->i;
}

int ir_shape_translate(const ir_shape *s, const ir_graph *from, ir_graph *to, ir_shape *out) {
    ir_shape r = *s;
    for (int32_t d = 0; d < r.rank; d++) {
        if (r.syms[d] <= 0 || from == to) continue;
        if (r.syms[d] > from->n_symbols) {
            r.syms[d] = -1;
            continue;
        }
        int32_t id = ir_graph_symbol(to, from->symbols[r.syms[d] - 1]);
        if (id < 0) return -1;
        r.syms[d] = id;
    }
    *out = r;
    return 0;
}

/* Per value of sub: read by sub without being defined there (an outer-scope
 * read)? */
static bool *free_values(const ir_graph *sub) {
    size_t nv = (size_t)(sub->n_values ? sub->n_values : 1);
    bool *produced = mopt_calloc(nv, sizeof *produced);
    bool *is_free = mopt_calloc(nv, sizeof *is_free);
    if (!produced || !is_free) {
        mopt_free(produced);
        mopt_free(is_free);
        mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory binding subgraph '%s'", sub->name);
        return NULL;
    }
    for (int32_t i = 0; i < sub->n_nodes; i++) {
        const ir_node *n = sub->nodes[i];
        for (int32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] >= 0) produced[n->outputs[k]] = true;
    }
    for (int32_t i = 0; i < sub->n_nodes; i++) {
        const ir_node *n = sub->nodes[i];
        for (int32_t k = 0; k < n->n_inputs; k++) {
            int32_t v = n->inputs[k];
            if (v >= 0 && !produced[v] &&
                !(sub->values[v]->flags & (IR_VALUE_INPUT | IR_VALUE_INITIALIZER)))
                is_free[v] = true;
        }
    }
    for (int32_t i = 0; i < sub->n_outputs; i++) {
        int32_t v = sub->outputs[i];
        if (!produced[v] && !(sub->values[v]->flags & (IR_VALUE_INPUT | IR_VALUE_INITIALIZER)))
            is_free[v] = true;
    }
    mopt_free(produced);
    return is_free;
}

static mopt_status append_index(int32_t **arr, int32_t *n, int32_t v) {
    int32_t *na = mopt_realloc(*arr, (size_t)(*n + 1) * sizeof *na);
    if (!na) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory binding a subgraph");
    na[(*n)++] = v;
    *arr = na;
    return MOPT_OK;
}

/* Copies the outer initializer o into the subgraph value sv. */
static mopt_status copy_initializer(const ir_graph *g, const ir_value *o, ir_graph *sub,
                                    ir_value *sv) {
    sv->dtype = o->dtype;
    if (ir_shape_translate(&o->shape, g, sub, &sv->shape)) return MOPT_ERR_OUT_OF_MEMORY;
    if (o->nbytes) {
        sv->data = mopt_aligned_alloc(o->nbytes);
        if (!sv->data)
            return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory copying '%s' into a subgraph",
                             o->name);
        memcpy(sv->data, o->data, o->nbytes);
    }
    sv->nbytes = o->nbytes;
    sv->flags |= IR_VALUE_INITIALIZER;
    return MOPT_OK;
}

static mopt_status set_captures(ir_node *n, int32_t count) {
    ir_attr *a = NULL;
    for (int32_t k = 0; k < n->n_attrs; k++)
        if (strcmp(n->attrs[k].name, IR_CAPTURES_ATTR) == 0) a = &n->attrs[k];
    if (!a) {
        a = ir_node_add_attr(n, IR_CAPTURES_ATTR, IR_ATTR_INT);
        if (!a) return MOPT_ERR_OUT_OF_MEMORY;
    }
    a->type = IR_ATTR_INT;
    a->i = count;
    return MOPT_OK;
}

/* Binds the outer-scope reads of node n's subgraphs (already bound inside). */
static mopt_status bind_node(ir_graph *g, ir_node *n, int32_t ns) {
    mopt_status st = MOPT_OK;
    bool **is_free = mopt_calloc((size_t)ns, sizeof *is_free);
    int32_t *n_values = mopt_calloc((size_t)ns, sizeof *n_values);
    const char **names = NULL;
    int32_t n_names = 0;
    if (!is_free || !n_values) {
        st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory binding subgraphs of node '%s'",
                       n->name);
        goto done;
    }
    /* the names read from outside, in order of first appearance */
    for (int32_t s = 0; s < ns && !st; s++) {
        ir_graph *sub = ir_node_subgraph(n, s, NULL);
        if (!sub) continue;
        n_values[s] = sub->n_values;
        is_free[s] = free_values(sub);
        if (!is_free[s]) {
            st = MOPT_ERR_OUT_OF_MEMORY;
            break;
        }
        for (int32_t v = 0; v < sub->n_values && !st; v++) {
            if (!is_free[s][v]) continue;
            bool seen = false;
            for (int32_t j = 0; j < n_names && !seen; j++)
                seen = strcmp(names[j], sub->values[v]->name) == 0;
            if (seen) continue;
            const char **nn = mopt_realloc(names, (size_t)(n_names + 1) * sizeof *nn);
            if (!nn) {
                st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory binding subgraphs");
                break;
            }
            names = nn;
            names[n_names++] = sub->values[v]->name;
        }
    }
    int32_t captured = 0;
    for (int32_t j = 0; j < n_names && !st; j++) {
        int32_t ov = ir_graph_find_value(g, names[j]);
        bool constant = ov >= 0 && (g->values[ov]->flags & IR_VALUE_INITIALIZER);
        if (!constant) {
            ov = ir_graph_value(g, names[j]);
            if (ov < 0) {
                st = MOPT_ERR_OUT_OF_MEMORY;
                break;
            }
            st = append_index(&n->inputs, &n->n_inputs, ov);
            captured++;
        }
        for (int32_t s = 0; s < ns && !st; s++) {
            ir_graph *sub = ir_node_subgraph(n, s, NULL);
            if (!sub) continue;
            int32_t sv = ir_graph_find_value(sub, names[j]);
            bool reads = sv >= 0 && sv < n_values[s] && is_free[s][sv];
            if (constant) {
                if (reads) st = copy_initializer(g, g->values[ov], sub, sub->values[sv]);
                continue;
            }
            if (!reads) sv = ir_graph_new_value(sub, names[j]); /* unused, keeps positions */
            if (sv < 0) {
                st = MOPT_ERR_OUT_OF_MEMORY;
                break;
            }
            sub->values[sv]->flags |= IR_VALUE_INPUT;
            if (!reads) {
                sub->values[sv]->dtype = g->values[ov]->dtype;
                if (ir_shape_translate(&g->values[ov]->shape, g, sub, &sub->values[sv]->shape))
                    st = MOPT_ERR_OUT_OF_MEMORY;
            }
            if (!st) st = append_index(&sub->inputs, &sub->n_inputs, sv);
        }
    }
    if (!st && captured) st = set_captures(n, ir_node_captures(n) + captured);
    for (int32_t s = 0; s < ns && !st; s++) {
        const char *an = NULL;
        ir_graph *sub = ir_node_subgraph(n, s, &an);
        if (!sub) continue;
        st = ir_graph_check(sub);
        if (st)
            mopt_fail_context(st, "subgraph '%s' of node '%s' (%s)", an ? an : "", n->name,
                              n->op_type);
    }
done:
    if (is_free)
        for (int32_t s = 0; s < ns; s++)
            mopt_free(is_free[s]);
    mopt_free(is_free);
    mopt_free(n_values);
    mopt_free(names);
    return st;
}

mopt_status ir_graph_bind_captures(ir_graph *g) {
    for (int32_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        int32_t ns = ir_node_subgraph_count(n);
        if (!ns) continue;
        for (int32_t s = 0; s < ns; s++) {
            ir_graph *sub = ir_node_subgraph(n, s, NULL);
            if (!sub) continue;
            mopt_status st = ir_graph_bind_captures(sub);
            if (st) return st;
        }
        mopt_status st = bind_node(g, n, ns);
        if (st) return st;
    }
    return MOPT_OK;
}
