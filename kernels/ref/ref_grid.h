/*
 * ref_grid.h — reference kernels of the "grid" op family (lib/ops/grid.c):
 * GridSample (N-D sampling of an NC[D...] tensor at normalized grid
 * locations, nearest / linear / cubic, padding zeros / border / reflection)
 * and AffineGrid (the sampling grid of a batch of affine matrices). Kernels
 * see only pointers, sizes and small parameter structs, never the IR.
 */
#ifndef MOPT_KERNELS_REF_GRID_H
#define MOPT_KERNELS_REF_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Spatial axes a GridSample may have (rank 8 minus N and C). */
#define REF_GRID_MAX 6

typedef enum ref_grid_mode {
    REF_GRID_NEAREST = 0,
    REF_GRID_LINEAR = 1, /* bilinear in 2-D, N-linear in N-D */
    REF_GRID_CUBIC = 2   /* Keys cubic convolution, alpha -0.75, per axis */
} ref_grid_mode;

typedef enum ref_grid_pad {
    REF_GRID_PAD_ZEROS = 0,
    REF_GRID_PAD_BORDER = 1,
    REF_GRID_PAD_REFLECTION = 2
} ref_grid_pad;

/* X is [n, c, in[0], ..., in[r-1]], grid is [n, out..., r] (the last axis
 * lists the coordinates innermost axis first: x, y, z), y is
 * [n, c, out...] with n_out = the product of the output's spatial dims. */
typedef struct ref_grid_sample_params {
    int32_t r;
    int64_t n, c, n_out;
    int64_t in[REF_GRID_MAX];
    ref_grid_mode mode;
    ref_grid_pad pad;
    bool align_corners;
} ref_grid_sample_params;

/* The most taps one output point reads: 4 per axis (cubic). */
int64_t ref_grid_sample_taps(const ref_grid_sample_params *p);

/* f32 sampling. work holds ref_grid_sample_taps(p) int64 offsets and as
 * many doubles (weights): the caller allocates it. */
void ref_grid_sample_f32(const ref_grid_sample_params *p, const float *x, const float *grid,
                         float *y, int64_t *work_off, double *work_w);

/* Nearest sampling of elements of any size (integer and bool X): copies
 * the chosen element, zero bytes where padding_mode zeros falls outside. */
void ref_grid_sample_nearest_bytes(const ref_grid_sample_params *p, const void *x, size_t esize,
                                   const float *grid, void *y);

/* AffineGrid: theta is [n, r, r + 1] (r = 2 or 3), size the r spatial
 * output sizes (outermost first: H, W or D, H, W); grid is
 * [n, size..., r] in the GridSample layout (x, y[, z]). */
void ref_affine_grid_f32(int64_t n, int32_t r, const int64_t *size, bool align_corners,
                         const float *theta, float *grid);

#endif
