/*
 * resize.c — reference kernel of Resize (ref_resize.h). For each output
 * position: the source coordinate per coordinate_transformation_mode, the
 * taps (2 for nearest/linear, 4 for cubic) and their weights, with edge
 * clamping, exclude_outside renormalization and tf_crop_and_resize
 * extrapolation, as in the ONNX reference.
 */
#include "kernels/ref/ref_resize.h"

#include <math.h>

#include "core/alloc.h"

static void cubic_coeffs(double r, double a, double *c) {
    double s = 1 - r;
    c[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
    c[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
    c[2] = ((a + 2) * s - (a + 3)) * s * s + 1;
    c[3] = ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a;
}

double ref_resize_source(const ref_resize_params *p, int64_t j, int64_t in_len, int64_t out_len,
                         double scale, double roi_start, double roi_end, bool *extra) {
    double out_w = scale * (double)in_len, yj = (double)j, xo;
    *extra = false;
    switch (p->coord) {
    case REF_COORD_ALIGN_CORNERS:
        xo = out_w == 1 ? 0 : yj * (double)(in_len - 1) / (out_w - 1);
        break;
    case REF_COORD_ASYMMETRIC: xo = yj / scale; break;
    case REF_COORD_TF_CROP_AND_RESIZE:
        xo = out_w == 1 ? (roi_end - roi_start) * (double)(in_len - 1) / 2
                        : yj * (roi_end - roi_start) * (double)(in_len - 1) / (out_w - 1);
        xo += roi_start * (double)(in_len - 1);
        *extra = xo < 0 || xo > (double)(in_len - 1);
        break;
    case REF_COORD_PYTORCH_HALF_PIXEL: xo = out_w == 1 ? -0.5 : (yj + 0.5) / scale - 0.5; break;
    case REF_COORD_HALF_PIXEL_SYMMETRIC: {
        double adj = (double)out_len / out_w, center = (double)in_len / 2;
        xo = center * (1 - adj) + (yj + 0.5) / scale - 0.5;
        break;
    }
    default: xo = (yj + 0.5) / scale - 0.5; break;
    }
    return xo;
}

int ref_resize_taps(const ref_resize_params *p, double xo, int64_t in_len, int64_t *idx,
                    double *c) {
    double fl = floor(xo);
    bool integer = xo == fl;
    double r = integer ? 1.0 : xo - fl;
    int n = p->mode == REF_RESIZE_CUBIC ? 4 : 2;
    if (p->mode == REF_RESIZE_CUBIC) {
        cubic_coeffs(r, p->cubic_a, c);
    } else if (p->mode == REF_RESIZE_LINEAR) {
        c[0] = 1 - r, c[1] = r;
    } else {
        bool right;
        switch (p->nearest) {
        case REF_NEAREST_ROUND_PREFER_CEIL: right = r >= 0.5; break;
        case REF_NEAREST_FLOOR: right = r == 1.0; break;
        case REF_NEAREST_CEIL: right = true; break;
        default: right = r > 0.5; break;
        }
        c[0] = right ? 0 : 1, c[1] = right ? 1 : 0;
    }
    int64_t start = (int64_t)fl - (integer ? n / 2 : n / 2 - 1);
    for (int t = 0; t < n; t++)
        idx[t] = start + t;
    if (p->exclude_outside) {
        double sum = 0;
        for (int t = 0; t < n; t++) {
            if (idx[t] < 0 || idx[t] >= in_len) c[t] = 0;
            sum += c[t];
        }
        if (sum == 0) sum = 1;
        for (int t = 0; t < n; t++)
            c[t] /= sum;
    }
    for (int t = 0; t < n; t++)
        idx[t] = idx[t] < 0 ? 0 : idx[t] >= in_len ? in_len - 1 : idx[t];
    return n;
}

/* The window's first offset from floor(xo): 1 - n/2 taps for n taps */
static int64_t aa_start(const ref_resize_params *p, double scale) {
    double s = scale < 1.0 ? scale : 1.0;
    return (int64_t)floor((p->mode == REF_RESIZE_CUBIC ? -2.0 : -1.0) / s) + 1;
}

int64_t ref_resize_aa_count(const ref_resize_params *p, double scale) {
    return 2 - 2 * aa_start(p, scale);
}

static double cubic_kernel(double x, double a) {
    x = fabs(x);
    double x2 = x * x, x3 = x2 * x;
    if (x <= 1) return (a + 2) * x3 - (a + 3) * x2 + 1;
    if (x < 2) return a * x3 - 5 * a * x2 + 8 * a * x - 4 * a;
    return 0.0;
}

int64_t ref_resize_taps_aa(const ref_resize_params *p, double xo, int64_t in_len, double scale,
                           int64_t *idx, double *c) {
    double s = scale < 1.0 ? scale : 1.0, fl = floor(xo);
    bool integer = xo == fl;
    double r = integer ? 1.0 : xo - fl, sum = 0;
    int64_t i0 = aa_start(p, scale), n = 2 - 2 * i0, base = (int64_t)fl - (integer ? 1 : 0);
    for (int64_t t = 0; t < n; t++) {
        double arg = s * ((double)(i0 + t) - r);
        if (p->mode == REF_RESIZE_CUBIC) {
            c[t] = cubic_kernel(arg, p->cubic_a);
        } else {
            double w = 1 - fabs(arg);
            c[t] = w < 0 ? 0 : w > 1 ? 1 : w;
        }
        sum += c[t];
        idx[t] = base + i0 + t;
    }
    for (int64_t t = 0; t < n; t++) {
        if (sum != 0) c[t] /= sum;
        if (p->exclude_outside && (idx[t] < 0 || idx[t] >= in_len)) c[t] = 0;
    }
    if (p->exclude_outside) {
        double s2 = 0;
        for (int64_t t = 0; t < n; t++)
            s2 += c[t];
        for (int64_t t = 0; t < n && s2 != 0; t++)
            c[t] /= s2;
    }
    for (int64_t t = 0; t < n; t++)
        idx[t] = idx[t] < 0 ? 0 : idx[t] >= in_len ? in_len - 1 : idx[t];
    return n;
}

int ref_resize_axis(const ref_resize_params *p, int64_t outer, int64_t in_len, int64_t out_len,
                    int64_t inner, double scale, double roi_start, double roi_end, const double *x,
                    double *y) {
    bool aa = p->antialias && p->mode != REF_RESIZE_NEAREST;
    int64_t cap = aa ? ref_resize_aa_count(p, scale) : 4;
    int64_t idx4[4], *idx = idx4;
    double c4[4], *c = c4;
    if (aa) {
        idx = mopt_malloc((size_t)cap * sizeof *idx);
        c = mopt_malloc((size_t)cap * sizeof *c);
        if (!idx || !c) {
            mopt_free(idx), mopt_free(c);
            return -1;
        }
    }
    for (int64_t j = 0; j < out_len; j++) {
        bool extra;
        double xo = ref_resize_source(p, j, in_len, out_len, scale, roi_start, roi_end, &extra);
        int64_t n = aa ? ref_resize_taps_aa(p, xo, in_len, scale, idx, c)
                       : ref_resize_taps(p, xo, in_len, idx, c);
        for (int64_t o = 0; o < outer; o++)
            for (int64_t i = 0; i < inner; i++) {
                double v;
                if (extra) {
                    v = p->extrapolation;
                } else {
                    v = 0;
                    for (int64_t t = 0; t < n; t++)
                        if (c[t] != 0) v += c[t] * x[(o * in_len + idx[t]) * inner + i];
                }
                y[(o * out_len + j) * inner + i] = v;
            }
    }
    if (aa) mopt_free(idx), mopt_free(c);
    return 0;
}
