/*
 * state_space.c — the stateful sequence mixers of recurrent LLM blocks
 * (Gated DeltaNet, Mamba), opset 27:
 *   LinearAttention      query/key/value [B, T, H*D] (q_num_heads,
 *                        kv_num_heads), optional past_state
 *                        [B, Hkv, dk, dv], decay, beta; update_rule linear,
 *                        gated, delta or gated_delta; outputs [B, T, Hq*dv]
 *                        and present_state.
 *   CausalConvWithState  depthwise causal 1-D convolution of [B, C, L] with
 *                        weight [C, 1, k], optional bias and past_state
 *                        [B, C, k-1]; activation none, silu or swish;
 *                        outputs [B, C, L] and present_state [B, C, k-1].
 * f32 (f16/bf16 through the dtype bridge); math in kernels/ref/state_space.c.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/ref/ref_state_space.h"
#include "ops/bridge.h"
#include "ops/op_common.h"
#include "ops/ops.h"

/* True when every given input among in[0..n_in) has a concrete shape. */
static bool all_concrete(const op_tensor *in, int n_in) {
    for (int k = 0; k < n_in; k++)
        if (op_has_input(in, n_in, k) &&
            (in[k].shape.rank < 0 || !ir_shape_is_concrete(&in[k].shape)))
            return false;
    return true;
}

/* ---- LinearAttention --------------------------------------------------------------------- */

typedef struct linattn_params {
    int64_t q_heads, kv_heads;
    float scale; /* 0: 1/sqrt(dk) */
    bool gated, delta;
} linattn_params;

static mopt_status linattn_parse(const op_ctx *ctx, void *params) {
    linattn_params *p = params;
    p->q_heads = ir_node_attr_int(ctx->node, "q_num_heads", 0);
    p->kv_heads = ir_node_attr_int(ctx->node, "kv_num_heads", 0);
    if (p->q_heads <= 0 || p->kv_heads <= 0 || p->q_heads % p->kv_heads)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "q_num_heads (%" PRId64 ") must be a positive multiple of kv_num_heads "
                       "(%" PRId64 "), both required",
                       p->q_heads, p->kv_heads);
    p->scale = ir_node_attr_float(ctx->node, "scale", 0.0f);
    const char *rule = ir_node_attr_string(ctx->node, "update_rule", "gated_delta");
    if (strcmp(rule, "linear") == 0)
        p->gated = false, p->delta = false;
    else if (strcmp(rule, "gated") == 0)
        p->gated = true, p->delta = false;
    else if (strcmp(rule, "delta") == 0)
        p->gated = false, p->delta = true;
    else if (strcmp(rule, "gated_delta") == 0)
        p->gated = true, p->delta = true;
    else
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "update_rule '%s' is not linear, gated, delta or gated_delta", rule);
    return MOPT_OK;
}

/* Geometry of a call with concrete shapes. */
static mopt_status linattn_geometry(const op_ctx *ctx, const op_tensor *in, int n_in, void *geom) {
    ref_linear_attn *g = geom;
    const linattn_params *p = ctx->params;
    const ir_shape *q = &in[0].shape, *k = &in[1].shape, *v = &in[2].shape;
    memset(g, 0, sizeof *g);
    g->q_heads = p->q_heads, g->kv_heads = p->kv_heads;
    g->batch = q->dims[0], g->len = q->dims[1];
    if (q->dims[2] % p->q_heads || k->dims[2] % p->kv_heads || v->dims[2] % p->kv_heads)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "hidden sizes (%" PRId64 ", %" PRId64 ", %" PRId64 ") are not multiples of "
                       "the head counts",
                       q->dims[2], k->dims[2], v->dims[2]);
    g->dk = q->dims[2] / p->q_heads, g->dv = v->dims[2] / p->kv_heads;
    for (int i = 1; i < 3; i++)
        if (in[i].shape.dims[0] != g->batch || in[i].shape.dims[1] != g->len)
            return op_fail(ctx, MOPT_ERR_SHAPE, "query, key and value must share [B, T]");
    if (k->dims[2] / p->kv_heads != g->dk)
        return op_fail(ctx, MOPT_ERR_SHAPE, "query and key head sizes differ");
    if (op_has_input(in, n_in, 3)) {
        const ir_shape *s = &in[3].shape;
        if (s->rank != 4 || s->dims[0] != g->batch || s->dims[1] != g->kv_heads ||
            s->dims[2] != g->dk || s->dims[3] != g->dv)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "past_state must be [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
                           "]",
                           g->batch, g->kv_heads, g->dk, g->dv);
    }
    g->gated = p->gated, g->delta = p->delta;
    if (p->gated) {
        const ir_shape *d = &in[4].shape;
        int64_t last = d->dims[2];
        if (d->rank != 3 || d->dims[0] != g->batch || d->dims[1] != g->len ||
            (last != g->kv_heads && last != g->kv_heads * g->dk))
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "decay must be [B, T, kv_num_heads] or [B, T, kv_num_heads*d_k]");
        g->decay_per_key = last == g->kv_heads * g->dk && last != g->kv_heads;
    }
    if (p->delta) {
        const ir_shape *b = &in[5].shape;
        if (b->rank != 3 || b->dims[0] != g->batch || b->dims[1] != g->len ||
            (b->dims[2] != g->kv_heads && b->dims[2] != 1))
            return op_fail(ctx, MOPT_ERR_SHAPE, "beta must be [B, T, kv_num_heads] or [B, T, 1]");
        g->beta_shared = b->dims[2] == 1 && g->kv_heads != 1;
    }
    g->scale = p->scale != 0.0f ? p->scale : (float)(1.0 / sqrt((double)g->dk));
    return MOPT_OK;
}

