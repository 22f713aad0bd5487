/*
 * attention-avx512bf16.c — the fused attention kernel (attention_impl.h) with
 * Q K^T and P V on AVX512-BF16 (vdpbf16ps; softmax and accumulation in f32),
 * for nodes of precision bf16 and int8 (there with both products on
 * AVX512-VNNI instead: CPU_ATTN_QK_INT8 / _PV_INT8), with f32 or bf16
 * storage of Q, K, V and O (ATTN_IO_FN); compiled with avx512 + avx512bf16
 * + avx512vnni flags (kernels/meson.build). Only called when cpu_get()
 * reports avx512_bf16 (and avx512_vnni for the int8 flags).
 */
#define ATTN_FN cpu_attention_bf16_avx512
#define ATTN_IO_FN cpu_attention_bf16io_avx512
#define ATTN_SCRATCH_FN cpu_attention_bf16_avx512_scratch
#if defined(__AVX512F__) && defined(__AVX512BF16__)
#define ATTN_VLEN 16
#define ATTN_BF16 1
#include "kernels/cpu/attention_impl.h"
#else
/* Not built for AVX512-BF16: never called, since cpu_get() cannot report it. */
#include "kernels/cpu/attention_stub.h"
bool ATTN_IO_FN(const attn_params *p, const void *Q, const void *K, const void *V, void *O,
                unsigned io, int threads) {
    (void)p, (void)Q, (void)K, (void)V, (void)O, (void)io, (void)threads;
    return false;
}
#endif
