/*
 * attention.c — reference kernel of mopt.Attention: for each (batch, head)
 * the full score block S = scale * Q K^T (ref_gemm), mask and causality
 * applied, a numerically stable softmax per row, then O = P V (ref_gemm).
 * Straightforward on purpose: the oracle for the fused kernels.
 */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/ref/ref_attention.h"
#include "kernels/ref/ref_matmul.h"

/* Applies mask/causality to one row of scores and turns it into softmax
 * weights; dropped keys get weight 0. A row with no usable key is all 0. */
static void softmax_row(const attn_params *p, int64_t b, int64_t h, int64_t i, float *s) {
    int64_t limit = p->causal ? i + (p->Sk - p->Sq) : p->Sk - 1; /* last visible key */
    const int64_t moff = b * p->m_sb + h * p->m_sh + i * p->m_sq;
    float mx = -INFINITY;
    for (int64_t j = 0; j < p->Sk; j++) {
        bool keep = j <= limit;
        if (p->mask_bool && !p->mask_bool[moff + j * p->m_sk]) keep = false;
        if (!keep) {
            s[j] = -INFINITY;
            continue;
        }
        if (p->mask_add) s[j] += p->mask_add[moff + j * p->m_sk];
        if (s[j] > mx) mx = s[j];
    }
    if (mx == -INFINITY) { /* no key to attend: a row of zeros */
        for (int64_t j = 0; j < p->Sk; j++)
            s[j] = 0.0f;
        return;
    }
    double sum = 0.0;
    for (int64_t j = 0; j < p->Sk; j++) {
        float e = s[j] == -INFINITY ? 0.0f : expf(s[j] - mx);
        s[j] = e;
        sum += e;
    }
    float inv = (float)(1.0 / sum);
    for (int64_t j = 0; j < p->Sk; j++)
        s[j] *= inv;
}

bool ref_attention_f32(const attn_params *p, const float *Q, const float *K, const float *V,
                       float *O) {
    if (p->B == 0 || p->H == 0 || p->Sq == 0 || p->Dv == 0) return true;
    size_t n, bytes;
    if (!mopt_mul_overflow((size_t)p->Sq, (size_t)(p->Sk ? p->Sk : 1), &n) ||
        !mopt_mul_overflow(n, sizeof(float), &bytes))
        return false;
    float *S = mopt_aligned_alloc(bytes);
    if (!S) return false;
    for (int64_t b = 0; b < p->B; b++) {
        for (int64_t h = 0; h < p->H; h++) {
            const float *q = Q + b * p->q_sb + h * p->q_sh;
            const float *k = K + b * p->k_sb + h * p->k_sh;
            const float *v = V + b * p->v_sb + h * p->v_sh;
            float *o = O + b * p->o_sb + h * p->o_sh;
            if (p->Sk == 0) {
                for (int64_t i = 0; i < p->Sq; i++)
                    memset(o + i * p->o_ss, 0, (size_t)p->Dv * 4);
                continue;
            }
            ref_gemm_f32(p->Sq, p->Sk, p->D, q, p->q_ss, false, k, p->k_ss, true, S, p->Sk,
                         p->scale, 0.0f);
            for (int64_t i = 0; i < p->Sq; i++)
                softmax_row(p, b, h, i, S + i * p->Sk);
            ref_gemm_f32(p->Sq, p->Dv, p->Sk, S, p->Sk, false, v, p->v_ss, false, o, p->o_ss, 1.0f,
                         0.0f);
        }
    }
    mopt_aligned_free(S);
    return true;
}
