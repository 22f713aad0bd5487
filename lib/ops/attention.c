/*
 * attention.c — the "attention" operator family: mopt.Attention (domain
 * "mopt", see docs/fused_ops.md), O = softmax(scale * Q K^T + mask) V per
 * batch and head, in the "bhsd" ([B,H,S,D]) or "bsh" ([B,S,H*D], heads split
 * and merged inside) layout, with an optional additive f32 or bool mask
 * broadcastable to [B,H,Sq,Sk] and an optional causal limit.
 *
 * Attribute parsing (params in attention.h) and inference here; the
 * reference math is kernels/ref/attention.c (full score block per head), the
 * fast one the fused kernels of kernels/cpu (online softmax over key tiles),
 * whose impl is lib/ops/cpu/attention_cpu.c (listed in lib/ops/impls.c).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/ref/ref_attention.h"
#include "ops/attention.h"
#include "ops/impls.h"
#include "ops/op_common.h"
#include "ops/ops.h"

typedef attention_params attn_attrs;

static mopt_status attention_parse(const op_ctx *ctx, void *params) {
    const ir_node *n = ctx->node;
    attn_attrs *a = params;
    const ir_attr *la = ir_node_attr(n, "layout");
    if (la && la->type != IR_ATTR_STRING)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "attribute 'layout' must be a string");
    const char *layout = ir_node_attr_string(n, "layout", "bhsd");
    if (strcmp(layout, "bsh") == 0)
        a->bsh = true;
    else if (strcmp(layout, "bhsd") != 0)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "attribute 'layout' is '%s'; expected 'bhsd' or 'bsh'", layout);
    a->num_heads = ir_node_attr_int(n, "num_heads", 0);
    if (a->bsh && a->num_heads <= 0)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "layout 'bsh' needs a positive 'num_heads' (got %" PRId64 ")", a->num_heads);
    if (!a->bsh && ir_node_attr(n, "num_heads") && a->num_heads <= 0)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "'num_heads' must be positive (got %" PRId64 ")", a->num_heads);
    const ir_attr *sa = ir_node_attr(n, "scale");
    if (sa) {
        if (sa->type != IR_ATTR_FLOAT || !isfinite(sa->f))
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "attribute 'scale' must be a finite float");
        a->has_scale = true;
        a->scale = sa->f;
    }
    int64_t c = ir_node_attr_int(n, "causal", 0);
    if (c != 0 && c != 1)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "attribute 'causal' must be 0 or 1 (got %" PRId64 ")", c);
    a->causal = c == 1;
    int64_t pk = ir_node_attr_int(n, "packed_qkv", 0);
    if (pk != 0 && pk != 1)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "attribute 'packed_qkv' must be 0 or 1 (got %" PRId64 ")", pk);
    if (pk == 1 && !a->bsh)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "'packed_qkv' needs layout 'bsh'");
    if (pk == 1 &&
        (n->n_inputs < 3 || n->inputs[1] != n->inputs[0] || n->inputs[2] != n->inputs[0]))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "'packed_qkv' needs one tensor as Q, K and V (inputs 0, 1, 2)");
    a->packed = pk == 1;
    return MOPT_OK;
}

/* One dimension as inference sees it: concrete (sym 0), symbol (> 0) or
 * unknown (< 0). */
typedef struct dimv {
    int64_t d;
    int32_t sym;
} dimv;

static dimv dim_of(const ir_shape *s, int32_t i) {
    dimv v = {0, -1};
    if (s->rank > i) {
        v.d = s->dims[i];
        v.sym = s->syms[i];
    }
    return v;
}

/* Merges dims that must be equal; fails when two concrete ones differ. */
static mopt_status dim_merge(const op_ctx *ctx, dimv *acc, dimv b, const char *what,
                             const op_tensor *in) {
    if (acc->sym == 0 && b.sym == 0) {
        if (acc->d != b.d) {
            char sq[IR_SHAPE_STR_CAP], sk[IR_SHAPE_STR_CAP], sv[IR_SHAPE_STR_CAP];
            return op_fail(
                ctx, MOPT_ERR_SHAPE, "%s differs (%" PRId64 " vs %" PRId64 "): Q %s, K %s, V %s",
                what, acc->d, b.d, op_shape_str(ctx, &in[0].shape, sq),
                op_shape_str(ctx, &in[1].shape, sk), op_shape_str(ctx, &in[2].shape, sv));
        }
        return MOPT_OK;
    }
    if (acc->sym != 0 && (b.sym == 0 || (acc->sym < 0 && b.sym > 0))) *acc = b;
    return MOPT_OK;
}

