/*
 * conv_onednn.c — Conv on oneDNN (kernels/onednn): f32, 1-3 spatial axes,
 * groups and depthwise, strides, dilations, explicit and auto pads, bias.
 * The weights must be constant. Problems oneDNN refuses are declined
 * (MOPT_ERR_UNSUPPORTED: the executor runs the reference). One impl; its
 * prepare picks the variant (onednn_glue.h), the weight layout per opt_level
 * (issue 5: prepacking is level 3):
 *  - "onednn" / "onednn-bf16" (any level): W stays in its stored [O, I, k...]
 *    layout (f32: the model's buffer itself; bf16: converted once at build);
 *  - "onednn-packed" / "onednn-bf16-packed" (opt_level >= 3): W is reordered
 *    once at model build into oneDNN's preferred (blocked) layout for the
 *    load-time shape (batch 1 and 32 for unknown sizes), and once per cached
 *    primitive when a run-time shape wants another layout;
 *  - "onednn-wino" (f32, opt_level >= 3, tried before the first f32
 *    variant, so also under int8 without a table and bf16 without AVX-512):
 *    W reordered at build for oneDNN's Winograd kernels (3x3 stride-1
 *    convs, >= 16 channels; onednn_conv_desc.wino); a run whose shape they
 *    refuse takes the direct convolution.
 * At precision=bf16 on AMX (ops_conv_bf16_amx) a bf16 variant reads X (and
 * FusedConv's residual) and writes Y stored bf16 when the runtime's storage
 * plan keeps them so (op_impl.bf16_io; onednn_conv_desc.x_bf16, ...), and a
 * depthwise conv takes only the f32 variants (oneDNN has no AMX depthwise
 * kernel; its f32 one is twice as fast as its bf16 ones).
 * FusedConv (fused_onednn.c) shares the support test and prepare.
 */
#include "mopt_config.h"
#include "ops/conv.h"
#include "ops/impls.h"

#ifdef MOPT_HAVE_ONEDNN
#include <string.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/onednn/onednn.h"
#include "ops/onednn/onednn_glue.h"

mopt_status ops_conv_onednn_desc(const op_ctx *ctx, const ir_shape *x, const ir_shape *w,
                                 bool has_b, onednn_conv_desc *d) {
    ref_conv_params p;
    int64_t pad_end[REF_WIN_MAX];
    mopt_status st = ops_conv_geometry(ctx, x, w, &p, pad_end);
    if (st) return st;
    memset(d, 0, sizeof *d);
    d->S = x->rank - 2;
    d->batch = p.batch;
    d->c_in = p.c_in;
    d->c_out = p.c_out;
    d->group = p.group;
    int32_t lead = REF_WIN_MAX - d->S;
    for (int32_t i = 0; i < d->S; i++) {
        d->in[i] = p.in[lead + i];
        d->out[i] = p.out[lead + i];
        d->k[i] = p.k[lead + i];
        d->stride[i] = p.stride[lead + i];
        d->dilation[i] = p.dilation[lead + i];
        d->pad_l[i] = p.pad[lead + i];
        d->pad_r[i] = pad_end[lead + i];
    }
    d->has_bias = has_b;
    int32_t layout = ((const conv_params *)ctx->params)->layout;
    d->x_nhwc = (layout & CONV_LAYOUT_X_NHWC) != 0;
    d->y_nhwc = (layout & CONV_LAYOUT_Y_NHWC) != 0;
    d->x_blk = (layout & CONV_LAYOUT_X_BLK16) != 0;
    d->y_blk = (layout & CONV_LAYOUT_Y_BLK16) != 0;
    /* a blocked tensor must fill its blocks (fused.c checks it at inference) */
    if ((d->x_blk && d->c_in % CONV_BLK) || (d->y_blk && d->c_out % CONV_BLK))
        return MOPT_ERR_UNSUPPORTED;
    return MOPT_OK;
}

bool ops_conv_onednn_supports(const op_ctx *ctx, const op_tensor *in, int n_in,
                              const op_tensor *out, int n_out) {
    bool has_b = op_has_input(in, n_in, 2);
    const ir_shape *w = &in[1].shape;
    return onednn_available() && in[0].dtype == MOPT_DTYPE_F32 && in[1].dtype == MOPT_DTYPE_F32 &&
           (!has_b || in[2].dtype == MOPT_DTYPE_F32) && in[1].data != NULL && w->rank >= 3 &&
           w->rank <= 5;
}

/* Prepares W for variant v with a representative X (batch 1, channels from
 * W and the group, unknown sizes 32). *w stays NULL when the guess does not
 * fit (layouts are then chosen per run) and for f32 W read as stored. The
 * Winograd variant steps aside (UNSUPPORTED) unless W was packed for it. */
