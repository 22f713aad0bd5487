/*
 * ref_matmul.h — reference kernels for the "matmul" op family (MatMul, Gemm).
 * Kernels see only pointers, shapes and small parameter structs, never the IR.
 *
 * ref_gemm_* is a BLAS-style C = alpha * op(A) * op(B) + beta * C on
 * row-major matrices with leading dimensions, op(X) = X or X^T;
 * ref_gemm_batched_* is the reference provider of kernels.h's batched GEMM
 * (kn_gemm), which the other backends provide too.
 */
#ifndef MOPT_KERNELS_REF_MATMUL_H
#define MOPT_KERNELS_REF_MATMUL_H

#include <stdbool.h>

#include "kernels/kernels.h"
#include "kernels/ref/ref.h"

/* C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C.
 * A is M x K (lda >= K) when !transA, else K x M (lda >= M); likewise B is
 * K x N (ldb >= N) or N x K (ldb >= K). When beta == 0, C is not read (it may
 * hold garbage or NaN). C must not overlap A or B. K == 0 gives beta * C. */
void ref_gemm_f32(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, bool transA,
                  const float *B, int64_t ldb, bool transB, float *C, int64_t ldc, float alpha,
                  float beta);
void ref_gemm_f64(int64_t M, int64_t N, int64_t K, const double *A, int64_t lda, bool transA,
                  const double *B, int64_t ldb, bool transB, double *C, int64_t ldc, double alpha,
                  double beta);

/* Every product of g (kernels.h), one ref_gemm_* call each, in batch order. */
void ref_gemm_batched_f32(const kn_gemm *g, const float *A, const float *B, float *C);
void ref_gemm_batched_f64(const kn_gemm *g, const double *A, const double *B, double *C);

#endif
