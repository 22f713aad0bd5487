/*
 * deform_conv.c — reference kernel of the "deform_conv" op family
 * (ref_deform_conv.h): deformable im2col (each column entry sampled at its
 * displaced position), then a grouped product with the weights.
 */
#include "kernels/ref/ref_deform_conv.h"

#include <math.h>

int64_t ref_deform_conv_work(const ref_deform_conv_params *p) {
    const ref_conv_params *c = &p->conv;
    return c->c_in * c->k[0] * c->k[1] * c->k[2] * c->out[0] * c->out[1] * c->out[2];
}

/* Multilinear sample of plane (sizes in[0..2]) at pos (the last S axes);
 * taps outside the plane read 0. */
static float sample(const float *plane, const int64_t *in, int32_t S, const double *pos) {
    int64_t i0[REF_WIN_MAX] = {0}, step[REF_WIN_MAX];
    double t[REF_WIN_MAX] = {0};
    int32_t lead = REF_WIN_MAX - S;
    step[2] = 1;
    step[1] = in[2];
    step[0] = in[1] * in[2];
    for (int32_t i = 0; i < S; i++) {
        double v = pos[i];
        int64_t size = in[lead + i];
        if (!(v > -1.0 && v < (double)size)) return 0.0f; /* every tap outside, or NaN */
        double f = floor(v);
        i0[lead + i] = (int64_t)f;
        t[lead + i] = v - f;
    }
    double acc = 0;
    for (int corner = 0; corner < (1 << S); corner++) {
        double wt = 1.0;
        int64_t off = 0;
        int inside = 1;
        for (int32_t i = 0; i < S; i++) {
            int32_t a = lead + i;
            int hi = (corner >> i) & 1;
            int64_t idx = i0[a] + hi;
            if (idx < 0 || idx >= in[a]) {
                inside = 0;
                break;
            }
            wt *= hi ? t[a] : 1.0 - t[a];
            off += idx * step[a];
        }
        if (inside) acc += wt * (double)plane[off];
    }
    return (float)acc;
}

void ref_deform_conv_f32(const ref_deform_conv_params *p, const float *x, const float *w,
                         const float *offset, const float *mask, const float *bias, float *y,
                         float *col) {
    const ref_conv_params *c = &p->conv;
    const int32_t S = p->S, lead = REF_WIN_MAX - S;
    const int64_t K = c->k[0] * c->k[1] * c->k[2];
    const int64_t P = c->out[0] * c->out[1] * c->out[2];
    const int64_t in_plane = c->in[0] * c->in[1] * c->in[2];
    const int64_t cin_g = c->c_in / c->group, cout_g = c->c_out / c->group;
    const int64_t cin_og = c->c_in / p->offset_group;
    for (int64_t n = 0; n < c->batch; n++) {
        /* deformable im2col: col[ic][k][o] */
        for (int64_t ic = 0; ic < c->c_in; ic++) {
            const int64_t og = ic / cin_og;
            const float *plane = x + (n * c->c_in + ic) * in_plane;
            for (int64_t k = 0; k < K; k++) {
                const int64_t kk[REF_WIN_MAX] = {k / (c->k[1] * c->k[2]), (k / c->k[2]) % c->k[1],
                                                 k % c->k[2]};
                const float *off = offset + ((n * p->offset_group + og) * K + k) * S * P;
                const float *mk = mask ? mask + ((n * p->offset_group + og) * K + k) * P : NULL;
                float *cl = col + (ic * K + k) * P;
                for (int64_t o = 0; o < P; o++) {
                    const int64_t oo[REF_WIN_MAX] = {o / (c->out[1] * c->out[2]),
                                                     (o / c->out[2]) % c->out[1], o % c->out[2]};
                    double pos[REF_WIN_MAX];
                    for (int32_t i = 0; i < S; i++) {
                        int32_t a = lead + i;
                        pos[i] =
                            (double)(oo[a] * c->stride[a] - c->pad[a] + kk[a] * c->dilation[a]) +
                            (double)off[i * P + o];
                    }
                    float v = sample(plane, c->in, S, pos);
                    cl[o] = mk ? v * mk[o] : v;
                }
            }
        }
        /* grouped product with the weights */
        for (int64_t m = 0; m < c->c_out; m++) {
            const int64_t g = m / cout_g;
            float *yo = y + (n * c->c_out + m) * P;
            const float b0 = bias ? bias[m] : 0.0f;
            for (int64_t o = 0; o < P; o++)
                yo[o] = b0;
            for (int64_t r = 0; r < cin_g * K; r++) {
                const float wv = w[m * cin_g * K + r];
                const float *cl = col + (g * cin_g * K + r) * P;
                for (int64_t o = 0; o < P; o++)
                    yo[o] += wv * cl[o];
            }
        }
    }
}
