/*
 * ir.c — construction, lookup, checking and destruction of IR graphs.
 * Knows nothing of ONNX files or of operators' semantics.
 */
#include "ir/ir.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

ir_graph *ir_graph_create(void) {
    ir_graph *g = mopt_calloc(1, sizeof *g);
    if (!g) return NULL;
    g->name = mopt_strdup("");
    if (!g->name) {
        mopt_free(g);
        return NULL;
    }
    return g;
}

void ir_tensor_destroy(ir_tensor *t) {
    if (!t) return;
    mopt_free(t->name);
    mopt_aligned_free(t->data);
    mopt_free(t);
}

void ir_attr_clear(ir_attr *a) {
    mopt_free(a->name);
    mopt_free(a->s);
    ir_tensor_destroy(a->t);
    ir_graph_destroy(a->g);
    mopt_free(a->floats);
    mopt_free(a->ints);
    if (a->strings)
        for (size_t i = 0; i < a->n; i++)
            mopt_free(a->strings[i]);
    mopt_free(a->strings);
    if (a->tensors)
        for (size_t i = 0; i < a->n; i++)
            ir_tensor_destroy(a->tensors[i]);
    mopt_free(a->tensors);
    if (a->graphs)
        for (size_t i = 0; i < a->n; i++)
            ir_graph_destroy(a->graphs[i]);
    mopt_free(a->graphs);
    memset(a, 0, sizeof *a);
}

/* The bit of inline_strs for one of n's string fields. */
static uint8_t str_bit(const ir_node *n, char *const *field) {
    return field == &n->name ? 1 : field == &n->op_type ? 2 : field == &n->domain ? 4 : 0;
}

void ir_node_set_str(ir_node *n, char **field, char *owned) {
    uint8_t bit = str_bit(n, field);
    if (!(n->inline_strs & bit)) mopt_free(*field);
    n->inline_strs &= (uint8_t)~bit;
    *field = owned;
}

void ir_node_destroy(ir_node *n) {
    if (!n) return;
    if (!(n->inline_strs & 1)) mopt_free(n->name);
    if (!(n->inline_strs & 2)) mopt_free(n->op_type);
    if (!(n->inline_strs & 4)) mopt_free(n->domain);
    mopt_free(n->inputs);
    mopt_free(n->outputs);
    for (int32_t i = 0; i < n->n_attrs; i++)
        ir_attr_clear(&n->attrs[i]);
    mopt_free(n->attrs);
    mopt_free(n);
}

int ir_graph_add_prop(ir_graph *g, const char *key, const char *value) {
    if (g->n_props >= INT32_MAX / 2) {
        mopt_fail(MOPT_ERR_LIMIT, "too many metadata entries");
        return -1;
    }
    ir_meta_prop *p = g->props;
    int32_t n = g->n_props;
    if ((n & (n - 1)) == 0) { /* 0, 1, 2, 4, 8...: grow the capacity to the next power of two */
        p = mopt_realloc(g->props, (size_t)(n < 2 ? 4 : 2 * n) * sizeof *p);
        if (!p) {
            mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory adding metadata '%.100s'", key);
            return -1;
        }
        g->props = p;
    }
    char *k = mopt_strdup(key), *v = mopt_strdup(value);
    if (!k || !v) {
        mopt_free(k);
        mopt_free(v);
        mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory adding metadata '%.100s'", key);
        return -1;
    }
    p[g->n_props].key = k;
    p[g->n_props].value = v;
    g->n_props++;
    return 0;
}

void ir_value_destroy(ir_value *v) {
    if (!v) return;
    if (!v->name_inline) mopt_free(v->name);
    if (!(v->flags & IR_VALUE_BORROWED)) mopt_aligned_free(v->data);
    mopt_free(v);
}

void ir_value_set_name(ir_value *v, char *owned) {
    if (!v->name_inline) mopt_free(v->name);
    v->name_inline = false;
    v->name = owned;
}

