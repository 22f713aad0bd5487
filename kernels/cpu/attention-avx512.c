/*
 * attention-avx512.c — the fused attention kernel (attention_impl.h) built for
 * avx512 (16 floats per vector); compiled with avx512 flags (kernels/meson.build).
 * Only called when cpu_get() reports the ISA.
 */
#if defined(__AVX512F__)
#define ATTN_VLEN 16
#define ATTN_FN cpu_attention_f32_avx512
#define ATTN_SCRATCH_FN cpu_attention_f32_avx512_scratch
#include "kernels/cpu/attention_impl.h"
#else
/* Not built for avx512 (not x86-64): never called, since cpu_get() cannot report it. */
#include "kernels/cpu/cpu_attention.h"
bool cpu_attention_f32_avx512(const attn_params *p, const float *Q, const float *K, const float *V,
                              float *O, int threads) {
    (void)p, (void)Q, (void)K, (void)V, (void)O, (void)threads;
    return false;
}
size_t cpu_attention_f32_avx512_scratch(const attn_params *p, size_t *tile_bytes) {
    (void)p;
    if (tile_bytes) *tile_bytes = 0;
    return 0;
}
#endif
