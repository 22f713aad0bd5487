/*
 * memplan.c — liveness-based placement of intermediate tensors in one arena.
 * A value lives from the node that produces it to its last consumer (graph
 * outputs to the end of the run); values whose lifetimes overlap get
 * disjoint byte ranges. Greedy: largest first, each at the lowest offset
 * that fits between the already placed, overlapping ones.
 *
 * Cost. The placed values that overlap a value in time are found with a
 * segment tree over the values sorted by first use, holding the latest last
 * use of the placed ones in each subtree: a query visits only subtrees that
 * hold an overlap, O((k + 1) log n) for k overlaps. A value overlapping more
 * than MEMPLAN_MAX_OVERLAPS placed ones (only in graphs where that many
 * values are alive at once) is instead stacked above all of them, read from
 * a second segment tree over time that holds the highest end placed at each
 * node (range max-assign, range max; built at the first such value). Planning is therefore
 * O(n log n + n * MEMPLAN_MAX_OVERLAPS * log n) for n planned values; for a
 * graph never holding more than MEMPLAN_MAX_OVERLAPS values alive at once the
 * placement is exactly the plain greedy one.
 *
 * In place. A node whose kernel declares that its output 0 may take input
 * j's buffer (op_impl.inplace: e.g. FusedConv's residual, accumulated into
 * Y) gets it when that is safe: input j is a planned intermediate (not a
 * graph input, output or weight: those have no size here), of the same byte
 * size, and this node is its last use and reads it through input j only.
 * The two are then one item, from the input's producer to the output's last
 * use (chains of them too), and the output gets the input's offset.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "runtime/runtime.h"

#define MEMPLAN_MAX_OVERLAPS 256

typedef struct item {
    int32_t value;
    int32_t first, last; /* node indices of definition and last use */
    int32_t slot;        /* position in start order (leaf of the overlap tree) */
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

/* The overlap tree: leaves are items in order of first use (ties by value);
 * each tree node holds the largest `last` of the placed items below it, or
 * -1. `leaf` maps a leaf back to its item. */
typedef struct overlap_tree {
    int32_t *max_last; /* 2 * cap entries, root at 1 */
    item **leaf;
    int32_t cap; /* leaves, a power of two */
} overlap_tree;

static void overlap_place(overlap_tree *t, const item *it) {
    int32_t i = t->cap + it->slot;
    t->max_last[i] = it->last;
    for (i >>= 1; i >= 1; i >>= 1) {
        int32_t a = t->max_last[2 * i], b = t->max_last[2 * i + 1];
        t->max_last[i] = a > b ? a : b;
    }
}

/* Collects into out[] the placed items among leaves [0, end) whose last use
 * is >= first. Returns the count, or -1 once more than `room` were found. */
static int32_t overlap_collect(const overlap_tree *t, int32_t node, int32_t lo, int32_t hi,
                               int32_t end, int32_t first, item **out, int32_t n, int32_t room) {
    if (n < 0 || lo >= end || t->max_last[node] < first) return n;
    if (hi - lo == 1) {
        if (n == room) return -1;
        out[n++] = t->leaf[lo];
        return n;
    }
    int32_t mid = lo + (hi - lo) / 2;
    n = overlap_collect(t, 2 * node, lo, mid, end, first, out, n, room);
    return overlap_collect(t, 2 * node + 1, mid, hi, end, first, out, n, room);
}

/* The top tree, over node indices 0..cap-1: for every node index, the
 * highest byte end of a placed item alive there. tag[i] is a maximum applied
 * to the whole range of tree node i, sub[i] the maximum anywhere below it. */
typedef struct top_tree {
    size_t *tag, *sub;
    int32_t cap;
} top_tree;

