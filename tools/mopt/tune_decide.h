/*
 * tune_decide.h — the decision rule of `mopt tune` on plain numbers (no
 * libmopt calls), so that test_tune_decide.c checks it on made-up rounds.
 *
 * Input: per-round target metrics (lower is better) of the incumbent, of its
 * A/A slot (the same session timed once more in each round) and of each
 * candidate, all from the same rounds. Ratios are paired per round (slot /
 * incumbent). noise = how far the 90% bootstrap interval of the A/A slot's
 * median ratio reaches from 1; threshold = max(min_gain, noise). A candidate
 * is faster when its median ratio < 1 - threshold and the upper end of its
 * own interval < 1; one that breaks the quality budget is never picked.
 * Among the faster ones, the earliest whose median ratio is within the
 * threshold of the best one's is picked. The bootstrap has a fixed seed:
 * the same numbers always give the same decision.
 */
#ifndef MOPT_TOOLS_TUNE_DECIDE_H
#define MOPT_TOOLS_TUNE_DECIDE_H

#include <stddef.h>
#include <stdint.h>

#define TD_BOOT_N 2000
#define TD_SEED 0x74756e65u /* "tune" */

typedef struct td_cand {
    const double *rm; /* per-round metric */
    size_t n;         /* rounds (paired with the incumbent's first n) */
    int quality_ok;
    /* out */
    int judged; /* 0: no rounds */
    double med, lo, hi;
    int faster;
} td_cand;

typedef struct td_result {
    double aa_med, aa_lo, aa_hi; /* the A/A slot's median ratio and interval */
    double noise, threshold;
    size_t best; /* 1 + index of the fastest faster candidate, 0: none */
    size_t pick; /* 1 + index of the one kept, 0: the incumbent stays */
} td_result;

/* splitmix64 step (the tool's seeded shuffles use it too). */
uint64_t td_splitmix(uint64_t *state);
/* Median of v[0..n) (sorts v); NaN for n == 0. */
double td_median(double *v, size_t n);
/* Median of x[0..n) and the 5th/95th percentiles of the medians of
 * TD_BOOT_N resamples (seed TD_SEED). 0, or -1 (out of memory, n == 0). */
int td_boot_median(const double *x, size_t n, double *med, double *lo, double *hi);
/* The decision over c[0..n_c). inc and aa have n rounds. 0, or -1 (out of
 * memory). */
int td_decide(const double *inc, const double *aa, size_t n, td_cand *c, size_t n_c,
              double min_gain, td_result *out);

#endif
