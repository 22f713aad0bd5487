/*
 * spatial.c — reference kernels of the "spatial" op family
 * (ref_spatial.h): plain loops over flattened spatial indices.
 */
#include "kernels/ref/ref_spatial.h"

#include <math.h>
#include <string.h>

static int64_t prod(const int64_t *d, int nd) {
    int64_t p = 1;
    for (int i = 0; i < nd; i++)
        p *= d[i];
    return p;
}

/* multi-index of flat index f over dims d */
static void unflat(int64_t f, const int64_t *d, int nd, int64_t *idx) {
    for (int i = nd - 1; i >= 0; i--) {
        idx[i] = d[i] ? f % d[i] : 0;
        f = d[i] ? f / d[i] : 0;
    }
}

void ref_conv_transpose(const ref_spatial *g, int64_t n, int64_t c, int64_t m, int64_t group,
                        const float *x, const float *w, const float *b, float *y) {
    int nd = g->nd;
    int64_t in_sz = prod(g->in, nd), out_sz = prod(g->out, nd), k_sz = prod(g->k, nd);
    int64_t cg = c / group, mg = m / group;
    for (int64_t bi = 0; bi < n; bi++)
        for (int64_t oc = 0; oc < m; oc++)
            for (int64_t o = 0; o < out_sz; o++)
                y[(bi * m + oc) * out_sz + o] = b ? b[oc] : 0.0f;
    int64_t ii[REF_SPATIAL_MAX], kk[REF_SPATIAL_MAX];
    for (int64_t bi = 0; bi < n; bi++)
        for (int64_t gi = 0; gi < group; gi++)
            for (int64_t ci = 0; ci < cg; ci++) {
                int64_t ch = gi * cg + ci;
                for (int64_t i = 0; i < in_sz; i++) {
                    float xv = x[(bi * c + ch) * in_sz + i];
                    unflat(i, g->in, nd, ii);
                    for (int64_t kf = 0; kf < k_sz; kf++) {
                        unflat(kf, g->k, nd, kk);
                        int64_t off = 0;
                        int ok = 1;
                        for (int d = 0; d < nd && ok; d++) {
                            int64_t pos = ii[d] * g->stride[d] - g->pad[d] + kk[d] * g->dil[d];
                            if (pos < 0 || pos >= g->out[d]) ok = 0;
                            off = off * g->out[d] + pos;
                        }
                        if (!ok) continue;
                        for (int64_t mi = 0; mi < mg; mi++)
                            y[(bi * m + gi * mg + mi) * out_sz + off] +=
                                xv * w[(ch * mg + mi) * k_sz + kf];
                    }
                }
            }
}

void ref_lp_pool(const ref_spatial *g, int64_t nc, double p, const float *x, float *y) {
    int nd = g->nd;
    int64_t in_sz = prod(g->in, nd), out_sz = prod(g->out, nd), k_sz = prod(g->k, nd);
    int64_t oo[REF_SPATIAL_MAX], kk[REF_SPATIAL_MAX];
    for (int64_t ch = 0; ch < nc; ch++)
        for (int64_t o = 0; o < out_sz; o++) {
            unflat(o, g->out, nd, oo);
            double s = 0;
            for (int64_t kf = 0; kf < k_sz; kf++) {
                unflat(kf, g->k, nd, kk);
                int64_t off = 0;
                int ok = 1;
                for (int d = 0; d < nd && ok; d++) {
                    int64_t pos = oo[d] * g->stride[d] - g->pad[d] + kk[d] * g->dil[d];
                    if (pos < 0 || pos >= g->in[d]) ok = 0;
                    off = off * g->in[d] + pos;
                }
                if (ok) s += pow(fabs((double)x[ch * in_sz + off]), p);
            }
            y[ch * out_sz + o] = (float)pow(s, 1.0 / p);
        }
}
