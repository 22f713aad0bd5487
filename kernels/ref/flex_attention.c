/*
 * flex_attention.c — reference kernels of FlexAttention (ref_flex_attention.h).
 */
#include "kernels/ref/ref_flex_attention.h"

#include <math.h>

void ref_flex_scores(const ref_flex_dims *d, const float *q, const float *k, double scale,
                     float *scores) {
    /* the ONNX reference scales Q and K by sqrt(scale) (in the input type) */
    float r = sqrtf((float)scale);
    int64_t group = d->Hq / d->Hkv;
    for (int64_t b = 0; b < d->B; b++)
        for (int64_t h = 0; h < d->Hq; h++) {
            const float *qh = q + (b * d->Hq + h) * d->L * d->E;
            const float *kh = k + (b * d->Hkv + h / group) * d->S * d->E;
            float *sh = scores + (b * d->Hq + h) * d->L * d->S;
            for (int64_t i = 0; i < d->L; i++)
                for (int64_t j = 0; j < d->S; j++) {
                    double acc = 0;
                    for (int64_t e = 0; e < d->E; e++)
                        acc += (double)(qh[i * d->E + e] * r) * (double)(kh[j * d->E + e] * r);
                    sh[i * d->S + j] = (float)acc;
                }
        }
}

void ref_flex_softmax(float *x, int64_t rows, int64_t n) {
    for (int64_t r = 0; r < rows; r++) {
        float *row = x + r * n;
        float m = -INFINITY;
        for (int64_t j = 0; j < n; j++)
            if (row[j] > m) m = row[j];
        double sum = 0;
        for (int64_t j = 0; j < n; j++)
            sum += exp((double)row[j] - (double)m);
        for (int64_t j = 0; j < n; j++)
            row[j] = (float)(exp((double)row[j] - (double)m) / sum);
    }
}

void ref_flex_output(const ref_flex_dims *d, const float *probs, const float *v, float *y) {
    int64_t group = d->Hq / d->Hkv;
    for (int64_t b = 0; b < d->B; b++)
        for (int64_t h = 0; h < d->Hq; h++) {
            const float *ph = probs + (b * d->Hq + h) * d->L * d->S;
            const float *vh = v + (b * d->Hkv + h / group) * d->S * d->Ev;
            float *yh = y + (b * d->Hq + h) * d->L * d->Ev;
            for (int64_t i = 0; i < d->L; i++)
                for (int64_t c = 0; c < d->Ev; c++) {
                    double acc = 0;
                    for (int64_t j = 0; j < d->S; j++)
                        acc += (double)ph[i * d->S + j] * (double)vh[j * d->Ev + c];
                    yh[i * d->Ev + c] = (float)acc;
                }
        }
}
