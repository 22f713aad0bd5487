/*
 * attention-avx512.c — the fused attention kernel (attention_impl.h) built for
 * avx512 (16 floats per vector); compiled with avx512 flags (kernels/meson.build).
 * Only called when cpu_get() reports the ISA.
 */
#define ATTN_FN cpu_attention_f32_avx512
#define ATTN_SCRATCH_FN cpu_attention_f32_avx512_scratch
#if defined(__AVX512F__)
#define ATTN_VLEN 16
#include "kernels/cpu/attention_impl.h"
#else
/* Not built for avx512 (not x86-64): never called, since cpu_get() cannot report it. */
#include "kernels/cpu/attention_stub.h"
#endif
