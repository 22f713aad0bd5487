/*
 * conv.h — Conv's parsed attributes and its shape inference and reference
 * run (conv.c), for the code that runs a Conv outside conv.c: the op that
 * wraps one (mopt.FusedConv, fused.c) and Conv's backend implementations
 * (ops_conv_geometry in impls.h). These functions read ctx->params as a
 * conv_params: an op that calls them with its own ctx must have params that
 * start with a conv_params (parsed by ops_conv_parse).
 */
#ifndef MOPT_OPS_CONV_H
#define MOPT_OPS_CONV_H

#include "ops/ops.h"
#include "ops/window.h"

/* Bits of conv_params.layout: which tensors are channels-last in memory. */
#define CONV_LAYOUT_X_NHWC 1 /* X is [N, spatial..., C] in memory */
#define CONV_LAYOUT_Y_NHWC 2 /* Y (and FusedConv's residual) likewise */
/* oneDNN's blocked layout (nCw16c / nChw16c / nCdhw16c: channels in blocks
 * of 16, each block [N, C/16, spatial..., 16]) for tensors whose channel
 * count is a multiple of 16 (so no padding: the plain layout's size). At
 * most one of the X bits and one of the Y bits is set. */
#define CONV_LAYOUT_X_BLK16 4
#define CONV_LAYOUT_Y_BLK16 8
#define CONV_LAYOUT_X (CONV_LAYOUT_X_NHWC | CONV_LAYOUT_X_BLK16)
#define CONV_LAYOUT_Y (CONV_LAYOUT_Y_NHWC | CONV_LAYOUT_Y_BLK16)
#define CONV_BLK 16 /* channels per block */

typedef struct conv_params {
    int64_t group;       /* >= 1 */
    op_window_attrs win; /* kernel_shape (optional), strides, dilations, pads, auto_pad */
    int32_t layout;      /* CONV_LAYOUT_* bits: 0 for Conv; mopt.FusedConv's
                            `layout` attribute (set by pass_layout.c) */
} conv_params;

/* Copies a [N, C, spatial... (n_sp elements)] tensor between the plain
 * layout and channels-last (to_nhwc: plain -> channels-last). */
void ops_conv_relayout(const float *src, float *dst, int64_t n, int64_t c, int64_t n_sp,
                       bool to_nhwc);
/* Likewise between the plain layout and the blocked one (c a multiple of
 * CONV_BLK; to_blk: plain -> blocked). */
void ops_conv_relayout_blk(const float *src, float *dst, int64_t n, int64_t c, int64_t n_sp,
                           bool to_blk);
/* Whether `layout` is a valid set of CONV_LAYOUT_* bits. */
bool ops_conv_layout_valid(int64_t layout);

/* Reads group and the window attributes into a conv_params. */
mopt_status ops_conv_parse(const op_ctx *ctx, void *params);
/* Conv's shape inference and reference run (ctx->params: a conv_params). */
mopt_status ops_conv_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out);
mopt_status ops_conv_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                         int n_out);

#endif
