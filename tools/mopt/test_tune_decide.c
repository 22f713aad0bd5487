/*
 * test_tune_decide.c — the decision rule of `mopt tune` (tune_decide.c) on
 * made-up per-round metrics: a clear gain is kept, a gain within the A/A
 * noise is not, a candidate that breaks the quality budget never is, an
 * interval reaching 1 blocks a good median, the earlier of two candidates
 * within the threshold is kept, and the same numbers give the same result.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../tests/test_main.h"
#include "tune_decide.h"

#define R 10

/* A machine whose speed drifts from round to round: every slot of a round
 * sees the same factor, which the paired ratios cancel. */
static const double k_drift[R] = {1.00, 1.30, 0.90, 1.10, 2.00, 0.95, 1.05, 1.60, 1.00, 1.20};

static void scaled(double *out, double base, const double *jitter) {
    for (int r = 0; r < R; r++)
        out[r] = base * k_drift[r] * (jitter ? jitter[r] : 1.0);
}

static const double k_small[R] = {1.00, 1.01, 0.99, 1.00, 1.02, 0.98, 1.00, 1.01, 0.99, 1.00};
static const double k_large[R] = {1.00, 1.40, 0.70, 1.10, 0.65, 1.35, 0.90, 1.30, 0.75, 1.00};

/* The incumbent's rounds (base 2.0) and its A/A slot, the incumbent against
 * itself with the given jitter. */
static void incumbent(double *inc, double *aa, const double *aa_jitter) {
    scaled(inc, 2.0, NULL);
    scaled(aa, 2.0, aa_jitter);
}

MOPT_TEST(median_and_bootstrap) {
    double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2};
    assert_float_equal(td_median(odd, 3), 2.0, 0);
    assert_float_equal(td_median(even, 4), 2.5, 0);
    double c[R], med, lo, hi;
    for (int r = 0; r < R; r++)
        c[r] = 0.75;
    assert_int_equal(td_boot_median(c, R, &med, &lo, &hi), 0);
    assert_float_equal(med, 0.75, 0);
    assert_float_equal(lo, 0.75, 0);
    assert_float_equal(hi, 0.75, 0);
    double x[R] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    assert_int_equal(td_boot_median(x, R, &med, &lo, &hi), 0);
    assert_float_equal(med, 5.5, 0);
    assert_true(lo < 5.5 && hi > 5.5 && lo >= 1 && hi <= 10);
}

MOPT_TEST(clear_gain_is_kept) {
    double inc[R], aa[R], a[R];
    incumbent(inc, aa, k_small);
    scaled(a, 1.0, k_small); /* half the time, despite a 2x drift */
    td_cand c[1] = {{.rm = a, .n = R, .quality_ok = 1}};
    td_result o;
    assert_int_equal(td_decide(inc, aa, R, c, 1, 0.03, &o), 0);
    assert_true(o.noise < 0.03);
    assert_float_equal(o.threshold, 0.03, 1e-12);
    assert_true(c[0].judged && c[0].faster);
    assert_true(fabs(c[0].med - 0.5) < 0.01);
    assert_true(c[0].hi < 0.52);
    assert_int_equal(o.pick, 1);
}

MOPT_TEST(gain_within_noise_is_not_kept) {
    double inc[R], aa[R], a[R];
    incumbent(inc, aa, k_large); /* the incumbent against itself: +-35% */
    scaled(a, 1.6, k_small);     /* a steady 20% gain */
    td_cand c[1] = {{.rm = a, .n = R, .quality_ok = 1}};
    td_result o;
    assert_int_equal(td_decide(inc, aa, R, c, 1, 0.03, &o), 0);
    assert_true(o.noise > 0.2);
    assert_true(c[0].med < 0.85 && c[0].hi < 1.0); /* a real gain, but below the noise */
    assert_false(c[0].faster);
    assert_int_equal(o.pick, 0);
    /* with a quiet A/A slot the same gain is kept */
    scaled(aa, 2.0, k_small);
    assert_int_equal(td_decide(inc, aa, R, c, 1, 0.03, &o), 0);
    assert_true(c[0].faster);
    assert_int_equal(o.pick, 1);
}

