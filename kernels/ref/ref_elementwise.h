/*
 * ref_elementwise.h — reference kernels for the "elementwise" op family:
 * numpy-broadcasting binary arithmetic, unary math/activations and Clip.
 * Also the generic broadcast drivers (2 and 3 operands) that the logic
 * kernels reuse. Kernels see only pointers, shapes and small parameter
 * structs, never the IR.
 */
#ifndef MOPT_KERNELS_REF_ELEMENTWISE_H
#define MOPT_KERNELS_REF_ELEMENTWISE_H

#include <mopt/mopt.h>
#include <stdbool.h>

#include "kernels/ref/ref.h"

/* ---- broadcast drivers -------------------------------------------------- */

/* A row function computes n output elements y[0..n) (dense) from operands
 * read at a[i*sa], b[i*sb] (strides in elements; 0 = broadcast). */
typedef void (*ref_row2_fn)(const void *a, int64_t sa, const void *b, int64_t sb, void *y,
                            int64_t n);
typedef void (*ref_row3_fn)(const void *a, int64_t sa, const void *b, int64_t sb, const void *c,
                            int64_t sc, void *y, int64_t n);

/* Runs `row` over a dense output of shape rank/dims (rank 0..MOPT_MAX_RANK).
 * x_strides are the element strides of each operand as seen from the output
 * (0 on broadcast axes, as op_broadcast_strides gives). Axes are collapsed
 * where possible so that the innermost loop is as long as it can be. */
void ref_broadcast2(ref_row2_fn row, int32_t rank, const int64_t *dims, const void *a, size_t a_esz,
                    const int64_t *a_strides, const void *b, size_t b_esz, const int64_t *b_strides,
                    void *y, size_t y_esz);
void ref_broadcast3(ref_row3_fn row, int32_t rank, const int64_t *dims, const void *a, size_t a_esz,
                    const int64_t *a_strides, const void *b, size_t b_esz, const int64_t *b_strides,
                    const void *c, size_t c_esz, const int64_t *c_strides, void *y, size_t y_esz);

/* ---- binary arithmetic -------------------------------------------------- */

typedef enum ref_binop {
    REF_BIN_ADD,
    REF_BIN_SUB,
    REF_BIN_MUL,
    REF_BIN_DIV,  /* integers: truncates toward zero; x / 0 gives 0 */
    REF_BIN_POW,  /* base f32/f64; exponent f32/f64/i32/i64; result has the base type */
    REF_BIN_MIN,  /* NaN propagates (numpy.minimum) */
    REF_BIN_MAX,  /* NaN propagates (numpy.maximum) */
    REF_BIN_MOD,  /* Mod fmod=0: result has the sign of the divisor (numpy.mod); x % 0 = 0 */
    REF_BIN_FMOD, /* Mod fmod=1: C fmod / truncated remainder, sign of the dividend; x % 0 = 0
                   * for integers, NaN for floats */
    REF_BIN_PRELU /* a < 0 ? a * b : a */
} ref_binop;

/* The row function for op on (a dtype, b dtype); the output has a's dtype.
 * a and b must have the same dtype except for POW. NULL when unsupported.
 * Supported: all ops on f32 and f64; ADD SUB MUL DIV MIN MAX MOD FMOD on i32
 * and i64 (two's complement wrap-around on overflow, like numpy). */
ref_row2_fn ref_binary_row(ref_binop op, mopt_dtype a, mopt_dtype b);

/* ---- unary -------------------------------------------------------------- */

typedef enum ref_unop {
    REF_UN_SQRT,
    REF_UN_EXP,
    REF_UN_LOG,
    REF_UN_NEG,
    REF_UN_ABS,
    REF_UN_RECIPROCAL,
    REF_UN_ERF,
    REF_UN_TANH,
    REF_UN_RELU,
    REF_UN_LEAKY_RELU, /* alpha */
    REF_UN_SIGMOID,
    REF_UN_HARD_SIGMOID, /* alpha, beta */
    REF_UN_HARD_SWISH,
    REF_UN_FLOOR,
    REF_UN_CEIL,
    REF_UN_ROUND, /* half to even */
    REF_UN_SIGN,
    REF_UN_SIN,
    REF_UN_COS,
    REF_UN_ELU,  /* alpha */
    REF_UN_SELU, /* alpha, gamma */
    REF_UN_SOFTPLUS,
    REF_UN_SOFTSIGN,
    REF_UN_CELU,             /* alpha */
    REF_UN_THRESHOLDED_RELU, /* alpha */
    REF_UN_GELU,             /* exact (erf) form */
    REF_UN_GELU_TANH,        /* tanh approximation */
    REF_UN_MISH,
    REF_UN_TAN,
    REF_UN_ATAN,
    REF_UN_ASIN,
    REF_UN_ACOS,
    REF_UN_SINH,
    REF_UN_COSH,
    REF_UN_ASINH,
    REF_UN_ACOSH,
    REF_UN_ATANH,
    REF_UN_COUNT
} ref_unop;

typedef struct ref_unary_params {
    float alpha, beta, gamma;
} ref_unary_params;

/* y[i] = op(x[i]) for i < n (x and y may be the same buffer). Float ops on
 * f32 and f64; NEG ABS SIGN RELU also on i32 and i64 (NEG/ABS of the minimum
 * value wrap, like numpy). Returns 0, or -1 when (op, dtype) is unsupported. */
int ref_unary(ref_unop op, mopt_dtype dtype, const void *x, void *y, int64_t n,
              const ref_unary_params *p);
/* Whether ref_unary supports (op, dtype). */
bool ref_unary_supported(ref_unop op, mopt_dtype dtype);

/* Clip bounds: an absent bound does not clip. Float types use lo/hi, integer
 * types ilo/ihi. */
typedef struct ref_clip_params {
    bool has_lo, has_hi;
    double lo, hi;
    int64_t ilo, ihi;
} ref_clip_params;

/* y = min(max(x, lo), hi) (so lo > hi gives hi everywhere, like numpy.clip);
 * NaN stays NaN. f32, f64, i8, u8, i32, i64. Returns 0, or -1 when the dtype
 * is unsupported. */
int ref_clip(mopt_dtype dtype, const void *x, void *y, int64_t n, const ref_clip_params *p);

/* SwiGLU: y = a * sigmoid(alpha * a) * b over n elements. */
void ref_swiglu(int64_t n, double alpha, const float *a, const float *b, float *y);

#endif
