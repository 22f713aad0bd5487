/*
 * fused_onednn.c — mopt.FusedMatMul and mopt.FusedConv (docs/fused_ops.md)
 * on oneDNN (kernels/onednn): the whole epilogue (bias, residual, the
 * activation) runs as oneDNN post-ops of the product. FusedMatMul takes
 * transA/transB as strides, alpha as the output scale, broadcast batch dims,
 * bias and residual; FusedConv a residual of Y's shape. Variants per
 * precision: "onednn" (f32), "onednn-bf16" (bf16 operands, f32 accumulation
 * and epilogue) and, for FusedMatMul with a constant 2-D B, "onednn-int8"
 * (dynamic int8 product, then the reference epilogue in f32; B always
 * quantized into oneDNN's layout at build). As for MatMul/Conv
 * (matmul_onednn.c, conv_onednn.c), the f32 and bf16 variants keep a
 * constant B / W in its stored layout, and their "-packed" twins
 * (opt_level >= 3) reorder it once at model build into oneDNN's preferred
 * layout. Problems oneDNN refuses at run time go to the reference run.
 */
#include "mopt_config.h"
#include "ops/impls.h"

#ifdef MOPT_HAVE_ONEDNN
#include <string.h>

#include "kernels/onednn/onednn.h"
#include "ops/fused.h"
#include "ops/onednn/onednn_glue.h"

typedef onednn_glue_mm_state fmm_state;

static bool has_input(const op_tensor *in, int n_in, int k) {
    return k < n_in && in[k].dtype != MOPT_DTYPE_UNDEFINED;
}

static bool act_of(const op_ctx *ctx, onednn_act *act, float *alpha, float *beta) {
    ref_act_params p;
    if (fused_read_activation(ctx, &p)) {
        mopt_clear_error();
        return false;
    }
    static const onednn_act map[REF_ACT_COUNT] = {
        [REF_ACT_NONE] = ONEDNN_ACT_NONE,
        [REF_ACT_RELU] = ONEDNN_ACT_RELU,
        [REF_ACT_LEAKY_RELU] = ONEDNN_ACT_LEAKY_RELU,
        [REF_ACT_CLIP] = ONEDNN_ACT_CLIP,
        [REF_ACT_HARD_SWISH] = ONEDNN_ACT_HARDSWISH,
        [REF_ACT_HARD_SIGMOID] = ONEDNN_ACT_HARDSIGMOID,
        [REF_ACT_SIGMOID] = ONEDNN_ACT_SIGMOID,
        [REF_ACT_TANH] = ONEDNN_ACT_TANH,
        [REF_ACT_GELU] = ONEDNN_ACT_GELU_ERF,
        [REF_ACT_GELU_TANH] = ONEDNN_ACT_GELU_TANH,
    };
    if ((int)p.act < 0 || p.act >= REF_ACT_COUNT) return false;
    *act = map[p.act];
    *alpha = p.alpha;
    *beta = p.beta;
    return true;
}

/* ---- mopt.FusedMatMul --------------------------------------------------- */

/* One operand of rank >= 2 padded to rank r: its logical dims (last two
 * swapped when trans) and strides over the stored layout. Unknown dims
 * (load time) become `rep` for batch axes, rows/cols given. */
static void operand_td(const ir_shape *s, int32_t r, bool trans, int64_t rep_rows, int64_t rep_cols,
                       onednn_td *t) {
    int64_t stored[ONEDNN_MAX_DIMS];
    int32_t lead = r - s->rank;
    for (int32_t i = 0; i < r; i++) {
        int32_t j = i - lead;
        int64_t rep = i == r - 2 ? rep_rows : i == r - 1 ? rep_cols : 1;
        stored[i] = j < 0 ? 1 : s->syms[j] == 0 ? s->dims[j] : rep;
    }
    onednn_td_dense(t, r, stored);
    if (trans) {
        int64_t d = t->dims[r - 2], st = t->strides[r - 2];
        t->dims[r - 2] = t->dims[r - 1];
        t->strides[r - 2] = t->strides[r - 1];
        t->dims[r - 1] = d;
        t->strides[r - 1] = st;
    }
}

static bool known(const ir_shape *s, int32_t i) { return s->syms[i] == 0; }

/* d's a, b, y for the node's operands (representative sizes for unknown
 * dims at load time). False when the shapes do not fit. */
