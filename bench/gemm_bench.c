/*
 * gemm_bench.c — GEMM micro-benchmark of the math backends: GFLOP/s and the
 * share of this machine's peak, with that peak measured in the same run by
 * an FMA loop (AVX-512 when the CPU has it, else AVX2, else a scalar
 * estimate; chosen at run time, each loop compiled with function-level
 * target attributes). Y[M,N] = X[M,K] W[K,N] with W constant (reordered
 * once, as at model build), at the shapes of a BERT-base layer and a square
 * one, 1 and 2 threads, for oneDNN (f32; bf16 with f32 accumulation; dynamic
 * int8: X quantized on every call, included in the time), OpenBLAS and the
 * reference kernel. "% peak" is always of the FP32 FMA peak; "max rel" is
 * the largest error relative to max |Y| against the reference kernel.
 *
 * usage: gemm_bench [--quick]     (--quick: shorter timing, for smoke tests)
 */
#include <immintrin.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/cpu.h"
#include "kernels/ref/ref_matmul.h"
#include "mopt_config.h"
#ifdef MOPT_HAVE_ONEDNN
#include "kernels/onednn/onednn.h"
#endif
#ifdef MOPT_HAVE_OPENBLAS
#include "kernels/openblas/oblas.h"
#endif

static double g_min_time = 0.3; /* seconds per measurement */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- peak: independent FMA chains, enough to cover latency x ports ---- */

#define CHAINS 16

__attribute__((target("avx512f"), noinline)) static float fma_loop_avx512(long iters) {
    __m512 acc[CHAINS];
    __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
    for (int i = 0; i < CHAINS; i++)
        acc[i] = _mm512_set1_ps((float)i);
    for (long it = 0; it < iters; it++)
        for (int i = 0; i < CHAINS; i++)
            acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    __m512 s = acc[0];
    for (int i = 1; i < CHAINS; i++)
        s = _mm512_add_ps(s, acc[i]);
    return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"), noinline)) static float fma_loop_avx2(long iters) {
    __m256 acc[CHAINS];
    __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    for (int i = 0; i < CHAINS; i++)
        acc[i] = _mm256_set1_ps((float)i);
    for (long it = 0; it < iters; it++)
        for (int i = 0; i < CHAINS; i++)
            acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    __m256 s = acc[0];
    for (int i = 1; i < CHAINS; i++)
        s = _mm256_add_ps(s, acc[i]);
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0] + out[7];
}

static int g_lanes; /* floats per vector of the chosen loop */
static volatile float g_sink;

static void *peak_thread(void *arg) {
    long iters = *(long *)arg;
    g_sink = g_lanes == 16 ? fma_loop_avx512(iters) : fma_loop_avx2(iters);
    return NULL;
}

/* FP32 GFLOP/s of `threads` cores running the FMA loop together. */
static double measure_peak(int threads) {
    long iters = 1 << 20;
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        pthread_t t[64];
        double t0 = now_s();
        for (int i = 0; i < threads; i++)
            pthread_create(&t[i], NULL, peak_thread, &iters);
        for (int i = 0; i < threads; i++)
            pthread_join(t[i], NULL);
        double dt = now_s() - t0;
        double gf = (double)threads * (double)iters * CHAINS * g_lanes * 2 / dt * 1e-9;
        if (gf > best) best = gf;
        if (dt < 0.05) iters *= 2;
    }
    return best;
}

/* ---- backends ----------------------------------------------------------- */

typedef struct problem {
    int64_t M, K, N;
    float *X, *W, *Y;
    int threads;
#ifdef MOPT_HAVE_ONEDNN
    onednn_matmul_desc d;
    onednn_weights *w;
    onednn_cache *cache;
#endif
} problem;

typedef int (*run_fn)(problem *p); /* 0 = ok */

static int run_ref(problem *p) {
    ref_gemm_f32(p->M, p->N, p->K, p->X, p->K, false, p->W, p->N, false, p->Y, p->N, 1.f, 0.f);
    return 0;
}

