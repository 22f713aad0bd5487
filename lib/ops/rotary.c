/*
 * rotary.c — RotaryEmbedding (opset 23): rotary positional embeddings (RoPE)
 * of X [B, H, S, D] or [B, S, H*D] (num_heads then says H) with cos/sin
 * caches [max_pos, R/2] indexed by position_ids [B, S], or [B, S, R/2] when
 * position_ids is omitted. R = rotary_embedding_dim (0: the head size); the
 * features past R pass through. f32 (f16/bf16 through the dtype bridge);
 * the math is in kernels/ref/rotary.c.
 */
#include <inttypes.h>
#include <string.h>

#include "kernels/ref/ref_rotary.h"
#include "ops/bridge.h"
#include "ops/op_common.h"
#include "ops/ops.h"

typedef struct rotary_params {
    bool interleaved;
    int64_t rot;       /* rotary_embedding_dim, 0: the head size */
    int64_t num_heads; /* 0 when absent */
} rotary_params;

static mopt_status rotary_parse(const op_ctx *ctx, void *params) {
    rotary_params *p = params;
    p->interleaved = ir_node_attr_int(ctx->node, "interleaved", 0) != 0;
    p->rot = ir_node_attr_int(ctx->node, "rotary_embedding_dim", 0);
    p->num_heads = ir_node_attr_int(ctx->node, "num_heads", 0);
    if (p->rot < 0 || p->rot % 2)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "rotary_embedding_dim %" PRId64 " must be even and >= 0", p->rot);
    if (p->num_heads < 0)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "num_heads %" PRId64 " must be > 0",
                       p->num_heads);
    return MOPT_OK;
}

/* Geometry of a call with concrete shapes; fails on shapes that disagree. */
static mopt_status rotary_geometry(const op_ctx *ctx, const op_tensor *in, int n_in, void *geom) {
    ref_rotary *g = geom;
    const rotary_params *p = ctx->params;
    const ir_shape *x = &in[0].shape, *c = &in[1].shape, *s = &in[2].shape;
    memset(g, 0, sizeof *g);
    g->batch = x->dims[0];
    if (x->rank == 4) {
        g->heads_first = true;
        g->heads = x->dims[1], g->seq = x->dims[2], g->head = x->dims[3];
        if (p->num_heads && p->num_heads != g->heads)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "num_heads %" PRId64 " disagrees with X's head axis (%" PRId64 ")",
                           p->num_heads, g->heads);
    } else {
        if (!p->num_heads)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "a 3-D X [B, S, H*D] needs num_heads");
        if (x->dims[2] % p->num_heads)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "X's hidden size %" PRId64 " is not a multiple of num_heads %" PRId64,
                           x->dims[2], p->num_heads);
        g->heads = p->num_heads, g->seq = x->dims[1], g->head = x->dims[2] / p->num_heads;
    }
    g->rot = p->rot ? p->rot : g->head;
    g->interleaved = p->interleaved;
    if (g->rot > g->head || g->rot % 2)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "rotary_embedding_dim %" PRId64 " must be even and at most the head "
                       "size %" PRId64,
                       g->rot, g->head);
    bool has_pos = op_has_input(in, n_in, 3);
    int32_t want_rank = has_pos ? 2 : 3;
    if (c->rank != want_rank || s->rank != want_rank)
        return op_fail(ctx, MOPT_ERR_SHAPE, "cos_cache and sin_cache must be %d-D %s",
                       (int)want_rank, has_pos ? "with position_ids" : "without position_ids");
    for (int32_t a = 0; a < c->rank; a++)
        if (c->dims[a] != s->dims[a])
            return op_fail(ctx, MOPT_ERR_SHAPE, "cos_cache and sin_cache shapes differ");
    if (c->dims[c->rank - 1] != g->rot / 2)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "the caches' last dim %" PRId64 " must be rotary_embedding_dim/2 = %" PRId64,
                       c->dims[c->rank - 1], g->rot / 2);
    if (has_pos) {
        const ir_shape *ps = &in[3].shape;
        if (ps->rank != 2 || ps->dims[0] != g->batch || ps->dims[1] != g->seq)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "position_ids must be [batch, sequence] = [%" PRId64 ", %" PRId64 "]",
                           g->batch, g->seq);
        g->max_pos = c->dims[0];
    } else if (c->dims[0] != g->batch || c->dims[1] != g->seq) {
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "without position_ids the caches must be [batch, sequence, R/2] = "
                       "[%" PRId64 ", %" PRId64 ", %" PRId64 "]",
                       g->batch, g->seq, g->rot / 2);
    }
    return MOPT_OK;
}

static mopt_status rotary_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    (void)n_out;
    mopt_status st;
    for (int k = 0; k < 3; k++)
        if ((st = op_expect_f32(ctx, &in[k], k))) return st;
    if (op_has_input(in, n_in, 3) && (st = op_expect_i64(ctx, &in[3], 3))) return st;
    const ir_shape *x = &in[0].shape;
    if (x->rank >= 0 && x->rank != 3 && x->rank != 4)
        return op_fail(ctx, MOPT_ERR_SHAPE, "X must be 3-D or 4-D (rank %d)", (int)x->rank);
    out[0].dtype = in[0].dtype;
    out[0].shape = *x;
    bool concrete = x->rank >= 0 && ir_shape_is_concrete(x);
    for (int k = 1; k < n_in && concrete; k++)
        if (op_has_input(in, n_in, k))
            concrete = in[k].shape.rank >= 0 && ir_shape_is_concrete(&in[k].shape);
    if (!concrete) return MOPT_OK;
    ref_rotary g;
    return rotary_geometry(ctx, in, n_in, &g);
}

static mopt_status rotary_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    (void)n_out;
    const ref_rotary *g = ctx->geom; /* rotary_geometry's */
    const int64_t *pos = op_has_input(in, n_in, 3) ? in[3].data : NULL;
    int64_t bad = ref_rotary_embedding(g, in[0].data, in[1].data, in[2].data, pos, out[0].data);
    if (bad >= 0)
        return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT,
                       "position_ids[%" PRId64 "] = %" PRId64 " is outside the caches' %" PRId64
                       " rows",
                       bad, pos[bad], g->max_pos);
    return MOPT_OK;
}

static int64_t rotary_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                            int n_out) {
    (void)ctx, (void)n_in, (void)n_out, (void)out;
    return 3 * op_numel(&in[0]);
}

static const op_def k_ops[] = {
    {"RotaryEmbedding", "", 3, 4, 1, 1, rotary_infer, rotary_run, NULL,
     OP_PARAMS(rotary_params, rotary_parse), OP_GEOM(ref_rotary, rotary_geometry),
     .flops = rotary_flops, .bridge = &ops_bridge_float},
};

OP_FAMILY(rotary, k_ops)
