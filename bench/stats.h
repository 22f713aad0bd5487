/*
 * stats.h — latency statistics for mopt-bench: percentiles and moments of a
 * set of samples. Pure arithmetic; knows nothing about models or sessions.
 *
 * Percentile method: linear interpolation between closest ranks, the same as
 * numpy.percentile's default (method="linear"): for q in [0, 100] and sorted
 * samples x[0..n-1], h = (n - 1) * q / 100 and the result is
 * x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]).
 */
#ifndef MOPT_BENCH_STATS_H
#define MOPT_BENCH_STATS_H

#include <stddef.h>

typedef struct bench_latency {
    size_t n;                      /* number of samples */
    double min, max, mean, stddev; /* stddev: population (ddof = 0), like numpy.std */
    double p50, p90, p95, p99;
} bench_latency;

/* The q-th percentile (0 <= q <= 100) of n >= 1 samples sorted ascending.
 * q outside [0, 100] is clamped; n == 0 gives 0. */
double bench_percentile_sorted(const double *sorted, size_t n, double q);

/* Sorts a copy of samples and fills *out. Returns 0, or -1 when n == 0 or a
 * sample is not finite or memory runs out (then *out is zeroed). */
int bench_latency_compute(const double *samples, size_t n, bench_latency *out);

#endif
