/*
 * ref_conv.h — reference kernels for the "conv" op family, plus the
 * sliding-window geometry (output size and pads for each auto_pad mode, the
 * N-d window of ConvTranspose and LpPool) shared with the pooling ops. Kernels see only pointers,
 * shapes and small parameter structs, never the IR.
 */
#ifndef MOPT_KERNELS_REF_CONV_H
#define MOPT_KERNELS_REF_CONV_H

#include <stdbool.h>

#include "kernels/ref/ref.h"

/* Spatial axes handled by the window kernels (Conv/Pool 1-D, 2-D, 3-D). Lower
 * ranks are passed as 3-D with leading axes of size 1. */
#define REF_WIN_MAX 3

typedef enum ref_auto_pad {
    REF_PAD_NOTSET = 0,
    REF_PAD_SAME_UPPER = 1,
    REF_PAD_SAME_LOWER = 2,
    REF_PAD_VALID = 3
} ref_auto_pad;

/* Output size of one window axis of input size `in`, kernel k, stride and
 * dilation (all >= 1), following ONNX: NOTSET uses *pad_begin and *pad_end as
 * given; SAME_* set them so that out = ceil(in / stride) (the odd pad goes at
 * the end for SAME_UPPER, at the beginning for SAME_LOWER); VALID sets them to
 * 0. ceil_mode rounds up, dropping a last window that would start inside the
 * end padding. The result is <= 0 when no window fits. Arguments must be
 * small enough not to overflow (callers limit them to 2^31). */
int64_t ref_window_out_size(int64_t in, int64_t k, int64_t stride, int64_t dilation,
                            ref_auto_pad auto_pad, bool ceil_mode, int64_t *pad_begin,
                            int64_t *pad_end);

/* A window over nd (1..REF_WIN_MAX) spatial axes, walked by flat index
 * (ConvTranspose, LpPool): input and output sizes, kernel, stride, dilation
 * and begin padding per axis. */
typedef struct ref_window_nd {
    int nd;
    int64_t in[REF_WIN_MAX], out[REF_WIN_MAX], k[REF_WIN_MAX];
    int64_t stride[REF_WIN_MAX], dil[REF_WIN_MAX], pad[REF_WIN_MAX];
} ref_window_nd;

/* Product of d[0..nd). */
static inline int64_t ref_window_nd_size(const int64_t *d, int nd) {
    int64_t p = 1;
    for (int i = 0; i < nd; i++)
        p *= d[i];
    return p;
}

/* The multi-index idx[0..nd) of flat index f over dims d. */
static inline void ref_window_nd_index(int64_t f, const int64_t *d, int nd, int64_t *idx) {
    for (int i = nd - 1; i >= 0; i--) {
        idx[i] = d[i] ? f % d[i] : 0;
        f = d[i] ? f / d[i] : 0;
    }
}

/* The flat offset, over dims `to`, of the tap kk of the window at at[]:
 * at[d] * stride - pad + kk[d] * dilation on every axis; -1 when it falls
 * outside `to` on any axis. ConvTranspose scatters input positions into the
 * output (at: input, to: g->out), LpPool gathers each output's window from
 * the input (at: output, to: g->in). */
static inline int64_t ref_window_nd_tap(const ref_window_nd *g, const int64_t *at,
                                        const int64_t *kk, const int64_t *to) {
    int64_t off = 0;
    for (int d = 0; d < g->nd; d++) {
        int64_t pos = at[d] * g->stride[d] - g->pad[d] + kk[d] * g->dil[d];
        if (pos < 0 || pos >= to[d]) return -1;
        off = off * to[d] + pos;
    }
    return off;
}

/* Direct convolution, NC[D]HW layout, grouped. x is
 * [batch, c_in, in...], w is [c_out, c_in / group, k...], bias is [c_out] or
 * NULL, y is [batch, c_out, out...]. pad is the begin padding per axis. */
typedef struct ref_conv_params {
    int64_t batch, c_in, c_out, group;
    int64_t in[REF_WIN_MAX], out[REF_WIN_MAX], k[REF_WIN_MAX];
    int64_t stride[REF_WIN_MAX], dilation[REF_WIN_MAX], pad[REF_WIN_MAX];
} ref_conv_params;

/* The loops of a direct convolution, written once for every precision (the
 * f32 kernel here, the integer one of ref_conv_quant.h). Offsets are element
 * indices into x, w and y in the layouts above. For output channel m of each
 * image, start(arg, m, y_at, len) fills y[y_at, y_at + len); then, for every
 * input channel of m's group, every tap w_at not skipped (skip may be NULL)
 * and every output row the tap reaches, row() adds
 *   y[y_at + o] += w[w_at] * x[x_at + o * s]   for o in [0, n)
 * (the n outputs of the row whose tap falls inside the input row). */
typedef struct ref_conv_visit {
    void (*start)(void *arg, int64_t m, int64_t y_at, int64_t len);
    void (*row)(void *arg, int64_t w_at, int64_t x_at, int64_t y_at, int64_t n, int64_t s);
    bool (*skip)(void *arg, int64_t w_at);
    void *arg;
} ref_conv_visit;

void ref_conv_walk(const ref_conv_params *p, const ref_conv_visit *v);

void ref_conv_f32(const ref_conv_params *p, const float *x, const float *w, const float *bias,
                  float *y);

#endif
