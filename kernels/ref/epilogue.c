/*
 * epilogue.c — reference epilogue of the fused operators: broadcast bias
 * and residual additions and the activation, applied in place on the output
 * of a gemm or convolution.
 */
#include <math.h>

#include "kernels/ref/ref_epilogue.h"

static inline float clamp01(float v) { return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v); }

static inline float act_one(float v, const kn_act_params *p) {
    switch (p->act) {
    case KN_ACT_NONE: return v;
    case KN_ACT_RELU: return v < 0.0f ? 0.0f : v;
    case KN_ACT_LEAKY_RELU: return v < 0.0f ? p->alpha * v : v;
    case KN_ACT_CLIP:
        /* NaN stays NaN, like Clip */
        if (v < p->alpha) return p->alpha;
        if (v > p->beta) return p->beta;
        return v;
    case KN_ACT_HARD_SWISH: return v * clamp01(v * (1.0f / 6.0f) + 0.5f);
    case KN_ACT_HARD_SIGMOID: return clamp01(p->alpha * v + p->beta);
    case KN_ACT_SIGMOID:
        if (v >= 0.0f)
            return 1.0f / (1.0f + expf(-v));
        else {
            float e = expf(v);
            return e / (1.0f + e);
        }
    case KN_ACT_TANH: return tanhf(v);
    case KN_ACT_SWISH: {
        kn_act_params s = {KN_ACT_SIGMOID, 0.0f, 0.0f};
        return v * act_one(v, &s);
    }
    case KN_ACT_GELU: return 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
    case KN_ACT_GELU_TANH:
        return 0.5f * v * (1.0f + tanhf(0.79788456080286535588f * (v + 0.044715f * v * v * v)));
    default: return v;
    }
}

void ref_activation_f32(float *y, int64_t n, const kn_act_params *act) {
    if (act->act == KN_ACT_NONE) return;
    for (int64_t i = 0; i < n; i++)
        y[i] = act_one(y[i], act);
}

void ref_epilogue_f32(int32_t rank, const int64_t *dims, float *y, const kn_addend *bias,
                      const kn_addend *residual, const kn_act_params *act) {
    const kn_addend *add[2] = {bias && bias->data ? bias : NULL,
                               residual && residual->data ? residual : NULL};
    int64_t total = 1;
    for (int32_t d = 0; d < rank; d++)
        total *= dims[d];
    if (total <= 0) return;
    if (!add[0] && !add[1]) {
        ref_activation_f32(y, total, act);
        return;
    }
    /* rows along the last axis; odometer over the outer axes */
    int64_t inner = rank > 0 ? dims[rank - 1] : 1;
    int64_t rows = total / inner;
    int64_t idx[MOPT_MAX_RANK] = {0}, off[2] = {0, 0};
    int64_t in_st[2] = {0, 0};
    for (int k = 0; k < 2; k++)
        if (add[k] && rank > 0) in_st[k] = add[k]->strides[rank - 1];
    for (int64_t r = 0; r < rows; r++) {
        float *row = y + r * inner;
        for (int k = 0; k < 2; k++) {
            if (!add[k]) continue;
            const float *src = add[k]->data + off[k];
            int64_t s = in_st[k];
            if (s == 1)
                for (int64_t j = 0; j < inner; j++)
                    row[j] += src[j];
            else
                for (int64_t j = 0; j < inner; j++)
                    row[j] += src[j * s];
        }
        if (act->act != KN_ACT_NONE)
            for (int64_t j = 0; j < inner; j++)
                row[j] = act_one(row[j], act);
        for (int32_t d = rank - 2; d >= 0; d--) {
            for (int k = 0; k < 2; k++)
                if (add[k]) off[k] += add[k]->strides[d];
            if (++idx[d] < dims[d]) break;
            for (int k = 0; k < 2; k++)
                if (add[k]) off[k] -= add[k]->strides[d] * dims[d];
            idx[d] = 0;
        }
    }
}
