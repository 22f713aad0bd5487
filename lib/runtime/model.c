/*
 * model.c — turning an imported graph into a runnable model: graph checks,
 * operator resolution (every unsupported node listed at once), load-time
 * shape/type inference, the passes (their report is kept in the model),
 * parameter statistics and kernel dispatch. Graphs read from a .mopt file
 * were optimized when saved: they skip the passes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "passes/passes.h"
#include "runtime/runtime.h"

static mopt_status resolve_ops(ir_graph *g) {
    char msg[1800];
    size_t len = 0;
    int n_bad = 0;
    msg[0] = '\0';
    for (int32_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        n->op = ops_find(n->op_type, n->domain);
        if (!n->op) {
            if (len < sizeof msg - 64)
                len += (size_t)snprintf(msg + len, sizeof msg - len, "%s'%s' (%s%s%s)",
                                        n_bad ? ", " : "", n->name, n->domain,
                                        n->domain[0] ? "." : "", n->op_type);
            n_bad++;
        }
    }
    if (n_bad)
        return mopt_fail(MOPT_ERR_UNSUPPORTED, "%d node%s use%s unsupported operators: %s", n_bad,
                         n_bad == 1 ? "" : "s", n_bad == 1 ? "s" : "", msg);
    for (int32_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        const op_def *d = n->op;
        /* trailing omitted inputs do not count */
        if (n->n_inputs < d->min_inputs || n->n_inputs > d->max_inputs)
            return mopt_fail(MOPT_ERR_INVALID_MODEL,
                             "node '%s' (%s) has %d inputs; the operator takes %d to %d", n->name,
                             n->op_type, (int)n->n_inputs, d->min_inputs, d->max_inputs);
        if (n->n_outputs < d->min_outputs || n->n_outputs > d->max_outputs)
            return mopt_fail(MOPT_ERR_INVALID_MODEL,
                             "node '%s' (%s) has %d outputs; the operator gives %d to %d", n->name,
                             n->op_type, (int)n->n_outputs, d->min_outputs, d->max_outputs);
        for (int k = 0; k < d->min_inputs && k < n->n_inputs; k++)
            if (n->inputs[k] < 0)
                return mopt_fail(MOPT_ERR_INVALID_MODEL,
                                 "node '%s' (%s): required input %d is missing", n->name,
                                 n->op_type, k);
    }
    return MOPT_OK;
}

/* Merges an inferred shape into a declared one: known beats unknown; two
 * known fixed dims that disagree are an error. */
static mopt_status merge_shape(const ir_graph *g, const ir_node *n, ir_value *v,
                               const ir_shape *inferred) {
    if (inferred->rank < 0) return MOPT_OK;
    if (v->shape.rank < 0) {
        v->shape = *inferred;
        return MOPT_OK;
    }
    char a[IR_SHAPE_STR_CAP], b[IR_SHAPE_STR_CAP];
    if (v->shape.rank != inferred->rank)
        return mopt_fail(MOPT_ERR_SHAPE,
                         "node '%s' (%s): output '%s' is declared %s but computes to %s", n->name,
                         n->op_type, v->name, ir_shape_str(&v->shape, g, a, sizeof a),
                         ir_shape_str(inferred, g, b, sizeof b));
    for (int32_t i = 0; i < inferred->rank; i++) {
        if (inferred->syms[i] == 0) {
            if (v->shape.syms[i] == 0 && v->shape.dims[i] != inferred->dims[i])
                return mopt_fail(
                    MOPT_ERR_SHAPE, "node '%s' (%s): output '%s' is declared %s but computes to %s",
                    n->name, n->op_type, v->name, ir_shape_str(&v->shape, g, a, sizeof a),
                    ir_shape_str(inferred, g, b, sizeof b));
            v->shape.dims[i] = inferred->dims[i];
            v->shape.syms[i] = 0;
        } else if (inferred->syms[i] > 0 && v->shape.syms[i] < 0) {
            v->shape.syms[i] = inferred->syms[i];
        }
    }
    return MOPT_OK;
}

void rt_omitted_tail(op_tensor *in, int32_t n_inputs) {
    for (int32_t k = n_inputs < 0 ? 0 : n_inputs; k < RT_MAX_NODE_IO; k++) {
        memset(&in[k], 0, sizeof in[k]);
        ir_shape_set_unknown(&in[k].shape);
    }
}

