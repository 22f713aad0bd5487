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

static uint64_t mix_bytes(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = mix(h, b[i]);
    return h;
}

/* A hash of what ir_attr_equal compares (tensor data: its first 64 bytes). */
static uint64_t attr_hash(const ir_attr *a) {
    uint64_t h = mix_bytes(1469598103934665603ull, a->name, strlen(a->name));
    h = mix(h, (uint64_t)a->type);
    switch (a->type) {
    case IR_ATTR_FLOAT: return mix_bytes(h, &a->f, sizeof a->f);
    case IR_ATTR_INT: return mix(h, (uint64_t)a->i);
    case IR_ATTR_STRING: return mix_bytes(h, a->s, a->s_len);
    case IR_ATTR_FLOATS: return mix_bytes(mix(h, a->n), a->floats, a->n * sizeof *a->floats);
    case IR_ATTR_INTS: return mix_bytes(mix(h, a->n), a->ints, a->n * sizeof *a->ints);
    case IR_ATTR_TENSOR:
        if (!a->t) return h;
        h = mix(mix(h, (uint64_t)a->t->dtype), a->t->nbytes);
        return a->t->data ? mix_bytes(h, a->t->data, a->t->nbytes < 64 ? a->t->nbytes : 64) : h;
    default: return mix(h, a->n);
    }
}

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
    /* attributes, summed so that their order does not matter (same_node
     * looks them up by name): nodes that differ only in an attribute value
     * land in different groups */
    uint64_t ah = 0;
    for (int32_t k = 0; k < n->n_attrs; k++)
        ah += attr_hash(&n->attrs[k]);
    return mix(h, ah);
}

static int cmp_sig(const void *a, const void *b) {
    const sig *x = a, *y = b;
    if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
    return x->node - y->node;
}

/* Sorts sigs[0..n) by (hash, node), sigs being in node order: a stable
 * counting sort on the top 16 bits of the hash into tmp (n entries), then a
 * stable insertion sort on the hash within each bucket (a few entries each;
 * qsort for a large one), back into sigs. The same order as qsort with
 * cmp_sig, in two sweeps instead of ~20 comparisons per node through a
 * function pointer. count has SORT_BUCKETS + 1 entries. */
#define SORT_BUCKETS 65536
static void sort_sigs(sig *sigs, sig *tmp, int32_t *count, int32_t n) {
    if (n < 4096 || !count) {
        qsort(sigs, (size_t)n, sizeof *sigs, cmp_sig);
        return;
    }
    memset(count, 0, (SORT_BUCKETS + 1) * sizeof *count);
    for (int32_t i = 0; i < n; i++)
        count[(sigs[i].hash >> 48) + 1]++;
    for (int32_t d = 0; d < SORT_BUCKETS; d++)
        count[d + 1] += count[d];
    for (int32_t i = 0; i < n; i++)
        tmp[count[sigs[i].hash >> 48]++] = sigs[i];
    /* count[d] is now the end of bucket d */
    for (int32_t d = 0, lo = 0; d < SORT_BUCKETS; lo = count[d++]) {
        int32_t hi = count[d];
        if (hi - lo > 32) {
            qsort(tmp + lo, (size_t)(hi - lo), sizeof *tmp, cmp_sig);
            continue;
        }
        for (int32_t i = lo + 1; i < hi; i++) {
            sig x = tmp[i];
            int32_t j = i;
            for (; j > lo && tmp[j - 1].hash > x.hash; j--)
                tmp[j] = tmp[j - 1];
            tmp[j] = x;
        }
    }
    memcpy(sigs, tmp, (size_t)n * sizeof *sigs);
}

static bool mergeable(const ir_node *n) {
    if (n->n_outputs < 1) return false;
    static const char *const k_random[] = {
        "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
        "Multinomial",  "Bernoulli",     "Dropout"};
    for (size_t i = 0; i < sizeof k_random / sizeof k_random[0]; i++)
        if (n->op_type[0] == k_random[i][0] && strcmp(n->op_type, k_random[i]) == 0) return false;
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

static bool writes_output(const ir_graph *g, const ir_node *n) {
    for (int32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] >= 0 && (g->values[n->outputs[k]]->flags & IR_VALUE_OUTPUT)) return true;
    return false;
}