static mopt_status conv_try(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                            const onednn_glue_variant *v, onednn_weights **w) {
    const ir_shape *ws = &in[1].shape;
    ir_shape x;
    onednn_glue_guess_x(&in[0].shape, ws, ws->dims[1] * ((const conv_params *)ctx->params)->group,
                        &x);
    bool has_b = op_has_input(in, n_in, 2);
    onednn_conv_desc d;
    mopt_clear_error();
    if (ops_conv_onednn_desc(ctx, &x, ws, has_b, &d)) {
        mopt_clear_error(); /* odd geometry for the guess: layouts chosen per run */
        return v->wino ? MOPT_ERR_UNSUPPORTED : MOPT_OK;
    }
    d.prec = v->prec;
    d.plain_w = v->plain;
    d.wino = v->wino;
    mopt_status st = onednn_conv_pack(&d, in[1].data, 1, w);
    if (v->wino) /* W in the Winograd layout, or the next variant */
        return st == MOPT_OK && *w ? MOPT_OK : st == MOPT_OK ? MOPT_ERR_UNSUPPORTED : st;
    return onednn_glue_conv_keep(v, st, w);
}

/* Whether W [O, I / group, k...] is a depthwise conv's: one input and one
 * output channel per group. */
static bool conv_depthwise(const op_ctx *ctx, const ir_shape *w) {
    int64_t group = ((const conv_params *)ctx->params)->group;
    return group > 1 && w->syms[0] == 0 && w->syms[1] == 0 && w->dims[0] == group &&
           w->dims[1] == 1;
}

mopt_status ops_conv_onednn_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                                    const op_tensor *out, int n_out, void **state) {
    onednn_glue_variant v[6];
    int n = onednn_glue_variants(ctx, false, true, v);
    /* a depthwise conv runs f32 at precision=bf16 on AMX: oneDNN 2.6 has no
     * AMX depthwise kernel, and its f32 jit_dw runs MobileNetV3's channels-
     * last depthwise convs in 0.45-0.65x the time of its bf16 ones
     * (brdgmm_dw, jit_dw; Xeon model 207, 1 thread) */
    if (conv_depthwise(ctx, &in[1].shape) && ops_conv_bf16_amx()) {
        int f = 0;
        for (int i = 0; i < n; i++)
            if (v[i].prec != ONEDNN_BF16) v[f++] = v[i];
        n = f;
    }
    /* Winograd (less exact than the direct conv: opt_level 3 only), tried
     * before the first f32 variant: at fp32, and wherever this conv runs in
     * f32 under another precision (int8 without a calibration table has no
     * int8 conv; bf16 without AVX-512 runs the f32 variants) */
    if (ctx->opt_level >= 3 && in[1].data) {
        int f = 0;
        while (f < n && v[f].prec != ONEDNN_F32)
            f++;
        memmove(v + f + 1, v + f, (size_t)(n - f) * sizeof v[0]);
        v[f] = (onednn_glue_variant){ONEDNN_F32, false, "onednn-wino", true};
        n++;
    }
    mopt_status st = onednn_glue_choose(ctx, in, n_in < 3 ? n_in : 3, out, v, n, conv_try, state);
    if (!st) st = ops_conv_onednn_gemv_prepare(ctx, in, n_in, *state);
    if (st) {
        onednn_glue_release(*state);
        *state = NULL;
    }
    return st;
}

/* Whether d is a 1x1 kernel on a 1x1 image, one group, no padding. */
static bool conv_is_gemv(const onednn_conv_desc *d) {
    if (d->group != 1) return false;
    for (int32_t i = 0; i < d->S; i++)
        if (d->in[i] != 1 || d->out[i] != 1 || d->k[i] != 1 || d->pad_l[i] || d->pad_r[i])
            return false;
    return true;
}

mopt_status ops_conv_onednn_gemv_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                                         onednn_glue_state *s) {
    const ir_shape *x = &in[0].shape, *w = &in[1].shape;
    if (x->rank != w->rank) return MOPT_OK;
    ir_shape x1 = *x; /* batch 1 (the only batch the GEMV runs) */
    x1.dims[0] = 1;
    x1.syms[0] = 0;
    for (int32_t i = 1; i < x1.rank; i++)
        if (x1.syms[i] != 0) return MOPT_OK;
    onednn_conv_desc d;
    bool has_b = op_has_input(in, n_in, 2);
    if (ops_conv_onednn_desc(ctx, &x1, w, has_b, &d)) {
        mopt_clear_error();
        return MOPT_OK;
    }
    if (!conv_is_gemv(&d)) return MOPT_OK;
    return onednn_glue_gemv_pack(ctx, s, in[1].data, d.c_in, d.c_out, true); /* W is [O, I] */
}

