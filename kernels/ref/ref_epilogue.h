/*
 * ref_epilogue.h — the reference epilogue of the fused operators
 * (mopt.FusedMatMul, mopt.FusedConv): after the product, add a broadcast
 * bias, add a broadcast residual, then apply an activation, in place on the
 * output. Kernels see only pointers, shapes and small parameter structs,
 * never the IR.
 */
#ifndef MOPT_KERNELS_REF_EPILOGUE_H
#define MOPT_KERNELS_REF_EPILOGUE_H

#include <mopt/mopt.h>
#include <stdbool.h>

#include "kernels/ref/ref.h"

/* Activations an epilogue can apply (docs/fused_ops.md). */
typedef enum ref_act {
    REF_ACT_NONE = 0,
    REF_ACT_RELU,
    REF_ACT_LEAKY_RELU,   /* alpha: slope */
    REF_ACT_CLIP,         /* alpha: min, beta: max */
    REF_ACT_HARD_SWISH,   /* x * clamp(x / 6 + 1/2, 0, 1) */
    REF_ACT_HARD_SIGMOID, /* clamp(alpha * x + beta, 0, 1) */
    REF_ACT_SIGMOID,
    REF_ACT_TANH,
    REF_ACT_GELU,      /* erf form */
    REF_ACT_GELU_TANH, /* tanh approximation */
    REF_ACT_COUNT
} ref_act;

typedef struct ref_act_params {
    ref_act act;
    float alpha, beta;
} ref_act_params;

/* An operand added to the output: data read at the element strides given
 * per output axis (0 on broadcast axes, as op_broadcast_strides gives). */
typedef struct ref_addend {
    const float *data; /* NULL: absent */
    int64_t strides[MOPT_MAX_RANK];
} ref_addend;

/* y (dense, rank <= MOPT_MAX_RANK, dims) = act(y + bias + residual), in place. bias and
 * residual may be NULL. */
void ref_epilogue_f32(int32_t rank, const int64_t *dims, float *y, const ref_addend *bias,
                      const ref_addend *residual, const ref_act_params *act);

/* y[i] = act(y[i]) for i < n. */
void ref_activation_f32(float *y, int64_t n, const ref_act_params *act);

#endif
