/*
 * layernorm-portable.c — cpu_layernorm_f32_portable: layer normalization of f32 rows,
 * portable tier (GCC/Clang vector extensions, any CPU).
 * The body is layernorm-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-portable.h"

#include "kernels/cpu/layernorm-impl.h"
