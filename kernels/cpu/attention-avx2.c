/*
 * attention-avx2.c — the fused attention kernel (attention_impl.h) built for
 * avx2 (8 floats per vector); compiled with avx2 flags (kernels/meson.build).
 * Only called when cpu_get() reports the ISA.
 */
#define ATTN_FN cpu_attention_f32_avx2
#define ATTN_SCRATCH_FN cpu_attention_f32_avx2_scratch
#if defined(__AVX2__)
#define ATTN_VLEN 8
#include "kernels/cpu/attention_impl.h"
#else
/* Not built for avx2 (not x86-64): never called, since cpu_get() cannot report it. */
#include "kernels/cpu/attention_stub.h"
#endif
