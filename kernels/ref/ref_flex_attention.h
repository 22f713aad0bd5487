/*
 * ref_flex_attention.h — reference kernels of FlexAttention (ONNX
 * ai.onnx.preview): the scaled scores, the softmax over the last axis and
 * the product with V, each a separate step so that the op can run its
 * score_mod / prob_mod subgraphs between them. Never sees the IR.
 */
#ifndef MOPT_KERNELS_REF_FLEX_ATTENTION_H
#define MOPT_KERNELS_REF_FLEX_ATTENTION_H

#include <stdint.h>

/* Shapes: Q [B, Hq, L, E], K [B, Hkv, S, E], V [B, Hkv, S, Ev], Hq a
 * multiple of Hkv (query head h reads key/value head h / (Hq / Hkv)). */
typedef struct ref_flex_dims {
    int64_t B, Hq, Hkv, L, S, E, Ev;
} ref_flex_dims;

/* scores [B, Hq, L, S] = (Q sqrt(scale)) (K sqrt(scale))^T, summed in double */
void ref_flex_scores(const ref_flex_dims *d, const float *q, const float *k, double scale,
                     float *scores);
/* softmax over the last axis of rows x n, in place (max subtracted, double sums) */
void ref_flex_softmax(float *x, int64_t rows, int64_t n);
/* y [B, Hq, L, Ev] = probs [B, Hq, L, S] V, summed in double */
void ref_flex_output(const ref_flex_dims *d, const float *probs, const float *v, float *y);

#endif
