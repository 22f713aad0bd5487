/*
 * fused_onednn.c — mopt.FusedMatMul and mopt.FusedConv (docs/fused_ops.md)
 * on oneDNN (kernels/onednn): the whole epilogue (bias, residual, the
 * activation) runs as oneDNN post-ops of the product. FusedMatMul takes
 * transA/transB as strides, alpha as the output scale, broadcast batch dims,
 * bias and residual (its kn_gemm, matmul.h, given to oneDNN); FusedConv a
 * residual of Y's shape. As for MatMul/Conv (matmul_onednn.c,
 * conv_onednn.c), one impl per op whose prepare picks the variant
 * (onednn_glue.h): "onednn" (f32), "onednn-bf16" (bf16 operands, f32
 * accumulation and epilogue), their "-packed" twins (opt_level >= 3, weights
 * reordered once at model build into oneDNN's preferred layout) and, for
 * FusedMatMul with a constant 2-D B, "onednn-int8" (dynamic int8 product,
 * then its f32 epilogue, or the reference one for a bias or residual that
 * is not dense along Y; B always quantized into oneDNN's
 * layout at build). Problems oneDNN refuses at run time are declined
 * (MOPT_ERR_UNSUPPORTED): the executor runs the next impl, then the
 * reference.
 */
#include "mopt_config.h"
#include "ops/impls.h"

#ifdef MOPT_HAVE_ONEDNN
#include <string.h>

#include "kernels/cpu/rowquant.h"
#include "kernels/onednn/onednn.h"
#include "ops/fused.h"
#include "ops/matmul.h"
#include "ops/onednn/onednn_glue.h"
#include "ops/op_common.h"

static void set_act(const kn_act_params *a, onednn_matmul_desc *d) {
    d->act = a->act;
    d->act_alpha = a->alpha;
    d->act_beta = a->beta;
}

/* ---- mopt.FusedMatMul --------------------------------------------------- */

static bool known(const ir_shape *s, int32_t i) { return s->syms[i] == 0; }

/* d's a, b, y, alpha for the node's operands; at load time unknown dims
 * become representative sizes (K from whichever operand knows it, else 64;
 * rows of A 128, columns of B 64, batch 1). False when the shapes do not
 * fit. */
static bool fmm_geometry(const op_ctx *ctx, const ir_shape *a, const ir_shape *b,
                         onednn_matmul_desc *d) {
    const fused_matmul_params *p = ctx->params;
    if (a->rank < 2 || b->rank < 2 || a->rank > ONEDNN_MAX_DIMS || b->rank > ONEDNN_MAX_DIMS)
        return false;
    bool ta = p->trans_a, tb = p->trans_b;
    int32_t ka = ta ? a->rank - 2 : a->rank - 1, kb = tb ? b->rank - 1 : b->rank - 2;
    int64_t K = known(a, ka) ? a->dims[ka] : known(b, kb) ? b->dims[kb] : 64;
    ir_shape ra = *a, rb = *b;
    for (int32_t i = 0; i < a->rank; i++) {
        int64_t rep = i == ka ? K : i == a->rank - 1 || i == a->rank - 2 ? 128 : 1;
        ra.dims[i] = known(a, i) ? a->dims[i] : rep;
        ra.syms[i] = 0;
    }
    for (int32_t i = 0; i < b->rank; i++) {
        int64_t rep = i == kb ? K : i == b->rank - 1 || i == b->rank - 2 ? 64 : 1;
        rb.dims[i] = known(b, i) ? b->dims[i] : rep;
        rb.syms[i] = 0;
    }
    kn_gemm g;
    if (!ops_matmul_gemm(&ra, ta, &rb, tb, &g)) return false;
    g.alpha = p->alpha;
    return onednn_matmul_geometry(&g, d);
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

static bool fmm_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                         int n_out) {
    if (!onednn_available()) return false;
    for (int k = 0; k < n_in && k < 4; k++)
        if (op_has_input(in, n_in, k) && in[k].dtype != MOPT_DTYPE_F32) return false;
    const ir_shape *a = &in[0].shape, *b = &in[1].shape;
    return a->rank >= 2 && b->rank >= 2 && a->rank <= ONEDNN_MAX_DIMS && b->rank <= ONEDNN_MAX_DIMS;
}

static mopt_status fmm_try(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                           const onednn_glue_variant *v, onednn_weights **w) {
    onednn_matmul_desc d;
    memset(&d, 0, sizeof d);
    mopt_status st = MOPT_OK;
    bool ok = in[1].data && fmm_geometry(ctx, &in[0].shape, &in[1].shape, &d);
    for (int32_t i = 0; ok && i < d.y.ndims; i++)
        ok = d.y.dims[i] > 0 && d.a.dims[d.a.ndims - 1] > 0;
    if (ok) st = onednn_glue_pack_b(&d, &in[1], v, w);
    return onednn_glue_mm_keep(v, st, w);
}