static bool fmm_geometry(const op_ctx *ctx, const ir_shape *a, const ir_shape *b,
                         onednn_matmul_desc *d) {
    if (a->rank < 2 || b->rank < 2 || a->rank > ONEDNN_MAX_DIMS || b->rank > ONEDNN_MAX_DIMS)
        return false;
    bool ta = ir_node_attr_int(ctx->node, "transA", 0) != 0;
    bool tb = ir_node_attr_int(ctx->node, "transB", 0) != 0;
    int32_t r = a->rank > b->rank ? a->rank : b->rank;
    /* K: from whichever operand knows it */
    int32_t ka = ta ? a->rank - 2 : a->rank - 1, kb = tb ? b->rank - 1 : b->rank - 2;
    int64_t K = known(a, ka) ? a->dims[ka] : known(b, kb) ? b->dims[kb] : 64;
    operand_td(a, r, ta, ta ? K : 128, ta ? 128 : K, &d->a);
    operand_td(b, r, tb, tb ? 64 : K, tb ? K : 64, &d->b);
    if (d->a.dims[r - 1] != d->b.dims[r - 2]) return false;
    int64_t yd[ONEDNN_MAX_DIMS];
    for (int32_t i = 0; i < r - 2; i++) {
        int64_t x = d->a.dims[i], z = d->b.dims[i];
        if (x != z && x != 1 && z != 1) return false;
        yd[i] = x == 1 ? z : x;
    }
    yd[r - 2] = d->a.dims[r - 2];
    yd[r - 1] = d->b.dims[r - 1];
    onednn_td_dense(&d->y, r, yd);
    d->alpha = ir_node_attr_float(ctx->node, "alpha", 1.0f);
    return true;
}

/* An addend (bias, residual) broadcast to y's rank. */
static bool addend_td(const ir_shape *s, const onednn_td *y, onednn_td *t) {
    if (s->rank > y->ndims) return false;
    int64_t dims[ONEDNN_MAX_DIMS];
    int32_t lead = y->ndims - s->rank;
    for (int32_t i = 0; i < y->ndims; i++) {
        dims[i] = i < lead ? 1 : s->dims[i - lead];
        if (dims[i] != 1 && dims[i] != y->dims[i]) return false;
    }
    onednn_td_dense(t, y->ndims, dims);
    return true;
}

static bool fmm_supports_f32(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                             int n_out) {
    onednn_act act;
    float aa, ab;
    if (!onednn_available() || !act_of(ctx, &act, &aa, &ab)) return false;
    for (int k = 0; k < n_in && k < 4; k++)
        if (has_input(in, n_in, k) && in[k].dtype != MOPT_DTYPE_F32) return false;
    const ir_shape *a = &in[0].shape, *b = &in[1].shape;
    return a->rank >= 2 && b->rank >= 2 && a->rank <= ONEDNN_MAX_DIMS && b->rank <= ONEDNN_MAX_DIMS;
}

static mopt_status fmm_prepare_p(const op_ctx *ctx, const op_tensor *in, onednn_prec prec,
                                 bool plain, void **state) {
    *state = NULL;
    onednn_matmul_desc d;
    memset(&d, 0, sizeof d);
    if (!in[1].data || !fmm_geometry(ctx, &in[0].shape, &in[1].shape, &d)) return MOPT_OK;
    for (int32_t i = 0; i < d.y.ndims; i++)
        if (d.y.dims[i] <= 0 || d.a.dims[d.a.ndims - 1] <= 0) return MOPT_OK;
    return onednn_glue_pack_b(&d, &in[1], prec, plain, state);
}