void ir_graph_destroy(ir_graph *g) {
    if (!g) return;
    for (int32_t i = 0; i < g->n_values; i++)
        ir_value_destroy(g->values[i]);
    mopt_free(g->values);
    for (int32_t i = 0; i < g->n_nodes; i++)
        ir_node_destroy(g->nodes[i]);
    mopt_free(g->nodes);
    mopt_free(g->inputs);
    mopt_free(g->outputs);
    for (int32_t i = 0; i < g->n_symbols; i++)
        mopt_free(g->symbols[i]);
    mopt_free(g->symbols);
    for (int32_t i = 0; i < g->n_opsets; i++)
        mopt_free(g->opsets[i].domain);
    mopt_free(g->opsets);
    mopt_free(g->producer_name);
    mopt_free(g->producer_version);
    mopt_free(g->domain);
    mopt_free(g->doc_string);
    mopt_free(g->graph_doc_string);
    for (int32_t i = 0; i < g->n_props; i++) {
        mopt_free(g->props[i].key);
        mopt_free(g->props[i].value);
    }
    mopt_free(g->props);
    mopt_free(g->name);
    mopt_free(g->hash);
    if (g->backing_release) g->backing_release(g->backing, g->backing_size);
    mopt_free(g);
}

/* ---- name hash table ---------------------------------------------------- */

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The table holds hash_cap slots of two int32: the value index (-1: empty)
 * and the low 32 bits of its name's hash, compared before the name is read
 * (a lookup then touches one cache line per probe, not three). */
static void hash_put(int32_t *h, size_t cap, int32_t v, uint32_t fp) {
    size_t k = fp & (cap - 1);
    while (h[2 * k] >= 0)
        k = (k + 1) & (cap - 1);
    h[2 * k] = v;
    h[2 * k + 1] = (int32_t)fp;
}

static int32_t *hash_alloc(size_t cap) {
    int32_t *h = mopt_malloc(2 * cap * sizeof *h);
    if (h)
        for (size_t i = 0; i < cap; i++)
            h[2 * i] = -1;
    return h;
}

/* From the names (after values were removed or renamed). */
static int hash_rebuild(ir_graph *g, size_t cap) {
    int32_t *h = hash_alloc(cap);
    if (!h) return -1;
    for (int32_t i = 0; i < g->n_values; i++)
        hash_put(h, cap, i, (uint32_t)hash_str(g->values[i]->name));
    mopt_free(g->hash);
    g->hash = h;
    g->hash_cap = cap;
    return 0;
}

/* Doubles the table from its own slots (cap stays below 2^32). */
static int hash_grow(ir_graph *g) {
    size_t cap = g->hash_cap ? g->hash_cap * 2 : 64;
    int32_t *h = hash_alloc(cap);
    if (!h) return -1;
    for (size_t i = 0; i < g->hash_cap; i++)
        if (g->hash[2 * i] >= 0) hash_put(h, cap, g->hash[2 * i], (uint32_t)g->hash[2 * i + 1]);
    mopt_free(g->hash);
    g->hash = h;
    g->hash_cap = cap;
    return 0;
}

int ir_graph_reindex(ir_graph *g) {
    size_t cap = 64;
    while (cap < (size_t)g->n_values * 2)
        cap *= 2;
    return hash_rebuild(g, cap);
}

static int32_t find_hashed(const ir_graph *g, const char *name, uint32_t fp) {
    if (!g->hash_cap) return -1;
    size_t k = fp & (g->hash_cap - 1);
    for (; g->hash[2 * k] >= 0; k = (k + 1) & (g->hash_cap - 1))
        if ((uint32_t)g->hash[2 * k + 1] == fp &&
            strcmp(g->values[g->hash[2 * k]]->name, name) == 0)
            return g->hash[2 * k];
    return -1;
}

int ir_graph_reserve(ir_graph *g, int32_t n_values, int32_t n_nodes) {
    if (n_values > INT32_MAX / 4 || n_nodes > INT32_MAX / 4) return 0; /* past the limits anyway */
    if (n_values > g->cap_values) {
        ir_value **nv = mopt_realloc(g->values, (size_t)n_values * sizeof *nv);
        if (!nv) goto oom;
        g->values = nv;
        g->cap_values = n_values;
    }
    if (n_nodes > g->cap_nodes) {
        ir_node **nn = mopt_realloc(g->nodes, (size_t)n_nodes * sizeof *nn);
        if (!nn) goto oom;
        g->nodes = nn;
        g->cap_nodes = n_nodes;
    }
    /* the index at the capacity ir_graph_value would have grown it to */
    size_t cap = g->hash_cap ? g->hash_cap : 64;
    while ((size_t)n_values * 2 > cap)
        cap *= 2;
    if (cap > g->hash_cap && hash_rebuild(g, cap) != 0) goto oom;
    return 0;
oom:
    mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reserving room for %d values", (int)n_values);
    return -1;
}

