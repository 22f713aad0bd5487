/*
 * kvcache.c — the "kvcache" operator family (domain "mopt"), made by the
 * kv_cache pass (lib/passes/pass_kv_cache.c, docs/fused_ops.md) for
 * decoders exported with past_key_values: the cache is kept token-major,
 * [batch, seq, heads, head_dim], so that it grows at its end.
 *   mopt.KVAppend    present = Concat(past, new) on axis 1. When the
 *                    caller bound present to the buffer past is read from
 *                    (the generator does), the past rows are already in
 *                    place and only the new rows are written.
 *   mopt.CacheMatMul Y[b, h] = alpha * A[b, h] @ op(C[b, :, h, :]): the
 *                    attention products read per head straight from the
 *                    token-major cache (row stride heads * head_dim), with
 *                    no transpose and no copy. transB = 1: op(C) = C^T
 *                    (scores, Y [b, h, m, seq]); transB = 0: op(C) = C
 *                    (context, Y [b, h, m, head_dim]).
 *                  When present is a cache the caller keeps as bf16 tiles
 *                  (op_kv_tiles, the generator's kv_cache_dtype=bf16), the
 *                  new rows are rounded to bf16 into their tiles instead.
 * Both are exact rewrites of what they replace (the same products, the same
 * bytes), run by the batched GEMM of kernels.h (ref_gemm_batched_f32, the
 * one walk over a strided batch).
 *   mopt.DecodeAttention  Y [b, h, m, dv] = softmax(mask(scale * Q Kc^T)) Vc
 *                    for Q [b, h, m, d] and the two token-major caches Kc
 *                    [b, t, h, d], Vc [b, t, h, dv] (the kv_cache pass fuses
 *                    CacheMatMul(transB) -> [Mul] -> [Where | Add] ->
 *                    Softmax -> CacheMatMul into it). Input 3, optional: a
 *                    bool mask, Where(mask, s, fill) (attribute fill), or an
 *                    f32 one added to the scores; it broadcasts to [b, h, m,
 *                    t]. Or, a decoder's causal mask folded by the pass
 *                    (kv_cache=1): input 4, i64 query positions [b, m]
 *                    (key t hidden when t > position), and input 5,
 *                    optional, an i64 key mask [b, t] (0 hides, as the
 *                    attention_mask of an export "with past"); hidden keys
 *                    score fill. Attribute scale. kn_decode_attn (kernels.h) is the
 *                    problem; the reference is ref_decode_attention_f32, the
 *                    cpu impls one pass over the caches per row with an
 *                    online softmax (kernels/cpu/decode_attn-impl.h).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/half.h"
#include "kernels/ref/ref_attention.h"
#include "kernels/ref/ref_matmul.h"
#include "ops/impls.h"
#include "ops/kvcache.h"
#include "ops/matmul.h"
#include "ops/op_common.h"
#include "ops/ops.h"

/* The start of KVAppend's and CacheMatMul's inference: inputs 0 and 1 are
 * f32 of rank 4 or of an unknown rank (else fails with the format what,
 * given both shapes). Output 0 is f32 of shape [?, ?, ?, ?]; *known says
 * both ranks are known. */
static mopt_status infer_rank4_pair(const op_ctx *ctx, const op_tensor *in, op_tensor *out,
                                    const char *what, bool *known) {
    mopt_status st = op_expect_f32(ctx, &in[0], 0);
    if (!st) st = op_expect_f32(ctx, &in[1], 1);
    if (st) return st;
    out[0].dtype = MOPT_DTYPE_F32;
    const ir_shape *a = &in[0].shape, *b = &in[1].shape;
    char sa[IR_SHAPE_STR_CAP], sb[IR_SHAPE_STR_CAP];
    if ((a->rank >= 0 && a->rank != 4) || (b->rank >= 0 && b->rank != 4))
        return op_fail(ctx, MOPT_ERR_SHAPE, what, op_shape_str(ctx, a, sa),
                       op_shape_str(ctx, b, sb));
    op_set_unknown_dims(&out[0].shape, 4);
    *known = a->rank >= 0 && b->rank >= 0;
    return MOPT_OK;
}

/* ---- mopt.KVAppend ------------------------------------------------------ */