#ifdef MOPT_HAVE_OPENBLAS
static int run_openblas(problem *p) {
    oblas_scope host = oblas_threads_enter(p->threads);
    oblas_sgemm(p->M, p->N, p->K, p->X, p->K, false, p->W, p->N, false, p->Y, p->N, 1.f, 0.f);
    oblas_threads_leave(host);
    return 0;
}
#endif

#ifdef MOPT_HAVE_ONEDNN
static int setup_onednn(problem *p, onednn_prec prec) {
    memset(&p->d, 0, sizeof p->d);
    onednn_td_dense(&p->d.a, 2, (int64_t[]){p->M, p->K});
    onednn_td_dense(&p->d.b, 2, (int64_t[]){p->K, p->N});
    onednn_td_dense(&p->d.y, 2, (int64_t[]){p->M, p->N});
    p->d.alpha = 1.f;
    p->d.b_const = true;
    p->d.prec = prec;
    p->w = NULL;
    p->cache = NULL;
    return onednn_matmul_pack(&p->d, p->W, p->threads, &p->w) == MOPT_OK ? 0 : -1;
}
static void teardown_onednn(problem *p) {
    onednn_cache_free(p->cache);
    onednn_weights_free(p->w);
}
static int run_onednn(problem *p) {
    return onednn_matmul_run(&p->cache, &p->d, p->w, p->X, p->W, NULL, NULL, p->Y, p->threads) ==
                   MOPT_OK
               ? 0
               : -1;
}
#endif

/* Median GFLOP/s over timed batches (after a warm-up run). */
static double time_gemm(problem *p, run_fn run) {
    if (run(p)) return -1;
    double flops = 2.0 * (double)p->M * (double)p->K * (double)p->N;
    double samples[15];
    int ns = 0;
    double t_total = now_s() + g_min_time;
    while (ns < 15 && (ns < 5 || now_s() < t_total)) {
        int reps = 0;
        double t0 = now_s(), dt;
        do {
            if (run(p)) return -1;
            reps++;
            dt = now_s() - t0;
        } while (dt < g_min_time / 10);
        samples[ns++] = flops * reps / dt * 1e-9;
    }
    for (int i = 1; i < ns; i++) /* insertion sort */
        for (int j = i; j > 0 && samples[j] < samples[j - 1]; j--) {
            double t = samples[j];
            samples[j] = samples[j - 1];
            samples[j - 1] = t;
        }
    return samples[ns / 2];
}

static double max_rel_err(const float *a, const float *b, int64_t n) {
    double e = 0, m = 0;
    for (int64_t i = 0; i < n; i++) {
        e = fmax(e, fabs((double)a[i] - b[i]));
        m = fmax(m, fabs((double)b[i]));
    }
    return m > 0 ? e / m : e;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            g_min_time = 0.03;
        } else {
            fprintf(stderr, "usage: gemm_bench [--quick]\n");
            return 2;
        }
    }
    const cpu_features *cpu = cpu_get();
    g_lanes = cpu->avx512f ? 16 : cpu->avx2 && cpu->fma ? 8 : 0;
    if (!g_lanes) {
        fprintf(stderr, "gemm_bench: needs AVX2+FMA or AVX-512 to measure the peak\n");
        return 1;
    }
    static const int64_t shapes[][3] = {
        {128, 384, 384}, {128, 384, 1536}, {128, 1536, 384}, {1024, 1024, 1024}, {1, 384, 1536}};
    static const int thread_counts[] = {1, 2};
    double peak[3] = {0};
    for (int t = 0; t < 2; t++)
        peak[thread_counts[t]] = measure_peak(thread_counts[t]);
    printf("FP32 peak (FMA loop, %s, %d-lane): 1 thread %.1f GFLOP/s, 2 threads %.1f GFLOP/s\n",
           g_lanes == 16 ? "AVX-512" : "AVX2", g_lanes, peak[1], peak[2]);
