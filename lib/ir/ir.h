/*
 * ir.h — the intermediate representation: a graph of values (tensors) and
 * nodes, with shapes whose dimensions are numbers or named symbols.
 *
 * The importer (lib/io) builds it, passes (lib/passes) rewrite it, the
 * runtime (lib/runtime) executes it. Kernels never see it.
 *
 * Ownership: a graph owns all its values, nodes, attributes, strings and
 * initializer data (except IR_VALUE_BORROWED data, which lives in the graph's
 * backing storage); ir_graph_destroy releases everything.
 */
#ifndef MOPT_IR_IR_H
#define MOPT_IR_IR_H

#include <mopt/mopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IR_MAX_RANK MOPT_MAX_RANK

/* A shape. rank < 0: unknown rank. For each axis, syms[i] == 0 means the
 * size is dims[i]; syms[i] > 0 means the named symbol graph->symbols[syms[i]-1]
 * (dims[i] is then meaningless); syms[i] < 0 means unknown. At run time every
 * shape is fully concrete (all syms 0). */
typedef struct ir_shape {
    int32_t rank;
    int64_t dims[IR_MAX_RANK];
    int32_t syms[IR_MAX_RANK];
} ir_shape;

/* A standalone tensor (attribute values, TensorProto files). */
typedef struct ir_tensor {
    char *name;
    mopt_dtype dtype;
    int32_t rank;
    int64_t dims[IR_MAX_RANK];
    void *data;    /* owned, 64-byte aligned (mopt_aligned_alloc); NULL if empty */
    size_t nbytes; /* element count * element size (strings: not supported) */
} ir_tensor;

/* Values of AttributeProto.AttributeType. */
typedef enum ir_attr_type {
    IR_ATTR_UNDEFINED = 0,
    IR_ATTR_FLOAT = 1,
    IR_ATTR_INT = 2,
    IR_ATTR_STRING = 3,
    IR_ATTR_TENSOR = 4,
    IR_ATTR_GRAPH = 5,
    IR_ATTR_FLOATS = 6,
    IR_ATTR_INTS = 7,
    IR_ATTR_STRINGS = 8,
    IR_ATTR_TENSORS = 9,
    IR_ATTR_GRAPHS = 10,
    IR_ATTR_SPARSE_TENSOR = 11,
    IR_ATTR_SPARSE_TENSORS = 12,
    IR_ATTR_TYPE_PROTO = 13,
    IR_ATTR_TYPE_PROTOS = 14
} ir_attr_type;

struct ir_graph;

typedef struct ir_attr {
    char *name;
    ir_attr_type type;
    float f;
    int64_t i;
    char *s; /* NUL-terminated copy; s_len holds the true length */
    size_t s_len;
    ir_tensor *t;
    struct ir_graph *g;
    size_t n; /* element count of the list below that matches `type` */
    float *floats;
    int64_t *ints;
    char **strings;
    ir_tensor **tensors;
    struct ir_graph **graphs;
} ir_attr;

enum {
    IR_VALUE_INPUT = 1u << 0,       /* a graph input */
    IR_VALUE_OUTPUT = 1u << 1,      /* a graph output */
    IR_VALUE_INITIALIZER = 1u << 2, /* has data: a weight */
    IR_VALUE_BORROWED = 1u << 3,    /* data is not owned by the value: it points into the
                                       graph's backing storage (a memory-mapped .mopt file);
                                       never freed nor written, only dropped */
};

typedef struct ir_value {
    char *name;
    mopt_dtype dtype; /* UNDEFINED until known */
    ir_shape shape;
    uint32_t flags;
    int32_t producer; /* index of the producing node, -1 if none */
    void *data;       /* initializer data (owned, aligned, unless IR_VALUE_BORROWED), else NULL */
    size_t nbytes;
    bool name_inline; /* name is in the value's own block: replace it with ir_value_set_name */
} ir_value;

typedef struct ir_node {
    char *name;    /* never NULL (may be "") */
    char *op_type; /* never NULL */
    char *domain;  /* never NULL; "" for the default ONNX domain */
    int32_t n_inputs;
    int32_t *inputs; /* value indices; -1 for an omitted optional input */
    int32_t n_outputs;
    int32_t *outputs; /* value indices; -1 for an omitted optional output */
    int32_t n_attrs;
    ir_attr *attrs;
    const struct op_def *op; /* resolved by the runtime at load */
    bool dead;               /* marked for removal by a pass (ir_graph_compact) */
    /* Which of name, op_type, domain are in the node's own block (one
     * allocation with the node, as ir_graph_add_node makes them): replace
     * those strings with ir_node_set_str, never mopt_free them. */
    uint8_t inline_strs;
} ir_node;

/* Replaces one of n's strings (field: &n->name, &n->op_type or &n->domain)
 * with `owned` (a mopt_malloc'd string n then owns), freeing the old one
 * unless it was in the node's block. */
