/*
 * ref_detection.h — reference kernels of the "detection" op family:
 * NonMaxSuppression (greedy, per batch and class) and RoiAlign (bilinear
 * samples averaged or maxed per output bin). f32. Never sees the IR.
 */
#ifndef MOPT_KERNELS_REF_DETECTION_H
#define MOPT_KERNELS_REF_DETECTION_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ref_nms {
    bool center_point_box; /* boxes are [xc, yc, w, h], else [y1, x1, y2, x2] (any corners) */
    int64_t max_per_class; /* >= 0 */
    float iou_threshold;   /* a box is suppressed when its IoU with a kept one is above it */
    bool has_score_threshold;
    float score_threshold; /* candidates need a score above it (when has_score_threshold) */
} ref_nms;

/* boxes [batches, n, 4], scores [batches, classes, n]. Selects, per batch and
 * class, boxes in order of decreasing score (ties: lower index first) that
 * overlap no box already kept by more than the threshold, at most
 * max_per_class of them. Writes (batch, class, box) triples to sel when sel
 * is not NULL (room for the returned count). Returns the count of selected
 * boxes, or -1 when out of memory. */
int64_t ref_nms_f32(const ref_nms *p, int64_t batches, int64_t classes, int64_t n,
                    const float *boxes, const float *scores, int64_t *sel);

typedef struct ref_roi_align {
    int64_t out_h, out_w;   /* >= 1 */
    int64_t sampling_ratio; /* samples per bin side; 0: ceil(bin size) */
    float spatial_scale;
    bool half_pixel; /* coordinates shifted by -0.5 (half_pixel), else output_half_pixel */
    bool max_mode;   /* max of the weighted corners of the samples, else their average */
} ref_roi_align;

/* y [n_rois, C, out_h, out_w] from x [N, C, H, W], rois [n_rois, 4] as
 * (x1, y1, x2, y2) and batch [n_rois] (each in [0, N), checked by the
 * caller). */
void ref_roi_align_f32(const ref_roi_align *p, int64_t C, int64_t H, int64_t W, const float *x,
                       int64_t n_rois, const float *rois, const int64_t *batch, float *y);

#endif
