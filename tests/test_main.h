/*
 * test_main.h — the main() of a cmocka test program whose tests need no group
 * setup or teardown: MOPT_TEST_MAIN(cmocka_unit_test(a), cmocka_unit_test(b))
 * runs the listed tests as one group named "tests" and returns the number that
 * failed; MOPT_TEST_MAIN_WITH(setup, teardown, tests...) does the same with
 * group setup and teardown functions (either may be NULL). Needs <cmocka.h>.
 *
 * MOPT_TEST(name) { ... } is the head of a test that does not use cmocka's
 * state: it defines `static void name(void **state)` around the body, so the
 * test is listed as cmocka_unit_test(name) as usual.
 */
#ifndef MOPT_TESTS_TEST_MAIN_H
#define MOPT_TESTS_TEST_MAIN_H

#define MOPT_TEST_MAIN_WITH(setup, teardown, ...)                                                  \
    int main(void) {                                                                               \
        const struct CMUnitTest tests[] = {__VA_ARGS__};                                           \
        return cmocka_run_group_tests(tests, setup, teardown);                                     \
    }
#define MOPT_TEST_MAIN(...) MOPT_TEST_MAIN_WITH(NULL, NULL, __VA_ARGS__)

#define MOPT_TEST(name)                                                                            \
    static void name##_body(void);                                                                 \
    static void name(void **state) {                                                               \
        (void)state;                                                                               \
        name##_body();                                                                             \
    }                                                                                              \
    static void name##_body(void)

#endif
