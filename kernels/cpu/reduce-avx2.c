/*
 * reduce-avx2.c — cpu_reduce_f32_avx2: Sum/Mean/Max/Min reductions of f32 over one contiguous axis
 * block, AVX2 + FMA (compiled with -mavx2 -mfma; called only when cpu_get() reports avx2 and fma).
 * The body is reduce-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-avx2.h"

#include "kernels/cpu/reduce-impl.h"
