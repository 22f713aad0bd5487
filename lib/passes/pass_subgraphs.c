/*
 * pass_subgraphs.c — subgraphs at load time: the service (ops.h) through
 * which If, Loop and Scan infer their subgraphs during whole-graph inference,
 * and the reporting of problems inside subgraphs under their path
 * ("If_32/then_branch/LSTM_7"), for mopt_model_check and load errors.
 *
 * Inferring a subgraph sets its inputs to what the node passes (dtypes and
 * shapes translated into the subgraph's symbols by name), forgets whatever
 * an earlier inference computed inside it (a Loop body is inferred again
 * until its carried shapes settle), runs the subgraph's inference and reads
 * its outputs back into the outer graph's symbols. A problem inside is the
 * error of the service's call, when checking as when loading: the op decides
 * (an If survives a branch that cannot be inferred for these inputs).
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "ir/ir_subgraph.h"
#include "ops/ops.h"
#include "passes/passes.h"

/* Problems met inside a subgraph while checking: the first is handed to
 * the op as an error (an If may survive a branch that cannot be inferred;
 * a Loop body's error is the Loop's), as loading would. */
typedef struct first_problem {
    mopt_status st;
    char message[1024];
} first_problem;

static void collect(void *user, const ir_node *n, mopt_status st, const char *message) {
    (void)n;
    first_problem *fp = user;
    if (fp->st) return;
    fp->st = st;
    snprintf(fp->message, sizeof fp->message, "%s", message);
}

void passes_report_problem(const pass_scope *sc, const ir_node *n, mopt_status st,
                           const char *message) {
    if (!sc->problem) return;
    if (!sc->path || !sc->path[0]) {
        sc->problem(sc->user, n, st, message);
    } else {
        /* the same node under its path name */
        char name[768];
        snprintf(name, sizeof name, "%s%s", sc->path, n->name);
        ir_node named = *n;
        named.name = name;
        sc->problem(sc->user, &named, st, message);
    }
    if (sc->n_problems) (*sc->n_problems)++;
}

void passes_subgraph_path(const char *path, const ir_node *n, int32_t k, char *buf, size_t cap) {
    const char *attr = NULL;
    ir_node_subgraph(n, k, &attr);
    snprintf(buf, cap, "%s%s/%s/", path ? path : "", n->name[0] ? n->name : n->op_type,
             attr ? attr : "?");
}

static mopt_status svc_infer(void *self, const op_ctx *ctx, ir_graph *sub, const op_tensor *in,
                             int n_in, op_tensor *out, int n_out) {
    const pass_scope *sc = self;
    if (n_in != sub->n_inputs || n_out != sub->n_outputs)
        return op_fail(ctx, MOPT_ERR_INTERNAL,
                       "a subgraph with %d inputs and %d outputs was given %d and %d",
                       (int)sub->n_inputs, (int)sub->n_outputs, n_in, n_out);
    int32_t k_sub = -1;
    for (int32_t k = 0; k < ir_node_subgraph_count(ctx->node) && k_sub < 0; k++)
        if (ir_node_subgraph(ctx->node, k, NULL) == sub) k_sub = k;
    char path[512];
    passes_subgraph_path(sc->path, ctx->node, k_sub, path, sizeof path);
    /* forget the last inference, then set the inputs */
    for (int32_t v = 0; v < sub->n_values; v++) {
        ir_value *val = sub->values[v];
        if (val->producer < 0) continue;
        val->dtype = MOPT_DTYPE_UNDEFINED;
        ir_shape_set_unknown(&val->shape);
    }
    for (int32_t k = 0; k < n_in; k++) {
        ir_value *val = sub->values[sub->inputs[k]];
        if (in[k].dtype == MOPT_DTYPE_UNDEFINED) continue; /* keep what it declares */
        val->dtype = in[k].dtype;
        if (ir_shape_translate(&in[k].shape, ctx->graph, sub, &val->shape))
            return MOPT_ERR_OUT_OF_MEMORY;
    }
    pass_scope child = *sc;
    child.path = path;
    first_problem fp = {MOPT_OK, ""};
    if (sc->problem) {
        child.problem = collect;
        child.user = &fp;
        child.n_problems = NULL;
    }
    mopt_status st = passes_infer_graph_scoped(sub, &child);
    if (!st && fp.st) st = mopt_fail(fp.st, "%s", fp.message);
    if (st) {
        path[strlen(path) - 1] = '\0';
        return mopt_fail_context(st, "in subgraph '%s'", path);
    }
    for (int32_t k = 0; k < n_out; k++) {
        const ir_value *val = sub->values[sub->outputs[k]];
        out[k].dtype = val->dtype;
        out[k].data = NULL;
        if (ir_shape_translate(&val->shape, sub, ctx->graph, &out[k].shape))
            return MOPT_ERR_OUT_OF_MEMORY;
    }
    return MOPT_OK;
}

static const op_subgraph_service k_infer_service = {.infer = svc_infer};

void passes_subgraph_service(const pass_scope *sc, op_subgraphs *out) {
    out->fn = &k_infer_service;
    out->self = (void *)sc;
}
