/*
 * ir_edit.c — graph editing primitives used by the passes: use counts,
 * rewiring, dead-code marking, compaction (removing dead nodes and
 * unreferenced values), attribute equality and fresh value names.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "ir/ir.h"

void ir_graph_use_counts(const ir_graph *g, int32_t *counts) {
    memset(counts, 0, (size_t)g->n_values * sizeof *counts);
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (n->dead) continue;
        for (int32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) counts[n->inputs[k]]++;
    }
    for (int32_t i = 0; i < g->n_outputs; i++)
        counts[g->outputs[i]]++;
}

void ir_graph_replace_uses(ir_graph *g, int32_t from, int32_t to) {
    for (int32_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        if (n->dead) continue;
        for (int32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] == from) n->inputs[k] = to;
    }
}

void ir_uses_free(ir_uses *u) {
    mopt_free(u->head);
    mopt_free(u->entries);
    memset(u, 0, sizeof *u);
}

mopt_status ir_uses_build(ir_uses *u, const ir_graph *g) {
    memset(u, 0, sizeof *u);
    int64_t n_inputs = 0;
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i]->dead) n_inputs += g->nodes[i]->n_inputs;
    if (n_inputs > INT32_MAX / 2)
        return mopt_fail(MOPT_ERR_LIMIT, "too many node inputs (%lld) to index",
                         (long long)n_inputs);
    u->n_head = g->n_values;
    u->cap_entries = (int32_t)n_inputs + 16;
    u->head = mopt_malloc((size_t)(u->n_head ? u->n_head : 1) * sizeof *u->head);
    u->entries = mopt_malloc((size_t)u->cap_entries * sizeof *u->entries);
    if (!u->head || !u->entries) {
        ir_uses_free(u);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory indexing uses");
    }
    for (int32_t v = 0; v < u->n_head; v++)
        u->head[v] = -1;
    /* backwards, so that each value's list comes out in node order */
    for (int32_t i = g->n_nodes - 1; i >= 0; i--) {
        const ir_node *n = g->nodes[i];
        if (n->dead) continue;
        for (int32_t k = n->n_inputs - 1; k >= 0; k--) {
            int32_t v = n->inputs[k];
            if (v < 0 || v >= u->n_head) continue;
            u->entries[u->n_entries] = (ir_use){i, k, u->head[v]};
            u->head[v] = u->n_entries++;
        }
    }
    return MOPT_OK;
}

/* Makes room for value v in u->head. */
static mopt_status uses_cover(ir_uses *u, int32_t v) {
    if (v < u->n_head) return MOPT_OK;
    int32_t cap = u->n_head > 16 ? u->n_head : 16;
    while (cap <= v)
        cap = cap > INT32_MAX / 2 ? INT32_MAX : cap * 2;
    int32_t *h = mopt_realloc(u->head, (size_t)cap * sizeof *h);
    if (!h) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory indexing uses");
    for (int32_t i = u->n_head; i < cap; i++)
        h[i] = -1;
    u->head = h;
    u->n_head = cap;
    return MOPT_OK;
}

mopt_status ir_uses_add(ir_uses *u, int32_t v, int32_t node, int32_t slot) {
    mopt_status st = uses_cover(u, v);
    if (st) return st;
    if (u->n_entries == u->cap_entries) {
        if (u->cap_entries > INT32_MAX / 2)
            return mopt_fail(MOPT_ERR_LIMIT, "too many uses to index");
        int32_t cap = u->cap_entries > 16 ? u->cap_entries * 2 : 32;
        ir_use *e = mopt_realloc(u->entries, (size_t)cap * sizeof *e);
        if (!e) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory indexing uses");
        u->entries = e;
        u->cap_entries = cap;
    }
    u->entries[u->n_entries] = (ir_use){node, slot, u->head[v]};
    u->head[v] = u->n_entries++;
    return MOPT_OK;
}

mopt_status ir_uses_set_input(ir_uses *u, ir_graph *g, int32_t node, int32_t slot, int32_t v) {
    ir_node *n = g->nodes[node];
    if (n->inputs[slot] == v) return MOPT_OK;
    if (v >= 0) {
        mopt_status st = ir_uses_add(u, v, node, slot);
        if (st) return st;
    }
    n->inputs[slot] = v;
    return MOPT_OK;
}

mopt_status ir_uses_replace(ir_uses *u, ir_graph *g, int32_t from, int32_t to) {
    if (from < 0 || from >= u->n_head || from == to) return MOPT_OK;
    if (to >= 0) {
        mopt_status st = uses_cover(u, to);
        if (st) return st;
    }
    int32_t e = u->head[from];
    u->head[from] = -1;
    while (e >= 0) {
        ir_use *use = &u->entries[e];
        int32_t next = use->next;
        ir_node *n = use->node < g->n_nodes ? g->nodes[use->node] : NULL;
        /* stale entries (dead node, slot redirected since) are dropped */
        if (n && !n->dead && use->slot < n->n_inputs && n->inputs[use->slot] == from) {
            n->inputs[use->slot] = to;
            if (to >= 0) {
                use->next = u->head[to];
                u->head[to] = e;
            }
        }
        e = next;
    }
    return MOPT_OK;
}

