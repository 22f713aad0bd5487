/*
 * attention_onnx.c — reference kernel of the ONNX Attention operator (see
 * ref_attention_onnx.h). Straightforward loops: per (batch, q head, query)
 * one row of scores, its bias, softmax and the weighted sum of V.
 */
#include "kernels/ref/ref_attention_onnx.h"

#include <math.h>
#include <string.h>

/* Copies K or V (new part) into present[b, h, past + s, :]. */
static void fill_present(const ref_onnx_attn *p, const float *past, const float *cur, float *pres,
                         int64_t d) {
    int64_t total = p->past + p->kv_new;
    for (int64_t b = 0; b < p->batch; b++)
        for (int64_t h = 0; h < p->kv_heads; h++) {
            float *dst = pres + ((b * p->kv_heads + h) * total) * d;
            if (p->past > 0)
                memcpy(dst, past + ((b * p->kv_heads + h) * p->past) * d,
                       (size_t)(p->past * d) * sizeof(float));
            for (int64_t s = 0; s < p->kv_new; s++) {
                const float *src = p->kv_3d ? cur + ((b * p->kv_new + s) * p->kv_heads + h) * d
                                            : cur + ((b * p->kv_heads + h) * p->kv_new + s) * d;
                memcpy(dst + (p->past + s) * d, src, (size_t)d * sizeof(float));
            }
        }
}

int ref_onnx_attention(const ref_onnx_attn *p, const float *q, const float *k, const float *v,
                       const float *past_k, const float *past_v, float *y, float *present_k,
                       float *present_v, float *qk_out, double *s) {
    int64_t total = p->past + p->kv_new;
    fill_present(p, past_k, k, present_k, p->head);
    fill_present(p, past_v, v, present_v, p->v_head);
    double *bias = s + total, *prob = bias + total;
    int64_t group = p->kv_heads > 0 ? p->q_heads / p->kv_heads : 1;
    if (group < 1) group = 1;
    for (int64_t b = 0; b < p->batch; b++) {
        int64_t off = p->past;
        if (p->nonpad && p->past == 0) off = p->nonpad[b] - p->q_len;
        for (int64_t h = 0; h < p->q_heads; h++) {
            int64_t hk = h / group;
            const float *kb = present_k + (b * p->kv_heads + hk) * total * p->head;
            const float *vb = present_v + (b * p->kv_heads + hk) * total * p->v_head;
            for (int64_t i = 0; i < p->q_len; i++) {
                const float *qi = p->q_3d ? q + ((b * p->q_len + i) * p->q_heads + h) * p->head
                                          : q + ((b * p->q_heads + h) * p->q_len + i) * p->head;
                double bmax = -INFINITY;
                for (int64_t j = 0; j < total; j++) {
                    /* Q*s . K*s, each product rounded like the f32 reference */
                    double acc = 0;
                    for (int64_t d = 0; d < p->head; d++)
                        acc += (double)(qi[d] * p->scale_sqrt) *
                               (double)(kb[j * p->head + d] * p->scale_sqrt);
                    if (p->softcap > 0) acc = p->softcap * tanh(acc / p->softcap);
                    s[j] = acc;
                    double bj = 0;
                    if (p->mask) {
                        if (j >= p->mask_len) {
                            bj = -INFINITY;
                        } else {
                            int64_t mo = b * p->mask_strides[0] + h * p->mask_strides[1] +
                                         i * p->mask_strides[2] + j * p->mask_strides[3];
                            if (p->mask_bool)
                                bj = ((const uint8_t *)p->mask)[mo] ? 0 : -INFINITY;
                            else
                                bj = ((const float *)p->mask)[mo];
                        }
                    }
                    if (p->causal && j > i + off) bj = -INFINITY;
                    if (p->left_window >= 0 || p->right_window >= 0) {
                        int64_t diff = i + off - j;
                        if ((p->left_window >= 0 && diff > p->left_window) ||
                            (p->right_window >= 0 && -diff > p->right_window))
                            bj = -INFINITY;
                    }
                    if (p->nonpad && j >= p->nonpad[b]) bj = -INFINITY;
                    bias[j] = bj;
                    if (bj > bmax) bmax = bj;
                }
                bool all_masked = total == 0 || bmax == -INFINITY;
                double m = -INFINITY;
                for (int64_t j = 0; j < total; j++) {
                    double x = s[j] + bias[j];
                    prob[j] = x;
                    if (x > m) m = x;
                }
                double sum = 0;
                for (int64_t j = 0; j < total; j++) {
                    double e = m == -INFINITY ? 0 : exp(prob[j] - m);
                    prob[j] = e;
                    sum += e;
                }
                if (sum == 0) sum = 1;
                for (int64_t j = 0; j < total; j++)
                    prob[j] = all_masked ? 0 : (double)(float)(prob[j] / sum);
                if (qk_out) {
                    float *o = qk_out + ((b * p->q_heads + h) * p->q_len + i) * total;
                    for (int64_t j = 0; j < total; j++)
                        o[j] = (float)(p->mode == 3   ? prob[j]
                                       : p->mode == 2 ? s[j] + bias[j]
                                                      : s[j]);
                }
                float *yi = p->q_3d ? y + ((b * p->q_len + i) * p->q_heads + h) * p->v_head
                                    : y + ((b * p->q_heads + h) * p->q_len + i) * p->v_head;
                for (int64_t d = 0; d < p->v_head; d++) {
                    double acc = 0;
                    for (int64_t j = 0; j < total; j++)
                        acc += prob[j] * vb[j * p->v_head + d];
                    yi[d] = (float)acc;
                }
            }
        }
    }
    return 0;
}
