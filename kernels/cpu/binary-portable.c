/*
 * binary-portable.c — cpu_binary_f32_portable: elementwise binary Add/Sub/Mul/Div/Max/Min on f32
 * rows, portable tier (GCC/Clang vector extensions, any CPU). The body is binary-impl.h, shared by
 * all tiers.
 */
#include "kernels/cpu/simd-portable.h"

#include "kernels/cpu/binary-impl.h"
