/*
 * float8.h — the one home of the 8-bit float conversions (ONNX FLOAT8E4M3FN,
 * FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ) used by Cast, CastLike,
 * QuantizeLinear and DequantizeLinear.
 *
 * Narrowing rounds to nearest, ties to even, with gradual underflow, as the
 * ONNX Cast specification asks. A value whose rounded magnitude exceeds the
 * largest finite value becomes that value when `saturate` is set (infinities
 * too); without it E5M2 overflows to ±inf, E4M3FN to NaN (sign kept) and the
 * FNUZ types to their only NaN, 0x80. NaN stays NaN (E4M3FN 0x7F/0xFF, E5M2
 * 0x7E/0xFE, FNUZ 0x80). The FNUZ types have no negative zero: -0 and
 * negative values that round to zero become 0x00. Widening is exact.
 */
#ifndef MOPT_CORE_FLOAT8_H
#define MOPT_CORE_FLOAT8_H

#include <mopt/mopt.h>
#include <stdbool.h>
#include <stdint.h>

/* True for the four float8 dtypes. */
bool f8_is_float8(mopt_dtype t);
/* The value of the 8 bits v of float8 type t (t must be a float8 type). */
float f8_to_f32(mopt_dtype t, uint8_t v);
/* x rounded to float8 type t (a float8 type). */
uint8_t f8_from_f64(mopt_dtype t, double x, bool saturate);
/* The largest finite value of float8 type t. */
double f8_max(mopt_dtype t);

/* FLOAT4E2M1 (codes 0..15: sign 0x8, values 0 0.5 1 1.5 2 3 4 6): no inf or
 * NaN, so narrowing always saturates; ties to even; NaN gives 0x8 (-0), as
 * the ONNX reference does. */
float f4e2m1_to_f32(uint8_t v);
uint8_t f4e2m1_from_f64(double x);

/* FLOAT8E8M0: 2^(v - 127), 0xFF NaN. Narrowing rounds a value between two
 * powers of two up (round_mode F8E8M0_UP, ONNX's default), down, or to the
 * nearer (ties to the even code); zero and values below 2^-127 give 0x00,
 * negative values and NaN 0xFF, overflow 0xFE with saturate, else 0xFF. */
enum { F8E8M0_UP = 0, F8E8M0_DOWN = 1, F8E8M0_NEAREST = 2 };
float e8m0_to_f32(uint8_t v);
uint8_t e8m0_from_f64(double x, bool saturate, int round_mode);

#endif
