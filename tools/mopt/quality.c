/*
 * quality.c — the quality metrics of `mopt compare` (see quality.h): error,
 * cosine, top-k agreement and the Spearman correlation of pairwise cosine
 * similarities. Sums are in double; nothing here knows about tensors.
 */
#include "quality.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An element pair that counts as equal whatever its values: both NaN, or the
 * same infinity. */
static int same_special(double r, double t) {
    return (isnan(r) && isnan(t)) || (isinf(r) && r == t);
}

double qm_max_abs(const double *ref, const double *test, size_t n) {
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        if (same_special(ref[i], test[i])) continue;
        double d = fabs(test[i] - ref[i]);
        if (isnan(d)) return NAN;
        if (d > worst) worst = d;
    }
    return worst;
}

double qm_max_rel(const double *ref, const double *test, size_t n) {
    double scale = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(ref[i]) && fabs(ref[i]) > scale) scale = fabs(ref[i]);
    double floor = scale > 0 ? QM_REL_FLOOR * scale : DBL_MIN;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        if (same_special(ref[i], test[i])) continue;
        double d = fabs(test[i] - ref[i]);
        if (isnan(d)) return NAN;
        double den = fabs(ref[i]) > floor ? fabs(ref[i]) : floor;
        if (d / den > worst) worst = d / den;
    }
    return worst;
}

double qm_cosine(const double *ref, const double *test, size_t n) {
    double dot = 0, rr = 0, tt = 0;
    for (size_t i = 0; i < n; i++) {
        dot += ref[i] * test[i];
        rr += ref[i] * ref[i];
        tt += test[i] * test[i];
    }
    if (isnan(dot) || isnan(rr) || isnan(tt)) return NAN;
    if (rr == 0 && tt == 0) return 1;
    if (rr == 0 || tt == 0) return 0;
    double c = dot / (sqrt(rr) * sqrt(tt));
    return c > 1 ? 1 : c < -1 ? -1 : c; /* rounding can step just outside */
}

/* The indices of the k largest values of row[0..c) into idx (ties: the lower
 * index first; NaN never beats a number). */
static void top_indices(const double *row, size_t c, size_t k, size_t *idx) {
    for (size_t j = 0; j < k; j++) {
        size_t best = c;
        for (size_t i = 0; i < c; i++) {
            int taken = 0;
            for (size_t q = 0; q < j && !taken; q++)
                taken = idx[q] == i;
            if (taken) continue;
            if (best == c || row[i] > row[best] || (isnan(row[best]) && !isnan(row[i]))) best = i;
        }
        idx[j] = best;
    }
}

double qm_topk_agreement(const double *ref, const double *test, size_t n, size_t c, size_t k) {
    if (c == 0 || n < c) return NAN;
    if (k > c) k = c;
    if (k == 0) return NAN;
    size_t rows = n / c;
    size_t *a = malloc(2 * k * sizeof *a);
    if (!a) return NAN;
    size_t *b = a + k;
    double total = 0;
    for (size_t r = 0; r < rows; r++) {
        top_indices(ref + r * c, c, k, a);
        top_indices(test + r * c, c, k, b);
        size_t common = 0;
        for (size_t x = 0; x < k; x++)
            for (size_t y = 0; y < k; y++)
                common += a[x] == b[y];
        total += (double)common / (double)k;
    }
    free(a);
    return total / (double)rows;
}

typedef struct ranked {
    double v;
    size_t i;
} ranked;

static int cmp_ranked(const void *pa, const void *pb) {
    const ranked *a = pa, *b = pb;
    if (a->v < b->v) return -1;
    if (a->v > b->v) return 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* ranks (from 1, ties averaged) of x into r; tmp holds n entries */
static void rank_of(const double *x, size_t n, double *r, ranked *tmp) {
    for (size_t i = 0; i < n; i++)
        tmp[i] = (ranked){x[i], i};
    qsort(tmp, n, sizeof *tmp, cmp_ranked);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && tmp[j].v == tmp[i].v)
            j++;
        double mean = ((double)i + (double)j - 1) / 2 + 1; /* ranks i+1 .. j */
        for (size_t q = i; q < j; q++)
            r[tmp[q].i] = mean;
        i = j;
    }
}

double qm_spearman(const double *x, const double *y, size_t n) {
    if (n < 2) return NAN;
    for (size_t i = 0; i < n; i++)
        if (isnan(x[i]) || isnan(y[i])) return NAN;
    double *rx = malloc(2 * n * sizeof *rx);
    ranked *tmp = malloc(n * sizeof *tmp);
    if (!rx || !tmp) {
        free(rx);
        free(tmp);
        return -2;
    }
    double *ry = rx + n;
    rank_of(x, n, rx, tmp);
    rank_of(y, n, ry, tmp);
    free(tmp);
    double mean = ((double)n + 1) / 2, sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        double dx = rx[i] - mean, dy = ry[i] - mean;
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    free(rx);
    if (sxx == 0 || syy == 0) return NAN;
    return sxy / sqrt(sxx * syy);
}

void qm_pairwise_cosine(const double *a, size_t rows, size_t c, double *sims) {
    size_t k = 0;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = i + 1; j < rows; j++)
            sims[k++] = qm_cosine(a + i * c, a + j * c, c);
}

double qm_pairwise_spearman(const double *ref, const double *test, size_t rows, size_t c) {
    if (rows < 3 || c == 0) return NAN;
    size_t pairs = rows * (rows - 1) / 2;
    double *s = malloc(2 * pairs * sizeof *s);
    if (!s) return -2;
    qm_pairwise_cosine(ref, rows, c, s);
    qm_pairwise_cosine(test, rows, c, s + pairs);
    double rho = qm_spearman(s, s + pairs, pairs);
    free(s);
    return rho;
}
