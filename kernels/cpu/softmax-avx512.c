/*
 * softmax-avx512.c — cpu_softmax_f32_avx512: softmax / log-softmax of f32 rows,
 * AVX-512 (compiled with -mavx512f/bw/vl/dq -mfma; called only when cpu_get() reports avx512).
 * The body is softmax-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-avx512.h"

#include "kernels/cpu/softmax-impl.h"
