/*
 * test_alloc_budget.c — memory budgets (core/alloc.h), the mechanism behind
 * memory_limit: blocks made while a budget is installed are charged to it
 * and credited when freed (on any thread, after it is uninstalled), a block
 * that would pass the limit is refused and the refusal recorded, realloc
 * charges only the growth, a detached block no longer counts, and a budget
 * outlives its owner's release until its last block is freed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../test_main.h"

#include "core/alloc.h"

MOPT_TEST(budget_charges_and_credits) {
    int64_t live0 = mopt_alloc_live();
    mopt_budget *b = mopt_budget_create(0);
    assert_non_null(b);
    assert_null(mopt_budget_swap(b));
    void *p = mopt_malloc(1000);
    void *q = mopt_aligned_alloc(100); /* rounded to 128 */
    void *z = mopt_calloc(10, 10);
    assert_ptr_equal(mopt_budget_swap(NULL), b);
    void *free_p = mopt_malloc(5000); /* no budget installed: not charged */
    assert_non_null(p);
    assert_non_null(q);
    assert_non_null(z);
    assert_int_equal((uintptr_t)q % 64, 0);
    for (int i = 0; i < 100; i++)
        assert_int_equal(((unsigned char *)z)[i], 0);
    assert_int_equal(mopt_budget_used(b), 1000 + 128 + 100);
    assert_int_equal(mopt_budget_peak(b), 1228);
    mopt_free(p); /* credited without the budget installed */
    assert_int_equal(mopt_budget_used(b), 228);
    assert_int_equal(mopt_budget_peak(b), 1228);
    mopt_budget_reset_peak(b);
    assert_int_equal(mopt_budget_peak(b), 228);
    mopt_aligned_free(q);
    mopt_free(z);
    mopt_free(free_p);
    assert_int_equal(mopt_budget_used(b), 0);
    mopt_budget_release(b);
    assert_int_equal(mopt_alloc_live(), live0);
}

MOPT_TEST(budget_refuses_past_its_limit) {
    mopt_budget *b = mopt_budget_create(4096);
    mopt_budget *prev = mopt_budget_swap(b);
    void *p = mopt_malloc(3000);
    assert_non_null(p);
    assert_false(mopt_budget_refused(b, NULL, NULL));
    assert_true(mopt_budget_fits(b, 1096));
    assert_false(mopt_budget_fits(b, 1097));
    assert_null(mopt_malloc(2000));
    size_t size = 0;
    int64_t in_use = 0;
    assert_true(mopt_budget_refused(b, &size, &in_use));
    assert_int_equal(size, 2000);
    assert_int_equal(in_use, 3000);
    mopt_budget_clear_refusal(b);
    assert_false(mopt_budget_refused(b, NULL, NULL));
    assert_null(mopt_aligned_alloc(SIZE_MAX / 2)); /* absurd sizes too */
    assert_true(mopt_budget_refused(b, NULL, NULL));
    /* realloc charges the growth only, and a refused growth keeps the block */
    void *r = mopt_realloc(p, 4000);
    assert_non_null(r);
    assert_int_equal(mopt_budget_used(b), 4000);
    assert_null(mopt_realloc(r, 5000));
    assert_int_equal(mopt_budget_used(b), 4000);
    r = mopt_realloc(r, 10);
    assert_non_null(r);
    assert_int_equal(mopt_budget_used(b), 10);
    mopt_budget_swap(prev);
    mopt_free(r);
    assert_int_equal(mopt_budget_used(b), 0);
    mopt_budget_release(b);
}

MOPT_TEST(detached_blocks_and_lifetime) {
    int64_t live0 = mopt_alloc_live();
    mopt_budget *b = mopt_budget_create(1 << 20);
    mopt_budget_swap(b);
    void *out = mopt_aligned_alloc(4096);
    void *kept = mopt_malloc(64);
    mopt_budget_swap(NULL);
    mopt_alloc_detach(out); /* handed over: no longer the budget's */
    mopt_alloc_detach(NULL);
    assert_int_equal(mopt_budget_used(b), 64);
    mopt_budget_release(b);
    /* the budget lives on for `kept` (block + budget still held) */
    assert_int_equal(mopt_alloc_live(), live0 + 3);
    assert_int_equal(mopt_budget_used(b), 64);
    mopt_free(kept); /* the last block: the budget goes with it */
    assert_int_equal(mopt_alloc_live(), live0 + 1);
    mopt_aligned_free(out);
    assert_int_equal(mopt_alloc_live(), live0);
}

MOPT_TEST_MAIN(cmocka_unit_test(budget_charges_and_credits),
               cmocka_unit_test(budget_refuses_past_its_limit),
               cmocka_unit_test(detached_blocks_and_lifetime))
