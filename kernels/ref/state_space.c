/*
 * state_space.c — reference kernels of LinearAttention and
 * CausalConvWithState (ref_state_space.h). Sums are accumulated in double
 * and rounded once; the recurrent state stays f32, as the operators define.
 */
#include "kernels/ref/ref_state_space.h"

#include <math.h>
#include <stddef.h>

void ref_linear_attention(const ref_linear_attn *p, const float *q, const float *k, const float *v,
                          const float *decay, const float *beta, float *state, float *y,
                          double *scratch) {
    int64_t hq = p->q_heads, hk = p->kv_heads, dk = p->dk, dv = p->dv, T = p->len;
    int64_t group = hq / hk;
    for (int64_t b = 0; b < p->batch; b++)
        for (int64_t t = 0; t < T; t++) {
            int64_t bt = b * T + t;
            for (int64_t h = 0; h < hk; h++) {
                float *S = state + (b * hk + h) * dk * dv; /* [dk, dv] */
                const float *kt = k + (bt * hk + h) * dk;
                const float *vt = v + (bt * hk + h) * dv;
                if (p->gated) {
                    for (int64_t d = 0; d < dk; d++) {
                        float g =
                            p->decay_per_key ? decay[(bt * hk + h) * dk + d] : decay[bt * hk + h];
                        float e = expf(g);
                        for (int64_t m = 0; m < dv; m++)
                            S[d * dv + m] *= e;
                    }
                }
                /* scratch[m]: what is written for value feature m */
                if (p->delta) {
                    float bv = p->beta_shared ? beta[bt] : beta[bt * hk + h];
                    for (int64_t m = 0; m < dv; m++) {
                        double r = 0;
                        for (int64_t d = 0; d < dk; d++)
                            r += (double)S[d * dv + m] * kt[d];
                        float diff = vt[m] - (float)r;
                        scratch[m] = (double)(bv * diff);
                    }
                } else {
                    for (int64_t m = 0; m < dv; m++)
                        scratch[m] = vt[m];
                }
                for (int64_t d = 0; d < dk; d++)
                    for (int64_t m = 0; m < dv; m++)
                        S[d * dv + m] += (float)((double)kt[d] * scratch[m]);
                for (int64_t g = 0; g < group; g++) {
                    int64_t qh = h * group + g;
                    const float *qt = q + (bt * hq + qh) * dk;
                    float *yt = y + (bt * hq + qh) * dv;
                    for (int64_t m = 0; m < dv; m++) {
                        double acc = 0;
                        for (int64_t d = 0; d < dk; d++)
                            acc += (double)qt[d] * S[d * dv + m];
                        yt[m] = (float)(p->scale * acc);
                    }
                }
            }
        }
}

void ref_causal_conv_state(int64_t batch, int64_t channels, int64_t len, int64_t k, const float *x,
                           const float *w, const float *bias, const float *past, bool silu,
                           float *y, float *present) {
    int64_t np = k - 1; /* carried positions */
    for (int64_t b = 0; b < batch; b++)
        for (int64_t c = 0; c < channels; c++) {
            const float *xr = x + (b * channels + c) * len;
            const float *pr = past ? past + (b * channels + c) * np : NULL;
            const float *wr = w + c * k;
            float *yr = y + (b * channels + c) * len;
            /* padded[i] = i < np ? past[i] (or 0) : x[i - np] */
#define PADDED(i) ((i) < np ? (pr ? pr[(i)] : 0.0f) : xr[(i)-np])
            for (int64_t t = 0; t < len; t++) {
                double acc = bias ? bias[c] : 0.0;
                for (int64_t j = 0; j < k; j++)
                    acc += (double)wr[j] * PADDED(t + j);
                float o = (float)acc;
                if (silu) o = o * (1.0f / (1.0f + expf(-o)));
                yr[t] = o;
            }
            float *sr = present + (b * channels + c) * np;
            for (int64_t i = 0; i < np; i++)
                sr[i] = PADDED(len + i);
#undef PADDED
        }
}
