/*
 * gemv-avx2.c — cpu_gemv_f32_avx2: the M = 1 matrix product (row vector times a
 * dense [K, N] matrix), avx2 tier (flags in kernels/meson.build; called only
 * when cpu_kernels_for("avx2") returns the tier). The body is gemv-impl.h.
 */
#include "kernels/cpu/simd-avx2.h"

#include "kernels/cpu/gemv-impl.h"
