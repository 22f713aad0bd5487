/*
 * softmax-avx2.c — cpu_softmax_f32_avx2: softmax / log-softmax of f32 rows,
 * AVX2 + FMA (compiled with -mavx2 -mfma; called only when cpu_get() reports avx2 and fma).
 * The body is softmax-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-avx2.h"

#include "kernels/cpu/softmax-impl.h"
