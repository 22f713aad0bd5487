/*
 * conv_transpose.c — reference kernel of ConvTranspose
 * (ref_conv_transpose.h): plain loops over flattened spatial indices.
 */
#include "kernels/ref/ref_conv_transpose.h"

void ref_conv_transpose(const ref_window_nd *g, int64_t n, int64_t c, int64_t m, int64_t group,
                        const float *x, const float *w, const float *b, float *y) {
    int nd = g->nd;
    int64_t in_sz = ref_window_nd_size(g->in, nd), out_sz = ref_window_nd_size(g->out, nd),
            k_sz = ref_window_nd_size(g->k, nd);
    int64_t cg = c / group, mg = m / group;
    for (int64_t bi = 0; bi < n; bi++)
        for (int64_t oc = 0; oc < m; oc++)
            for (int64_t o = 0; o < out_sz; o++)
                y[(bi * m + oc) * out_sz + o] = b ? b[oc] : 0.0f;
    int64_t ii[REF_WIN_MAX], kk[REF_WIN_MAX];
    for (int64_t bi = 0; bi < n; bi++)
        for (int64_t gi = 0; gi < group; gi++)
            for (int64_t ci = 0; ci < cg; ci++) {
                int64_t ch = gi * cg + ci;
                for (int64_t i = 0; i < in_sz; i++) {
                    float xv = x[(bi * c + ch) * in_sz + i];
                    ref_window_nd_index(i, g->in, nd, ii);
                    for (int64_t kf = 0; kf < k_sz; kf++) {
                        ref_window_nd_index(kf, g->k, nd, kk);
                        int64_t off = ref_window_nd_tap(g, ii, kk, g->out);
                        if (off < 0) continue;
                        for (int64_t mi = 0; mi < mg; mi++)
                            y[(bi * m + gi * mg + mi) * out_sz + off] +=
                                xv * w[(ch * mg + mi) * k_sz + kf];
                    }
                }
            }
}
