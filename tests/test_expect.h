/*
 * test_expect.h — cmocka checks on public-API calls, for the tests that use
 * <mopt/mopt.h> only: EXPECT_OK(call) fails the test with the status and
 * mopt_last_error() unless the call returns MOPT_OK; EXPECT_FAIL(call, want,
 * needle) unless it returns `want` with a non-empty message that contains
 * `needle` (NULL: any message); test_status_named() reads a status's name
 * (as the EXPECTED files of the hostile tests write it). Include after
 * <cmocka.h> and <mopt/mopt.h>.
 */
#ifndef MOPT_TESTS_TEST_EXPECT_H
#define MOPT_TESTS_TEST_EXPECT_H

#include <stdbool.h>
#include <string.h>

/* The status named as in mopt.h without its prefix ("OK", "SHAPE",
 * "INVALID_MODEL", ...): true with *st, or false for an unknown name. */
static inline bool test_status_named(const char *name, mopt_status *st) {
    /* indexed by the value (mopt.h numbers the statuses 0, 1, ...) */
    static const char *const k_names[] = {"OK",
                                          "INVALID_ARGUMENT",
                                          "OUT_OF_MEMORY",
                                          "IO",
                                          "PARSE",
                                          "INVALID_MODEL",
                                          "UNSUPPORTED",
                                          "SHAPE",
                                          "TYPE",
                                          "NOT_FOUND",
                                          "LIMIT",
                                          "INTERNAL",
                                          "CANCELLED",
                                          "BUSY"};
    for (size_t i = 0; i < sizeof k_names / sizeof k_names[0]; i++)
        if (strcmp(name, k_names[i]) == 0) {
            *st = (mopt_status)i;
            return true;
        }
    return false;
}

#define EXPECT_FAIL(call, want, needle) expect_fail((call), (want), (needle), #call, __LINE__)

static inline void expect_fail(mopt_status got, mopt_status want, const char *needle,
                               const char *what, int line) {
    if (got != want)
        fail_msg("line %d: %s returned %d (%s), want %d (%s); message: %s", line, what, got,
                 mopt_status_string(got), want, mopt_status_string(want), mopt_last_error());
    const char *msg = mopt_last_error();
    if (!msg || !msg[0]) fail_msg("line %d: %s failed without a message", line, what);
    if (needle && !strstr(msg, needle))
        fail_msg("line %d: %s: message '%s' does not mention '%s'", line, what, msg, needle);
}

#define EXPECT_OK(call)                                                                            \
    do {                                                                                           \
        mopt_status st_ = (call);                                                                  \
        if (st_ != MOPT_OK)                                                                        \
            fail_msg("line %d: %s failed: %s: %s", __LINE__, #call, mopt_status_string(st_),       \
                     mopt_last_error());                                                           \
    } while (0)

#endif