static mopt_status fmm_run_p(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out, onednn_prec prec, bool plain) {
    const fmm_state *s = ctx->state;
    onednn_matmul_desc d;
    memset(&d, 0, sizeof d);
    bool ok = fmm_geometry(ctx, &in[0].shape, &in[1].shape, &d);
    for (int32_t i = 0; ok && i < d.y.ndims; i++)
        ok = d.y.dims[i] > 0 && d.a.dims[d.a.ndims - 1] > 0 && d.y.dims[i] == out[0].shape.dims[i];
    ok = ok && d.y.ndims == out[0].shape.rank;
    bool has_bias = has_input(in, n_in, 2), has_res = has_input(in, n_in, 3);
    if (ok && has_bias) ok = addend_td(&in[2].shape, &d.y, &d.bias);
    if (ok && has_res) ok = addend_td(&in[3].shape, &d.y, &d.residual);
    if (!ok) return ctx->node->op->run(ctx, in, n_in, out, n_out);
    d.prec = prec;
    d.plain_w = plain && prec != ONEDNN_INT8;
    d.b_const = s != NULL;
    mopt_status st;
    if (prec == ONEDNN_INT8) {
        /* the int8 product, then the reference epilogue in f32 */
        st = onednn_matmul_run((onednn_cache **)ctx->scratch, &d, s ? s->w : NULL, in[0].data,
                               in[1].data, NULL, NULL, out[0].data, ctx->threads);
        if (st == MOPT_OK) {
            ref_act_params act;
            if ((st = fused_read_activation(ctx, &act))) return st;
            ref_addend bias, res;
            memset(&bias, 0, sizeof bias);
            memset(&res, 0, sizeof res);
            const ir_shape *y = &out[0].shape;
            if (has_bias)
                bias.data = in[2].data, op_broadcast_strides(&in[2].shape, y, bias.strides);
            if (has_res) res.data = in[3].data, op_broadcast_strides(&in[3].shape, y, res.strides);
            ref_epilogue_f32(y->rank, y->dims, out[0].data, &bias, &res, &act);
        }
    } else {
        d.has_bias = has_bias;
        d.has_residual = has_res;
        act_of(ctx, &d.act, &d.act_alpha, &d.act_beta);
        st = onednn_matmul_run((onednn_cache **)ctx->scratch, &d, s ? s->w : NULL, in[0].data,
                               in[1].data, has_bias ? in[2].data : NULL,
                               has_res ? in[3].data : NULL, out[0].data, ctx->threads);
    }
    return onednn_glue_or_ref(st, ctx, in, n_in, out, n_out);
}

/* One impl per precision (f32, bf16) and weights layout (stored, packed). */
#define FMM_IMPL(ident, iname, prec, plain, sup)                                                   \
    static bool ident##_supports(const op_ctx *ctx, const op_tensor *in, int n_in,                 \
                                 const op_tensor *out, int n_out) {                                \
        return (sup) && fmm_supports_f32(ctx, in, n_in, out, n_out);                               \
    }                                                                                              \
    static mopt_status ident##_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,           \
                                       const op_tensor *out, int n_out, void **state) {            \
        mopt_status st = fmm_prepare_p(ctx, in, prec, plain, state);                               \
        return plain ? st : onednn_glue_mm_packed_or_step_aside(st, state);                        \
    }                                                                                              \
    static mopt_status ident##_run(const op_ctx *ctx, const op_tensor *in, int n_in,               \
                                   op_tensor *out, int n_out) {                                    \
        return fmm_run_p(ctx, in, n_in, out, n_out, prec, plain);                                  \
    }                                                                                              \
    ONEDNN_GLUE_IMPL_TABLE(ident, iname, onednn_glue_mm_state_release)

FMM_IMPL(fused_matmul_onednn, "onednn", ONEDNN_F32, true, true)
FMM_IMPL(fused_matmul_onednn_packed, "onednn-packed", ONEDNN_F32, false,
         ctx->opt_level >= 3 && in[1].data)
FMM_IMPL(fused_matmul_onednn_bf16, "onednn-bf16", ONEDNN_BF16, true,
         onednn_glue_prec_is(ctx, OP_PREC_BF16))
FMM_IMPL(fused_matmul_onednn_bf16_packed, "onednn-bf16-packed", ONEDNN_BF16, false,
         onednn_glue_prec_is(ctx, OP_PREC_BF16) && ctx->opt_level >= 3 && in[1].data)

/* int8: constant 2-D B, A not transposed (it is quantized as stored) */
static bool fused_matmul_onednn_int8_supports(const op_ctx *ctx, const op_tensor *in, int n_in,
                                              const op_tensor *out, int n_out) {
    return onednn_glue_prec_is(ctx, OP_PREC_INT8) && in[1].data && in[1].shape.rank == 2 &&
           ir_node_attr_int(ctx->node, "transA", 0) == 0 &&
           fmm_supports_f32(ctx, in, n_in, out, n_out);
}
static mopt_status fused_matmul_onednn_int8_prepare(const op_ctx *ctx, const op_tensor *in,
                                                    int n_in, const op_tensor *out, int n_out,
                                                    void **state) {
    return onednn_glue_mm_int8_or_step_aside(fmm_prepare_p(ctx, in, ONEDNN_INT8, false, state),
                                             state);
}
static mopt_status fused_matmul_onednn_int8_run(const op_ctx *ctx, const op_tensor *in, int n_in,
                                                op_tensor *out, int n_out) {
    return fmm_run_p(ctx, in, n_in, out, n_out, ONEDNN_INT8, false);
}

