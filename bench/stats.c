/*
 * stats.c — percentiles (numpy "linear" method, see stats.h) and moments of
 * latency samples.
 */
#include "stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

double bench_percentile_sorted(const double *sorted, size_t n, double q) {
    if (n == 0 || !sorted) return 0.0;
    if (!(q > 0.0)) q = 0.0; /* also maps NaN to 0 */
    if (q > 100.0) q = 100.0;
    double h = (double)(n - 1) * (q / 100.0);
    double lo_f = floor(h);
    size_t lo = (size_t)lo_f;
    if (lo >= n - 1) return sorted[n - 1];
    double t = h - lo_f;
    double a = sorted[lo], b = sorted[lo + 1];
    /* The same two-sided form numpy uses, so that results match to the ulp and
     * stay monotone: interpolate from whichever end is nearer. */
    return t < 0.5 ? a + (b - a) * t : b - (b - a) * (1.0 - t);
}

static int cmp_double(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

int bench_latency_compute(const double *samples, size_t n, bench_latency *out) {
    memset(out, 0, sizeof *out);
    if (n == 0 || !samples || n > SIZE_MAX / sizeof(double)) return -1;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(samples[i])) return -1;
    double *s = malloc(n * sizeof *s);
    if (!s) return -1;
    memcpy(s, samples, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += s[i];
    double mean = sum / (double)n;
    double ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (s[i] - mean) * (s[i] - mean);
    out->n = n;
    out->min = s[0];
    out->max = s[n - 1];
    out->mean = mean;
    out->stddev = sqrt(ss / (double)n);
    out->p50 = bench_percentile_sorted(s, n, 50.0);
    out->p90 = bench_percentile_sorted(s, n, 90.0);
    out->p95 = bench_percentile_sorted(s, n, 95.0);
    out->p99 = bench_percentile_sorted(s, n, 99.0);
    free(s);
    return 0;
}
