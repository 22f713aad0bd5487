/*
 * test_qconv_onednn.c — the static INT8 convolution on oneDNN
 * (kernels/onednn/onednn_qconv.c) against a plain double-precision loop
 * written here: u8 X with zero points 0 and not, s8 W, per-channel scales,
 * bias, f32 residual, activations, f32 and u8 Y, groups and depthwise,
 * strides, dilations, asymmetric pads, 1-3 spatial axes, channels-last X/Y,
 * a run-time shape other than the packed one. Sums are exact integers in
 * both; an f32 Y must agree within a few f32 roundings of its terms, a u8 Y
 * within one step (a tie may round either way after f32 arithmetic).
 * Without VNNI in oneDNN's effective ISA (ONEDNN_MAX_CPU_ISA=AVX2: the
 * second run of this test) the path must decline (its u8 x s8 pairs would
 * saturate), which is asserted instead.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/alloc.h"
#include "core/error.h"
#include "kernels/onednn/onednn.h"
#include "tests/kernels/test_rng.h"

typedef struct qcase {
    int32_t S;
    int64_t batch, c_in, c_out, group;
    int64_t in[3], k[3], stride[3], dil[3], pl[3], pr[3];
    int32_t x_zp;
    bool bias, res, y_u8, x_nhwc, y_nhwc;
    kn_act act;
} qcase;

static float frand(void) { return (float)((double)rnd() / 4294967296.0 * 2.0 - 1.0); }

static void fill_desc(const qcase *c, onednn_qconv_desc *d, const int64_t *in) {
    memset(d, 0, sizeof *d);
    d->S = c->S;
    d->batch = c->batch, d->c_in = c->c_in, d->c_out = c->c_out, d->group = c->group;
    for (int32_t i = 0; i < c->S; i++) {
        d->in[i] = in[i];
        d->k[i] = c->k[i], d->stride[i] = c->stride[i], d->dilation[i] = c->dil[i];
        d->pad_l[i] = c->pl[i], d->pad_r[i] = c->pr[i];
        d->out[i] =
            (in[i] + c->pl[i] + c->pr[i] - (c->k[i] - 1) * c->dil[i] - 1) / c->stride[i] + 1;
    }
    d->has_bias = c->bias, d->has_residual = c->res;
    d->act = c->act;
    d->act_alpha = c->act == KN_ACT_CLIP ? -0.25f : c->act == KN_ACT_LEAKY_RELU ? 0.1f : 0.f;
    d->act_beta = c->act == KN_ACT_CLIP ? 0.5f : 0.f;
    d->x_zp = c->x_zp;
    d->y_u8 = c->y_u8;
    d->y_scale = c->y_u8 ? 0.0075f : 0.f;
    d->y_zp = c->y_u8 ? 37 : 0;
    d->x_nhwc = c->x_nhwc, d->y_nhwc = c->y_nhwc;
}

static double act_ref(const onednn_qconv_desc *d, double v) {
    switch (d->act) {
    case KN_ACT_RELU: return v > 0 ? v : 0;
    case KN_ACT_LEAKY_RELU: return v > 0 ? v : d->act_alpha * v;
    case KN_ACT_CLIP: return v < d->act_alpha ? d->act_alpha : v > d->act_beta ? d->act_beta : v;
    default: return v;
    }
}

/* Offset of logical [n, c, p...] (p flattened over the spatial axes of size
 * sp) in NC... or channels-last memory. */
static int64_t off(int64_t n, int64_t c, int64_t p, int64_t C, int64_t sp, bool nhwc) {
    return nhwc ? (n * sp + p) * C + c : (n * C + c) * sp + p;
}

