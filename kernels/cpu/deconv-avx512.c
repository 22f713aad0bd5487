/*
 * deconv-avx512.c — cpu_deconv_f32_avx512: the ConvTranspose whose kernel equals
 * its stride, avx512 tier (see kernels/meson.build for its flags). The body is
 * deconv-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-avx512.h"

#include "kernels/cpu/deconv-impl.h"