static mopt_status linattn_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    const linattn_params *p = ctx->params;
    mopt_status st;
    for (int k = 0; k < n_in; k++)
        if ((k < 3 || op_has_input(in, n_in, k)) && (st = op_expect_f32(ctx, &in[k], k))) return st;
    if (op_wired(ctx, 4) != p->gated)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "this update_rule %s the decay input",
                       p->gated ? "requires" : "forbids");
    if (op_wired(ctx, 5) != p->delta)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "this update_rule %s the beta input",
                       p->delta ? "requires" : "forbids");
    for (int k = 0; k < n_in; k++)
        if (op_has_input(in, n_in, k) && in[k].shape.rank >= 0 &&
            in[k].shape.rank != (k == 3 ? 4 : 3))
            return op_fail(ctx, MOPT_ERR_SHAPE, "input %d must be %d-D (rank %d)", k,
                           k == 3 ? 4 : 3, (int)in[k].shape.rank);
    out[0].dtype = in[0].dtype;
    ir_shape_set_unknown(&out[0].shape);
    if (n_out > 1) {
        out[1].dtype = op_has_input(in, n_in, 3) ? in[3].dtype : in[0].dtype;
        ir_shape_set_unknown(&out[1].shape);
    }
    if (!all_concrete(in, n_in)) return MOPT_OK;
    ref_linear_attn g;
    if ((st = linattn_geometry(ctx, in, n_in, &g))) return st;
    ir_shape_set(&out[0].shape, 3, (int64_t[]){g.batch, g.len, g.q_heads * g.dv});
    if (n_out > 1) ir_shape_set(&out[1].shape, 4, (int64_t[]){g.batch, g.kv_heads, g.dk, g.dv});
    return MOPT_OK;
}

static mopt_status linattn_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    const ref_linear_attn *g = ctx->geom; /* linattn_geometry's */
    size_t ns = (size_t)(g->batch * g->kv_heads * g->dk * g->dv);
    float *state = n_out > 1 ? out[1].data : op_work_get(ctx, 0, ns * sizeof(float));
    double *scratch = op_work_get(ctx, 1, (size_t)(g->dv > 0 ? g->dv : 1) * sizeof(double));
    if (!state || !scratch) {
        if (n_out <= 1) op_work_put(ctx, state);
        op_work_put(ctx, scratch);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the recurrent state");
    }
    if (op_has_input(in, n_in, 3))
        memcpy(state, in[3].data, ns * sizeof(float));
    else if (ns)
        memset(state, 0, ns * sizeof(float));
    ref_linear_attention(g, in[0].data, in[1].data, in[2].data, g->gated ? in[4].data : NULL,
                         g->delta ? in[5].data : NULL, state, out[0].data, scratch);
    if (n_out <= 1) op_work_put(ctx, state);
    op_work_put(ctx, scratch);
    return MOPT_OK;
}

static int64_t linattn_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                             int n_out) {
    (void)n_out;
    const linattn_params *p = ctx->params;
    (void)n_in;
    /* per token and KV head: update 2*dk*dv (4*dk*dv with delta), read 2*dk*dv per q head */
    int64_t bt = in[0].shape.dims[0] * in[0].shape.dims[1];
    int64_t dk = in[0].shape.dims[2] / p->q_heads, dv = out[0].shape.dims[2] / p->q_heads;
    int64_t per = (p->delta ? 4 : 2) * dk * dv * p->kv_heads + 2 * dk * dv * p->q_heads;
    return bt * per;
}

/* ---- CausalConvWithState ----------------------------------------------------------------- */

