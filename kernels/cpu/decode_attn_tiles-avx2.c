/*
 * decode_attn_tiles-avx2.c — cpu_decode_attn_tiles_avx2: mopt.DecodeAttention
 * over a KV cache kept as bf16 tiles, avx2 tier (the bf16 pairs widened to
 * f32; called only when cpu_get() reports it). Body: decode_attn_tiles-impl.h.
 */
#include "kernels/cpu/simd-avx2.h"

#define DT_X86 1
#include "kernels/cpu/decode_attn_tiles-impl.h"
