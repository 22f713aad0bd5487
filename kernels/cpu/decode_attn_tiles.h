/*
 * decode_attn_tiles.h — mopt.DecodeAttention over a KV cache kept as bf16
 * tiles (kn_decode_attn's kt and vt, kernels.h), on vdpbf16ps: the
 * AVX512-BF16 kernel, outside the tier tables (its flags are not the
 * avx512 tier's). The avx512, avx2 and portable tiers' kernels widening
 * bf16 to f32 are cpu_kernels.decode_attn_tiles.
 */
#ifndef MOPT_KERNELS_CPU_DECODE_ATTN_TILES_H
#define MOPT_KERNELS_CPU_DECODE_ATTN_TILES_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernels.h"

/* Rows [lo, hi) of H * M (B == 1); call only when
 * cpu_decode_attn_tiles_bf16_ok(). */
void cpu_decode_attn_tiles_avx512bf16(const kn_decode_attn *p, int64_t lo, int64_t hi);
/* Whether the library was built with the kernel above and the CPU runs it. */
bool cpu_decode_attn_tiles_bf16_ok(void);

#endif
