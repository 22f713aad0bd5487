/*
 * gemv-avx512.c — cpu_gemv_f32_avx512: the M = 1 matrix product (row vector times a
 * dense [K, N] matrix), avx512 tier (flags in kernels/meson.build; called only
 * when cpu_kernels_for("avx512") returns the tier). The body is gemv-impl.h.
 */
#include "kernels/cpu/simd-avx512.h"

#include "kernels/cpu/gemv-impl.h"
