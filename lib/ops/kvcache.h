/*
 * kvcache.h — private to the kvcache family (kvcache.c) and its backend
 * impls: mopt.CacheMatMul's params and its product as kernels.h's batched
 * GEMM (each head of the token-major cache read at row stride heads *
 * head_dim), which the reference and the OpenBLAS impl both run.
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

#endif
