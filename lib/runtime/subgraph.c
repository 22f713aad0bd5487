/*
 * subgraph.c — subgraphs at run time. At model build every subgraph of a
 * node (If branches, Loop and Scan bodies) becomes a nested model of its
 * own: passes, fusions and kernel dispatch run on it as on the main graph
 * (the graph stays owned by the node's attribute). Each session makes a
 * nested session per subgraph (its own memory plans and arena) and hands
 * the node's op the run service of ops.h: run a subgraph on op_tensors, and
 * keep outputs an op computed while inferring until its run takes them.
 * What a control-flow op means (which branch, how many iterations) is the
 * op's business (lib/ops/control.c); this file only runs graphs.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "ir/ir_subgraph.h"
#include "runtime/runtime.h"

typedef struct rt_subgraph {
    const ir_graph *graph;
    const char *attr; /* its attribute's name, for messages */
    mopt_model *model;
} rt_subgraph;

struct rt_subgraphs {
    int32_t n;
    rt_subgraph *subs;
};

struct rt_sub_state {
    op_subgraphs service;
    const ir_node *node;
    const mopt_session *owner; /* the enclosing session: its run options apply */
    const struct rt_subgraphs *subs;
    mopt_session **sessions; /* one per subgraph */
    op_tensor *kept;         /* outputs kept between inference and run */
    int n_kept;
    bool has_kept;
};

/* ---- model --------------------------------------------------------------------- */

static void free_subgraphs(struct rt_subgraphs *rs) {
    if (!rs) return;
    for (int32_t k = 0; k < rs->n; k++)
        rt_model_destroy(rs->subs[k].model);
    mopt_free(rs->subs);
    mopt_free(rs);
}

mopt_status rt_subgraphs_build(mopt_model *m, bool run_passes) {
    const ir_graph *g = m->graph;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        int32_t ns = ir_node_subgraph_count(n);
        if (!ns) continue;
        struct rt_subgraphs *rs = mopt_calloc(1, sizeof *rs);
        if (rs) rs->subs = mopt_calloc((size_t)ns, sizeof *rs->subs);
        if (!rs || !rs->subs) {
            mopt_free(rs);
            return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory building subgraphs");
        }
        m->plans[i].subgraphs = rs;
        rs->n = ns;
        for (int32_t k = 0; k < ns; k++) {
            rt_subgraph *sg = &rs->subs[k];
            ir_graph *sub = ir_node_subgraph(n, k, &sg->attr);
            sg->graph = sub;
            mopt_status st = rt_model_build_nested(sub, &m->config, run_passes, &sg->model);
            if (st)
                return mopt_fail_context(st, "subgraph '%s' of node '%s' (%s)",
                                         sg->attr ? sg->attr : "", n->name, n->op_type);
            m->parameter_count += sg->model->parameter_count;
            m->parameter_bytes += sg->model->parameter_bytes;
        }
    }
    return MOPT_OK;
}

void rt_subgraphs_release(mopt_model *m) {
    if (!m->plans) return;
    for (int32_t i = 0; i < m->graph->n_nodes; i++) {
        free_subgraphs(m->plans[i].subgraphs);
        m->plans[i].subgraphs = NULL;
    }
}

/* ---- the run service --------------------------------------------------------------- */

static void drop_kept(struct rt_sub_state *ss) {
    if (ss->has_kept)
        for (int k = 0; k < ss->n_kept; k++)
            mopt_aligned_free(ss->kept[k].data);
    mopt_free(ss->kept);
    ss->kept = NULL;
    ss->n_kept = 0;
    ss->has_kept = false;
}

