/*
 * attention_onnx.c — the ONNX Attention operator (opset 23, 24:
 * nonpad_kv_seqlen; the sliding-window attributes of later opsets too):
 * inputs Q, K, V [, attn_mask, past_key, past_value, nonpad_kv_seqlen],
 * outputs Y [, present_key, present_value, qk_matmul_output]. Q/K/V are 4-D
 * [B, H, S, D] or 3-D [B, S, H*D] (then q_num_heads/kv_num_heads say H).
 * float32 (f16/bf16 through the dtype bridge). Not the fused mopt.Attention
 * (attention.c); the math is in kernels/ref/attention_onnx.c.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/ref/ref_attention_onnx.h"
#include "ops/bridge.h"
#include "ops/op_common.h"
#include "ops/ops.h"

typedef struct attn_params {
    bool has_q_num_heads;              /* given at all (must not be for 4-D inputs from opset 25) */
    int64_t q_num_heads, kv_num_heads; /* 3-D inputs; 0 when absent */
    bool has_scale;
    float scale, softcap;
    bool causal;
    int64_t left_window, right_window;
    int mode; /* qk_matmul_output_mode, 0..3 */
} attn_params;

static mopt_status attn_parse(const op_ctx *ctx, void *params) {
    attn_params *p = params;
    int64_t mode = ir_node_attr_int(ctx->node, "qk_matmul_output_mode", 0);
    if (mode < 0 || mode > 3)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "qk_matmul_output_mode %" PRId64 " not in 0..3",
                       mode);
    p->mode = (int)mode;
    p->has_q_num_heads = ir_node_attr(ctx->node, "q_num_heads") != NULL;
    p->q_num_heads = ir_node_attr_int(ctx->node, "q_num_heads", 0);
    p->kv_num_heads = ir_node_attr_int(ctx->node, "kv_num_heads", 0);
    const ir_attr *sa = ir_node_attr(ctx->node, "scale");
    p->has_scale = sa != NULL;
    p->scale = sa ? sa->f : 0.0f;
    p->softcap = ir_node_attr_float(ctx->node, "softcap", 0.0f);
    p->causal = ir_node_attr_int(ctx->node, "is_causal", 0) != 0;
    p->left_window = ir_node_attr_int(ctx->node, "left_window_size", -1);
    p->right_window = ir_node_attr_int(ctx->node, "right_window_size", -1);
    return MOPT_OK;
}

typedef struct attn_dims {
    int64_t b, hq, hk, sq, skv, past, d, dv;
    bool q3, kv3;
} attn_dims;

