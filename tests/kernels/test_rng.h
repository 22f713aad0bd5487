/*
 * test_rng.h — the seeded xorshift generator of the kernel tests that draw
 * random geometries and values (test_qconv, test_qlstm, test_dynquant,
 * test_rowquant, test_cpu_kernels; tests/unit's test_kernels and
 * test_batcher): the same sequence on every machine. Define TEST_RNG_SEED before including to pick
 * another stream.
 */
#ifndef MOPT_TESTS_KERNELS_TEST_RNG_H
#define MOPT_TESTS_KERNELS_TEST_RNG_H

#include <stdint.h>

#ifndef TEST_RNG_SEED
#define TEST_RNG_SEED 0x9E3779B97F4A7C15ull
#endif

static uint64_t g_state = TEST_RNG_SEED;

/* The next state, all 64 bits (rnd, rnd_unit and pick draw from it). */
static inline uint64_t rnd64(void) {
    g_state ^= g_state << 13;
    g_state ^= g_state >> 7;
    g_state ^= g_state << 17;
    return g_state;
}

static inline uint32_t rnd(void) { return (uint32_t)(rnd64() >> 16); }

/* Uniform in [0, 1), 53 bits. */
static inline double rnd_unit(void) { return (double)(rnd64() >> 11) / 9007199254740992.0; }

/* Uniform in [lo, hi]. */
static inline int64_t pick(int64_t lo, int64_t hi) {
    return lo + (int64_t)(rnd() % (uint32_t)(hi - lo + 1));
}

#endif