typedef struct ccs_params {
    bool silu;
} ccs_params;

static mopt_status ccs_parse(const op_ctx *ctx, void *params) {
    ccs_params *p = params;
    const char *act = ir_node_attr_string(ctx->node, "activation", "none");
    if (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0)
        p->silu = true;
    else if (strcmp(act, "none") != 0)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "activation '%s' is not none, silu or swish",
                       act);
    return MOPT_OK;
}

/* Checks concrete shapes; sets *k (the geometry: an int64_t) to the kernel size. */
static mopt_status ccs_geometry(const op_ctx *ctx, const op_tensor *in, int n_in, void *geom) {
    int64_t *k = geom;
    const ir_shape *x = &in[0].shape, *w = &in[1].shape;
    if (w->dims[0] != x->dims[1] || w->dims[1] != 1 || w->dims[2] < 1)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "weight must be [channels, 1, k >= 1] with channels = %" PRId64, x->dims[1]);
    *k = w->dims[2];
    if (op_has_input(in, n_in, 2) && (in[2].shape.rank != 1 || in[2].shape.dims[0] != x->dims[1]))
        return op_fail(ctx, MOPT_ERR_SHAPE, "bias must be [%" PRId64 "]", x->dims[1]);
    if (op_has_input(in, n_in, 3)) {
        const ir_shape *s = &in[3].shape;
        if (s->rank != 3 || s->dims[0] != x->dims[0] || s->dims[1] != x->dims[1] ||
            s->dims[2] != *k - 1)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "past_state must be [%" PRId64 ", %" PRId64 ", %" PRId64 "]", x->dims[0],
                           x->dims[1], *k - 1);
    }
    return MOPT_OK;
}

static mopt_status ccs_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    mopt_status st;
    for (int k = 0; k < n_in; k++)
        if ((k < 2 || op_has_input(in, n_in, k)) && (st = op_expect_f32(ctx, &in[k], k))) return st;
    static const int32_t k_rank[4] = {3, 3, 1, 3};
    for (int k = 0; k < n_in && k < 4; k++)
        if (op_has_input(in, n_in, k) && in[k].shape.rank >= 0 && in[k].shape.rank != k_rank[k])
            return op_fail(ctx, MOPT_ERR_SHAPE, "input %d must be %d-D (rank %d)", k,
                           (int)k_rank[k], (int)in[k].shape.rank);
    op_set_outputs(out, n_out, in[0].dtype, &in[0].shape);
    if (n_out > 1) ir_shape_set_unknown(&out[1].shape);
    if (!all_concrete(in, n_in)) return MOPT_OK;
    int64_t k = 0;
    if ((st = ccs_geometry(ctx, in, n_in, &k))) return st;
    const ir_shape *x = &in[0].shape;
    if (n_out > 1) ir_shape_set(&out[1].shape, 3, (int64_t[]){x->dims[0], x->dims[1], k - 1});
    return MOPT_OK;
}

static mopt_status ccs_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    const ccs_params *p = ctx->params;
    const int64_t k = *(const int64_t *)ctx->geom; /* ccs_geometry's */
    const ir_shape *x = &in[0].shape;
    size_t np = (size_t)(x->dims[0] * x->dims[1] * (k - 1));
    float *present = n_out > 1 ? out[1].data : op_work_get(ctx, 0, np * sizeof(float));
    if (!present) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for present_state");
    ref_causal_conv_state(x->dims[0], x->dims[1], x->dims[2], k, in[0].data, in[1].data,
                          op_has_input(in, n_in, 2) ? in[2].data : NULL,
                          op_has_input(in, n_in, 3) ? in[3].data : NULL, p->silu, out[0].data,
                          present);
    if (n_out <= 1) op_work_put(ctx, present);
    return MOPT_OK;
}

static int64_t ccs_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                         int n_out) {
    (void)ctx, (void)n_in, (void)out, (void)n_out;
    return 2 * op_numel(&in[0]) * in[1].shape.dims[2];
}

static const op_def k_ops[] = {
    {"LinearAttention", "", 3, 6, 1, 2, linattn_infer, linattn_run, NULL,
     OP_PARAMS(linattn_params, linattn_parse), OP_GEOM(ref_linear_attn, linattn_geometry),
     .flops = linattn_flops, .bridge = &ops_bridge_float},
    {"CausalConvWithState", "", 2, 4, 1, 2, ccs_infer, ccs_run, NULL,
     OP_PARAMS(ccs_params, ccs_parse), OP_GEOM(int64_t, ccs_geometry), .flops = ccs_flops,
     .bridge = &ops_bridge_float},
};

OP_FAMILY(state_space, k_ops)
