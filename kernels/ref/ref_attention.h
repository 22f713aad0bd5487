/*
 * ref_attention.h — the reference kernel of mopt.Attention: O = softmax(scale
 * * Q @ K^T + mask) @ V per batch and head, its parameters (attn_params)
 * those of kernels.h. Kernels see only pointers, shapes and that struct,
 * never the IR. Also mopt.DecodeAttention's reference (kn_decode_attn).
 */
#ifndef MOPT_KERNELS_REF_ATTENTION_H
#define MOPT_KERNELS_REF_ATTENTION_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "kernels/ref/ref.h"

/* Materializes the [Sq, Sk] scores of one (batch, head) at a time, with the
 * semantics of attn_params (kernels.h). Returns false when out of memory
 * (the only failure). */
bool ref_attention_f32(const attn_params *p, const float *Q, const float *K, const float *V,
                       float *O);

/* mopt.DecodeAttention (kn_decode_attn, kernels.h): per row, the scores are
 * computed twice (for the max, then for the weights), so nothing is
 * allocated; the weighted sum of V accumulates in y, divided at the end. */
void ref_decode_attention_f32(const kn_decode_attn *p);

#endif
