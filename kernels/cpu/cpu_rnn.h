/*
 * cpu_rnn.h — the vectorized pieces of the recurrent fast path
 * (lib/ops/cpu/recurrent_cpu.c): a small row-major GEMM against packed
 * (transposed) weights, and fused LSTM / GRU / RNN gate kernels for the
 * default activations (Sigmoid, Tanh). One body (rnn-impl.h) compiled per
 * tier: _avx512, _avx2, _portable; callers use a tier only when
 * cpu_kernels_for() reports it. Kernels never allocate.
 *
 * clip: gate pre-activations are clamped to [-clip, clip] (INFINITY: none).
 * Sigmoid and tanh are vmath.h's (relative error <= 3e-7).
 */
#ifndef MOPT_KERNELS_CPU_CPU_RNN_H
#define MOPT_KERNELS_CPU_CPU_RNN_H

#include <stdbool.h>
#include <stdint.h>

#define CPU_RNN_DECLARE_TIER(SFX)                                                                  \
    /* C[M,N] = (acc ? C : 0) + A[M,K] B[K,N] (row-major, leading dims lda ldb ldc). */            \
    void cpu_rnn_gemm_f32_##SFX(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,      \
                                const float *B, int64_t ldb, float *C, int64_t ldc, bool acc);     \
    /* LSTM over H units: pre-activations gx + gh of gates i o f c; P (NULL: none) the i o f       \
     * peepholes; c updated in place, h written. input_forget: f = 1 - i. */                       \
    void cpu_lstm_cell_f32_##SFX(int64_t H, const float *gx, const float *gh, const float *P,      \
                                 float clip, bool input_forget, float *c, float *h);               \
    /* GRU z and r: zr[j] = sigmoid(gx[j] + gh[j]) for j < 2H (z then r). */                       \
    void cpu_gru_zr_f32_##SFX(int64_t H, const float *gx, const float *gh, float clip, float *zr); \
    /* GRU output: pre = gxh + (r ? r * (ghh + rbh) : ghh + rbh) (rbh may be NULL: 0);             \
     * h = (1 - z) tanh(pre) + z h, in place. */                                                   \
    void cpu_gru_out_f32_##SFX(int64_t H, const float *gxh, const float *ghh, const float *rbh,    \
                               const float *r, const float *z, float clip, float *h);              \
    /* RNN: h = tanh(gx + gh). */                                                                  \
    void cpu_rnn_tanh_f32_##SFX(int64_t H, const float *gx, const float *gh, float clip, float *h);

CPU_RNN_DECLARE_TIER(avx512)
CPU_RNN_DECLARE_TIER(avx2)
CPU_RNN_DECLARE_TIER(portable)

#endif
