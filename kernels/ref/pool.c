/*
 * pool.c — portable reference kernels for the "pool" op family (declared in
 * ref_pool.h): windowed max and average over 1..3 spatial axes, global
 * pools, and LpPool (plain loops over flattened spatial indices). The oracle for faster backends;
 * never sees the IR.
 */
#include <math.h>
#include <stdbool.h>

#include "kernels/ref/ref_pool.h"

/* Position of tap t of output o along axis a (may fall in the padding). */
static int64_t tap_pos(const ref_pool_params *p, int a, int64_t o, int64_t t) {
    return o * p->stride[a] - p->pad[a] + t * p->dilation[a];
}

/* Taps of window o along axis a that fall inside the input, and inside the
 * padded input. */
static void tap_counts(const ref_pool_params *p, int a, int64_t o, int64_t *inside,
                       int64_t *padded) {
    *inside = *padded = 0;
    for (int64_t t = 0; t < p->k[a]; t++) {
        int64_t i = tap_pos(p, a, o, t);
        if (i >= 0 && i < p->in[a]) ++*inside;
        if (i >= -p->pad[a] && i < p->in[a] + p->pad_end[a]) ++*padded;
    }
}

/* Each window's maximum, or (avg) its mean over the taps inside the input
 * (count_include_pad: inside the padded input). With idx, the maximum also
 * gives its tap's index (see ref_maxpool_indices_f32), and the window's first
 * tap is taken whatever its value (so a NaN there stays). */
static void window_pool_f32(const ref_pool_params *p, const float *x, float *y, bool avg,
                            int64_t *idx, bool col_major) {
    const int64_t in_plane = p->in[0] * p->in[1] * p->in[2];
    const int64_t out_plane = p->out[0] * p->out[1] * p->out[2];
    for (int64_t c = 0; c < p->planes; c++) {
        const float *xi = x + c * in_plane;
        for (int64_t od = 0; od < p->out[0]; od++)
            for (int64_t oh = 0; oh < p->out[1]; oh++)
                for (int64_t ow = 0; ow < p->out[2]; ow++) {
                    float acc = avg ? 0.0f : -INFINITY;
                    int64_t at = -1; /* in-plane offset of the maximum's tap */
                    for (int64_t kd = 0; kd < p->k[0]; kd++) {
                        int64_t id = tap_pos(p, 0, od, kd);
                        if (id < 0 || id >= p->in[0]) continue;
                        for (int64_t kh = 0; kh < p->k[1]; kh++) {
                            int64_t ih = tap_pos(p, 1, oh, kh);
                            if (ih < 0 || ih >= p->in[1]) continue;
                            const int64_t row = (id * p->in[1] + ih) * p->in[2];
                            for (int64_t kw = 0; kw < p->k[2]; kw++) {
                                int64_t iw = tap_pos(p, 2, ow, kw);
                                if (iw < 0 || iw >= p->in[2]) continue;
                                const float v = xi[row + iw];
                                if (avg)
                                    acc += v;
                                else if (v > acc || (idx && at < 0))
                                    acc = v, at = row + iw;
                            }
                        }
                    }
                    if (avg) {
                        /* the window is a box: its tap count is a product over axes */
                        int64_t in0, pad0, in1, pad1, in2, pad2;
                        tap_counts(p, 0, od, &in0, &pad0);
                        tap_counts(p, 1, oh, &in1, &pad1);
                        tap_counts(p, 2, ow, &in2, &pad2);
                        int64_t count = p->count_include_pad ? pad0 * pad1 * pad2 : in0 * in1 * in2;
                        /* a window entirely in the padding has no taps: 0/0 */
                        acc = count > 0 ? acc / (float)count : NAN;
                    }
                    const int64_t o = c * out_plane + (od * p->out[1] + oh) * p->out[2] + ow;
                    y[o] = acc;
                    if (!idx) continue;
                    if (at >= 0 && col_major) {
                        const int64_t bd = at / (p->in[1] * p->in[2]);
                        const int64_t bh = at / p->in[2] % p->in[1], bw = at % p->in[2];
                        at = bd + bh * p->in[0] + bw * p->in[0] * p->in[1];
                    }
                    idx[o] = at < 0 ? -1 : c * in_plane + at;
                }
    }
}

void ref_maxpool_f32(const ref_pool_params *p, const float *x, float *y) {
    window_pool_f32(p, x, y, false, NULL, false);
}

void ref_avgpool_f32(const ref_pool_params *p, const float *x, float *y) {
    window_pool_f32(p, x, y, true, NULL, false);
}

void ref_maxpool_indices_f32(const ref_pool_params *p, const float *x, float *y, int64_t *idx,
                             bool col_major) {
    window_pool_f32(p, x, y, false, idx, col_major);
}

void ref_global_maxpool_f32(int64_t planes, int64_t size, const float *x, float *y) {
    for (int64_t c = 0; c < planes; c++) {
        const float *xi = x + c * size;
        float m = -INFINITY;
        for (int64_t i = 0; i < size; i++)
            if (xi[i] > m) m = xi[i];
        y[c] = m;
    }
}

void ref_global_avgpool_f32(int64_t planes, int64_t size, const float *x, float *y) {
    for (int64_t c = 0; c < planes; c++) {
        const float *xi = x + c * size;
        double s = 0.0;
        for (int64_t i = 0; i < size; i++)
            s += xi[i];
        y[c] = size > 0 ? (float)(s / (double)size) : NAN;
    }
}

void ref_lp_pool(const ref_window_nd *g, int64_t nc, double p, const float *x, float *y) {
    int nd = g->nd;
    int64_t in_sz = ref_window_nd_size(g->in, nd), out_sz = ref_window_nd_size(g->out, nd),
            k_sz = ref_window_nd_size(g->k, nd);
    int64_t oo[REF_WIN_MAX], kk[REF_WIN_MAX];
    for (int64_t ch = 0; ch < nc; ch++)
        for (int64_t o = 0; o < out_sz; o++) {
            ref_window_nd_index(o, g->out, nd, oo);
            double s = 0;
            for (int64_t kf = 0; kf < k_sz; kf++) {
                ref_window_nd_index(kf, g->k, nd, kk);
                int64_t off = ref_window_nd_tap(g, oo, kk, g->in);
                if (off >= 0) s += pow(fabs((double)x[ch * in_sz + off]), p);
            }
            y[ch * out_sz + o] = (float)pow(s, 1.0 / p);
        }
}