static void top_raise(top_tree *t, int32_t node, int32_t lo, int32_t hi, int32_t a, int32_t b,
                      size_t v) {
    if (b < lo || a >= hi) return;
    if (a <= lo && hi - 1 <= b) {
        if (v > t->tag[node]) t->tag[node] = v;
        if (v > t->sub[node]) t->sub[node] = v;
        return;
    }
    int32_t mid = lo + (hi - lo) / 2;
    top_raise(t, 2 * node, lo, mid, a, b, v);
    top_raise(t, 2 * node + 1, mid, hi, a, b, v);
    size_t m = t->sub[2 * node] > t->sub[2 * node + 1] ? t->sub[2 * node] : t->sub[2 * node + 1];
    if (m > t->sub[node]) t->sub[node] = m;
}

static size_t top_max(const top_tree *t, int32_t node, int32_t lo, int32_t hi, int32_t a,
                      int32_t b) {
    if (b < lo || a >= hi) return 0;
    if (a <= lo && hi - 1 <= b) return t->sub[node];
    int32_t mid = lo + (hi - lo) / 2;
    size_t l = top_max(t, 2 * node, lo, mid, a, b), r = top_max(t, 2 * node + 1, mid, hi, a, b);
    size_t m = l > r ? l : r;
    return m > t->tag[node] ? m : t->tag[node];
}

static int32_t pow2_at_least(int32_t n) {
    int32_t c = 1;
    while (c < n)
        c <<= 1;
    return c;
}

/* For each value, the value whose bytes it takes (itself when none) and,
 * for the first of such a chain, the chain's last use. */
static int32_t plan_shares(const ir_graph *g, const size_t *sizes, const int8_t *share,
                           int32_t *root, int32_t *last) {
    int32_t n_shared = 0;
    for (int32_t v = 0; v < g->n_values; v++)
        root[v] = v;
    if (!share) return 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        int32_t j = share[i];
        if (j < 0 || j >= n->n_inputs || n->n_outputs < 1) continue;
        int32_t r = n->inputs[j], o = n->outputs[0];
        if (r < 0 || o < 0 || !sizes[r] || sizes[r] != sizes[o] || last[r] != i) continue;
        if (g->values[r]->producer < 0 || g->values[o]->producer != i) continue;
        bool once = true;
        for (int32_t k = 0; k < n->n_inputs; k++)
            if (k != j && n->inputs[k] == r) once = false;
        if (!once) continue;
        root[o] = root[r];
        if (last[o] > last[root[o]]) last[root[o]] = last[o];
        n_shared++;
    }
    return n_shared;
}

