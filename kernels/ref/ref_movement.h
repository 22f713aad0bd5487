/*
 * ref_movement.h — reference kernels for the "movement" op family
 * (Transpose, Concat, Split, Slice, Gather, Tile, Pad, Trilu, Expand) and the
 * data-copying shape ops. They work on any dtype by element size. Kernels see
 * only pointers, shapes and small parameter structs, never the IR.
 */
#ifndef MOPT_KERNELS_REF_MOVEMENT_H
#define MOPT_KERNELS_REF_MOVEMENT_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/ref/ref.h"

/* Highest rank the strided copy accepts (Tile views a rank-8 tensor as rank 16). */
#define REF_COPY_MAX_RANK 16

/* dst (contiguous, shape dims[0..rank)) = src viewed through element strides
 * src_strides (may be 0 for broadcasting or negative for reversed slices);
 * src points at the element of index (0, ..., 0). esz: element size in bytes.
 * Adjacent axes that are contiguous in the source are merged first. */
void ref_copy_strided(void *dst, const void *src, size_t esz, int32_t rank, const int64_t *dims,
                      const int64_t *src_strides);

/* n_blocks times: copy block bytes from src to dst, advancing src by
 * src_step and dst by dst_step bytes (Concat and Split). */
void ref_copy_blocks(void *dst, size_t dst_step, const void *src, size_t src_step, int64_t n_blocks,
                     size_t block);

/* Gather along one axis: data seen as [outer, axis_dim, inner], indices
 * (already normalized to [0, axis_dim)) of count n_idx; dst is
 * [outer, n_idx, inner]. */
void ref_gather(void *dst, const void *src, size_t esz, int64_t outer, int64_t axis_dim,
                int64_t inner, const int64_t *idx, int64_t n_idx);

typedef enum ref_pad_mode {
    REF_PAD_CONSTANT = 0,
    REF_PAD_REFLECT = 1,
    REF_PAD_EDGE = 2,
    REF_PAD_WRAP = 3 /* the (cropped) input repeated periodically */
} ref_pad_mode;

/* Pads src (in_dims) into dst (out_dims = in_dims + begin + end, per axis).
 * begin[] may be negative (cropping). value: one element (constant mode).
 * reflect requires in_dims[a] >= 2 on padded axes (checked by the caller);
 * edge, reflect and wrap require in_dims[a] >= 1 where padding is added;
 * wrap repeats what is left of the axis after the negative pads crop it
 * (at least one element where padding is added, checked by the caller). */
void ref_pad(void *dst, const void *src, size_t esz, int32_t rank, const int64_t *in_dims,
             const int64_t *out_dims, const int64_t *begin, ref_pad_mode mode, const void *value);

/* Trilu on a batch of rows x cols matrices: keeps element (i, j) when
 * upper ? j - i >= k : j - i <= k, zero bytes elsewhere. */
void ref_trilu(void *dst, const void *src, size_t esz, int64_t batch, int64_t rows, int64_t cols,
               int64_t k, int upper);

/* GatherElements along axis: dst has idx_dims; idx normalized to
 * [0, src_dims[axis]). */
void ref_gather_elements(void *dst, const void *src, size_t esz, int32_t rank,
                         const int64_t *src_dims, const int64_t *idx_dims, int32_t axis,
                         const int64_t *idx);

typedef enum ref_scatter_op {
    REF_SCATTER_NONE = 0,
    REF_SCATTER_ADD = 1,
    REF_SCATTER_MUL = 2,
    REF_SCATTER_MAX = 3,
    REF_SCATTER_MIN = 4
} ref_scatter_op;

/* Scatter (dst already holds the data): for j < n, the chunk elements at
 * element offset off[j] of dst take (or combine with) updates
 * [j * chunk, (j + 1) * chunk). Later updates win for REF_SCATTER_NONE. */
void ref_scatter_copy(void *dst, size_t esz, const int64_t *off, int64_t n, const void *updates,
                      int64_t chunk);
void ref_scatter_f32(float *dst, const int64_t *off, int64_t n, const float *updates, int64_t chunk,
                     ref_scatter_op op);
void ref_scatter_i64(int64_t *dst, const int64_t *off, int64_t n, const int64_t *updates,
                     int64_t chunk, ref_scatter_op op);
void ref_scatter_i32(int32_t *dst, const int64_t *off, int64_t n, const int32_t *updates,
                     int64_t chunk, ref_scatter_op op);

/* Fills n elements of dst with the element at value. */
void ref_fill(void *dst, size_t esz, int64_t n, const void *value);

/* DepthToSpace (to_space) or SpaceToDepth of [n, c, h, w] (input dims),
 * mode crd (else dcr), elements of es bytes. */
void ref_depth_space(bool to_space, bool crd, int64_t b, int64_t n, int64_t c, int64_t h, int64_t w,
                     size_t es, const void *x, void *y);

#endif
