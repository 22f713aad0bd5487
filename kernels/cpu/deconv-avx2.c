/*
 * deconv-avx2.c — cpu_deconv_f32_avx2: the ConvTranspose whose kernel equals
 * its stride, avx2 tier (see kernels/meson.build for its flags). The body is
 * deconv-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-avx2.h"

#include "kernels/cpu/deconv-impl.h"
