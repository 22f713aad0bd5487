/*
 * attention.h — private to mopt.Attention (attention.c) and its impls
 * (lib/ops/cpu/attention_cpu.c): the op's params and the kernel parameter
 * block (kernels.h's attn_params) of a run.
 */
#ifndef MOPT_OPS_ATTENTION_H
#define MOPT_OPS_ATTENTION_H

#include "kernels/kernels.h"
#include "ops/ops.h"

/* mopt.Attention's attributes: layout, num_heads, scale, causal,
 * packed_qkv. */
typedef struct attention_params {
    bool bsh;    /* layout "bsh" (else "bhsd") */
    bool packed; /* packed_qkv=1 ("bsh"): Q, K, V are one [B,S,3*H*D] tensor */
    int64_t num_heads;
    bool has_scale;
    float scale;
    bool causal;
} attention_params;

/* The kernel parameters of a run from concrete tensors (the mask checked
 * against Q, K, V). */
mopt_status ops_attention_kernel_params(const op_ctx *ctx, const op_tensor *in, int n_in,
                                        attn_params *p);

/* The base addresses of Q, K and V in in[0..2] (dtype-sized; with
 * packed_qkv, K and V are column blocks H*D and 2*H*D of the one tensor). */
void ops_attention_qkv(const op_ctx *ctx, const op_tensor *in, const attn_params *p,
                       const void *qkv[3]);

#endif
