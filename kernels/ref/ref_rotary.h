/*
 * ref_rotary.h — reference kernel of RotaryEmbedding (lib/ops/rotary.c):
 * rotates the first `rot` features of every head by the angles of a cos/sin
 * cache row, in halves or interleaved pairs. f32 only; never sees the IR.
 */
#ifndef MOPT_KERNELS_REF_ROTARY_H
#define MOPT_KERNELS_REF_ROTARY_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ref_rotary {
    int64_t batch, seq, heads, head; /* head: features per head */
    int64_t rot;                     /* rotated features (even, <= head) */
    bool heads_first;                /* x is [B, H, S, D] (else [B, S, H*D]) */
    bool interleaved;                /* pairs (2i, 2i+1) instead of halves (i, i + rot/2) */
    int64_t max_pos;                 /* rows of the caches when pos is given */
} ref_rotary;

/* y = x with the rotation applied. cos/sin hold rot/2 values per row: the
 * row of position pos[b*seq + s] when pos is non-NULL (caches of max_pos
 * rows), else row b*seq + s. Returns -1 when every position is in
 * [0, max_pos), else the index (into pos) of the first one that is not. */
int64_t ref_rotary_embedding(const ref_rotary *p, const float *x, const float *cos,
                             const float *sin, const int64_t *pos, float *y);

#endif
