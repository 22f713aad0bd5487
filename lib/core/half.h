/*
 * half.h — the one home of the f16 (IEEE binary16) and bf16 conversions the
 * library uses (Cast, the dtype bridge, quantization, weight conversion).
 * Narrowing rounds to nearest, ties to even, overflow to inf, with gradual
 * underflow; NaN stays NaN (quiet). Widening is exact.
 */
#ifndef MOPT_CORE_HALF_H
#define MOPT_CORE_HALF_H

#include <stdint.h>
#include <string.h>

uint16_t half_from_f64(double x);
uint16_t bf16_from_f64(double x);
uint16_t half_from_f32(float x);
/* inline: per-element loops call it (KVAppend into bf16 tiles: a call per
 * element cost ~1 us per generation step) */
static inline uint16_t bf16_from_f32(float x) {
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    if ((b & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((b >> 16) | 0x40); /* quiet NaN */
    b += 0x7fffu + ((b >> 16) & 1u);
    return (uint16_t)(b >> 16);
}
float half_to_f32(uint16_t h);
float bf16_to_f32(uint16_t h);

#endif
