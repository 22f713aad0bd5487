/*
 * matmul.c — portable reference kernels for the "matmul" op family
 * (declared in ref_matmul.h). Obvious and correct, with loop orders that
 * stream memory (i-k-j for B untransposed, row dot products for B^T); the
 * oracle for faster backends; and the reference provider of kernels.h's
 * batched GEMM. Never sees the IR.
 */
#include "kernels/ref/ref_matmul.h"

/* Dot product with 8 independent partial sums, so that compilers can
 * vectorize it without reassociating (no -ffast-math needed). */
#define DEFINE_DOT(NAME, T)                                                                        \
    static T NAME(const T *a, const T *b, int64_t n) {                                             \
        T s[8] = {0};                                                                              \
        int64_t k = 0;                                                                             \
        for (; k + 8 <= n; k += 8)                                                                 \
            for (int u = 0; u < 8; u++)                                                            \
                s[u] += a[k + u] * b[k + u];                                                       \
        for (; k < n; k++)                                                                         \
            s[0] += a[k] * b[k];                                                                   \
        return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));                  \
    }

DEFINE_DOT(dot_f32, float)
DEFINE_DOT(dot_f64, double)

/* One definition per element type: T is the type, NAME the function, DOT
 * its dot product. */
#define DEFINE_GEMM(NAME, T, DOT)                                                                  \
    void NAME(int64_t M, int64_t N, int64_t K, const T *A, int64_t lda, bool transA, const T *B,   \
              int64_t ldb, bool transB, T *C, int64_t ldc, T alpha, T beta) {                      \
        for (int64_t i = 0; i < M; i++) {                                                          \
            T *c = C + i * ldc;                                                                    \
            if (beta == 0) {                                                                       \
                for (int64_t j = 0; j < N; j++)                                                    \
                    c[j] = 0;                                                                      \
            } else if (beta != 1) {                                                                \
                for (int64_t j = 0; j < N; j++)                                                    \
                    c[j] *= beta;                                                                  \
            }                                                                                      \
            if (!transB) {                                                                         \
                /* i-k-j: row i of C accumulates rows of B */                                      \
                for (int64_t k = 0; k < K; k++) {                                                  \
                    T a = alpha * (transA ? A[k * lda + i] : A[i * lda + k]);                      \
                    const T *b = B + k * ldb;                                                      \
                    for (int64_t j = 0; j < N; j++)                                                \
                        c[j] += a * b[j];                                                          \
                }                                                                                  \
            } else {                                                                               \
                /* B^T: C[i][j] is a dot product of row i of op(A) and row j of B */               \
                for (int64_t j = 0; j < N; j++) {                                                  \
                    const T *b = B + j * ldb;                                                      \
                    T s = 0;                                                                       \
                    if (!transA) {                                                                 \
                        s = DOT(A + i * lda, b, K);                                                \
                    } else {                                                                       \
                        for (int64_t k = 0; k < K; k++)                                            \
                            s += A[k * lda + i] * b[k];                                            \
                    }                                                                              \
                    c[j] += alpha * s;                                                             \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

DEFINE_GEMM(ref_gemm_f32, float, dot_f32)
DEFINE_GEMM(ref_gemm_f64, double, dot_f64)

/* ref_gemm_batched_SFX: one ref_gemm_SFX per matrix of the batch that
 * kn_gemm_each walks (the operands' offsets come from g). */
#define DEFINE_GEMM_BATCHED(SFX, T)                                                                \
    typedef struct batch_##SFX {                                                                   \
        const T *A, *B;                                                                            \
        T *C;                                                                                      \
    } batch_##SFX;                                                                                 \
                                                                                                   \
    static void one_##SFX(void *arg, const kn_gemm *g, int64_t oa, int64_t ob, int64_t oc) {       \
        const batch_##SFX *b = arg;                                                                \
        ref_gemm_##SFX(g->M, g->N, g->K, b->A + oa, g->lda, g->trans_a, b->B + ob, g->ldb,         \
                       g->trans_b, b->C + oc, g->ldc, g->alpha, g->beta);                          \
    }                                                                                              \
                                                                                                   \
    void ref_gemm_batched_##SFX(const kn_gemm *g, const T *A, const T *B, T *C) {                  \
        batch_##SFX b = {A, B, C};                                                                 \
        kn_gemm_each(g, one_##SFX, &b);                                                            \
    }

DEFINE_GEMM_BATCHED(f32, float)
DEFINE_GEMM_BATCHED(f64, double)