/* One run of d against the double loop. */
static void check_run(onednn_qcache **cache, const onednn_qconv_desc *d, const onednn_qweights *qw,
                      const int8_t *w, const float *scale, const float *bias) {
    int64_t isp = 1, osp = 1, ksz = 1;
    for (int32_t i = 0; i < d->S; i++)
        isp *= d->in[i], osp *= d->out[i], ksz *= d->k[i];
    int64_t nx = d->batch * d->c_in * isp, ny = d->batch * d->c_out * osp;
    uint8_t *x = mopt_aligned_alloc((size_t)nx);
    float *res = d->has_residual ? mopt_aligned_alloc((size_t)ny * sizeof(float)) : NULL;
    void *y = mopt_aligned_alloc((size_t)ny * sizeof(float));
    for (int64_t i = 0; i < nx; i++)
        x[i] = (uint8_t)(rnd() % 256);
    for (int64_t i = 0; res && i < ny; i++)
        res[i] = frand() * 2;
    memset(y, 0xa5, (size_t)ny * sizeof(float));
    long long refs = onednn_ref_count();
    mopt_status st = onednn_qconv_run(cache, d, qw, x, w, res, y, 1 + (int)(rnd() % 2));
    if (st) print_message("run failed (%d): %s\n", (int)st, mopt_error_message());
    assert_int_equal(st, MOPT_OK);
    assert_int_equal(onednn_ref_count(), refs);
    int64_t cg = d->c_in / d->group, og = d->c_out / d->group;
    int64_t o[3] = {1, 1, 1}, k[3] = {1, 1, 1}, in[3] = {1, 1, 1};
    for (int32_t i = 0; i < d->S; i++)
        o[3 - d->S + i] = d->out[i], k[3 - d->S + i] = d->k[i], in[3 - d->S + i] = d->in[i];
    int lead = 3 - d->S;
    for (int64_t n = 0; n < d->batch; n++)
        for (int64_t c = 0; c < d->c_out; c++)
            for (int64_t p = 0; p < osp; p++) {
                int64_t op[3] = {p / (o[1] * o[2]), p / o[2] % o[1], p % o[2]};
                int64_t acc = 0, mag = 0, g = c / og;
                for (int64_t ci = 0; ci < cg; ci++)
                    for (int64_t t = 0; t < ksz; t++) {
                        int64_t kt[3] = {t / (k[1] * k[2]), t / k[2] % k[1], t % k[2]}, xo = 0;
                        bool inside = true;
                        for (int32_t a = 0; a < 3; a++) {
                            int32_t s = a - lead;
                            int64_t xi =
                                s < 0 ? 0
                                      : op[a] * d->stride[s] - d->pad_l[s] + kt[a] * d->dilation[s];
                            inside = inside && xi >= 0 && xi < in[a];
                            xo = xo * in[a] + xi;
                        }
                        if (!inside) continue; /* a real zero: (zp - zp) w */
                        int64_t xv = x[off(n, g * cg + ci, xo, d->c_in, isp, d->x_nhwc)];
                        int64_t wv = w[(c * cg + ci) * ksz + t];
                        acc += (xv - d->x_zp) * wv;
                        mag += (xv + d->x_zp) * (wv < 0 ? -wv : wv);
                    }
                int64_t yo = off(n, c, p, d->c_out, osp, d->y_nhwc);
                double r = res ? res[yo] : 0;
                double v = (double)acc * scale[c] + (bias ? bias[c] : 0) + r;
                double want = act_ref(d, v);
                if (d->y_u8) {
                    double q = nearbyint(want / d->y_scale) + d->y_zp;
                    q = q < 0 ? 0 : q > 255 ? 255 : q;
                    double got = ((const uint8_t *)y)[yo];
                    if (fabs(got - q) > 1) {
                        print_message("u8 y[%lld] = %g, want %g (v %g)\n", (long long)yo, got, q,
                                      want);
                        fail();
                    }
                } else {
                    double got = ((const float *)y)[yo];
                    double tol =
                        4e-6 * ((double)mag * scale[c] + fabs(bias ? bias[c] : 0) + fabs(r)) + 1e-6;
                    if (!(fabs(got - want) <= tol)) {
                        print_message("f32 y[%lld] = %.9g, want %.9g (tol %.3g)\n", (long long)yo,
                                      got, want, tol);
                        fail();
                    }
                }
            }
    mopt_aligned_free(x);
    mopt_aligned_free(res);
    mopt_aligned_free(y);
}

