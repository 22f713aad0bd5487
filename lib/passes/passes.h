/*
 * passes.h — the load-time graph optimizer: the pass list, the pass manager
 * that runs the passes an opt_level asks for, and the report of what each
 * pass changed. Passes see only the IR (and the op registry, to evaluate
 * constant nodes); they never see kernels or sessions.
 */
#ifndef MOPT_PASSES_PASSES_H
#define MOPT_PASSES_PASSES_H

#include <mopt/mopt.h>

#include "ir/ir.h"

#define PASS_NOTE_CAP 160

typedef struct pass_result {
    int32_t rewrites;         /* how many rewrites the pass applied */
    char note[PASS_NOTE_CAP]; /* e.g. "12 Identity, 2 Dropout" */
} pass_result;

typedef mopt_status (*pass_fn)(ir_graph *g, pass_result *r);

/* What a pass manager run knows beyond the graph (passes_run_ex): the
 * calibration table, verbosity, and whether conv chains must stay
 * channels-last (bf16 convolutions on AMX). Passes that need it take it
 * through pass_def.run_env. */
typedef struct pass_qtable pass_qtable;
typedef struct pass_env {
    pass_qtable *qt; /* NULL: no static INT8 */
    int verbose;
    bool bf16_nhwc; /* pass_layout */
} pass_env;
typedef mopt_status (*pass_env_fn)(ir_graph *g, const pass_env *env, pass_result *r);

typedef struct pass_def {
    const char *name;
    int min_level; /* runs when opt_level >= min_level */
    pass_fn run;
    pass_env_fn run_env; /* instead of run, for passes that read the run's pass_env */
    /* Bits of the pass manager's anchor ops (pass_manager.c): when set, the
     * pass rewrites only around live default-domain nodes of those types,
     * and is not run on a graph that has none (0: always run). */
    unsigned anchors;
} pass_def;

typedef struct pass_report_entry {
    const char *name;
    double ms;
    int32_t nodes_before, nodes_after;
    int32_t rewrites;
    char note[PASS_NOTE_CAP];
} pass_report_entry;

#define PASS_REPORT_CAP 32
typedef struct pass_report {
    pass_report_entry entries[PASS_REPORT_CAP];
    int n;
    int32_t nodes_before, nodes_after;
    double total_ms;
} pass_report;

/* A problem found while checking a model: node, status, message. */
typedef void (*pass_problem_fn)(void *user, const ir_node *n, mopt_status status,
                                const char *message);

/* Resolves every node's op_def (pass_infer.c). Without `problem` it fails
 * listing every unsupported node at once, else on the first node whose
 * input/output counts its op does not take. With `problem` each such node is
 * reported (and counted), its op left NULL, and resolution goes on. */
mopt_status passes_resolve_ops(ir_graph *g, pass_problem_fn problem, void *user,
                               size_t *n_problems);
/* Load-time shape and type inference over the whole graph (ops resolved). */
mopt_status passes_infer_graph(ir_graph *g);
/* The same as loading runs it: with verbose, each declared output or
 * value_info shape that inference contradicts (the inferred one wins) is
 * printed to stderr as a warning naming the value. */
mopt_status passes_infer_graph_load(ir_graph *g, int verbose);
/* The same, but when `problem` is given, a node whose op is unresolved or
 * whose inference fails is reported (and counted) and inference goes on with
 * its outputs unknown; only running out of memory stops it. Warnings (a
 * contradicted declared shape) go to `problem` too, with status OK, and are
 * not counted. */
mopt_status passes_infer_graph_checked(ir_graph *g, pass_problem_fn problem, void *user,
                                       size_t *n_problems);

/* Replaces the symbolic dimension `name` by value in every value's shape of
 * g (pass_fix_dims.c); *n_input_axes gets how many graph-input axes had it
 * (0 when no input names it). Run before inference. Returns OK. */
mopt_status passes_fix_dim(ir_graph *g, const char *name, int64_t value, int32_t *n_input_axes);

/* ---- subgraphs (pass_subgraphs.c) ---- */

/* Where a graph being resolved or inferred sits: how problems are reported
 * (check mode) and the path that prefixes its nodes' names in messages ("",
 * or "If_3/then_branch/" for a branch of node If_3). */
struct op_subgraphs;
typedef struct pass_scope {
    pass_problem_fn problem; /* NULL: fail on the first problem (load) */
    pass_problem_fn warn;    /* hears declared shapes inference overrides; may be NULL */
    void *user;
    size_t *n_problems;
    const char *path;
} pass_scope;

/* Inference of g as passes_infer_graph_checked, in scope sc; control-flow
 * nodes infer their subgraphs through the service of pass_subgraphs.c. */
