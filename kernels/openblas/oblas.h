/*
 * oblas.h — the OpenBLAS backend's kernel layer: single-precision GEMM
 * through cblas_sgemm, honouring the session's thread count. Dimensions
 * must fit OpenBLAS's 32-bit integers (oblas_fits). The `oblas_` prefix
 * keeps clear of OpenBLAS's own symbols in static links.
 */
#ifndef MOPT_KERNELS_OPENBLAS_OBLAS_H
#define MOPT_KERNELS_OPENBLAS_OBLAS_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernels.h"

/* Whether every value fits the BLAS integer type. */
bool oblas_fits(int64_t a, int64_t b, int64_t c);

/* C (M x N, row-major, ldc) = alpha * op(A) op(B) + beta * C, where op(A)
 * is M x K (A stored K x M when transA) and op(B) is K x N (B stored N x K
 * when transB). With beta == 0, C is not read. */
void oblas_sgemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, bool transA,
                 const float *B, int64_t ldb, bool transB, float *C, int64_t ldc, float alpha,
                 float beta);

/* The OpenBLAS provider of kernels.h's batched GEMM: sets the thread count,
 * then one oblas_sgemm per product. False, with nothing written, when a size
 * (M, N, K, a leading dimension or a matrix's element count) does not fit
 * BLAS's integers. */
bool oblas_gemm_batched(const kn_gemm *g, const float *A, const float *B, float *C, int threads);
/* The same for a g with M == 1 and A not transposed, one cblas_sgemv per
 * batch matrix (a row times op(B): OpenBLAS's GEMV kernels, without the
 * GEMM's packing); false (nothing written) for any other g. */
bool oblas_gemv_batched(const kn_gemm *g, const float *A, const float *B, float *C, int threads);

/* The host's settings oblas_threads_enter replaced. */
typedef struct oblas_scope {
    int blas;    /* openblas_get_num_threads() */
    int omp;     /* the calling thread's omp_get_max_threads() */
    int threads; /* the count set (>= 1) */
} oblas_scope;

/* Makes the next OpenBLAS calls on this thread use `threads` threads, and
 * returns what to restore. Every enter is paired with oblas_threads_leave
 * before returning to the caller of the library, so the host's OpenMP and
 * OpenBLAS thread counts are unchanged after any libmopt call. With a
 * non-OpenMP OpenBLAS build the count is process-wide in between. */
oblas_scope oblas_threads_enter(int threads);
void oblas_threads_leave(oblas_scope s);

/* "OpenBLAS 0.3.21 ... (config string)" */
const char *oblas_config(void);

/* The kernels OpenBLAS picked for this CPU (its core name, e.g.
 * "SkylakeX"), and whether they are SSE-era ones: what a DYNAMIC_ARCH build
 * falls back to on a CPU it does not know (OpenBLAS 0.3.21 on an Emerald
 * Rapids Xeon: "Prescott", 4-5x slower per GEMM than its SkylakeX kernels). */
const char *oblas_core(void);
bool oblas_core_sse_only(void);

#endif