MOPT_TEST(quality_failure_is_never_kept) {
    double inc[R], aa[R], a[R], b[R];
    incumbent(inc, aa, k_small);
    scaled(a, 0.5, NULL); /* 4x faster, breaks the budget */
    scaled(b, 1.5, NULL); /* 25% faster, holds it */
    td_cand c[2] = {{.rm = a, .n = R, .quality_ok = 0}, {.rm = b, .n = R, .quality_ok = 1}};
    td_result o;
    assert_int_equal(td_decide(inc, aa, R, c, 2, 0.03, &o), 0);
    assert_true(c[0].faster);    /* it was faster ... */
    assert_int_equal(o.pick, 2); /* ... but the one that holds the budget is kept */
    c[1].quality_ok = 0;
    assert_int_equal(td_decide(inc, aa, R, c, 2, 0.03, &o), 0);
    assert_int_equal(o.pick, 0);
}

MOPT_TEST(interval_reaching_one_blocks) {
    double inc[R], aa[R], a[R];
    incumbent(inc, aa, k_small);
    /* half the rounds much faster, 4 of 10 slower: median 0.5, but not reliably faster */
    const double mix[R] = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1.5, 1.5, 1.5, 1.5};
    for (int r = 0; r < R; r++)
        a[r] = inc[r] * mix[r];
    td_cand c[1] = {{.rm = a, .n = R, .quality_ok = 1}};
    td_result o;
    assert_int_equal(td_decide(inc, aa, R, c, 1, 0.03, &o), 0);
    assert_float_equal(c[0].med, 0.5, 1e-12);
    assert_true(c[0].hi >= 1.0);
    assert_false(c[0].faster);
    assert_int_equal(o.pick, 0);
}

MOPT_TEST(earlier_within_threshold_is_kept) {
    double inc[R], aa[R], a[R], b[R];
    incumbent(inc, aa, k_small);
    scaled(a, 1.14, NULL); /* ratio 0.57 */
    scaled(b, 1.10, NULL); /* ratio 0.55: within 3% of it */
    td_cand c[2] = {{.rm = a, .n = R, .quality_ok = 1}, {.rm = b, .n = R, .quality_ok = 1}};
    td_result o;
    assert_int_equal(td_decide(inc, aa, R, c, 2, 0.03, &o), 0);
    assert_int_equal(o.best, 2);
    assert_int_equal(o.pick, 1);
    scaled(a, 1.24, NULL); /* ratio 0.62: the later one is faster beyond the threshold */
    assert_int_equal(td_decide(inc, aa, R, c, 2, 0.03, &o), 0);
    assert_int_equal(o.best, 2);
    assert_int_equal(o.pick, 2);
}

MOPT_TEST(same_numbers_same_decision) {
    double inc[R], aa[R], a[R];
    incumbent(inc, aa, k_large);
    scaled(a, 1.3, k_large);
    td_cand c1[1] = {{.rm = a, .n = R, .quality_ok = 1}},
            c2[1] = {{.rm = a, .n = R, .quality_ok = 1}};
    td_result o1, o2;
    assert_int_equal(td_decide(inc, aa, R, c1, 1, 0.03, &o1), 0);
    assert_int_equal(td_decide(inc, aa, R, c2, 1, 0.03, &o2), 0);
    assert_true(c1[0].med == c2[0].med && c1[0].lo == c2[0].lo && c1[0].hi == c2[0].hi);
    assert_true(o1.noise == o2.noise && o1.pick == o2.pick);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(median_and_bootstrap),
        cmocka_unit_test(clear_gain_is_kept),
        cmocka_unit_test(gain_within_noise_is_not_kept),
        cmocka_unit_test(quality_failure_is_never_kept),
        cmocka_unit_test(interval_reaching_one_blocks),
        cmocka_unit_test(earlier_within_threshold_is_kept),
        cmocka_unit_test(same_numbers_same_decision),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
