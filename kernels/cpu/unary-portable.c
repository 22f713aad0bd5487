/*
 * unary-portable.c — cpu_unary_f32_portable: elementwise activations and math on f32 (exp, tanh,
 * erf, GELU, ...), portable tier (GCC/Clang vector extensions, any CPU). The body is unary-impl.h,
 * shared by all tiers.
 */
#include "kernels/cpu/simd-portable.h"

#include "kernels/cpu/unary-impl.h"
