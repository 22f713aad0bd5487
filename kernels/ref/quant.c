/*
 * quant.c — reference kernels of the "quant" op family (ref_quant.h).
 */
#include "core/float8.h"
#include "core/half.h"
#include "kernels/ref/ref_quant.h"

#include <math.h>

#include "kernels/ref/ref_logic.h"

int64_t ref_qindex(const ref_qlayout *l, int64_t o, int64_t a, int64_t i) {
    if (l->mode == 0) return 0;
    if (l->mode == 1) return a;
    int64_t nb = (l->len + l->block - 1) / l->block;
    return (o * nb + a / l->block) * l->inner + i;
}

/* Elements of the layout, and the scale / zero-point index of flat element e
 * (e = (o * len + a) * inner + i). */
static int64_t qcount(const ref_qlayout *l) { return l->outer * l->len * l->inner; }

static int64_t qindex_at(const ref_qlayout *l, int64_t e) {
    int64_t oa = e / l->inner;
    return ref_qindex(l, oa / l->len, oa % l->len, e % l->inner);
}

/* x[e] over its scale, through f16 when the input is f16. */
static float scaled(const float *x, const float *scale, bool half, int64_t e, int64_t s) {
    float v = x[e] / scale[s];
    return half ? half_to_f32(half_from_f32(v)) : v;
}

void ref_quantize(const ref_qlayout *l, const float *x, const float *scale, const int32_t *zp,
                  bool half, int32_t qmin, int32_t qmax, int32_t *q) {
    for (int64_t e = 0, n = qcount(l); e < n; e++) {
        int64_t s = qindex_at(l, e);
        double r = nearbyint((double)scaled(x, scale, half, e, s)); /* ties to even */
        if (zp) r += zp[s];
        if (!(r == r)) r = 0;
        q[e] = r < qmin ? qmin : r > qmax ? qmax : (int32_t)r;
    }
}

void ref_dequantize(const ref_qlayout *l, const int32_t *x, const float *scale, const int32_t *zp,
                    float *y) {
    for (int64_t e = 0, n = qcount(l); e < n; e++) {
        int64_t s = qindex_at(l, e);
        /* in 64 bits: an int32 x minus an int32 zero point can overflow int */
        y[e] = (float)((int64_t)x[e] - (zp ? zp[s] : 0)) * scale[s];
    }
}

void ref_quantize_f8(const ref_qlayout *l, const float *x, const float *scale, const float *zp,
                     bool half, mopt_dtype to, bool saturate, uint8_t *q) {
    for (int64_t e = 0, n = qcount(l); e < n; e++) {
        int64_t s = qindex_at(l, e);
        float v = scaled(x, scale, half, e, s);
        if (zp) v += zp[s];
        q[e] = to == MOPT_DTYPE_F4E2M1 ? f4e2m1_from_f64((double)v)
                                       : f8_from_f64(to, (double)v, saturate);
    }
}

void ref_dequantize_f(const ref_qlayout *l, const float *x, const float *scale, float *y) {
    for (int64_t e = 0, n = qcount(l); e < n; e++)
        y[e] = x[e] * scale[qindex_at(l, e)];
}

void ref_matmul_int(int64_t m, int64_t k, int64_t n, const int32_t *a, const int32_t *b,
                    const int32_t *za, int64_t za_n, const int32_t *zb, int64_t zb_n, int32_t *y) {
    for (int64_t r = 0; r < m; r++)
        for (int64_t c = 0; c < n; c++) {
            int64_t acc = 0;
            int32_t zr = za ? za[za_n > 1 ? r : 0] : 0, zc = zb ? zb[zb_n > 1 ? c : 0] : 0;
            for (int64_t j = 0; j < k; j++)
                acc += (int64_t)(a[r * k + j] - zr) * (int64_t)(b[j * n + c] - zc);
            y[r * n + c] = (int32_t)acc;
        }
}
