/*
 * binary-avx2.c — cpu_binary_f32_avx2: elementwise binary Add/Sub/Mul/Div/Max/Min on f32 rows,
 * AVX2 + FMA (compiled with -mavx2 -mfma; called only when cpu_get() reports avx2 and fma).
 * The body is binary-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-avx2.h"

#include "kernels/cpu/binary-impl.h"
