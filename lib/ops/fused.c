/*
 * fused.c — the "fused" operator family (domain "mopt"), produced by the
 * load-time fusion passes (docs/fused_ops.md):
 *   mopt.FusedMatMul  Y = act(alpha * (op(A) @ op(B)) + bias + residual)
 *   mopt.FusedConv    Y = act(conv(X, W) + B + residual) * post_scale + post_shift
 * Attribute parsing (params in fused.h), shape/type inference (symbolic
 * dims) and reference runs: the products are the batched GEMM of kernels.h
 * (ref_gemm_batched_f32) and the Conv operator's own reference run, the
 * epilogue is ref_epilogue_f32 (kernels/ref/epilogue.c). The backend impls
 * are listed in lib/ops/impls.c.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/ref/ref_epilogue.h"
#include "kernels/ref/ref_matmul.h"
#include "ops/conv.h"
#include "ops/fused.h"
#include "ops/impls.h"
#include "ops/matmul.h"
#include "ops/op_common.h"

/* ---- activation attributes ---------------------------------------------- */

static const struct {
    const char *name;
    kn_act act;
    float alpha, beta; /* defaults */
} k_acts[] = {
    {"", KN_ACT_NONE, 0.0f, 0.0f},
    {"Relu", KN_ACT_RELU, 0.0f, 0.0f},
    {"LeakyRelu", KN_ACT_LEAKY_RELU, 0.01f, 0.0f},
    {"Clip", KN_ACT_CLIP, -INFINITY, INFINITY},
    {"HardSwish", KN_ACT_HARD_SWISH, 0.0f, 0.0f},
    {"HardSigmoid", KN_ACT_HARD_SIGMOID, 0.2f, 0.5f},
    {"Sigmoid", KN_ACT_SIGMOID, 0.0f, 0.0f},
    {"Tanh", KN_ACT_TANH, 0.0f, 0.0f},
    {"Gelu", KN_ACT_GELU, 0.0f, 0.0f},
    {"GeluTanh", KN_ACT_GELU_TANH, 0.0f, 0.0f},
    {"Swish", KN_ACT_SWISH, 0.0f, 0.0f},
};
#define N_ACTS (int)(sizeof k_acts / sizeof k_acts[0])

/* The `activation`, `activation_alpha` and `activation_beta` attributes
 * (defaults per docs/fused_ops.md). Fails (INVALID_MODEL) on an unknown
 * activation name. */
/* The activation named by attribute `prefix`activation (with
 * `prefix`activation_alpha, `prefix`activation_beta). */
static mopt_status read_activation_as(const op_ctx *ctx, const char *prefix, kn_act_params *p) {
    char an[40], aa[48], ab[48];
    snprintf(an, sizeof an, "%sactivation", prefix);
    snprintf(aa, sizeof aa, "%sactivation_alpha", prefix);
    snprintf(ab, sizeof ab, "%sactivation_beta", prefix);
    const char *name = ir_node_attr_string(ctx->node, an, "");
    for (int i = 0; i < N_ACTS; i++) {
        if (strcmp(k_acts[i].name, name) != 0) continue;
        p->act = k_acts[i].act;
        p->alpha = ir_node_attr_float(ctx->node, aa, k_acts[i].alpha);
        p->beta = ir_node_attr_float(ctx->node, ab, k_acts[i].beta);
        return MOPT_OK;
    }
    return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "unknown %s '%s'", an, name);
}

static mopt_status read_activation(const op_ctx *ctx, kn_act_params *p) {
    return read_activation_as(ctx, "", p);
}

mopt_status ops_fused_read_activation(const op_ctx *ctx, kn_act_params *p) {
    return read_activation(ctx, p);
}

/* ---- shared checks ------------------------------------------------------- */

