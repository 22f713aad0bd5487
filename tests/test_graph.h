/*
 * test_graph.h — building small IR graphs by hand in cmocka tests of
 * load-time inference (tests/unit/test_ops_shape.c, test_ops_compute.c):
 * inputs and initializers with shapes written "batch,seq,768" (a name is a
 * symbol, ? an unknown dim), nodes with space-separated input and output
 * names, graph outputs, and the model built from the graph with the default
 * configuration, and the checks of a build: a value's shape, or the status
 * and message of a failure. Header-only (static inline functions); include after <cmocka.h>.
 * Node attributes: tests/test_attrs.h.
 */
#ifndef MOPT_TESTS_TEST_GRAPH_H
#define MOPT_TESTS_TEST_GRAPH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "ir/ir.h"
#include "runtime/runtime.h"

static inline ir_graph *new_graph(int64_t opset) {
    ir_graph *g = ir_graph_create();
    assert_non_null(g);
    assert_int_equal(ir_graph_set_opset(g, "", opset), 0);
    return g;
}

static inline void graph_append(int32_t **list, int32_t *n, int32_t v) {
    *list = mopt_realloc(*list, sizeof **list * (size_t)(*n + 1));
    assert_non_null(*list);
    (*list)[(*n)++] = v;
}

/* Value `name` (made when new) with dtype dt and the shape spec. */
static inline ir_value *shaped_value(ir_graph *g, const char *name, mopt_dtype dt,
                                     const char *spec) {
    int32_t vi = ir_graph_value(g, name); /* may grow g->values */
    ir_value *v = g->values[vi];
    v->dtype = dt;
    memset(&v->shape, 0, sizeof v->shape);
    char buf[128];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int32_t i = v->shape.rank++;
        if (tok[0] == '?')
            v->shape.syms[i] = -1;
        else if (tok[0] >= '0' && tok[0] <= '9')
            v->shape.dims[i] = strtoll(tok, NULL, 10);
        else
            v->shape.syms[i] = ir_graph_symbol(g, tok);
    }
    return v;
}

/* A graph input; spec like "batch,seq,768". */
static inline void add_input(ir_graph *g, const char *name, mopt_dtype dt, const char *spec) {
    shaped_value(g, name, dt, spec)->flags |= IR_VALUE_INPUT;
    graph_append(&g->inputs, &g->n_inputs, ir_graph_find_value(g, name));
}

/* An initializer of nbytes bytes copied from data (NULL: zeros); spec
 * gives concrete dims. */
static inline void add_init(ir_graph *g, const char *name, mopt_dtype dt, const char *spec,
                            const void *data) {
    ir_value *v = shaped_value(g, name, dt, spec);
    v->flags |= IR_VALUE_INITIALIZER;
    v->nbytes = (size_t)ir_shape_numel(&v->shape) * mopt_dtype_size(dt);
    v->data = mopt_aligned_alloc(v->nbytes ? v->nbytes : 1);
    assert_non_null(v->data);
    if (data)
        memcpy(v->data, data, v->nbytes);
    else
        memset(v->data, 0, v->nbytes);
}

/* A zero-filled f32 weight. */
static inline void add_weight(ir_graph *g, const char *name, const char *spec) {
    add_init(g, name, MOPT_DTYPE_F32, spec, NULL);
}

/* A 1-D i64 initializer of n values. */
static inline void add_init_i64(ir_graph *g, const char *name, int n, const int64_t *vals) {
    char spec[24];
    snprintf(spec, sizeof spec, "%d", n);
    add_init(g, name, MOPT_DTYPE_I64, spec, vals);
}

/* A node named name; ins/outs are space-separated value names ("-" =
 * omitted). */
static inline ir_node *add_named_node(ir_graph *g, const char *op, const char *name,
                                      const char *ins, const char *outs) {
    char a[256], b[256];
    char *in_names[16], *out_names[16];
    int ni = 0, no = 0;
    snprintf(a, sizeof a, "%s", ins);
    snprintf(b, sizeof b, "%s", outs);
    for (char *t = strtok(a, " "); t && ni < 16; t = strtok(NULL, " "))
        in_names[ni++] = t;
    for (char *t = strtok(b, " "); t && no < 16; t = strtok(NULL, " "))
        out_names[no++] = t;
    ir_node *n = ir_graph_add_node(g, op, "", name, ni, no);
    assert_non_null(n);
    for (int i = 0; i < ni; i++)
        n->inputs[i] = strcmp(in_names[i], "-") ? ir_graph_value(g, in_names[i]) : -1;
    for (int i = 0; i < no; i++)
        n->outputs[i] = strcmp(out_names[i], "-") ? ir_graph_value(g, out_names[i]) : -1;
    return n;
}

/* A node named "<op>_<index>". */
static inline ir_node *add_node(ir_graph *g, const char *op, const char *ins, const char *outs) {
    char nm[64];
    snprintf(nm, sizeof nm, "%s_%d", op, (int)g->n_nodes);
    return add_named_node(g, op, nm, ins, outs);
}

static inline void add_output(ir_graph *g, const char *name) {
    int32_t vi = ir_graph_value(g, name);
    g->values[vi]->flags |= IR_VALUE_OUTPUT;
    graph_append(&g->outputs, &g->n_outputs, vi);
}

/* Builds the model (graph handed over) with the default configuration;
 * returns the status, the model in *out. */
static inline mopt_status build(ir_graph *g, mopt_model **out) {
    rt_config cfg;
    assert_int_equal(rt_config_read(NULL, &cfg), MOPT_OK);
    mopt_clear_error();
    return rt_model_build(g, &cfg, out);
}

/* Asserts the load-time shape of value `name`, written as ir_shape_str does. */
static inline void expect_shape(const mopt_model *m, const char *name, const char *want) {
    int32_t vi = ir_graph_find_value(m->graph, name);
    if (vi < 0) fail_msg("no value '%s'", name);
    char buf[IR_SHAPE_STR_CAP];
    const char *got = ir_shape_str(&m->graph->values[vi]->shape, m->graph, buf, sizeof buf);
    if (strcmp(got, want) != 0)
        fail_msg("value '%s': load-time shape %s, expected %s", name, got, want);
}

/* Building g (handed over) fails with status want and a message holding
 * every one of the needles (a NULL array entry ends them). */
static inline void expect_load_error_(ir_graph *g, mopt_status want, const char *const *needles) {
    mopt_model *m = NULL;
    mopt_status st = build(g, &m);
    const char *msg = mopt_error_message();
    if (!msg) msg = "(no message)";
    if (st != want) fail_msg("expected status %d, got %d (%s)", (int)want, (int)st, msg);
    assert_null(m);
    for (int i = 0; needles[i]; i++)
        if (!strstr(msg, needles[i])) fail_msg("message '%s' lacks '%s'", msg, needles[i]);
}
#define expect_load_error(g, want, ...)                                                            \
    expect_load_error_((g), (want), (const char *const[]){__VA_ARGS__, NULL})

#endif