static mopt_status fmm_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                               const op_tensor *out, int n_out, void **state) {
    const fused_matmul_params *p = ctx->params;
    /* int8: constant 2-D B, A not transposed (it is quantized as stored) */
    bool int8_ok = in[1].data && in[1].shape.rank == 2 && !p->trans_a;
    onednn_glue_variant v[5];
    int n = onednn_glue_variants(ctx, int8_ok, in[1].data != NULL, v);
    return onednn_glue_choose(ctx, in, n_in, out, v, n, fmm_try, state);
}

/* The logical (f32) shape of a tensor that is a u8 rows block (its stored
 * last dim has CPU_ROWQ_EXTRA bytes more per row), else its own. */
static bool logical_shape(const op_tensor *t, ir_shape *s) {
    *s = t->shape;
    if (t->dtype != MOPT_DTYPE_U8) return true;
    if (s->rank < 1 || s->dims[s->rank - 1] <= CPU_ROWQ_EXTRA) return false;
    s->dims[s->rank - 1] -= CPU_ROWQ_EXTRA;
    return true;
}

static mopt_status fmm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    const fused_matmul_params *p = ctx->params;
    onednn_matmul_desc d;
    memset(&d, 0, sizeof d);
    ir_shape a_shape, y_shape; /* u8 rows blocks (int8 storage plan): logical shapes */
    bool ok = logical_shape(&in[0], &a_shape) && logical_shape(&out[0], &y_shape) &&
              fmm_geometry(ctx, &a_shape, &in[1].shape, &d);
    for (int32_t i = 0; ok && i < d.y.ndims; i++)
        ok = d.y.dims[i] > 0 && d.a.dims[d.a.ndims - 1] > 0 && d.y.dims[i] == y_shape.dims[i];
    ok = ok && d.y.ndims == y_shape.rank;
    d.a_u8 = in[0].dtype == MOPT_DTYPE_U8;
    d.y_u8 = out[0].dtype == MOPT_DTYPE_U8;
    bool has_bias = op_has_input(in, n_in, 2), has_res = op_has_input(in, n_in, 3);
    if (ok && has_bias) ok = addend_td(&in[2].shape, &d.y, &d.bias);
    if (ok && has_res) ok = addend_td(&in[3].shape, &d.y, &d.residual);
    if (!ok) return MOPT_ERR_UNSUPPORTED;
    onednn_glue_mm_desc(ctx, &d);
    if (!onednn_glue_mm_bf16(ctx, &in[0], has_res ? &in[3] : NULL, &out[0], &d))
        return MOPT_ERR_UNSUPPORTED;
    const onednn_weights *w = onednn_glue_weights(ctx);
    if (d.prec != ONEDNN_INT8) {
        d.has_bias = has_bias;
        d.has_residual = has_res;
        set_act(&p->act, &d);
        return onednn_matmul_run((onednn_cache **)ctx->scratch, &d, w, in[0].data, in[1].data,
                                 has_bias ? in[2].data : NULL, has_res ? in[3].data : NULL,
                                 out[0].data, ctx->threads);
    }
    /* the int8 product with bias, residual and activation in its own f32
     * epilogue (dense bias along N, Y-shaped residual) ... */
    onednn_matmul_desc full = d;
    full.has_bias = has_bias;
    full.has_residual = has_res;
    set_act(&p->act, &full);
    mopt_status st = onednn_matmul_run((onednn_cache **)ctx->scratch, &full, w, in[0].data,
                                       in[1].data, has_bias ? in[2].data : NULL,
                                       has_res ? in[3].data : NULL, out[0].data, ctx->threads);
    if (st != MOPT_ERR_UNSUPPORTED || d.y_u8 || d.y_bf16) return st;
    /* ... or the int8 product, then the reference epilogue in f32 */
    st = onednn_matmul_run((onednn_cache **)ctx->scratch, &d, w, in[0].data, in[1].data, NULL, NULL,
                           out[0].data, ctx->threads);
    if (st) return st;
    ops_fused_matmul_epilogue(p, in, n_in, out);
    return MOPT_OK;
}

/* bf16 storage: A, the residual (input 3) and Y */
static bool fmm_bf16_io(const op_ctx *ctx, const op_tensor *in, int n_in, bool output, int k) {
    return onednn_glue_mm_bf16_io(ctx, output, k, 3);
}

