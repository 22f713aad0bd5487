/*
 * fusion.h — pattern-matching and rewriting helpers shared by the fusion
 * passes (pass_fuse_*.c): the node loop that drives each of them, producer/consumer lookup over
 * live nodes, constant scalars, new initializers and the placement of a fused node where the last
 * node of its pattern was (which keeps the node list topologically ordered, as dead-code marking
 * expects).
 */
#ifndef MOPT_PASSES_FUSION_H
#define MOPT_PASSES_FUSION_H

#include "passes/passes.h"

typedef struct fu_graph {
    ir_graph *g;
    int32_t *uses; /* per value: live node inputs reading it, +1 if a graph output */
    int32_t *prod; /* per value: index of the live node producing it, or -1 */
    int32_t cap;   /* entries allocated in uses/prod */
} fu_graph;

/* Computes uses and producers. OK or OUT_OF_MEMORY. */
mopt_status fu_init(fu_graph *f, ir_graph *g);
/* Recomputes them after a rewrite (values may have been added). */
mopt_status fu_refresh(fu_graph *f);
void fu_free(fu_graph *f);

/* True when n is live and is op_type in the default ONNX domain. */
bool fu_is(const ir_node *n, const char *op_type);
/* The live node producing v, or NULL (graph input, initializer, v < 0). */
ir_node *fu_producer(const fu_graph *f, int32_t v);
/* The producer of v when it is op_type, else NULL. */
ir_node *fu_producer_is(const fu_graph *f, int32_t v, const char *op_type);
/* The only node reading v, when v has exactly one use and is not a graph
 * output; else NULL. *index (may be NULL) receives its node index. */
ir_node *fu_sole_consumer(const fu_graph *f, int32_t v, int32_t *index);
/* Index of node n in g->nodes, or -1. */
int32_t fu_node_index(const fu_graph *f, const ir_node *n);

/* v is a weight/constant (has data). */
bool fu_is_const(const ir_graph *g, int32_t v);
/* v is a constant with exactly one element of a float or integer type;
 * its value goes to *out. */
bool fu_const_scalar(const ir_graph *g, int32_t v, double *out);
/* The constant f32 data of v and its element count, or NULL. */
const float *fu_const_f32(const ir_graph *g, int32_t v, int64_t *numel);
/* |v - ref| <= rel * |ref|. */
bool fu_near(double v, double ref, double rel);
/* For a two-input node reading v: the index (0 or 1) of its other input,
 * or -1 when v is not exactly one of its two inputs. */
int fu_other_input(const ir_node *n, int32_t v);
/* For a two-input node: the index of an input that is a constant scalar
 * near ref (the other index is then 1 - result), or -1. */
int fu_scalar_input(const ir_graph *g, const ir_node *n, double ref, double rel);
/* Shapes equal: same rank, every axis the same fixed size or symbol. */
bool fu_same_shape(const ir_shape *a, const ir_shape *b);

/* Adds a new initializer of dtype (data copied: the dtype's size times the
 * element count of dims) named after base. Returns the value index, or -1
 * (message set: LIMIT for a size that overflows, OUT_OF_MEMORY). */
int32_t fu_add_weight(ir_graph *g, const char *base, mopt_dtype dtype, int32_t rank,
                      const int64_t *dims, const void *data);
/* fu_add_weight for MOPT_DTYPE_F32. */
int32_t fu_add_f32_weight(ir_graph *g, const char *base, int32_t rank, const int64_t *dims,
                          const float *data);

/* Creates node (op_type, domain) with n_inputs unset inputs and one output
 * `out_value`, resolves its operator, and puts it at the position of node
 * `replaced` (which is marked dead and moved to the end). Returns NULL when
 * out of memory (message set). */
ir_node *fu_replace_node(fu_graph *f, ir_node *replaced, const char *op_type, const char *domain,
                         const char *name, int32_t n_inputs, int32_t out_value);

/* A fusion pass as the node visitor fu_run_pass drives: */
typedef struct fu_pass {
    /* Looks at node n (dead ones too: test with fu_is), rewrites the pattern
     * it matches there (fu_refresh after a rewrite) and counts what it did in
     * c[] (indices as in notes). A failure ends the pass. */
    mopt_status (*visit)(fu_graph *f, ir_node *n, int32_t *c);
    /* Optional: runs after the node loops when they succeeded. */
    mopt_status (*finish)(ir_graph *g, int32_t *c);
    const char *notes[PASS_COUNTS_CAP]; /* c[k]'s name in the note (pass_note_counts) */
    unsigned rewrites;                  /* bits k of the c[k] that count as rewrites */
    /* Optional: a second node loop, after the first succeeded, for patterns
     * over what the first rewrote (same contract as visit). */
    mopt_status (*then_visit)(fu_graph *f, ir_node *n, int32_t *c);
} fu_pass;

/* Runs a fusion pass: fu_init, visit on every node in order (nodes a rewrite
 * appends included) until one fails, then then_visit likewise, fu_free,
 * finish, then r's rewrites and note from the counts, whether or not it
 * failed. */
mopt_status fu_run_pass(ir_graph *g, pass_result *r, const fu_pass *p);

/* Attribute setters; false when out of memory (message set). */
bool fu_set_int(ir_node *n, const char *name, int64_t v);
bool fu_set_float(ir_node *n, const char *name, float v);
bool fu_set_string(ir_node *n, const char *name, const char *v);
/* True when every attribute of src is an INT, FLOAT, STRING, INTS or FLOATS
 * (the kinds fu_copy_attrs copies). */
bool fu_attrs_copyable(const ir_node *src);
/* Copies the attributes of src (fu_attrs_copyable must hold). false when out
 * of memory (message set). */
bool fu_copy_attrs(ir_node *dst, const ir_node *src);

/* Declares the "mopt" operator domain in the graph's opsets (version 1).
 * false when out of memory. */
bool fu_use_mopt_domain(ir_graph *g);

/* An activation the fused operators apply in their epilogue. */
typedef struct fu_act {
    const char *name; /* value of the `activation` attribute */
    float alpha, beta;
    bool has_params; /* write activation_alpha/activation_beta */
} fu_act;

/* True when n (live, default domain, one data input) is Relu, LeakyRelu,
 * Clip (constant bounds), HardSwish, HardSigmoid, Sigmoid, Tanh or Gelu,
 * and fills *a. */
bool fu_activation(const ir_graph *g, const ir_node *n, fu_act *a);
/* Writes the activation attributes onto a fused node; false on OOM. */
bool fu_set_activation(ir_node *n, const fu_act *a);

#endif