static mopt_status kva_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    (void)n_in, (void)n_out;
    bool known;
    mopt_status st = infer_rank4_pair(
        ctx, in, out, "past %s and new %s must be [batch, seq, heads, head_dim]", &known);
    if (st || !known) return st;
    const ir_shape *p = &in[0].shape, *n = &in[1].shape;
    char a[IR_SHAPE_STR_CAP], b[IR_SHAPE_STR_CAP];
    ir_shape o = out[0].shape;
    for (int32_t d = 0; d < 4; d++) {
        if (d == 1) continue;
        if (p->syms[d] == 0 && n->syms[d] == 0 && p->dims[d] != n->dims[d])
            return op_fail(ctx, MOPT_ERR_SHAPE, "past %s and new %s differ on axis %d",
                           op_shape_str(ctx, p, a), op_shape_str(ctx, n, b), (int)d);
        if (n->syms[d] == 0)
            ops_copy_dim(&o, d, n, d);
        else
            ops_copy_dim(&o, d, p, d);
    }
    if (p->syms[1] == 0 && n->syms[1] == 0) {
        o.dims[1] = p->dims[1] + n->dims[1];
        o.syms[1] = 0;
    }
    out[0].shape = o;
    return MOPT_OK;
}

/* The new rows [S, heads, head_dim] of batch 0 rounded into bf16 tiles
 * after P keys. */
static mopt_status kva_tiles(const op_ctx *ctx, const op_kv_tiles *t, const op_tensor *in,
                             const op_tensor *out) {
    const ir_shape *p = &in[0].shape, *n = &in[1].shape;
    const int64_t H = n->dims[2], D = n->dims[3], P = p->dims[1], S = n->dims[1];
    if (in[0].data != out[0].data)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED,
                       "present is a bf16 tile cache; past must be bound to the same buffer");
    if (p->dims[0] != 1 || n->dims[0] != 1 || H != t->heads || D != t->head_dim || P + S > t->cap)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "past [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] + %" PRId64
                       " rows do not fit the bf16 tile cache (batch 1, %" PRId64
                       " heads of %" PRId64 ", %" PRId64 " keys)",
                       p->dims[0], P, p->dims[2], p->dims[3], S, t->heads, t->head_dim, t->cap);
    uint16_t *b = (uint16_t *)out[0].data;
    const float *x = in[1].data;
    /* dim d of key t, head h, lies at index(t, h, 0) + an offset: K's pairs
     * of dims 32 apart, V's dims 32 apart */
    for (int64_t s = 0; s < S; s++)
        for (int64_t h = 0; h < H; h++) {
            const float *row = x + (s * H + h) * D;
            uint16_t *o = b + (t->value ? kn_kvt_v_index(H, D, P + s, h, 0)
                                        : kn_kvt_k_index(H, D, P + s, h, 0));
            if (t->value)
                for (int64_t d = 0; d < D; d++)
                    o[d * 32] = bf16_from_f32(row[d]);
            else
                for (int64_t d = 0; d < D; d++)
                    o[d / 2 * 32 + d % 2] = bf16_from_f32(row[d]);
        }
    return MOPT_OK;
}

static mopt_status kva_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    (void)n_in, (void)n_out;
    mopt_status st = op_require_inputs(ctx, in, 2);
    if (st) return st;
    if (ctx->n_kv_tiles) {
        const op_kv_tiles *t = op_kv_tiles_find(ctx, out[0].data);
        if (t) return kva_tiles(ctx, t, in, out);
        if (op_kv_tiles_find(ctx, in[0].data))
            return op_fail(ctx, MOPT_ERR_UNSUPPORTED,
                           "past is a bf16 tile cache; present must be bound to the same buffer");
    }
    const ir_shape *p = &in[0].shape, *n = &in[1].shape;
    int64_t B = p->dims[0], row = p->dims[2] * p->dims[3] * (int64_t)sizeof(float);
    int64_t P = p->dims[1], S = n->dims[1], T = P + S;
    char *o = out[0].data;
    const char *past = in[0].data, *nw = in[1].data;
    bool in_place = (const void *)o == in[0].data;
    /* in place, batch b's past moves from b * P rows to b * T rows: walk the
     * batches from the last so that no row is overwritten before it moves
     * (batch 0, the generator's, does not move at all) */
    for (int64_t b = B - 1; b >= 0; b--) {
        char *ob = o + b * T * row;
        const char *pb = past + b * P * row;
        if (!in_place)
            memcpy(ob, pb, (size_t)(P * row));
        else if (ob != pb)
            memmove(ob, pb, (size_t)(P * row));
        memcpy(ob + P * row, nw + b * S * row, (size_t)(S * row));
    }
    return MOPT_OK;
}

/* ---- mopt.CacheMatMul --------------------------------------------------- */

static const op_attr_spec k_cmm_attrs[] = {
    OP_ATTR_F32(cmm_params, alpha, "alpha", 1.0f),
    OP_ATTR_BOOL(cmm_params, trans_b, "transB", 0),
};