mopt_status passes_infer_graph_scoped(ir_graph *g, const pass_scope *sc);
/* The load-time subgraph service (ops.h) for the nodes of a graph in sc. */
void passes_subgraph_service(const pass_scope *sc, struct op_subgraphs *out);
/* Reports a problem of node n of the graph in sc (its name prefixed by the
 * path), and counts it. */
void passes_report_problem(const pass_scope *sc, const ir_node *n, mopt_status st,
                           const char *message);
/* "<path><node>/<attribute>/": the scope path of subgraph k of node n (a
 * node without a name goes by its op type). */
void passes_subgraph_path(const char *path, const ir_node *n, int32_t k, char *buf, size_t cap);

/* Runs every pass with min_level <= opt_level, in order, on a checked graph
 * with inferred shapes (ir_graph_check, passes_infer_graph): after each pass
 * that changed the graph, compacts it and re-infers shapes; at the end, if
 * anything changed, checks (and topologically sorts) it and infers again.
 * Fills rep (may be NULL); logs it (MOPT_LOG_INFO, core/log.h) when verbose. */
mopt_status passes_run(ir_graph *g, int opt_level, pass_report *rep, int verbose);

/* Logs a report as a table, one message per line (MOPT_LOG_INFO). */
void passes_report_log(const pass_report *rep);

/* The passes (one file each). */
mopt_status pass_eliminate(ir_graph *g, pass_result *r);
mopt_status pass_fold_constants(ir_graph *g, pass_result *r);
mopt_status pass_cse(ir_graph *g, pass_result *r);
mopt_status pass_dce(ir_graph *g, pass_result *r);
mopt_status pass_fold_shapes(ir_graph *g, pass_result *r);
mopt_status pass_fold_if(ir_graph *g, pass_result *r);
/* Fusions (opt_level 2). */
mopt_status pass_fuse_conv_bn(ir_graph *g, pass_result *r);
mopt_status pass_fuse_conv_affine(ir_graph *g, pass_result *r);
mopt_status pass_fuse_hardswish(ir_graph *g, pass_result *r);
mopt_status pass_fuse_se_residual(ir_graph *g, pass_result *r);
mopt_status pass_fuse_conv_act(ir_graph *g, pass_result *r);
/* Channels-last (and blocked) activations between convolutions; with
 * bf16_nhwc (bf16 convolutions on AMX: ops_conv_bf16_amx) conv chains stay
 * channels-last, never blocked (oneDNN 2.6's AMX convolutions take
 * channels-last bf16; blocked bf16 gets its jit_bf16, ~10x slower). */
mopt_status pass_layout(ir_graph *g, bool bf16_nhwc, pass_result *r);
/* A 1x1 conv -> depthwise conv pair whose intermediate exceeds the L2, as one
 * mopt.FusedConvDw (opt_level 3, after layout). */
mopt_status pass_fuse_conv_dw(ir_graph *g, pass_result *r);
mopt_status pass_fuse_layernorm(ir_graph *g, pass_result *r);
mopt_status pass_fuse_gelu(ir_graph *g, pass_result *r);
mopt_status pass_fuse_matmul(ir_graph *g, pass_result *r);
/* pass_fuse_qkv merges the Q, K and V products of a mopt.Attention ("bsh")
 * that read one input into one FusedMatMul the Attention reads with
 * packed_qkv=1 (opt_level 3). */
mopt_status pass_fuse_qkv(ir_graph *g, pass_result *r);
mopt_status pass_fuse_attention(ir_graph *g, pass_result *r); /* level 2 */
/* Token-major KV caches, appended in place (pass_kv_cache.c): run after the
 * others when the load option kv_cache=1 asks (it changes the I/O shapes). */
mopt_status pass_kv_cache(ir_graph *g, pass_result *r);
/* precision=int8, opt_level 3, after the pipeline (pass_ln_copy.c): a
 * LayerNormalization read by int8 matmul candidates and by other readers
 * gets a copy of Y for the matmuls (mopt.LayerNormalization's 4th output),
 * which the runtime keeps as u8 rows quantized by the LayerNorm. exclude:
 * int8_exclude (those matmuls keep reading Y). */
mopt_status pass_ln_copy(ir_graph *g, const char *exclude, pass_result *r);

/* Pruning (pass_prune.c). passes_prune_outputs keeps only the graph
 * outputs named in `list` (comma-separated; NOT_FOUND names an unknown one)
 * and marks the nodes that fed only the others dead (the caller compacts);
 * the note says how many outputs and nodes went. pass_prune_channels
 * removes Conv output channels and MatMul weight columns that are exactly
 * zero, with the matching input channels of their readers (opt_level 1).
 * pass_prune_heads removes mopt.Attention heads whose V projection or
 * output-projection rows are exactly zero (opt_level 2, after
 * fuse_attention). */
