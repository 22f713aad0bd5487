/*
 * model.c — turning an imported graph into a runnable model: graph checks,
 * operator resolution and load-time shape/type inference (lib/passes/
 * pass_infer.c), the passes (their report is kept in the model), parameter
 * statistics and kernel dispatch (dispatch.c). Graphs read from a .mopt file
 * were optimized when saved: they skip the passes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "ir/ir_subgraph.h"
#include "mopt_config.h"
#include "ops/impls.h"
#include "passes/passes.h"
#include "runtime/runtime.h"

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
 * the table mopt_model_pass_report returns (columns as passes_report_log).
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

/* The symbolic dimension names of the graph inputs, for an error message. */
static void input_dim_names(const ir_graph *g, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (int32_t s = 1; s <= g->n_symbols && len < cap; s++) {
        bool used = false;
        for (int32_t i = 0; i < g->n_inputs && !used; i++) {
            const ir_shape *sh = &g->values[g->inputs[i]]->shape;
            for (int32_t d = 0; d < sh->rank && !used; d++)
                used = sh->syms[d] == s;
        }
        if (used)
            len += (size_t)snprintf(buf + len, cap - len, "%s'%s'", len ? ", " : "",
                                    g->symbols[s - 1]);
    }
    if (!buf[0]) snprintf(buf, cap, "none");
}

/* Applies the "dim.<name>" options: records which input axes each fixes
 * (*fixed, for run errors), then makes them numbers in the graph. */
static mopt_status fix_dims(ir_graph *g, const rt_config *cfg, rt_fixed_dim **fixed,
                            int32_t *n_fixed) {
    *fixed = NULL;
    *n_fixed = 0;
    if (cfg->n_dims == 0) return MOPT_OK;
    size_t cap = 0;
    for (int32_t i = 0; i < g->n_inputs; i++) {
        int32_t r = g->values[g->inputs[i]]->shape.rank;
        cap += r > 0 ? (size_t)r : 0;
    }
    rt_fixed_dim *f = mopt_calloc(cap ? cap : 1, sizeof *f);
    if (!f) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory fixing dimensions");
    char names[256]; /* before any is fixed, for the error message */
    input_dim_names(g, names, sizeof names);
    int32_t n = 0;
    for (int k = 0; k < cfg->n_dims; k++) {
        const opt_dim *od = &cfg->dims[k];
        for (int32_t i = 0; i < g->n_inputs; i++) {
            const ir_shape *sh = &g->values[g->inputs[i]]->shape;
            for (int32_t d = 0; d < sh->rank; d++) {
                int32_t sy = sh->syms[d];
                if (sy <= 0 || sy > g->n_symbols || strcmp(g->symbols[sy - 1], od->name) != 0)
                    continue;
                f[n].input = i;
                f[n].axis = d;
                f[n].value = od->value;
                snprintf(f[n].name, sizeof f[n].name, "%s", od->name);
                n++;
            }
        }
        int32_t n_axes = 0;
        mopt_status st = passes_fix_dim(g, od->name, od->value, &n_axes);
        if (!st && n_axes == 0) {
            st = mopt_fail(MOPT_ERR_NOT_FOUND,
                           "option 'dim.%s': no input of the model has a dimension named '%s' "
                           "(the inputs' named dimensions: %s)",
                           od->name, od->name, names);
        }
        if (st) {
            mopt_free(f);
            return st;
        }
    }
    *fixed = f;
    *n_fixed = n;
    return MOPT_OK;
}

static void ignore_problem(void *user, const ir_node *n, mopt_status status, const char *message) {
    (void)user, (void)n, (void)status, (void)message;
}

/* The "outputs" option: keeps the outputs it names, drops the nodes that fed
 * only the others, and describes that as a report entry. */
static mopt_status prune_outputs(ir_graph *g, const rt_config *cfg, pass_report_entry *e,
                                 bool *have) {
    pass_result r;
    memset(&r, 0, sizeof r);
    memset(e, 0, sizeof *e);
    int64_t t0 = mopt_now_ns();
    e->nodes_before = g->n_nodes;
    mopt_status st = passes_prune_outputs(g, cfg->outputs, &r);
    if (!st && r.rewrites) {
        st = ir_graph_compact(g);
        if (!st) st = ir_graph_check(g);
        if (!st) st = passes_infer_graph(g);
    }
    if (st) return st;
    e->name = "prune_outputs";
    e->ms = (double)(mopt_now_ns() - t0) / 1e6;
    e->nodes_after = g->n_nodes;
    e->rewrites = r.rewrites;
    memcpy(e->note, r.note, sizeof e->note);
    *have = true;
    return MOPT_OK;
}

/* calibration_capture (mopt calibrate): the f32 activation inputs of
 * MatMul, Gemm and Conv become extra graph outputs, after the model's own,
 * so one run gives every tensor a calibration table records. */
