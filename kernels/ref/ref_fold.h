/*
 * ref_fold.h — reference kernels of the "fold" op family, the inverses of
 * windowed ops that scatter values back into an image: Col2Im (sliding
 * blocks summed back, any number of spatial dims) and MaxUnpool (pooled
 * values put back at their argmax indices). Never sees the IR.
 */
#ifndef MOPT_KERNELS_REF_FOLD_H
#define MOPT_KERNELS_REF_FOLD_H

#include <stddef.h>
#include <stdint.h>

#define REF_FOLD_MAX_DIMS 8

typedef enum ref_fold_type {
    REF_FOLD_F32 = 0,
    REF_FOLD_F64 = 1,
    REF_FOLD_I32 = 2, /* sums wrap (two's complement) */
    REF_FOLD_I64 = 3,
} ref_fold_type;

/* Col2Im geometry over nd spatial dims. */
typedef struct ref_col2im_geom {
    int nd;
    int64_t image[REF_FOLD_MAX_DIMS];  /* output spatial dims */
    int64_t block[REF_FOLD_MAX_DIMS];  /* block (kernel) dims */
    int64_t blocks[REF_FOLD_MAX_DIMS]; /* block positions per dim */
    int64_t stride[REF_FOLD_MAX_DIMS], dil[REF_FOLD_MAX_DIMS];
    int64_t pad[REF_FOLD_MAX_DIMS]; /* at the beginning */
} ref_col2im_geom;

/* y [N, C, image...] = sum of the columns x [N, C * prod(block), prod(blocks)]
 * at their block positions; positions in the padding are dropped. */
void ref_col2im(ref_fold_type t, const ref_col2im_geom *g, int64_t N, int64_t C, const void *x,
                void *y);

/* MaxUnpool: y (rank dims out_dims, es-byte elements) is zeroed, then each
 * of the n elements of x goes to flat index idx[e] of the unpooled shape
 * (rank dims inner_dims, each <= out_dims: its top-left corner). Returns -1,
 * or the first e whose index is outside [0, prod(inner_dims)) (nothing is
 * written then). */
int64_t ref_max_unpool(size_t es, int rank, const int64_t *inner_dims, const int64_t *out_dims,
                       int64_t n, const void *x, const int64_t *idx, void *y);

#endif
