/*
 * transpose-avx512.c — cpu_transpose_x32_avx512: blocked 2-D transpose of 32-bit elements,
 * AVX-512 (compiled with -mavx512f/bw/vl/dq -mfma; called only when cpu_get() reports avx512).
 * The body is transpose-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-avx512.h"

#include "kernels/cpu/transpose-impl.h"
