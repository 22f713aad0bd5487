/*
 * detection.c — reference kernels of the "detection" op family
 * (ref_detection.h): NonMaxSuppression and RoiAlign, following the ONNX
 * reference implementation step by step (float IoU arithmetic, so that
 * boxes at the threshold go the same way; RoiAlign's samples in double).
 * Never sees the IR.
 */
#include "kernels/ref/ref_detection.h"

#include <math.h>
#include <stdlib.h>

#include "core/alloc.h"

/* ---- NonMaxSuppression ---------------------------------------------------- */

typedef struct cand {
    float score;
    int64_t idx;
} cand;

/* Decreasing score, then increasing index; NaN scores last. */
static int cand_cmp(const void *pa, const void *pb) {
    const cand *a = pa, *b = pb;
    bool na = isnan(a->score), nb = isnan(b->score);
    if (na != nb) return na ? 1 : -1;
    if (!na && a->score != b->score) return a->score > b->score ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static void min_max(float a, float b, float *lo, float *hi) {
    *lo = a < b ? a : b;
    *hi = a < b ? b : a;
}

/* Box extents as (x_min, x_max, y_min, y_max). */
static void extents(const float *b, bool center, float e[4]) {
    if (center) {
        float hw = b[2] / 2, hh = b[3] / 2;
        e[0] = b[0] - hw;
        e[1] = b[0] + hw;
        e[2] = b[1] - hh;
        e[3] = b[1] + hh;
    } else {
        min_max(b[1], b[3], &e[0], &e[1]);
        min_max(b[0], b[2], &e[2], &e[3]);
    }
}

static bool suppresses(const float *a, const float *b, bool center, float thr) {
    float ea[4], eb[4];
    extents(a, center, ea);
    extents(b, center, eb);
    float ix0 = ea[0] > eb[0] ? ea[0] : eb[0], ix1 = ea[1] < eb[1] ? ea[1] : eb[1];
    if (ix1 <= ix0) return false;
    float iy0 = ea[2] > eb[2] ? ea[2] : eb[2], iy1 = ea[3] < eb[3] ? ea[3] : eb[3];
    if (iy1 <= iy0) return false;
    float inter = (ix1 - ix0) * (iy1 - iy0);
    if (inter <= 0) return false;
    float area_a = (ea[1] - ea[0]) * (ea[3] - ea[2]), area_b = (eb[1] - eb[0]) * (eb[3] - eb[2]);
    float uni = area_a + area_b - inter;
    if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
    return inter / uni > thr;
}

int64_t ref_nms_f32(const ref_nms *p, int64_t batches, int64_t classes, int64_t n,
                    const float *boxes, const float *scores, int64_t *sel) {
    cand *c = mopt_malloc((size_t)n * sizeof *c + 1);
    int64_t *kept = mopt_malloc((size_t)n * sizeof *kept + 1);
    if (!c || !kept) {
        mopt_free(c);
        mopt_free(kept);
        return -1;
    }
    int64_t total = 0;
    for (int64_t b = 0; b < batches; b++) {
        const float *bx = boxes + b * n * 4;
        for (int64_t k = 0; k < classes; k++) {
            const float *sc = scores + (b * classes + k) * n;
            int64_t nc = 0, nk = 0;
            for (int64_t i = 0; i < n; i++)
                if (!p->has_score_threshold || sc[i] > p->score_threshold)
                    c[nc++] = (cand){sc[i], i};
            qsort(c, (size_t)nc, sizeof *c, cand_cmp);
            for (int64_t i = 0; i < nc && nk < p->max_per_class; i++) {
                const float *cb = bx + c[i].idx * 4;
                bool keep = true;
                for (int64_t j = 0; j < nk && keep; j++)
                    keep = !suppresses(cb, bx + kept[j] * 4, p->center_point_box, p->iou_threshold);
                if (!keep) continue;
                kept[nk++] = c[i].idx;
                if (sel) {
                    sel[total * 3] = b;
                    sel[total * 3 + 1] = k;
                    sel[total * 3 + 2] = c[i].idx;
                }
                total++;
            }
        }
    }
    mopt_free(c);
    mopt_free(kept);
    return total;
}

/* ---- RoiAlign --------------------------------------------------------------- */

/* One bilinear sample: four positions in the [H, W] plane and their weights
 * (all zero for a sample outside the plane). */
typedef struct sample {
    bool in;
    int64_t pos[4];
    double w[4];
} sample;

static sample sample_at(double y, double x, int64_t H, int64_t W) {
    sample s = {false, {0, 0, 0, 0}, {0, 0, 0, 0}};
    /* NaN coordinates fail these tests too (no int64 conversion of NaN) */
    if (!(y >= -1.0 && y <= (double)H && x >= -1.0 && x <= (double)W) || H == 0 || W == 0) return s;
    if (y < 0) y = 0;
    if (x < 0) x = 0;
    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
    if (y0 >= H - 1) {
        y1 = y0 = H - 1;
        y = (double)y0;
    } else {
        y1 = y0 + 1;
    }
    if (x0 >= W - 1) {
        x1 = x0 = W - 1;
        x = (double)x0;
    } else {
        x1 = x0 + 1;
    }
    s.in = true;
    double ly = y - (double)y0, lx = x - (double)x0, hy = 1.0 - ly, hx = 1.0 - lx;
    s.pos[0] = y0 * W + x0;
    s.pos[1] = y0 * W + x1;
    s.pos[2] = y1 * W + x0;
    s.pos[3] = y1 * W + x1;
    s.w[0] = hy * hx;
    s.w[1] = hy * lx;
    s.w[2] = ly * hx;
    s.w[3] = ly * lx;
    return s;
}

void ref_roi_align_f32(const ref_roi_align *p, int64_t C, int64_t H, int64_t W, const float *x,
                       int64_t n_rois, const float *rois, const int64_t *batch, float *y) {
    const int64_t OH = p->out_h, OW = p->out_w;
    const double scale = p->spatial_scale, off = p->half_pixel ? 0.5 : 0.0;
    for (int64_t r = 0; r < n_rois; r++) {
        const float *roi = rois + r * 4;
        double x0 = roi[0] * scale - off, y0 = roi[1] * scale - off;
        double rw = roi[2] * scale - off - x0, rh = roi[3] * scale - off - y0;
        if (!p->half_pixel) {
            if (rw < 1.0) rw = 1.0;
            if (rh < 1.0) rh = 1.0;
        }
        double bh = rh / (double)OH, bw = rw / (double)OW;
        int64_t gh = p->sampling_ratio > 0 ? p->sampling_ratio : (int64_t)ceil(rh / (double)OH);
        int64_t gw = p->sampling_ratio > 0 ? p->sampling_ratio : (int64_t)ceil(rw / (double)OW);
        if (gh < 0) gh = 0;
        if (gw < 0) gw = 0;
        double count = gh * gw > 1 ? (double)(gh * gw) : 1.0;
        for (int64_t c = 0; c < C; c++) {
            const float *plane = x + (batch[r] * C + c) * H * W;
            float *out = y + (r * C + c) * OH * OW;
            for (int64_t ph = 0; ph < OH; ph++)
                for (int64_t pw = 0; pw < OW; pw++) {
                    double acc = 0;
                    bool first = true;
                    for (int64_t iy = 0; iy < gh; iy++) {
                        double yy = y0 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
                        for (int64_t ix = 0; ix < gw; ix++) {
                            double xx = x0 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
                            sample s = sample_at(yy, xx, H, W);
                            if (!s.in) { /* outside the plane: a sample of 0 */
                                if (p->max_mode && (first || acc < 0)) acc = 0;
                                first = false;
                                continue;
                            }
                            const float *q = plane;
                            if (!p->max_mode) {
                                acc += s.w[0] * q[s.pos[0]] + s.w[1] * q[s.pos[1]] +
                                       s.w[2] * q[s.pos[2]] + s.w[3] * q[s.pos[3]];
                                continue;
                            }
                            double v = s.w[0] * q[s.pos[0]];
                            for (int k = 1; k < 4; k++) {
                                double t = s.w[k] * q[s.pos[k]];
                                if (t > v) v = t;
                            }
                            if (first || v > acc) acc = v;
                            first = false;
                        }
                    }
                    out[ph * OW + pw] = (float)(p->max_mode ? acc : acc / count);
                }
        }
    }
}
