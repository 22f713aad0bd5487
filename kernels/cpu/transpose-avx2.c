/*
 * transpose-avx2.c — cpu_transpose_x32_avx2: blocked 2-D transpose of 32-bit elements,
 * AVX2 + FMA (compiled with -mavx2 -mfma; called only when cpu_get() reports avx2 and fma).
 * The body is transpose-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-avx2.h"

#include "kernels/cpu/transpose-impl.h"
