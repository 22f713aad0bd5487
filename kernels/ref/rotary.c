/*
 * rotary.c — reference kernel of RotaryEmbedding (ref_rotary.h).
 */
#include "kernels/ref/ref_rotary.h"

int64_t ref_rotary_embedding(const ref_rotary *p, const float *x, const float *cos,
                             const float *sin, const int64_t *pos, float *y) {
    int64_t half = p->rot / 2;
    if (pos)
        for (int64_t i = 0; i < p->batch * p->seq; i++)
            if (pos[i] < 0 || pos[i] >= p->max_pos) return i;
    for (int64_t b = 0; b < p->batch; b++)
        for (int64_t s = 0; s < p->seq; s++) {
            int64_t row = pos ? pos[b * p->seq + s] : b * p->seq + s;
            const float *c = cos + row * half, *sn = sin + row * half;
            for (int64_t h = 0; h < p->heads; h++) {
                int64_t base = p->heads_first ? ((b * p->heads + h) * p->seq + s) * p->head
                                              : ((b * p->seq + s) * p->heads + h) * p->head;
                const float *xi = x + base;
                float *yi = y + base;
                for (int64_t i = 0; i < half; i++) {
                    int64_t i1 = p->interleaved ? 2 * i : i;
                    int64_t i2 = p->interleaved ? 2 * i + 1 : i + half;
                    float x1 = xi[i1], x2 = xi[i2];
                    float a = c[i] * x1, b2 = sn[i] * x2, d = sn[i] * x1, e = c[i] * x2;
                    yi[i1] = a - b2;
                    yi[i2] = d + e;
                }
                for (int64_t i = p->rot; i < p->head; i++)
                    yi[i] = xi[i];
            }
        }
    return -1;
}
