/*
 * grid.c — reference kernels of the "grid" op family (ref_grid.h):
 * GridSample and AffineGrid. Follows the ONNX reference (itself PyTorch's
 * grid_sampler): the normalized coordinate is mapped to pixel space in f32,
 * moved inside the image by the padding mode, and then each axis
 * contributes 1 (nearest), 2 (linear) or 4 (cubic) taps whose indices are
 * resolved by the padding mode again (zeros: an outside tap reads 0). The
 * N-D result is the tensor product of the per-axis taps.
 */
#include "kernels/ref/ref_grid.h"

#include <math.h>
#include <string.h>

/* One axis of one output point: up to 4 (index, weight) taps; index -1
 * reads zero. */
typedef struct axis_taps {
    int n;
    int64_t idx[4];
    double w[4];
} axis_taps;

/* Normalized [-1, 1] -> pixel coordinate, in f32 as the ONNX reference
 * computes it (separate statements: no fused multiply-add). */
static float denormalize(float g, int64_t size, bool align) {
    float s = (float)size;
    float a = g + 1.0f;
    if (align) {
        float h = a / 2.0f;
        return h * (s - 1.0f);
    }
    float b = a * s;
    b = b - 1.0f;
    return b / 2.0f;
}

/* Reflects x into [lo, hi] by the nearer border, repeatedly. */
static double reflect(double x, double lo, double hi) {
    double range = hi - lo;
    if (!(range > 0)) return lo;
    if (x < lo) {
        double dx = lo - x;
        double k = floor(dx / range);
        double r = dx - k * range;
        return fmod(k, 2.0) == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        double dx = x - hi;
        double k = floor(dx / range);
        double r = dx - k * range;
        return fmod(k, 2.0) == 0 ? hi - r : lo + r;
    }
    return x;
}

/* The index a tap at integer position i reads (-1: zero). */
static int64_t resolve(int64_t i, int64_t size, ref_grid_pad pad, double lo, double hi) {
    if (i >= 0 && i < size) return i;
    if (pad == REF_GRID_PAD_ZEROS) return -1;
    if (pad == REF_GRID_PAD_BORDER) return i < 0 ? 0 : size - 1;
    double f = reflect((double)i, lo, hi);
    int64_t j = (int64_t)f;
    return j < 0 ? 0 : (j >= size ? size - 1 : j);
}

