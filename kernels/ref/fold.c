/*
 * fold.c — reference kernels of the "fold" op family (ref_fold.h): Col2Im
 * and MaxUnpool. Never sees the IR.
 */
#include "kernels/ref/ref_fold.h"

#include <stdbool.h>
#include <string.h>

/* One body per type: ACC adds a column value into an image element. */
#define DEFINE_COL2IM(NAME, T, ADD)                                                                \
    static void NAME(const ref_col2im_geom *g, int64_t N, int64_t C, const T *x, T *y) {           \
        const int nd = g->nd;                                                                      \
        int64_t K = 1, L = 1, P = 1;                                                               \
        for (int d = 0; d < nd; d++) {                                                             \
            K *= g->block[d];                                                                      \
            L *= g->blocks[d];                                                                     \
            P *= g->image[d];                                                                      \
        }                                                                                          \
        memset(y, 0, (size_t)(N * C * P) * sizeof(T));                                             \
        for (int64_t nc = 0; nc < N * C; nc++) {                                                   \
            T *img = y + nc * P;                                                                   \
            for (int64_t k = 0; k < K; k++) {                                                      \
                const T *col = x + (nc * K + k) * L;                                               \
                int64_t kd[REF_FOLD_MAX_DIMS], rem = k;                                            \
                for (int d = nd - 1; d >= 0; d--) {                                                \
                    kd[d] = rem % g->block[d];                                                     \
                    rem /= g->block[d];                                                            \
                }                                                                                  \
                for (int64_t l = 0; l < L; l++) {                                                  \
                    int64_t pos = 0, r = l, mul = 1;                                               \
                    bool in = true;                                                                \
                    for (int d = nd - 1; d >= 0 && in; d--) {                                      \
                        int64_t ld = r % g->blocks[d];                                             \
                        r /= g->blocks[d];                                                         \
                        int64_t p = ld * g->stride[d] - g->pad[d] + kd[d] * g->dil[d];             \
                        in = p >= 0 && p < g->image[d];                                            \
                        pos += p * mul;                                                            \
                        mul *= g->image[d];                                                        \
                    }                                                                              \
                    if (in) img[pos] = ADD(img[pos], col[l]);                                      \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

#define ADD_F(a, b) ((a) + (b))
#define ADD_I32(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))
#define ADD_I64(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
DEFINE_COL2IM(col2im_f32, float, ADD_F)
DEFINE_COL2IM(col2im_f64, double, ADD_F)
DEFINE_COL2IM(col2im_i32, int32_t, ADD_I32)
DEFINE_COL2IM(col2im_i64, int64_t, ADD_I64)

void ref_col2im(ref_fold_type t, const ref_col2im_geom *g, int64_t N, int64_t C, const void *x,
                void *y) {
    switch (t) {
    case REF_FOLD_F32: col2im_f32(g, N, C, x, y); break;
    case REF_FOLD_F64: col2im_f64(g, N, C, x, y); break;
    case REF_FOLD_I32: col2im_i32(g, N, C, x, y); break;
    case REF_FOLD_I64: col2im_i64(g, N, C, x, y); break;
    }
}

int64_t ref_max_unpool(size_t es, int rank, const int64_t *inner_dims, const int64_t *out_dims,
                       int64_t n, const void *x, const int64_t *idx, void *y) {
    int64_t inner_total = 1, out_total = 1, ostr[REF_FOLD_MAX_DIMS + 2];
    for (int d = rank - 1; d >= 0; d--) {
        ostr[d] = out_total;
        out_total *= out_dims[d];
        inner_total *= inner_dims[d];
    }
    for (int64_t e = 0; e < n; e++)
        if (idx[e] < 0 || idx[e] >= inner_total) return e;
    memset(y, 0, (size_t)out_total * es);
    for (int64_t e = 0; e < n; e++) {
        /* the index's coordinates in the unpooled shape, placed in the output */
        int64_t r = idx[e], pos = 0;
        for (int d = rank - 1; d >= 0; d--) {
            pos += (r % inner_dims[d]) * ostr[d];
            r /= inner_dims[d];
        }
        memcpy((char *)y + (size_t)pos * es, (const char *)x + (size_t)e * es, es);
    }
    return -1;
}
