/*
 * attention-avx2.c — the fused attention kernel (attention_impl.h) built for
 * avx2 (8 floats per vector); compiled with avx2 flags (kernels/meson.build).
 * Only called when cpu_get() reports the ISA.
 */
#if defined(__AVX2__)
#define ATTN_VLEN 8
#define ATTN_FN cpu_attention_f32_avx2
#define ATTN_SCRATCH_FN cpu_attention_f32_avx2_scratch
#include "kernels/cpu/attention_impl.h"
#else
/* Not built for avx2 (not x86-64): never called, since cpu_get() cannot report it. */
#include "kernels/cpu/cpu_attention.h"
bool cpu_attention_f32_avx2(const attn_params *p, const float *Q, const float *K, const float *V,
                            float *O, int threads) {
    (void)p, (void)Q, (void)K, (void)V, (void)O, (void)threads;
    return false;
}
size_t cpu_attention_f32_avx2_scratch(const attn_params *p, size_t *tile_bytes) {
    (void)p;
    if (tile_bytes) *tile_bytes = 0;
    return 0;
}
#endif