/* Reads the geometry; returns 1 when some dim is unknown (load time). */
static int attn_geometry(const op_ctx *ctx, const op_tensor *in, int n_in, attn_dims *g,
                         mopt_status *st) {
    *st = MOPT_OK;
    const attn_params *p = ctx->params;
    const ir_shape *q = &in[0].shape, *k = &in[1].shape, *v = &in[2].shape;
    if (q->rank < 0 || k->rank < 0 || v->rank < 0) return 1;
    if ((q->rank != 3 && q->rank != 4) || k->rank != q->rank || v->rank != q->rank) {
        *st = op_fail(ctx, MOPT_ERR_SHAPE, "Q, K and V must all be 3-D or all 4-D (ranks %d %d %d)",
                      (int)q->rank, (int)k->rank, (int)v->rank);
        return 0;
    }
    if (!ir_shape_is_concrete(q) || !ir_shape_is_concrete(k) || !ir_shape_is_concrete(v)) return 1;
    memset(g, 0, sizeof *g);
    g->b = q->dims[0];
    if (q->rank == 4) {
        if (p->has_q_num_heads && ctx->opset >= 25) {
            *st = op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                          "q_num_heads/kv_num_heads must not be set for 4-D inputs");
            return 0;
        }
        g->hq = q->dims[1], g->sq = q->dims[2], g->d = q->dims[3];
        g->hk = k->dims[1], g->skv = k->dims[2];
        g->dv = v->dims[3];
        if (k->dims[3] != g->d || v->dims[1] != g->hk || v->dims[2] != g->skv ||
            k->dims[0] != g->b || v->dims[0] != g->b) {
            *st = op_fail(ctx, MOPT_ERR_SHAPE, "Q, K, V shapes do not agree");
            return 0;
        }
    } else {
        g->q3 = g->kv3 = true;
        g->hq = p->q_num_heads;
        g->hk = p->kv_num_heads;
        if (g->hq <= 0 || g->hk <= 0 || q->dims[2] % g->hq || k->dims[2] % g->hk ||
            v->dims[2] % g->hk) {
            *st = op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                          "3-D inputs need q_num_heads and kv_num_heads dividing the hidden sizes "
                          "(%" PRId64 ", %" PRId64 ")",
                          g->hq, g->hk);
            return 0;
        }
        g->sq = q->dims[1], g->d = q->dims[2] / g->hq;
        g->skv = k->dims[1];
        g->dv = v->dims[2] / g->hk;
        if (k->dims[2] / g->hk != g->d || v->dims[1] != g->skv || k->dims[0] != g->b ||
            v->dims[0] != g->b) {
            *st = op_fail(ctx, MOPT_ERR_SHAPE, "Q, K, V shapes do not agree");
            return 0;
        }
    }
    if (g->hk <= 0 || g->hq % g->hk) {
        *st = op_fail(ctx, MOPT_ERR_SHAPE,
                      "q heads (%" PRId64 ") must be a multiple of kv heads (%" PRId64 ")", g->hq,
                      g->hk);
        return 0;
    }
    if (op_has_input(in, n_in, 4) != op_has_input(in, n_in, 5)) {
        *st = op_fail(ctx, MOPT_ERR_INVALID_MODEL, "past_key and past_value go together");
        return 0;
    }
    if (op_has_input(in, n_in, 4)) {
        const ir_shape *pk = &in[4].shape, *pv = &in[5].shape;
        if (pk->rank < 0 || pv->rank < 0 || !ir_shape_is_concrete(pk) || !ir_shape_is_concrete(pv))
            return 1;
        if (pk->rank != 4 || pv->rank != 4 || pk->dims[0] != g->b || pk->dims[1] != g->hk ||
            pk->dims[3] != g->d || pv->dims[0] != g->b || pv->dims[1] != g->hk ||
            pv->dims[2] != pk->dims[2] || pv->dims[3] != g->dv) {
            *st = op_fail(ctx, MOPT_ERR_SHAPE, "past_key/past_value shapes do not fit K/V");
            return 0;
        }
        g->past = pk->dims[2];
    }
    return 0;
}

static mopt_status attn_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    static const mopt_dtype k_mask[] = {MOPT_DTYPE_F32, MOPT_DTYPE_BOOL};
    mopt_status st;
    for (int k = 0; k < 3; k++)
        if ((st = op_expect_f32(ctx, &in[k], k))) return st;
    if (op_has_input(in, n_in, 3) && (st = op_expect_dtype(ctx, &in[3], 3, k_mask, 2))) return st;
    for (int k = 4; k < 6; k++)
        if (op_has_input(in, n_in, k) && (st = op_expect_f32(ctx, &in[k], k))) return st;
    if (op_has_input(in, n_in, 6) && (st = op_expect_i64(ctx, &in[6], 6))) return st;
    attn_dims g;
    int unknown = attn_geometry(ctx, in, n_in, &g, &st);
    if (st) return st;
    for (int k = 0; k < n_out; k++) {
        out[k].dtype = k == 1 || k == 2 ? in[1].dtype : in[0].dtype;
        ir_shape_set_unknown(&out[k].shape);
    }
    if (unknown) return MOPT_OK;
    int64_t total = g.past + g.skv;
    if (op_has_input(in, n_in, 3)) {
        const ir_shape *m = &in[3].shape;
        if (m->rank > 4 || m->rank < 1)
            return op_fail(ctx, MOPT_ERR_SHAPE, "attn_mask must have rank 1 to 4");
        if (ir_shape_is_concrete(m)) {
            const int64_t want[4] = {g.b, g.hq, g.sq, total};
            for (int32_t a = 0; a < m->rank; a++) {
                int32_t ax = 4 - m->rank + a;
                int64_t d = m->dims[a];
                if (ax == 3 ? d > total : (d != 1 && d != want[ax]))
                    return op_fail(ctx, MOPT_ERR_SHAPE,
                                   "attn_mask dim %d (%" PRId64 ") does not broadcast to "
                                   "[%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]",
                                   (int)a, d, want[0], want[1], want[2], want[3]);
            }
        }
    }
    int64_t ydims[4] = {g.b, g.hq, g.sq, g.dv};
    if (g.q3) {
        ydims[1] = g.sq;
        ydims[2] = g.hq * g.dv;
    }
    ir_shape_set(&out[0].shape, g.q3 ? 3 : 4, ydims);
    if (n_out > 1) ir_shape_set(&out[1].shape, 4, (int64_t[]){g.b, g.hk, total, g.d});
    if (n_out > 2) ir_shape_set(&out[2].shape, 4, (int64_t[]){g.b, g.hk, total, g.dv});
    if (n_out > 3) ir_shape_set(&out[3].shape, 4, (int64_t[]){g.b, g.hq, g.sq, total});
    return MOPT_OK;
}

