/*
 * fused.h — private to the fused operators (mopt.FusedMatMul, mopt.FusedConv;
 * docs/fused_ops.md) and their backend impls: their params (parsed once
 * per node by fused.c).
 */
#ifndef MOPT_OPS_FUSED_H
#define MOPT_OPS_FUSED_H

#include "kernels/kernels.h"
#include "ops/conv.h"
#include "ops/ops.h"

/* mopt.FusedMatMul: Y = act(alpha * (op(A) @ op(B)) + bias + residual). */
typedef struct fused_matmul_params {
    bool trans_a, trans_b;
    float alpha;
    kn_act_params act;
} fused_matmul_params;

/* mopt.FusedConv: Y = act(conv(X, W) + B + residual). The convolution is
 * the Conv operator's (conv.h), on the same attributes, parsed by Conv's own
 * parse into the first member. */
typedef struct fused_conv_params {
    conv_params conv; /* first: Conv's functions read ctx->params as this */
    kn_act_params act;
    /* Y = post_scale * act(...) + post_shift when has_post (the attributes
     * post_scale, post_shift: a scalar affine after the activation) */
    bool has_post;
    float post_scale, post_shift;
} fused_conv_params;

/* mopt.FusedConvDw: a 1x1 FusedConv (X and its Y blocked, nChw16c) whose
 * Y only a depthwise FusedConv reads: Y = dw(pw(X, W1, B1), W2, B2). The
 * node carries the depthwise conv's attributes (as FusedConv) and the 1x1's
 * activation as pw_activation, pw_activation_alpha, pw_activation_beta
 * (pass_fuse_conv_dw.c). */
typedef struct fused_conv_dw_params {
    fused_conv_params dw; /* the depthwise conv, as the node's attributes */
    kn_act_params pw_act; /* the 1x1's activation */
} fused_conv_dw_params;

/* y[i] = y[i] * p->post_scale + p->post_shift over n floats, when p->has_post. */
void ops_fused_conv_post(const fused_conv_params *p, float *y, int64_t n);

/* The `activation`, `activation_alpha`, `activation_beta` attributes of
 * ctx->node (also read by the static INT8 ops, qstatic.c). */
mopt_status ops_fused_read_activation(const op_ctx *ctx, kn_act_params *p);

/* FusedMatMul's epilogue on the product already in Y (out[0]): Y =
 * act(Y + bias + residual), the bias (input 2) and the residual (input 3)
 * broadcast to Y when present; the reference epilogue, shared by the impls
 * whose product leaves it to us. */
void ops_fused_matmul_epilogue(const fused_matmul_params *p, const op_tensor *in, int n_in,
                               op_tensor *out);

/* The context FusedConv gives Conv's functions (infer, run, geometry) for
 * node ctx: ctx with Conv's op and params. */
void fused_conv_ctx(const op_ctx *ctx, op_ctx *conv_ctx);

/* The context FusedConvDw gives FusedConv's functions: ctx with the
 * depthwise conv's params, or with pw the 1x1's, built in *pw (group 1,
 * default window, blocked X and Y). */
void fused_conv_dw_ctx(const op_ctx *ctx, fused_conv_params *pw, op_ctx *out);

#endif