/* Packs for c's shape, runs it, then (run_in) another spatial size. */
static void run_case(const qcase *c, const int64_t *run_in) {
    onednn_qconv_desc d;
    fill_desc(c, &d, c->in);
    int64_t ksz = 1;
    for (int32_t i = 0; i < c->S; i++)
        ksz *= c->k[i];
    int64_t nw = c->c_out * (c->c_in / c->group) * ksz;
    int8_t *w = mopt_malloc((size_t)nw);
    float *scale = mopt_malloc((size_t)c->c_out * sizeof(float));
    float *bias = mopt_malloc((size_t)c->c_out * sizeof(float));
    for (int64_t i = 0; i < nw; i++)
        w[i] = (int8_t)((int)(rnd() % 255) - 127);
    for (int64_t i = 0; i < c->c_out; i++) {
        scale[i] = (0.5f + (frand() + 1) / 2) * 2e-4f;
        bias[i] = frand();
    }
    onednn_qweights *qw = NULL;
    mopt_status st = onednn_qconv_pack(&d, w, scale, c->bias ? bias : NULL, 1, &qw);
    if (!onednn_int8_exact()) { /* u8 x s8 pairs would saturate: declined */
        assert_int_equal(st, MOPT_ERR_UNSUPPORTED);
        assert_null(qw);
    } else {
        if (st) print_message("pack failed (%d): %s\n", (int)st, mopt_error_message());
        assert_int_equal(st, MOPT_OK);
        onednn_qcache *cache = NULL;
        check_run(&cache, &d, qw, w, scale, c->bias ? bias : NULL);
        check_run(&cache, &d, qw, w, scale, c->bias ? bias : NULL); /* cached */
        if (run_in) {
            onednn_qconv_desc d2;
            fill_desc(c, &d2, run_in);
            check_run(&cache, &d2, qw, w, scale, c->bias ? bias : NULL);
        }
        onednn_qcache_free(cache);
    }
    onednn_qweights_free(qw);
    mopt_free(w);
    mopt_free(scale);
    mopt_free(bias);
}

static void qconv_cases(void **st) {
    (void)st;
    assert_true(onednn_available());
    static const kn_act acts[] = {KN_ACT_NONE, KN_ACT_RELU, KN_ACT_CLIP, KN_ACT_LEAKY_RELU};
    int count = 0;
    /* 2-D: the ResNet shapes in small, stems with a zero point, groups */
    static const qcase base[] = {
        {2, 1, 16, 32, 1, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 0},
        {2, 2, 3, 16, 1, {15, 13}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}, 131},
        {2, 1, 32, 64, 1, {8, 8}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 77}, /* zp in the bias */
        {2, 1, 24, 24, 24, {10, 7}, {3, 3}, {1, 2}, {2, 1}, {2, 1}, {1, 0}, 17}, /* depthwise */
        {2, 1, 16, 32, 4, {6, 9}, {3, 1}, {1, 1}, {1, 1}, {1, 0}, {2, 0}, 200},  /* groups */
        {2, 1, 64, 32, 1, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 9},
    };
    for (size_t b = 0; b < sizeof base / sizeof base[0]; b++)
        for (int v = 0; v < 8; v++, count++) {
            qcase c = base[b];
            c.bias = v % 2 == 0;
            c.res = v % 3 != 1;
            c.y_u8 = v >= 4;
            c.act = acts[(b + (size_t)v) % 4];
            c.x_nhwc = v == 2 || v == 5;
            c.y_nhwc = v == 3 || v == 5;
            int64_t other[3] = {c.in[0] + 3, c.in[1] + 1, 1};
            run_case(&c, v == 1 || v == 6 ? other : NULL);
        }
    /* 1-D and 3-D */
    qcase c1 = {1, 2, 8, 16, 1, {20}, {5}, {2}, {1}, {2}, {1}, 3};
    c1.res = c1.y_u8 = true;
    c1.act = KN_ACT_RELU;
    run_case(&c1, NULL);
    qcase c3 = {3, 1, 8, 8, 1, {4, 5, 6}, {3, 3, 3}, {1, 1, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0};
    c3.bias = true;
    run_case(&c3, NULL);
    print_message("%d 2-D cases and 2 others (%s)\n", count,
                  onednn_int8_exact() ? "run" : "declined: no VNNI");
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(qconv_cases)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