void rt_node_tensors(const ir_graph *g, const ir_node *n, const void *const *data, op_tensor *in,
                     op_tensor *out) {
    rt_omitted_tail(in, n->n_inputs);
    for (int32_t k = 0; k < n->n_inputs; k++) {
        memset(&in[k], 0, sizeof in[k]);
        int32_t v = n->inputs[k];
        if (v < 0) {
            ir_shape_set_unknown(&in[k].shape);
            continue;
        }
        const ir_value *val = g->values[v];
        in[k].dtype = val->dtype;
        in[k].shape = val->shape;
        in[k].data = data                                  ? (void *)data[v]
                     : (val->flags & IR_VALUE_INITIALIZER) ? val->data
                                                           : NULL;
    }
    for (int32_t k = 0; out && k < n->n_outputs; k++) {
        memset(&out[k], 0, sizeof out[k]);
        int32_t v = n->outputs[k];
        if (v < 0) {
            ir_shape_set_unknown(&out[k].shape);
            continue;
        }
        out[k].dtype = g->values[v]->dtype;
        out[k].shape = g->values[v]->shape;
    }
}

mopt_status rt_infer_graph(ir_graph *g) { return rt_infer_graph_checked(g, NULL, NULL, NULL); }

mopt_status rt_infer_graph_checked(ir_graph *g, rt_problem_fn problem, void *user,
                                   size_t *n_problems) {
    mopt_status st = MOPT_OK;
    void **cdata = mopt_calloc((size_t)(g->n_values ? g->n_values : 1), sizeof *cdata);
    if (!cdata) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory in shape inference");
    for (int32_t i = 0; i < g->n_values; i++)
        if (g->values[i]->flags & IR_VALUE_INITIALIZER) cdata[i] = g->values[i]->data;
    int64_t opset = ir_graph_opset(g, "");
    for (int32_t i = 0; i < g->n_nodes && !st; i++) {
        ir_node *n = g->nodes[i];
        op_tensor in[64], out[64];
        if (n->n_inputs > 64 || n->n_outputs > 64) {
            st = mopt_fail(MOPT_ERR_LIMIT, "node '%s' (%s) has too many inputs or outputs", n->name,
                           n->op_type);
            break;
        }
        rt_node_tensors(g, n, (const void *const *)cdata, in, NULL);
        for (int32_t k = 0; k < n->n_outputs; k++) {
            memset(&out[k], 0, sizeof out[k]);
            ir_shape_set_unknown(&out[k].shape);
        }
        op_ctx ctx = {.node = n, .graph = g, .runtime = false};
        ctx.opset = n->domain[0] ? ir_graph_opset(g, n->domain) : opset;
        if (problem && !n->op) {
            /* checking: the op is reported already; its outputs stay unknown */
            for (int32_t k = 0; k < n->n_outputs; k++)
                if (n->outputs[k] >= 0) cdata[n->outputs[k]] = NULL;
            continue;
        }
        st = n->op->infer(&ctx, in, n->n_inputs, out, n->n_outputs);
        if (st && problem && st != MOPT_ERR_OUT_OF_MEMORY) {
            /* checking: report, leave the outputs unknown, keep going */
            problem(user, n, st, mopt_error_message());
            if (n_problems) (*n_problems)++;
            st = MOPT_OK;
            continue;
        }
        if (st) break;
        for (int32_t k = 0; k < n->n_outputs && !st; k++) {
            int32_t v = n->outputs[k];
            if (v < 0) continue;
            ir_value *val = g->values[v];
            if (out[k].dtype != MOPT_DTYPE_UNDEFINED) {
                if (val->dtype != MOPT_DTYPE_UNDEFINED && val->dtype != out[k].dtype)
                    st = mopt_fail(MOPT_ERR_TYPE,
                                   "node '%s' (%s): output '%s' is declared %s but computes to %s",
                                   n->name, n->op_type, val->name, mopt_dtype_name(val->dtype),
                                   mopt_dtype_name(out[k].dtype));
                val->dtype = out[k].dtype;
            }
            if (!st) st = merge_shape(g, n, val, &out[k].shape);
            cdata[v] = out[k].data;
            if (st && problem && st != MOPT_ERR_OUT_OF_MEMORY) {
                problem(user, n, st, mopt_error_message());
                if (n_problems) (*n_problems)++;
                st = MOPT_OK;
            }
        }
    }
    mopt_free(cdata);
    return st;
}

static void count_parameters(mopt_model *m) {
    const ir_graph *g = m->graph;
    for (int32_t i = 0; i < g->n_values; i++) {
        const ir_value *v = g->values[i];
        if (!(v->flags & IR_VALUE_INITIALIZER)) continue;
        int64_t n = ir_shape_numel(&v->shape);
        if (n > 0) m->parameter_count += n;
        m->parameter_bytes += (int64_t)v->nbytes;
    }
}

void rt_model_free_names(mopt_model *m) {
    if (!m->op_names) return;
    for (int32_t i = 0; i < m->graph->n_nodes; i++)
        mopt_free(m->op_names[i]);
    mopt_free(m->op_names);
    m->op_names = NULL;
}

