/*
 * pass_manager.c — runs the optimization passes for an opt_level:
 *   1: constant folding (incl. symbolic shape arithmetic), If with a
 *      constant condition replaced by its branch, eliminations, CSE, DCE
 *   2: level 1 plus fusions
 *   3: level 2 plus weight prepacking: no graph pass; the kernels' impls
 *      reorder constant weights into their own layouts at model build
 *      (op_ctx.opt_level, the "-packed" impls in lib/ops, e.g. matmul_onednn.c)
 * and records, per pass, its time, node counts before/after and rewrites.
 */
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/error.h"
#include "passes/passes.h"

static const pass_def k_passes[] = {
    {"fold_constants", 1, pass_fold_constants},
    /* an If whose condition folded to a constant becomes its branch, which
     * every later pass then sees as part of the graph */
    {"fold_if", 1, pass_fold_if},
    {"eliminate", 1, pass_eliminate},
    {"cse", 1, pass_cse},
    {"fold_shapes", 1, pass_fold_shapes},
    {"fold_constants", 1, pass_fold_constants},
    /* fusions: Conv+BN before Conv+activation; LayerNorm and GELU before
     * the MatMul epilogues (which absorb Gelu); attention before fuse_matmul,
     * which would otherwise turn its Q.K^T into a transposed FusedMatMul. */
    {"fuse_conv_bn", 2, pass_fuse_conv_bn},
    {"fuse_conv_act", 2, pass_fuse_conv_act},
    {"fuse_layernorm", 2, pass_fuse_layernorm},
    {"fuse_gelu", 2, pass_fuse_gelu},
    {"fuse_attention", 2, pass_fuse_attention},
    {"fuse_matmul", 2, pass_fuse_matmul},
    {"dce", 1, pass_dce},
};
#define N_PASSES (int)(sizeof k_passes / sizeof k_passes[0])

void pass_note_add(pass_result *r, int32_t count, const char *what) {
    if (count <= 0) return;
    size_t len = strlen(r->note);
    snprintf(r->note + len, sizeof r->note - len, "%s%d %s", len ? ", " : "", (int)count, what);
}

static int32_t live_nodes(const ir_graph *g) {
    int32_t n = 0;
    for (int32_t i = 0; i < g->n_nodes; i++)
        n += !g->nodes[i]->dead;
    return n;
}

mopt_status passes_run(ir_graph *g, int opt_level, pass_report *rep, int verbose) {
    pass_report local;
    if (!rep) rep = &local;
    memset(rep, 0, sizeof *rep);
    rep->nodes_before = g->n_nodes;
    int64_t t_all = mopt_now_ns();
    for (int i = 0; i < N_PASSES; i++) {
        const pass_def *p = &k_passes[i];
        if (opt_level < p->min_level) continue;
        pass_result r;
        memset(&r, 0, sizeof r);
        int32_t before = g->n_nodes;
        int64_t t0 = mopt_now_ns();
        mopt_status st = p->run(g, &r);
        if (st) return mopt_fail_context(st, "pass '%s'", p->name);
        if (live_nodes(g) != g->n_nodes || r.rewrites) {
            /* later passes see compact, freshly inferred shapes */
            st = ir_graph_compact(g);
            if (!st) st = passes_infer_graph(g);
            if (st) return mopt_fail_context(st, "after pass '%s'", p->name);
        }
        if (rep->n < PASS_REPORT_CAP) {
            pass_report_entry *e = &rep->entries[rep->n++];
            e->name = p->name;
            e->ms = (double)(mopt_now_ns() - t0) / 1e6;
            e->nodes_before = before;
            e->nodes_after = g->n_nodes;
            e->rewrites = r.rewrites;
            memcpy(e->note, r.note, sizeof e->note);
        }
    }
    mopt_status st = ir_graph_check(g);
    if (!st) st = passes_infer_graph(g);
    if (st) return mopt_fail_context(st, "after optimization");
    rep->nodes_after = g->n_nodes;
    rep->total_ms = (double)(mopt_now_ns() - t_all) / 1e6;
    if (verbose) passes_report_print(rep, stderr);
    return MOPT_OK;
}

void passes_report_print(const pass_report *rep, void *file) {
    FILE *f = file;
    fprintf(f, "%-16s %9s %7s %7s %8s  %s\n", "pass", "time(ms)", "before", "after", "rewrites",
            "details");
    for (int i = 0; i < rep->n; i++) {
        const pass_report_entry *e = &rep->entries[i];
        fprintf(f, "%-16s %9.3f %7d %7d %8d  %s\n", e->name, e->ms, (int)e->nodes_before,
                (int)e->nodes_after, (int)e->rewrites, e->note);
    }
    fprintf(f, "%-16s %9.3f %7d %7d\n", "total", rep->total_ms, (int)rep->nodes_before,
            (int)rep->nodes_after);
}
