/*
 * cumulative.c — reference kernels of the "cumulative" op family
 * (ref_cumulative.h).
 */
#include "kernels/ref/ref_cumulative.h"

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
