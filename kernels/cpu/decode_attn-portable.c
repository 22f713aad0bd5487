/*
 * decode_attn-portable.c — cpu_decode_attn_f32_portable: mopt.DecodeAttention over a
 * token-major KV cache, portable tier (called only when cpu_get() reports it).
 * The body is decode_attn-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-portable.h"

#include "kernels/cpu/decode_attn-impl.h"