static void cubic_coeffs(double t, double c[4]) {
    const double a = -0.75;
    double x = t + 1;
    c[0] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    x = t;
    c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
    x = 1 - t;
    c[2] = ((a + 2) * x - (a + 3)) * x * x + 1;
    x = 2 - t;
    c[3] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

static void axis_taps_of(const ref_grid_sample_params *p, float g, int64_t size, axis_taps *t) {
    double lo = p->align_corners ? 0.0 : -0.5;
    double hi = p->align_corners ? (double)size - 1.0 : (double)size - 0.5;
    double x = denormalize(g, size, p->align_corners);
    if (p->mode == REF_GRID_NEAREST) x = (double)rintf((float)x);
    if (x < lo || x > hi) {
        if (p->pad == REF_GRID_PAD_BORDER)
            x = x < 0 ? 0 : (x > (double)size - 1 ? (double)size - 1 : x);
        else if (p->pad == REF_GRID_PAD_REFLECTION)
            x = reflect(x, lo, hi);
    }
    /* far outside (zeros padding) or NaN: every tap reads zero */
    if (!(x >= -4.0 && x <= (double)size + 4.0)) {
        t->n = 0;
        return;
    }
    if (p->mode == REF_GRID_NEAREST) {
        t->n = 1;
        t->idx[0] = resolve((int64_t)x, size, p->pad, lo, hi);
        t->w[0] = 1.0;
        return;
    }
    double x0 = floor(x);
    double f = x - x0;
    int64_t i0 = (int64_t)x0;
    if (p->mode == REF_GRID_LINEAR) {
        t->n = 2;
        t->w[0] = 1.0 - f;
        t->w[1] = f;
        t->idx[0] = resolve(i0, size, p->pad, lo, hi);
        t->idx[1] = resolve(i0 + 1, size, p->pad, lo, hi);
        return;
    }
    t->n = 4;
    cubic_coeffs(f, t->w);
    for (int k = 0; k < 4; k++)
        t->idx[k] = resolve(i0 - 1 + k, size, p->pad, lo, hi);
}

int64_t ref_grid_sample_taps(const ref_grid_sample_params *p) {
    int64_t per = p->mode == REF_GRID_NEAREST ? 1 : (p->mode == REF_GRID_LINEAR ? 2 : 4);
    int64_t n = 1;
    for (int32_t i = 0; i < p->r; i++)
        n *= per;
    return n;
}

/* The (offset, weight) pairs of one output point's taps that read data
 * (the tensor product of the axes' taps); returns their count. */
static int64_t point_taps(const ref_grid_sample_params *p, const float *g, const int64_t *stride,
                          int64_t *off, double *w) {
    axis_taps t[REF_GRID_MAX];
    for (int32_t i = 0; i < p->r; i++) {
        axis_taps_of(p, g[p->r - 1 - i], p->in[i], &t[i]);
        if (t[i].n == 0) return 0;
    }
    int k[REF_GRID_MAX] = {0};
    int64_t count = 0;
    for (;;) {
        int64_t o = 0;
        double wt = 1.0;
        bool ok = true;
        for (int32_t i = 0; i < p->r; i++) {
            int64_t idx = t[i].idx[k[i]];
            if (idx < 0) {
                ok = false;
                break;
            }
            o += idx * stride[i];
            wt *= t[i].w[k[i]];
        }
        if (ok) {
            off[count] = o;
            w[count] = wt;
            count++;
        }
        int32_t a = p->r - 1;
        while (a >= 0 && ++k[a] == t[a].n)
            k[a--] = 0;
        if (a < 0) break;
    }
    return count;
}

static int64_t spatial_strides(const ref_grid_sample_params *p, int64_t *stride) {
    int64_t s = 1;
    for (int32_t i = p->r - 1; i >= 0; i--) {
        stride[i] = s;
        s *= p->in[i];
    }
    return s;
}

void ref_grid_sample_f32(const ref_grid_sample_params *p, const float *x, const float *grid,
                         float *y, int64_t *work_off, double *work_w) {
    int64_t stride[REF_GRID_MAX];
    int64_t plane = spatial_strides(p, stride);
    for (int64_t b = 0; b < p->n; b++) {
        const float *xb = x + b * p->c * plane;
        float *yb = y + b * p->c * p->n_out;
        for (int64_t o = 0; o < p->n_out; o++) {
            const float *g = grid + (b * p->n_out + o) * p->r;
            int64_t nt = point_taps(p, g, stride, work_off, work_w);
            for (int64_t ch = 0; ch < p->c; ch++) {
                const float *xc = xb + ch * plane;
                double acc = 0;
                for (int64_t k = 0; k < nt; k++)
                    acc += work_w[k] * (double)xc[work_off[k]];
                yb[ch * p->n_out + o] = (float)acc;
            }
        }
    }
}

void ref_grid_sample_nearest_bytes(const ref_grid_sample_params *p, const void *x, size_t esize,
                                   const float *grid, void *y) {
    int64_t stride[REF_GRID_MAX];
    int64_t plane = spatial_strides(p, stride);
    const unsigned char *xs = x;
    unsigned char *ys = y;
    for (int64_t b = 0; b < p->n; b++) {
        for (int64_t o = 0; o < p->n_out; o++) {
            const float *g = grid + (b * p->n_out + o) * p->r;
            int64_t off = 0;
            double w = 0;
            int64_t nt = point_taps(p, g, stride, &off, &w);
            for (int64_t ch = 0; ch < p->c; ch++) {
                unsigned char *dst = ys + ((b * p->c + ch) * p->n_out + o) * (int64_t)esize;
                if (nt == 0)
                    memset(dst, 0, esize);
                else
                    memcpy(dst, xs + ((b * p->c + ch) * plane + off) * (int64_t)esize, esize);
            }
        }
    }
}

/* The base coordinate of index i along an axis of `size` points. */
static double base_coord(int64_t i, int64_t size, bool align) {
    if (align) return size > 1 ? -1.0 + (double)i * (2.0 / (double)(size - 1)) : -1.0;
    double step = 2.0 / (double)size;
    return (-1.0 + step / 2.0) + (double)i * step;
}

void ref_affine_grid_f32(int64_t n, int32_t r, const int64_t *size, bool align_corners,
                         const float *theta, float *grid) {
    int64_t D = r == 3 ? size[0] : 1, H = size[r - 2], W = size[r - 1];
    for (int64_t b = 0; b < n; b++) {
        const float *th = theta + b * r * (r + 1);
        for (int64_t d = 0; d < D; d++) {
            double z = r == 3 ? base_coord(d, D, align_corners) : 0.0;
            for (int64_t h = 0; h < H; h++) {
                double yv = base_coord(h, H, align_corners);
                for (int64_t w = 0; w < W; w++) {
                    double xv = base_coord(w, W, align_corners);
                    double c[4] = {xv, yv, r == 3 ? z : 1.0, 1.0};
                    for (int32_t k = 0; k < r; k++) {
                        double s = 0;
                        for (int32_t j = 0; j <= r; j++)
                            s += (double)th[k * (r + 1) + j] * c[j];
                        *grid++ = (float)s;
                    }
                }
            }
        }
    }
}