/* A [b, h, m, k] and the cache C [b, t, h, d]: the product's n and k axes. */
static mopt_status cmm_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    (void)n_in, (void)n_out;
    const cmm_params *p = ctx->params;
    bool known;
    mopt_status st = infer_rank4_pair(
        ctx, in, out,
        "A %s must be [batch, heads, m, k] and the cache %s [batch, seq, heads, head_dim]", &known);
    if (st || !known) return st;
    const ir_shape *a = &in[0].shape, *c = &in[1].shape;
    char sa[IR_SHAPE_STR_CAP], sc[IR_SHAPE_STR_CAP];
    ir_shape y = out[0].shape;
    int32_t ck = p->trans_b ? 3 : 1, cn = p->trans_b ? 1 : 3;
    bool bad = (a->syms[0] == 0 && c->syms[0] == 0 && a->dims[0] != c->dims[0]) ||
               (a->syms[1] == 0 && c->syms[2] == 0 && a->dims[1] != c->dims[2]) ||
               (a->syms[3] == 0 && c->syms[ck] == 0 && a->dims[3] != c->dims[ck]);
    if (bad)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "A %s and the cache %s do not match (batch, heads, inner dimension, "
                       "transB=%d)",
                       op_shape_str(ctx, a, sa), op_shape_str(ctx, c, sc), (int)p->trans_b);
    ops_copy_dim(&y, 0, a, 0);
    ops_copy_dim(&y, 1, a, 1);
    ops_copy_dim(&y, 2, a, 2);
    ops_copy_dim(&y, 3, c, cn);
    out[0].shape = y;
    return MOPT_OK;
}

static mopt_status cmm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    (void)n_in, (void)n_out;
    mopt_status st = op_require_inputs(ctx, in, 2);
    if (st) return st;
    kn_gemm g;
    ops_cache_matmul_gemm(ctx->params, &in[0].shape, &in[1].shape, &g);
    ref_gemm_batched_f32(&g, in[0].data, in[1].data, out[0].data);
    return MOPT_OK;
}

void ops_cache_matmul_gemm(const cmm_params *p, const ir_shape *as, const ir_shape *cs,
                           kn_gemm *out) {
    const int64_t *a = as->dims, *c = cs->dims;
    int64_t H = a[1], M = a[2], K = a[3], T = c[1], D = c[3];
    kn_gemm g;
    memset(&g, 0, sizeof g);
    g.M = M;
    g.K = K;
    g.N = p->trans_b ? T : D;
    g.trans_b = p->trans_b;
    g.lda = K;
    g.ldb = H * D; /* one row per position, the heads side by side */
    g.ldc = g.N;
    g.alpha = p->alpha;
    g.batch_rank = 2;
    g.batch[0] = a[0];
    g.batch[1] = H;
    g.a_bs[0] = H * M * K, g.a_bs[1] = M * K;
    g.b_bs[0] = T * H * D, g.b_bs[1] = D;
    g.c_bs[0] = H * M * g.N, g.c_bs[1] = M * g.N;
    *out = g;
}

static int64_t cmm_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                         int n_out) {
    (void)ctx, (void)n_in, (void)n_out;
    int64_t y = ir_shape_numel(&out[0].shape), k = in[0].shape.dims[3];
    return y < 0 || k < 0 ? -1 : 2 * y * k;
}

/* ---- mopt.DecodeAttention ---------------------------------------------- */

static const op_attr_spec k_da_attrs[] = {
    OP_ATTR_F32(dattn_params, scale, "scale", 1.0f),
    OP_ATTR_F32(dattn_params, fill, "fill", -INFINITY),
};

