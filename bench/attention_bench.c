/*
 * attention_bench.c — times the fused attention kernel (kernels/cpu, online
 * softmax over key tiles) against the unfused sequence a graph runs:
 * S = Q K^T (MatMul) -> scale + mask -> Softmax -> S V (MatMul), with the
 * matmuls done by the reference gemm (the one the ref path uses) and, when
 * built with OpenBLAS, by cblas_sgemm too. Prints the time of each, the
 * speedups and the peak extra memory: the unfused [B,H,S,S] score tensor
 * vs the fused kernel's score tile and per-thread packed K/V.
 *
 * usage: attention_bench [--batch B] [--heads H] [--dim D] [--threads T]
 *                        [--reps N] [--bf16] [--fused-only] [SEQ ...]
 *                        (default SEQ 128 512 2048)
 * --fused-only: skip the unfused runs (their columns show 0; max |diff| is then
 * against the f32 fused kernel with --bf16, else 0).
 * --bf16: the fused kernel is a bf16-product one (needs AVX512-BF16): the AMX
 * variant where cpu_get() reports amx_kernels (MOPT_AMX=0: the AVX512-BF16
 * one), and the f32 fused kernel is timed too, alternating, for the ratio.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef MOPT_BENCH_OPENBLAS
#include <cblas.h>
#endif

#include "core/alloc.h"
#include "core/cpu.h"
#include "kernels/cpu/cpu_attention.h"
#include "kernels/ref/ref_attention.h"
#include "kernels/ref/ref_matmul.h"

typedef void (*gemm_fn)(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, bool transA,
                        const float *B, int64_t ldb, bool transB, float *C, int64_t ldc,
                        float alpha, float beta);

#ifdef MOPT_BENCH_OPENBLAS
static void blas_gemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, bool transA,
                      const float *B, int64_t ldb, bool transB, float *C, int64_t ldc, float alpha,
                      float beta) {
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K, alpha, A, (int)lda, B,
                (int)ldb, beta, C, (int)ldc);
}
#endif

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The unfused graph: the whole [B,H,Sq,Sk] score tensor (steps in place,
 * which is generous to it: a graph keeps up to two such tensors alive). */
static void unfused(const attn_params *p, const float *Q, const float *K, const float *V, float *O,
                    float *S, gemm_fn gemm) {
    const int64_t ss = p->Sq * p->Sk;
    for (int64_t b = 0; b < p->B; b++)
        for (int64_t h = 0; h < p->H; h++)
            gemm(p->Sq, p->Sk, p->D, Q + b * p->q_sb + h * p->q_sh, p->q_ss, false,
                 K + b * p->k_sb + h * p->k_sh, p->k_ss, true, S + (b * p->H + h) * ss, p->Sk, 1.0f,
                 0.0f);
    for (int64_t b = 0; b < p->B; b++) /* scale + additive mask [B,1,1,Sk] */
        for (int64_t r = 0; r < p->H * p->Sq; r++) {
            float *row = S + b * p->H * ss + r * p->Sk;
            for (int64_t j = 0; j < p->Sk; j++)
                row[j] = row[j] * p->scale + p->mask.add[b * p->mask.sb + j];
        }
    for (int64_t r = 0; r < p->B * p->H * p->Sq; r++) { /* softmax over the last axis */
        float *row = S + r * p->Sk, mx = -INFINITY, sum = 0.0f;
        for (int64_t j = 0; j < p->Sk; j++)
            mx = row[j] > mx ? row[j] : mx;
        for (int64_t j = 0; j < p->Sk; j++)
            sum += (row[j] = expf(row[j] - mx));
        for (int64_t j = 0; j < p->Sk; j++)
            row[j] /= sum;
    }
    for (int64_t b = 0; b < p->B; b++)
        for (int64_t h = 0; h < p->H; h++)
            gemm(p->Sq, p->Dv, p->Sk, S + (b * p->H + h) * ss, p->Sk, false,
                 V + b * p->v_sb + h * p->v_sh, p->v_ss, false, O + b * p->o_sb + h * p->o_sh,
                 p->o_ss, 1.0f, 0.0f);
}