/* y [M, N] = act(y + bias [N] + residual [M, N]) in place (bias, residual
 * and act may be NULL), on the GEMV's vector tier k: the sums in
 * ref_epilogue_f32's order (bit-identical), the activation cpu_unary_f32's. */
static void gemv_epilogue(const cpu_kernels *k, float *y, int64_t M, int64_t N, const float *bias,
                          const float *residual, const kn_act_params *act) {
    if (bias)
        for (int64_t m = 0; m < M; m++)
            k->binary_f32(CPU_BIN_ADD, y + m * N, 1, bias, 1, y + m * N, N);
    if (residual) k->binary_f32(CPU_BIN_ADD, y, 1, residual, 1, y, M * N);
    if (act && act->act != KN_ACT_NONE) {
        const cpu_unary_params up = {act->alpha, act->beta};
        k->unary_f32((cpu_unop)act->act, y, y, M * N, &up);
    }
}

mopt_status ops_conv_onednn_gemv_run(const op_ctx *ctx, const op_tensor *in, int n_in,
                                     op_tensor *out, const float *residual,
                                     const kn_act_params *act) {
    const onednn_glue_state *s = ctx->state;
    if (!s->gemv) return MOPT_ERR_UNSUPPORTED;
    bool has_b = op_has_input(in, n_in, 2);
    onednn_conv_desc d;
    mopt_status st = ops_conv_onednn_desc(ctx, &in[0].shape, &in[1].shape, has_b, &d);
    if (st) return st;
    if (d.batch < 1 || d.batch > CPU_GEMV_MAX_ROWS || !conv_is_gemv(&d) || d.c_in != s->gemv_K ||
        d.c_out != s->gemv_N)
        return MOPT_ERR_UNSUPPORTED;
    /* X [batch, c_in, 1...] and Y [batch, c_out, 1...] are rows in any
     * layout (channels-last of a 1x1 image is the plain one) */
    float *y = out[0].data;
    onednn_glue_gemv_rows(ctx, in[0].data, d.batch, y);
    gemv_epilogue(s->gemv_k, y, d.batch, d.c_out, has_b ? in[2].data : NULL, residual, act);
    return MOPT_OK;
}

static mopt_status conv_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    const onednn_glue_state *s = ctx->state;
    bool has_b = op_has_input(in, n_in, 2);
    onednn_conv_desc d;
    mopt_status st = ops_conv_onednn_desc(ctx, &in[0].shape, &in[1].shape, has_b, &d);
    if (st) return st;
    if (d.batch == 0 || d.c_out == 0) return MOPT_OK;
    if (s->gemv && ops_conv_onednn_gemv_run(ctx, in, n_in, out, NULL, NULL) == MOPT_OK)
        return MOPT_OK;
    d.prec = s->v.prec;
    d.plain_w = s->v.plain;
    d.wino = s->v.wino;
    ops_conv_onednn_bf16_desc(&in[0], NULL, &out[0], &d);
    return onednn_conv_run((onednn_cache **)ctx->scratch, &d, s->w, in[0].data, in[1].data,
                           has_b ? in[2].data : NULL, NULL, out[0].data, ctx->threads);
}

bool ops_conv_onednn_bf16_io(const op_ctx *ctx, bool output, int k, int res, bool y_ok) {
    const onednn_glue_state *s = ctx->state;
    if (!s || s->v.prec != ONEDNN_BF16 || s->gemv || !ops_conv_bf16_amx()) return false;
    return output ? k == 0 && y_ok : k == 0 || k == res;
}

void ops_conv_onednn_bf16_desc(const op_tensor *x, const op_tensor *res, const op_tensor *y,
                               onednn_conv_desc *d) {
    d->x_bf16 = x->dtype == MOPT_DTYPE_BF16;
    d->res_bf16 = res && res->dtype == MOPT_DTYPE_BF16;
    d->y_bf16 = y->dtype == MOPT_DTYPE_BF16;
}

/* bf16 storage (precision=bf16 on AMX): X and Y */
static bool conv_bf16_io(const op_ctx *ctx, const op_tensor *in, int n_in, bool output, int k) {
    return ops_conv_onednn_bf16_io(ctx, output, k, -1, true);
}

const op_impl ops_impl_conv_onednn = ONEDNN_GLUE_IMPL_BF16(
    ops_conv_onednn_supports, ops_conv_onednn_prepare, conv_run, conv_bf16_io);

#else
typedef int conv_onednn_unused; /* ISO C forbids an empty translation unit */
#endif
