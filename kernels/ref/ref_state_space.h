/*
 * ref_state_space.h — reference kernels of the stateful sequence mixers of
 * lib/ops/state_space.c: LinearAttention (a recurrent state per KV head,
 * linear / gated / delta / gated-delta updates) and CausalConvWithState (a
 * depthwise causal 1-D convolution that carries its last k-1 inputs). f32;
 * they never see the IR.
 */
#ifndef MOPT_KERNELS_REF_STATE_SPACE_H
#define MOPT_KERNELS_REF_STATE_SPACE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ref_linear_attn {
    int64_t batch, len;        /* B, T */
    int64_t q_heads, kv_heads; /* q_heads is a multiple of kv_heads */
    int64_t dk, dv;            /* key and value head sizes */
    bool gated;                /* decay given: S *= exp(g_t) before each update */
    bool delta;                /* beta given: write beta_t * (v_t - S^T k_t) */
    bool decay_per_key;        /* decay [B, T, Hkv*dk] (else [B, T, Hkv]) */
    bool beta_shared;          /* beta [B, T, 1] (else [B, T, Hkv]) */
    float scale;               /* output scale */
} ref_linear_attn;

/* q [B, T, Hq*dk], k [B, T, Hkv*dk], v [B, T, Hkv*dv]; decay and beta as
 * described above (NULL when not gated / not delta). state [B, Hkv, dk, dv]
 * holds the initial state and receives the final one. y [B, T, Hq*dv].
 * scratch holds dv doubles. Query head h reads KV head h / (Hq / Hkv). */
void ref_linear_attention(const ref_linear_attn *p, const float *q, const float *k, const float *v,
                          const float *decay, const float *beta, float *state, float *y,
                          double *scratch);

/* x [B, C, L], w [C, k] (the weight [C, 1, k]), bias [C] or NULL, past
 * [B, C, k-1] or NULL (zeros). y [B, C, L]; present [B, C, k-1] gets the
 * last k-1 positions of past ++ x. silu: y = conv * sigmoid(conv). */
void ref_causal_conv_state(int64_t batch, int64_t channels, int64_t len, int64_t k, const float *x,
                           const float *w, const float *bias, const float *past, bool silu,
                           float *y, float *present);

#endif
