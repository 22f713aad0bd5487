/*
 * memplan.c — liveness-based placement of intermediate tensors in one arena.
 * A value lives from the node that produces it to its last consumer (graph
 * outputs to the end of the run); values whose lifetimes overlap get
 * disjoint byte ranges. Greedy: largest first, each at the lowest offset
 * that fits between the already placed, overlapping ones.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "runtime/runtime.h"

typedef struct item {
    int32_t value;
    int32_t first, last; /* node indices of definition and last use */
    size_t size;
    size_t offset;
} item;

static int by_size_desc(const void *a, const void *b) {
    const item *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? 1 : -1;
    return x->value - y->value;
}

static int by_offset(const void *a, const void *b) {
    const item *const *x = a, *const *y = b;
    if ((*x)->offset != (*y)->offset) return (*x)->offset < (*y)->offset ? -1 : 1;
    return 0;
}

mopt_status rt_memplan(const ir_graph *g, const size_t *sizes, int64_t *offsets,
                       size_t *arena_size) {
    int32_t nv = g->n_values;
    *arena_size = 0;
    for (int32_t v = 0; v < nv; v++)
        offsets[v] = -1;
    item *items = mopt_malloc((size_t)(nv ? nv : 1) * sizeof *items);
    item **placed = mopt_malloc((size_t)(nv ? nv : 1) * sizeof *placed);
    int32_t *last = mopt_malloc((size_t)(nv ? nv : 1) * sizeof *last);
    if (!items || !placed || !last) {
        mopt_free(items);
        mopt_free(placed);
        mopt_free(last);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory planning memory");
    }
    for (int32_t v = 0; v < nv; v++)
        last[v] = -1;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        for (int32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) last[n->inputs[k]] = i;
    }
    for (int32_t i = 0; i < g->n_outputs; i++)
        last[g->outputs[i]] = g->n_nodes;
    int32_t n_items = 0;
    for (int32_t v = 0; v < nv; v++) {
        const ir_value *val = g->values[v];
        if (!sizes[v] || val->producer < 0) continue;
        item *it = &items[n_items++];
        it->value = v;
        it->first = val->producer;
        it->last = last[v] > val->producer ? last[v] : val->producer;
        it->size = (sizes[v] + 63) & ~(size_t)63;
        it->offset = 0;
    }
    qsort(items, (size_t)n_items, sizeof *items, by_size_desc);
    size_t total = 0;
    for (int32_t a = 0; a < n_items; a++) {
        item *it = &items[a];
        int32_t n_ov = 0;
        for (int32_t b = 0; b < a; b++) {
            item *o = &items[b];
            if (o->first <= it->last && it->first <= o->last) placed[n_ov++] = o;
        }
        qsort(placed, (size_t)n_ov, sizeof *placed, by_offset);
        size_t off = 0;
        for (int32_t b = 0; b < n_ov; b++) {
            if (placed[b]->offset >= off + it->size) break; /* fits in the gap before it */
            size_t end = placed[b]->offset + placed[b]->size;
            if (end > off) off = end;
        }
        it->offset = off;
        offsets[it->value] = (int64_t)off;
        if (off + it->size > total) total = off + it->size;
    }
    *arena_size = total;
    mopt_free(items);
    mopt_free(placed);
    mopt_free(last);
    return MOPT_OK;
}
