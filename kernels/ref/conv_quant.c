/*
 * conv_quant.c — reference kernels of the "conv_quant" op family
 * (ref_conv_quant.h): integer convolution with zero points and the
 * requantization of QLinearConv.
 */
#include "kernels/ref/ref_conv_quant.h"

#include <math.h>

/* ceil(a / s) for s > 0 and any sign of a. */
static int64_t ceil_div(int64_t a, int64_t s) { return a <= 0 ? -((-a) / s) : (a + s - 1) / s; }

/* Outputs o in [*lo, *hi) whose tap o * stride - pad + off falls in [0, in). */
static void valid_range(int64_t in, int64_t out, int64_t stride, int64_t pad, int64_t off,
                        int64_t *lo, int64_t *hi) {
    int64_t a = ceil_div(pad - off, stride), b = ceil_div(in + pad - off, stride);
    *lo = a > 0 ? a : 0;
    *hi = b < out ? b : out;
    if (*hi < *lo) *hi = *lo;
}

int64_t ref_conv_s32_work(const ref_conv_params *p) {
    int64_t in_plane = p->in[0] * p->in[1] * p->in[2];
    int64_t k_size = p->k[0] * p->k[1] * p->k[2];
    return p->batch * p->c_in * in_plane + p->c_out * (p->c_in / p->group) * k_size;
}

static int32_t at(const void *v, bool s8, int64_t i) {
    return s8 ? (int32_t)((const int8_t *)v)[i] : (int32_t)((const uint8_t *)v)[i];
}

void ref_conv_s32(const ref_conv_params *p, const ref_qconv_args *a, int32_t *y, int32_t *work) {
    const int64_t cin_g = p->c_in / p->group, cout_g = p->c_out / p->group;
    const int64_t in_plane = p->in[0] * p->in[1] * p->in[2];
    const int64_t out_plane = p->out[0] * p->out[1] * p->out[2];
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
    /* the sums run in uint32: int32 wrap-around without undefined behaviour */
    uint32_t *yu = (uint32_t *)y;
    for (int64_t n = 0; n < p->batch; n++) {
        for (int64_t m = 0; m < p->c_out; m++) {
            const int64_t g = m / cout_g;
            uint32_t *yo = yu + (n * p->c_out + m) * out_plane;
            const uint32_t b0 = a->bias ? (uint32_t)a->bias[m] : 0u;
            for (int64_t i = 0; i < out_plane; i++)
                yo[i] = b0;
            for (int64_t ic = 0; ic < cin_g; ic++) {
                const int32_t *xi = xs + (n * p->c_in + g * cin_g + ic) * in_plane;
                const int32_t *wk = ws + (m * cin_g + ic) * k_size;
                for (int64_t kd = 0; kd < p->k[0]; kd++)
                    for (int64_t kh = 0; kh < p->k[1]; kh++)
                        for (int64_t kw = 0; kw < p->k[2]; kw++) {
                            const int32_t wv = wk[(kd * p->k[1] + kh) * p->k[2] + kw];
                            if (wv == 0) continue;
                            const int64_t offw = kw * p->dilation[2];
                            int64_t lo, hi;
                            valid_range(p->in[2], p->out[2], p->stride[2], p->pad[2], offw, &lo,
                                        &hi);
                            for (int64_t od = 0; od < p->out[0]; od++) {
                                int64_t id = od * p->stride[0] - p->pad[0] + kd * p->dilation[0];
                                if (id < 0 || id >= p->in[0]) continue;
                                for (int64_t oh = 0; oh < p->out[1]; oh++) {
                                    int64_t ih =
                                        oh * p->stride[1] - p->pad[1] + kh * p->dilation[1];
                                    if (ih < 0 || ih >= p->in[1]) continue;
                                    const int32_t *xr = xi + (id * p->in[1] + ih) * p->in[2];
                                    uint32_t *yr = yo + (od * p->out[1] + oh) * p->out[2];
                                    const int64_t s = p->stride[2], base = offw - p->pad[2];
                                    for (int64_t ow = lo; ow < hi; ow++)
                                        yr[ow] += (uint32_t)(wv * xr[ow * s + base]);
                                }
                            }
                        }
            }
        }
    }
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
