/*
 * tensor_ops.c — reference kernels of the "tensor_ops" family
 * (ref_tensor_ops.h).
 */
#include "kernels/ref/ref_tensor_ops.h"

#include <string.h>

#define CUM_LOOP(T, U)                                                                             \
    do {                                                                                           \
        const T *xs = x;                                                                           \
        T *ys = y;                                                                                 \
        for (int64_t o = 0; o < outer; o++)                                                        \
            for (int64_t i = 0; i < inner; i++) {                                                  \
                U acc = prod ? (U)1 : (U)0;                                                        \
                for (int64_t s = 0; s < len; s++) {                                                \
                    int64_t j = reverse ? len - 1 - s : s;                                         \
                    int64_t off = (o * len + j) * inner + i;                                       \
                    if (exclusive) ys[off] = (T)acc;                                               \
                    acc = prod ? (U)(acc * (U)xs[off]) : (U)(acc + (U)xs[off]);                    \
                    if (!exclusive) ys[off] = (T)acc;                                              \
                }                                                                                  \
            }                                                                                      \
    } while (0)

int ref_cumulative(mopt_dtype t, bool prod, bool exclusive, bool reverse, int64_t outer,
                   int64_t len, int64_t inner, const void *x, void *y) {
    switch (t) {
    case MOPT_DTYPE_F32: CUM_LOOP(float, float); return 0;
    case MOPT_DTYPE_F64: CUM_LOOP(double, double); return 0;
    case MOPT_DTYPE_I32: CUM_LOOP(int32_t, uint32_t); return 0;
    case MOPT_DTYPE_I64: CUM_LOOP(int64_t, uint64_t); return 0;
    case MOPT_DTYPE_U32: CUM_LOOP(uint32_t, uint32_t); return 0;
    case MOPT_DTYPE_U64: CUM_LOOP(uint64_t, uint64_t); return 0;
    default: return -1;
    }
}

/* Insertion-sort style selection keeps ties in index order (stable). */
#define TOPK_LOOP(T)                                                                               \
    do {                                                                                           \
        const T *xs = x;                                                                           \
        T *vs = values;                                                                            \
        for (int64_t o = 0; o < outer; o++)                                                        \
            for (int64_t i = 0; i < inner; i++) {                                                  \
                const T *row = xs + o * len * inner + i;                                           \
                int64_t n = 0;                                                                     \
                for (int64_t j = 0; j < len; j++) {                                                \
                    T v = row[j * inner];                                                          \
                    int64_t pos = n < k ? n : k;                                                   \
                    while (pos > 0) {                                                              \
                        T u = row[scratch[pos - 1] * inner];                                       \
                        bool before = largest ? (v > u || (v == v && u != u))                      \
                                              : (v < u || (v == v && u != u));                     \
                        if (!before) break;                                                        \
                        pos--;                                                                     \
                    }                                                                              \
                    if (pos >= k) continue;                                                        \
                    int64_t last = n < k ? n : k - 1;                                              \
                    for (int64_t q = last; q > pos; q--)                                           \
                        scratch[q] = scratch[q - 1];                                               \
                    scratch[pos] = j;                                                              \
                    if (n < k) n++;                                                                \
                }                                                                                  \
                for (int64_t q = 0; q < k; q++) {                                                  \
                    int64_t off = (o * k + q) * inner + i;                                         \
                    vs[off] = row[scratch[q] * inner];                                             \
                    indices[off] = scratch[q];                                                     \
                }                                                                                  \
            }                                                                                      \
    } while (0)

int ref_topk(mopt_dtype t, bool largest, int64_t outer, int64_t len, int64_t inner, int64_t k,
             const void *x, void *values, int64_t *indices, int64_t *scratch) {
    switch (t) {
    case MOPT_DTYPE_F32: TOPK_LOOP(float); return 0;
    case MOPT_DTYPE_F64: TOPK_LOOP(double); return 0;
    case MOPT_DTYPE_I8: TOPK_LOOP(int8_t); return 0;
    case MOPT_DTYPE_U8: TOPK_LOOP(uint8_t); return 0;
    case MOPT_DTYPE_I16: TOPK_LOOP(int16_t); return 0;
    case MOPT_DTYPE_U16: TOPK_LOOP(uint16_t); return 0;
    case MOPT_DTYPE_I32: TOPK_LOOP(int32_t); return 0;
    case MOPT_DTYPE_U32: TOPK_LOOP(uint32_t); return 0;
    case MOPT_DTYPE_I64: TOPK_LOOP(int64_t); return 0;
    case MOPT_DTYPE_U64: TOPK_LOOP(uint64_t); return 0;
    default: return -1;
    }
}

void ref_hardmax(int64_t outer, int64_t len, int64_t inner, const float *x, float *y) {
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *row = x + o * len * inner + i;
            int64_t best = 0;
            for (int64_t j = 1; j < len; j++)
                if (row[j * inner] > row[best * inner]) best = j;
            for (int64_t j = 0; j < len; j++)
                y[(o * len + j) * inner + i] = j == best ? 1.0f : 0.0f;
        }
}

void ref_depth_space(bool to_space, bool crd, int64_t b, int64_t n, int64_t c, int64_t h, int64_t w,
                     size_t es, const void *x, void *y) {
    const char *xs = x;
    char *ys = y;
    if (to_space) { /* [n, c, h, w] -> [n, c/b², h*b, w*b] */
        int64_t oc = c / (b * b), oh = h * b, ow = w * b;
        for (int64_t in = 0; in < n; in++)
            for (int64_t co = 0; co < oc; co++)
                for (int64_t yh = 0; yh < oh; yh++)
                    for (int64_t yw = 0; yw < ow; yw++) {
                        int64_t i = yh % b, j = yw % b;
                        int64_t ci = crd ? co * b * b + i * b + j : (i * b + j) * oc + co;
                        int64_t src = ((in * c + ci) * h + yh / b) * w + yw / b;
                        int64_t dst = ((in * oc + co) * oh + yh) * ow + yw;
                        memcpy(ys + (size_t)dst * es, xs + (size_t)src * es, es);
                    }
    } else { /* [n, c, h, w] -> [n, c*b², h/b, w/b] */
        int64_t oh = h / b, ow = w / b, oc = c * b * b;
        for (int64_t in = 0; in < n; in++)
            for (int64_t ci = 0; ci < c; ci++)
                for (int64_t xh = 0; xh < h; xh++)
                    for (int64_t xw = 0; xw < w; xw++) {
                        int64_t i = xh % b, j = xw % b;
                        int64_t co = crd ? ci * b * b + i * b + j : (i * b + j) * c + ci;
                        int64_t src = ((in * c + ci) * h + xh) * w + xw;
                        int64_t dst = ((in * oc + co) * oh + xh / b) * ow + xw / b;
                        memcpy(ys + (size_t)dst * es, xs + (size_t)src * es, es);
                    }
    }
}
