/*
 * tune_decide.c — the decision rule of `mopt tune` (tune_decide.h): paired
 * per-round ratios, seeded bootstrap intervals of their medians, the A/A
 * noise threshold and the pick.
 */
#include "tune_decide.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_d(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

uint64_t td_splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double td_median(double *v, size_t n) {
    if (!n) return NAN;
    qsort(v, n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* numpy's "linear" percentile of sorted v */
static double pct(const double *v, size_t n, double q) {
    double h = (double)(n - 1) * q / 100.0, f = floor(h);
    size_t i = (size_t)f;
    if (i + 1 >= n) return v[n - 1];
    return v[i] + (h - f) * (v[i + 1] - v[i]);
}

int td_boot_median(const double *x, size_t n, double *med, double *lo, double *hi) {
    if (!n) return -1;
    double *tmp = malloc(n * sizeof *tmp), *meds = malloc(TD_BOOT_N * sizeof *meds);
    if (!tmp || !meds) {
        free(tmp);
        free(meds);
        return -1;
    }
    memcpy(tmp, x, n * sizeof *tmp);
    *med = td_median(tmp, n);
    uint64_t s = TD_SEED;
    for (int b = 0; b < TD_BOOT_N; b++) {
        for (size_t i = 0; i < n; i++)
            tmp[i] = x[td_splitmix(&s) % n];
        meds[b] = td_median(tmp, n);
    }
    qsort(meds, TD_BOOT_N, sizeof *meds, cmp_d);
    *lo = pct(meds, TD_BOOT_N, 5.0);
    *hi = pct(meds, TD_BOOT_N, 95.0);
    free(tmp);
    free(meds);
    return 0;
}

static int paired(const double *x, const double *inc, size_t n, double *med, double *lo,
                  double *hi) {
    double *q = malloc((n ? n : 1) * sizeof *q);
    if (!q) return -1;
    for (size_t r = 0; r < n; r++)
        q[r] = x[r] / inc[r];
    int rc = td_boot_median(q, n, med, lo, hi);
    free(q);
    return rc;
}

int td_decide(const double *inc, const double *aa, size_t n, td_cand *c, size_t n_c,
              double min_gain, td_result *o) {
    memset(o, 0, sizeof *o);
    o->aa_med = o->aa_lo = o->aa_hi = NAN;
    if (n && paired(aa, inc, n, &o->aa_med, &o->aa_lo, &o->aa_hi) == 0)
        o->noise = fmax(fabs(1.0 - o->aa_lo), fabs(o->aa_hi - 1.0));
    o->threshold = o->noise > min_gain ? o->noise : min_gain;
    double th = o->threshold;
    for (size_t j = 0; j < n_c; j++) {
        td_cand *k = &c[j];
        k->judged = k->faster = 0;
        size_t m = k->n < n ? k->n : n;
        if (!m) continue;
        if (paired(k->rm, inc, m, &k->med, &k->lo, &k->hi) != 0) return -1;
        k->judged = 1;
        /* the gain beats the noise, and the interval excludes "no change" */
        k->faster = k->med < 1.0 - th && k->hi < 1.0;
        if (k->faster && k->quality_ok && (!o->best || k->med < c[o->best - 1].med))
            o->best = j + 1;
    }
    if (!o->best) return 0;
    o->pick = o->best;
    for (size_t j = 0; j + 1 < o->best; j++)
        if (c[j].faster && c[j].quality_ok && c[j].med <= c[o->best - 1].med + th) {
            o->pick = j + 1;
            break;
        }
    return 0;
}
