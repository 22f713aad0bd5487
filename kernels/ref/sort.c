/*
 * sort.c — reference kernels of the "sort" op family (ref_sort.h).
 */
#include "kernels/ref/ref_sort.h"

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
