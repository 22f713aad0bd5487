/*
 * flex_attention.c — the "flex_attention" op family: FlexAttention of ONNX's
 * ai.onnx.preview domain. Y = softmax(score_mod(scale Q K^T)) -> prob_mod,
 * times V, with grouped K/V heads (Hq a multiple of Hkv). score_mod and
 * prob_mod are subgraphs of one input (the [B, Hq, L, S] scores or
 * probabilities) and one output of the same shape, run through the
 * op_subgraphs service (ops.h) like If's branches; outer-scope values they
 * read arrive as the node's captured inputs. f32 natively, f16/bf16/f64
 * through the float bridge (so the softmax runs in f32, as the reference
 * does for f16; softmax_precision other than f32 is UNSUPPORTED). Math in
 * kernels/ref/flex_attention.c.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "ir/ir_subgraph.h"
#include "kernels/ref/ref_flex_attention.h"
#include "ops/bridge.h"
#include "ops/op_common.h"
#include "ops/ops.h"

typedef struct flex_params {
    bool has_scale;
    double scale;
    ir_graph *mod[2]; /* score_mod, prob_mod (NULL when absent) */
    int32_t n_caps;
} flex_params;

static const char *const k_mod_names[2] = {"score_mod", "prob_mod"};

static mopt_status flex_parse(const op_ctx *ctx, void *params) {
    flex_params *p = params;
    const ir_node *n = ctx->node;
    mopt_status st = op_formal_inputs(ctx, 3, "Q, K, V", &p->n_caps);
    if (st) return st;
    const ir_attr *sc = ir_node_attr(n, "scale");
    p->has_scale = sc != NULL;
    p->scale = ir_node_attr_float(n, "scale", 1.0f);
    int64_t prec = ir_node_attr_int(n, "softmax_precision", MOPT_DTYPE_F32);
    if (prec != MOPT_DTYPE_F32)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "softmax_precision %" PRId64 " is not supported",
                       prec);
    for (int m = 0; m < 2; m++) {
        const ir_attr *a = ir_node_attr(n, k_mod_names[m]);
        p->mod[m] = NULL;
        if (!a) continue;
        if (a->type != IR_ATTR_GRAPH || !a->g)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "attribute '%s' must be a graph",
                           k_mod_names[m]);
        if (a->g->n_inputs - p->n_caps != 1 || a->g->n_outputs != 1)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                           "%s must have 1 input and 1 output (it has %d and %d)", k_mod_names[m],
                           (int)(a->g->n_inputs - p->n_caps), (int)a->g->n_outputs);
        p->mod[m] = a->g;
    }
    return MOPT_OK;
}

static mopt_status flex_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    mopt_status st = op_require_inputs(ctx, in, 3);
    if (st) return st;
    for (int k = 0; k < 3; k++) {
        if ((st = op_expect_f32(ctx, &in[k], k))) return st;
        if (in[k].shape.rank >= 0 && in[k].shape.rank != 4)
            return op_fail(ctx, MOPT_ERR_SHAPE, "input %d must have rank 4, not %d", k,
                           (int)in[k].shape.rank);
    }
    const ir_shape *q = &in[0].shape, *k = &in[1].shape, *v = &in[2].shape;
    out[0].dtype = MOPT_DTYPE_F32;
    if (q->rank < 0 || v->rank < 0) {
        out[0].shape.rank = -1;
        return MOPT_OK;
    }
    if (ir_shape_is_concrete(q) && ir_shape_is_concrete(k) && ir_shape_is_concrete(v)) {
        if (k->dims[3] != q->dims[3] || k->dims[1] != v->dims[1] || k->dims[2] != v->dims[2] ||
            k->dims[0] != q->dims[0] || v->dims[0] != q->dims[0])
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "Q, K and V must agree (batch, the embedding of Q and K, the heads and "
                           "sequence of K and V)");
        if (k->dims[1] <= 0 || q->dims[1] % k->dims[1] != 0)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "Q's %" PRId64 " heads are not a multiple of K's %" PRId64, q->dims[1],
                           k->dims[1]);
    }
    out[0].shape = *q;
    out[0].shape.dims[3] = v->dims[3];
    out[0].shape.syms[3] = v->syms[3];
    return MOPT_OK;
}

