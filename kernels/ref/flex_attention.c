/*
 * flex_attention.c — reference kernels of FlexAttention (ref_flex_attention.h).
 */
#include "kernels/ref/ref_flex_attention.h"

#include <math.h>

/* Per query head (b, h), with key/value head h / (Hq / Hkv):
 *   c[i, j] = sum_t (double)(a[i, t] * r) * (double)(b[j, t] * r)
 * for i < L, j < nj, t < nt, summed in t order in double. a is the query
 * head's [L, nt] rows, b is read at b[j * bj + t * bt] in the key/value
 * head's [S, bw] block, c is the query head's [L, nj] block. */
static void head_products(const ref_flex_dims *d, const float *a, const float *b, int64_t bw,
                          int64_t bj, int64_t bt, int64_t nj, int64_t nt, float r, float *c) {
    int64_t group = d->Hq / d->Hkv;
    for (int64_t n = 0; n < d->B; n++)
        for (int64_t h = 0; h < d->Hq; h++) {
            const float *ah = a + (n * d->Hq + h) * d->L * nt;
            const float *bh = b + (n * d->Hkv + h / group) * d->S * bw;
            float *ch = c + (n * d->Hq + h) * d->L * nj;
            for (int64_t i = 0; i < d->L; i++)
                for (int64_t j = 0; j < nj; j++) {
                    double acc = 0;
                    for (int64_t t = 0; t < nt; t++)
                        acc += (double)(ah[i * nt + t] * r) * (double)(bh[j * bj + t * bt] * r);
                    ch[i * nj + j] = (float)acc;
                }
        }
}

void ref_flex_scores(const ref_flex_dims *d, const float *q, const float *k, double scale,
                     float *scores) {
    /* the ONNX reference scales Q and K by sqrt(scale) (in the input type) */
    head_products(d, q, k, d->E, d->E, 1, d->S, d->E, sqrtf((float)scale), scores);
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
    /* x * 1.0f is x: the products are probs * v exactly */
    head_products(d, probs, v, d->Ev, 1, d->Ev, d->Ev, d->S, 1.0f, y);
}
