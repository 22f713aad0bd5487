/*
 * decode_attn_tiles-avx512.c — cpu_decode_attn_tiles_avx512: the avx2 body
 * of decode_attn_tiles-impl.h (256-bit, bf16 widened to f32) compiled for
 * the avx512 tier, for CPUs without AVX512-BF16 (those with it run
 * cpu_decode_attn_tiles_avx512bf16, decode_attn_tiles-avx512bf16.c).
 */
#include "kernels/cpu/simd-avx512.h"

#define DT_X86 1
#include "kernels/cpu/decode_attn_tiles-impl.h"
