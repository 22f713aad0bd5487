/*
 * reduce-portable.c — cpu_reduce_f32_portable: Sum/Mean/Max/Min reductions of f32 over one
 * contiguous axis block, portable tier (GCC/Clang vector extensions, any CPU). The body is
 * reduce-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-portable.h"

#include "kernels/cpu/reduce-impl.h"
