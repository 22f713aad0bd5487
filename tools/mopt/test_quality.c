/*
 * test_quality.c — unit test of the `mopt compare` metrics (quality.c).
 * gen_quality_cases.py computes the expected values with numpy and passes
 * the case file as argv[1] (with the case count as argv[2]); a few cases with
 * values that follow from the definitions (x against 2x, a reversed order)
 * are checked here as well.
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
#include "quality.h"

static const char *g_cases;
static long g_expected_count;

static double *read_values(FILE *f, const char *tag, size_t n) {
    char word[16];
    assert_int_equal(fscanf(f, "%15s", word), 1);
    assert_string_equal(word, tag);
    double *v = malloc((n ? n : 1) * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(fscanf(f, "%lf", &v[i]), 1);
    return v;
}

MOPT_TEST(test_numpy_cases) {
    assert_non_null(g_cases);
    FILE *f = fopen(g_cases, "r");
    assert_non_null(f);
    char name[64], metric[32];
    size_t n, c, k;
    long count = 0;
    while (fscanf(f, " case %63s %31s %zu %zu %zu", name, metric, &n, &c, &k) == 5) {
        double *ref = read_values(f, "ref", n), *test = read_values(f, "test", n), want;
        char word[16];
        assert_int_equal(fscanf(f, "%15s %lf", word, &want), 2);
        assert_string_equal(word, "expect");
        double got = NAN;
        if (strcmp(metric, "max_abs") == 0)
            got = qm_max_abs(ref, test, n);
        else if (strcmp(metric, "max_rel") == 0)
            got = qm_max_rel(ref, test, n);
        else if (strcmp(metric, "cosine") == 0)
            got = qm_cosine(ref, test, n);
        else if (strcmp(metric, "topk") == 0)
            got = qm_topk_agreement(ref, test, n, c, k);
        else if (strcmp(metric, "spearman") == 0)
            got = qm_spearman(ref, test, n);
        else if (strcmp(metric, "pairwise_spearman") == 0)
            got = qm_pairwise_spearman(ref, test, n / c, c);
        else
            fail_msg("unknown metric %s", metric);
        double tol = 1e-9 * fmax(1.0, fabs(want));
        if (!(fabs(got - want) <= tol))
            fail_msg("case %s (%s): got %.17g, numpy says %.17g", name, metric, got, want);
        free(ref);
        free(test);
        count++;
    }
    fclose(f);
    assert_int_equal(count, g_expected_count);
}

/* Values that follow from the definitions. */
MOPT_TEST(test_definitions) {
    double x[6] = {3, -1, 4, 1, -5, 9}, x2[6], rev[6], zero[6] = {0};
    for (int i = 0; i < 6; i++) {
        x2[i] = 2 * x[i];
        rev[i] = -x[i];
    }
    /* cosine is scale-free: x against 2x is 1, against -x is -1 */
    assert_true(fabs(qm_cosine(x, x2, 6) - 1) < 1e-15);
    assert_true(fabs(qm_cosine(x, rev, 6) + 1) < 1e-15);
    assert_true(qm_cosine(zero, zero, 6) == 1);
    assert_true(qm_cosine(x, zero, 6) == 0);
    /* 2x - x = x: max |x| = 9; relative error of 2x is |x|/|x| = 1 */
    assert_true(qm_max_abs(x, x2, 6) == 9);
    assert_true(fabs(qm_max_rel(x, x2, 6) - 1) < 1e-15);
    /* a NaN in test only is the worst error there is */
    double xn[6];
    memcpy(xn, x, sizeof xn);
    xn[3] = NAN;
    assert_true(isnan(qm_max_abs(x, xn, 6)));
    assert_true(isnan(qm_cosine(x, xn, 6)));
    /* a monotonic map keeps the ranks, a reversal negates them */
    assert_true(fabs(qm_spearman(x, x2, 6) - 1) < 1e-15);
    assert_true(fabs(qm_spearman(x, rev, 6) + 1) < 1e-15);
    /* without ties, 1 - 6 sum d^2 / (n (n^2 - 1)): ranks of x are
     * 4 2 5 3 1 6, of y (the two largest swapped) 4 2 6 3 1 5: d^2 sum = 2 */
    double y[6] = {3, -1, 9.5, 1, -5, 4.5};
    assert_true(fabs(qm_spearman(x, y, 6) - (1 - 6.0 * 2 / (6 * 35))) < 1e-14);
    /* two rows of 3: the first agrees on the argmax, the second does not */
    double r[6] = {0.1, 0.7, 0.2, 0.5, 0.4, 0.1}, t[6] = {0.2, 0.6, 0.2, 0.3, 0.4, 0.35};
    assert_true(qm_topk_agreement(r, t, 6, 3, 1) == 0.5);
    /* top-2 sets (ties to the lower index): {1,2} vs {1,0} -> 1/2, {0,1} vs {1,2} -> 1/2 */
    assert_true(qm_topk_agreement(r, t, 6, 3, 2) == 0.5);
    /* k larger than the row is clamped: every set is the whole row */
    assert_true(qm_topk_agreement(r, t, 6, 3, 9) == 1);
    /* pairwise similarities of rows scaled by positive factors do not change */
    double e[12] = {1, 0, 0, 1, 1, 0, 1, 1, 1, 0, 0.5, 2}, es[12];
    for (int i = 0; i < 12; i++)
        es[i] = e[i] * (1 + i / 3);
    assert_true(fabs(qm_pairwise_spearman(e, es, 4, 3) - 1) < 1e-14);
    assert_true(isnan(qm_pairwise_spearman(e, es, 2, 3)));
}

int main(int argc, char **argv) {
    g_cases = argc > 1 ? argv[1] : NULL;
    g_expected_count = argc > 2 ? strtol(argv[2], NULL, 10) : -1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numpy_cases),
        cmocka_unit_test(test_definitions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
