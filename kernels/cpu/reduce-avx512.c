/*
 * reduce-avx512.c — cpu_reduce_f32_avx512: Sum/Mean/Max/Min reductions of f32 over one contiguous
 * axis block, AVX-512 (compiled with -mavx512f/bw/vl/dq -mfma; called only when cpu_get() reports
 * avx512). The body is reduce-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-avx512.h"

#include "kernels/cpu/reduce-impl.h"
