/*
 * test_graph.h — building small IR graphs by hand in cmocka tests of
 * load-time inference (tests/unit/test_ops_shape.c, test_ops_compute.c):
 * inputs and initializers with shapes written "batch,seq,768" (a name is a
 * symbol, ? an unknown dim), nodes with space-separated input and output
 * names, graph outputs, and the model built from the graph with the default
 * configuration, and the checks of a build: a value's shape, or the status
 * and message of a failure; and one-node cases run from a table
 * (graph_case: the graph, what building it must give). Header-only (static
 * inline functions); include after <cmocka.h>. Node attributes:
 * tests/test_attrs.h.
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
#include "test_attrs.h"

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

/* Asserts the load-time shape of value `name`, written as ir_shape_str does;
 * a failure names the test case `label` (NULL: none). */
static inline void expect_shape_in(const char *label, const mopt_model *m, const char *name,
                                   const char *want) {
    const char *sep = label ? ": " : "";
    if (!label) label = "";
    int32_t vi = ir_graph_find_value(m->graph, name);
    if (vi < 0) fail_msg("%s%sno value '%s'", label, sep, name);
    char buf[IR_SHAPE_STR_CAP];
    const char *got = ir_shape_str(&m->graph->values[vi]->shape, m->graph, buf, sizeof buf);
    if (strcmp(got, want) != 0)
        fail_msg("%s%svalue '%s': load-time shape %s, expected %s", label, sep, name, got, want);
}
#define expect_shape(m, name, want) expect_shape_in(NULL, (m), (name), (want))

/* Building g (handed over) fails with status want and a message holding
 * every one of the needles (a NULL array entry ends them); a failure names
 * the test case `label` (NULL: none). */
static inline void expect_load_error_in(const char *label, ir_graph *g, mopt_status want,
                                        const char *const *needles) {
    const char *sep = label ? ": " : "";
    if (!label) label = "";
    mopt_model *m = NULL;
    mopt_status st = build(g, &m);
    const char *msg = mopt_error_message();
    if (!msg) msg = "(no message)";
    if (st != want)
        fail_msg("%s%sexpected status %d, got %d (%s)", label, sep, (int)want, (int)st, msg);
    if (m) fail_msg("%s%sa model came back with status %d", label, sep, (int)st);
    for (int i = 0; needles[i]; i++)
        if (!strstr(msg, needles[i]))
            fail_msg("%s%smessage '%s' lacks '%s'", label, sep, msg, needles[i]);
}
#define expect_load_error(g, want, ...)                                                            \
    expect_load_error_in(NULL, (g), (want), (const char *const[]){__VA_ARGS__, NULL})

/* ---- one-node cases, run from a table -------------------------------------- */

/* A graph of one node and what building it gives: the model's values'
 * shapes (status MOPT_OK) or the status and message needles of the failure.
 * Lists end at the first entry with a NULL name (at most their size). */
typedef struct {
    const char *label; /* names the case in failure messages */
    int64_t opset;
    struct {
        const char *name, *spec;
        mopt_dtype dtype;
    } inputs[3];
    struct {
        const char *name, *spec; /* zero-filled f32 */
    } weights[4];
    struct {
        const char *name;
        int n;
        int64_t v[4];
    } i64s[3]; /* 1-D i64 initializers of n values */
    struct {
        const char *op, *name, *ins, *outs; /* name NULL: "<op>_<index>" */
    } node;
    const char *graph_outputs; /* space-separated; NULL: "y" */
    struct {
        const char *name;
        int n; /* 0: an int attribute v[0]; else ints of n values */
        int64_t v[4];
    } attrs[4];
    mopt_status status;
    const char *needles[3]; /* status != MOPT_OK: the message holds them */
    struct {
        const char *name, *shape;
    } shapes[3]; /* status == MOPT_OK: values' load-time shapes */
} graph_case;

/* Builds case c's graph and checks what it expects. */
static inline void graph_case_check(const graph_case *c) {
    ir_graph *g = new_graph(c->opset);
    for (int i = 0; i < 3 && c->inputs[i].name; i++)
        add_input(g, c->inputs[i].name, c->inputs[i].dtype, c->inputs[i].spec);
    for (int i = 0; i < 4 && c->weights[i].name; i++)
        add_weight(g, c->weights[i].name, c->weights[i].spec);
    for (int i = 0; i < 3 && c->i64s[i].name; i++)
        add_init_i64(g, c->i64s[i].name, c->i64s[i].n, c->i64s[i].v);
    ir_node *n = c->node.name
                     ? add_named_node(g, c->node.op, c->node.name, c->node.ins, c->node.outs)
                     : add_node(g, c->node.op, c->node.ins, c->node.outs);
    for (int i = 0; i < 4 && c->attrs[i].name; i++) {
        if (c->attrs[i].n == 0)
            attr_int(n, c->attrs[i].name, c->attrs[i].v[0]);
        else
            attr_ints(n, c->attrs[i].name, c->attrs[i].n, c->attrs[i].v);
    }
    char outs[128];
    snprintf(outs, sizeof outs, "%s", c->graph_outputs ? c->graph_outputs : "y");
    for (char *t = strtok(outs, " "); t; t = strtok(NULL, " "))
        add_output(g, t);
    if (c->status != MOPT_OK) {
        const char *needles[4] = {c->needles[0], c->needles[1], c->needles[2], NULL};
        expect_load_error_in(c->label, g, c->status, needles);
        return;
    }
    mopt_model *m = NULL;
    mopt_status st = build(g, &m);
    if (st != MOPT_OK) {
        const char *msg = mopt_error_message();
        fail_msg("%s: status %d (%s)", c->label, (int)st, msg ? msg : "no message");
    }
    for (int i = 0; i < 3 && c->shapes[i].name; i++)
        expect_shape_in(c->label, m, c->shapes[i].name, c->shapes[i].shape);
    mopt_model_destroy(m);
}

/* Checks the n cases of a table, in order. */
static inline void graph_cases_check(const graph_case *cases, size_t n) {
    for (size_t i = 0; i < n; i++)
        graph_case_check(&cases[i]);
}

#endif
