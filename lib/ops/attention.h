/*
 * attention.h — private to mopt.Attention (attention.c) and its impls
 * (lib/ops/cpu/attention_cpu.c): the op's params and the kernel parameter
 * block (kernels.h's attn_params) of a run.
 */
#ifndef MOPT_OPS_ATTENTION_H
#define MOPT_OPS_ATTENTION_H

#include "kernels/kernels.h"
#include "ops/ops.h"

/* mopt.Attention's attributes: layout, num_heads, scale, causal. */
typedef struct attention_params {
    bool bsh; /* layout "bsh" (else "bhsd") */
    int64_t num_heads;
    bool has_scale;
    float scale;
    bool causal;
} attention_params;

/* The kernel parameters of a run from concrete tensors (the mask checked
 * against Q, K, V). */
mopt_status ops_attention_kernel_params(const op_ctx *ctx, const op_tensor *in, int n_in,
                                        attn_params *p);

#endif