/* int8 storage: A and Y as u8 rows blocks (the epilogue quantizes Y's rows) */
static bool fmm_u8_io(const op_ctx *ctx, const op_tensor *in, int n_in, bool output, int k) {
    const onednn_glue_state *s = ctx->state;
    return s && s->v.prec == ONEDNN_INT8 && k == 0;
}

const op_impl ops_impl_fused_matmul_onednn =
    ONEDNN_GLUE_IMPL_U8(fmm_supports, fmm_prepare, fmm_run, fmm_bf16_io, fmm_u8_io);

/* ---- mopt.FusedConv ----------------------------------------------------- */

static bool fconv_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                           int n_out) {
    /* the residual must be Y-shaped (checked again at run time) */
    if (op_has_input(in, n_in, 3) && !op_residual_fits(&in[3], &out[0].shape)) return false;
    op_ctx cc;
    fused_conv_ctx(ctx, &cc);
    return ops_conv_onednn_supports(&cc, in, n_in < 3 ? n_in : 3, out, n_out);
}

/* prepare is Conv's (W, bias) */
static mopt_status fconv_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                                 const op_tensor *out, int n_out, void **state) {
    op_ctx cc;
    fused_conv_ctx(ctx, &cc);
    return ops_conv_onednn_prepare(&cc, in, n_in < 3 ? n_in : 3, out, n_out, state);
}

static mopt_status fconv_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    const fused_conv_params *p = ctx->params;
    const onednn_glue_state *s = ctx->state;
    op_ctx cc;
    fused_conv_ctx(ctx, &cc);
    bool has_b = op_has_input(in, n_in, 2), has_res = op_has_input(in, n_in, 3);
    onednn_conv_desc d;
    mopt_status st = ops_conv_onednn_desc(&cc, &in[0].shape, &in[1].shape, has_b, &d);
    if (st) return st;
    if (d.batch == 0 || d.c_out == 0) return MOPT_ERR_UNSUPPORTED;
    if (has_res) {
        const ir_shape *r = &in[3].shape, *y = &out[0].shape;
        bool same = r->rank == y->rank;
        for (int32_t i = 0; same && i < r->rank; i++)
            same = r->dims[i] == y->dims[i];
        if (!same) return MOPT_ERR_UNSUPPORTED;
    }
    /* the GEMV writes Y before adding the residual: not over it (in place) */
    bool shared = has_res && in[3].data == out[0].data;
    if (s->gemv && !shared &&
        ops_conv_onednn_gemv_run(&cc, in, n_in, out, has_res ? in[3].data : NULL, &p->act) ==
            MOPT_OK) {
        ops_fused_conv_post(p, out[0].data, ir_shape_numel(&out[0].shape));
        return MOPT_OK;
    }
    d.prec = s->v.prec;
    d.plain_w = s->v.plain;
    d.wino = s->v.wino;
    d.has_residual = has_res;
    d.act = p->act.act;
    d.act_alpha = p->act.alpha;
    d.act_beta = p->act.beta;
    d.has_post = p->has_post;
    d.post_scale = p->has_post ? p->post_scale : 0.f;
    d.post_shift = p->has_post ? p->post_shift : 0.f;
    ops_conv_onednn_bf16_desc(&in[0], has_res ? &in[3] : NULL, &out[0], &d);
    return onednn_conv_run((onednn_cache **)ctx->scratch, &d, s->w, in[0].data, in[1].data,
                           has_b ? in[2].data : NULL, has_res ? in[3].data : NULL, out[0].data,
                           ctx->threads);
}

/* bf16 storage (precision=bf16 on AMX): X, the residual and Y, but not Y
 * when the post affine runs after the primitive (after a HardSigmoid:
 * kernels/onednn's post_in_prim) */
static bool fconv_bf16_io(const op_ctx *ctx, const op_tensor *in, int n_in, bool output, int k) {
    const fused_conv_params *p = ctx->params;
    bool y_ok = !(p->has_post && p->act.act == KN_ACT_HARD_SIGMOID);
    return ops_conv_onednn_bf16_io(ctx, output, k, 3, y_ok);
}

/* Y may take the residual's buffer: the primitive accumulates into Y (its
 * sum post-op), so the copy of the residual into Y is then skipped */
const op_impl ops_impl_fused_conv_onednn = ONEDNN_GLUE_IMPL_IO(
    fconv_supports, fconv_prepare, fconv_run, fconv_bf16_io, op_inplace_residual3);

#else
typedef int fused_onednn_unused; /* ISO C forbids an empty translation unit */
#endif
