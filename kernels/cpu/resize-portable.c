/*
 * resize-portable.c — cpu_resize_f32_portable: nearest and bilinear resize of f32 planes
 * over precomputed tables, portable tier (see kernels/meson.build for its flags;
 * called only when cpu_kernels_for("portable") returns the tier). The body is
 * resize-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-portable.h"

#include "kernels/cpu/resize-impl.h"