mopt_status passes_prune_outputs(ir_graph *g, const char *list, pass_result *r);
mopt_status pass_prune_channels(ir_graph *g, pass_result *r);
mopt_status pass_prune_heads(ir_graph *g, pass_result *r);

/* The "expose_values" option (pass_expose.c, after the passes): every f32
 * value a node of the main graph writes, and every u8 value kept between
 * static INT8 nodes (through an added DequantizeLinear that takes its name;
 * the u8 value becomes "<name>:u8"), becomes an extra graph output, in node
 * order. *n_exposed receives the count. */
mopt_status passes_expose_values(ir_graph *g, int32_t *n_exposed);

/* ---- static INT8 from a calibration table (issue 13) ---------------------
 * One entry per activation tensor: the u8 quantization of its calibrated
 * range. The runtime reads the table (runtime/calib_table.c); the pass
 * (pass_quant_static.c, run by passes_run_ex before `layout`) turns MatMul,
 * Conv, mopt.FusedMatMul and mopt.FusedConv whose weights are constant and
 * whose input is in the table into mopt.StaticQMatMul / StaticQConv, marks
 * the entries it used and keeps u8 between consecutive static nodes. */
typedef struct pass_qentry {
    char *name;
    float scale;
    int32_t zero_point; /* u8 */
    bool used;
    int64_t n_ch;    /* channel_min/channel_max of a rank >= 3 tensor (0: none) */
    float *ch_range; /* [2 * n_ch]: min, max of channel c at 2c, 2c + 1 */
    float *ch_mean;  /* [n_ch]: channel_mean (NULL: none, older tables) */
    float *ch_qerr;  /* [n_ch]: channel_qerr, mean of Q(x) - x with scale/zero_point (NULL: none) */
    int32_t rank;    /* dims: the shape calibration saw (0: none), -1 where it varied */
    int64_t dims[IR_MAX_RANK];
} pass_qentry;
typedef struct pass_qtable {
    pass_qentry *e;
    int32_t n;
    char path[512];      /* for messages */
    const char *exclude; /* int8_exclude: nodes left in float (NULL = none) */
    bool int8_depthwise; /* option int8_depthwise=int8: depthwise Convs static too */
} pass_qtable;
mopt_status pass_quant_static(ir_graph *g, pass_qtable *t, int verbose, pass_result *r);
/* A depthwise Conv's per-input-channel X scales cs[c_in] and their common
 * u8 zero point from e's channel ranges (pass_quant_static.c); false when e
 * has none for c_in channels. */
bool pass_qs_channel_scales(const pass_qentry *e, int64_t c_in, float *cs, int32_t *zp);
/* The u8-between-static-nodes step of both passes; counts into *n_chained. */
mopt_status pass_quant_chain(ir_graph *g, int verbose, int32_t *n_chained);
/* QDQ models (QuantizeLinear/DequantizeLinear around MatMul/Gemm/Conv) onto
 * the same static ops (pass_qdq.c, opt_level 2, before constant folding). */
mopt_status pass_qdq(ir_graph *g, pass_result *r);
/* passes_run with a calibration table (NULL: passes_run) and the layout
 * pass's bf16_nhwc (pass_layout). */
mopt_status passes_run_ex(ir_graph *g, int opt_level, pass_report *rep, int verbose,
                          pass_qtable *qt, bool bf16_nhwc);

/* Comma-separated name lists (the options int8_exclude and outputs): the
 * next entry of *at, spaces around it dropped, as *item and *len (empty
 * entries are skipped); false when there is none left. Start with *at =
 * the list (NULL or "" has no entries). */
bool pass_list_next(const char **at, const char **item, size_t *len);
/* True when name is one of the list's entries (an empty name never
 * matches). */
bool pass_name_listed(const char *list, const char *name);

/* Shared helper: appends "N what" to a note, comma-separated. */
void pass_note_add(pass_result *r, int32_t count, const char *what);

/* The most counters a pass reports through pass_note_counts. */
#define PASS_COUNTS_CAP 8

/* What a pass counted, in one step: counts[k] noted as "N names[k]" for k in
 * 0..PASS_COUNTS_CAP until the first NULL name (zeros left out), and
 * r->rewrites = the sum of the counts whose bit is set in rewrites_mask. */
void pass_note_counts(pass_result *r, const int32_t *counts, const char *const *names,
                      unsigned rewrites_mask);

#endif
