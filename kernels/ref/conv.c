/*
 * conv.c — portable reference kernels for the "conv" op family (declared in
 * ref_conv.h): sliding-window geometry and a direct (im2col-free) grouped
 * convolution whose inner loop streams one output row. The oracle for faster
 * backends; never sees the IR.
 */
#include "kernels/ref/ref_conv.h"

/* ceil(a / s) for s > 0 and any sign of a. */
static int64_t ceil_div(int64_t a, int64_t s) { return a <= 0 ? -((-a) / s) : (a + s - 1) / s; }

int64_t ref_window_out_size(int64_t in, int64_t k, int64_t stride, int64_t dilation,
                            ref_auto_pad auto_pad, bool ceil_mode, int64_t *pad_begin,
                            int64_t *pad_end) {
    int64_t ek = dilation * (k - 1) + 1; /* effective kernel extent */
    if (auto_pad == REF_PAD_SAME_UPPER || auto_pad == REF_PAD_SAME_LOWER) {
        int64_t out = ceil_div(in, stride);
        int64_t total = (out - 1) * stride + ek - in;
        if (total < 0) total = 0;
        int64_t small = total / 2;
        *pad_begin = auto_pad == REF_PAD_SAME_UPPER ? small : total - small;
        *pad_end = total - *pad_begin;
        return out;
    }
    if (auto_pad == REF_PAD_VALID) *pad_begin = *pad_end = 0;
    int64_t span = in + *pad_begin + *pad_end - ek;
    if (span < 0) return 0;
    int64_t out = (ceil_mode ? ceil_div(span, stride) : span / stride) + 1;
    /* a window must start inside the input or the begin padding */
    if (ceil_mode && (out - 1) * stride >= in + *pad_begin) out--;
    return out;
}

/* Outputs o in [*lo, *hi) whose tap o * stride - pad + off falls in [0, in). */
static void valid_range(int64_t in, int64_t out, int64_t stride, int64_t pad, int64_t off,
                        int64_t *lo, int64_t *hi) {
    int64_t a = ceil_div(pad - off, stride), b = ceil_div(in + pad - off, stride);
    *lo = a > 0 ? a : 0;
    *hi = b < out ? b : out;
    if (*hi < *lo) *hi = *lo;
}

void ref_conv_walk(const ref_conv_params *p, const ref_conv_visit *v) {
    const int64_t cin_g = p->c_in / p->group, cout_g = p->c_out / p->group;
    const int64_t in_plane = p->in[0] * p->in[1] * p->in[2];
    const int64_t out_plane = p->out[0] * p->out[1] * p->out[2];
    const int64_t k_size = p->k[0] * p->k[1] * p->k[2];
    for (int64_t n = 0; n < p->batch; n++) {
        for (int64_t m = 0; m < p->c_out; m++) {
            const int64_t g = m / cout_g;
            const int64_t yo = (n * p->c_out + m) * out_plane;
            v->start(v->arg, m, yo, out_plane);
            for (int64_t ic = 0; ic < cin_g; ic++) {
                const int64_t xi = (n * p->c_in + g * cin_g + ic) * in_plane;
                const int64_t wk = (m * cin_g + ic) * k_size;
                for (int64_t kd = 0; kd < p->k[0]; kd++)
                    for (int64_t kh = 0; kh < p->k[1]; kh++)
                        for (int64_t kw = 0; kw < p->k[2]; kw++) {
                            const int64_t wi = wk + (kd * p->k[1] + kh) * p->k[2] + kw;
                            if (v->skip && v->skip(v->arg, wi)) continue;
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
                                    const int64_t xr = xi + (id * p->in[1] + ih) * p->in[2];
                                    const int64_t yr = yo + (od * p->out[1] + oh) * p->out[2];
                                    const int64_t xb = xr + offw - p->pad[2];
                                    v->row(v->arg, wi, xb + lo * p->stride[2], yr + lo, hi - lo,
                                           p->stride[2]);
                                }
                            }
                        }
            }
        }
    }
}

typedef struct conv_f32 {
    const float *x, *w, *bias;
    float *y;
} conv_f32;

static void f32_start(void *arg, int64_t m, int64_t y_at, int64_t len) {
    const conv_f32 *c = arg;
    const float b0 = c->bias ? c->bias[m] : 0.0f;
    for (int64_t i = 0; i < len; i++)
        c->y[y_at + i] = b0;
}

static void f32_row(void *arg, int64_t w_at, int64_t x_at, int64_t y_at, int64_t n, int64_t s) {
    const conv_f32 *c = arg;
    const float wv = c->w[w_at];
    for (int64_t o = 0; o < n; o++)
        c->y[y_at + o] += wv * c->x[x_at + o * s];
}

void ref_conv_f32(const ref_conv_params *p, const float *x, const float *w, const float *bias,
                  float *y) {
    conv_f32 c = {x, w, bias, y};
    ref_conv_walk(p, &(ref_conv_visit){f32_start, f32_row, NULL, &c});
}