/* Copies a pass report into the model (names included) and formats it as
 * the table mopt_model_pass_report returns (columns as passes_report_print).
 * The text is optional: without memory for it the accessor gives "". */
static void set_report(mopt_model *m, const pass_report *rep) {
    memset(&m->report, 0, sizeof m->report);
    if (rep) m->report = *rep;
    if (m->report.n > PASS_REPORT_CAP) m->report.n = PASS_REPORT_CAP;
    for (int i = 0; i < m->report.n; i++) {
        pass_report_entry *e = &m->report.entries[i];
        snprintf(m->report_names[i], sizeof m->report_names[i], "%s", e->name ? e->name : "");
        e->name = m->report_names[i];
        e->note[sizeof e->note - 1] = '\0';
    }
    size_t cap = (size_t)(m->report.n + 2) * (RT_PASS_NAME_CAP + PASS_NOTE_CAP + 96);
    char *t = mopt_malloc(cap);
    if (!t) return;
    size_t len = (size_t)snprintf(t, cap, "%-16s %9s %7s %7s %8s  %s\n", "pass", "time(ms)",
                                  "before", "after", "rewrites", "details");
    for (int i = 0; i < m->report.n && len < cap; i++) {
        const pass_report_entry *e = &m->report.entries[i];
        len +=
            (size_t)snprintf(t + len, cap - len, "%-16s %9.3f %7d %7d %8d  %s\n", e->name, e->ms,
                             (int)e->nodes_before, (int)e->nodes_after, (int)e->rewrites, e->note);
    }
    if (len < cap)
        snprintf(t + len, cap - len, "%-16s %9.3f %7d %7d\n", "total", m->report.total_ms,
                 (int)m->report.nodes_before, (int)m->report.nodes_after);
    m->report_text = t;
}

static mopt_status build(ir_graph *graph, const rt_config *cfg, bool run_passes,
                         const pass_report *applied, mopt_model **out) {
    *out = NULL;
    mopt_status st = ir_graph_check(graph);
    if (!st) st = resolve_ops(graph);
    if (!st) st = rt_infer_graph(graph);
    pass_report rep;
    memset(&rep, 0, sizeof rep);
    rep.nodes_before = rep.nodes_after = graph->n_nodes;
    if (!st && run_passes && cfg->opt_level > 0)
        st = passes_run(graph, cfg->opt_level, &rep, cfg->verbose);
    if (st) {
        ir_graph_destroy(graph);
        return st;
    }
    mopt_model *m = mopt_calloc(1, sizeof *m);
    if (!m) {
        ir_graph_destroy(graph);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating model");
    }
    m->graph = graph;
    m->config = *cfg;
    set_report(m, run_passes ? &rep : applied);
    count_parameters(m);
    st = rt_plan_kernels(m);
    if (!st) {
        m->op_names = mopt_calloc((size_t)(graph->n_nodes ? graph->n_nodes : 1), sizeof(char *));
        if (!m->op_names) st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating model");
        for (int32_t i = 0; !st && i < graph->n_nodes; i++) {
            const ir_node *n = graph->nodes[i];
            if (!n->domain[0] || strcmp(n->domain, "ai.onnx") == 0) continue;
            size_t len = strlen(n->domain) + strlen(n->op_type) + 2;
            m->op_names[i] = mopt_malloc(len);
            if (!m->op_names[i])
                st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
            else
                snprintf(m->op_names[i], len, "%s.%s", n->domain, n->op_type);
        }
    }
    if (st) {
        rt_model_free_names(m);
        rt_release_kernels(m);
        ir_graph_destroy(graph);
        mopt_free(m->report_text);
        mopt_free(m);
        return st;
    }
    if (cfg->verbose) {
        char buf[IR_SHAPE_STR_CAP];
        for (int32_t i = 0; i < graph->n_nodes; i++) {
            const ir_node *n = graph->nodes[i];
            const ir_value *o =
                n->n_outputs && n->outputs[0] >= 0 ? graph->values[n->outputs[0]] : NULL;
            fprintf(stderr, "mopt: node %d '%s' %s kernel=%s out=%s %s\n", (int)i, n->name,
                    n->op_type, rt_node_kernel_name(m, i), o ? mopt_dtype_name(o->dtype) : "-",
                    o ? ir_shape_str(&o->shape, graph, buf, sizeof buf) : "");
        }
    }
    *out = m;
    return MOPT_OK;
}

mopt_status rt_model_build(ir_graph *graph, const rt_config *cfg, mopt_model **out) {
    return build(graph, cfg, true, NULL, out);
}

mopt_status rt_model_build_optimized(ir_graph *graph, const rt_config *cfg,
                                     const pass_report *applied, mopt_model **out) {
    return build(graph, cfg, false, applied, out);
}
