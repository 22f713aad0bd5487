/*
 * session.c (api) — public session creation, destruction and run.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "runtime/runtime.h"

mopt_status mopt_session_create(const mopt_model *model, const mopt_options *opts,
                                mopt_session **out) {
    mopt_clear_error();
    if (!out) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_session_create: out is NULL");
    *out = NULL;
    if (!model) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_session_create: model is NULL");
    mopt_session *s = mopt_calloc(1, sizeof *s);
    if (!s) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating session");
    s->model = model;
    mopt_status st = rt_config_read(opts, &s->config);
    if (st) {
        mopt_free(s);
        return st;
    }
    const ir_graph *g = model->graph;
    size_t nv = (size_t)(g->n_values ? g->n_values : 1);
    s->slots = mopt_calloc(nv, sizeof *s->slots);
    s->consumers = mopt_calloc(nv, sizeof *s->consumers);
    if (!s->slots || !s->consumers) {
        mopt_session_destroy(s);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating session");
    }
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        for (int32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) s->consumers[n->inputs[k]]++;
    }
    for (int32_t i = 0; i < g->n_outputs; i++) s->consumers[g->outputs[i]]++;
    *out = s;
    return MOPT_OK;
}

void mopt_session_destroy(mopt_session *s) {
    if (!s) return;
    mopt_free(s->slots);
    mopt_free(s->consumers);
    mopt_free(s);
}

mopt_status mopt_session_run(mopt_session *s, size_t n_inputs, const char *const *input_names,
                             const mopt_tensor *const *inputs, size_t n_outputs,
                             const char *const *output_names, mopt_tensor **outputs) {
    mopt_clear_error();
    if (!s) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_session_run: session is NULL");
    return rt_session_run(s, n_inputs, input_names, inputs, n_outputs, output_names, outputs);
}