typedef bool (*fused_fn)(const attn_params *, const float *, const float *, const float *, float *,
                         int);
typedef size_t (*scratch_fn)(const attn_params *, size_t *);

static double max_diff(const float *a, const float *b, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (d > m || isnan(d)) m = d;
    }
    return m;
}

static void fill(float *x, size_t n, uint64_t *seed, float scale) {
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = scale * ((float)(*seed >> 40) / (float)(1ull << 24) - 0.5f);
    }
}

int main(int argc, char **argv) {
    int64_t B = 1, H = 12, D = 64;
    int threads = 1, reps = 3;
    bool bf16 = false, fused_only = false;
    int64_t seqs[16];
    int n_seq = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--batch") && i + 1 < argc)
            B = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--heads") && i + 1 < argc)
            H = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--dim") && i + 1 < argc)
            D = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--bf16"))
            bf16 = true;
        else if (!strcmp(argv[i], "--fused-only"))
            fused_only = true;
        else if (argv[i][0] != '-' && n_seq < 16)
            seqs[n_seq++] = atoll(argv[i]);
        else {
            fprintf(stderr, "usage: attention_bench [--batch B] [--heads H] [--dim D] "
                            "[--threads T] [--reps N] [--bf16] [--fused-only] [SEQ ...]\n");
            return 2;
        }
    }
    if (B < 1 || H < 1 || D < 1 || threads < 1 || reps < 1) {
        fprintf(stderr, "attention_bench: sizes, threads and reps must be >= 1\n");
        return 2;
    }
    if (n_seq == 0) {
        seqs[0] = 128, seqs[1] = 512, seqs[2] = 2048;
        n_seq = 3;
    }
    const cpu_features *f = cpu_get();
    fused_fn fused = cpu_attention_f32_portable;
    scratch_fn scratch = cpu_attention_f32_portable_scratch;
    if (f->avx512f && f->avx512bw && f->avx512vl && f->avx512dq) {
        fused = cpu_attention_f32_avx512;
        scratch = cpu_attention_f32_avx512_scratch;
    } else if (f->avx2 && f->fma) {
        fused = cpu_attention_f32_avx2;
        scratch = cpu_attention_f32_avx2_scratch;
    }
    if (bf16 && !f->avx512_bf16) {
        fprintf(stderr, "attention_bench: --bf16 needs AVX512-BF16\n");
        return 2;
    }
    fused_fn f32_fused = fused;
    const char *kname = f->isa;
    const bool amx = f->amx_kernels && cpu_attention_amx_built();
    if (bf16) {
        fused = amx ? cpu_attention_bf16_amx : cpu_attention_bf16_avx512;
        scratch = amx ? cpu_attention_bf16_amx_scratch : cpu_attention_bf16_avx512_scratch;
        kname = amx ? "amx bf16" : "avx512 bf16";
    }
#ifdef MOPT_BENCH_OPENBLAS
    openblas_set_num_threads(threads);
    const char *blas_col = "  blas ms  fused/blas";
#else
    const char *blas_col = "";
