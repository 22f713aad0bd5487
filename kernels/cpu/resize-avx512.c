/*
 * resize-avx512.c — cpu_resize_f32_avx512: nearest and bilinear resize of f32 planes
 * over precomputed tables, avx512 tier (see kernels/meson.build for its flags;
 * called only when cpu_kernels_for("avx512") returns the tier). The body is
 * resize-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-avx512.h"

#include "kernels/cpu/resize-impl.h"
