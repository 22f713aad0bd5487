/*
 * attention.c — reference kernel of mopt.Attention: for each (batch, head)
 * the score block S = scale * Q K^T (ref_gemm), mask and causality
 * applied, a numerically stable softmax per row, then O = P V (ref_gemm).
 * Straightforward on purpose: the oracle for the fused kernels. Query rows
 * go in blocks of at most ATTN_REF_SCORE_FLOATS scores (at least one row),
 * so the scratch stays proportional to K, not Sq * Sk.
 */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/ref/ref_attention.h"
#include "kernels/ref/ref_matmul.h"

#define ATTN_REF_SCORE_FLOATS ((int64_t)1 << 20) /* 4 MB of scores per block */

/* Applies mask/causality to one row of scores and turns it into softmax
 * weights; dropped keys get weight 0. A row with no usable key is all 0. */
static void softmax_row(const attn_params *p, int64_t b, int64_t h, int64_t i, float *s) {
    int64_t limit = p->causal ? i + (p->Sk - p->Sq) : p->Sk - 1; /* last visible key */
    const int64_t moff = b * p->mask.sb + h * p->mask.sh + i * p->mask.sq;
    float mx = -INFINITY;
    for (int64_t j = 0; j < p->Sk; j++) {
        bool keep = j <= limit;
        if (p->mask.keep && !p->mask.keep[moff + j * p->mask.sk]) keep = false;
        if (!keep) {
            s[j] = -INFINITY;
            continue;
        }
        if (p->mask.add) s[j] += p->mask.add[moff + j * p->mask.sk];
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
    int64_t sk = p->Sk ? p->Sk : 1;
    int64_t rows = ATTN_REF_SCORE_FLOATS / sk;
    if (rows < 1) rows = 1;
    if (rows > p->Sq) rows = p->Sq;
    size_t n, bytes;
    if (!mopt_mul_overflow((size_t)rows, (size_t)sk, &n) ||
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
            for (int64_t i0 = 0; i0 < p->Sq; i0 += rows) {
                int64_t r = p->Sq - i0 < rows ? p->Sq - i0 : rows;
                ref_gemm_f32(r, p->Sk, p->D, q + i0 * p->q_ss, p->q_ss, false, k, p->k_ss, true, S,
                             p->Sk, p->scale, 0.0f);
                for (int64_t i = 0; i < r; i++)
                    softmax_row(p, b, h, i0 + i, S + i * p->Sk);
                ref_gemm_f32(r, p->Dv, p->Sk, S, p->Sk, false, v, p->v_ss, false, o + i0 * p->o_ss,
                             p->o_ss, 1.0f, 0.0f);
            }
        }
    }
    mopt_aligned_free(S);
    return true;
}

/* ---- mopt.DecodeAttention ----------------------------------------------- */

/* K[b, t, h, d] and V[b, t, h, d], from the rows or from the bf16 tiles
 * (B == 1; bf16 widens exactly) */
static float bf16_wide(uint16_t x) {
    const uint32_t u = (uint32_t)x << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static float decode_k(const kn_decode_attn *p, int64_t b, int64_t t, int64_t h, int64_t d) {
    if (p->kt) return bf16_wide(p->kt[kn_kvt_k_index(p->H, p->D, t, h, d)]);
    return p->k[((b * p->T + t) * p->H + h) * p->D + d];
}
static float decode_v(const kn_decode_attn *p, int64_t b, int64_t t, int64_t h, int64_t d) {
    if (p->vt) return bf16_wide(p->vt[kn_kvt_v_index(p->H, p->Dv, t, h, d)]);
    return p->v[((b * p->T + t) * p->H + h) * p->Dv + d];
}

static float decode_score(const kn_decode_attn *p, const float *q, int64_t h, int64_t moff,
                          int64_t t, int64_t b, int64_t m) {
    float s = 0.0f;
    for (int64_t d = 0; d < p->D; d++)
        s += q[d] * decode_k(p, b, t, h, d);
    s *= p->scale;
    if (p->mask.keep && !p->mask.keep[moff + t * p->mask.sk]) s = p->fill;
    if (p->qpos && t > p->qpos[b * p->qp_sb + m * p->qp_sm]) s = p->fill;
    if (p->kpad && p->kpad[b * p->kp_sb + t] == 0) s = p->fill;
    if (p->mask.add) s += p->mask.add[moff + t * p->mask.sk];
    return s;
}

void ref_decode_attention_f32(const kn_decode_attn *p) {
    for (int64_t b = 0; b < p->B; b++)
        for (int64_t h = 0; h < p->H; h++)
            for (int64_t m = 0; m < p->M; m++) {
                const int64_t row = (b * p->H + h) * p->M + m;
                const int64_t moff = b * p->mask.sb + h * p->mask.sh + m * p->mask.sq;
                const float *q = p->q + row * p->D;
                float *y = p->y + row * p->Dv;
                float mx = -INFINITY;
                for (int64_t t = 0; t < p->T; t++) {
                    float s = decode_score(p, q, h, moff, t, b, m);
                    mx = s > mx || s != s ? s : mx;
                }
                for (int64_t c = 0; c < p->Dv; c++)
                    y[c] = 0.0f;
                if (p->T == 0) continue; /* an empty product: zeros */
                double sum = 0.0;
                for (int64_t t = 0; t < p->T; t++) {
                    float e = expf(decode_score(p, q, h, moff, t, b, m) - mx);
                    sum += e;
                    for (int64_t c = 0; c < p->Dv; c++)
                        y[c] += e * decode_v(p, b, t, h, c);
                }
                /* every score -inf (or none): -inf - -inf is NaN, as Softmax */
                float inv = mx != -INFINITY ? (float)(1.0 / sum) : NAN;
                for (int64_t c = 0; c < p->Dv; c++)
                    y[c] *= inv;
            }
}
