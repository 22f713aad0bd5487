/*
 * test_main.h — the main() of a cmocka test program whose tests need no group
 * setup or teardown: MOPT_TEST_MAIN(cmocka_unit_test(a), cmocka_unit_test(b))
 * runs the listed tests as one group named "tests" and returns the number that
 * failed. Needs <cmocka.h>.
 */
#ifndef MOPT_TESTS_TEST_MAIN_H
#define MOPT_TESTS_TEST_MAIN_H

#define MOPT_TEST_MAIN(...)                                                                        \
    int main(void) {                                                                               \
        const struct CMUnitTest tests[] = {__VA_ARGS__};                                           \
        return cmocka_run_group_tests(tests, NULL, NULL);                                          \
    }

#endif
