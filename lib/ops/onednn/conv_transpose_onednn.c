/*
 * conv_transpose_onednn.c — ConvTranspose on oneDNN's deconvolution
 * (kernels/onednn): f32 or bf16 (precision=bf16), 1-3 spatial axes, groups,
 * strides, dilations, explicit and auto pads, output_padding and
 * output_shape, bias. The weights must be constant. Variants as for Conv
 * (onednn_glue.h): W read as stored ("onednn", "onednn-bf16": converted
 * once) or reordered once at build into oneDNN's preferred layout
 * (opt_level 3: "onednn-packed", "onednn-bf16-packed"). Problems oneDNN
 * refuses, or would run on its reference kernels, are declined
 * (MOPT_ERR_UNSUPPORTED): the executor runs the reference.
 */
#include "mopt_config.h"
#include "ops/impls.h"

#ifdef MOPT_HAVE_ONEDNN
#include <string.h>

#include "kernels/onednn/onednn.h"
#include "ops/onednn/onednn_glue.h"

/* The deconvolution problem of X and W (shapes and data from in[0], in[1]). */
static mopt_status ct_desc(const op_ctx *ctx, const op_tensor *in, bool has_b,
                           onednn_conv_desc *d) {
    ref_window_nd g;
    int64_t m = 0, group = 1;
    mopt_status st = ops_conv_transpose_geometry(ctx, in, &g, &m, &group);
    if (st) return st;
    memset(d, 0, sizeof *d);
    d->S = g.nd;
    d->batch = in[0].shape.dims[0];
    d->c_in = in[0].shape.dims[1];
    d->c_out = m;
    d->group = group;
    for (int32_t i = 0; i < d->S; i++) {
        d->in[i] = g.in[i];
        d->out[i] = g.out[i];
        d->k[i] = g.k[i];
        d->stride[i] = g.stride[i];
        d->dilation[i] = g.dil[i];
        d->pad_l[i] = g.pad[i];
        /* what is left at the end; output_padding makes it smaller */
        d->pad_r[i] =
            (g.in[i] - 1) * g.stride[i] + (g.k[i] - 1) * g.dil[i] + 1 - g.pad[i] - g.out[i];
    }
    d->has_bias = has_b;
    return MOPT_OK;
}

/* Prepares W for variant v with a representative X (batch 1, channels from
 * W, unknown sizes 32); as conv_onednn.c's conv_try. */
static mopt_status ct_try(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                          const onednn_glue_variant *v, onednn_weights **w) {
    const ir_shape *ws = &in[1].shape;
    op_tensor t[2] = {in[0], in[1]};
    onednn_glue_guess_x(&in[0].shape, ws, ws->dims[0], &t[0].shape);
    bool has_b = op_has_input(in, n_in, 2);
    onednn_conv_desc d;
    mopt_clear_error();
    if (ct_desc(ctx, t, has_b, &d)) {
        mopt_clear_error(); /* odd geometry for the guess: layouts chosen per run */
        return MOPT_OK;
    }
    d.prec = v->prec;
    d.plain_w = v->plain;
    return onednn_glue_conv_keep(v, onednn_deconv_pack(&d, in[1].data, 1, w), w);
}

static mopt_status ct_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                              const op_tensor *out, int n_out, void **state) {
    onednn_glue_variant v[5];
    int n = onednn_glue_variants(ctx, false, true, v);
    return onednn_glue_choose(ctx, in, n_in < 3 ? n_in : 3, out, v, n, ct_try, state);
}

static mopt_status ct_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                          int n_out) {
    const onednn_glue_state *s = ctx->state;
    bool has_b = op_has_input(in, n_in, 2);
    onednn_conv_desc d;
    mopt_status st = ct_desc(ctx, in, has_b, &d);
    if (st) return st;
    if (has_b && op_numel(&in[2]) != d.c_out) return MOPT_ERR_UNSUPPORTED; /* ref says why */
    if (d.batch == 0 || d.c_out == 0) return MOPT_OK;
    d.prec = s->v.prec;
    d.plain_w = s->v.plain;
    return onednn_deconv_run((onednn_cache **)ctx->scratch, &d, s->w, in[0].data, in[1].data,
                             has_b ? in[2].data : NULL, out[0].data, ctx->threads);
}

const op_impl ops_impl_conv_transpose_onednn =
    ONEDNN_GLUE_IMPL(ops_conv_onednn_supports, ct_prepare, ct_run);

#else
typedef int conv_transpose_onednn_unused; /* ISO C forbids an empty translation unit */
#endif
