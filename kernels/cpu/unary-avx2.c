/*
 * unary-avx2.c — cpu_unary_f32_avx2: elementwise activations and math on f32 (exp, tanh, erf, GELU,
 * ...), AVX2 + FMA (compiled with -mavx2 -mfma; called only when cpu_get() reports avx2 and fma).
 * The body is unary-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-avx2.h"

#include "kernels/cpu/unary-impl.h"