/* Runs mod on x (the [B, Hq, L, S] scores or probabilities) with the
 * node's captures; the result replaces x's values. */
static mopt_status run_mod(const op_ctx *ctx, int m, op_tensor *x, const op_tensor *caps,
                           int n_caps) {
    const flex_params *p = ctx->params;
    const op_subgraphs *s = ctx->subgraphs;
    if (!s || !s->fn->run)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "its %s subgraph cannot be run here",
                       k_mod_names[m]);
    op_tensor sin[OP_MAX_IO], res;
    sin[0] = *x;
    for (int c = 0; c < n_caps && c + 1 < OP_MAX_IO; c++)
        sin[c + 1] = caps[c];
    memset(&res, 0, sizeof res);
    mopt_status st = s->fn->run(s->self, ctx, p->mod[m], sin, n_caps + 1, &res, 1);
    if (st) return st;
    bool same = res.dtype == MOPT_DTYPE_F32 && res.shape.rank == 4;
    for (int a = 0; same && a < 4; a++)
        same = res.shape.dims[a] == x->shape.dims[a];
    if (!same) {
        char a[IR_SHAPE_STR_CAP], b[IR_SHAPE_STR_CAP];
        st = op_fail(ctx, MOPT_ERR_SHAPE, "%s must give f32 %s (its input), gave %s %s",
                     k_mod_names[m], op_shape_str(ctx, &x->shape, a), mopt_dtype_name(res.dtype),
                     op_shape_str(ctx, &res.shape, b));
    } else
        memcpy(x->data, res.data, (size_t)op_numel(x) * sizeof(float));
    mopt_aligned_free(res.data);
    return st;
}

/* The op's geometry (OP_GEOM): the sizes of a run and its scale. */
typedef struct flex_geom {
    ref_flex_dims d;
    double scale;
} flex_geom;

static mopt_status flex_geometry(const op_ctx *ctx, const op_tensor *in, int n_in, void *geom) {
    (void)n_in;
    const flex_params *p = ctx->params;
    const ir_shape *q = &in[0].shape, *k = &in[1].shape, *v = &in[2].shape;
    flex_geom *g = geom;
    g->d = (ref_flex_dims){q->dims[0], q->dims[1], k->dims[1], q->dims[2],
                           k->dims[2], q->dims[3], v->dims[3]};
    g->scale = p->has_scale ? p->scale : 1.0 / sqrt((double)g->d.E);
    return MOPT_OK;
}

static mopt_status flex_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    const flex_params *p = ctx->params;
    const flex_geom *g = ctx->geom; /* flex_geometry's */
    const ref_flex_dims d = g->d;
    const double scale = g->scale;
    op_tensor sc = {.dtype = MOPT_DTYPE_F32};
    sc.shape.rank = 4;
    int64_t sd[4] = {d.B, d.Hq, d.L, d.S};
    for (int a = 0; a < 4; a++)
        sc.shape.dims[a] = sd[a], sc.shape.syms[a] = 0;
    int64_t n = d.B * d.Hq * d.L * d.S;
    sc.data = mopt_aligned_alloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!sc.data) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the scores");
    ref_flex_scores(&d, in[0].data, in[1].data, scale, sc.data);
    mopt_status st = MOPT_OK;
    if (p->mod[0]) st = run_mod(ctx, 0, &sc, in + 3, p->n_caps);
    if (!st) {
        ref_flex_softmax(sc.data, d.B * d.Hq * d.L, d.S);
        if (p->mod[1]) st = run_mod(ctx, 1, &sc, in + 3, p->n_caps);
    }
    if (!st) ref_flex_output(&d, sc.data, in[2].data, out[0].data);
    mopt_aligned_free(sc.data);
    return st;
}

static const op_def k_ops[] = {
    {"FlexAttention", "ai.onnx.preview", 3, OP_MAX_IO, 1, 1, flex_infer, flex_run, NULL,
     OP_PARAMS(flex_params, flex_parse), OP_GEOM(flex_geom, flex_geometry),
     .bridge = &ops_bridge_float},
};

OP_FAMILY(flex_attention, k_ops)
