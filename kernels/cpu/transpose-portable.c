/*
 * transpose-portable.c — cpu_transpose_x32_portable: blocked 2-D transpose of 32-bit elements,
 * portable tier (GCC/Clang vector extensions, any CPU).
 * The body is transpose-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-portable.h"

#include "kernels/cpu/transpose-impl.h"
