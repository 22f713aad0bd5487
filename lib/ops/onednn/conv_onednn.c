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
 *    primitive when a run-time shape wants another layout.
 * FusedConv (fused_onednn.c) shares the support test and prepare.
 */
#include "mopt_config.h"
#include "ops/conv.h"
#include "ops/impls.h"

#ifdef MOPT_HAVE_ONEDNN
#include <string.h>

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
    return MOPT_OK;
}

bool ops_conv_onednn_supports(const op_ctx *ctx, const op_tensor *in, int n_in,
                              const op_tensor *out, int n_out) {
    bool has_b = n_in > 2 && in[2].dtype != MOPT_DTYPE_UNDEFINED;
    const ir_shape *w = &in[1].shape;
    return onednn_available() && in[0].dtype == MOPT_DTYPE_F32 && in[1].dtype == MOPT_DTYPE_F32 &&
           (!has_b || in[2].dtype == MOPT_DTYPE_F32) && in[1].data != NULL && w->rank >= 3 &&
           w->rank <= 5;
}

/* Prepares W for variant v with a representative X (batch 1, channels from
 * W and the group, unknown sizes 32). *w stays NULL when the guess does not
 * fit (layouts are then chosen per run) and for f32 W read as stored. */
static mopt_status conv_try(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                            const onednn_glue_variant *v, onednn_weights **w) {
    const ir_shape *ws = &in[1].shape;
    ir_shape x;
    onednn_glue_guess_x(&in[0].shape, ws, ws->dims[1] * ((const conv_params *)ctx->params)->group,
                        &x);
    bool has_b = n_in > 2 && in[2].dtype != MOPT_DTYPE_UNDEFINED;
    onednn_conv_desc d;
    mopt_clear_error();
    if (ops_conv_onednn_desc(ctx, &x, ws, has_b, &d)) {
        mopt_clear_error(); /* odd geometry for the guess: layouts chosen per run */
        return MOPT_OK;
    }
    d.prec = v->prec;
    d.plain_w = v->plain;
    return onednn_glue_conv_keep(v, onednn_conv_pack(&d, in[1].data, 1, w), w);
}

mopt_status ops_conv_onednn_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                                    const op_tensor *out, int n_out, void **state) {
    onednn_glue_variant v[5];
    int n = onednn_glue_variants(ctx, false, true, v);
    return onednn_glue_choose(ctx, in, n_in < 3 ? n_in : 3, out, v, n, conv_try, state);
}

static mopt_status conv_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    const onednn_glue_state *s = ctx->state;
    bool has_b = n_in > 2 && in[2].dtype != MOPT_DTYPE_UNDEFINED;
    onednn_conv_desc d;
    mopt_status st = ops_conv_onednn_desc(ctx, &in[0].shape, &in[1].shape, has_b, &d);
    if (st) return st;
    if (d.batch == 0 || d.c_out == 0) return MOPT_OK;
    d.prec = s->v.prec;
    d.plain_w = s->v.plain;
    return onednn_conv_run((onednn_cache **)ctx->scratch, &d, s->w, in[0].data, in[1].data,
                           has_b ? in[2].data : NULL, NULL, out[0].data, ctx->threads);
}

const op_impl ops_impl_conv_onednn =
    ONEDNN_GLUE_IMPL(ops_conv_onednn_supports, ops_conv_onednn_prepare, conv_run);

#else
typedef int conv_onednn_unused; /* ISO C forbids an empty translation unit */
#endif
