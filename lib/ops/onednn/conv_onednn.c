/*
 * conv_onednn.c — Conv on oneDNN (kernels/onednn): f32, 1-3 spatial axes,
 * groups and depthwise, strides, dilations, explicit and auto pads, bias.
 * The weights must be constant. Problems oneDNN refuses go to the reference
 * run. Weight layout per opt_level (issue 5: prepacking is level 3):
 *  - "onednn" / "onednn-bf16" (any level): W stays in its stored [O, I, k...]
 *    layout (f32: the model's buffer itself; bf16: converted once at build);
 *  - "onednn-packed" / "onednn-bf16-packed" (opt_level >= 3): W is reordered
 *    once at model build into oneDNN's preferred (blocked) layout for the
 *    load-time shape (batch 1 and 32 for unknown sizes), and once per cached
 *    primitive when a run-time shape wants another layout.
 */
#include "mopt_config.h"
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
    return MOPT_OK;
}

static bool conv_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                          int n_out) {
    bool has_b = n_in > 2 && in[2].dtype != MOPT_DTYPE_UNDEFINED;
    const ir_shape *w = &in[1].shape;
    return onednn_available() && in[0].dtype == MOPT_DTYPE_F32 && in[1].dtype == MOPT_DTYPE_F32 &&
           (!has_b || in[2].dtype == MOPT_DTYPE_F32) && in[1].data != NULL && w->rank >= 3 &&
           w->rank <= 5;
}

static mopt_status conv_prepare_p(const op_ctx *ctx, const op_tensor *in, int n_in,
                                  onednn_prec prec, bool plain, void **state) {
    *state = NULL;
    const ir_shape *w = &in[1].shape;
    /* a representative X: batch 1, channels from W, unknown sizes 32 */
    ir_shape x;
    memset(&x, 0, sizeof x);
    x.rank = w->rank;
    x.dims[0] = 1;
    x.dims[1] = w->dims[1] * ir_node_attr_int(ctx->node, "group", 1);
    for (int32_t i = 2; i < x.rank; i++) {
        const ir_shape *s = &in[0].shape;
        x.dims[i] = s->rank == x.rank && s->syms[i] == 0 ? s->dims[i] : 32;
    }
    bool has_b = n_in > 2 && in[2].dtype != MOPT_DTYPE_UNDEFINED;
    onednn_conv_desc d;
    mopt_clear_error();
    if (ops_conv_onednn_desc(ctx, &x, w, has_b, &d)) {
        mopt_clear_error(); /* odd geometry for the guess: layouts chosen per run */
        return MOPT_OK;
    }
    onednn_weights *pw = NULL;
    d.prec = prec;
    d.plain_w = plain;
    mopt_status st = onednn_conv_pack(&d, in[1].data, 1, &pw);
    if (st == MOPT_ERR_UNSUPPORTED) {
        /* f32: layouts are then chosen per run; bf16: let f32 take over */
        mopt_clear_error();
        return prec == ONEDNN_BF16 ? MOPT_ERR_UNSUPPORTED : MOPT_OK;
    }
    *state = pw;
    return st;
}

static mopt_status conv_run_p(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out, onednn_prec prec, bool plain) {
    bool has_b = n_in > 2 && in[2].dtype != MOPT_DTYPE_UNDEFINED;
    onednn_conv_desc d;
    mopt_status st = ops_conv_onednn_desc(ctx, &in[0].shape, &in[1].shape, has_b, &d);
    if (st) return st;
    if (d.batch == 0 || d.c_out == 0) return MOPT_OK;
    d.prec = prec;
    d.plain_w = plain;
    st = onednn_conv_run((onednn_cache **)ctx->scratch, &d, ctx->state, in[0].data, in[1].data,
                         has_b ? in[2].data : NULL, NULL, out[0].data, ctx->threads);
    return onednn_glue_or_ref(st, ctx, in, n_in, out, n_out);
}

static bool is_bf16(const op_ctx *ctx) { return onednn_glue_prec_is(ctx, OP_PREC_BF16); }

/* A "-packed" impl's prepare keeps the node only when W really was reordered
 * into another layout (or will be, per run-time shape, when the load-time
 * guess did not fit); otherwise the plain impl (next in the list) runs it. */
static mopt_status packed_or_step_aside(const op_ctx *ctx, const op_tensor *in, int n_in,
                                        onednn_prec prec, void **state) {
    mopt_status st = conv_prepare_p(ctx, in, n_in, prec, false, state);
    if (st || !*state || !onednn_weights_plain(*state)) return st;
    onednn_glue_weights_release(*state);
    *state = NULL;
    return MOPT_ERR_UNSUPPORTED;
}

/* One impl per precision (f32, bf16) and weights layout (stored, packed).
 * bf16: bf16 X and W, f32 accumulation, bias and output. */
#define CONV_IMPL(ident, iname, prec, plain, sup)                                                  \
    static bool ident##_supports(const op_ctx *ctx, const op_tensor *in, int n_in,                 \
                                 const op_tensor *out, int n_out) {                                \
        return (sup) && conv_supports(ctx, in, n_in, out, n_out);                                  \
    }                                                                                              \
    static mopt_status ident##_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,           \
                                       const op_tensor *out, int n_out, void **state) {            \
        return plain ? conv_prepare_p(ctx, in, n_in, prec, true, state)                            \
                     : packed_or_step_aside(ctx, in, n_in, prec, state);                           \
    }                                                                                              \
    static mopt_status ident##_run(const op_ctx *ctx, const op_tensor *in, int n_in,               \
                                   op_tensor *out, int n_out) {                                    \
        return conv_run_p(ctx, in, n_in, out, n_out, prec, plain);                                 \
    }                                                                                              \
    ONEDNN_GLUE_IMPL_TABLE(ident, iname, onednn_glue_weights_release)

CONV_IMPL(conv_onednn, "onednn", ONEDNN_F32, true, true)
CONV_IMPL(conv_onednn_packed, "onednn-packed", ONEDNN_F32, false, ctx->opt_level >= 3)
CONV_IMPL(conv_onednn_bf16, "onednn-bf16", ONEDNN_BF16, true, is_bf16(ctx))
CONV_IMPL(conv_onednn_bf16_packed, "onednn-bf16-packed", ONEDNN_BF16, false,
          is_bf16(ctx) && ctx->opt_level >= 3)

#else
typedef int conv_onednn_unused; /* ISO C forbids an empty translation unit */
#endif