ONEDNN_GLUE_IMPL_TABLE(fused_matmul_onednn_int8, "onednn-int8", onednn_glue_mm_state_release)

/* ---- mopt.FusedConv ----------------------------------------------------- */

static bool fconv_supports_f32(const op_ctx *ctx, const op_tensor *in, int n_in,
                               const op_tensor *out, int n_out) {
    onednn_act act;
    float aa, ab;
    if (!act_of(ctx, &act, &aa, &ab)) return false;
    if (has_input(in, n_in, 3)) {
        /* the residual must be Y-shaped (checked again at run time) */
        const ir_shape *r = &in[3].shape, *y = &out[0].shape;
        if (in[3].dtype != MOPT_DTYPE_F32 || r->rank != y->rank) return false;
        for (int32_t i = 0; i < r->rank; i++)
            if (r->syms[i] != y->syms[i] || (r->syms[i] == 0 && r->dims[i] != y->dims[i]))
                return false;
    }
    return ops_impl_conv_onednn.supports(ctx, in, n_in < 3 ? n_in : 3, out, n_out);
}

static mopt_status fconv_run_p(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out, onednn_prec prec, bool plain) {
    bool has_b = has_input(in, n_in, 2), has_res = has_input(in, n_in, 3);
    onednn_conv_desc d;
    mopt_status st = ops_conv_onednn_desc(ctx, &in[0].shape, &in[1].shape, has_b, &d);
    if (st) return st;
    if (d.batch == 0 || d.c_out == 0) return ctx->node->op->run(ctx, in, n_in, out, n_out);
    if (has_res) {
        const ir_shape *r = &in[3].shape, *y = &out[0].shape;
        bool same = r->rank == y->rank;
        for (int32_t i = 0; same && i < r->rank; i++)
            same = r->dims[i] == y->dims[i];
        if (!same) return ctx->node->op->run(ctx, in, n_in, out, n_out);
    }
    d.prec = prec;
    d.plain_w = plain;
    d.has_residual = has_res;
    act_of(ctx, &d.act, &d.act_alpha, &d.act_beta);
    st = onednn_conv_run((onednn_cache **)ctx->scratch, &d, ctx->state, in[0].data, in[1].data,
                         has_b ? in[2].data : NULL, has_res ? in[3].data : NULL, out[0].data,
                         ctx->threads);
    return onednn_glue_or_ref(st, ctx, in, n_in, out, n_out);
}

/* One impl per precision and weights layout; prepare is Conv's (W, bias). */
#define FCONV_IMPL(ident, iname, conv_impl, prec, plain, sup)                                      \
    static bool ident##_supports(const op_ctx *ctx, const op_tensor *in, int n_in,                 \
                                 const op_tensor *out, int n_out) {                                \
        return (sup) && fconv_supports_f32(ctx, in, n_in, out, n_out);                             \
    }                                                                                              \
    static mopt_status ident##_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,           \
                                       const op_tensor *out, int n_out, void **state) {            \
        return conv_impl.prepare(ctx, in, n_in < 3 ? n_in : 3, out, n_out, state);                 \
    }                                                                                              \
    static mopt_status ident##_run(const op_ctx *ctx, const op_tensor *in, int n_in,               \
                                   op_tensor *out, int n_out) {                                    \
        return fconv_run_p(ctx, in, n_in, out, n_out, prec, plain);                                \
    }                                                                                              \
    ONEDNN_GLUE_IMPL_TABLE(ident, iname, onednn_glue_weights_release)

FCONV_IMPL(fused_conv_onednn, "onednn", ops_impl_conv_onednn, ONEDNN_F32, true, true)
FCONV_IMPL(fused_conv_onednn_packed, "onednn-packed", ops_impl_conv_onednn_packed, ONEDNN_F32,
           false, ctx->opt_level >= 3)
FCONV_IMPL(fused_conv_onednn_bf16, "onednn-bf16", ops_impl_conv_onednn_bf16, ONEDNN_BF16, true,
           onednn_glue_prec_is(ctx, OP_PREC_BF16))
FCONV_IMPL(fused_conv_onednn_bf16_packed, "onednn-bf16-packed", ops_impl_conv_onednn_bf16_packed,
           ONEDNN_BF16, false, onednn_glue_prec_is(ctx, OP_PREC_BF16) && ctx->opt_level >= 3)

#else
typedef int fused_onednn_unused; /* ISO C forbids an empty translation unit */
#endif
