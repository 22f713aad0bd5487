/*
 * ref_matmul.h — reference kernels for the "matmul" op family (MatMul, Gemm).
 * Kernels see only pointers, shapes and small parameter structs, never the IR.
 *
 * ref_gemm_* is the one entry point faster backends replace: a BLAS-style
 * C = alpha * op(A) * op(B) + beta * C on row-major matrices with leading
 * dimensions, op(X) = X or X^T.
 */
#ifndef MOPT_KERNELS_REF_MATMUL_H
#define MOPT_KERNELS_REF_MATMUL_H

#include <stdbool.h>

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

#endif