/* Checks that addend p (bias, residual) broadcasts to y without growing it. */
static mopt_status check_addend(const op_ctx *ctx, const ir_shape *y, const op_tensor *p, int index,
                                const char *what) {
    mopt_status st = op_expect_f32(ctx, p, index);
    if (st) return st;
    const ir_shape *s = &p->shape;
    if (s->rank < 0 || y->rank < 0) return MOPT_OK;
    bool ok = s->rank <= y->rank;
    for (int32_t i = 0; ok && i < s->rank; i++) {
        int32_t j = y->rank - s->rank + i;
        if (s->syms[i] == 0 && s->dims[i] == 1) continue;
        if (s->syms[i] == 0 && y->syms[j] == 0 && s->dims[i] != y->dims[j]) ok = false;
        if (s->syms[i] > 0 && y->syms[j] > 0 && s->syms[i] != y->syms[j]) ok = false;
        if (s->syms[i] > 0 && y->syms[j] == 0 && y->dims[j] != 1) ok = false;
    }
    if (ok) return MOPT_OK;
    char a[IR_SHAPE_STR_CAP], b[IR_SHAPE_STR_CAP];
    return op_fail(ctx, MOPT_ERR_SHAPE, "%s %s does not broadcast to the output %s", what,
                   op_shape_str(ctx, s, a), op_shape_str(ctx, y, b));
}

static void addend_of(const op_tensor *in, int n_in, int k, const ir_shape *y, kn_addend *a) {
    memset(a, 0, sizeof *a);
    if (!op_has_input(in, n_in, k)) return;
    a->data = in[k].data;
    op_broadcast_strides(&in[k].shape, y, a->strides);
}

void ops_fused_matmul_epilogue(const fused_matmul_params *p, const op_tensor *in, int n_in,
                               op_tensor *out) {
    const ir_shape *y = &out[0].shape;
    kn_addend bias, res;
    addend_of(in, n_in, 2, y, &bias);
    addend_of(in, n_in, 3, y, &res);
    ref_epilogue_f32(y->rank, y->dims, out[0].data, &bias, &res, &p->act);
}

/* ---- mopt.FusedMatMul ----------------------------------------------------- */

static mopt_status fmm_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    (void)n_out;
    const fused_matmul_params *p = ctx->params;
    mopt_status st = op_expect_f32(ctx, &in[0], 0);
    if (!st) st = op_expect_f32(ctx, &in[1], 1);
    if (st) return st;
    out[0].dtype = MOPT_DTYPE_F32;
    bool ta = p->trans_a, tb = p->trans_b;
    const ir_shape *a = &in[0].shape, *b = &in[1].shape;
    char sa[IR_SHAPE_STR_CAP], sb[IR_SHAPE_STR_CAP];
    if ((a->rank >= 0 && a->rank < 2) || (b->rank >= 0 && b->rank < 2))
        return op_fail(ctx, MOPT_ERR_SHAPE, "operands must have rank >= 2; A is %s and B is %s",
                       op_shape_str(ctx, a, sa), op_shape_str(ctx, b, sb));
    if (a->rank < 0 || b->rank < 0) {
        ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    int32_t am = ta ? a->rank - 1 : a->rank - 2, bn = tb ? b->rank - 2 : b->rank - 1;
    if ((st = ops_matmul_check_k(ctx, a, ta, b, tb))) return st;
    ir_shape y;
    if ((st = ops_matmul_batch_dims(ctx, a, b, &y))) return st;
    if (y.rank + 2 > IR_MAX_RANK)
        return op_fail(ctx, MOPT_ERR_LIMIT, "output rank above %d", IR_MAX_RANK);
    ops_copy_dim(&y, y.rank++, a, am);
    ops_copy_dim(&y, y.rank++, b, bn);
    if (op_has_input(in, n_in, 2) && (st = check_addend(ctx, &y, &in[2], 2, "bias"))) return st;
    if (op_has_input(in, n_in, 3) && (st = check_addend(ctx, &y, &in[3], 3, "residual"))) return st;
    out[0].shape = y;
    return MOPT_OK;
}

static mopt_status fmm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    (void)n_out;
    const fused_matmul_params *p = ctx->params;
    kn_gemm g;
    if (!ops_matmul_gemm(&in[0].shape, p->trans_a, &in[1].shape, p->trans_b, &g))
        return op_fail(ctx, MOPT_ERR_INTERNAL, "shapes do not make a matrix product");
    g.alpha = p->alpha;
    ref_gemm_batched_f32(&g, in[0].data, in[1].data, out[0].data);
    ops_fused_matmul_epilogue(p, in, n_in, out);
    return MOPT_OK;
}

static mopt_status fmm_parse(const op_ctx *ctx, void *params) {
    fused_matmul_params *p = params;
    mopt_status st = read_activation(ctx, &p->act);
    if (st) return st;
    p->trans_a = ir_node_attr_int(ctx->node, "transA", 0) != 0;
    p->trans_b = ir_node_attr_int(ctx->node, "transB", 0) != 0;
    p->alpha = ir_node_attr_float(ctx->node, "alpha", 1.0f);
    return MOPT_OK;
}