int32_t ir_graph_find_value(const ir_graph *g, const char *name) {
    return find_hashed(g, name, (uint32_t)hash_str(name));
}

/* arr (n entries of elem bytes, capacity *cap) with room for one more:
 * reallocated with twice the capacity (16 at first) when full. NULL when out
 * of memory (arr is then kept as it was). */
static void *room_for_one(void *arr, int32_t n, int32_t *cap, size_t elem) {
    if (n < *cap) return arr;
    int32_t c = *cap ? *cap * 2 : 16;
    void *na = mopt_realloc(arr, (size_t)c * elem);
    if (na) *cap = c;
    return na;
}

int32_t ir_graph_value(ir_graph *g, const char *name) {
    uint32_t fp = (uint32_t)hash_str(name);
    int32_t found = find_hashed(g, name, fp);
    if (found >= 0) return found;
    if (g->n_values == INT32_MAX / 4) {
        mopt_fail(MOPT_ERR_LIMIT, "too many values in graph");
        return -1;
    }
    ir_value **nv = room_for_one(g->values, g->n_values, &g->cap_values, sizeof *nv);
    if (!nv) goto oom;
    g->values = nv;
    /* the value and its name: one block */
    size_t len = strlen(name);
    if (len > SIZE_MAX - sizeof(ir_value) - 1) goto oom;
    ir_value *v = mopt_calloc(1, sizeof *v + len + 1);
    if (!v) goto oom;
    v->name = memcpy((char *)(v + 1), name, len + 1);
    v->name_inline = true;
    v->producer = -1;
    ir_shape_set_unknown(&v->shape);
    g->values[g->n_values++] = v;
    if ((size_t)g->n_values * 2 > g->hash_cap && hash_grow(g) != 0) {
        g->n_values--;
        mopt_free(v);
        goto oom;
    }
    hash_put(g->hash, g->hash_cap, g->n_values - 1, fp);
    return g->n_values - 1;
oom:
    mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory adding value '%s'", name);
    return -1;
}

ir_node *ir_graph_add_node(ir_graph *g, const char *op_type, const char *domain, const char *name,
                           int32_t n_inputs, int32_t n_outputs) {
    ir_node **nn = room_for_one(g->nodes, g->n_nodes, &g->cap_nodes, sizeof *nn);
    if (!nn) goto oom;
    g->nodes = nn;
    /* the node and its three strings: one block */
    const char *s[3] = {name ? name : "", op_type ? op_type : "", domain ? domain : ""};
    size_t len[3], total = sizeof(ir_node);
    for (int k = 0; k < 3; k++) {
        len[k] = strlen(s[k]);
        if (len[k] >= SIZE_MAX / 4 - total) goto oom;
        total += len[k] + 1;
    }
    ir_node *n = mopt_calloc(1, total);
    if (!n) goto oom;
    char *at = (char *)(n + 1);
    char **field[3] = {&n->name, &n->op_type, &n->domain};
    for (int k = 0; k < 3; k++) {
        *field[k] = memcpy(at, s[k], len[k] + 1);
        at += len[k] + 1;
    }
    n->inline_strs = 7;
    n->inputs = mopt_malloc((size_t)(n_inputs > 0 ? n_inputs : 1) * sizeof(int32_t));
    n->outputs = mopt_malloc((size_t)(n_outputs > 0 ? n_outputs : 1) * sizeof(int32_t));
    if (!n->inputs || !n->outputs) {
        ir_node_destroy(n);
        goto oom;
    }
    n->n_inputs = n_inputs;
    n->n_outputs = n_outputs;
    for (int32_t i = 0; i < n_inputs; i++)
        n->inputs[i] = -1;
    for (int32_t i = 0; i < n_outputs; i++)
        n->outputs[i] = -1;
    g->nodes[g->n_nodes++] = n;
    return n;
oom:
    mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory adding node '%s'", name ? name : "");
    return NULL;
}