static void set_dim(ir_shape *s, int32_t i, dimv v) {
    s->dims[i] = v.sym == 0 ? v.d : 0;
    s->syms[i] = v.sym;
}

/* The logical sizes [B, H, Sq, Sk, D, Dv] as dims. */
typedef struct attn_dims {
    dimv B, H, Sq, Sk, D, Dv;
} attn_dims;

static mopt_status check_heads(const op_ctx *ctx, dimv *hd, int64_t heads, const char *what,
                               const op_tensor *t) {
    if (hd->sym != 0) return MOPT_OK;
    if (hd->d % heads != 0) {
        char s[IR_SHAPE_STR_CAP];
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "%s %s: last dim %" PRId64 " is not a multiple of num_heads %" PRId64, what,
                       op_shape_str(ctx, &t->shape, s), hd->d, heads);
    }
    hd->d /= heads;
    return MOPT_OK;
}

static mopt_status infer_dims(const op_ctx *ctx, const attn_attrs *a, const op_tensor *in,
                              attn_dims *ad) {
    const int32_t rank = a->bsh ? 3 : 4;
    static const char *const names[3] = {"Q", "K", "V"};
    for (int k = 0; k < 3; k++) {
        if (in[k].shape.rank >= 0 && in[k].shape.rank != rank) {
            char s[IR_SHAPE_STR_CAP];
            return op_fail(ctx, MOPT_ERR_SHAPE, "%s is %s; layout '%s' needs rank %d", names[k],
                           op_shape_str(ctx, &in[k].shape, s), a->bsh ? "bsh" : "bhsd", (int)rank);
        }
    }
    const ir_shape *q = &in[0].shape, *k = &in[1].shape, *v = &in[2].shape;
    mopt_status st;
    ad->B = dim_of(q, 0);
    if ((st = dim_merge(ctx, &ad->B, dim_of(k, 0), "batch size", in))) return st;
    if ((st = dim_merge(ctx, &ad->B, dim_of(v, 0), "batch size", in))) return st;
    if (a->packed) { /* one [B, S, 3*H*D] tensor read as Q, K and V */
        ad->H = (dimv){a->num_heads, 0};
        ad->Sq = ad->Sk = dim_of(q, 1);
        dimv w = dim_of(q, 2);
        if (w.sym != 0 || w.d % (3 * a->num_heads) != 0) {
            char s[IR_SHAPE_STR_CAP];
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "packed QKV %s: last dim must be a known multiple of 3 * num_heads "
                           "(%" PRId64 ")",
                           op_shape_str(ctx, q, s), 3 * a->num_heads);
        }
        ad->D = ad->Dv = (dimv){w.d / (3 * a->num_heads), 0};
    } else if (a->bsh) {
        ad->H = (dimv){a->num_heads, 0};
        ad->Sq = dim_of(q, 1);
        ad->Sk = dim_of(k, 1);
        if ((st = dim_merge(ctx, &ad->Sk, dim_of(v, 1), "key sequence length", in))) return st;
        dimv qd = dim_of(q, 2), kd = dim_of(k, 2);
        if ((st = dim_merge(ctx, &qd, kd, "hidden size of Q and K", in))) return st;
        ad->D = qd;
        ad->Dv = dim_of(v, 2);
        if ((st = check_heads(ctx, &ad->D, a->num_heads, "Q", &in[0]))) return st;
        if ((st = check_heads(ctx, &ad->Dv, a->num_heads, "V", &in[2]))) return st;
    } else {
        ad->H = dim_of(q, 1);
        if ((st = dim_merge(ctx, &ad->H, dim_of(k, 1), "head count", in))) return st;
        if ((st = dim_merge(ctx, &ad->H, dim_of(v, 1), "head count", in))) return st;
        if (a->num_heads > 0 && ad->H.sym == 0 && ad->H.d != a->num_heads)
            return op_fail(ctx, MOPT_ERR_SHAPE, "num_heads %" PRId64 " but Q has %" PRId64 " heads",
                           a->num_heads, ad->H.d);
        ad->Sq = dim_of(q, 2);
        ad->Sk = dim_of(k, 2);
        if ((st = dim_merge(ctx, &ad->Sk, dim_of(v, 2), "key sequence length", in))) return st;
        ad->D = dim_of(q, 3);
        if ((st = dim_merge(ctx, &ad->D, dim_of(k, 3), "head size of Q and K", in))) return st;
        ad->Dv = dim_of(v, 3);
    }
    return MOPT_OK;
}

