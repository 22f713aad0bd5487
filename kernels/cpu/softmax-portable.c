/*
 * softmax-portable.c — cpu_softmax_f32_portable: softmax / log-softmax of f32 rows,
 * portable tier (GCC/Clang vector extensions, any CPU).
 * The body is softmax-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-portable.h"

#include "kernels/cpu/softmax-impl.h"