ir_attr *ir_node_add_attr(ir_node *n, const char *name, ir_attr_type type) {
    ir_attr *na = mopt_realloc(n->attrs, (size_t)(n->n_attrs + 1) * sizeof *na);
    if (!na) goto oom;
    n->attrs = na;
    ir_attr *a = &na[n->n_attrs];
    memset(a, 0, sizeof *a);
    a->name = mopt_strdup(name);
    if (!a->name) goto oom;
    a->type = type;
    n->n_attrs++;
    return a;
oom:
    mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory adding attribute '%s'", name);
    return NULL;
}

int32_t ir_graph_symbol(ir_graph *g, const char *name) {
    for (int32_t i = 0; i < g->n_symbols; i++)
        if (strcmp(g->symbols[i], name) == 0) return i + 1;
    char **ns = mopt_realloc(g->symbols, (size_t)(g->n_symbols + 1) * sizeof *ns);
    if (!ns) goto oom;
    g->symbols = ns;
    ns[g->n_symbols] = mopt_strdup(name);
    if (!ns[g->n_symbols]) goto oom;
    return ++g->n_symbols;
oom:
    mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory adding symbol '%s'", name);
    return -1;
}

/* "ai.onnx" as "" (the first-letter test spares the strcmp for "" and the
 * other domains: this runs a few times per node at load and first run). */
static const char *domain_norm(const char *d) {
    return d[0] == 'a' && strcmp(d, "ai.onnx") == 0 ? "" : d;
}

static int domain_eq(const char *a, const char *b) {
    a = domain_norm(a), b = domain_norm(b);
    return a[0] == b[0] && (a[0] == 0 || strcmp(a, b) == 0);
}

int ir_graph_set_opset(ir_graph *g, const char *domain, int64_t version) {
    for (int32_t i = 0; i < g->n_opsets; i++)
        if (domain_eq(g->opsets[i].domain, domain)) {
            g->opsets[i].version = version;
            return 0;
        }
    ir_opset *no = mopt_realloc(g->opsets, (size_t)(g->n_opsets + 1) * sizeof *no);
    if (!no) goto oom;
    g->opsets = no;
    no[g->n_opsets].domain = mopt_strdup(strcmp(domain, "ai.onnx") == 0 ? "" : domain);
    if (!no[g->n_opsets].domain) goto oom;
    no[g->n_opsets].version = version;
    g->n_opsets++;
    return 0;
oom:
    mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory adding opset");
    return -1;
}

int64_t ir_graph_opset(const ir_graph *g, const char *domain) {
    for (int32_t i = 0; i < g->n_opsets; i++)
        if (domain_eq(g->opsets[i].domain, domain)) return g->opsets[i].version;
    return -1;
}

/* ---- attributes ---------------------------------------------------------- */

