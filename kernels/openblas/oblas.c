/*
 * oblas.c — cblas_sgemm wrapper for the OpenBLAS backend (see oblas.h), and
 * its provider of the batched GEMM of kernels.h.
 */
#include <limits.h>

#include <cblas.h>
#include <string.h>

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

typedef struct batch {
    const float *A, *B;
    float *C;
} batch;

static void one(void *arg, const kn_gemm *g, int64_t oa, int64_t ob, int64_t oc) {
    const batch *b = arg;
    oblas_sgemm(g->M, g->N, g->K, b->A + oa, g->lda, g->trans_a, b->B + ob, g->ldb, g->trans_b,
                b->C + oc, g->ldc, g->alpha, g->beta);
}

static void one_gemv(void *arg, const kn_gemm *g, int64_t oa, int64_t ob, int64_t oc) {
    const batch *b = arg;
    /* C[0, :] = alpha * A[0, :] op(B): op(B) = B^T (B is N x K) is B times
     * the row; op(B) = B (K x N) is B^T times it */
    if (g->trans_b)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, (blasint)g->N, (blasint)g->K, g->alpha, b->B + ob,
                    (blasint)g->ldb, b->A + oa, 1, g->beta, b->C + oc, 1);
    else
        cblas_sgemv(CblasRowMajor, CblasTrans, (blasint)g->K, (blasint)g->N, g->alpha, b->B + ob,
                    (blasint)g->ldb, b->A + oa, 1, g->beta, b->C + oc, 1);
}

/* Every matrix of g through fn, with OpenBLAS on `threads` threads. */
static void run_batch(const kn_gemm *g, kn_gemm_one_fn fn, const float *A, const float *B, float *C,
                      int threads) {
    oblas_scope host = oblas_threads_enter(threads);
    batch b = {A, B, C};
    kn_gemm_each(g, fn, &b);
    oblas_threads_leave(host);
}

bool oblas_gemv_batched(const kn_gemm *g, const float *A, const float *B, float *C, int threads) {
    if (g->M != 1 || g->trans_a || g->N == 0 || g->K == 0 || !oblas_fits(g->M, g->N, g->K) ||
        !oblas_fits(g->lda, g->ldb, g->ldc) || g->ldb < (g->trans_b ? g->K : g->N))
        return false;
    run_batch(g, one_gemv, A, B, C, threads);
    return true;
}

bool oblas_gemm_batched(const kn_gemm *g, const float *A, const float *B, float *C, int threads) {
    if (!oblas_fits(g->M, g->N, g->K) || !oblas_fits(g->lda, g->ldb, g->ldc) ||
        !oblas_fits(g->M * g->K, g->K * g->N, g->M * g->N))
        return false;
    run_batch(g, one, A, B, C, threads);
    return true;
}

/* The OpenMP build of OpenBLAS (openblas_get_parallel() == 2) sizes each
 * call by the calling thread's omp_get_max_threads(), so the thread-local
 * OpenMP setting is all it needs; it then syncs its own process-wide count
 * to that value by itself, which oblas_threads_leave undoes. Other builds
 * only have the process-wide count. */
oblas_scope oblas_threads_enter(int threads) {
    if (threads < 1) threads = 1;
    oblas_scope s = {openblas_get_num_threads(), mopt_omp_enter(threads), threads};
    if (openblas_get_parallel() != 2 && s.blas != threads) openblas_set_num_threads(threads);
    return s;
}

void oblas_threads_leave(oblas_scope s) {
    /* first OpenBLAS's count: in its OpenMP build, setting it also sets the
     * calling thread's OpenMP count, which mopt_omp_leave then puts back */
    if (s.blas >= 1 && openblas_get_num_threads() != s.blas) openblas_set_num_threads(s.blas);
    mopt_omp_leave(s.omp, s.threads);
}

const char *oblas_config(void) { return openblas_get_config(); }

const char *oblas_core(void) {
    const char *c = openblas_get_corename();
    return c ? c : "unknown";
}

bool oblas_core_sse_only(void) {
    static const char *const sse[] = {"Katmai",        "Coppermine", "Northwood", "Prescott",
                                      "Banias",        "Core2",      "Penryn",    "Dunnington",
                                      "Nehalem",       "Atom",       "Athlon",    "Opteron",
                                      "Opteron(SSE3)", "Barcelona",  "Nano",      "unknown"};
    const char *c = oblas_core();
    for (size_t i = 0; i < sizeof sse / sizeof *sse; i++)
        if (strcmp(c, sse[i]) == 0) return true;
    return false;
}
