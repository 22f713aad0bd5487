/*
 * ref_resize.h — reference kernel of Resize: separable 1-D passes, one
 * axis at a time (as the ONNX reference does), in double precision.
 */
#ifndef MOPT_KERNELS_REF_RESIZE_H
#define MOPT_KERNELS_REF_RESIZE_H

#include <stdbool.h>
#include <stdint.h>

typedef enum ref_resize_mode {
    REF_RESIZE_NEAREST,
    REF_RESIZE_LINEAR,
    REF_RESIZE_CUBIC
} ref_resize_mode;
typedef enum ref_coord {
    REF_COORD_HALF_PIXEL,
    REF_COORD_HALF_PIXEL_SYMMETRIC,
    REF_COORD_PYTORCH_HALF_PIXEL,
    REF_COORD_ALIGN_CORNERS,
    REF_COORD_ASYMMETRIC,
    REF_COORD_TF_CROP_AND_RESIZE
} ref_coord;
typedef enum ref_nearest {
    REF_NEAREST_ROUND_PREFER_FLOOR,
    REF_NEAREST_ROUND_PREFER_CEIL,
    REF_NEAREST_FLOOR,
    REF_NEAREST_CEIL
} ref_nearest;

typedef struct ref_resize_params {
    ref_resize_mode mode;
    ref_coord coord;
    ref_nearest nearest;
    double cubic_a;
    bool exclude_outside;
    double extrapolation;
    bool antialias; /* linear/cubic: a filter stretched by 1/scale when downscaling */
} ref_resize_params;

/* The source coordinate of output position j along an axis of in_len ->
 * out_len (coordinate_transformation_mode); *extra: outside the input
 * (tf_crop_and_resize), the value is then the extrapolation value. */
double ref_resize_source(const ref_resize_params *p, int64_t j, int64_t in_len, int64_t out_len,
                         double scale, double roi_start, double roi_end, bool *extra);
/* The taps of source coordinate xo: returns their count n (2 for nearest
 * and linear, 4 for cubic) and fills idx[0..n) (clamped to the axis) and
 * their weights c[0..n); a tap of weight 0 is not read. */
int ref_resize_taps(const ref_resize_params *p, double xo, int64_t in_len, int64_t *idx, double *c);

/* The antialiased taps (linear or cubic, p->antialias): the kernel widened
 * by 1/min(scale, 1), its weights normalized to sum 1, as the ONNX
 * reference. Returns the tap count; ref_resize_aa_count(p, scale) taps
 * must fit idx and c. */
int64_t ref_resize_aa_count(const ref_resize_params *p, double scale);
int64_t ref_resize_taps_aa(const ref_resize_params *p, double xo, int64_t in_len, double scale,
                           int64_t *idx, double *c);

/* Resizes axis `axis` of x viewed as [outer, in_len, inner] to
 * [outer, out_len, inner] with scale (and roi_start/roi_end for
 * tf_crop_and_resize). Returns 0, or -1 when the antialias taps found no
 * memory. */
int ref_resize_axis(const ref_resize_params *p, int64_t outer, int64_t in_len, int64_t out_len,
                    int64_t inner, double scale, double roi_start, double roi_end, const double *x,
                    double *y);

#endif
