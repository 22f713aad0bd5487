/*
 * qstatic.h — private to the static INT8 operators (qstatic.c, issue 13)
 * and their cpu impls (cpu/qstatic_cpu.c): params and the shared run.
 *   mopt.StaticQMatMul  Y = act(scale[n] * sum_k (qx[m,k] - x_zp) w[k,n] + bias[n])
 *   mopt.StaticQConv    Y = act(scale[c] * conv(qx - x_zp, w)[c] + bias[c]) [* post_scale
 *                       + post_shift: the scalar affine of the FusedConv it replaced]
 * X is f32 (quantized on entry with the calibrated x_scale, x_zero_point
 * to u8) or already u8 (the previous static node's output); W is s8,
 * symmetric (no zero point), per output channel; scale = x_scale *
 * w_scale[c] (* alpha). With y_scale > 0 the output is u8, quantized with
 * y_scale / y_zero_point (the next static node's input), else f32.
 * Inputs: X, W, scale, bias (optional), residual (optional, f32 with Y's
 * shape, added before the activation). StaticQConv's `layout` attribute
 * (pass_layout.c; ops/conv.h CONV_LAYOUT_*) says X and/or Y (and the
 * residual) are channels-last in memory: the oneDNN impl takes them as
 * they are, ops_qstatic_run converts to plain and back.
 * A depthwise StaticQConv may carry x_channel_scales (one per input
 * channel, pass_quant_static.c): X (then always f32) is quantized with
 * x_channel_scales[c] and x_zero_point per channel; the scale input already
 * holds x_channel_scales[c] * w_scale[o] for the channel c that output
 * channel o reads.
 */
#ifndef MOPT_OPS_QSTATIC_H
#define MOPT_OPS_QSTATIC_H

#include "kernels/kernels.h"
#include "kernels/ref/ref_conv_quant.h"
#include "ops/conv.h"
#include "ops/ops.h"

typedef struct qstatic_params {
    conv_params conv; /* first: Conv's geometry reads it (StaticQConv only) */
    bool is_conv;     /* StaticQConv (else StaticQMatMul), decided at parse */
    float x_scale;
    int32_t x_zp;
    const float *x_cs; /* x_channel_scales (the node's attribute), or NULL */
    int64_t n_cs;
    float y_scale; /* 0: f32 output */
    int32_t y_zp;
    kn_act_params act;
    bool has_post; /* Y = act(...) * post_scale + post_shift (a FusedConv's post affine) */
    float post_scale, post_shift;
} qstatic_params;

/* The kernels a run uses: quantizing f32 to u8, the integer convolution
 * (exact s32 sums, like ref_conv_s32), and the u8 x s8 row product
 * y[r * ldy + n] = sum_k a[r * K + k] * w[k * N + n] for rows r < m
 * (ldy >= N rounded up to 16; columns past N may be written). The rows
 * product reads the state its prepare made (none for the reference). */
typedef struct qstatic_kernels {
    void (*quantize)(const float *x, int64_t n, float scale, float zp, uint8_t *y);
    mopt_status (*conv)(const op_ctx *ctx, const ref_conv_params *g, const ref_qconv_args *a,
                        int32_t *acc);
    void (*rows)(const op_ctx *ctx, const uint8_t *a, int64_t m, int64_t K, const int8_t *w,
                 int64_t N, int32_t *y, int64_t ldy);
    /* y[i] = act(y[i]) for i < n */
    void (*act)(float *y, int64_t n, const kn_act_params *act);
} qstatic_kernels;

mopt_status ops_qstatic_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            const qstatic_kernels *k);

#endif