const ir_attr *ir_node_attr(const ir_node *n, const char *name) {
    for (int32_t i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

int64_t ir_node_attr_int(const ir_node *n, const char *name, int64_t def) {
    const ir_attr *a = ir_node_attr(n, name);
    return a && a->type == IR_ATTR_INT ? a->i : def;
}

float ir_node_attr_float(const ir_node *n, const char *name, float def) {
    const ir_attr *a = ir_node_attr(n, name);
    return a && a->type == IR_ATTR_FLOAT ? a->f : def;
}

const char *ir_node_attr_string(const ir_node *n, const char *name, const char *def) {
    const ir_attr *a = ir_node_attr(n, name);
    return a && a->type == IR_ATTR_STRING ? a->s : def;
}

int64_t ir_node_attr_ints(const ir_node *n, const char *name, const int64_t **out) {
    const ir_attr *a = ir_node_attr(n, name);
    if (!a || a->type != IR_ATTR_INTS) return -1;
    *out = a->ints;
    return (int64_t)a->n;
}

int64_t ir_node_attr_floats(const ir_node *n, const char *name, const float **out) {
    const ir_attr *a = ir_node_attr(n, name);
    if (!a || a->type != IR_ATTR_FLOATS) return -1;
    *out = a->floats;
    return (int64_t)a->n;
}

const ir_tensor *ir_node_attr_tensor(const ir_node *n, const char *name) {
    const ir_attr *a = ir_node_attr(n, name);
    return a && a->type == IR_ATTR_TENSOR ? a->t : NULL;
}

/* ---- checking and ordering ---------------------------------------------- */

/* The index of the node producing input k of n; -1 when the input is absent
 * or not produced by a node (a graph input or an initializer). */
static int32_t input_producer(const ir_graph *g, const ir_node *n, int32_t k) {
    int32_t v = n->inputs[k];
    return v < 0 ? -1 : g->values[v]->producer;
}

mopt_status ir_graph_check(ir_graph *g) {
    mopt_status st = MOPT_OK;
    int32_t nn = g->n_nodes;
    int32_t *indeg = NULL, *order = NULL, *queue = NULL;
    int32_t *edge_start = NULL, *edges = NULL;
    ir_node **sorted = NULL;
    size_t n_edges = 0;

    for (int32_t i = 0; i < g->n_values; i++)
        g->values[i]->producer = -1;
    /* producers */
    for (int32_t i = 0; i < nn; i++) {
        ir_node *n = g->nodes[i];
        for (int32_t k = 0; k < n->n_outputs; k++) {
            int32_t v = n->outputs[k];
            if (v < 0) continue;
            ir_value *val = g->values[v];
            if (val->flags & (IR_VALUE_INPUT | IR_VALUE_INITIALIZER))
                return mopt_fail(MOPT_ERR_INVALID_MODEL,
                                 "node '%s' (%s) writes '%s', which is a graph %s", n->name,
                                 n->op_type, val->name,
                                 (val->flags & IR_VALUE_INPUT) ? "input" : "initializer");
            if (val->producer >= 0)
                return mopt_fail(MOPT_ERR_INVALID_MODEL,
                                 "value '%s' is produced twice: by node '%s' (%s) and node "
                                 "'%s' (%s)",
                                 val->name, g->nodes[val->producer]->name,
                                 g->nodes[val->producer]->op_type, n->name, n->op_type);
            val->producer = i;
        }
    }
    /* every input defined */
    for (int32_t i = 0; i < nn; i++) {
        ir_node *n = g->nodes[i];
        for (int32_t k = 0; k < n->n_inputs; k++) {
            int32_t v = n->inputs[k];
            if (v < 0) continue;
            ir_value *val = g->values[v];
            if (val->producer < 0 && !(val->flags & (IR_VALUE_INPUT | IR_VALUE_INITIALIZER)))
                return mopt_fail(MOPT_ERR_INVALID_MODEL,
                                 "node '%s' (%s) input %d '%s' is not a graph input, an "
                                 "initializer or the output of any node",
                                 n->name, n->op_type, (int)k, val->name);
            n_edges++;
        }
    }
    for (int32_t i = 0; i < g->n_outputs; i++) {
        ir_value *val = g->values[g->outputs[i]];
        if (val->producer < 0 && !(val->flags & (IR_VALUE_INPUT | IR_VALUE_INITIALIZER)))
            return mopt_fail(MOPT_ERR_INVALID_MODEL,
                             "graph output '%s' is not produced by any node", val->name);
    }
    if (nn == 0) return MOPT_OK;

    /* Kahn's algorithm, stable: always take the lowest-index ready node. The
     * ready set is kept as a min-ordered scan over a queue of indices. */
    indeg = mopt_calloc((size_t)nn, sizeof *indeg);
    edge_start = mopt_calloc((size_t)nn + 1, sizeof *edge_start);
    edges = mopt_malloc((n_edges ? n_edges : 1) * sizeof *edges);
    order = mopt_malloc((size_t)nn * sizeof *order);
    queue = mopt_malloc((size_t)nn * sizeof *queue);
    sorted = mopt_malloc((size_t)nn * sizeof *sorted);
    if (!indeg || !edge_start || !edges || !order || !queue || !sorted) {
        st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory checking graph");
        goto done;
    }
    /* edges producer -> consumer, grouped by producer */
    for (int32_t i = 0; i < nn; i++)
        for (int32_t k = 0; k < g->nodes[i]->n_inputs; k++) {
            int32_t p = input_producer(g, g->nodes[i], k);
            if (p < 0) continue;
            edge_start[p + 1]++;
            indeg[i]++;
        }
    for (int32_t i = 0; i < nn; i++)
        edge_start[i + 1] += edge_start[i];
    {
        int32_t *fill = mopt_calloc((size_t)nn, sizeof *fill);
        if (!fill) {
            st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory checking graph");
            goto done;
        }
        for (int32_t i = 0; i < nn; i++)
            for (int32_t k = 0; k < g->nodes[i]->n_inputs; k++) {
                int32_t p = input_producer(g, g->nodes[i], k);
                if (p >= 0) edges[edge_start[p] + fill[p]++] = i;
            }
        mopt_free(fill);
    }
    /* A binary heap would be O(n log n); a simple approach that keeps the
     * original order when it is already topological: process in index order,
     * repeatedly sweeping. Use a FIFO seeded in index order instead, which is
     * stable for already-sorted graphs and O(V+E). */
    int32_t head = 0, tail = 0, count = 0;
    for (int32_t i = 0; i < nn; i++)
        if (indeg[i] == 0) queue[tail++] = i;
    while (head < tail) {
        int32_t i = queue[head++];
        order[count++] = i;
        for (int32_t e = edge_start[i]; e < edge_start[i + 1]; e++)
            if (--indeg[edges[e]] == 0) queue[tail++] = edges[e];
    }
    if (count != nn) {
        for (int32_t i = 0; i < nn; i++)
            if (indeg[i] > 0) {
                st = mopt_fail(MOPT_ERR_INVALID_MODEL,
                               "the graph has a cycle through node '%s' (%s)", g->nodes[i]->name,
                               g->nodes[i]->op_type);
                goto done;
            }
    }
    for (int32_t i = 0; i < nn; i++)
        sorted[i] = g->nodes[order[i]];
    memcpy(g->nodes, sorted, (size_t)nn * sizeof *sorted);
    for (int32_t i = 0; i < nn; i++) {
        ir_node *n = g->nodes[i];
        for (int32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] >= 0) g->values[n->outputs[k]]->producer = i;
    }
done:
    mopt_free(indeg);
    mopt_free(edge_start);
    mopt_free(edges);
    mopt_free(order);
    mopt_free(queue);
    mopt_free(sorted);
    return st;
}

/* ---- shapes ---------------------------------------------------------------- */

void ir_shape_set_unknown(ir_shape *s) {
    memset(s, 0, sizeof *s);
    s->rank = -1;
}

void ir_shape_set_scalar(ir_shape *s) {
    memset(s, 0, sizeof *s);
    s->rank = 0;
}

void ir_shape_set(ir_shape *s, int32_t rank, const int64_t *dims) {
    memset(s, 0, sizeof *s);
    s->rank = rank;
    for (int32_t i = 0; i < rank; i++)
        s->dims[i] = dims[i];
}

bool ir_shape_is_concrete(const ir_shape *s) {
    if (s->rank < 0) return false;
    for (int32_t i = 0; i < s->rank; i++)
        if (s->syms[i] != 0) return false;
    return true;
}

int64_t ir_numel(int32_t rank, const int64_t *dims) {
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] < 0) return -1;
        if (dims[i] && n > INT64_MAX / dims[i]) return -1;
        n *= dims[i];
    }
    return n;
}

int64_t ir_shape_numel(const ir_shape *s) {
    if (!ir_shape_is_concrete(s)) return -1;
    return ir_numel(s->rank, s->dims);
}

const char *ir_shape_str(const ir_shape *s, const ir_graph *g, char *buf, size_t cap) {
    size_t len = 0;
    if (cap == 0) return buf;
    buf[0] = '\0';
    if (s->rank < 0) {
        snprintf(buf, cap, "[?]");
        return buf;
    }
    len += (size_t)snprintf(buf + len, cap - len, "[");
    for (int32_t i = 0; i < s->rank && len < cap; i++) {
        const char *sep = i ? "," : "";
        if (s->syms[i] == 0)
            len += (size_t)snprintf(buf + len, cap - len, "%s%" PRId64, sep, s->dims[i]);
        else if (s->syms[i] < 0)
            len += (size_t)snprintf(buf + len, cap - len, "%s?", sep);
        else if (g && s->syms[i] <= g->n_symbols)
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", sep, g->symbols[s->syms[i] - 1]);
        else
            len += (size_t)snprintf(buf + len, cap - len, "%ss%d", sep, (int)s->syms[i]);
    }
    if (len < cap) snprintf(buf + len, cap - len, "]");
    return buf;
}
