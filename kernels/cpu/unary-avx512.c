/*
 * unary-avx512.c — cpu_unary_f32_avx512: elementwise activations and math on f32 (exp, tanh, erf,
 * GELU, ...), AVX-512 (compiled with -mavx512f/bw/vl/dq -mfma; called only when cpu_get() reports
 * avx512). The body is unary-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-avx512.h"

#include "kernels/cpu/unary-impl.h"
