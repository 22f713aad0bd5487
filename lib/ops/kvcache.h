/*
 * kvcache.h — private to the kvcache family (kvcache.c) and its backend
 * impls: mopt.CacheMatMul's params and its product as kernels.h's batched
 * GEMM (each head of the token-major cache read at row stride heads *
 * head_dim), which the reference and the OpenBLAS impl both run; and
 * mopt.DecodeAttention's params and kernel problem (kn_decode_attn), shared
 * by its reference and its cpu impls (lib/ops/cpu/decode_attn_cpu.c).
 */
#ifndef MOPT_OPS_KVCACHE_H
#define MOPT_OPS_KVCACHE_H

#include "kernels/kernels.h"
#include "ops/ops.h"

typedef struct cmm_params {
    bool trans_b;
    float alpha;
} cmm_params;

/* The product of a CacheMatMul on concrete A [b, h, m, k] and cache
 * C [b, t, h, d]. */
void ops_cache_matmul_gemm(const cmm_params *p, const ir_shape *a, const ir_shape *c, kn_gemm *g);

/* mopt.DecodeAttention's attributes. */
typedef struct dattn_params {
    float scale, fill;
} dattn_params;

/* The kernel problem of a DecodeAttention node on concrete inputs (Q, K
 * cache, V cache, optional mask) and its output; fails (SHAPE) when the
 * mask does not broadcast to [B, H, M, T] without growing. */
mopt_status ops_decode_attn_problem(const op_ctx *ctx, const op_tensor *in, int n_in,
                                    op_tensor *out, kn_decode_attn *p);

#endif
