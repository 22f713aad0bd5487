/*
 * decode_attn-avx512.c — cpu_decode_attn_f32_avx512: mopt.DecodeAttention over a
 * token-major KV cache, avx512 tier (called only when cpu_get() reports it).
 * The body is decode_attn-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-avx512.h"

#include "kernels/cpu/decode_attn-impl.h"
