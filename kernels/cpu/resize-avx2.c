/*
 * resize-avx2.c — cpu_resize_f32_avx2: nearest and bilinear resize of f32 planes
 * over precomputed tables, avx2 tier (see kernels/meson.build for its flags;
 * called only when cpu_kernels_for("avx2") returns the tier). The body is
 * resize-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-avx2.h"

#include "kernels/cpu/resize-impl.h"
