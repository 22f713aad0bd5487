/*
 * gemv-portable.c — cpu_gemv_f32_portable: the M = 1 matrix product (row vector times a
 * dense [K, N] matrix), portable tier (flags in kernels/meson.build; called only
 * when cpu_kernels_for("portable") returns the tier). The body is gemv-impl.h.
 */
#include "kernels/cpu/simd-portable.h"

#include "kernels/cpu/gemv-impl.h"
