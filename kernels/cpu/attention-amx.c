/*
 * attention-amx.c — the fused attention kernel (attention_impl.h with
 * ATTN_AMX, attention_amx_block.h) with Q K^T and P V on AMX tiles
 * (tdpbf16ps, blocks of 32 query rows; the softmax stays f32 in zmm
 * registers), for nodes of precision bf16 (and int8:
 * lib/ops/cpu/attention_cpu.c), with f32 or bf16 storage of Q, K, V and O
 * as the AVX512-BF16 variant; the int8 product flags are ignored (both
 * products run in bf16). Built with avx512 + avx512bf16 + amx-tile +
 * amx-bf16 flags (kernels/meson.build); only called when cpu_get() reports
 * amx_kernels (which also means the tile state was granted to the process)
 * and cpu_attention_amx_built().
 */
#define ATTN_FN cpu_attention_bf16_amx
#define ATTN_IO_FN cpu_attention_bf16io_amx
#define ATTN_SCRATCH_FN cpu_attention_bf16_amx_scratch
/* gcc spells the AMX macros __AMX_TILE__ / __AMX_BF16__, clang __AMXTILE__ / __AMXBF16__ */
#if defined(__AMX_TILE__) || defined(__AMXTILE__)
#define ATTN_HAVE_AMX_TILE 1
#endif
#if defined(__AMX_BF16__) || defined(__AMXBF16__)
#define ATTN_HAVE_AMX_BF16 1
#endif
#if defined(__AVX512F__) && defined(__AVX512BF16__) && defined(ATTN_HAVE_AMX_TILE) &&              \
    defined(ATTN_HAVE_AMX_BF16)
#define ATTN_VLEN 16
#define ATTN_QB 32
#define ATTN_NV 4
#define ATTN_BF16 1
#define ATTN_AMX 1
#include "kernels/cpu/attention_impl.h"
bool cpu_attention_amx_built(void) { return true; }
#else
/* Not built for AMX: declines every call (cpu_attention_amx_built() false). */
#include "kernels/cpu/attention_stub.h"
bool ATTN_IO_FN(const attn_params *p, const void *Q, const void *K, const void *V, void *O,
                unsigned io, int threads) {
    (void)p, (void)Q, (void)K, (void)V, (void)O, (void)io, (void)threads;
    return false;
}
bool cpu_attention_amx_built(void) { return false; }
#endif
