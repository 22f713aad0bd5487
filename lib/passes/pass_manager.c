/*
 * pass_manager.c — runs the optimization passes for an opt_level:
 *   1: constant folding (incl. symbolic shape arithmetic), If with a
 *      constant condition replaced by its branch, eliminations, CSE, DCE,
 *      pruning of exactly-zero Conv channels and MatMul columns
 *   2: level 1 plus fusions and pruning of zero attention heads
 *   3: level 2 plus the merge of an attention's Q, K, V projections into
 *      one product (pass_fuse_qkv.c), weight prepacking (the kernels' impls
 *      reorder constant weights into their own layouts at model build:
 *      op_ctx.opt_level, the "-packed" impls in lib/ops, e.g.
 *      matmul_onednn.c) and the layout pass (pass_layout.c: channels-last
 *      activations between convolutions)
 * and records, per pass, its time, node counts before/after and rewrites.
 */
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "passes/passes.h"

/* The op types the fusion passes start their patterns from (each pass's
 * loop skips every other node): a pass whose anchors are all absent from the
 * graph would only pay for a sweep of it, so it is not run. */
static const char *const k_anchor_ops[] = {
    "BatchNormalization", "Conv", "ReduceMean", "Erf", "Tanh", "Softmax", "MatMul", "Gemm",
    "ConvTranspose"};
#define N_ANCHORS (int)(sizeof k_anchor_ops / sizeof k_anchor_ops[0])
#define ANCHOR(i) (1u << (i))

/* the passes that read the run's environment */
static mopt_status quant_static_env(ir_graph *g, const pass_env *env, pass_result *r) {
    return pass_quant_static(g, env->qt, env->verbose, r);
}

static mopt_status layout_env(ir_graph *g, const pass_env *env, pass_result *r) {
    return pass_layout(g, env->bf16_nhwc, r);
}

static const pass_def k_passes[] = {
    /* QDQ models: first, before folding turns DequantizeLinear(weights)
     * into f32 weights (opt_level 2: the int8 kernels replace the f32
     * emulation that opt_level 0 and 1 run) */
    {"qdq", 2, pass_qdq, NULL, 0},
    {"fold_constants", 1, pass_fold_constants, NULL, 0},
    /* an If whose condition folded to a constant becomes its branch, which
     * every later pass then sees as part of the graph */
    {"fold_if", 1, pass_fold_if, NULL, 0},
    {"eliminate", 1, pass_eliminate, NULL, 0},
    {"cse", 1, pass_cse, NULL, 0},
    {"fold_shapes", 1, pass_fold_shapes, NULL, 0},
    {"fold_constants", 1, pass_fold_constants, NULL, 0},
    /* fusions: Conv+BN and Conv+constant Mul/Add folds, and spelled-out
     * HardSwish, before Conv+activation; LayerNorm and GELU before
     * the MatMul epilogues (which absorb Gelu); attention before fuse_matmul,
     * which would otherwise turn its Q.K^T into a transposed FusedMatMul. */
    {"fuse_conv_bn", 2, pass_fuse_conv_bn, NULL, ANCHOR(0)},
    {"fuse_conv_affine", 2, pass_fuse_conv_affine, NULL, ANCHOR(1) | ANCHOR(8)},
    /* zero channels go after BN/affine folds (which may zero a channel's
     * bias) and before the epilogue fusions (it matches plain Conv, MatMul,
     * Add and Relu) */
    {"prune_channels", 1, pass_prune_channels, NULL, ANCHOR(1) | ANCHOR(6)},
    {"fuse_hardswish", 2, pass_fuse_hardswish, NULL, 0},
    /* before fuse_conv_act: the SE's s + 1 becomes its last conv's post_shift */
    {"fuse_se_residual", 2, pass_fuse_se_residual, NULL, 0},
    {"fuse_conv_act", 2, pass_fuse_conv_act, NULL, ANCHOR(1)},
    {"fuse_layernorm", 2, pass_fuse_layernorm, NULL, ANCHOR(2)},
    {"fuse_gelu", 2, pass_fuse_gelu, NULL, ANCHOR(3) | ANCHOR(4)},
    {"fuse_attention", 2, pass_fuse_attention, NULL, ANCHOR(5)},
    /* heads of the fused attention whose weights are zero, while its
     * projections are still plain MatMul + Add */
    {"prune_heads", 2, pass_prune_heads, NULL, ANCHOR(6)},
    {"fuse_matmul", 2, pass_fuse_matmul, NULL, ANCHOR(6) | ANCHOR(7)},
    {"dce", 1, pass_dce, NULL, 0},
    /* static INT8 (a calibration table given: passes_run_ex): after every
     * fusion, so it sees the fused forms, and before layout */
    {"quant_static", 2, NULL, quant_static_env, 0},
    /* the Q, K, V projections of a fused attention as one product (opt_level
     * 3): after quant_static, whose calibration table names their outputs */
    {"fuse_qkv", 3, pass_fuse_qkv, NULL, 0},
    /* last: channels-last activations between convolutions (opt_level 3) */
    {"layout", 3, NULL, layout_env, 0},
    /* a 1x1 conv and the depthwise conv reading it as one banded node: after
     * layout, whose blocked layouts it needs */
    {"fuse_conv_dw", 3, pass_fuse_conv_dw, NULL, 0},
};
#define N_PASSES (int)(sizeof k_passes / sizeof k_passes[0])

