/*
 * binary-avx512.c — cpu_binary_f32_avx512: elementwise binary Add/Sub/Mul/Div/Max/Min on f32 rows,
 * AVX-512 (compiled with -mavx512f/bw/vl/dq -mfma; called only when cpu_get() reports avx512).
 * The body is binary-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-avx512.h"

#include "kernels/cpu/binary-impl.h"
