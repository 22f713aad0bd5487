/*
 * ref_attention_onnx.h — reference kernel of the ONNX Attention operator
 * (opset 23/24): scaled dot-product attention with grouped KV heads, a
 * boolean or additive mask, causal and sliding-window masking, a KV cache
 * (past/present), nonpad_kv_seqlen, softcap and the qk_matmul_output modes.
 * All f32; computed with double accumulators.
 */
#ifndef MOPT_KERNELS_REF_ATTENTION_ONNX_H
#define MOPT_KERNELS_REF_ATTENTION_ONNX_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ref_onnx_attn {
    int64_t batch, q_heads, kv_heads;
    int64_t q_len, kv_new, past; /* total keys = past + kv_new */
    int64_t head, v_head;        /* head sizes of Q/K and of V */
    bool q_3d, kv_3d;            /* Q / K,V laid out [B, S, H*D] instead of [B, H, S, D] */
    float scale_sqrt;            /* Q and K are each multiplied by this */
    float softcap;               /* > 0: softcap * tanh(x / softcap) */
    bool causal;
    int64_t left_window, right_window; /* -1: unbounded */
    int mode;                          /* qk_matmul_output mode 0..3 */
    /* mask: f32 (additive) or bool (mask_bool), dims right-aligned to 4 and
     * element strides (0 on broadcast axes); mask_len: its last dim (keys
     * beyond are masked) */
    const void *mask;
    bool mask_bool;
    int64_t mask_strides[4];
    int64_t mask_len;
    const int64_t *nonpad; /* [batch] or NULL */
} ref_onnx_attn;

/* present_k [B, Hk, past+kv_new, head], present_v likewise (both required);
 * qk_out [B, Hq, q_len, past+kv_new] may be NULL; y is [B, Hq, q_len, v_head]
 * (or [B, q_len, Hq*v_head] when q_3d). scratch holds 3 * (past+kv_new)
 * doubles. Returns 0. */
int ref_onnx_attention(const ref_onnx_attn *p, const float *q, const float *k, const float *v,
                       const float *past_k, const float *past_v, float *y, float *present_k,
                       float *present_v, float *qk_out, double *scratch);

#endif
