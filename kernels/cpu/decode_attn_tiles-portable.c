/*
 * decode_attn_tiles-portable.c — cpu_decode_attn_tiles_portable:
 * mopt.DecodeAttention over a KV cache kept as bf16 tiles, portable tier
 * (scalar widening of bf16 to f32). Body: decode_attn_tiles-impl.h.
 */
#include "kernels/cpu/simd-portable.h"

#include "kernels/cpu/decode_attn_tiles-impl.h"
