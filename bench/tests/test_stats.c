/*
 * test_stats.c — bench percentiles and moments against numpy's values
 * (percentile_cases.h, written by gen_percentiles.py).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../tests/test_main.h"

#include "percentile_cases.h"
#include "stats.h"

static void expect_close(const char *what, const char *name, double q, double got, double want) {
    double tol = 1e-12 * (fabs(want) > 1.0 ? fabs(want) : 1.0);
    if (!(fabs(got - want) <= tol))
        fail_msg("%s of case '%s' (q=%g): got %.17g, numpy says %.17g", what, name, q, got, want);
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

MOPT_TEST(stats_percentiles_match_numpy) {
    for (size_t k = 0; k < PC_NCASES; k++) {
        const pc_case *c = &pc_cases[k];
        double *s = malloc(c->n * sizeof *s);
        assert_non_null(s);
        memcpy(s, c->x, c->n * sizeof *s);
        qsort(s, c->n, sizeof *s, cmp);
        for (int i = 0; i < PC_NQ; i++)
            expect_close("percentile", c->name, pc_qs[i],
                         bench_percentile_sorted(s, c->n, pc_qs[i]), c->q[i]);
        free(s);
    }
}

MOPT_TEST(stats_latency_summary_matches_numpy) {
    /* pc_qs indices of 50, 90, 95, 99 */
    int i50 = -1, i90 = -1, i95 = -1, i99 = -1;
    for (int i = 0; i < PC_NQ; i++) {
        if (pc_qs[i] == 50.0) i50 = i;
        if (pc_qs[i] == 90.0) i90 = i;
        if (pc_qs[i] == 95.0) i95 = i;
        if (pc_qs[i] == 99.0) i99 = i;
    }
    assert_true(i50 >= 0 && i90 >= 0 && i95 >= 0 && i99 >= 0);
    for (size_t k = 0; k < PC_NCASES; k++) {
        const pc_case *c = &pc_cases[k];
        bench_latency l;
        assert_int_equal(bench_latency_compute(c->x, c->n, &l), 0); /* unsorted input */
        assert_int_equal(l.n, c->n);
        expect_close("p50", c->name, 50, l.p50, c->q[i50]);
        expect_close("p90", c->name, 90, l.p90, c->q[i90]);
        expect_close("p95", c->name, 95, l.p95, c->q[i95]);
        expect_close("p99", c->name, 99, l.p99, c->q[i99]);
        expect_close("mean", c->name, 0, l.mean, c->mean);
        double tol = 1e-9 * (c->std > 1.0 ? c->std : 1.0);
        if (fabs(l.stddev - c->std) > tol)
            fail_msg("std of '%s': got %.17g, numpy %.17g", c->name, l.stddev, c->std);
        expect_close("min", c->name, 0, l.min, c->min);
        expect_close("max", c->name, 100, l.max, c->max);
    }
}

MOPT_TEST(stats_input_not_modified) {
    double x[] = {3, 1, 2};
    bench_latency l;
    assert_int_equal(bench_latency_compute(x, 3, &l), 0);
    assert_true(x[0] == 3 && x[1] == 1 && x[2] == 2);
}

MOPT_TEST(stats_rejects_empty_and_nan) {
    bench_latency l;
    double x[] = {1.0, NAN, 2.0};
    assert_int_equal(bench_latency_compute(x, 0, &l), -1);
    assert_int_equal(l.n, 0);
    assert_int_equal(bench_latency_compute(x, 3, &l), -1);
    double y[] = {1.0, INFINITY};
    assert_int_equal(bench_latency_compute(y, 2, &l), -1);
}

MOPT_TEST(stats_percentile_clamps_q) {
    double s[] = {1.0, 2.0, 4.0};
    assert_true(bench_percentile_sorted(s, 3, -5.0) == 1.0);
    assert_true(bench_percentile_sorted(s, 3, 250.0) == 4.0);
    assert_true(bench_percentile_sorted(s, 3, NAN) == 1.0);
    assert_true(bench_percentile_sorted(s, 0, 50.0) == 0.0);
}

MOPT_TEST_MAIN(cmocka_unit_test(stats_percentiles_match_numpy),
               cmocka_unit_test(stats_latency_summary_matches_numpy),
               cmocka_unit_test(stats_input_not_modified),
               cmocka_unit_test(stats_rejects_empty_and_nan),
               cmocka_unit_test(stats_percentile_clamps_q))