static bool has_mask(const op_tensor *in, int n_in) { return op_has_input(in, n_in, 3); }

/* The mask must broadcast to [B,H,Sq,Sk] without growing it. */
static mopt_status check_mask(const op_ctx *ctx, const op_tensor *m, const attn_dims *ad) {
    const ir_shape *s = &m->shape;
    ir_shape scores = {.rank = 4};
    const dimv target[4] = {ad->B, ad->H, ad->Sq, ad->Sk};
    for (int32_t t = 0; t < 4; t++)
        set_dim(&scores, t, target[t]);
    int32_t i = op_mask_bad_axis(s, &scores);
    if (i == -1) return MOPT_OK;
    char b[IR_SHAPE_STR_CAP];
    if (i == -2)
        return op_fail(ctx, MOPT_ERR_SHAPE, "mask %s has rank > 4", op_shape_str(ctx, s, b));
    static const char *const names[4] = {"batch", "heads", "query length", "key length"};
    int32_t t = 4 - s->rank + i;
    return op_fail(ctx, MOPT_ERR_SHAPE,
                   "mask %s does not broadcast to [B,H,Sq,Sk]: axis %d is %" PRId64
                   " but %s is %" PRId64,
                   op_shape_str(ctx, s, b), (int)i, s->dims[i], names[t], target[t].d);
}

static const mopt_dtype k_mask_types[] = {MOPT_DTYPE_F32, MOPT_DTYPE_BOOL};

static mopt_status attention_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                   int n_out) {
    const attn_attrs *a = ctx->params;
    mopt_status st = MOPT_OK;
    for (int k = 0; k < 3 && !st; k++)
        st = op_expect_f32(ctx, &in[k], k);
    if (!st && n_in > 3) st = op_expect_dtype(ctx, &in[3], 3, k_mask_types, 2);
    if (st) return st;
    attn_dims ad;
    if ((st = infer_dims(ctx, a, in, &ad))) return st;
    if (has_mask(in, n_in) && (st = check_mask(ctx, &in[3], &ad))) return st;
    out[0].dtype = MOPT_DTYPE_F32;
    ir_shape *o = &out[0].shape;
    memset(o, 0, sizeof *o);
    if (a->bsh) {
        o->rank = 3;
        set_dim(o, 0, ad.B);
        set_dim(o, 1, ad.Sq);
        set_dim(o, 2, a->packed ? (dimv){ad.H.d * ad.Dv.d, 0} : dim_of(&in[2].shape, 2));
    } else {
        o->rank = 4;
        set_dim(o, 0, ad.B);
        set_dim(o, 1, ad.H);
        set_dim(o, 2, ad.Sq);
        set_dim(o, 3, ad.Dv);
    }
    return MOPT_OK;
}