void ir_node_set_str(ir_node *n, char **field, char *owned);

/* One entry of a model's custom metadata (ONNX metadata_props). */
typedef struct ir_meta_prop {
    char *key;
    char *value;
} ir_meta_prop;

typedef struct ir_opset {
    char *domain; /* "" for the default domain */
    int64_t version;
} ir_opset;

typedef struct ir_graph {
    char *name;
    ir_value **values;
    int32_t n_values, cap_values;
    ir_node **nodes;
    int32_t n_nodes, cap_nodes;
    int32_t *inputs; /* graph inputs (value indices), initializers excluded */
    int32_t n_inputs;
    int32_t *outputs;
    int32_t n_outputs;
    char **symbols; /* symbolic dim names; symbol id k is symbols[k-1] */
    int32_t n_symbols;
    ir_opset *opsets;
    int32_t n_opsets;
    int64_t ir_version;
    char *producer_name;
    /* What the model says about itself (ONNX ModelProto fields and the
     * graph's doc_string; NULL when absent). Set on the top graph only. */
    char *producer_version;
    char *domain;
    char *doc_string;
    char *graph_doc_string;
    int64_t model_version;
    ir_meta_prop *props; /* metadata_props, in file order */
    int32_t n_props;
    /* name -> value index hash table (open addressing, ir.c): hash_cap slots
     * of two int32, the value index and its name's hash */
    int32_t *hash;
    size_t hash_cap;
    /* Storage that IR_VALUE_BORROWED data (here and in subgraphs) points into,
     * e.g. the mapping of a .mopt file; ir_graph_destroy calls
     * backing_release(backing, backing_size) after everything else. */
    void *backing;
    size_t backing_size;
    void (*backing_release)(void *base, size_t size);
} ir_graph;

/* Appends a metadata entry (both strings copied). Returns 0, or -1 when out
 * of memory (message set). */
int ir_graph_add_prop(ir_graph *g, const char *key, const char *value);

/* Creation and destruction. Return NULL / -1 only when out of memory. */
ir_graph *ir_graph_create(void);
void ir_graph_destroy(ir_graph *g);
void ir_tensor_destroy(ir_tensor *t);
void ir_attr_clear(ir_attr *a);
/* Frees a node that is not (or no longer) in a graph's node list; NULL is a no-op. */
void ir_node_destroy(ir_node *n);

/* Frees a value: its name, its data (unless IR_VALUE_BORROWED), itself. */
void ir_value_destroy(ir_value *v);

/* Replaces v's name with `owned` (mopt_malloc'd; v then owns it), freeing
 * the old one unless it was in the value's block. The caller reindexes. */
void ir_value_set_name(ir_value *v, char *owned);

/* Finds a value by name, or adds a new one (dtype UNDEFINED, rank -1).
 * Returns its index, or -1 when out of memory (message set). */
int32_t ir_graph_value(ir_graph *g, const char *name);
/* Index of the value of that name, or -1. */
int32_t ir_graph_find_value(const ir_graph *g, const char *name);
/* Appends a node with n_inputs/n_outputs slots set to -1 and no attributes.
 * The strings are copied. Returns NULL when out of memory (message set). */
ir_node *ir_graph_add_node(ir_graph *g, const char *op_type, const char *domain, const char *name,
                           int32_t n_inputs, int32_t n_outputs);
/* Appends an attribute slot (zeroed, name copied) and returns it, or NULL. */
ir_attr *ir_node_add_attr(ir_node *n, const char *name, ir_attr_type type);
/* Interns a symbolic dimension name; returns its id (>= 1) or -1 on OOM. */
int32_t ir_graph_symbol(ir_graph *g, const char *name);
/* Sets the opset for a domain (adds or replaces). Returns 0, or -1 on OOM. */
int ir_graph_set_opset(ir_graph *g, const char *domain, int64_t version);
/* Opset of a domain ("" and "ai.onnx" are the same), or -1. */
int64_t ir_graph_opset(const ir_graph *g, const char *domain);

/* Attribute lookup; NULL / default when absent. A present attribute of the
 * wrong type counts as absent for the typed getters; ops that need to reject
 * it check ir_node_attr()->type themselves. */
const ir_attr *ir_node_attr(const ir_node *n, const char *name);
int64_t ir_node_attr_int(const ir_node *n, const char *name, int64_t def);
float ir_node_attr_float(const ir_node *n, const char *name, float def);
const char *ir_node_attr_string(const ir_node *n, const char *name, const char *def);
/* List attributes: returns the element count and sets *out, or -1 if absent. */
int64_t ir_node_attr_ints(const ir_node *n, const char *name, const int64_t **out);
int64_t ir_node_attr_floats(const ir_node *n, const char *name, const float **out);
const ir_tensor *ir_node_attr_tensor(const ir_node *n, const char *name);