/* The op's geometry (OP_GEOM): the kernel's parameter block of a run. */
static mopt_status attn_run_geometry(const op_ctx *ctx, const op_tensor *in, int n_in, void *geom) {
    attn_dims g;
    mopt_status st;
    if (attn_geometry(ctx, in, n_in, &g, &st) || st)
        return st ? st : op_fail(ctx, MOPT_ERR_INTERNAL, "shapes unknown at run time");
    ref_onnx_attn *pp = geom, p;
    memset(&p, 0, sizeof p);
    p.batch = g.b, p.q_heads = g.hq, p.kv_heads = g.hk;
    p.q_len = g.sq, p.kv_new = g.skv, p.past = g.past;
    p.head = g.d, p.v_head = g.dv;
    p.q_3d = g.q3, p.kv_3d = g.kv3;
    const attn_params *at = ctx->params;
    double scale = at->has_scale ? (double)at->scale : 1.0 / sqrt((double)g.d);
    p.scale_sqrt = (float)sqrt(scale);
    p.softcap = at->softcap;
    p.causal = at->causal;
    p.left_window = at->left_window;
    p.right_window = at->right_window;
    p.mode = at->mode;
    int64_t total = g.past + g.skv;
    if (op_has_input(in, n_in, 3)) {
        const ir_shape *m = &in[3].shape;
        int64_t md[4] = {1, 1, 1, 1};
        for (int32_t a = 0; a < m->rank; a++)
            md[4 - m->rank + a] = m->dims[a];
        int64_t stride = 1;
        for (int a = 3; a >= 0; a--) {
            p.mask_strides[a] = md[a] == 1 && a != 3 ? 0 : stride;
            stride *= md[a];
        }
        p.mask_len = md[3];
        if (md[3] == 1 && total > 1) p.mask_strides[3] = 0, p.mask_len = total;
        p.mask = in[3].data;
        p.mask_bool = in[3].dtype == MOPT_DTYPE_BOOL;
    }
    if (op_has_input(in, n_in, 6)) {
        if (op_numel(&in[6]) != g.b)
            return op_fail(ctx, MOPT_ERR_SHAPE, "nonpad_kv_seqlen must have %" PRId64 " values",
                           g.b);
        p.nonpad = in[6].data;
    }
    *pp = p;
    return MOPT_OK;
}

static mopt_status attn_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    const ref_onnx_attn *p = ctx->geom; /* attn_run_geometry's */
    int64_t total = p->past + p->kv_new;
    size_t nk = (size_t)(p->batch * p->kv_heads * total * p->head),
           nv = (size_t)(p->batch * p->kv_heads * total * p->v_head);
    float *pk = n_out > 1 ? out[1].data : op_work_get(ctx, 0, nk * sizeof(float));
    float *pv = n_out > 2 ? out[2].data : op_work_get(ctx, 1, nv * sizeof(float));
    double *scratch = op_work_get(ctx, 2, (size_t)(total > 0 ? total : 1) * 3 * sizeof(double));
    mopt_status st = MOPT_OK;
    if (!pk || !pv || !scratch)
        st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for attention scratch");
    else
        ref_onnx_attention(p, in[0].data, in[1].data, in[2].data,
                           op_has_input(in, n_in, 4) ? in[4].data : NULL,
                           op_has_input(in, n_in, 5) ? in[5].data : NULL, out[0].data, pk, pv,
                           n_out > 3 ? out[3].data : NULL, scratch);
    if (n_out <= 1) op_work_put(ctx, pk);
    if (n_out <= 2) op_work_put(ctx, pv);
    op_work_put(ctx, scratch);
    return st;
}

static const op_def k_ops[] = {
    {"Attention", "", 3, 7, 1, 4, attn_infer, attn_run, NULL, OP_PARAMS(attn_params, attn_parse),
     OP_GEOM(ref_onnx_attn, attn_run_geometry), .bridge = &ops_bridge_float},
};

OP_FAMILY(attention_onnx, k_ops)