mopt_status ops_attention_kernel_params(const op_ctx *ctx, const op_tensor *in, int n_in,
                                        attn_params *p) {
    const attn_attrs *a = ctx->params;
    mopt_status st;
    attn_dims ad;
    if ((st = infer_dims(ctx, a, in, &ad))) return st;
    memset(p, 0, sizeof *p);
    p->B = ad.B.d;
    p->H = ad.H.d;
    p->Sq = ad.Sq.d;
    p->Sk = ad.Sk.d;
    p->D = ad.D.d;
    p->Dv = ad.Dv.d;
    p->scale = a->has_scale ? a->scale : (p->D > 0 ? (float)(1.0 / sqrt((double)p->D)) : 1.0f);
    p->causal = a->causal;
    if (a->packed) { /* [B, S, 3*H*D]: Q, K, V are column blocks of H*D */
        const int64_t w = 3 * p->H * p->D;
        p->q_sb = p->Sq * w, p->q_sh = p->D, p->q_ss = w;
        p->k_sb = p->Sk * w, p->k_sh = p->D, p->k_ss = w;
        p->v_sb = p->Sk * w, p->v_sh = p->Dv, p->v_ss = w;
        p->o_sb = p->Sq * p->H * p->Dv, p->o_sh = p->Dv, p->o_ss = p->H * p->Dv;
    } else if (a->bsh) { /* [B, S, H*D]: head h is the column block h*D */
        p->q_sb = p->Sq * p->H * p->D, p->q_sh = p->D, p->q_ss = p->H * p->D;
        p->k_sb = p->Sk * p->H * p->D, p->k_sh = p->D, p->k_ss = p->H * p->D;
        p->v_sb = p->Sk * p->H * p->Dv, p->v_sh = p->Dv, p->v_ss = p->H * p->Dv;
        p->o_sb = p->Sq * p->H * p->Dv, p->o_sh = p->Dv, p->o_ss = p->H * p->Dv;
    } else {
        p->q_sb = p->H * p->Sq * p->D, p->q_sh = p->Sq * p->D, p->q_ss = p->D;
        p->k_sb = p->H * p->Sk * p->D, p->k_sh = p->Sk * p->D, p->k_ss = p->D;
        p->v_sb = p->H * p->Sk * p->Dv, p->v_sh = p->Sk * p->Dv, p->v_ss = p->Dv;
        p->o_sb = p->H * p->Sq * p->Dv, p->o_sh = p->Sq * p->Dv, p->o_ss = p->Dv;
    }
    if (has_mask(in, n_in)) {
        if ((st = check_mask(ctx, &in[3], &ad))) return st;
        const int64_t scores[4] = {p->B, p->H, p->Sq, p->Sk};
        op_attn_mask_bind(&in[3], scores, &p->mask);
    }
    return MOPT_OK;
}

static bool plan_fits(const attn_plan *plan, const op_tensor *in, int n_in) {
    bool mask = has_mask(in, n_in);
    if (!plan->valid || plan->has_mask != mask || (mask && plan->mask_dtype != in[3].dtype))
        return false;
    for (int k = 0; k < (mask ? 4 : 3); k++)
        if (!op_same_dims(&plan->shapes[k], &in[k].shape)) return false;
    return true;
}

mopt_status ops_attention_planned_params(const op_ctx *ctx, const op_tensor *in, int n_in,
                                         attn_plan *plan, attn_params *p) {
    if (!plan_fits(plan, in, n_in)) {
        plan->valid = false;
        mopt_status st = ops_attention_kernel_params(ctx, in, n_in, &plan->p);
        if (st) return st;
        plan->has_mask = has_mask(in, n_in);
        plan->mask_dtype = plan->has_mask ? in[3].dtype : MOPT_DTYPE_UNDEFINED;
        for (int k = 0; k < (plan->has_mask ? 4 : 3); k++)
            plan->shapes[k] = in[k].shape;
        plan->valid = true;
    }
    *p = plan->p;
    if (plan->has_mask) {
        const int64_t scores[4] = {p->B, p->H, p->Sq, p->Sk};
        op_attn_mask_bind(&in[3], scores, &p->mask);
    }
    return MOPT_OK;
}

/* The op's geometry (OP_GEOM): the kernel parameter block of the run. */
static mopt_status attention_geometry(const op_ctx *ctx, const op_tensor *in, int n_in,
                                      void *geom) {
    return ops_attention_kernel_params(ctx, in, n_in, geom);
}

void ops_attention_qkv(const op_ctx *ctx, const op_tensor *in, const attn_params *p,
                       const void *qkv[3]) {
    const attn_attrs *a = ctx->params;
    for (int k = 0; k < 3; k++) {
        const size_t off = a->packed ? (size_t)k * (size_t)(p->H * p->D) : 0;
        qkv[k] = (const char *)in[k].data + off * mopt_dtype_size(in[k].dtype);
    }
}

static mopt_status attention_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    (void)n_in, (void)n_out;
    const attn_params *p = ctx->geom; /* attention_geometry's */
    const void *qkv[3];
    ops_attention_qkv(ctx, in, p, qkv);
    if (!ref_attention_f32(p, qkv[0], qkv[1], qkv[2], out[0].data))
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY,
                       "out of memory for the %" PRId64 " x %" PRId64 " score block", p->Sq, p->Sk);
    return MOPT_OK;
}

/* Domain "mopt": never bridged. */
static const op_def k_defs[] = {
    {"Attention", "mopt", 3, 4, 1, 1, attention_infer, attention_run, ops_attention_impls,
     OP_PARAMS(attention_params, attention_parse), OP_GEOM(attn_params, attention_geometry)},
};

OP_FAMILY(attention, k_defs)