#endif
    printf("attention: B=%lld H=%lld D=%lld, mask [B,1,1,S], fused kernel %s%s, %d thread%s, "
           "best of %d\n",
           (long long)B, (long long)H, (long long)D, kname, bf16 ? " (vs f32 fused)" : "", threads,
           threads > 1 ? "s" : "", reps);
    printf("%6s %10s %10s %9s%s %12s %12s %12s %10s%s\n", "seq", "unfused ms", "fused ms",
           "speedup", blas_col, "scores B", "tile B", "fused B/thr", "max |diff|",
           bf16 ? "   f32 ms  f32/fused" : "");
    for (int s = 0; s < n_seq; s++) {
        const int64_t S = seqs[s];
        attn_params p;
        memset(&p, 0, sizeof p);
        p.B = B, p.H = H, p.Sq = S, p.Sk = S, p.D = D, p.Dv = D;
        p.scale = 1.0f / sqrtf((float)D);
        /* bsh layout: what the fusion pass produces */
        p.q_sb = p.k_sb = p.v_sb = p.o_sb = S * H * D;
        p.q_sh = p.k_sh = p.v_sh = p.o_sh = D;
        p.q_ss = p.k_ss = p.v_ss = p.o_ss = H * D;
        size_t n = (size_t)(B * S * H * D), ns = (size_t)(B * H * S * S);
        float *Q = mopt_aligned_alloc(n * 4), *K = mopt_aligned_alloc(n * 4);
        float *V = mopt_aligned_alloc(n * 4), *O1 = mopt_aligned_alloc(n * 4);
        float *O2 = mopt_aligned_alloc(n * 4), *M = mopt_aligned_alloc((size_t)(B * S) * 4);
        float *Sc = mopt_aligned_alloc(ns * 4);
        if (!Q || !K || !V || !O1 || !O2 || !M || !Sc) {
            fprintf(stderr, "attention_bench: out of memory at seq %lld\n", (long long)S);
            return 1;
        }
        uint64_t seed = 42;
        fill(Q, n, &seed, 4.0f);
        fill(K, n, &seed, 4.0f);
        fill(V, n, &seed, 2.0f);
        for (int64_t b = 0; b < B; b++) /* pad the last eighth of each sequence */
            for (int64_t j = 0; j < S; j++)
                M[b * S + j] = j >= S - S / 8 ? -10000.0f : 0.0f;
        p.mask.add = M;
        p.mask.sb = S, p.mask.sh = 0, p.mask.sq = 0, p.mask.sk = 1;
        double t_unf = 1e30, t_fus = 1e30, t_blas = 1e30, t_f32 = 1e30;
        for (int r = 0; r < reps; r++) {
            double t0 = now_s();
            if (!fused_only) unfused(&p, Q, K, V, O1, Sc, ref_gemm_f32);
            double t1 = now_s();
            if (!fused(&p, Q, K, V, O2, threads)) return 1;
            double t2 = now_s();
            t_unf = fmin(t_unf, t1 - t0);
            t_fus = fmin(t_fus, t2 - t1);
            if (bf16) { /* the f32 fused kernel, alternating */
                if (!f32_fused(&p, Q, K, V, O1, threads)) return 1;
                t_f32 = fmin(t_f32, now_s() - t2);
            }
        }
        /* --fused-only: against the f32 fused kernel (--bf16), else nothing */
        double diff = fused_only && !bf16 ? 0.0 : max_diff(O1, O2, n);
        if (fused_only) t_unf = t_blas = 0.0;
#ifdef MOPT_BENCH_OPENBLAS
        for (int r = 0; r < reps && !fused_only; r++) {
            double t0 = now_s();
            unfused(&p, Q, K, V, O1, Sc, blas_gemm);
            t_blas = fmin(t_blas, now_s() - t0);
        }
        if (!fused_only) diff = fmax(diff, max_diff(O1, O2, n));
        char blas_txt[64];
        snprintf(blas_txt, sizeof blas_txt, " %8.2f %10.2fx", 1e3 * t_blas, t_blas / t_fus);
#else
        const char *blas_txt = "";
        (void)t_blas;
#endif
        size_t tile = 0, per_thread = scratch(&p, &tile);
        char f32_txt[64] = "";
        if (bf16) snprintf(f32_txt, sizeof f32_txt, " %8.2f %9.2fx", 1e3 * t_f32, t_f32 / t_fus);
        printf("%6lld %10.2f %10.2f %8.2fx%s %12zu %12zu %12zu %10.2g%s\n", (long long)S,
               1e3 * t_unf, 1e3 * t_fus, t_unf / t_fus, blas_txt, ns * 4, tile, per_thread, diff,
               f32_txt);
        mopt_aligned_free(Q), mopt_aligned_free(K), mopt_aligned_free(V);
        mopt_aligned_free(O1), mopt_aligned_free(O2), mopt_aligned_free(M), mopt_aligned_free(Sc);
    }
    return 0;
}
