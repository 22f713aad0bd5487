/*
 * session.c (runtime) — building and tearing down a session: per-value
 * tensors and bookkeeping, per-node scratch (impl caches, bridge buffers),
 * consumer counts, the profiler's buffers. Running it is executor.c.
 */
#include <inttypes.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/log.h"
#include "runtime/runtime.h"

static mopt_status session_fill(const mopt_model *model, mopt_session *s);

/* Lets go of the session's shared thread pool, if any. */
static void drop_pool(mopt_session *s) {
    if (!s->pool) return;
    atomic_fetch_sub(&s->pool->sessions, 1);
    rt_pool_release(s->pool);
    s->pool = NULL;
}

mopt_status rt_session_create(const mopt_model *model, const mopt_options *opts,
                              mopt_session **out) {
    if (model->n_problems)
        return mopt_fail(MOPT_ERR_UNSUPPORTED,
                         "the model was loaded for inspection only: %zu node%s cannot run (see "
                         "mopt_model_check)",
                         model->n_problems, model->n_problems == 1 ? "" : "s");
    mopt_session *s = mopt_calloc(1, sizeof *s);
    if (!s) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating session");
    s->model = model;
    atomic_init(&s->busy, false);
    if (opts && opts->pool) {
        s->pool = opts->pool;
        rt_pool_retain(s->pool);
        atomic_fetch_add(&s->pool->sessions, 1);
    }
    mopt_status st = rt_config_read(opts, &s->config);
    if (st) {
        drop_pool(s);
        mopt_free(s);
        return st;
    }
    /* everything the session makes from here on is charged to its budget
     * (a nested session's, made inside the enclosing one, to that one's) */
    mopt_budget *outer = mopt_budget_current();
    if (!outer) {
        s->budget = mopt_budget_create(s->config.memory_limit);
        if (!s->budget) {
            drop_pool(s);
            mopt_free(s);
            return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating session");
        }
        mopt_budget_swap(s->budget);
    }
    st = session_fill(model, s);
    if (!outer) mopt_budget_swap(NULL);
    size_t refused;
    int64_t in_use;
    if (st && st != MOPT_ERR_LIMIT && mopt_budget_refused(s->budget, &refused, &in_use))
        st = mopt_fail(MOPT_ERR_LIMIT,
                       "creating the session: %zu more bytes would exceed memory_limit %" PRId64
                       " (%" PRId64 " in use)",
                       refused, s->config.memory_limit, in_use);
    if (st) {
        rt_session_destroy(s);
        return st;
    }
    *out = s;
    return MOPT_OK;
}

/* The rest of rt_session_create, with the session's budget installed. */
static mopt_status session_fill(const mopt_model *model, mopt_session *s) {
    const ir_graph *g = model->graph;
    size_t nv = (size_t)(g->n_values ? g->n_values : 1);
    s->vals = mopt_calloc(nv, sizeof *s->vals);
    s->slots = mopt_calloc(nv, sizeof *s->slots);
    s->view = mopt_malloc(sizeof *s->view);
    s->bridge_scratch =
        mopt_calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *s->bridge_scratch);
    s->consumers = mopt_calloc(nv, sizeof *s->consumers);
    s->scratch = mopt_calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *s->scratch);
    s->work = mopt_calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *s->work);
    s->user_out = mopt_calloc(nv, sizeof *s->user_out);
    s->run_shapes = mopt_calloc(nv, sizeof *s->run_shapes);
    s->run_dtypes = mopt_calloc(nv, sizeof *s->run_dtypes);
    s->threads = s->config.threads > 0 ? s->config.threads : rt_default_threads();
    if (s->pool) /* a shared pool: at most its cores; "threads" unset means all of them */
        s->threads = s->config.threads > 0 && s->config.threads < s->pool->threads
                         ? s->config.threads
                         : s->pool->threads;
    s->par_min_flops = rt_parallel_min_flops();
    if (s->threads > 1 && rt_adaptive_threads()) {
        s->tune = mopt_calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *s->tune);
        if (!s->tune) /* the caller destroys the half-made session */
            return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating session");
    }
    if (!s->vals || !s->view || !s->bridge_scratch || !s->slots || !s->consumers || !s->scratch ||
        !s->work || !s->user_out || !s->run_shapes || !s->run_dtypes) {
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating session");
    }
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        for (int32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) s->consumers[n->inputs[k]]++;
    }
    for (int32_t i = 0; i < g->n_outputs; i++)
        s->consumers[g->outputs[i]]++;
    rt_session_bind_weights(s);
    s->t0_ns = mopt_now_ns();
    s->profile_session = s->config.profile[0] != '\0';
    s->run_tag = -1;
    if (s->profile_session) {
        s->prof = mopt_calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *s->prof);
        if (!s->prof) {
            return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating session");
        }
    }
    return rt_subgraphs_session_create(s);
}

void rt_session_destroy(mopt_session *s) {
    if (!s) return;
    if (s->n_trace && s->config.profile[0] && strcmp(s->config.profile, "1") != 0) {
        /* destroy cannot report failure: it is logged (and stays in mopt_last_error()) */
        if (rt_trace_write(s, s->config.profile))
            mopt_log(MOPT_LOG_WARNING, "mopt: %s", mopt_error_message());
    }
    if (s->scratch) {
        const mopt_model *m = s->model;
        for (int32_t i = 0; i < m->graph->n_nodes; i++) {
            const op_impl *impl = m->plans ? m->plans[i].impl : NULL;
            if (s->scratch[i] && impl && impl->release_scratch)
                impl->release_scratch(s->scratch[i]);
        }
    }
    rt_subgraphs_session_destroy(s);
    mopt_free(s->scratch);
    if (s->work)
        for (int32_t i = 0; i < s->model->graph->n_nodes; i++)
            op_work_free(&s->work[i]);
    mopt_free(s->work);
    mopt_free(s->tune);
    if (s->bridge_scratch)
        for (int32_t i = 0; i < s->model->graph->n_nodes; i++)
            ops_bridge_scratch_free(&s->bridge_scratch[i]);
    mopt_free(s->bridge_scratch);
    mopt_free(s->view);
    mopt_free(s->vals);
    rt_session_release_plans(s);
    mopt_free(s->user_out);
    mopt_free(s->run_shapes);
    mopt_free(s->run_dtypes);
    mopt_free(s->elastic_sym);
    mopt_free(s->kv_tiles);
    mopt_free(s->trace);
    for (int32_t i = 0; i < s->n_tags; i++)
        mopt_free(s->tags[i]);
    mopt_free(s->tags);
    mopt_free(s->prof);
    mopt_free(s->slots);
    mopt_free(s->consumers);
    drop_pool(s);
    mopt_budget *b = s->budget;
    mopt_free(s);
    mopt_budget_release(b); /* gone once every block charged to it is freed */
}