static mopt_status da_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    (void)n_out;
    mopt_status st = MOPT_OK;
    for (int k = 0; k < 3 && !st; k++)
        st = op_expect_f32(ctx, &in[k], k);
    if (st) return st;
    static const mopt_dtype k_mask[] = {MOPT_DTYPE_BOOL, MOPT_DTYPE_F32};
    if (op_has_input(in, n_in, 3) && (st = op_expect_dtype(ctx, &in[3], 3, k_mask, 2))) return st;
    static const mopt_dtype k_i64[] = {MOPT_DTYPE_I64};
    for (int i = 4; i < 6; i++)
        if (op_has_input(in, n_in, i) && (st = op_expect_dtype(ctx, &in[i], i, k_i64, 1)))
            return st;
    if (op_has_input(in, n_in, 5) && !op_has_input(in, n_in, 4))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "a key mask (input 5) needs the query positions (input 4)");
    if (op_has_input(in, n_in, 3) && op_has_input(in, n_in, 4))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "a mask (input 3) and query positions (input 4) cannot both be given");
    for (int i = 4; i < 6; i++)
        if (op_has_input(in, n_in, i) && in[i].shape.rank >= 0 && in[i].shape.rank != 2) {
            char a[IR_SHAPE_STR_CAP];
            return op_fail(ctx, MOPT_ERR_SHAPE, "input %d %s must be %s", i,
                           op_shape_str(ctx, &in[i].shape, a),
                           i == 4 ? "[batch, m] (query positions)" : "[batch, seq] (key mask)");
        }
    out[0].dtype = MOPT_DTYPE_F32;
    const ir_shape *q = &in[0].shape, *k = &in[1].shape, *v = &in[2].shape;
    char a[IR_SHAPE_STR_CAP], b[IR_SHAPE_STR_CAP], c[IR_SHAPE_STR_CAP];
    if ((q->rank >= 0 && q->rank != 4) || (k->rank >= 0 && k->rank != 4) ||
        (v->rank >= 0 && v->rank != 4))
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "Q %s must be [batch, heads, m, head_dim] and the caches %s, %s [batch, "
                       "seq, heads, head_dim]",
                       op_shape_str(ctx, q, a), op_shape_str(ctx, k, b), op_shape_str(ctx, v, c));
    ir_shape y;
    op_set_unknown_dims(&y, 4);
    if (q->rank < 0 || k->rank < 0 || v->rank < 0) {
        out[0].shape = y;
        return MOPT_OK;
    }
#define DA_DIFF(x, i, z, j) ((x)->syms[i] == 0 && (z)->syms[j] == 0 && (x)->dims[i] != (z)->dims[j])
    if (DA_DIFF(q, 0, k, 0) || DA_DIFF(q, 1, k, 2) || DA_DIFF(q, 3, k, 3) || DA_DIFF(k, 0, v, 0) ||
        DA_DIFF(k, 1, v, 1) || DA_DIFF(k, 2, v, 2))
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "Q %s and the caches %s, %s do not match (batch, heads, head_dim, seq)",
                       op_shape_str(ctx, q, a), op_shape_str(ctx, k, b), op_shape_str(ctx, v, c));
#undef DA_DIFF
    ops_copy_dim(&y, 0, q, 0);
    ops_copy_dim(&y, 1, q, 1);
    ops_copy_dim(&y, 2, q, 2);
    ops_copy_dim(&y, 3, v, 3);
    if (op_has_input(in, n_in, 3)) {
        ir_shape s = y;
        ops_copy_dim(&s, 3, k, 1);
        if (op_mask_bad_axis(&in[3].shape, &s) != -1)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "the mask %s does not broadcast to the scores [batch, heads, m, seq] "
                           "%s without growing them",
                           op_shape_str(ctx, &in[3].shape, a), op_shape_str(ctx, &s, b));
    }
    out[0].shape = y;
    return MOPT_OK;
}

/* Strides of a [batch, n] i64 input k over [B, n] (0 on a broadcast batch),
 * or a shape error. */
static mopt_status da_bn_strides(const op_ctx *ctx, const op_tensor *t, int k, int64_t B, int64_t n,
                                 int64_t *sb, int64_t *sn) {
    const ir_shape *s = &t->shape;
    if (s->rank != 2 || (s->dims[0] != 1 && s->dims[0] != B) ||
        (s->dims[1] != 1 && s->dims[1] != n))
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "input %d is [%" PRId64 ", %" PRId64 "]; it must broadcast to [%" PRId64
                       ", %" PRId64 "]",
                       k, s->rank == 2 ? s->dims[0] : -1, s->rank == 2 ? s->dims[1] : -1, B, n);
    *sb = s->dims[0] == 1 ? 0 : s->dims[1];
    *sn = s->dims[1] == 1 ? 0 : 1;
    return MOPT_OK;
}

/* The folded causal mask: query positions, and a key mask that is dropped
 * when it hides nothing (the usual case: a scan of B * T values). */
static mopt_status da_positions(const op_ctx *ctx, const op_tensor *in, int n_in,
                                kn_decode_attn *p) {
    int64_t key_stride = 0;
    mopt_status st = da_bn_strides(ctx, &in[4], 4, p->B, p->M, &p->qp_sb, &p->qp_sm);
    if (st) return st;
    p->qpos = in[4].data;
    if (!op_has_input(in, n_in, 5)) return MOPT_OK;
    if ((st = da_bn_strides(ctx, &in[5], 5, p->B, p->T, &p->kp_sb, &key_stride))) return st;
    if (key_stride != 1 && p->T > 1)
        return op_fail(ctx, MOPT_ERR_SHAPE, "the key mask (input 5) must have the keys' length");
    const int64_t *km = in[5].data;
    const int64_t n = (p->kp_sb ? p->B : 1) * p->T;
    bool hides = false;
    for (int64_t i = 0; i < n && !hides; i++)
        hides = km[i] == 0;
    p->kpad = hides ? km : NULL;
    return MOPT_OK;
}