static mopt_status add_capture_outputs(ir_graph *g) {
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (n->domain[0] || n->n_inputs < 1 || n->inputs[0] < 0 ||
            (strcmp(n->op_type, "MatMul") && strcmp(n->op_type, "Gemm") &&
             strcmp(n->op_type, "Conv")))
            continue;
        ir_value *v = g->values[n->inputs[0]];
        if (v->data || v->dtype != MOPT_DTYPE_F32 || (v->flags & IR_VALUE_OUTPUT)) continue;
        int32_t *o = mopt_realloc(g->outputs, (size_t)(g->n_outputs + 1) * sizeof(int32_t));
        if (!o) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
        g->outputs = o;
        g->outputs[g->n_outputs++] = n->inputs[0];
        v->flags |= IR_VALUE_OUTPUT;
    }
    return MOPT_OK;
}

/* The kv_cache option: the pass (at every opt_level, since it changes the
 * I/O shapes the caller sees), its graph compacted and inferred again, and
 * its row at the end of the pass report. */
/* A pass the options ask for, after the pipeline: kv_cache, or ln_copy
 * (precision=int8 at opt_level 3) */
static mopt_status late_pass(ir_graph *graph, const rt_config *cfg, pass_report *rep,
                             const char *name) {
    pass_result r;
    memset(&r, 0, sizeof r);
    int32_t before = graph->n_nodes;
    int64_t t0 = mopt_now_ns();
    mopt_status st = strcmp(name, "kv_cache") == 0 ? pass_kv_cache(graph, &r)
                                                   : pass_ln_copy(graph, cfg->int8_exclude, &r);
    if (!st && r.rewrites) st = ir_graph_compact(graph);
    if (!st && r.rewrites) st = passes_infer_graph(graph);
    if (st) return mopt_fail_context(st, "pass '%s'", name);
    if (rep->n < PASS_REPORT_CAP) {
        pass_report_entry *e = &rep->entries[rep->n++];
        e->name = name;
        e->ms = (double)(mopt_now_ns() - t0) / 1e6;
        e->nodes_before = before;
        e->nodes_after = graph->n_nodes;
        e->rewrites = r.rewrites;
        memcpy(e->note, r.note, sizeof e->note);
        rep->total_ms += e->ms;
    }
    rep->nodes_after = graph->n_nodes;
    if (cfg->verbose)
        mopt_log(MOPT_LOG_INFO, "mopt: %s: %d rewrites %s", name, (int)r.rewrites, r.note);
    return MOPT_OK;
}