#ifdef MOPT_HAVE_ONEDNN
    printf("%s", onednn_available() ? onednn_version() : "oneDNN unavailable");
#endif
#ifdef MOPT_HAVE_OPENBLAS
    printf("; OpenBLAS: %s", oblas_config());
#endif
    printf("\n\n%-8s %-5s %-18s %3s %10s %8s %9s\n", "backend", "dtype", "M,K,N", "thr", "GFLOP/s",
           "% peak", "max rel");
    printf("-------------------------------------------------------------------\n");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        problem p;
        memset(&p, 0, sizeof p);
        p.M = shapes[s][0];
        p.K = shapes[s][1];
        p.N = shapes[s][2];
        p.X = mopt_aligned_alloc((size_t)(p.M * p.K) * sizeof(float));
        p.W = mopt_aligned_alloc((size_t)(p.K * p.N) * sizeof(float));
        p.Y = mopt_aligned_alloc((size_t)(p.M * p.N) * sizeof(float));
        float *Yref = mopt_aligned_alloc((size_t)(p.M * p.N) * sizeof(float));
        for (int64_t i = 0; i < p.M * p.K; i++)
            p.X[i] = (float)((i * 7919) % 2001 - 1000) * 1e-3f;
        for (int64_t i = 0; i < p.K * p.N; i++)
            p.W[i] = (float)((i * 104729) % 2001 - 1000) * 1e-3f;
        ref_gemm_f32(p.M, p.N, p.K, p.X, p.K, false, p.W, p.N, false, Yref, p.N, 1.f, 0.f);
        char shape[32];
        snprintf(shape, sizeof shape, "%lld,%lld,%lld", (long long)p.M, (long long)p.K,
                 (long long)p.N);
        for (int t = 0; t < 2; t++) {
            p.threads = thread_counts[t];
            double pk = peak[p.threads];
            struct {
                const char *name, *dtype;
                int prec;
            } rows[] = {
#ifdef MOPT_HAVE_ONEDNN
                {"onednn", "f32", ONEDNN_F32},
                {"onednn", "bf16", ONEDNN_BF16},
                {"onednn", "int8", ONEDNN_INT8},
#endif
#ifdef MOPT_HAVE_OPENBLAS
                {"openblas", "f32", -1},
#endif
                {"ref", "f32", -2},
            };
            for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
                double gf = -1;
                if (rows[r].prec == -2) {
                    if (p.threads > 1) continue; /* the reference kernel is single-threaded */
                    gf = time_gemm(&p, run_ref);
                }
#ifdef MOPT_HAVE_OPENBLAS
                if (rows[r].prec == -1) gf = time_gemm(&p, run_openblas);
#endif
#ifdef MOPT_HAVE_ONEDNN
                if (rows[r].prec >= 0) {
                    if (!onednn_available() || setup_onednn(&p, (onednn_prec)rows[r].prec)) {
                        printf("%-8s %-5s %-18s %3d %10s\n", rows[r].name, rows[r].dtype, shape,
                               p.threads, "n/a");
                        continue;
                    }
                    gf = time_gemm(&p, run_onednn);
                    teardown_onednn(&p);
                }
#endif
                if (gf < 0) {
                    printf("%-8s %-5s %-18s %3d %10s\n", rows[r].name, rows[r].dtype, shape,
                           p.threads, "failed");
                    continue;
                }
                printf("%-8s %-5s %-18s %3d %10.1f %7.1f%% %9.2g\n", rows[r].name, rows[r].dtype,
                       shape, p.threads, gf, 100 * gf / pk, max_rel_err(p.Y, Yref, p.M * p.N));
            }
        }
        mopt_aligned_free(p.X);
        mopt_aligned_free(p.W);
        mopt_aligned_free(p.Y);
        mopt_aligned_free(Yref);
    }
    return 0;
}
