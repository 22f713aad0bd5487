/*
 * cpu_rnn.h — the vectorized recurrent kernels of the LSTM / GRU / RNN fast
 * path (lib/ops/cpu/recurrent_cpu.c), for the default activations (Sigmoid,
 * Tanh). One body (rnn-impl.h) compiled per tier: _avx512, _avx2,
 * _portable; callers use a tier only when cpu_kernels_for() reports it.
 * Kernels never allocate.
 *
 * Gate panels: weights are packed once (at load when constant) so that the
 * hidden units come in blocks of VW (the tier's vector width, cpu_rnn_vw_*),
 * Hb = ceil(H / VW) blocks, Hp = Hb * VW padded units. Block p holds, for
 * each k < K, the G gate vectors of its units: dst[p][k][g][VW] (padded units
 * have zero weights). A time step then streams the recurrent weights once,
 * sequentially, and each block's gates are finished while its products are
 * still in registers (sigmoid/tanh, peepholes, clip, cell and hidden update in
 * the same pass). Gate order is ONNX's: LSTM i o f c, GRU z r h, RNN one.
 *
 * clip: gate pre-activations are clamped to [-clip, clip] (INFINITY: none).
 * Sigmoid and tanh are vmath.h's (relative error <= 3e-7).
 */
#ifndef MOPT_KERNELS_CPU_CPU_RNN_H
#define MOPT_KERNELS_CPU_CPU_RNN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum cpu_rnn_cell { CPU_RNN_LSTM, CPU_RNN_GRU, CPU_RNN_RNN } cpu_rnn_cell;

/* One time step of N batch rows (cpu_rnn_step_f32_*). Rows are [N][Hp]. */
typedef struct cpu_rnn_step_args {
    cpu_rnn_cell cell;
    int64_t N, H;
    const float *R;         /* packed recurrent weights, K = H */
    const float *h;         /* previous hidden state; padding lanes 0 */
    bool h_zero;            /* h is all zero: the product is skipped */
    float *h_out;           /* new hidden state (not h); inactive rows get h's row */
    float *c;               /* LSTM cell state, updated in place */
    const float *const *gx; /* per row: the step's input projection (packed [Hb][G][VW],
                               biases included) or NULL: the row is inactive */
    float *const *y;        /* per row: where to write its new h (H floats) or NULL */
    const float *P;         /* LSTM peepholes packed as [Hb][3][VW] (i o f), or NULL */
    const float *rbh;       /* GRU: Rbh padded to Hp (zeros without B) */
    bool lbr;               /* GRU linear_before_reset */
    float *work;            /* GRU without linear_before_reset: 2 * N * Hp floats */
    float clip;
    bool input_forget; /* LSTM: f = 1 - i */
} cpu_rnn_step_args;

#define CPU_RNN_DECLARE_TIER(SFX)                                                                  \
    /* VW: the hidden units per block of this tier's packed layout. */                             \
    int64_t cpu_rnn_vw_##SFX(void);                                                                \
    /* Floats of a packed [Hb][K][G][VW] matrix. */                                                \
    size_t cpu_rnn_packed_floats_##SFX(int64_t G, int64_t H, int64_t K);                           \
    /* dst[p][k][g][l] = src[(g * H + p * VW + l) * K + k], 0 past H (src: ONNX W or R of one      \
     * direction, [G*H][K]; with K = 1 it packs a [G][H] vector: biases, peepholes). */            \
    void cpu_rnn_pack_f32_##SFX(const float *src, int64_t G, int64_t H, int64_t K, float *dst);    \
    /* Input projection of rows [0, M) for unit blocks [p0, p1): gx[m][p][g][VW] =                 \
     * bias[p][g][VW] + sum_k A[m * lda + k] Wp[p][k][g][VW]; gx rows are Hb * G * VW floats. */   \
    void cpu_rnn_xproj_f32_##SFX(int64_t M, int64_t K, const float *A, int64_t lda,                \
                                 const float *Wp, int64_t G, int64_t H, const float *bias,         \
                                 float *gx, int64_t p0, int64_t p1);                               \
    /* One recurrent time step (see cpu_rnn_step_args). */                                         \
    void cpu_rnn_step_f32_##SFX(const cpu_rnn_step_args *a);

CPU_RNN_DECLARE_TIER(avx512)
CPU_RNN_DECLARE_TIER(avx2)
CPU_RNN_DECLARE_TIER(portable)

#endif