/* Orders nodes topologically (stable) and checks the graph: every node input
 * is a graph input, an initializer or produced by exactly one node; there is
 * no cycle; every graph output is defined. Fills value->producer. Errors name
 * the node and value. Returns OK, INVALID_MODEL or OUT_OF_MEMORY. */
mopt_status ir_graph_check(ir_graph *g);

/* ---- editing (ir_edit.c), for passes ---- */

/* Number of node inputs referring to each value, plus 1 for each graph
 * output; counts must hold g->n_values entries. Dead nodes are skipped. */
void ir_graph_use_counts(const ir_graph *g, int32_t *counts);
/* Makes every (live) node input that reads `from` read `to` instead, by a
 * sweep of the whole graph: O(nodes). In a loop, use an ir_uses index. */
void ir_graph_replace_uses(ir_graph *g, int32_t from, int32_t to);

/* A use index: for each value, the (node, input slot) pairs that read it,
 * so that replacing a value's uses costs O(its uses), not O(graph).
 *
 * A pass builds it once (O(nodes + inputs)) and keeps it while the node and
 * value numbering stays put (until ir_graph_compact). Entries are verified
 * when read: an entry whose node is dead or whose slot no longer reads the
 * value is dropped, so a pass may remove or redirect inputs by writing
 * n->inputs[k] directly. A new use (an input made to read a value) must be
 * recorded, through ir_uses_set_input or ir_uses_add, else ir_uses_replace
 * would miss it; values added to the graph after the build are covered. */
typedef struct ir_use {
    int32_t node, slot;
    int32_t next; /* next entry of the same value, -1 at the end */
} ir_use;

typedef struct ir_uses {
    int32_t *head; /* per value: first entry, or -1 */
    int32_t n_head;
    ir_use *entries;
    int32_t n_entries, cap_entries;
} ir_uses;

/* Builds the index of g's live nodes. Returns OK or OUT_OF_MEMORY (u is
 * then empty; ir_uses_free is still safe). */
mopt_status ir_uses_build(ir_uses *u, const ir_graph *g);
void ir_uses_free(ir_uses *u);
/* Records that input `slot` of node `node` reads v (v >= 0). Returns OK or
 * OUT_OF_MEMORY. */
mopt_status ir_uses_add(ir_uses *u, int32_t v, int32_t node, int32_t slot);
/* Sets g->nodes[node]->inputs[slot] = v and records the use. */
mopt_status ir_uses_set_input(ir_uses *u, ir_graph *g, int32_t node, int32_t slot, int32_t v);
/* Makes every live node input that reads `from` read `to` instead (what
 * ir_graph_replace_uses does), in O(uses of from); the uses move to `to`.
 * Returns OK or OUT_OF_MEMORY (only when `to` is a value added since the
 * build; nothing is changed then). */
mopt_status ir_uses_replace(ir_uses *u, ir_graph *g, int32_t from, int32_t to);
/* Removes dead nodes and values nothing refers to any more (keeping graph
 * inputs, outputs and values named by live nodes), renumbering values.
 * Returns OK or OUT_OF_MEMORY (the graph is unchanged then). */
mopt_status ir_graph_compact(ir_graph *g);
/* Rebuilds the name index after values were removed or renamed. Returns 0,
 * or -1 when out of memory. */
int ir_graph_reindex(ir_graph *g);
/* Room for n_values values and n_nodes nodes in all (the value and node
 * lists and the name index sized once, e.g. by an importer that counted
 * them). Only a hint: returns 0, or -1 when out of memory (message set; the
 * graph is unchanged but for the room already made). */
int ir_graph_reserve(ir_graph *g, int32_t n_values, int32_t n_nodes);
/* Marks nodes dead that no graph output depends on. Returns the count. */
int32_t ir_graph_mark_dead_code(ir_graph *g);
/* True when two attributes are equal (graphs never are). */
bool ir_attr_equal(const ir_attr *a, const ir_attr *b);
/* Adds a value with a unique name derived from base ("base", "base_1", ...).
 * Returns its index or -1 (message set). */
int32_t ir_graph_new_value(ir_graph *g, const char *base);

/* Shape helpers. */
void ir_shape_set_unknown(ir_shape *s);
void ir_shape_set_scalar(ir_shape *s);
void ir_shape_set(ir_shape *s, int32_t rank, const int64_t *dims);
bool ir_shape_is_concrete(const ir_shape *s);
/* Product of the dims of a concrete shape; -1 on overflow or non-concrete. */
int64_t ir_shape_numel(const ir_shape *s);
/* Formats e.g. "[batch,seq,768]" or "[?]" into buf; returns buf. g may be
 * NULL (symbols then print as "s<id>"). */
const char *ir_shape_str(const ir_shape *s, const ir_graph *g, char *buf, size_t cap);
#define IR_SHAPE_STR_CAP 192

/* Element count from dims; -1 on overflow or negative dims. */
int64_t ir_numel(int32_t rank, const int64_t *dims);

#endif
