/*
 * layernorm-avx2.c — cpu_layernorm_f32_avx2: layer normalization of f32 rows,
 * AVX2 + FMA (compiled with -mavx2 -mfma; called only when cpu_get() reports avx2 and fma).
 * The body is layernorm-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-avx2.h"

#include "kernels/cpu/layernorm-impl.h"