/* Which anchor ops the graph's live default-domain nodes have. */
static unsigned anchors_present(const ir_graph *g) {
    unsigned present = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (n->dead || n->domain[0] != '\0') continue;
        for (int a = 0; a < N_ANCHORS; a++)
            if (n->op_type[0] == k_anchor_ops[a][0] && strcmp(n->op_type, k_anchor_ops[a]) == 0)
                present |= ANCHOR(a);
    }
    return present;
}

bool pass_list_next(const char **at, const char **item, size_t *len) {
    const char *p = *at;
    if (!p) return false;
    for (;;) {
        while (*p == ' ' || *p == ',')
            p++;
        if (!*p) {
            *at = p;
            return false;
        }
        const char *e = p;
        while (*e && *e != ',')
            e++;
        const char *t = e;
        while (t > p && t[-1] == ' ')
            t--;
        *at = e;
        if (t > p) {
            *item = p;
            *len = (size_t)(t - p);
            return true;
        }
        p = e;
    }
}

bool pass_name_listed(const char *list, const char *name) {
    size_t n = strlen(name);
    const char *item;
    size_t len;
    for (const char *at = list; n && pass_list_next(&at, &item, &len);)
        if (len == n && memcmp(item, name, n) == 0) return true;
    return false;
}

void pass_note_add(pass_result *r, int32_t count, const char *what) {
    if (count <= 0) return;
    size_t len = strlen(r->note);
    snprintf(r->note + len, sizeof r->note - len, "%s%d %s", len ? ", " : "", (int)count, what);
}

void pass_note_counts(pass_result *r, const int32_t *counts, const char *const *names,
                      unsigned rewrites_mask) {
    r->rewrites = 0;
    for (int k = 0; k < PASS_COUNTS_CAP && names[k]; k++)
        if (rewrites_mask >> k & 1u) r->rewrites += counts[k];
    for (int k = 0; k < PASS_COUNTS_CAP && names[k]; k++)
        pass_note_add(r, counts[k], names[k]);
}

static int32_t live_nodes(const ir_graph *g) {
    int32_t n = 0;
    for (int32_t i = 0; i < g->n_nodes; i++)
        n += !g->nodes[i]->dead;
    return n;
}

/* The static INT8 passes are not run, nor reported, where they have nothing
 * to do: quant_static without a calibration table, qdq on a graph without
 * DequantizeLinear. */
static bool optional_pass_skipped(const pass_def *p, const ir_graph *g, const pass_qtable *qt) {
    if (p->run_env == quant_static_env) return qt == NULL;
    if (p->run != pass_qdq) return false;
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i]->dead && !g->nodes[i]->domain[0] &&
            strcmp(g->nodes[i]->op_type, "DequantizeLinear") == 0)
            return false;
    return true;
}

mopt_status passes_run(ir_graph *g, int opt_level, pass_report *rep, int verbose) {
    return passes_run_ex(g, opt_level, rep, verbose, NULL, false);
}

mopt_status passes_run_ex(ir_graph *g, int opt_level, pass_report *rep, int verbose,
                          pass_qtable *qt, bool bf16_nhwc) {
    const pass_env env = {.qt = qt, .verbose = verbose, .bf16_nhwc = bf16_nhwc};
    pass_report local;
    if (!rep) rep = &local;
    memset(rep, 0, sizeof *rep);
    rep->nodes_before = g->n_nodes;
    int64_t t_all = mopt_now_ns();
    bool changed = false; /* the graph comes checked and inferred (model.c) */
    bool anchors_known = false;
    unsigned anchors = 0;
    for (int i = 0; i < N_PASSES; i++) {
        const pass_def *p = &k_passes[i];
        if (opt_level < p->min_level || optional_pass_skipped(p, g, qt)) continue;
        pass_result r;
        memset(&r, 0, sizeof r);
        int32_t before = g->n_nodes;
        int64_t t0 = mopt_now_ns();
        if (p->anchors && !anchors_known) {
            anchors = anchors_present(g);
            anchors_known = true;
        }
        mopt_status st = MOPT_OK;
        bool run = !p->anchors || (p->anchors & anchors);
        if (run) st = p->run ? p->run(g, &r) : p->run_env(g, &env, &r);
        if (st) return mopt_fail_context(st, "pass '%s'", p->name);
        if (run && (live_nodes(g) != g->n_nodes || r.rewrites)) {
            changed = true;
            anchors_known = false;
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
    if (changed) {
        mopt_status st = ir_graph_check(g);
        if (!st) st = passes_infer_graph(g);
        if (st) return mopt_fail_context(st, "after optimization");
    }
    rep->nodes_after = g->n_nodes;
    rep->total_ms = (double)(mopt_now_ns() - t_all) / 1e6;
    if (verbose) passes_report_log(rep);
    return MOPT_OK;
}

void passes_report_log(const pass_report *rep) {
    mopt_log(MOPT_LOG_INFO, "%-16s %9s %7s %7s %8s  %s", "pass", "time(ms)", "before", "after",
             "rewrites", "details");
    for (int i = 0; i < rep->n; i++) {
        const pass_report_entry *e = &rep->entries[i];
        mopt_log(MOPT_LOG_INFO, "%-16s %9.3f %7d %7d %8d  %s", e->name, e->ms, (int)e->nodes_before,
                 (int)e->nodes_after, (int)e->rewrites, e->note);
    }
    mopt_log(MOPT_LOG_INFO, "%-16s %9.3f %7d %7d", "total", rep->total_ms, (int)rep->nodes_before,
             (int)rep->nodes_after);
}