static mopt_status build(ir_graph *graph, const rt_config *cfg, bool run_passes,
                         const pass_report *applied, bool borrowed, mopt_model **out) {
    *out = NULL;
    rt_fixed_dim *fixed = NULL;
    int32_t n_fixed = 0;
    mopt_status st = ir_graph_bind_captures(graph);
    /* "dim.<name>" options name the main graph's inputs, not a subgraph's */
    if (!st && !borrowed) st = fix_dims(graph, cfg, &fixed, &n_fixed);
    if (!st) st = ir_graph_check(graph);
    size_t problems = 0;
    if (!st && cfg->inspect_only && !borrowed) {
        /* for inspection: every problem is counted, none is fatal */
        st = passes_resolve_ops(graph, ignore_problem, NULL, &problems);
        if (!st) st = passes_infer_graph_checked(graph, ignore_problem, NULL, &problems);
        if (problems) run_passes = false;
    } else {
        if (!st) st = passes_resolve_ops(graph, NULL, NULL, NULL);
        if (!st) st = passes_infer_graph_load(graph, borrowed ? 0 : cfg->verbose);
    }
    if (st && st != MOPT_ERR_OUT_OF_MEMORY && borrowed) {
        /* An If branch that cannot be inferred for the inputs it is given
         * (one its condition never selects for them): it is built as it
         * is, unoptimized, and fails at run time if it is ever taken. */
        mopt_clear_error();
        st = passes_infer_graph_checked(graph, ignore_problem, NULL, NULL);
        run_passes = false;
    }
    pass_report rep;
    memset(&rep, 0, sizeof rep);
    rep.nodes_before = rep.nodes_after = graph->n_nodes;
    /* the "outputs" option, at every opt_level (and on .mopt loads) */
    pass_report_entry pruned;
    bool have_pruned = false;
    if (!st && !borrowed && cfg->outputs[0] && !problems)
        st = prune_outputs(graph, cfg, &pruned, &have_pruned);
    /* after it: the capture outputs are added to the outputs kept */
    if (!st && !borrowed && cfg->calibration_capture) st = add_capture_outputs(graph);
    int32_t nodes_before = have_pruned ? pruned.nodes_before : graph->n_nodes;
    /* static INT8: calibration=FILE (read by api/) with precision=int8 */
    pass_qtable *qtp = run_passes && !borrowed ? cfg->qtable : NULL;
    /* expose_values leaves out the layout pass (opt_level 3), whose
     * channels-last tensors are not in the order their shapes say; the
     * kernels still prepack weights at opt_level 3 */
    int pass_level = cfg->expose_values && cfg->opt_level > 2 ? 2 : cfg->opt_level;
    if (!st && run_passes && cfg->opt_level > 0)
        st = passes_run_ex(graph, pass_level, &rep, cfg->verbose && !have_pruned, qtp,
                           rt_float_convs_bf16(cfg));
    if (!st && run_passes && have_pruned) {
        /* the report starts with it */
        int n = rep.n < PASS_REPORT_CAP ? rep.n : PASS_REPORT_CAP - 1;
        memmove(&rep.entries[1], &rep.entries[0], (size_t)n * sizeof rep.entries[0]);
        rep.entries[0] = pruned;
        rep.n = n + 1;
        rep.nodes_before = nodes_before;
        rep.total_ms += pruned.ms;
        if (cfg->opt_level == 0) rep.nodes_after = graph->n_nodes;
        if (cfg->verbose) passes_report_log(&rep);
    }
    if (!st && run_passes && !borrowed && cfg->kv_cache)
        st = late_pass(graph, cfg, &rep, "kv_cache");
    if (!st && run_passes && !borrowed && pass_level >= 3 && strcmp(cfg->precision, "int8") == 0)
        st = late_pass(graph, cfg, &rep, "ln_copy");
    /* expose_values (mopt compare --per-layer): after the passes, so the
     * graph is the one that runs without the option */
    if (!st && !borrowed && cfg->expose_values && !problems && !run_passes)
        st = mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                       "option 'expose_values' applies to ONNX models (a saved .mopt graph may "
                       "hold channels-last tensors)");
    if (!st && !borrowed && cfg->expose_values && !problems) {
        int32_t n_exposed = 0;
        st = passes_expose_values(graph, &n_exposed);
        if (!st) st = ir_graph_check(graph);
        if (!st && cfg->verbose)
            mopt_log(MOPT_LOG_INFO, "mopt: expose_values: %d intermediate values are outputs",
                     (int)n_exposed);
    }
    if (st) {
        mopt_free(fixed);
        if (!borrowed) ir_graph_destroy(graph);
        return st;
    }
    mopt_model *m = mopt_calloc(1, sizeof *m);
    if (!m) {
        mopt_free(fixed);
        if (!borrowed) ir_graph_destroy(graph);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating model");
    }
    m->graph = graph;
    m->graph_borrowed = borrowed;
    atomic_init(&m->refs, 1);
    m->fixed = fixed;
    m->n_fixed = n_fixed;
    m->config = *cfg;
    m->config.qtable = NULL; /* the caller's, read by the passes above only */
    set_report(m, run_passes ? &rep : applied);
    count_parameters(m);
    m->n_problems = problems;
    if (!problems) st = rt_plan_kernels(m);
    if (!st && !problems) st = rt_subgraphs_build(m, run_passes);
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
        rt_subgraphs_release(m);
        rt_release_kernels(m);
        if (!borrowed) ir_graph_destroy(graph);
        mopt_free(m->report_text);
        mopt_free(m->fixed);
        mopt_free(m);
        return st;
    }
    if (cfg->verbose) {
        char buf[IR_SHAPE_STR_CAP];
        int n_blas = 0;
        for (int32_t i = 0; i < graph->n_nodes; i++) {
            const ir_node *n = graph->nodes[i];
            const ir_value *o =
                n->n_outputs && n->outputs[0] >= 0 ? graph->values[n->outputs[0]] : NULL;
            mopt_log(MOPT_LOG_INFO, "mopt: node %d '%s' %s kernel=%s out=%s %s", (int)i, n->name,
                     n->op_type, rt_node_kernel_name(m, i), o ? mopt_dtype_name(o->dtype) : "-",
                     o ? ir_shape_str(&o->shape, graph, buf, sizeof buf) : "");
            n_blas += strcmp(rt_node_kernel_name(m, i), "openblas") == 0;
        }
#ifdef MOPT_HAVE_OPENBLAS
        if (n_blas) ops_openblas_log_core(n_blas); /* which kernels OpenBLAS chose */
#else
        (void)n_blas;
#endif
    }
    *out = m;
    return MOPT_OK;
}

mopt_status rt_model_build(ir_graph *graph, const rt_config *cfg, mopt_model **out) {
    return build(graph, cfg, true, NULL, false, out);
}

mopt_status rt_model_build_nested(ir_graph *sub, const rt_config *cfg, bool run_passes,
                                  mopt_model **out) {
    rt_config c = *cfg;
    c.verbose = 0; /* the enclosing model's listing is the one shown */
    return build(sub, &c, run_passes, NULL, true, out);
}

mopt_status rt_model_build_optimized(ir_graph *graph, const rt_config *cfg,
                                     const pass_report *applied, mopt_model **out) {
    return build(graph, cfg, false, applied, false, out);
}

void rt_model_destroy(mopt_model *m) {
    if (!m) return;
    rt_subgraphs_release(m);
    rt_release_kernels(m);
    rt_model_free_names(m);
    if (!m->graph_borrowed) ir_graph_destroy(m->graph);
    mopt_free(m->report_text);
    mopt_free(m->fixed);
    mopt_free(m);
}