/* ---- mopt.FusedConv ------------------------------------------------------- */

static mopt_status fconv_parse(const op_ctx *ctx, void *params) {
    fused_conv_params *p = params;
    mopt_status st = ops_conv_parse(ctx, &p->conv);
    if (st) return st;
    int64_t layout = ir_node_attr_int(ctx->node, "layout", 0);
    if (!ops_conv_layout_valid(layout))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "layout %" PRId64 " is not a set of CONV_LAYOUT_* bits (0..15, one X and "
                       "one Y layout)",
                       layout);
    p->conv.layout = (int32_t)layout;
    p->has_post = ir_node_attr(ctx->node, "post_scale") != NULL ||
                  ir_node_attr(ctx->node, "post_shift") != NULL;
    p->post_scale = ir_node_attr_float(ctx->node, "post_scale", 1.0f);
    p->post_shift = ir_node_attr_float(ctx->node, "post_shift", 0.0f);
    return read_activation(ctx, &p->act);
}

void ops_fused_conv_post(const fused_conv_params *p, float *y, int64_t n) {
    if (!p->has_post) return;
    const float a = p->post_scale, b = p->post_shift;
    for (int64_t i = 0; i < n; i++)
        y[i] = y[i] * a + b;
}

void fused_conv_ctx(const op_ctx *ctx, op_ctx *conv_ctx) {
    const fused_conv_params *p = ctx->params;
    *conv_ctx = *ctx;
    conv_ctx->params = &p->conv; /* Conv's functions read a conv_params */
}

static bool blk_fits(const ir_shape *s) {
    return s->rank >= 3 && s->rank <= 5 && s->syms[1] == 0 && s->dims[1] > 0 &&
           s->dims[1] % CONV_BLK == 0;
}

static mopt_status fconv_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    op_ctx cc;
    fused_conv_ctx(ctx, &cc);
    mopt_status st = ops_conv_infer(&cc, in, n_in < 3 ? n_in : 3, out, n_out);
    if (st) return st;
    if (op_has_input(in, n_in, 3)) st = check_addend(ctx, &out[0].shape, &in[3], 3, "residual");
    const fused_conv_params *p = ctx->params;
    if (!st && p->conv.layout && in[0].shape.rank >= 0 && in[0].shape.rank < 3)
        st = op_fail(ctx, MOPT_ERR_INVALID_MODEL, "a channels-last layout needs a spatial axis");
    /* a blocked tensor needs a known channel count that fills its blocks */
    if (!st && (p->conv.layout & CONV_LAYOUT_X_BLK16) && in[0].shape.rank >= 0 &&
        !blk_fits(&in[0].shape))
        st = op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                     "a blocked X needs 3-5 axes and a known channel count, a multiple of 16");
    if (!st && (p->conv.layout & CONV_LAYOUT_Y_BLK16) && out[0].shape.rank >= 0 &&
        !blk_fits(&out[0].shape))
        st = op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                     "a blocked Y needs 3-5 axes and a known channel count, a multiple of 16");
    if (!st && (p->conv.layout & CONV_LAYOUT_Y) && op_has_input(in, n_in, 3) &&
        in[3].shape.rank >= 0 && out[0].shape.rank >= 0) {
        /* a channels-last residual is read element for element */
        bool same = in[3].shape.rank == out[0].shape.rank;
        for (int32_t i = 0; same && i < out[0].shape.rank; i++)
            same = in[3].shape.syms[i] == out[0].shape.syms[i] &&
                   (in[3].shape.syms[i] != 0 || in[3].shape.dims[i] == out[0].shape.dims[i]);
        if (!same)
            st = op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                         "a channels-last or blocked output needs a residual of its shape");
    }
    return st;
}

/* Channels-last or blocked in memory (layout != 0): the reference works on
 * plain copies of X and the residual, then writes Y in its layout. */
static mopt_status fconv_run_plain(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                   int n_out);

static void shape_nc_sp(const ir_shape *s, int64_t *n, int64_t *c, int64_t *sp) {
    *n = s->dims[0];
    *c = s->dims[1];
    *sp = 1;
    for (int32_t i = 2; i < s->rank; i++)
        *sp *= s->dims[i];
}

