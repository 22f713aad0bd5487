/*
 * test_rand.h — the xorshift64 generator the kernel unit tests draw their
 * inputs from (tests/unit/test_ln_u8.c, test_qstatic_onednn.c): each test
 * file keeps its own state and seed, so its inputs stay what they were.
 * test_frand returns a float uniform in [-1, 1). No cmocka needed.
 */
#ifndef MOPT_TESTS_TEST_RAND_H
#define MOPT_TESTS_TEST_RAND_H

#include <stdint.h>

static inline float test_frand(uint64_t *state) {
    uint64_t s = *state;
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    *state = s;
    return (float)((double)(s >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
}

#endif
