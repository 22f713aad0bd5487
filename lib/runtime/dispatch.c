/*
 * dispatch.c — chooses, once per node at model build, which implementation
 * runs it: the first op_impl of the op's list that the `backend` option
 * allows and that supports the node (then prepares its state, e.g.
 * reordered weights), else the op's reference run.
 *
 * backend=auto   every impl is eligible, in the op's preference order
 * backend=X      impls of backend X first; ops X lacks use the auto order
 * backend=ref    reference kernels only
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "runtime/runtime.h"

/* Tries impl on node i; returns OK with *taken set, or a real failure. */
static mopt_status try_impl(mopt_model *m, int32_t i, const op_impl *impl, const op_tensor *in,
                            const op_tensor *out, bool *taken) {
    const ir_graph *g = m->graph;
    const ir_node *n = g->nodes[i];
    *taken = false;
    op_ctx ctx = {.node = n, .graph = m->graph, .runtime = false, .threads = 1};
    ctx.precision = m->config.precision;
    ctx.opt_level = m->config.opt_level;
    ctx.opset = ir_graph_opset(g, n->domain);
    if (impl->supports && !impl->supports(&ctx, in, n->n_inputs, out, n->n_outputs)) return MOPT_OK;
    void *state = NULL;
    if (impl->prepare) {
        mopt_status st = impl->prepare(&ctx, in, n->n_inputs, out, n->n_outputs, &state);
        if (st == MOPT_ERR_UNSUPPORTED) return MOPT_OK;
        if (st) return st;
    }
    m->plans[i].impl = impl;
    m->plans[i].state = state;
    *taken = true;
    return MOPT_OK;
}

mopt_status rt_plan_kernels(mopt_model *m) {
    const ir_graph *g = m->graph;
    m->plans = mopt_calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *m->plans);
    if (!m->plans) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory planning kernels");
    const char *backend = m->config.backend;
    if (strcmp(backend, "ref") == 0) return MOPT_OK;
    bool any = strcmp(backend, "auto") == 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        const op_impl *const *impls = n->op ? n->op->impls : NULL;
        if (!impls) continue;
        if (n->n_inputs > 64 || n->n_outputs > 64) continue;
        op_tensor in[64], out[64];
        rt_node_tensors(g, n, NULL, in, out);
        bool taken = false;
        /* pass 0: the requested backend; pass 1: everything else in order */
        for (int pass = any ? 1 : 0; pass < 2 && !taken; pass++) {
            for (int k = 0; impls[k] && !taken; k++) {
                bool mine = strcmp(impls[k]->backend, backend) == 0;
                if (pass == 0 && !mine) continue;
                if (pass == 1 && !any && mine) continue;
                mopt_status st = try_impl(m, i, impls[k], in, out, &taken);
                if (st)
                    return mopt_fail_context(st, "node '%s' (%s), kernel %s", n->name, n->op_type,
                                             impls[k]->name);
            }
        }
    }
    return MOPT_OK;
}

void rt_release_kernels(mopt_model *m) {
    if (!m->plans) return;
    for (int32_t i = 0; i < m->graph->n_nodes; i++)
        if (m->plans[i].impl && m->plans[i].impl->release && m->plans[i].state)
            m->plans[i].impl->release(m->plans[i].state);
    mopt_free(m->plans);
    m->plans = NULL;
}

const char *rt_node_kernel_name(const mopt_model *m, int32_t i) {
    if (!m->plans || i < 0 || i >= m->graph->n_nodes || !m->plans[i].impl) return "ref";
    return m->plans[i].impl->name;
}