mopt_status rt_memplan(const ir_graph *g, const size_t *sizes, const int8_t *share,
                       int64_t *offsets, size_t *arena_size, int32_t *n_shared) {
    int32_t nv = g->n_values;
    *arena_size = 0;
    for (int32_t v = 0; v < nv; v++)
        offsets[v] = -1;
    size_t cnt = (size_t)(nv ? nv : 1);
    item *items = mopt_malloc(cnt * sizeof *items);
    item **placed = mopt_malloc((MEMPLAN_MAX_OVERLAPS + 1) * sizeof *placed);
    int32_t *last = mopt_malloc(cnt * sizeof *last);
    int32_t *root = mopt_malloc(cnt * sizeof *root);
    int32_t *start_count = mopt_calloc((size_t)g->n_nodes + 2, sizeof *start_count);
    overlap_tree ot = {0};
    top_tree tt = {0};
    mopt_status st = MOPT_OK;
    if (n_shared) *n_shared = 0;
    if (!items || !placed || !last || !root || !start_count) goto oom;
    for (int32_t v = 0; v < nv; v++)
        last[v] = -1;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        for (int32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) last[n->inputs[k]] = i;
    }
    for (int32_t i = 0; i < g->n_outputs; i++)
        last[g->outputs[i]] = g->n_nodes;
    int32_t shared = plan_shares(g, sizes, share, root, last);
    if (n_shared) *n_shared = shared;
    int32_t n_items = 0;
    for (int32_t v = 0; v < nv; v++) {
        const ir_value *val = g->values[v];
        if (!sizes[v] || val->producer < 0 || root[v] != v) continue;
        item *it = &items[n_items++];
        it->value = v;
        it->first = val->producer;
        it->last = last[v] > val->producer ? last[v] : val->producer;
        it->size = (sizes[v] + 63) & ~(size_t)63;
        it->offset = 0;
        start_count[it->first + 1]++;
    }
    /* leaves in order of first use: a counting sort (values in index order
     * within a node); start_count[i] is first the first leaf of node i, and at
     * the end the items starting at or before node i are the leaves
     * [0, start_count[i + 1]) */
    for (int32_t i = 0; i <= g->n_nodes; i++)
        start_count[i + 1] += start_count[i];
    ot.cap = pow2_at_least(n_items ? n_items : 1);
    tt.cap = pow2_at_least(g->n_nodes + 1);
    ot.max_last = mopt_malloc(2 * (size_t)ot.cap * sizeof *ot.max_last);
    ot.leaf = mopt_malloc((size_t)ot.cap * sizeof *ot.leaf);
    if (!ot.max_last || !ot.leaf) goto oom;
    for (int32_t i = 0; i < 2 * ot.cap; i++)
        ot.max_last[i] = -1;
    for (int32_t a = 0; a < n_items; a++)
        items[a].slot = start_count[items[a].first]++;
    /* start_count[i] is now the end of node i's leaves: shift it back by one node */
    memmove(start_count + 1, start_count, ((size_t)g->n_nodes + 1) * sizeof *start_count);
    start_count[0] = 0;
    /* items are in value order: no sort when they are already largest first
     * (all of one size, as in long chains of equal tensors) */
    bool sorted = true;
    for (int32_t a = 1; a < n_items && sorted; a++)
        sorted = items[a - 1].size >= items[a].size;
    if (!sorted) qsort(items, (size_t)n_items, sizeof *items, by_size_desc);
    for (int32_t a = 0; a < n_items; a++)
        ot.leaf[items[a].slot] = &items[a];
    size_t total = 0;
    for (int32_t a = 0; a < n_items; a++) {
        item *it = &items[a];
        int32_t n_ov = overlap_collect(&ot, 1, 0, ot.cap, start_count[it->last + 1], it->first,
                                       placed, 0, MEMPLAN_MAX_OVERLAPS);
        size_t off = 0;
        if (n_ov < 0) {
            if (!tt.tag) { /* the first value past the cap: the top tree, from what is placed */
                tt.tag = mopt_calloc(2 * (size_t)tt.cap, sizeof *tt.tag);
                tt.sub = mopt_calloc(2 * (size_t)tt.cap, sizeof *tt.sub);
                if (!tt.tag || !tt.sub) goto oom;
                for (int32_t b = 0; b < a; b++)
                    top_raise(&tt, 1, 0, tt.cap, items[b].first, items[b].last,
                              items[b].offset + items[b].size);
            }
            off = top_max(&tt, 1, 0, tt.cap, it->first, it->last); /* above them all */
        } else {
            qsort(placed, (size_t)n_ov, sizeof *placed, by_offset);
            for (int32_t b = 0; b < n_ov; b++) {
                if (placed[b]->offset >= off + it->size) break; /* fits in the gap before it */
                size_t end = placed[b]->offset + placed[b]->size;
                if (end > off) off = end;
            }
        }
        it->offset = off;
        offsets[it->value] = (int64_t)off;
        if (off + it->size > total) total = off + it->size;
        overlap_place(&ot, it);
        if (tt.tag) top_raise(&tt, 1, 0, tt.cap, it->first, it->last, off + it->size);
    }
    for (int32_t v = 0; v < nv; v++)
        if (root[v] != v) offsets[v] = offsets[root[v]];
    *arena_size = total;
    goto done;
oom:
    st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory planning memory");
done:
    mopt_free(items);
    mopt_free(placed);
    mopt_free(last);
    mopt_free(root);
    mopt_free(start_count);
    mopt_free(ot.max_last);
    mopt_free(ot.leaf);
    mopt_free(tt.tag);
    mopt_free(tt.sub);
    return st;
}

bool rt_inplace_enabled(void) {
    const char *env = getenv("MOPT_INPLACE");
    return !(env && strcmp(env, "0") == 0);
}
