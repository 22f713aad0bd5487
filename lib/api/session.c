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
    mopt_status st = rt_session_create(model, opts, out);
    /* the session holds a reference: the model outlives mopt_model_destroy
     * until its last session is gone (the count is the only mutable part of
     * a model, and it is atomic) */
    if (st == MOPT_OK) atomic_fetch_add(&((mopt_model *)model)->refs, 1);
    return st;
}

void mopt_session_destroy(mopt_session *s) {
    if (!s) return;
    mopt_model *m = (mopt_model *)s->model;
    rt_session_destroy(s);
    if (atomic_fetch_sub(&m->refs, 1) == 1) rt_model_destroy(m);
}

/* Runs one call with the session marked busy, so that a second thread
 * entering the same session is told so instead of corrupting it. */
static mopt_status run_exclusive(mopt_session *s, const mopt_run_options *ro, const char *fn,
                                 size_t n_inputs, const char *const *input_names,
                                 const mopt_tensor *const *inputs, size_t n_outputs,
                                 const char *const *output_names, mopt_tensor **outputs) {
    bool idle = false;
    if (!atomic_compare_exchange_strong(&s->busy, &idle, true))
        return mopt_fail(MOPT_ERR_BUSY,
                         "%s: the session is running on another thread; a session is driven by "
                         "one thread at a time (create one session per thread)",
                         fn);
    mopt_status st =
        rt_session_run(s, ro, n_inputs, input_names, inputs, n_outputs, output_names, outputs);
    atomic_store(&s->busy, false);
    return st;
}

mopt_status mopt_session_run(mopt_session *s, size_t n_inputs, const char *const *input_names,
                             const mopt_tensor *const *inputs, size_t n_outputs,
                             const char *const *output_names, mopt_tensor **outputs) {
    mopt_clear_error();
    if (!s) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_session_run: session is NULL");
    return run_exclusive(s, NULL, "mopt_session_run", n_inputs, input_names, inputs, n_outputs,
                         output_names, outputs);
}

mopt_status mopt_session_run_v2(mopt_session *s, const mopt_run_options *ro, size_t n_inputs,
                                const char *const *input_names, const mopt_tensor *const *inputs,
                                size_t n_outputs, const char *const *output_names,
                                mopt_tensor **outputs) {
    mopt_clear_error();
    if (!s) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_session_run_v2: session is NULL");
    return run_exclusive(s, ro, "mopt_session_run_v2", n_inputs, input_names, inputs, n_outputs,
                         output_names, outputs);
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
    else if (strcmp(key, "memory_peak_bytes") == 0)
        *value = s->budget_peak;
    else if (strcmp(key, "memory_bytes") == 0)
        *value = mopt_budget_used(s->budget);
    else if (strcmp(key, "plans_recorded") == 0)
        *value = s->plans_recorded;
    else if (strcmp(key, "heap_tensors") == 0)
        *value = s->heap_tensors;
    else if (strcmp(key, "last_run_inferred_nodes") == 0)
        *value = s->run_inferred;
    else if (strcmp(key, "inplace_outputs") == 0)
        *value = s->plan ? s->plan->n_inplace : 0;
    else
        return mopt_fail(MOPT_ERR_NOT_FOUND,
                         "unknown session statistic '%s' (known: runs, peak_bytes, arena_bytes, "
                         "intermediate_bytes, plans, last_run_ns, memory_peak_bytes, memory_bytes, "
                         "plans_recorded, heap_tensors, last_run_inferred_nodes, "
                         "inplace_outputs)",
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