int32_t ir_graph_mark_dead_code(ir_graph *g) {
    if (g->n_values == 0) return 0;
    bool *live = mopt_calloc((size_t)g->n_values, sizeof *live);
    if (!live) return 0; /* DCE is an optimization: skipping it is safe */
    for (int32_t i = 0; i < g->n_outputs; i++)
        live[g->outputs[i]] = true;
    int32_t removed = 0;
    for (int32_t i = g->n_nodes - 1; i >= 0; i--) {
        ir_node *n = g->nodes[i];
        if (n->dead) continue;
        bool used = false;
        for (int32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] >= 0 && live[n->outputs[k]]) used = true;
        if (!used) {
            n->dead = true;
            removed++;
            continue;
        }
        for (int32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) live[n->inputs[k]] = true;
    }
    mopt_free(live);
    return removed;
}

mopt_status ir_graph_compact(ir_graph *g) {
    int32_t nv = g->n_values;
    int32_t *remap = mopt_malloc((size_t)(nv ? nv : 1) * sizeof *remap);
    bool *keep = mopt_calloc((size_t)(nv ? nv : 1), sizeof *keep);
    if (!remap || !keep) {
        mopt_free(remap);
        mopt_free(keep);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory compacting graph");
    }
    /* nodes */
    int32_t w = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        if (n->dead) {
            ir_node_destroy(n);
            continue;
        }
        g->nodes[w++] = n;
        for (int32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) keep[n->inputs[k]] = true;
        for (int32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] >= 0) keep[n->outputs[k]] = true;
    }
    g->n_nodes = w;
    for (int32_t i = 0; i < g->n_inputs; i++)
        keep[g->inputs[i]] = true;
    for (int32_t i = 0; i < g->n_outputs; i++)
        keep[g->outputs[i]] = true;
    /* values */
    w = 0;
    for (int32_t i = 0; i < nv; i++) {
        ir_value *v = g->values[i];
        if (!keep[i]) {
            ir_value_destroy(v);
            remap[i] = -1;
            continue;
        }
        remap[i] = w;
        g->values[w++] = v;
    }
    g->n_values = w;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        for (int32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) n->inputs[k] = remap[n->inputs[k]];
        for (int32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] >= 0) n->outputs[k] = remap[n->outputs[k]];
    }
    for (int32_t i = 0; i < g->n_inputs; i++)
        g->inputs[i] = remap[g->inputs[i]];
    for (int32_t i = 0; i < g->n_outputs; i++)
        g->outputs[i] = remap[g->outputs[i]];
    for (int32_t i = 0; i < g->n_values; i++)
        g->values[i]->producer = -1;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        for (int32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] >= 0) g->values[n->outputs[k]]->producer = i;
    }
    mopt_free(remap);
    mopt_free(keep);
    /* rebuild the name index */
    if (ir_graph_reindex(g) != 0)
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory compacting graph");
    return MOPT_OK;
}

static bool tensor_equal(const ir_tensor *a, const ir_tensor *b) {
    if (!a || !b) return a == b;
    if (a->dtype != b->dtype || a->rank != b->rank || a->nbytes != b->nbytes) return false;
    if (memcmp(a->dims, b->dims, (size_t)a->rank * sizeof a->dims[0]) != 0) return false;
    return a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0;
}

bool ir_attr_equal(const ir_attr *a, const ir_attr *b) {
    if (a->type != b->type || strcmp(a->name, b->name) != 0) return false;
    switch (a->type) {
    case IR_ATTR_FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0;
    case IR_ATTR_INT: return a->i == b->i;
    case IR_ATTR_STRING: return a->s_len == b->s_len && memcmp(a->s, b->s, a->s_len) == 0;
    case IR_ATTR_TENSOR: return tensor_equal(a->t, b->t);
    case IR_ATTR_FLOATS:
        return a->n == b->n &&
               (a->n == 0 || memcmp(a->floats, b->floats, a->n * sizeof(float)) == 0);
    case IR_ATTR_INTS:
        return a->n == b->n && (a->n == 0 || memcmp(a->ints, b->ints, a->n * sizeof(int64_t)) == 0);
    case IR_ATTR_STRINGS:
        if (a->n != b->n) return false;
        for (size_t i = 0; i < a->n; i++)
            if (strcmp(a->strings[i], b->strings[i]) != 0) return false;
        return true;
    case IR_ATTR_TENSORS:
        if (a->n != b->n) return false;
        for (size_t i = 0; i < a->n; i++)
            if (!tensor_equal(a->tensors[i], b->tensors[i])) return false;
        return true;
    default: return false;
    }
}

int32_t ir_graph_new_value(ir_graph *g, const char *base) {
    char name[256];
    snprintf(name, sizeof name, "%s", base);
    for (int i = 1; ir_graph_find_value(g, name) >= 0; i++) {
        if (i > 1000000) {
            mopt_fail(MOPT_ERR_LIMIT, "cannot make a unique name from '%s'", base);
            return -1;
        }
        snprintf(name, sizeof name, "%.200s_%d", base, i);
    }
    return ir_graph_value(g, name);
}
