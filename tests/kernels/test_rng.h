/*
 * test_rng.h — the seeded xorshift generator of the kernel tests that draw
 * random geometries and values (test_qconv, test_qlstm, test_dynquant,
 * test_rowquant): the same sequence
 * on every machine. Define TEST_RNG_SEED before including to pick another
 * stream.
 */
#ifndef MOPT_TESTS_KERNELS_TEST_RNG_H
#define MOPT_TESTS_KERNELS_TEST_RNG_H

#include <stdint.h>

#ifndef TEST_RNG_SEED
#define TEST_RNG_SEED 0x9E3779B97F4A7C15ull
#endif

static uint64_t g_state = TEST_RNG_SEED;

static inline uint32_t rnd(void) {
    g_state ^= g_state << 13;
    g_state ^= g_state >> 7;
    g_state ^= g_state << 17;
    return (uint32_t)(g_state >> 16);
}

/* Uniform in [lo, hi]. */
static inline int64_t pick(int64_t lo, int64_t hi) {
    return lo + (int64_t)(rnd() % (uint32_t)(hi - lo + 1));
}

#endif
