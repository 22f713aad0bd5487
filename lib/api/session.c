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
    s->scratch = mopt_calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *s->scratch);
    s->user_out = mopt_calloc(nv, sizeof *s->user_out);
    s->run_shapes = mopt_calloc(nv, sizeof *s->run_shapes);
    s->run_dtypes = mopt_calloc(nv, sizeof *s->run_dtypes);
    s->threads = s->config.threads > 0 ? s->config.threads : rt_default_threads();
    if (!s->slots || !s->consumers || !s->scratch || !s->user_out || !s->run_shapes ||
        !s->run_dtypes) {
        mopt_session_destroy(s);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating session");
    }
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        for (int32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) s->consumers[n->inputs[k]]++;
    }
    for (int32_t i = 0; i < g->n_outputs; i++)
        s->consumers[g->outputs[i]]++;
    s->t0_ns = rt_now_ns();
    s->profiling = s->config.profile[0] != '\0';
    if (s->profiling) {
        s->prof = mopt_calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *s->prof);
        if (!s->prof) {
            mopt_session_destroy(s);
            return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating session");
        }
    }
    *out = s;
    return MOPT_OK;
}

void mopt_session_destroy(mopt_session *s) {
    if (!s) return;
    if (s->n_trace && s->config.profile[0] && strcmp(s->config.profile, "1") != 0) {
        /* destroy cannot report failure; the message stays in mopt_last_error() */
        rt_trace_write(s, s->config.profile);
    }
    if (s->scratch) {
        const mopt_model *m = s->model;
        for (int32_t i = 0; i < m->graph->n_nodes; i++) {
            const op_impl *impl = m->plans ? m->plans[i].impl : NULL;
            if (s->scratch[i] && impl && impl->release_scratch)
                impl->release_scratch(s->scratch[i]);
        }
    }
    mopt_free(s->scratch);
    rt_session_release_plans(s);
    mopt_free(s->user_out);
    mopt_free(s->run_shapes);
    mopt_free(s->run_dtypes);
    mopt_free(s->trace);
    mopt_free(s->prof);
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

mopt_status mopt_session_get_stat(const mopt_session *s, const char *key, int64_t *value) {
    mopt_clear_error();
    if (!s || !key || !value)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_session_get_stat: NULL argument");
    if (strcmp(key, "runs") == 0)
        *value = s->runs;
    else if (strcmp(key, "peak_bytes") == 0)
        *value = s->peak_bytes;
    else if (strcmp(key, "arena_bytes") == 0)
        *value = s->plan ? (int64_t)s->plan->arena_size : 0;
    else if (strcmp(key, "intermediate_bytes") == 0)
        *value = s->plan ? (int64_t)s->plan->intermediate_bytes : 0;
    else if (strcmp(key, "plans") == 0)
        *value = s->n_plans;
    else if (strcmp(key, "last_run_ns") == 0)
        *value = s->last_run_ns;
    else
        return mopt_fail(MOPT_ERR_NOT_FOUND,
                         "unknown session statistic '%s' (known: runs, peak_bytes, arena_bytes, "
                         "intermediate_bytes, plans, last_run_ns)",
                         key);
    return MOPT_OK;
}

static const rt_prof_entry *prof_at(const mopt_session *s, size_t i) {
    if (!s || !s->prof_valid || i >= (size_t)s->model->graph->n_nodes) return NULL;
    return &s->prof[i];
}

size_t mopt_session_profile_count(const mopt_session *s) {
    return (s && s->prof_valid) ? (size_t)s->model->graph->n_nodes : 0;
}

const char *mopt_session_profile_node(const mopt_session *s, size_t i) {
    return prof_at(s, i) ? s->model->graph->nodes[i]->name : NULL;
}

const char *mopt_session_profile_op(const mopt_session *s, size_t i) {
    return prof_at(s, i) ? s->model->graph->nodes[i]->op_type : NULL;
}

const char *mopt_session_profile_kernel(const mopt_session *s, size_t i) {
    return prof_at(s, i) ? rt_node_kernel_name(s->model, (int32_t)i) : NULL;
}

int64_t mopt_session_profile_ns(const mopt_session *s, size_t i) {
    const rt_prof_entry *e = prof_at(s, i);
    return e ? e->ns : 0;
}

int64_t mopt_session_profile_flops(const mopt_session *s, size_t i) {
    const rt_prof_entry *e = prof_at(s, i);
    return e ? e->flops : 0;
}
