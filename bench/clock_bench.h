/*
 * clock_bench.h — the two clocks the hand-run throughput benchmarks
 * (batcher_bench.c, pool_bench.c, generate_bench.c, decode_attn_bench.c)
 * measure with: wall seconds or nanoseconds, and the process's CPU seconds
 * (user + system); the sort order for int64 samples; and the cache sweep
 * run between samples that must start cold.
 */
#ifndef MOPT_BENCH_CLOCK_BENCH_H
#define MOPT_BENCH_CLOCK_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

/* Monotonic wall-clock seconds. */
static inline double bench_wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Monotonic wall-clock nanoseconds. */
static inline int64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* qsort order of int64_t samples (medians of ns timings). */
static inline int bench_cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Reads one float per 64-byte line of ev[0..n), so that the next timed
 * run finds its data evicted from the caches (as a model's weights would);
 * returns their sum, to be kept in a volatile so the reads stay. */
static inline float bench_sweep(const float *ev, size_t n) {
    float s = 0;
    for (size_t j = 0; j < n; j += 16)
        s += ev[j];
    return s;
}

/* CPU seconds (user + system) of the whole process so far. */
static inline double bench_cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

#endif
