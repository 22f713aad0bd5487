/*
 * pool_onednn.c — MaxPool (without the Indices output) and AveragePool
 * (count_include_pad either way, ceil_mode, dilations, explicit and auto
 * pads) on oneDNN's pooling, f32, 1-3 spatial axes, in the plain NC[D]HW
 * layout, or channels-last (or blocked nC[d]hw16c with blocked=1) for mopt.ChannelsLast*Pool (the
 * layout pass). No state: the primitive is
 * cached per session and shape. Shapes oneDNN refuses, or would run on its reference kernel, are
 * declined: the executor runs the reference.
 */
#include "mopt_config.h"
#include "ops/impls.h"

#ifdef MOPT_HAVE_ONEDNN
#include <string.h>

#include "kernels/onednn/onednn.h"
#include "ops/onednn/onednn_glue.h"

static bool pool_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                          int n_out) {
    bool indices = n_out > 1 && ctx->node && ctx->node->outputs[1] >= 0;
    return onednn_available() && in[0].dtype == MOPT_DTYPE_F32 && !indices &&
           (in[0].shape.rank < 0 || (in[0].shape.rank >= 3 && in[0].shape.rank <= 5));
}

static mopt_status pool_run(const op_ctx *ctx, const op_tensor *in, op_tensor *out, bool max) {
    const ir_shape *x = &in[0].shape;
    if (x->rank < 3 || x->rank > 5 || op_numel(&out[0]) == 0) return MOPT_ERR_UNSUPPORTED;
    ref_pool_params p;
    mopt_status st = ops_pool_geometry(ctx, x, &out[0].shape, &p);
    if (st) return st;
    onednn_pool_desc d;
    memset(&d, 0, sizeof d);
    d.S = x->rank - 2;
    d.batch = x->dims[0];
    d.c = x->dims[1];
    d.max = max;
    d.nhwc = ops_pool_channels_last(ctx) && !ops_pool_blocked(ctx);
    d.blk = ops_pool_blocked(ctx);
    d.include_pad = p.count_include_pad;
    int32_t lead = REF_WIN_MAX - d.S;
    for (int32_t i = 0; i < d.S; i++) {
        d.in[i] = p.in[lead + i];
        d.out[i] = p.out[lead + i];
        d.k[i] = p.k[lead + i];
        d.stride[i] = p.stride[lead + i];
        d.dilation[i] = p.dilation[lead + i];
        d.pad_l[i] = p.pad[lead + i];
        /* the declared end pad, or the ceil_mode overhang past it */
        int64_t need =
            (d.out[i] - 1) * d.stride[i] + (d.k[i] - 1) * d.dilation[i] + 1 - d.in[i] - d.pad_l[i];
        d.pad_r[i] = need > p.pad_end[lead + i] ? need : p.pad_end[lead + i];
        /* oneDNN's include_padding divides by the whole window: an overhang
         * past the declared pads would count taps the reference does not */
        if (!max && d.include_pad && need > p.pad_end[lead + i]) return MOPT_ERR_UNSUPPORTED;
    }
    return onednn_pool_run((onednn_cache **)ctx->scratch, &d, in[0].data, out[0].data,
                           ctx->threads);
}

static mopt_status maxpool_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    return pool_run(ctx, in, out, true);
}

static mopt_status avgpool_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    return pool_run(ctx, in, out, false);
}

const op_impl ops_impl_maxpool_onednn = ONEDNN_GLUE_IMPL(pool_supports, NULL, maxpool_run);
const op_impl ops_impl_avgpool_onednn = ONEDNN_GLUE_IMPL(pool_supports, NULL, avgpool_run);

#else
typedef int pool_onednn_unused; /* ISO C forbids an empty translation unit */
#endif
