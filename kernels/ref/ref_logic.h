/*
 * ref_logic.h — reference kernels for the "logic" op family: comparisons,
 * boolean logic, Where, IsNaN/IsInf and Cast (with exact f16/bf16
 * conversions). Booleans are one byte; inputs count any non-zero byte as
 * true, outputs are always 0 or 1. Kernels see only pointers, shapes and
 * small parameter structs, never the IR. Broadcasting uses the drivers in
 * ref_elementwise.h.
 */
#ifndef MOPT_KERNELS_REF_LOGIC_H
#define MOPT_KERNELS_REF_LOGIC_H

#include <mopt/mopt.h>
#include <stdbool.h>

#include "kernels/ref/ref.h"
#include "kernels/ref/ref_elementwise.h"

typedef enum ref_cmpop { REF_CMP_EQ, REF_CMP_LT, REF_CMP_GT, REF_CMP_LE, REF_CMP_GE } ref_cmpop;

/* Row function for a comparison of two operands of dtype t, output bool.
 * f32 f64 i8 u8 i16 u16 i32 u32 i64 u64 bool; NULL when unsupported.
 * NaN compares false (and unequal). */
ref_row2_fn ref_compare_row(ref_cmpop op, mopt_dtype t);

typedef enum ref_boolop { REF_BOOL_AND, REF_BOOL_OR, REF_BOOL_XOR } ref_boolop;

/* Row function for a boolean op on two bool operands. */
ref_row2_fn ref_logical_row(ref_boolop op);

/* y[i] = !x[i] (bool). */
void ref_not(const uint8_t *x, uint8_t *y, int64_t n);

/* Row function for Where: operands (cond bool, x, y), elements of esz bytes
 * (1, 2, 4 or 8); NULL for other sizes. */
ref_row3_fn ref_where_row(size_t esz);

/* IsNaN / IsInf on f32 or f64 (output bool). Returns -1 for other dtypes. */
int ref_isnan(mopt_dtype t, const void *x, uint8_t *y, int64_t n);
int ref_isinf(mopt_dtype t, const void *x, uint8_t *y, int64_t n, bool positive, bool negative);

/* Element conversion between f32 f64 f16 bf16 i8 i16 i32 i64 u8 u16 u32 u64
 * bool, the float8 types, f8e8m0, f4e2m1, u4/i4 and u2/i2 (one per byte) (x
 * and y must not overlap
 * unless the types are equal).
 *  - to f16/bf16: rounded to nearest, ties to even, overflow to inf,
 *    subnormals kept, NaN stays NaN (quiet); from f64 in a single rounding.
 *  - float to integer: truncates toward zero; out-of-range values saturate
 *    to the target's min/max and NaN gives 0 (ONNX leaves both undefined).
 *  - integer to integer: two's complement wrap-around (like numpy/C).
 *  - to bool: x != 0 (NaN is true); from bool: 0 or 1.
 * Returns 0, or -1 when a dtype is unsupported. */
int ref_cast(mopt_dtype from, const void *x, mopt_dtype to, void *y, int64_t n);
/* ref_cast with ONNX Cast's `saturate` for float8 targets and its
 * `round_mode` (F8E8M0_UP/DOWN/NEAREST) for f8e8m0 (core/float8.h says what
 * each gives; ref_cast saturates and rounds up). 4- and 2-bit integer
 * targets take float values truncated toward zero (out of range or NaN: 0,
 * as the ONNX reference) and integer values wrapped to their low bits. */
int ref_cast_sat(mopt_dtype from, const void *x, mopt_dtype to, void *y, int64_t n, bool saturate,
                 int round_mode);
bool ref_cast_supported(mopt_dtype t);

#endif
