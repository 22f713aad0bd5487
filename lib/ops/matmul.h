/*
 * matmul.h — private to the matmul family (matmul.c), the fused matmul
 * (fused.c) and their backend impls (lib/ops/onednn, lib/ops/openblas):
 * Gemm's params and the one description of a node's product as kernels.h's
 * batched GEMM (kn_gemm), which every provider (ref, openblas, onednn) runs.
 */
#ifndef MOPT_OPS_MATMUL_H
#define MOPT_OPS_MATMUL_H

#include "kernels/kernels.h"
#include "ops/ops.h"

/* Gemm: transA, transB, alpha, beta. */
typedef struct gemm_params {
    bool trans_a, trans_b;
    float alpha, beta;
} gemm_params;

/* The product Y = alpha * op(A) @ op(B) (beta 0, alpha 1: the caller sets
 * them for Gemm) of concrete A and B, numpy style: batch dims broadcast, a
 * 1-D A is a row [1, K] and a 1-D B a column [K, 1] (read as stored, ldb 1),
 * C dense with ldc N. Fails (false) when the shapes do not fit (inner
 * dimensions or batch dims that do not broadcast, a rank above the limit). */
bool ops_matmul_gemm(const ir_shape *a, bool trans_a, const ir_shape *b, bool trans_b, kn_gemm *g);

/* Copies axis i (dim and symbol) of src to axis j of dst. */
static inline void ops_copy_dim(ir_shape *dst, int32_t j, const ir_shape *src, int32_t i) {
    dst->dims[j] = src->dims[i];
    dst->syms[j] = src->syms[i];
}

/* The batch dims (all but the last two axes) of matmul operands A and B
 * broadcast together into *batch; fails naming both shapes when they do not
 * broadcast. */
mopt_status ops_matmul_batch_dims(const op_ctx *ctx, const ir_shape *a, const ir_shape *b,
                                  ir_shape *batch);

/* Gemm's and FusedMatMul's A and B (rank >= 2, each maybe transposed in
 * its last two axes) must agree in K where both know it; fails naming both
 * shapes and the trans flags. */
mopt_status ops_matmul_check_k(const op_ctx *ctx, const ir_shape *a, bool ta, const ir_shape *b,
                               bool tb);

/* A MatMul's 1-D B (a K x 1 column) read as the transpose of a 1 x K row,
 * so that ref_gemm takes its dot-product path (what the reference and the
 * OpenBLAS impl run). */
void ops_matmul_vector_b_as_row(const ir_shape *b, kn_gemm *g);

/* Floating-point work of a matmul with A (transposed when trans_a) giving y. */
int64_t ops_matmul_flops(const op_tensor *a, bool trans_a, const op_tensor *y);

/* Gemm's C (broadcastable to y [M, N]) copied into y, for the backends that
 * compute Y = alpha A B + beta Y. */
void ops_gemm_fill_c(const op_tensor *c, const ir_shape *y, float *out);

#endif
