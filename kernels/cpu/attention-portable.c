/*
 * attention-portable.c — the fused attention kernel (attention_impl.h) built for
 * any CPU (plain C; 4-float vectors lower to SSE2 or scalar code).
 * Only called when cpu_get() reports the ISA.
 */
#define ATTN_VLEN 4
#define ATTN_FN cpu_attention_f32_portable
#define ATTN_SCRATCH_FN cpu_attention_f32_portable_scratch
#include "kernels/cpu/attention_impl.h"
