/*
 * ref_conv_quant.h — reference kernels of the "conv_quant" op family
 * (lib/ops/conv_quant.c): an integer convolution of int8/uint8 data and
 * weights with zero points (per tensor, or per output channel for the
 * weights) into int32, and the requantization of QLinearConv. Kernels never
 * see the IR.
 */
#ifndef MOPT_KERNELS_REF_CONV_QUANT_H
#define MOPT_KERNELS_REF_CONV_QUANT_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/ref/ref_conv.h"

typedef struct ref_qconv_args {
    const void *x; /* [batch, c_in, in...] int8 (x_s8) or uint8 */
    bool x_s8;
    int32_t x_zp;
    const void *w; /* [c_out, c_in / group, k...] int8 (w_s8) or uint8 */
    bool w_s8;
    const int32_t *w_zp;   /* 1 value, or c_out when w_zp_per_channel */
    bool w_zp_per_channel; /* */
    const int32_t *bias;   /* c_out values or NULL */
} ref_qconv_args;

/* How many int32 of scratch ref_conv_s32 needs. */
int64_t ref_conv_s32_work(const ref_conv_params *p);

/* y = conv(x - x_zp, w - w_zp) + bias in int32 arithmetic (sums wrap
 * modulo 2^32, as an int32 accumulator would); padding reads x_zp, i.e.
 * contributes 0. */
void ref_conv_s32(const ref_conv_params *p, const ref_qconv_args *a, int32_t *y, int32_t *work);

/* QLinearConv's output: y = saturate(round_half_even(acc * scale[m]) + y_zp)
 * for acc [batch, c_out, plane], scale per output channel (c_out values),
 * into int8 (y_s8) or uint8. */
void ref_requantize_s32(const int32_t *acc, int64_t batch, int64_t c_out, int64_t plane,
                        const float *scale, int32_t y_zp, bool y_s8, void *y);

#endif
