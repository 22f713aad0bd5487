/*
 * pass_infer.c — the passes every load runs first, and the check runs too:
 * operator resolution (each node's op_def from the registry, with its input
 * and output counts checked against the op's) and whole-graph shape/type
 * inference (symbolic dims, load-time constants propagated so that shape
 * arithmetic resolves). Loading fails on the first problem (unsupported
 * operators listed all at once); checking (mopt_model_check) reports every
 * problem through a callback and goes on.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "ir/ir_subgraph.h"
#include "ops/node_view.h"
#include "passes/passes.h"

/* Why node n cannot take its op (counts, missing required inputs), into
 * msg; OK when it can. */
static mopt_status arity_problem(const ir_node *n, char *msg, size_t cap) {
    const op_def *d = n->op;
    /* trailing omitted inputs do not count */
    if (n->n_inputs < d->min_inputs || n->n_inputs > d->max_inputs) {
        snprintf(msg, cap, "node '%s' (%s) has %d inputs; the operator takes %d to %d", n->name,
                 n->op_type, (int)n->n_inputs, d->min_inputs, d->max_inputs);
        return MOPT_ERR_INVALID_MODEL;
    }
    if (n->n_outputs < d->min_outputs || n->n_outputs > d->max_outputs) {
        snprintf(msg, cap, "node '%s' (%s) has %d outputs; the operator gives %d to %d", n->name,
                 n->op_type, (int)n->n_outputs, d->min_outputs, d->max_outputs);
        return MOPT_ERR_INVALID_MODEL;
    }
    for (int k = 0; k < d->min_inputs && k < n->n_inputs; k++)
        if (n->inputs[k] < 0) {
            snprintf(msg, cap, "node '%s' (%s): required input %d is missing", n->name, n->op_type,
                     k);
            return MOPT_ERR_INVALID_MODEL;
        }
    return MOPT_OK;
}

/* Unsupported operators found while loading: listed all at once. */
typedef struct resolve_list {
    char text[1800];
    size_t len;
    int n_bad;
} resolve_list;

/* A walk over a graph (resolve_graph, check_arity): g in scope sc. */
typedef mopt_status (*graph_walk_fn)(ir_graph *g, const pass_scope *sc, void *arg);

/* fn on each subgraph of n, its scope's path extended by the subgraph's. */
static mopt_status walk_subgraphs(ir_node *n, const pass_scope *sc, graph_walk_fn fn, void *arg) {
    char path[512];
    for (int32_t k = 0; k < ir_node_subgraph_count(n); k++) {
        ir_graph *sub = ir_node_subgraph(n, k, NULL);
        if (!sub) continue;
        passes_subgraph_path(sc->path, n, k, path, sizeof path);
        pass_scope child = *sc;
        child.path = path;
        mopt_status st = fn(sub, &child, arg);
        if (st) return st;
    }
    return MOPT_OK;
}

/* Resolves the ops of g and of its subgraphs, at every depth (arg: the
 * resolve_list of unsupported ops). */
static mopt_status resolve_graph(ir_graph *g, const pass_scope *sc, void *arg) {
    resolve_list *bad = arg;
    char msg[600];
    for (int32_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        n->op = ops_find(n->op_type, n->domain);
        mopt_status st = walk_subgraphs(n, sc, resolve_graph, bad);
        if (st) return st;
        if (n->op) continue;
        if (sc->problem) {
            snprintf(msg, sizeof msg, "operator %s%s%s is not implemented", n->domain,
                     n->domain[0] ? "." : "", n->op_type);
            passes_report_problem(sc, n, MOPT_ERR_UNSUPPORTED, msg);
            continue;
        }
        if (bad->len < sizeof bad->text - 64)
            bad->len += (size_t)snprintf(bad->text + bad->len, sizeof bad->text - bad->len,
                                         "%s'%s%s' (%s%s%s)", bad->n_bad ? ", " : "", sc->path,
                                         n->name, n->domain, n->domain[0] ? "." : "", n->op_type);
        bad->n_bad++;
    }
    return MOPT_OK;
}

/* Checks the input/output counts of every resolved node, at every depth. */
static mopt_status check_arity(ir_graph *g, const pass_scope *sc, void *arg) {
    char msg[600];
    for (int32_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        mopt_status st = walk_subgraphs(n, sc, check_arity, arg);
        if (st) return st;
        if (!n->op) continue;
        st = arity_problem(n, msg, sizeof msg);
        if (!st) continue;
        if (!sc->problem) {
            if (sc->path[0])
                return mopt_fail(st, "in subgraph '%.*s': %s", (int)strlen(sc->path) - 1, sc->path,
                                 msg);
            return mopt_fail(st, "%s", msg);
        }
        passes_report_problem(sc, n, st, msg);
        n->op = NULL; /* do not infer it */
    }
    return MOPT_OK;
}

mopt_status passes_resolve_ops(ir_graph *g, pass_problem_fn problem, void *user,
                               size_t *n_problems) {
    pass_scope sc = {.problem = problem, .user = user, .n_problems = n_problems, .path = ""};
    resolve_list bad;
    bad.len = 0;
    bad.n_bad = 0;
    bad.text[0] = '\0';
    mopt_status st = resolve_graph(g, &sc, &bad);
    if (st) return st;
    if (bad.n_bad)
        return mopt_fail(MOPT_ERR_UNSUPPORTED, "%d node%s use%s unsupported operators: %s",
                         bad.n_bad, bad.n_bad == 1 ? "" : "s", bad.n_bad == 1 ? "s" : "", bad.text);
    return check_arity(g, &sc, NULL);
}

