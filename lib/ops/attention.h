/*
 * attention.h — private to mopt.Attention (attention.c) and its impls
 * (lib/ops/cpu/attention_cpu.c): the op's params, the kernel parameter
 * block (kernels.h's attn_params) of a run and its per-shape plan.
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

/* The shape part of a run's kernel parameters, kept (in an impl's
 * per-session scratch) for the input shapes it was made for: Q, K, V and
 * the mask's shapes, and the mask's presence and type. */
typedef struct attn_plan {
    bool valid;
    bool has_mask;
    mopt_dtype mask_dtype;
    ir_shape shapes[4];
    attn_params p;
} attn_plan;

/* ops_attention_kernel_params through *plan: computed (and kept) only when
 * this run's input shapes differ from the plan's, else the plan's with this
 * run's mask bound. */
mopt_status ops_attention_planned_params(const op_ctx *ctx, const op_tensor *in, int n_in,
                                         attn_plan *plan, attn_params *p);

/* The base addresses of Q, K and V in in[0..2] (dtype-sized; with
 * packed_qkv, K and V are column blocks H*D and 2*H*D of the one tensor). */
void ops_attention_qkv(const op_ctx *ctx, const op_tensor *in, const attn_params *p,
                       const void *qkv[3]);

#endif