mopt_status ops_decode_attn_problem(const op_ctx *ctx, const op_tensor *in, int n_in,
                                    op_tensor *out, kn_decode_attn *p) {
    const dattn_params *a = ctx->params;
    const int64_t *q = in[0].shape.dims, *k = in[1].shape.dims, *v = in[2].shape.dims;
    memset(p, 0, sizeof *p);
    p->B = q[0], p->H = q[1], p->M = q[2], p->D = q[3], p->T = k[1], p->Dv = v[3];
    if (k[0] != p->B || k[2] != p->H || k[3] != p->D || v[0] != p->B || v[1] != p->T ||
        v[2] != p->H)
        return op_fail(ctx, MOPT_ERR_SHAPE, "Q and the caches do not match at run time");
    p->q = in[0].data, p->k = in[1].data, p->v = in[2].data, p->y = out[0].data;
    p->scale = a->scale, p->fill = a->fill;
    const op_kv_tiles *kt = op_kv_tiles_find(ctx, p->k), *vt = op_kv_tiles_find(ctx, p->v);
    if (kt || vt) {
        if (!kt || !vt || kt->value || !vt->value)
            return op_fail(ctx, MOPT_ERR_UNSUPPORTED,
                           "one cache is bf16 tiles and the other not (or K and V swapped)");
        if (p->B != 1 || p->T > kt->cap || p->H != kt->heads || p->D != kt->head_dim ||
            p->Dv != vt->head_dim || p->H != vt->heads)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "the bf16 tile caches (batch 1, %" PRId64 " heads of %" PRId64
                           ", %" PRId64 " keys) do not hold Q's [%" PRId64 ", %" PRId64
                           ", ., %" PRId64 "] over %" PRId64 " keys",
                           kt->heads, kt->head_dim, kt->cap, p->B, p->H, p->D, p->T);
        p->kt = (const uint16_t *)p->k, p->vt = (const uint16_t *)p->v;
        p->k = p->v = NULL;
    }
    if (op_has_input(in, n_in, 4)) return da_positions(ctx, in, n_in, p);
    if (!op_has_input(in, n_in, 3)) return MOPT_OK;
    const ir_shape *m = &in[3].shape;
    const int64_t want[4] = {p->B, p->H, p->M, p->T};
    ir_shape scores;
    ir_shape_set(&scores, 4, want);
    int32_t i = op_mask_bad_axis(m, &scores);
    if (i == -2)
        return op_fail(ctx, MOPT_ERR_SHAPE, "the mask has rank %d; at most 4", (int)m->rank);
    if (i >= 0)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "the mask's axis %d is %" PRId64 "; the scores have %" PRId64, (int)i,
                       m->dims[i], want[4 - m->rank + i]);
    op_attn_mask_bind(&in[3], want, &p->mask);
    return MOPT_OK;
}

static mopt_status da_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                          int n_out) {
    (void)n_out;
    mopt_status st = op_require_inputs(ctx, in, 3);
    kn_decode_attn p;
    if (!st) st = ops_decode_attn_problem(ctx, in, n_in, out, &p);
    if (!st) ref_decode_attention_f32(&p);
    return st;
}

static int64_t da_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                        int n_out) {
    (void)ctx, (void)n_in, (void)n_out;
    int64_t rows = ir_shape_numel(&in[0].shape), t = in[1].shape.dims[1];
    int64_t d = in[0].shape.dims[3], dv = out[0].shape.dims[3];
    if (rows < 0 || t < 0 || d <= 0 || dv < 0) return -1;
    return 2 * (rows / d) * t * (d + dv);
}

static const op_def k_ops[] = {
    {"KVAppend", "mopt", 2, 2, 1, 1, kva_infer, kva_run, NULL},
    {"CacheMatMul", "mopt", 2, 2, 1, 1, cmm_infer, cmm_run, ops_cache_matmul_impls,
     OP_ATTRS(cmm_params, k_cmm_attrs), .flops = cmm_flops},
    {"DecodeAttention", "mopt", 3, 6, 1, 1, da_infer, da_run, ops_decode_attn_impls,
     OP_ATTRS(dattn_params, k_da_attrs), .flops = da_flops},
};

OP_FAMILY(kvcache, k_ops)
