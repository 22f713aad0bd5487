/*
 * decode_attn_tiles-avx512bf16.c — cpu_decode_attn_tiles_avx512bf16:
 * mopt.DecodeAttention over a KV cache kept as bf16 tiles with vdpbf16ps
 * (decode_attn_tiles-impl.h, DT_BF16), when the library is built with
 * AVX512-BF16 (kernels/meson.build) and the CPU has it (cpu_get()).
 */
#include "kernels/cpu/decode_attn_tiles.h"

#include "core/cpu.h"

#if defined(__AVX512F__) && defined(__AVX512BF16__)
#include "kernels/cpu/simd-avx512.h"
#undef CPU_FN
#define CPU_FN(base) CPU_CAT(base, _avx512bf16)
#define DT_BF16 1
#include "kernels/cpu/decode_attn_tiles-impl.h"

bool cpu_decode_attn_tiles_bf16_ok(void) { return cpu_get()->avx512_bf16; }
#else
void cpu_decode_attn_tiles_avx512bf16(const kn_decode_attn *p, int64_t lo, int64_t hi) {
    (void)p, (void)lo, (void)hi;
}
bool cpu_decode_attn_tiles_bf16_ok(void) { return false; }
#endif
