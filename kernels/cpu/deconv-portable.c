/*
 * deconv-portable.c — cpu_deconv_f32_portable: the ConvTranspose whose kernel equals
 * its stride, portable tier (see kernels/meson.build for its flags). The body is
 * deconv-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-portable.h"

#include "kernels/cpu/deconv-impl.h"
