/*
 * clock_bench.h — the two clocks the hand-run throughput benchmarks
 * (batcher_bench.c, pool_bench.c) measure with: wall seconds and the
 * process's CPU seconds (user + system).
 */
#ifndef MOPT_BENCH_CLOCK_BENCH_H
#define MOPT_BENCH_CLOCK_BENCH_H

#include <sys/resource.h>
#include <time.h>

/* Monotonic wall-clock seconds. */
static inline double bench_wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds (user + system) of the whole process so far. */
static inline double bench_cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

#endif