static mopt_status fconv_run_relayout(const op_ctx *ctx, const op_tensor *in, int n_in,
                                      op_tensor *out, int n_out) {
    const fused_conv_params *p = ctx->params;
    op_tensor lin[4], lout = out[0];
    int n = n_in < 4 ? n_in : 4;
    for (int k = 0; k < n; k++)
        lin[k] = in[k];
    float *tmp[3] = {NULL, NULL, NULL};
    int64_t nb = 0, c = 0, sp = 0;
    mopt_status st = MOPT_OK;
    bool x_blk = (p->conv.layout & CONV_LAYOUT_X_BLK16) != 0;
    bool y_blk = (p->conv.layout & CONV_LAYOUT_Y_BLK16) != 0;
    if (p->conv.layout & CONV_LAYOUT_X) {
        shape_nc_sp(&in[0].shape, &nb, &c, &sp);
        tmp[0] = op_work_get(ctx, 0, (size_t)(nb * c * sp) * sizeof(float));
        if (!tmp[0]) st = MOPT_ERR_OUT_OF_MEMORY;
        if (!st)
            (x_blk ? ops_conv_relayout_blk : ops_conv_relayout)(in[0].data, tmp[0], nb, c, sp,
                                                                false);
        lin[0].data = tmp[0];
    }
    if (!st && (p->conv.layout & CONV_LAYOUT_Y)) {
        shape_nc_sp(&out[0].shape, &nb, &c, &sp);
        size_t bytes = (size_t)(nb * c * sp) * sizeof(float);
        tmp[1] = op_work_get(ctx, 1, bytes);
        if (!tmp[1]) st = MOPT_ERR_OUT_OF_MEMORY;
        lout.data = tmp[1];
        if (!st && op_has_input(in, n_in, 3)) {
            tmp[2] = op_work_get(ctx, 2, bytes);
            if (!tmp[2]) st = MOPT_ERR_OUT_OF_MEMORY;
            if (!st)
                (y_blk ? ops_conv_relayout_blk : ops_conv_relayout)(in[3].data, tmp[2], nb, c, sp,
                                                                    false);
            lin[3].data = tmp[2];
        }
    }
    if (!st) st = fconv_run_plain(ctx, lin, n, &lout, n_out);
    if (!st && (p->conv.layout & CONV_LAYOUT_Y))
        (y_blk ? ops_conv_relayout_blk : ops_conv_relayout)(tmp[1], out[0].data, nb, c, sp, true);
    for (int k = 0; k < 3; k++)
        op_work_put(ctx, tmp[k]);
    if (st == MOPT_ERR_OUT_OF_MEMORY)
        return op_fail(ctx, st, "out of memory for a channels-last copy");
    return st;
}

static mopt_status fconv_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    const fused_conv_params *p = ctx->params;
    if (p->conv.layout) return fconv_run_relayout(ctx, in, n_in, out, n_out);
    return fconv_run_plain(ctx, in, n_in, out, n_out);
}

static mopt_status fconv_run_plain(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                   int n_out) {
    const fused_conv_params *p = ctx->params;
    op_ctx cc;
    fused_conv_ctx(ctx, &cc);
    mopt_status st = ops_conv_run(&cc, in, n_in < 3 ? n_in : 3, out, n_out);
    if (st) return st;
    kn_addend res;
    addend_of(in, n_in, 3, &out[0].shape, &res);
    ref_epilogue_f32(out[0].shape.rank, out[0].shape.dims, out[0].data, NULL, &res, &p->act);
    ops_fused_conv_post(p, out[0].data, ir_shape_numel(&out[0].shape));
    return MOPT_OK;
}

static int64_t fmm_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                         int n_out) {
    const fused_matmul_params *p = ctx->params;
    return ops_matmul_flops(&in[0], p->trans_a, &out[0]);
}

static int64_t fconv_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                           int n_out) {
    op_ctx cc;
    fused_conv_ctx(ctx, &cc);
    return ops_conv_flops(&cc, in, n_in, out, n_out);
}

/* ---- mopt.FusedConvDw ------------------------------------------------------ */

