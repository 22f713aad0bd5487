/*
 * half.c — f16 and bf16 conversions (see half.h): exact widening, and
 * narrowing rounded once to nearest-even through the exact binary value.
 */
#include "core/half.h"

#include <math.h>
#include <string.h>

static int clz64(uint64_t m) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_clzll(m);
#else
    int n = 0;
    while (!(m & (UINT64_C(1) << 63)))
        m <<= 1, n++;
    return n;
#endif
}

/* Rounds |x| = m * 2^e (m > 0) to a small binary float with mbits fraction
 * bits and ebits exponent bits (ties to even, overflow to inf, gradual
 * underflow). Returns the bits without the sign. */
static uint32_t round_small(uint64_t m, int e, int mbits, int ebits) {
    int sh = clz64(m);
    m <<= sh;
    e -= sh;
    /* m in [2^63, 2^64): |x| in [2^(e+63), 2^(e+64)) */
    int bias = (1 << (ebits - 1)) - 1, emax = (1 << ebits) - 1;
    int E = e + 63 + bias;
    if (E >= emax) return (uint32_t)emax << mbits;
    int drop = 63 - mbits + (E < 1 ? 1 - E : 0);
    uint64_t sig;
    if (drop > 64) {
        sig = 0;
    } else if (drop == 64) {
        sig = m > (UINT64_C(1) << 63); /* exactly half rounds to even (0) */
    } else {
        sig = m >> drop;
        uint64_t rem = m & ((UINT64_C(1) << drop) - 1), half = UINT64_C(1) << (drop - 1);
        if (rem > half || (rem == half && (sig & 1))) sig++;
    }
    uint64_t bits = (E >= 1 ? (uint64_t)(E - 1) << mbits : 0) + sig;
    if (bits >= ((uint64_t)emax << mbits)) bits = (uint64_t)emax << mbits;
    return (uint32_t)bits;
}

static uint16_t f64_to_small(double x, int mbits, int ebits, uint16_t qnan) {
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    uint16_t sign = (uint16_t)((b >> 63) << 15);
    int exp = (int)((b >> 52) & 0x7ff);
    uint64_t frac = b & ((UINT64_C(1) << 52) - 1);
    if (exp == 0x7ff) {
        if (frac) return (uint16_t)(sign | qnan);
        return (uint16_t)(sign | (((1u << ebits) - 1) << mbits));
    }
    uint64_t m = exp ? (frac | (UINT64_C(1) << 52)) : frac;
    int e = exp ? exp - 1075 : -1074;
    if (m == 0) return sign;
    return (uint16_t)(sign | round_small(m, e, mbits, ebits));
}

uint16_t half_from_f64(double x) { return f64_to_small(x, 10, 5, 0x7e00); }
uint16_t bf16_from_f64(double x) { return f64_to_small(x, 7, 8, 0x7fc0); }
uint16_t half_from_f32(float x) { return half_from_f64((double)x); }

float half_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31;
    uint32_t exp = (h >> 10) & 0x1f, frac = h & 0x3ffu, b;
    if (exp == 0x1f) {
        b = sign | 0x7f800000u | (frac << 13);
    } else if (exp == 0) {
        float v = ldexpf((float)frac, -24);
        return sign ? -v : v;
    } else {
        b = sign | ((exp + 112u) << 23) | (frac << 13);
    }
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

float bf16_to_f32(uint16_t h) {
    uint32_t b = (uint32_t)h << 16;
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}
