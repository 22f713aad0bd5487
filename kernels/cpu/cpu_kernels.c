/*
 * cpu_kernels.c — the per-tier kernel tables of kernels/cpu, the tier check
 * against the run-time CPU features (cpu_get(), capped by MOPT_ISA).
 * Compiled without ISA flags: it must run on any CPU. The range splitter
 * the op glue uses for big tensors is in cpu_pool.c.
 */
#include "kernels/cpu/cpu_kernels.h"

#include <string.h>

#include "core/cpu.h"

#define TIER_TABLE(SFX)                                                                            \
    const cpu_kernels cpu_kernels_##SFX = {                                                        \
        #SFX,                                                                                      \
        cpu_binary_f32_##SFX,                                                                      \
        cpu_binary_rows_f32_##SFX,                                                                 \
        cpu_unary_f32_##SFX,                                                                       \
        cpu_softmax_f32_##SFX,                                                                     \
        cpu_layernorm_f32_##SFX,                                                                   \
        cpu_reduce_f32_##SFX,                                                                      \
        cpu_transpose_x32_##SFX,                                                                   \
        cpu_resize_f32_##SFX,                                                                      \
        cpu_gemv_f32_##SFX,                                                                        \
        cpu_gemv_rows_f32_##SFX,                                                                   \
        cpu_decode_attn_f32_##SFX,                                                                 \
        cpu_decode_attn_tiles_##SFX,                                                               \
        cpu_softmax_cols_f32_##SFX,                                                                \
        cpu_affine_f32_##SFX,                                                                      \
        cpu_deconv_f32_##SFX,                                                                      \
        cpu_maxpool_f32_##SFX,                                                                     \
    };

#if defined(__x86_64__)
TIER_TABLE(avx512)
TIER_TABLE(avx2)
#define HAVE_X86_TIERS 1
#endif
TIER_TABLE(portable)

const cpu_kernels *cpu_kernels_for(const char *isa) {
#ifdef HAVE_X86_TIERS
    const cpu_features *f = cpu_get();
    if (strcmp(isa, "avx512") == 0)
        return f->avx512f && f->avx512bw && f->avx512vl && f->avx512dq && f->avx2 && f->fma
                   ? &cpu_kernels_avx512
                   : NULL;
    if (strcmp(isa, "avx2") == 0) return f->avx2 && f->fma ? &cpu_kernels_avx2 : NULL;
#endif
    if (strcmp(isa, "portable") == 0) return &cpu_kernels_portable;
    return NULL;
}