static mopt_status fcdw_parse(const op_ctx *ctx, void *params) {
    fused_conv_dw_params *p = params;
    mopt_status st = fconv_parse(ctx, &p->dw);
    if (st) return st;
    if (!(p->dw.conv.layout & CONV_LAYOUT_X_BLK16))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "FusedConvDw needs a blocked X (layout)");
    return read_activation_as(ctx, "pw_", &p->pw_act);
}

void fused_conv_dw_ctx(const op_ctx *ctx, fused_conv_params *pw, op_ctx *out) {
    const fused_conv_dw_params *p = ctx->params;
    *out = *ctx;
    out->params = &p->dw;
    if (!pw) return;
    memset(pw, 0, sizeof *pw);
    pw->conv.group = 1;
    pw->conv.layout = CONV_LAYOUT_X_BLK16 | CONV_LAYOUT_Y_BLK16;
    op_window_attrs *w = &pw->conv.win;
    w->kernel_shape.n = w->strides.n = w->dilations.n = w->pads.n = -1;
    for (int i = 0; i < 2 * REF_WIN_MAX; i++)
        w->strides.v[i] = w->dilations.v[i] = 1;
    pw->act = p->pw_act;
    out->params = pw;
}

/* The 1x1's output shape (the intermediate) into *mid. */
static mopt_status fcdw_mid(const op_ctx *ctx, const op_tensor *in, op_tensor *mid) {
    op_ctx pc;
    fused_conv_params pw;
    fused_conv_dw_ctx(ctx, &pw, &pc);
    memset(mid, 0, sizeof *mid);
    return fconv_infer(&pc, in, 3, mid, 1);
}

static mopt_status fcdw_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    op_tensor mid;
    mopt_status st = fcdw_mid(ctx, in, &mid);
    if (st) return st;
    if (mid.shape.rank != 4 || in[3].shape.rank != 4)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "FusedConvDw needs 2-D convolutions");
    op_tensor din[4] = {mid, in[3], in[4], {0}};
    op_ctx dc;
    fused_conv_dw_ctx(ctx, NULL, &dc);
    return fconv_infer(&dc, din, 3, out, n_out);
}

/* The reference: the two FusedConv reference runs through a scratch copy of
 * the intermediate. */
static mopt_status fcdw_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    op_tensor mid;
    mopt_status st = fcdw_mid(ctx, in, &mid);
    if (st) return st;
    mid.dtype = MOPT_DTYPE_F32;
    mid.data = op_work_get(ctx, 3, (size_t)ir_shape_numel(&mid.shape) * sizeof(float));
    if (!mid.data)
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory for the 1x1's output");
    op_ctx pc, dc;
    fused_conv_params pw;
    fused_conv_dw_ctx(ctx, &pw, &pc);
    fused_conv_dw_ctx(ctx, NULL, &dc);
    st = fconv_run(&pc, in, 3, &mid, 1);
    op_tensor din[4] = {mid, in[3], in[4], {0}};
    if (!st) st = fconv_run(&dc, din, 3, out, n_out);
    op_work_put(ctx, mid.data);
    return st;
}

static int64_t fcdw_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                          int n_out) {
    op_tensor mid;
    if (fcdw_mid(ctx, in, &mid)) return 0;
    op_ctx pc, dc;
    fused_conv_params pw;
    fused_conv_dw_ctx(ctx, &pw, &pc);
    fused_conv_dw_ctx(ctx, NULL, &dc);
    op_tensor din[4] = {mid, in[3], in[4], {0}};
    return fconv_flops(&pc, in, 3, &mid, 1) + fconv_flops(&dc, din, 3, out, n_out);
}

/* Domain "mopt": never bridged. */
static const op_def k_ops[] = {
    {"FusedMatMul", "mopt", 2, 4, 1, 1, fmm_infer, fmm_run, ops_fused_matmul_impls,
     OP_PARAMS(fused_matmul_params, fmm_parse), .flops = fmm_flops},
    {"FusedConv", "mopt", 2, 4, 1, 1, fconv_infer, fconv_run, ops_fused_conv_impls,
     OP_PARAMS(fused_conv_params, fconv_parse), .flops = fconv_flops},
    {"FusedConvDw", "mopt", 5, 5, 1, 1, fcdw_infer, fcdw_run, ops_fused_conv_dw_impls,
     OP_PARAMS(fused_conv_dw_params, fcdw_parse), .flops = fcdw_flops},
};

OP_FAMILY(fused, k_ops)
