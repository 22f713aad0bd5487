/*
 * quality.h — the quality metrics of `mopt compare`: how far a TEST output is
 * from a REF output. Plain C on double arrays, no libmopt calls, so the unit
 * test (tests/unit/test_quality.c) checks them against numpy on their own.
 *
 * Rows: the classifier and sequence metrics and the embedding metric view an
 * output as rows along its last axis (n elements, row length c, n / c rows).
 */
#ifndef MOPT_TOOLS_QUALITY_H
#define MOPT_TOOLS_QUALITY_H

#include <stddef.h>

/* max |test - ref| (NaN when any element is NaN in one and not the other;
 * 0 for n == 0). */
double qm_max_abs(const double *ref, const double *test, size_t n);

/* max |test - ref| / max(|ref|, floor), floor = QM_REL_FLOOR * max |ref| (or
 * the smallest positive double when ref is all zeros): elements that are tiny
 * next to the output's scale are measured against that scale instead of
 * blowing up. */
#define QM_REL_FLOOR 1e-3
double qm_max_rel(const double *ref, const double *test, size_t n);

/* ref . test / (|ref| |test|); 1 when both are all zeros, 0 when only one
 * is. */
double qm_cosine(const double *ref, const double *test, size_t n);

/* The fraction of rows (row length c) whose top-k index sets of ref and test
 * overlap, averaged: mean over rows of |topk(ref) & topk(test)| / k. k = 1 is
 * top-1 (argmax) agreement. Ties go to the lower index. k is clamped to c. */
double qm_topk_agreement(const double *ref, const double *test, size_t n, size_t c, size_t k);

/* Spearman rank correlation of x and y (Pearson correlation of their ranks,
 * ties given their mean rank). NaN when n < 2 or either is constant; -2 when
 * out of memory. */
double qm_spearman(const double *x, const double *y, size_t n);

/* The cosine similarity of every pair of the rows rows of length c of a
 * (rows * (rows - 1) / 2 values, pairs (i, j) with i < j in order i-major)
 * written to sims. */
void qm_pairwise_cosine(const double *a, size_t rows, size_t c, double *sims);

/* Spearman correlation between the pairwise cosine similarities of the rows
 * of ref and of test: whether the embedding space keeps its ordering. NaN
 * when rows < 3 (fewer than 3 pairs); -2 when out of memory. */
double qm_pairwise_spearman(const double *ref, const double *test, size_t rows, size_t c);

#endif
