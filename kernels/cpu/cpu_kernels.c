/*
 * cpu_kernels.c — the per-tier kernel tables of kernels/cpu, the tier check
 * against the run-time CPU features (cpu_get(), capped by MOPT_ISA), and the
 * OpenMP range splitter the op glue uses for big tensors. Compiled without
 * ISA flags: it must run on any CPU.
 */
#include "kernels/cpu/cpu_kernels.h"

#include <string.h>

#include "core/cpu.h"

#define TIER_TABLE(SFX)                                                                            \
    const cpu_kernels cpu_kernels_##SFX = {                                                        \
        #SFX,                                                                                      \
        cpu_binary_f32_##SFX,                                                                      \
        cpu_binary_rows_f32_##SFX,                                                                 \
        cpu_unary_f32_##SFX,                                                                       \
        cpu_softmax_f32_##SFX,                                                                     \
        cpu_layernorm_f32_##SFX,                                                                   \
        cpu_reduce_f32_##SFX,                                                                      \
        cpu_transpose_x32_##SFX,                                                                   \
        cpu_resize_f32_##SFX,                                                                      \
        cpu_gemv_f32_##SFX,                                                                        \
    };

#if defined(__x86_64__)
TIER_TABLE(avx512)
TIER_TABLE(avx2)
#define HAVE_X86_TIERS 1
#endif
TIER_TABLE(portable)

const cpu_kernels *cpu_kernels_for(const char *isa) {
#ifdef HAVE_X86_TIERS
    const cpu_features *f = cpu_get();
    if (strcmp(isa, "avx512") == 0)
        return f->avx512f && f->avx512bw && f->avx512vl && f->avx512dq && f->avx2 && f->fma
                   ? &cpu_kernels_avx512
                   : NULL;
    if (strcmp(isa, "avx2") == 0) return f->avx2 && f->fma ? &cpu_kernels_avx2 : NULL;
#endif
    if (strcmp(isa, "portable") == 0) return &cpu_kernels_portable;
    return NULL;
}

/* Chunks per thread: enough that a thread descheduled by another process
 * holds up at most a small slice of the op (the others take the rest),
 * few enough that claiming chunks stays cheap next to a chunk's work. */
#define CHUNKS_PER_THREAD 8

void cpu_parallel_for(int threads, int64_t n, int64_t grain, cpu_range_fn fn, void *arg) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    int64_t most = n / grain; /* chunks of at least `grain` items */
    int64_t nt = most < threads ? most : threads;
    if (nt <= 1) {
        fn(arg, 0, n);
        return;
    }
    int64_t nc = nt * CHUNKS_PER_THREAD;
    if (nc > most) nc = most;
#ifdef _OPENMP
        /* The calling thread is a member of the team and claims chunks like the
         * others; dynamic claiming means no chunk waits on a thread that is not
         * running. num_threads() is per region: the caller's OpenMP setting is
         * untouched. */
#pragma omp parallel for num_threads((int)nt) schedule(dynamic, 1)
    for (int64_t c = 0; c < nc; c++)
        fn(arg, n * c / nc, n * (c + 1) / nc);
#else
    for (int64_t c = 0; c < nc; c++)
        fn(arg, n * c / nc, n * (c + 1) / nc);
#endif
}
