/*
 * conv_quant.c — reference kernels of the "conv_quant" op family
 * (ref_conv_quant.h): integer convolution with zero points and the
 * requantization of QLinearConv.
 */
#include "kernels/ref/ref_conv_quant.h"

#include <math.h>

int64_t ref_conv_s32_work(const ref_conv_params *p) {
    int64_t in_plane = p->in[0] * p->in[1] * p->in[2];
    int64_t k_size = p->k[0] * p->k[1] * p->k[2];
    return p->batch * p->c_in * in_plane + p->c_out * (p->c_in / p->group) * k_size;
}

static int32_t at(const void *v, bool s8, int64_t i) {
    return s8 ? (int32_t)((const int8_t *)v)[i] : (int32_t)((const uint8_t *)v)[i];
}

typedef struct conv_s32 {
    const int32_t *x, *w, *bias;
    uint32_t *y; /* the sums run in uint32: int32 wrap-around without undefined behaviour */
} conv_s32;

static void s32_start(void *arg, int64_t m, int64_t y_at, int64_t len) {
    const conv_s32 *c = arg;
    const uint32_t b0 = c->bias ? (uint32_t)c->bias[m] : 0u;
    for (int64_t i = 0; i < len; i++)
        c->y[y_at + i] = b0;
}

static bool s32_skip(void *arg, int64_t w_at) { return ((const conv_s32 *)arg)->w[w_at] == 0; }

static void s32_row(void *arg, int64_t w_at, int64_t x_at, int64_t y_at, int64_t n, int64_t s) {
    const conv_s32 *c = arg;
    const int32_t wv = c->w[w_at];
    for (int64_t o = 0; o < n; o++)
        c->y[y_at + o] += (uint32_t)(wv * c->x[x_at + o * s]);
}

void ref_conv_s32(const ref_conv_params *p, const ref_qconv_args *a, int32_t *y, int32_t *work) {
    const int64_t cin_g = p->c_in / p->group;
    const int64_t in_plane = p->in[0] * p->in[1] * p->in[2];
    const int64_t k_size = p->k[0] * p->k[1] * p->k[2];
    /* zero points subtracted once: |x - zp|, |w - zp| <= 255 */
    int32_t *xs = work, *ws = work + p->batch * p->c_in * in_plane;
    for (int64_t i = 0; i < p->batch * p->c_in * in_plane; i++)
        xs[i] = at(a->x, a->x_s8, i) - a->x_zp;
    for (int64_t m = 0; m < p->c_out; m++) {
        int32_t zp = a->w_zp_per_channel ? a->w_zp[m] : a->w_zp[0];
        for (int64_t i = m * cin_g * k_size; i < (m + 1) * cin_g * k_size; i++)
            ws[i] = at(a->w, a->w_s8, i) - zp;
    }
    conv_s32 c = {xs, ws, a->bias, (uint32_t *)y};
    ref_conv_walk(p, &(ref_conv_visit){s32_start, s32_row, s32_skip, &c});
}

void ref_requantize_s32(const int32_t *acc, int64_t batch, int64_t c_out, int64_t plane,
                        const float *scale, int32_t y_zp, bool y_s8, void *y) {
    const double lo = y_s8 ? -128.0 : 0.0, hi = y_s8 ? 127.0 : 255.0;
    for (int64_t n = 0; n < batch; n++) {
        for (int64_t m = 0; m < c_out; m++) {
            const double s = (double)scale[m];
            const int64_t base = (n * c_out + m) * plane;
            for (int64_t i = 0; i < plane; i++) {
                double v = nearbyint((double)acc[base + i] * s) + (double)y_zp;
                v = v < lo ? lo : (v > hi ? hi : v);
                if (v != v) v = lo; /* NaN scale */
                if (y_s8)
                    ((int8_t *)y)[base + i] = (int8_t)v;
                else
                    ((uint8_t *)y)[base + i] = (uint8_t)v;
            }
        }
    }
}
