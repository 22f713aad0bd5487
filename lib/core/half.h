/*
 * half.h — the one home of the f16 (IEEE binary16) and bf16 conversions the
 * library uses (Cast, the dtype bridge, quantization, weight conversion).
 * Narrowing rounds to nearest, ties to even, overflow to inf, with gradual
 * underflow; NaN stays NaN (quiet). Widening is exact.
 */
#ifndef MOPT_CORE_HALF_H
#define MOPT_CORE_HALF_H

#include <stdint.h>

uint16_t half_from_f64(double x);
uint16_t bf16_from_f64(double x);
uint16_t half_from_f32(float x);
uint16_t bf16_from_f32(float x);
float half_to_f32(uint16_t h);
float bf16_to_f32(uint16_t h);

#endif