/* dup's outputs all exist on `first` too. */
static bool outputs_match(const ir_node *first, const ir_node *dup) {
    for (int32_t k = 0; k < dup->n_outputs; k++)
        if (dup->outputs[k] >= 0 && first->outputs[k] < 0) return false;
    return true;
}

/* Within one group of equal hashes (sigs[lo..hi), in node order), merges
 * each node into the first earlier live node that computes the same thing
 * and has its outputs. The live nodes are kept per class of equal nodes
 * (class heads in cls[], members chained through next[] in node order), so
 * a node is compared with one node per class, then with that class's
 * members until one can take it: linear in the group size unless hashes
 * collide or nodes differ in which optional outputs they have. */
static mopt_status merge_group(ir_graph *g, ir_uses *u, const sig *sigs, int32_t lo, int32_t hi,
                               int32_t *cls, int32_t *tail, int32_t *next, int32_t *merged) {
    int32_t n_cls = 0;
    for (int32_t b = lo; b < hi; b++) {
        ir_node *dup = g->nodes[sigs[b].node];
        next[b] = -1;
        if (dup->dead) continue;
        int32_t c = 0;
        while (c < n_cls && !same_node(g->nodes[sigs[cls[c]].node], dup))
            c++;
        if (c == n_cls) {
            cls[n_cls] = tail[n_cls] = b;
            n_cls++;
            continue;
        }
        int32_t into = -1;
        if (!writes_output(g, dup))
            for (int32_t a = cls[c]; a >= 0 && into < 0; a = next[a]) {
                const ir_node *first = g->nodes[sigs[a].node];
                if (outputs_match(first, dup) && same_node(first, dup)) into = a;
            }
        if (into < 0) { /* stays live: a candidate for the later ones */
            next[tail[c]] = b;
            tail[c] = b;
            continue;
        }
        const ir_node *first = g->nodes[sigs[into].node];
        if (!u->head) { /* the first merge of the pass builds the index */
            mopt_status st = ir_uses_build(u, g);
            if (st) return st;
        }
        for (int32_t k = 0; k < dup->n_outputs; k++)
            if (dup->outputs[k] >= 0) {
                mopt_status st = ir_uses_replace(u, g, dup->outputs[k], first->outputs[k]);
                if (st) return st;
            }
        dup->dead = true;
        (*merged)++;
    }
    return MOPT_OK;
}

mopt_status pass_cse(ir_graph *g, pass_result *r) {
    int32_t merged = 0;
    size_t cnt = (size_t)(g->n_nodes ? g->n_nodes : 1);
    sig *sigs = mopt_malloc(2 * cnt * sizeof *sigs); /* and the sort's scratch */
    int32_t *scratch = mopt_malloc(3 * cnt * sizeof *scratch);
    /* the sort's buckets, for large graphs (qsort without them) */
    int32_t *buckets = cnt >= 4096 ? mopt_malloc((SORT_BUCKETS + 1) * sizeof *buckets) : NULL;
    ir_uses u = {0};
    mopt_status st =
        sigs && scratch ? MOPT_OK : mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory in CSE");
    /* Iterate to a fixed point: merging two nodes can make their consumers
     * identical. Each round is O(n log n). */
    for (int round = 0; round < 16 && !st; round++) {
        int32_t n_sigs = 0, merged_round = 0;
        for (int32_t i = 0; i < g->n_nodes; i++) {
            const ir_node *n = g->nodes[i];
            if (!n->dead && mergeable(n)) sigs[n_sigs++] = (sig){node_hash(n), i};
        }
        sort_sigs(sigs, sigs + cnt, buckets, n_sigs);
        for (int32_t a = 0; a < n_sigs && !st;) {
            int32_t b = a + 1;
            while (b < n_sigs && sigs[b].hash == sigs[a].hash)
                b++;
            if (b - a > 1)
                st = merge_group(g, &u, sigs, a, b, scratch, scratch + cnt, scratch + 2 * cnt,
                                 &merged_round);
            a = b;
        }
        merged += merged_round;
        if (!merged_round) break;
    }
    ir_uses_free(&u);
    mopt_free(sigs);
    mopt_free(scratch);
    mopt_free(buckets);
    if (st) return st;
    r->rewrites = merged;
    pass_note_add(r, merged, "duplicate nodes merged");
    return MOPT_OK;
}