/* Merges an inferred shape into a declared one (a graph output's or a
 * value_info's): known beats unknown. A declaration that contradicts
 * inference (another rank, another fixed size) is the exporter's mistake,
 * as ONNX Runtime treats it too: the inferred shape replaces it whole, and
 * `warn` (may be NULL) hears of it with status OK and a message that names
 * the value first. Never fails. */
static void merge_shape(const ir_graph *g, const ir_node *n, ir_value *v, const ir_shape *inferred,
                        pass_problem_fn warn, void *user) {
    if (inferred->rank < 0) return;
    if (v->shape.rank < 0) {
        v->shape = *inferred;
        return;
    }
    bool conflict = v->shape.rank != inferred->rank;
    for (int32_t i = 0; i < inferred->rank && !conflict; i++)
        conflict = inferred->syms[i] == 0 && v->shape.syms[i] == 0 &&
                   v->shape.dims[i] != inferred->dims[i];
    if (conflict) {
        if (warn) {
            char a[IR_SHAPE_STR_CAP], b[IR_SHAPE_STR_CAP], msg[2 * IR_SHAPE_STR_CAP + 320];
            snprintf(msg, sizeof msg,
                     "%s '%s' is declared %s but computes to %s (by node '%s' (%s)); "
                     "the computed shape is used",
                     (v->flags & IR_VALUE_OUTPUT) ? "output" : "value", v->name,
                     ir_shape_str(&v->shape, g, a, sizeof a),
                     ir_shape_str(inferred, g, b, sizeof b), n->name, n->op_type);
            warn(user, n, MOPT_OK, msg);
        }
        v->shape = *inferred;
        return;
    }
    for (int32_t i = 0; i < inferred->rank; i++) {
        if (inferred->syms[i] == 0) {
            v->shape.dims[i] = inferred->dims[i];
            v->shape.syms[i] = 0;
        } else if (inferred->syms[i] > 0 && v->shape.syms[i] < 0) {
            v->shape.syms[i] = inferred->syms[i];
        }
    }
}

/* A warning while loading with verbose on. */
static void print_warning(void *user, const ir_node *n, mopt_status status, const char *message) {
    (void)user;
    (void)n;
    (void)status;
    fprintf(stderr, "mopt: warning: %s\n", message);
}

mopt_status passes_infer_graph(ir_graph *g) {
    pass_scope sc = {.path = ""};
    return passes_infer_graph_scoped(g, &sc);
}

mopt_status passes_infer_graph_load(ir_graph *g, int verbose) {
    pass_scope sc = {.warn = verbose ? print_warning : NULL, .path = ""};
    return passes_infer_graph_scoped(g, &sc);
}

/* A problem while checking: report, count, go on. */
static void report(const pass_scope *sc, const ir_node *n, mopt_status st) {
    passes_report_problem(sc, n, st, mopt_error_message());
}

mopt_status passes_infer_graph_checked(ir_graph *g, pass_problem_fn problem, void *user,
                                       size_t *n_problems) {
    pass_scope sc = {
        .problem = problem, .warn = problem, .user = user, .n_problems = n_problems, .path = ""};
    return passes_infer_graph_scoped(g, &sc);
}

mopt_status passes_infer_graph_scoped(ir_graph *g, const pass_scope *sc) {
    pass_problem_fn problem = sc->problem;
    mopt_status st = MOPT_OK;
    void **cdata = mopt_calloc((size_t)(g->n_values ? g->n_values : 1), sizeof *cdata);
    op_view *v = mopt_malloc(sizeof *v);
    if (!cdata || !v) {
        mopt_free(cdata);
        mopt_free(v);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory in shape inference");
    }
    for (int32_t i = 0; i < g->n_values; i++)
        if (g->values[i]->flags & IR_VALUE_INITIALIZER) cdata[i] = g->values[i]->data;
    op_subgraphs subgraphs;
    passes_subgraph_service(sc, &subgraphs);
    op_view_src src = {.graph = g, .data = (const void *const *)cdata, .subgraphs = &subgraphs};
    for (int32_t i = 0; i < g->n_nodes && !st; i++) {
        ir_node *n = g->nodes[i];
        if (problem && !n->op) {
            /* checking: the op is reported already; its outputs stay unknown */
            for (int32_t k = 0; k < n->n_outputs; k++)
                if (n->outputs[k] >= 0) cdata[n->outputs[k]] = NULL;
            continue;
        }
        st = op_view_init(v, &src, n, NULL);
        if (!st) st = op_view_infer(v);
        if (st && problem && st != MOPT_ERR_OUT_OF_MEMORY) {
            /* checking: report, leave the outputs unknown, keep going */
            report(sc, n, st);
            st = MOPT_OK;
            continue;
        }
        if (st) break;
        for (int32_t k = 0; k < n->n_outputs && !st; k++) {
            int32_t vi = n->outputs[k];
            if (vi < 0) continue;
            ir_value *val = g->values[vi];
            const op_tensor *o = &v->out[k];
            if (o->dtype != MOPT_DTYPE_UNDEFINED) {
                if (val->dtype != MOPT_DTYPE_UNDEFINED && val->dtype != o->dtype)
                    st = mopt_fail(MOPT_ERR_TYPE,
                                   "node '%s' (%s): output '%s' is declared %s but computes to %s",
                                   n->name, n->op_type, val->name, mopt_dtype_name(val->dtype),
                                   mopt_dtype_name(o->dtype));
                val->dtype = o->dtype;
            }
            if (!st) merge_shape(g, n, val, &o->shape, sc->warn, sc->user);
            cdata[vi] = o->data;
            if (st && problem && st != MOPT_ERR_OUT_OF_MEMORY) {
                report(sc, n, st);
                st = MOPT_OK;
            }
        }
    }
    mopt_free(v);
    mopt_free(cdata);
    return st;
}
