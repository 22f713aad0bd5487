/*
 * cpu_attention.h — the fused attention kernels of the "cpu" backend:
 * O = softmax(scale * Q K^T + mask) V computed tile by tile over the keys
 * with an online softmax (running max and sum per query row, rescaling the
 * accumulator), so only one tile of the score matrix exists at a time.
 *
 * One implementation (attention_impl.h) compiled three times with different
 * per-file flags: AVX-512, AVX2+FMA and portable C. The caller must check
 * cpu_get() before calling a variant. Semantics are those of
 * attn_params (kernels/kernels.h), those of ref_attention_f32.
 */
#ifndef MOPT_KERNELS_CPU_ATTENTION_H
#define MOPT_KERNELS_CPU_ATTENTION_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/kernels.h"

/* Return false only when out of memory. threads >= 1 (used with OpenMP). */
bool cpu_attention_f32_avx512(const attn_params *p, const float *Q, const float *K, const float *V,
                              float *O, int threads);
bool cpu_attention_f32_avx2(const attn_params *p, const float *Q, const float *K, const float *V,
                            float *O, int threads);
bool cpu_attention_f32_portable(const attn_params *p, const float *Q, const float *K,
                                const float *V, float *O, int threads);

/* The AVX512-BF16 variant: Q K^T and P V on vdpbf16ps (inputs rounded to
 * bf16, softmax and sums in f32), for nodes of precision bf16; call only
 * when cpu_get()->avx512_bf16. Not exact: see attention_impl.h. */
bool cpu_attention_bf16_avx512(const attn_params *p, const float *Q, const float *K, const float *V,
                               float *O, int threads);
size_t cpu_attention_bf16_avx512_scratch(const attn_params *p, size_t *tile_bytes);
/* The same with Q, K, V and O each stored as f32 or, when its CPU_ATTN_IO_*
 * bit is set in io, as bf16 (same strides, in elements): for tensors the
 * runtime keeps in bf16 between ops. O is then rounded to bf16. */
#define CPU_ATTN_IO_Q 1u
#define CPU_ATTN_IO_K 2u
#define CPU_ATTN_IO_V 4u
#define CPU_ATTN_IO_O 8u
/* Not storage: Q K^T on AVX512-VNNI (u8 x s8, Q and K quantized per row;
 * attention_impl.h), for int8 nodes; only when cpu_get()->avx512_vnni. */
#define CPU_ATTN_QK_INT8 16u
/* Not storage: P V on AVX512-VNNI (P as u8 steps of 1/255, V s8 per column). */
#define CPU_ATTN_PV_INT8 32u
bool cpu_attention_bf16io_avx512(const attn_params *p, const void *Q, const void *K, const void *V,
                                 void *O, unsigned io, int threads);

/* The AMX variant (attention-amx.c): the same contract as the AVX512-BF16
 * one (same inputs, outputs within the same bf16 rounding bound, not the
 * same bits), with Q K^T and P V on AMX tiles; both products always in
 * bf16 (CPU_ATTN_QK_INT8 / _PV_INT8 are ignored). Call only when
 * cpu_get()->amx_kernels. */
bool cpu_attention_bf16_amx(const attn_params *p, const float *Q, const float *K, const float *V,
                            float *O, int threads);
bool cpu_attention_bf16io_amx(const attn_params *p, const void *Q, const void *K, const void *V,
                              void *O, unsigned io, int threads);
size_t cpu_attention_bf16_amx_scratch(const attn_params *p, size_t *tile_bytes);
/* Whether the AMX variant was built (the compiler knew AMX): if not, the two
 * functions above decline every call, whatever cpu_get() reports. */
bool cpu_attention_amx_built(void);

/* Scratch bytes one thread of a variant needs (the score tile, the packed
 * K^T and V of one head, the accumulators), 0 on overflow; *tile_bytes (if
 * not NULL) gets the size of the score tile alone. */
size_t cpu_attention_f32_avx512_scratch(const attn_params *p, size_t *tile_bytes);
size_t cpu_attention_f32_avx2_scratch(const attn_params *p, size_t *tile_bytes);
size_t cpu_attention_f32_portable_scratch(const attn_params *p, size_t *tile_bytes);

#endif
