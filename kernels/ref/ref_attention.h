/*
 * ref_attention.h — the attention kernels' shared parameter block and the
 * reference kernel of mopt.Attention: O = softmax(scale * Q @ K^T + mask) @ V
 * per batch and head. Layouts are expressed as element strides, so one
 * kernel serves both "bhsd" ([B,H,S,D]) and "bsh" ([B,S,H*D]) tensors.
 * Kernels see only pointers, shapes and this struct, never the IR.
 */
#ifndef MOPT_KERNELS_REF_ATTENTION_H
#define MOPT_KERNELS_REF_ATTENTION_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/ref/ref.h"

typedef struct attn_params {
    int64_t B, H, Sq, Sk, D, Dv;
    /* element strides (batch, head, sequence) of Q, K, V and O; the last
     * (feature) axis is contiguous */
    int64_t q_sb, q_sh, q_ss;
    int64_t k_sb, k_sh, k_ss;
    int64_t v_sb, v_sh, v_ss;
    int64_t o_sb, o_sh, o_ss;
    float scale;
    bool causal; /* query i sees keys j <= i + (Sk - Sq) */
    /* optional mask, one of the two (or neither), with broadcast strides
     * (0 on broadcast axes) over [B, H, Sq, Sk] */
    const float *mask_add;    /* additive */
    const uint8_t *mask_bool; /* nonzero = attend */
    int64_t m_sb, m_sh, m_sq, m_sk;
    /* optional workspace for the fused kernels: `threads` blocks of
     * work_per_thread bytes, 64-byte aligned (see cpu_attention_*_scratch);
     * NULL: the kernel allocates its own */
    void *work;
    size_t work_per_thread;
} attn_params;

/* Semantics shared by every attention kernel: scores of keys excluded by the
 * bool mask or causality are dropped; a row left with no key, or whose every
 * score is -inf, gives zeros. Otherwise it is the exact unfused sequence
 * (a finite additive mask never empties a row). */

/* Materializes the [Sq, Sk] scores of one (batch, head) at a time. Returns
 * false when out of memory (the only failure). */
bool ref_attention_f32(const attn_params *p, const float *Q, const float *K, const float *V,
                       float *O);

#endif
