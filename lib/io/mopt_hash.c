/*
 * mopt_hash.c — mh64, the 64-bit checksum of the .mopt format (header
 * terminator, weights, source model): four independent multiply-rotate
 * lanes over 32-byte blocks, then the tail and an avalanche. Little-endian
 * by definition, so a file checks the same on every machine;
 * tests/hostile/gen_hostile_mopt.py computes the same function in Python.
 * Not a cryptographic hash: it finds corruption, not tampering.
 */
#include "io/mopt_format.h"

#include <string.h>

#define H_P1 0x9E3779B185EBCA87ull
#define H_P2 0xC2B2AE3D27D4EB4Full
#define H_P3 0x165667B19E3779F9ull

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t rd64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

uint64_t mfmt_hash64(const void *data, size_t len) {
    const uint8_t *p = data;
    size_t n = len;
    uint64_t a = H_P1, b = H_P2, c = H_P3, d = H_P1 ^ H_P3;
    while (n >= 32) {
        a = rotl64(a ^ (rd64(p) * H_P2), 31) * H_P1;
        b = rotl64(b ^ (rd64(p + 8) * H_P2), 31) * H_P1;
        c = rotl64(c ^ (rd64(p + 16) * H_P2), 31) * H_P1;
        d = rotl64(d ^ (rd64(p + 24) * H_P2), 31) * H_P1;
        p += 32;
        n -= 32;
    }
    uint64_t h = rotl64(a, 1) + rotl64(b, 7) + rotl64(c, 12) + rotl64(d, 18) + (uint64_t)len;
    while (n >= 8) {
        h = rotl64(h ^ (rd64(p) * H_P2), 27) * H_P1 + H_P3;
        p += 8;
        n -= 8;
    }
    while (n) {
        h = rotl64(h ^ ((uint64_t)*p * H_P3), 11) * H_P1;
        p++;
        n--;
    }
    h ^= h >> 33;
    h *= H_P2;
    h ^= h >> 29;
    h *= H_P3;
    h ^= h >> 32;
    return h;
}