static mopt_status svc_run(void *self, const op_ctx *ctx, const ir_graph *sub, const op_tensor *in,
                           int n_in, op_tensor *out, int n_out) {
    struct rt_sub_state *ss = self;
    int32_t k = 0;
    while (k < ss->subs->n && ss->subs->subs[k].graph != sub)
        k++;
    if (k == ss->subs->n) return op_fail(ctx, MOPT_ERR_INTERNAL, "unknown subgraph");
    const rt_subgraph *sg = &ss->subs->subs[k];
    mopt_tensor *tin = mopt_calloc((size_t)(n_in ? n_in : 1), sizeof *tin);
    const mopt_tensor **pin = mopt_calloc((size_t)(n_in ? n_in : 1), sizeof *pin);
    mopt_tensor **pout = mopt_calloc((size_t)(n_out ? n_out : 1), sizeof *pout);
    mopt_status st = MOPT_OK;
    if (!tin || !pin || !pout) st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < n_in && !st; i++) {
        if (in[i].shape.rank < 0 || in[i].shape.rank > IR_MAX_RANK) {
            st = op_fail(ctx, MOPT_ERR_INTERNAL, "subgraph input %d has no shape", i);
            break;
        }
        mopt_tensor *t = &tin[i];
        t->dtype = in[i].dtype;
        t->rank = in[i].shape.rank;
        memcpy(t->dims, in[i].shape.dims, (size_t)t->rank * sizeof *t->dims);
        t->data = in[i].data;
        t->nbytes = op_nbytes(&in[i]);
        t->owned = false;
        pin[i] = t;
    }
    if (!st) {
        st = rt_session_run(ss->sessions[k], ss->owner->run_opts, (size_t)n_in, NULL, pin,
                            (size_t)n_out, NULL, pout);
        if (st)
            mopt_fail_context(st, "subgraph '%s' of node '%s' (%s)", sg->attr ? sg->attr : "",
                              ctx->node->name, ctx->node->op_type);
    }
    for (int i = 0; i < n_out; i++) {
        mopt_tensor *t = st ? NULL : pout[i];
        if (!t) {
            out[i].data = NULL;
            continue;
        }
        out[i].dtype = t->dtype;
        ir_shape_set(&out[i].shape, t->rank, t->dims);
        if (t->owned) {
            out[i].data = t->data; /* handed over as it is */
        } else {
            out[i].data = mopt_aligned_alloc(t->nbytes ? t->nbytes : 1);
            if (out[i].data && t->nbytes) memcpy(out[i].data, t->data, t->nbytes);
            if (!out[i].data) st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory");
        }
        mopt_free(t);
        pout[i] = NULL;
    }
    if (st)
        for (int i = 0; i < n_out; i++) {
            mopt_aligned_free(out[i].data);
            out[i].data = NULL;
        }
    mopt_free(tin);
    mopt_free(pin);
    mopt_free(pout);
    return st;
}

static void svc_keep(void *self, const op_tensor *out, int n_out) {
    struct rt_sub_state *ss = self;
    drop_kept(ss);
    ss->kept = mopt_malloc((size_t)(n_out ? n_out : 1) * sizeof *ss->kept);
    if (!ss->kept) { /* run computes them again */
        for (int k = 0; k < n_out; k++)
            mopt_aligned_free(out[k].data);
        return;
    }
    memcpy(ss->kept, out, (size_t)n_out * sizeof *out);
    ss->n_kept = n_out;
    ss->has_kept = true;
}

static bool svc_take(void *self, op_tensor *out, int n_out) {
    struct rt_sub_state *ss = self;
    if (!ss->has_kept || ss->n_kept != n_out) return false;
    memcpy(out, ss->kept, (size_t)n_out * sizeof *out);
    ss->has_kept = false;
    drop_kept(ss);
    return true;
}

static const op_subgraph_service k_run_service = {
    .run = svc_run, .keep = svc_keep, .take = svc_take};

/* ---- sessions ------------------------------------------------------------------------ */

static void free_state(struct rt_sub_state *ss) {
    if (!ss) return;
    drop_kept(ss);
    if (ss->sessions)
        for (int32_t k = 0; k < ss->subs->n; k++)
            rt_session_destroy(ss->sessions[k]);
    mopt_free(ss->sessions);
    mopt_free(ss);
}

mopt_status rt_subgraphs_session_create(mopt_session *s) {
    const mopt_model *m = s->model;
    const ir_graph *g = m->graph;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const struct rt_subgraphs *rs = m->plans ? m->plans[i].subgraphs : NULL;
        if (!rs) continue;
        if (!s->subs) {
            s->subs = mopt_calloc((size_t)g->n_nodes, sizeof *s->subs);
            if (!s->subs) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
        }
        struct rt_sub_state *ss = mopt_calloc(1, sizeof *ss);
        if (ss) ss->sessions = mopt_calloc((size_t)rs->n, sizeof *ss->sessions);
        if (!ss || !ss->sessions) {
            mopt_free(ss);
            return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
        }
        ss->owner = s;
        ss->service.fn = &k_run_service;
        ss->service.self = ss;
        ss->node = g->nodes[i];
        ss->subs = rs;
        s->subs[i] = ss;
        for (int32_t k = 0; k < rs->n; k++) {
            mopt_session *ns = NULL;
            mopt_status st = rt_session_create(rs->subs[k].model, NULL, &ns);
            if (st) return st;
            /* the enclosing session's settings, without its profile */
            ns->config = s->config;
            ns->config.profile[0] = '\0';
            ns->threads = s->threads;
            ss->sessions[k] = ns;
        }
    }
    return MOPT_OK;
}

void rt_subgraphs_session_destroy(mopt_session *s) {
    if (!s->subs) return;
    for (int32_t i = 0; i < s->model->graph->n_nodes; i++)
        free_state(s->subs[i]);
    mopt_free(s->subs);
    s->subs = NULL;
}

const op_subgraphs *rt_subgraphs_service(const mopt_session *s, int32_t node) {
    return s->subs && s->subs[node] ? &s->subs[node]->service : NULL;
}
