/*
 * node_view.h — the one way to build an op's view of a node: its op_ctx,
 * its input and output op_tensors and its parsed params. The executor,
 * kernel dispatch, model build (graph inference) and constant folding all
 * call op_view_init, so every op sees the same thing everywhere: inputs
 * past the node's count (up to the op's max_inputs) are omitted, never stale
 * data, and params are parsed by the op's own parse function.
 */
#ifndef MOPT_OPS_NODE_VIEW_H
#define MOPT_OPS_NODE_VIEW_H

#include <stdalign.h>

#include "ops/ops.h"

/* Where a view's tensors come from. */
typedef struct op_view_src {
    ir_graph *graph;
    /* Per-value tensors (the executor's): when set, input k is
     * values[node->inputs[k]] whole. Else dtype and shape come from the IR
     * values and data from data[value] (when data is set) or from
     * initializers. */
    const op_tensor *values;
    const void *const *data;
    bool outputs_from_ir; /* outputs take the IR values' dtype and shape
                             (else they start unknown) */
    bool runtime;         /* ctx.runtime */
    op_precision precision;
    int opt_level;
    int threads;                   /* 0 means 1 */
    const op_subgraphs *subgraphs; /* ctx.subgraphs (for nodes with subgraphs) */
    const op_kv_tiles *kv_tiles;   /* ctx.kv_tiles, n_kv_tiles */
    int n_kv_tiles;
} op_view_src;

typedef struct op_view {
    op_ctx ctx;
    int n_in, n_out;
    op_tensor in[OP_MAX_IO];
    op_tensor out[OP_MAX_IO];
    alignas(16) unsigned char params_buf[OP_PARAMS_CAP];
} op_view;

/* Builds v for node n (whose op must be resolved). `params` is the node's
 * parsed params when the caller planned them (the executor), else NULL: the
 * op's parse runs into v->params_buf. Fails (LIMIT) for a node with more
 * than OP_MAX_IO inputs or outputs, or with parse's error. */
mopt_status op_view_init(op_view *v, const op_view_src *src, const ir_node *n, const void *params);

/* Parses node n's params into buf (def->params_size bytes, zeroed first):
 * what op_view_init does without params, for callers that keep them (the
 * model's plan). OK with nothing written when the op has no params. */
mopt_status op_parse_params(const op_ctx *ctx, void *buf);

/* Shape and type inference of the view's node, with dtype bridging when the
 * op declares it (bridge.c): what every caller uses instead of def->infer. */
mopt_status op_view_infer(op_view *v);

#endif
