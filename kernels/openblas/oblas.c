/*
 * oblas.c — cblas_sgemm wrapper for the OpenBLAS backend (see oblas.h).
 */
#include <limits.h>

#include <cblas.h>

#include "kernels/omp_threads.h"
#include "kernels/openblas/oblas.h"

bool oblas_fits(int64_t a, int64_t b, int64_t c) {
    return a >= 0 && b >= 0 && c >= 0 && a <= INT_MAX && b <= INT_MAX && c <= INT_MAX;
}

void oblas_sgemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, bool transA,
                 const float *B, int64_t ldb, bool transB, float *C, int64_t ldc, float alpha,
                 float beta) {
    if (M == 0 || N == 0) return;
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, (blasint)M, (blasint)N, (blasint)K, alpha, A,
                (blasint)(lda > 0 ? lda : 1), B, (blasint)(ldb > 0 ? ldb : 1), beta, C,
                (blasint)(ldc > 0 ? ldc : 1));
}

void oblas_threads(int threads) {
    if (threads < 1) threads = 1;
    if (openblas_get_num_threads() != threads) openblas_set_num_threads(threads);
    mopt_omp_threads(threads);
}

const char *oblas_config(void) { return openblas_get_config(); }
